package replication

import (
	"errors"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/minikv/minikv/internal/store"
)

// Source makes a primary's replication stream: it is the store's Feed
// (store.SetFeed), and writes every change it is given into its Backlog
// as the Redis command that leaves a replica's key in the same state:
//
//	string           SET key value [PXAT deadline]
//	collection       RESTORE key deadline|0 payload REPLACE [ABSTTL]
//	gone             DEL key            (deleted, expired, evicted)
//	FlushAll         FLUSHALL
//	Tx or Exclusive  MULTI ... EXEC     (when it changed two keys or more)
//	stream change    the commands Redis propagates for it (XADD with its
//	                 ID, XCLAIM ... FORCE JUSTID, XGROUP SETID ...)
//
// Every command sets a key's whole state, or (a stream's) is one a replica
// may apply again over a later state without changing it, so a replica may
// apply one it already has (it loaded a snapshot taken while writes went
// on) and end in the same state. Changes arrive under the store's shard locks, so
// Write only queues them; a goroutine encodes them in order, off the
// request path (a collection's payload is the DUMP encoding, rebuilt from
// its record in a scratch store).
//
// Sections (Hold ... Release) of different connections may overlap; the
// encoder groups changes from the first Hold until no section is open, so
// every section's changes land in one MULTI block, with whatever else
// changed meanwhile.
type Source struct {
	bl   *Backlog
	dump Dump

	mu      sync.Mutex // protects q, waiters and marks
	q       queue
	waiters []chan struct{} // Sync callers, woken when the queue they saw is encoded
	marks   []chan int64    // Mark callers, in the order of their opMark entries
	kick    chan struct{}   // a token when the queue has work
	pending atomic.Bool     // the queue has work (a hint for EncodeNow, read without mu)
	deferTo func() bool     // SetDeferTo

	encMu  sync.Mutex // held by whoever encodes: the goroutine or EncodeNow
	encQ   queue      // the queue being encoded, its buffers reused
	closed bool       // Close has stopped the encoder

	// The encoder's own state, under encMu.
	selected bool                // SELECT 0 was streamed since the last Reselect
	db       int                 // the database the stream last selected
	scratch  *store.Store        // where a collection's record becomes a value to encode
	fence    uint64              // the last FlushAll's: records at or below it are obsolete
	depth    int                 // open sections
	group    []byte              // commands of the open group
	groupN   int                 // how many
	out      []byte              // commands ready for the backlog
	later    map[string]struct{} // coalesce: big keys written again later in the batch
	stale    []bool              // coalesce: the batch's ops a later one supersedes

	quit chan struct{}
	done chan struct{}
}

// Dump is how Source encodes a collection: the DUMP payload of key in st
// (the redis package's dumper), ok false when st does not hold key.
type Dump func(st *store.Store, key []byte) (payload []byte, ok bool, err error)

// Kinds of queued entries.
const (
	opWrite = iota
	opDelete
	opFlush
	opHold
	opRelease
	opPing
	opReselect
	opGetAck
	opCommand
	opKeyCommands
	opMark
)

// A Source takes a collection's change as commands.
var _ store.CommandFeed = (*Source)(nil)

var errNotDumped = errors.New("replication: a collection's record did not decode")

// queue holds changes not yet encoded, their bytes in one arena.
type queue struct {
	ops   []queued
	arena []byte
}

type queued struct {
	op             uint8
	deadline       int64
	fence          uint64
	keyOff, keyEnd int // the key in the arena
	recEnd         int // the record follows the key, to recEnd
}

// NewSource returns a Source writing into bl, encoding collections with
// dump. Close stops it.
func NewSource(bl *Backlog, dump Dump) *Source {
	s := &Source{bl: bl, dump: dump, kick: make(chan struct{}, 1), quit: make(chan struct{}), done: make(chan struct{}),
		scratch: store.New(store.Config{MemoryLimit: store.NoMemoryLimit, SweepInterval: -1, MaxItemSize: 1 << 32})}
	go s.encodeLoop()
	return s
}

// Close stops the encoder once it has encoded what was queued.
func (s *Source) Close() {
	close(s.quit)
	<-s.done
	s.encMu.Lock()
	s.closed = true // EncodeNow from a loop that has not yet seen SetPassEnd(nil)
	s.encMu.Unlock()
	s.scratch.Close()
}

// Backlog is where the stream goes.
func (s *Source) Backlog() *Backlog { return s.bl }

func (s *Source) push(q queued, key, rec []byte) {
	s.mu.Lock()
	q.keyOff = len(s.q.arena)
	s.q.arena = append(s.q.arena, key...)
	q.keyEnd = len(s.q.arena)
	s.q.arena = append(s.q.arena, rec...)
	q.recEnd = len(s.q.arena)
	s.q.ops = append(s.q.ops, q)
	s.pending.Store(true)
	s.mu.Unlock()
	if f := s.deferTo; f == nil || !f() {
		s.wake()
	}
}

func (s *Source) wake() {
	select {
	case s.kick <- struct{}{}:
	default:
	}
}

// Write is store.Feed's: key's new record, or nil when it is gone.
func (s *Source) Write(key, rec []byte, deadline int64) {
	if rec == nil {
		s.push(queued{op: opDelete}, key, nil)
		return
	}
	s.push(queued{op: opWrite, deadline: deadline}, key, rec)
}

// Flush is store.Feed's: a FlushAll took effect.
func (s *Source) Flush(fence uint64) { s.push(queued{op: opFlush, fence: fence}, nil, nil) }

// Hold is store.Feed's: a Tx or Exclusive section begins.
func (s *Source) Hold() { s.push(queued{op: opHold}, nil, nil) }

// Release is store.Feed's: the section ends.
func (s *Source) Release() { s.push(queued{op: opRelease}, nil, nil) }

// Ping streams a PING (repl-ping-replica-period), in order with the
// changes.
func (s *Source) Ping() { s.push(queued{op: opPing}, nil, nil) }

// Command streams a command that is not a key's change, in order with
// the changes: a change of the function libraries (FUNCTION RESTORE ...
// FLUSH, their whole state).
func (s *Source) Command(args ...[]byte) {
	s.push(queued{op: opCommand}, AppendCommand(nil, args...), nil)
}

// Commands is store.Feed's: a change of key as the n commands that make
// it (a stream's XADD, XCLAIM ...), streamed as they are, in a MULTI
// block when there are two or more.
func (s *Source) Commands(key []byte, cas uint64, n int, cmds []byte) {
	s.push(queued{op: opKeyCommands, fence: cas, deadline: int64(n)}, key, cmds)
}

// Mark returns the stream's offset at this point of the changes: the
// backlog's end once every change queued before the call is encoded and
// none after it, and makes the stream after it begin with SELECT 0. It
// waits for the encoder. A full resync's snapshot calls it at the
// instant it copies the store (every shard held: no change is being
// queued), so the snapshot is the store at exactly that offset. ok is
// false when the changes before the mark cannot be cut there (a section
// of them still open), or the Source is closed.
func (s *Source) Mark() (offset int64, ok bool) {
	ch := make(chan int64, 1)
	s.mu.Lock()
	s.marks = append(s.marks, ch)
	s.q.ops = append(s.q.ops, queued{op: opMark, keyOff: len(s.q.arena), keyEnd: len(s.q.arena), recEnd: len(s.q.arena)})
	s.mu.Unlock()
	s.wake()
	select {
	case off := <-ch:
		return off, off >= 0
	case <-s.done:
		return 0, false
	}
}

// GetAck streams REPLCONF GETACK *, which every replica answers with the
// offset it has applied (WAIT).
func (s *Source) GetAck() { s.push(queued{op: opGetAck}, nil, nil) }

// Reselect makes the next command streamed be preceded by SELECT 0, as
// Redis does once a replica's full resync begins.
func (s *Source) Reselect() { s.push(queued{op: opReselect}, nil, nil) }

// Sync returns once every change queued before the call is encoded, and
// in the backlog unless a section is still open.
func (s *Source) Sync() {
	ch := make(chan struct{})
	s.mu.Lock()
	s.waiters = append(s.waiters, ch)
	s.mu.Unlock()
	s.wake()
	select {
	case <-ch:
	case <-s.done:
	}
}

func (s *Source) encodeLoop() {
	defer close(s.done)
	for {
		select {
		case <-s.kick:
		case <-s.quit:
			s.encMu.Lock()
			s.encodeQueued(&s.encQ)
			s.encMu.Unlock()
			return
		}
		s.encMu.Lock()
		s.encodeQueued(&s.encQ)
		s.encMu.Unlock()
	}
}

// EncodeNow encodes what is queued on the caller's goroutine, unless
// nothing is or the encoder goroutine is at it (it then takes what was
// queued since, as every change kicks it). An event loop calls it at the
// end of each pass (server.SetPassEnd), as Redis feeds its replicas from
// its one thread: waiting for the encoder goroutine to be scheduled on a
// loaded machine put milliseconds into the replication lag's tail
// (docs/benchmarks.md).
func (s *Source) EncodeNow() {
	if !s.pending.Load() {
		return
	}
	if !s.encMu.TryLock() {
		// The goroutine is encoding, maybe from before changes that
		// did not wake it (SetDeferTo): it takes them next.
		s.wake()
		return
	}
	if !s.closed {
		s.encodeQueued(&s.encQ)
	}
	s.encMu.Unlock()
}

// SetDeferTo has a change queued while f reports true wake no goroutine:
// whoever made f true runs EncodeNow after (an event loop's pass,
// server.Server.InPass). Call it before the Source is in use.
func (s *Source) SetDeferTo(f func() bool) { s.deferTo = f }

// encodeQueued takes the queue, swapping in q's buffers for reuse, and
// encodes it.
func (s *Source) encodeQueued(q *queue) {
	s.mu.Lock()
	*q, s.q = s.q, queue{ops: q.ops[:0], arena: q.arena[:0]}
	s.pending.Store(false)
	waiters := s.waiters
	s.waiters = nil
	s.mu.Unlock()
	s.markStale(q)
	for i, e := range q.ops {
		key := q.arena[e.keyOff:e.keyEnd]
		rec := q.arena[e.keyEnd:e.recEnd]
		if s.stale[i] {
			continue
		}
		switch e.op {
		case opHold:
			s.depth++
			continue
		case opRelease:
			s.depth--
			if s.depth == 0 {
				s.closeGroup()
			}
			continue
		case opReselect:
			s.selected = false
			continue
		case opMark:
			s.mark()
			continue
		}
		if !s.selected {
			s.out = AppendCommand(s.out, []byte("SELECT"), []byte("0"))
			s.selected, s.db = true, 0
		}
		if e.op == opKeyCommands && e.fence <= s.fence {
			continue // made before a FlushAll already streamed
		}
		if e.op == opWrite || e.op == opDelete || e.op == opKeyCommands {
			// The store's key names its database (store.DBKey): a SELECT
			// when it is not the one selected, as Redis streams one.
			db, k := store.SplitDBKey(key)
			if db == store.ScratchDB {
				continue // SWAPDB's transient keys: their final places follow
			}
			if db != s.db {
				s.group = AppendCommand(s.group, []byte("SELECT"), strconv.AppendInt(nil, int64(db), 10))
				s.db = db
			}
			key = k
		}
		n := len(s.group)
		switch e.op {
		case opWrite:
			s.group = s.appendWrite(s.group, key, rec, e.deadline)
		case opDelete:
			s.group = AppendCommand(s.group, []byte("DEL"), key)
		case opFlush:
			s.fence = max(s.fence, e.fence)
			s.group = AppendCommand(s.group, []byte("FLUSHALL"))
		case opPing:
			s.group = AppendCommand(s.group, []byte("PING"))
		case opCommand:
			s.group = append(s.group, key...) // the command, encoded by Command
		case opKeyCommands:
			s.group = append(s.group, rec...)
			s.groupN += int(e.deadline) - 1 // and one below
		case opGetAck:
			s.group = AppendCommand(s.group, []byte("REPLCONF"), []byte("GETACK"), []byte("*"))
		}
		if len(s.group) > n {
			s.groupN++
		}
		if s.depth == 0 {
			s.closeGroup()
		}
	}
	if len(s.out) > 0 {
		s.bl.Append(s.out)
		s.out = s.out[:0]
	}
	for _, ch := range waiters {
		close(ch)
	}
	if cap(q.arena) > 4<<20 {
		q.arena = nil // a burst of large values is not kept
	}
}

// coalesceMin is the size from which a record is worth coalescing: a
// big collection's whole state (a stream's, a big hash's ...), which
// every change of the key streams anew.
const coalesceMin = 1 << 10

// markStale finds the big records of the batch that a later change of the
// same key in it supersedes: each record is its key's whole state, so
// streaming only the last gives the replica the same state. A stream
// XADDed to by 50 clients otherwise encoded its whole self once per entry
// (a 10 000-entry stream: under a thousand XADDs a second with a replica
// attached). A record inside a MULTI group is never dropped (the group
// stays whole), and nothing moves across a FLUSHALL, a GETACK (WAIT
// counts on it), a SELECT reset or a command.
func (s *Source) markStale(q *queue) {
	s.stale = slices.Grow(s.stale[:0], len(q.ops))[:len(q.ops)]
	clear(s.stale)
	depth := s.depth // sections open when the batch begins
	big := false
	for _, e := range q.ops {
		switch e.op {
		case opHold:
			depth++
		case opRelease:
			depth--
		case opWrite:
			big = big || e.recEnd-e.keyEnd >= coalesceMin
		}
	}
	if !big {
		return
	}
	if s.later == nil {
		s.later = make(map[string]struct{})
	}
	clear(s.later)
	// Backwards, with the depth after each op known from the end.
	for i := len(q.ops) - 1; i >= 0; i-- {
		e := q.ops[i]
		switch e.op {
		case opRelease:
			depth++ // inside the section, going backwards
			continue
		case opHold:
			depth--
			continue
		case opFlush, opGetAck, opReselect, opCommand, opMark:
			clear(s.later)
			continue
		case opKeyCommands:
			// The commands change the key's state before them: a
			// record before them is needed, whatever follows.
			delete(s.later, string(q.arena[e.keyOff:e.keyEnd]))
			continue
		case opWrite, opDelete:
		default:
			continue
		}
		key := q.arena[e.keyOff:e.keyEnd]
		if _, ok := s.later[string(key)]; ok && depth == 0 && e.op == opWrite && e.recEnd-e.keyEnd >= coalesceMin {
			s.stale[i] = true
			continue
		}
		if e.op == opDelete || e.recEnd-e.keyEnd >= coalesceMin {
			s.later[string(key)] = struct{}{}
		}
	}
}

// mark answers the oldest Mark: the offset after every command encoded
// so far, which it appends to the backlog first. A section open with
// changes in it (a group not yet closed) cannot be cut: -1. A section
// open and still empty is the snapshot's own (store.Exclusive).
func (s *Source) mark() {
	s.mu.Lock()
	ch := s.marks[0]
	s.marks = s.marks[1:]
	s.mu.Unlock()
	if len(s.group) > 0 || s.groupN > 0 {
		ch <- -1
		return
	}
	if len(s.out) > 0 {
		s.bl.Append(s.out)
		s.out = s.out[:0]
	}
	s.selected = false // the stream after the mark begins with SELECT 0
	ch <- s.bl.End()
}

// closeGroup moves the group's commands to out, in MULTI ... EXEC when
// there are two or more.
func (s *Source) closeGroup() {
	if s.groupN > 1 {
		s.out = AppendCommand(s.out, []byte("MULTI"))
		s.out = append(s.out, s.group...)
		s.out = AppendCommand(s.out, []byte("EXEC"))
	} else {
		s.out = append(s.out, s.group...)
	}
	s.group, s.groupN = s.group[:0], 0
}

// appendWrite appends the command that gives key the state rec holds.
func (s *Source) appendWrite(b, key, rec []byte, deadline int64) []byte {
	if store.RecordCAS(rec) <= s.fence {
		return b // made before a FlushAll already streamed
	}
	var ms []byte
	if deadline != 0 {
		ms = strconv.AppendInt(nil, deadline, 10)
	}
	if value, flags, ok := store.RecordString(rec); ok {
		if flags != 0 {
			b = AppendFlagsHint(b, flags)
		}
		if ms != nil {
			return AppendCommand(b, []byte("SET"), key, value, []byte("PXAT"), ms)
		}
		return AppendCommand(b, []byte("SET"), key, value)
	}
	var payload []byte
	err := s.scratch.Tx([][]byte{key}, func(tx *store.Tx) error { return tx.PutRecord(key, rec, 0) })
	if err == nil {
		var ok bool
		payload, ok, err = s.dump(s.scratch, key)
		if !ok && err == nil {
			err = errNotDumped
		}
	}
	_ = s.scratch.Delete(key)
	if err != nil {
		// A record this build wrote always decodes; if one does not, the
		// replicas must not keep a stale value.
		return AppendCommand(b, []byte("DEL"), key)
	}
	if ms != nil {
		return AppendCommand(b, []byte("RESTORE"), key, ms, payload, []byte("REPLACE"), []byte("ABSTTL"))
	}
	return AppendCommand(b, []byte("RESTORE"), key, []byte("0"), payload, []byte("REPLACE"))
}

// FlagsHint begins the argument of the PING that carries a string's
// memcached flags to MiniKV replicas, right before the string's SET:
//
//	PING "minikv:flags 5"
//	SET key value
//
// Redis applies a PING from its primary with no effect and no reply (a
// primary's replies are dropped), so a Redis replica, whose offsets are
// the same, ignores it; a MiniKV replica gives the flags to the SET that
// follows (only that one).
const FlagsHint = "minikv:flags "

// AppendFlagsHint appends the PING that gives the next SET flags.
func AppendFlagsHint(b []byte, flags uint32) []byte {
	return AppendCommand(b, []byte("PING"), strconv.AppendUint([]byte(FlagsHint), uint64(flags), 10))
}

// ParseFlagsHint returns the flags a PING's argument carries, ok false
// when it is not a FlagsHint.
func ParseFlagsHint(arg []byte) (flags uint32, ok bool) {
	if len(arg) <= len(FlagsHint) || string(arg[:len(FlagsHint)]) != FlagsHint {
		return 0, false
	}
	n, err := strconv.ParseUint(string(arg[len(FlagsHint):]), 10, 32)
	if err != nil {
		return 0, false
	}
	return uint32(n), true
}

// AppendCommand appends args as a RESP array of bulk strings: a command
// as Redis streams it.
func AppendCommand(b []byte, args ...[]byte) []byte {
	b = append(b, '*')
	b = strconv.AppendInt(b, int64(len(args)), 10)
	b = append(b, '\r', '\n')
	for _, a := range args {
		b = append(b, '$')
		b = strconv.AppendInt(b, int64(len(a)), 10)
		b = append(b, '\r', '\n')
		b = append(b, a...)
		b = append(b, '\r', '\n')
	}
	return b
}

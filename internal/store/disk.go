package store

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"sync"
	"sync/atomic"
	"time"
)

// Durable mode: the store over a disk.
//
// With Config.Disk set, memory is a cache over the disk: every change to an
// item (a write, a touch, a delete, a flush) is also handed to the Disk, and
// a lookup that does not find a key in memory asks the Disk and brings what
// it finds back into memory. Eviction drops an item from memory only; it
// stays on disk. Expiry needs no disk write (the Disk keeps each record's
// deadline and stops returning it after), and a flush is one small state
// record: the flush fence, below which records read back are ignored.
//
// Order. The store calls Write while it holds the key's shard lock, right
// after changing memory, so the Disk sees the writes of one key in the
// order they happened. Write only queues: the caller (the server, before
// it sends any reply) calls Sync, which returns once everything queued is
// durable as the Disk's fsync mode promises. So no write is acknowledged
// before it is durable, and the writes of a pipelined batch, and of every
// connection writing at the same moment, share one write(2) and fsync.
//
// CAS. A record keeps its item's CAS token, so a token read before a
// restart still works after it. Tokens are handed out below a limit kept in
// the state record, raised casBlock at a time before any token above the
// old limit is issued; a restart starts at the limit, so every token issued
// after it is larger than any issued before.

// Disk is the durable engine under a Store in durable mode. The Store
// declares it and knows nothing else of the engine (cmd/minikv plugs the
// LSM in through internal/durable).
type Disk interface {
	// Write queues rec as the record of key, to expire at deadline (Unix
	// ms; 0 never), or a delete of key when rec is nil. It must not block
	// on I/O and must keep the order of calls. It copies key and rec,
	// which the caller may reuse once it returns.
	Write(key, rec []byte, deadline int64)
	// WriteState queues the Store's own state record, ordered like Write;
	// rec is copied as in Write.
	WriteState(rec []byte)
	// Read returns the record of key that the last Write left, queued or
	// on disk, with its deadline; a missing or expired record is nil.
	Read(key []byte) (rec []byte, deadline int64, err error)
	// ReadState returns the last state record, or nil.
	ReadState() ([]byte, error)
	// WriteAux queues rec as the aux record named name (SetAux),
	// ordered like Write; nil deletes it. rec is copied as in Write.
	WriteAux(name string, rec []byte)
	// ReadAux returns the aux record named name, or nil.
	ReadAux(name string) ([]byte, error)
	// Sync returns once every Write and WriteState so far is durable as
	// the fsync mode promises, or the error that keeps them from it.
	Sync() error
	// SyncPass is Sync for a caller whose writes so far are already the
	// whole group (an event loop's pass): it does not wait for others to
	// join the commit.
	SyncPass() error
	// SyncData returns once every Write and WriteState so far is on
	// stable storage whatever the fsync mode (Redis's WAITAOF).
	SyncData() error
	// Checkpoint makes everything written so far durable whatever the
	// fsync mode, and moves it out of the log into tables (Redis's SAVE).
	Checkpoint() error
	// Scan calls fn with every live record (not deleted, not expired)
	// whose key is at or after from, in key order, with its deadline; it
	// sees every Write made before the call. fn returns false to stop;
	// key and rec are valid only during the call.
	Scan(from []byte, fn func(key, rec []byte, deadline int64) bool) error
	// Forget installs the rule by which the Disk may delete records for
	// good when it compacts them: dead(rec) true means the record is
	// flushed or evicted. dead is quick and safe for concurrent use.
	Forget(dead func(rec []byte) bool)
	// Compact rewrites everything on disk, dropping overwritten versions,
	// expired records and the ones dead says to forget, so Usage shows
	// what is left.
	Compact() error
	// Usage reports the Disk's size and health.
	Usage() DiskUsage

	// Failure returns the error that keeps the Disk from taking changes
	// (a failed write, fsync, flush or manifest update), or nil. It is a
	// single atomic load. While it is set, Write takes nothing: it notes
	// the key as lost instead.
	Failure() error
	// Epoch marks the start of a batch of requests; SyncSince is Sync for
	// the batch, failing if a disk failure cut across it.
	Epoch() uint64
	SyncSince(mark uint64) error
	// SyncAllSince is SyncSince waiting for an open Exclusive section's
	// changes too (HoldExclusive), for a caller that never holds one.
	SyncAllSince(mark uint64) error
	// Lost is signalled when the Disk fails or loses a change; TakeLost
	// then returns the keys whose changes were lost, for the Store to
	// forget from memory, and Forgotten reports they are.
	Lost() <-chan struct{}
	TakeLost() (keys [][]byte, round uint64)
	Forgotten(round uint64)
	// Hold and Release bracket the changes of one multi-key step (a Tx,
	// an Exclusive section): the Disk commits all of them in one batch,
	// never some before a crash and the rest after. Hold is called with
	// the step's shards locked.
	Hold()
	Release()
	// HoldExclusive is Hold for an Exclusive section, which holds every
	// shard: until EndExclusive (called before the shards are unlocked)
	// no change is queued but the section's, so a Sync meanwhile waits
	// only for the changes queued before the section began, never for
	// its end (a reply to another client while a script runs: -BUSY).
	// Release ends the hold as for Hold.
	HoldExclusive()
	EndExclusive()
	// HoldCalls and ReleaseCalls bracket a section of several calls on
	// one goroutine (Store.Hold); the Holds of the Tx and Exclusive
	// sections made inside it nest in it.
	HoldCalls()
	ReleaseCalls()
	// Recover makes a failed Disk take changes again, starting over from
	// what it holds durably, with state as its state record (WriteState);
	// nil when it does (or never failed).
	Recover(state []byte) error
}

// PatchDisk is a Disk that takes a large record as a change of the key's
// last full record, its base (Patch), so that a small change of a large
// collection (an XADD to a long stream) does not write it whole.
type PatchDisk interface {
	// WritePatch queues p as key's record, ordered and copied as Write's
	// rec. The key's last Write must have been the base p names; Read
	// and Scan return the record p makes of it. It reports whether p
	// replaced a patch of the key queued for the same commit, which then
	// is never written.
	WritePatch(key []byte, p *Patch, deadline int64) (replaced bool)
}

// Patch is a record given as Head, then BaseLen-long base's bytes from
// KeepOff for KeepLen, then Tail. Head begins with the record's header,
// as a full record does. The base must begin with BaseHead (its own
// header), which a reader checks.
//
// A patch with a Delta (a big hash's, set's or sorted set's: delta.go) is instead Head,
// the record's header, and Delta, the fields changed since the base;
// MergeDelta makes the record of the base and those. Tail, KeepOff and
// KeepLen are then unused.
type Patch struct {
	Head, Tail       []byte
	KeepOff, KeepLen int
	BaseLen          int
	BaseHead         []byte
	Delta            []byte
}

// DiskUsage is what a Disk reports about itself.
type DiskUsage struct {
	Bytes            int64         // bytes the Disk holds (tables and log)
	WriteStalls      uint64        // commits that waited for the engine to catch up
	StallTime        time.Duration // their total wait
	Syncs            uint64        // fsyncs of the log
	SyncTime         time.Duration // their total time
	MaxSync          time.Duration // the longest fsync so far
	OpenTime         time.Duration // how long opening took (recovery: replaying the log)
	Failures         uint64        // times the Disk failed and refused changes
	Recoveries       uint64        // times it took changes again after one
	CompactionErrors uint64        // compactions that failed (no room for their output) and wait to be retried
	Flushes          uint64        // memtables the engine wrote out as tables
	Compactions      uint64        // compactions done, trivial moves included
	Flushing         int           // flushes running now
	Compacting       int           // compactions running now
}

// DiskStats are the counters of durable mode.
type DiskStats struct {
	Durable          bool
	Writes           uint64        // changes queued to the disk
	ChangesSinceSave uint64        // changes queued since the last Save (or start)
	LastSave         int64         // Unix seconds of the last Save; the start before one
	Hits             uint64        // memory misses found on disk and read back
	Warmed           uint64        // items the warm-up after the start loaded back into memory (warmup.go)
	WarmTime         time.Duration // how long the warm-up took; 0 while it runs
	ReadErrors       uint64        // disk reads that failed
	LastReadErr      error         // the last of them (it names the damaged file)
	SaveErr          error         // the last Save's error
	Limit            int64         // Config.DiskLimit; 0: none
	Evictions        uint64        // items dropped for good to keep under Limit
	Trims            uint64        // times the disk went over Limit and was trimmed
	Rewriting        bool          // a Rewrite (BGREWRITEAOF) is running
	RewriteErr       error         // the last Rewrite's error
	WriteErr         error         // the failure refusing writes now; nil: none
	FailedSince      time.Time     // when it began; zero: none
	LastWriteErr     error         // the last failure's error, even if over
	RetryErr         error         // the last failed retry's error during this failure
	DiskUsage
}

// DiskStats returns the durable mode's counters.
func (s *Store) DiskStats() DiskStats {
	if s.disk == nil {
		return DiskStats{}
	}
	s.ds.mu.Lock()
	lastSave, saveErr, saved, readErr := s.ds.lastSave, s.ds.saveErr, s.ds.savedWrites, s.ds.readErr
	rewriteErr := s.ds.rewriteErr
	fail := s.ds.fail
	s.ds.mu.Unlock()
	w := s.diskWrites.Load()
	return DiskStats{
		Durable: true, Writes: w, ChangesSinceSave: w - saved, LastSave: lastSave,
		Hits: s.diskHits.Load(), Warmed: s.warmed.Load(), WarmTime: time.Duration(s.warmTime.Load()), ReadErrors: s.diskErrors.Load(), LastReadErr: readErr, SaveErr: saveErr,
		Limit: s.ds.limit, Evictions: s.ds.evictions.Load(), Trims: s.ds.trims.Load(),
		Rewriting: s.ds.rewriting.Load(), RewriteErr: rewriteErr,
		WriteErr: s.disk.Failure(), FailedSince: fail.since, LastWriteErr: fail.lastErr, RetryErr: fail.lastRetry,
		DiskUsage: s.disk.Usage(),
	}
}

// Rewrite compacts the whole disk in the background, dropping overwritten
// versions and expired, deleted and flushed records, so the directory
// holds about what is live: Redis's BGREWRITEAOF. It reports false if a
// rewrite is already running; without a Disk it is ErrNotDurable. Close
// waits for it.
func (s *Store) Rewrite() (bool, error) {
	if s.disk == nil {
		return false, ErrNotDurable
	}
	if !s.ds.rewriting.CompareAndSwap(false, true) {
		return false, nil
	}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		defer s.ds.rewriting.Store(false)
		err := s.disk.Compact()
		s.ds.mu.Lock()
		s.ds.rewriteErr = err
		s.ds.mu.Unlock()
	}()
	return true, nil
}

// Save makes every change so far durable (fsynced, whatever the mode) and
// checkpoints the engine, as Redis's SAVE writes its dump. Without a Disk
// it is ErrNotDurable.
func (s *Store) Save() error {
	if s.disk == nil {
		return ErrNotDurable
	}
	w := s.diskWrites.Load()
	err := s.unheld(s.disk.Checkpoint)
	if err != nil {
		err = fmt.Errorf("%w: %w", ErrDisk, err)
	}
	s.ds.mu.Lock()
	s.ds.saveErr = err
	if err == nil {
		s.ds.lastSave, s.ds.savedWrites = time.Now().Unix(), w
	}
	s.ds.mu.Unlock()
	return err
}

// ErrNotDurable is Save's error on a Store without a Disk.
var ErrNotDurable = errors.New("store: not durable (no data directory)")

// ErrDisk wraps a failure of the Disk under a durable Store.
var ErrDisk = errors.New("store: disk")

// casBlock is how far ahead of the tokens handed out the durable CAS limit
// is raised: one state write per casBlock tokens.
const casBlock = 1 << 20

// diskState is the durable part of the Store's own state. The record is
// a version byte, then uint64s (little endian): casLimit, fence, flushAt,
// and from version 2 on flushFence. flushAt is in Unix nanoseconds, as
// it was when the store's clock counted them; the store converts it to
// and from its milliseconds (stateFlushAt), so data directories stay
// readable both ways. A flush armed past 2262 is saved as 2262.
type diskState struct {
	mu       sync.Mutex    // orders state writes and raises of casLimit; protects the save fields
	casLimit atomic.Uint64 // every token handed out is below it, durably

	// flushFence is the part of the fence that flushes raised; the fence
	// above it was raised by the disk limit, so a record dropped between
	// the two is an eviction.
	flushFence atomic.Uint64

	lastSave    int64  // Unix seconds of the last Save, or of the open
	savedWrites uint64 // diskWrites at the last Save
	saveErr     error  // the last Save's error
	readErr     error  // the last failed disk read's error

	limit     int64 // Config.DiskLimit
	evictions atomic.Uint64
	trims     atomic.Uint64

	rewriting  atomic.Bool // a Rewrite is running
	rewriteErr error       // the last Rewrite's error (under mu)

	fail     diskFailure       // the failed state (diskfail.go; under mu)
	aux      map[string][]byte // the aux records (aux.go; under mu)
	forgetMu sync.Mutex        // one forgetLost at a time
}

const (
	stateLenV1 = 1 + 3*8
	stateLen   = 1 + 4*8
)

// loadDisk reads the state record at New: tokens go on from the durable
// limit, and the flush fence and an armed flush come back.
func (s *Store) loadDisk() error {
	rec, err := s.disk.ReadState()
	if err != nil {
		return fmt.Errorf("%w: reading the state record: %w", ErrDisk, err)
	}
	var limit, fence, flushAt, flushFence uint64
	switch {
	case rec == nil:
	case len(rec) == stateLenV1 && rec[0] == 1 || len(rec) == stateLen && rec[0] == 2:
		limit = binary.LittleEndian.Uint64(rec[1:])
		fence = binary.LittleEndian.Uint64(rec[9:])
		flushAt = binary.LittleEndian.Uint64(rec[17:])
		flushFence = fence
		if rec[0] == 2 {
			flushFence = binary.LittleEndian.Uint64(rec[25:])
		}
	default:
		return fmt.Errorf("%w: state record of %d bytes is neither version 1 nor 2", ErrDisk, len(rec))
	}
	s.cas.Store(limit)
	if flushAt != 0 {
		// The process stopped before an armed flush took effect: every
		// record on disk is older than it. If its time has come, the
		// fence covers them all; if not, it is armed again.
		at := max(int64(flushAt)/1e6, 1)
		s.flushAt.Store(at)
		clk := s.clock()
		if clk.now() >= at {
			fence = max(fence, limit)
			flushFence = fence
			s.flushAt.Store(0)
		}
	}
	s.fence.Store(fence)
	s.ds.flushFence.Store(flushFence)
	s.disk.Forget(s.deadRecord)
	s.ds.lastSave = time.Now().Unix()
	s.ds.mu.Lock()
	s.ds.casLimit.Store(limit + casBlock)
	s.writeStateLocked()
	s.ds.mu.Unlock()
	if s.disk.Failure() != nil {
		// Opened on a disk that takes no writes: the state record goes
		// first when it does again (RecoverDisk), and no token is handed
		// out before, since every write is refused until then.
		return nil
	}
	if err := s.disk.Sync(); err != nil {
		return fmt.Errorf("%w: %w", ErrDisk, err)
	}
	return nil
}

// writeStateLocked queues the state record. s.ds.mu must be held.
func (s *Store) writeStateLocked() {
	s.disk.WriteState(s.stateRecordLocked())
}

// stateRecordLocked encodes the state record. s.ds.mu must be held.
func (s *Store) stateRecordLocked() []byte {
	b := make([]byte, stateLen)
	b[0] = 2
	binary.LittleEndian.PutUint64(b[1:], s.ds.casLimit.Load())
	binary.LittleEndian.PutUint64(b[9:], s.fence.Load())
	binary.LittleEndian.PutUint64(b[17:], uint64(stateFlushAt(s.flushAt.Load())))
	binary.LittleEndian.PutUint64(b[25:], s.ds.flushFence.Load())
	return b
}

// stateFlushAt is an armed flush time in Unix ms as the state record keeps
// it, in Unix ns, saturating.
func stateFlushAt(ms int64) int64 {
	if ms > math.MaxInt64/1_000_000 {
		return math.MaxInt64
	}
	return ms * 1e6
}

// saveState queues the state record after the fence or an armed flush
// changed.
func (s *Store) saveState() {
	if s.disk == nil {
		return
	}
	s.ds.mu.Lock()
	s.writeStateLocked()
	s.ds.mu.Unlock()
}

// coverCAS makes sure token c is below the durable CAS limit, raising the
// limit (one state write) when it is not.
func (s *Store) coverCAS(c uint64) {
	s.ds.mu.Lock()
	if c >= s.ds.casLimit.Load() {
		s.ds.casLimit.Store(c + casBlock)
		s.writeStateLocked()
	}
	s.ds.mu.Unlock()
}

// Sync returns once every change made so far is durable, in durable mode
// (see Disk.Sync); without a Disk it returns nil at once. The server calls
// it before it sends replies.
func (s *Store) Sync() error { return s.sync(false) }

// SyncPass is Sync for an event loop, called once per pass before the
// pass's replies leave: the pass's changes are its group already, so the
// Disk commits them without waiting for others to join (Disk.SyncPass).
func (s *Store) SyncPass() error { return s.sync(true) }

func (s *Store) sync(pass bool) error {
	if s.disk == nil {
		return nil
	}
	var err error
	if pass {
		err = s.disk.SyncPass()
	} else {
		err = s.disk.Sync()
	}
	if err != nil {
		return fmt.Errorf("%w: %w", ErrDisk, err)
	}
	return nil
}

// SyncData returns once every change made so far is on stable storage
// whatever the fsync mode (Disk.SyncData), in durable mode; without a Disk
// it returns nil at once.
func (s *Store) SyncData() error {
	if s.disk == nil {
		return nil
	}
	if err := s.disk.SyncData(); err != nil {
		return fmt.Errorf("%w: %w", ErrDisk, err)
	}
	return nil
}

// Durable reports whether the Store keeps its items on a Disk.
func (s *Store) Durable() bool { return s.disk != nil }

// A disk record is the item's durable fields and its value:
//
//	| 1 B meta | 4 B flags | 8 B CAS | value |
//
// (little endian); the deadline is the Disk's, the key the record's key.
const diskHeader = 1 + 4 + 8

// readFailed counts a failed disk read and keeps its error for DiskStats.
func (s *Store) readFailed(err error) {
	s.diskErrors.Add(1)
	s.ds.mu.Lock()
	s.ds.readErr = err
	s.ds.mu.Unlock()
}

// deadRecord is the rule the Disk's compactions follow (Disk.Forget): a
// record at or below the fence is flushed or evicted and may go for good.
// Dropping one above the flushes' part of the fence is a disk eviction.
func (s *Store) deadRecord(rec []byte) bool {
	if len(rec) < diskHeader {
		return false
	}
	c := binary.LittleEndian.Uint64(rec[5:])
	if c > s.fence.Load() {
		return false
	}
	if c > s.ds.flushFence.Load() {
		s.ds.evictions.Add(1)
	}
	return true
}

// persistLocked queues e (key and value in sh) as its key's record.
func (s *Store) persistLocked(sh *shard, e *entry) {
	if !s.recording() {
		return
	}
	s.persistTo(sh, e, true)
}

// persistTo queues e's record for the Disk and, when feed, the Feed.
func (s *Store) persistTo(sh *shard, e *entry, feed bool) {
	if e.isBig() {
		obj := sh.object(e)
		switch o := obj.(type) {
		case patchable:
			s.persistPatchable(sh, e, o, feed) // patch.go
			return
		case *bigHash:
			s.persistTable(sh, e, o, o.t, feed) // delta.go
			return
		case *bigSet:
			s.persistTable(sh, e, o, o.t, feed)
			return
		}
		// The object's flat encoding: whole, on every change. (A big
		// collection costs O(size) per write in durable mode.)
		s.queueRecordTo(sh, sh.key(e), obj.appendFlat(withRoom(recordHead(sh, e), obj.size())), e, feed)
		return
	}
	s.queueRecordTo(sh, sh.key(e), append(recordHead(sh, e), sh.value(e)...), e, feed)
}

// persistCollLocked is persistLocked for a collection changed by the call
// c: when the call propagated its changes as commands, the Feed gets
// those instead of the whole state (a Disk still gets the record).
func (s *Store) persistCollLocked(sh *shard, e *entry, c *coll) {
	f := s.commandFeeder()
	cmds := c.propagated || c.kind != KindStream && !c.unrecorded && c.propN > 0
	if !cmds || !c.feeding || f == nil {
		s.persistLocked(sh, e)
		return
	}
	if c.propN > 0 {
		f.Commands(sh.key(e), e.cas, c.propN, c.props)
	}
	if s.disk != nil {
		s.persistTo(sh, e, false)
	}
}

// persistItem queues key's record holding a+b and e's durable fields.
func (s *Store) persistItem(sh *shard, key, a, b []byte, e *entry) {
	s.queueRecord(sh, key, append(append(recordHead(sh, e), a...), b...), e)
}

// recordHead starts e's disk record in the shard's buffer (sh.mu is held):
// its header, to which the caller appends the value. Disk.Write copies the
// record, so a durable write allocates nothing.
func recordHead(sh *shard, e *entry) []byte {
	rec := append(sh.diskRec[:0], make([]byte, diskHeader)...)
	// A win token is not kept: after a restart the next mg of a stale
	// item wins the recache again, since the winner may be gone.
	rec[0] = e.meta &^ metaWinSent
	binary.LittleEndian.PutUint32(rec[1:], e.flags)
	binary.LittleEndian.PutUint64(rec[5:], e.cas)
	return rec
}

// queueRecord queues rec, begun by recordHead, as key's record and keeps
// its buffer for the shard's next one unless it grew too large.
func (s *Store) queueRecord(sh *shard, key, rec []byte, e *entry) {
	s.queueRecordTo(sh, key, rec, e, true)
}

// queueRecordTo is queueRecord, telling the Feed only when feed.
func (s *Store) queueRecordTo(sh *shard, key, rec []byte, e *entry, feed bool) {
	if s.disk != nil {
		s.disk.Write(key, rec, e.deadline)
		s.diskWrites.Add(1)
	}
	if f := s.feeder(); f != nil && feed {
		f.Write(key, rec, e.deadline)
	}
	if cap(rec) <= maxDiskRecBuf {
		sh.diskRec = rec[:0]
	}
}

// maxDiskRecBuf bounds the record buffer a shard keeps between writes, so
// one large value does not pin its size in every shard it went through.
const maxDiskRecBuf = 64 << 10

// unpersist queues the delete of key.
func (s *Store) unpersist(key []byte) {
	if s.disk != nil {
		s.disk.Write(key, nil, 0)
		s.diskWrites.Add(1)
	}
	s.feedDelete(key)
}

// loadLocked looks key up on disk after a memory miss and, when the disk
// holds a live item, puts it back into memory (without writing it to disk
// again) and decodes it into e. Room is made in sh as for a write; if sh
// has nothing left to evict, the item is charged anyway and the budget is
// overdrawn by it until the next write makes room: at most one item per
// shard, since the next load into sh evicts it first. A disk error reads
// as a miss, and is reported by the next Sync.
func (s *Store) loadLocked(sh *shard, h uint64, key []byte, clk *clock, e *entry) bool {
	return s.loadFromDiskLocked(sh, h, key, clk, e, false)
}

// loadFromDiskLocked is loadLocked; warm says the warm-up loads the key
// (warmup.go), which counts no disk hit, reports no read error and never
// overdraws the budget.
func (s *Store) loadFromDiskLocked(sh *shard, h uint64, key []byte, clk *clock, e *entry, warm bool) bool {
	rec, deadline, err := s.disk.Read(key)
	if err != nil || len(rec) < diskHeader {
		if err != nil && !warm {
			s.readFailed(err)
		}
		return false
	}
	if !warm {
		s.diskHits.Add(1)
	}
	return s.installLocked(sh, h, key, rec, deadline, clk, e, warm)
}

// installLocked puts the item the disk's record rec (with its deadline)
// holds back into memory, as loadFromDiskLocked does once it has read it.
func (s *Store) installLocked(sh *shard, h uint64, key, rec []byte, deadline int64, clk *clock, e *entry, warm bool) bool {
	n := entry{tag: tagOf(h), meta: rec[0], deadline: deadline}
	n.flags = binary.LittleEndian.Uint32(rec[1:])
	n.cas = binary.LittleEndian.Uint64(rec[5:])
	if n.cas <= s.fence.Load() || deadline != 0 && deadline <= clk.now() {
		return false // flushed or expired: gone
	}
	value := rec[diskHeader:]
	var obj object
	var objSize int64
	if n.isBig() {
		o, err := s.decodeFlat(sh.seed, kindOf(n.meta), value)
		if err != nil {
			if !warm {
				s.readFailed(fmt.Errorf("store: key %q: %w", key, err))
			}
			return false
		}
		obj, objSize = o, o.size()
		value = make([]byte, 4) // the object's number, set below
	}
	cost := int64(len(key)+len(value)) + ItemOverhead + objSize
	if obj == nil && cost > s.limit.Load() {
		return false // cannot be held in memory at all; cannot happen
	}
	if warm && s.used.Load()+cost > s.limit.Load() {
		return false // the warm-up evicts nothing
	}
	if s.reserveLocked(sh, clk, cost, nil) > 0 {
		s.used.Add(cost)
	}
	if obj != nil {
		binary.LittleEndian.PutUint32(value, sh.newObjLocked(obj, objSize))
	}
	n.atime = s.stamp(nil, clk)
	sh.insertLocked(&n, key, value, nil)
	sh.bytes += cost
	return sh.findLocked(h, key, e)
}

// Package durable puts the LSM engine (lsm) under the store: Log
// is the store.Disk of MiniKV's durable mode (--data-dir).
//
// The store queues every change with Write while it holds the key's shard
// lock, so the changes of one key arrive here in the order they happened
// in memory, and it calls Sync before any reply is sent. Log gathers the
// queued changes in one lsm.Batch; Sync hands the batch to the engine
// (one write(2) of the write-ahead log, and with --fsync always one fsync)
// and returns once it is in. While one Sync runs, the changes of every
// other connection gather in the next batch, which the next Sync commits:
// group commit across connections and pipelines, as LevelDB's writer
// queue does inside the engine. When the engine pipelines fsyncs
// (lsm.Options.PipelinedSync) commits may overlap: once a leader has taken
// the pending batch, the next one may take the changes queued after it and
// hand them to the engine while the first is still in its fsync; the
// engine acknowledges them in order (mayLeadLocked says when).
//
//	store (shard lock) --Write--> pending batch --Sync--> lsm.Apply --> WAL, memtable
//	                                   |                      |
//	store (miss) --Read--> pending, in flight, then the engine
//
// Keys on disk carry a one-byte prefix: 'k' for the store's keys, 's' for
// its state record, 'a' and a name for its aux records (store.SetAux:
// the Redis port's function libraries), so no client key can collide with
// the state.
package durable

import (
	"bytes"
	"errors"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/minikv/minikv/internal/store"
	"github.com/minikv/minikv/lsm"
)

const (
	prefixKey   = 'k'
	prefixState = 's'
	prefixAux   = 'a'

	// maxPending is the size of queued changes at which Write commits
	// them itself, so writes that get no reply (memcached noreply) cannot
	// grow the queue without bound between two replies.
	maxPending = 8 << 20

	// MaxItemSize is the largest item the store may hold in durable mode,
	// so that one change fits in a batch the engine takes.
	MaxItemSize = 1 << 30

	// maxSpareRecs bounds the map of queued records kept for reuse from
	// one commit to the next (a map never shrinks, and clearing one costs
	// its capacity).
	maxSpareRecs = 1024

	// maxSpareArena bounds the arena of a set of queued records kept for
	// reuse; one spare set may keep an arena up to maxBigArena, so that
	// batches of large records (patches of long streams and lists, at
	// P=16 megabytes a batch) do not allocate and zero their arena anew
	// each time: 5.5 instead of 8.2 µs of CPU per XADD to a long durable
	// stream at P=16.
	maxSpareArena = 1 << 20
	maxBigArena   = maxPending

	// maxSpareList bounds the list of changes of a set kept for reuse.
	maxSpareList = 16 << 10

	// syncInterval is how often a background pass commits changes no
	// reply has committed yet (noreply writes): they reach the log within
	// this time.
	syncInterval = 5 * time.Millisecond
)

// maxBatch bounds a batch handed to the engine: a change that would take
// the queued ones past it commits them first, so a batch stays within
// lsm.MaxBatchSize (2 GiB) however many large values are written at once.
// A change alone is at most MaxItemSize plus its key and framing. A
// variable for tests.
var maxBatch = 1 << 30

// Log is a store.Disk over an lsm.DB. It is safe for concurrent use.
type Log struct {
	db       *lsm.DB
	ownsDB   bool                                  // opened by Open: Close closes it
	openTime time.Duration                         // how long Open's lsm.Open took
	dead     atomic.Pointer[func(rec []byte) bool] // the store's rule for compactions (Forget)
	patches  patchSet                              // keys that may have a patch (patch.go)

	mu        sync.Mutex           // protects the fields below it
	pending   *lsm.Batch           // changes queued since the last commit began
	pendRecs  *recSet              // the last queued change of each key in pending
	overlap   bool                 // the engine pipelines fsyncs: commits may overlap (mayLeadLocked)
	keyBuf    []byte               // queue's scratch key
	deferred  map[string]queuedRec // the newest patch of each key queued since the last take (WritePatch)
	inflight  []inflightBatch      // batches handed to the engine, not yet returned; oldest first
	spares    []*lsm.Batch         // empty batches for the next rounds
	spareRecs []*recSet            // empty sets for the next rounds' pendRecs
	queued    atomic.Uint64        // changes queued so far; written under mu
	taken     uint64               // changes handed to the engine so far (a prefix of queued)
	failed    atomic.Bool          // err is set; written under mu
	err       error                // the first commit error; every Sync after reports it
	leading   bool                 // a Sync is taking the pending batch
	holds     int                  // Hold sections open: their changes go to the engine in one batch
	calls     int                  // HoldCalls sections open: the Holds nested in them do not wait on takeWait
	takeWait  bool                 // a leader waits for the holds to end; new Holds wait until it has taken the batch
	holdCond  sync.Cond            // signalled when holds reach 0 and when a leader has taken the batch (L: mu)
	waiters   []*syncWaiter        // Syncs waiting for a commit or for the lead (wakeLocked)

	synced     atomic.Uint64 // changes durable so far (a prefix of queued)
	exclCap    atomic.Uint64 // 1 + the changes queued when the open Exclusive section began (HoldExclusive); 0: none
	overlapped atomic.Int64  // batches taken while another was in the engine

	// A disk failure (docs/durability.md, "When the disk fails"): err is
	// the engine's error, the Log takes no more changes (queue refuses
	// them, and notes their keys as lost) until Recover, and the keys of
	// every change that may not have reached the disk wait in lost for the
	// store to forget them from memory (TakeLost, Forgotten), so that what
	// memory holds is what the disk holds.
	diskErr    atomic.Pointer[error] // err while it is a disk failure; nil otherwise (Failure)
	epoch      atomic.Uint64         // failure rounds: odd while lost keys wait to be forgotten (SyncSince)
	lost       [][]byte              // keys whose changes were lost, not yet taken (under mu)
	lastErr    error                 // the last disk failure, for Syncs of batches it cut across (under mu)
	lostCh     chan struct{}         // signalled when the Log fails or lost gains keys
	failures   atomic.Uint64         // times the Log entered the failed state
	recoveries atomic.Uint64         // times Recover brought it back
	recoverMu  sync.Mutex            // one Recover at a time

	quit chan struct{}
	done chan struct{}
}

// inflightBatch is a batch being applied: the last queued change of each
// of its keys, and the count of changes queued up to its end.
type inflightBatch struct {
	recs *recSet
	n    uint64 // its changes
	end  uint64 // the changes queued up to its end
}

// syncWaiter is a Sync waiting until its changes are committed, or until
// it may lead: wakeLocked wakes only the waiters whose changes are in, and
// one waiter to lead the next commit, not every waiter on every event.
type syncWaiter struct {
	target uint64        // the changes it waits for: queued up to target
	ch     chan struct{} // receives one wake-up
}

var syncWaiterPool = sync.Pool{New: func() any { return &syncWaiter{ch: make(chan struct{}, 1)} }}

// maxSpares bounds the batches and maps kept for reuse.
const maxSpares = 4

// queuedRec is a change waiting in a batch: the record, or a delete.
type queuedRec struct {
	rec      []byte // nil: deleted; in its recSet's arena
	deadline int64
}

// recSet is the queued changes of a batch, for Read to find the last one
// of a key. Keys and records are copied into one arena, so queuing a
// change allocates nothing once the arena and the list have grown to a
// batch's size. The map from each key to its last change (its keys are
// strings over the arena's bytes) is built only when a Read looks in the
// set, which only a read of a key missing from memory does, and is kept
// up to date from then on: a batch nobody reads from costs no map
// insert per change. Nothing in the arena changes until the set is
// recycled (recycleSet), which happens under Log.mu once no batch refers
// to it; Read copies a record out under mu.
type recSet struct {
	recs    []setRec             // every change, in the order queued
	m       map[string]queuedRec // the last change of each key, when indexed
	indexed bool                 // m holds every change in recs
	arena   []byte
}

// setRec is one queued change of a recSet.
type setRec struct {
	key string // over the arena
	q   queuedRec
}

// put records rec (nil: a delete) as key's change.
func (r *recSet) put(key, rec []byte, deadline int64) {
	// A new array when the arena is full: the old one stays as it is for
	// the keys and records already in it.
	if len(r.arena)+len(key)+len(rec) > cap(r.arena) {
		r.arena = make([]byte, 0, max(2*cap(r.arena), len(key)+len(rec), minArena))
	}
	start := len(r.arena)
	r.arena = append(append(r.arena, key...), rec...)
	k := unsafe.String(unsafe.SliceData(r.arena[start:]), len(key))
	q := queuedRec{deadline: deadline}
	if rec != nil {
		q.rec = r.arena[start+len(key) : len(r.arena) : len(r.arena)]
	}
	r.recs = append(r.recs, setRec{key: k, q: q})
	if r.indexed {
		r.m[k] = q
	}
}

// maxScan is the most changes find compares one by one; a larger set is
// indexed in a map on its first find.
const maxScan = 16

// find returns key's last change in the set. Log.mu is held.
func (r *recSet) find(key []byte) (queuedRec, bool) {
	if !r.indexed {
		if len(r.recs) <= maxScan {
			for i := len(r.recs) - 1; i >= 0; i-- {
				if r.recs[i].key == string(key) {
					return r.recs[i].q, true
				}
			}
			return queuedRec{}, false
		}
		if r.m == nil {
			r.m = make(map[string]queuedRec, len(r.recs))
		}
		for _, e := range r.recs {
			r.m[e.key] = e.q
		}
		r.indexed = true
	}
	q, ok := r.m[string(key)]
	return q, ok
}

// minArena is the smallest arena a recSet allocates.
const minArena = 4 << 10

// ErrClosed is returned by Sync after Close.
var ErrClosed = errors.New("durable: log closed")

// New returns a Log over db, which it does not own: Close the Log, then
// the DB. Compactions of db do not know the store's rule (Forget); Open
// wires it.
func New(db *lsm.DB) *Log {
	l := newLog()
	l.start(db)
	return l
}

// Open opens the engine in dir with o and returns a Log over it that owns
// it (Close closes both). Its compactions ask the store's rule (Forget)
// which records are dead.
func Open(dir string, o lsm.Options) (*Log, error) {
	l := newLog()
	o.Drop = l.drop
	start := time.Now()
	db, err := lsm.Open(dir, o)
	if err != nil {
		return nil, err
	}
	l.openTime = time.Since(start)
	l.ownsDB = true
	l.start(db)
	return l, nil
}

func newLog() *Log {
	l := &Log{
		pending:  lsm.NewBatch(),
		pendRecs: &recSet{},
		lostCh:   make(chan struct{}, 1),
		quit:     make(chan struct{}),
		done:     make(chan struct{}),
	}
	l.holdCond.L = &l.mu
	return l
}

func (l *Log) start(db *lsm.DB) {
	l.db = db
	l.overlap = db.PipelinedSync()
	if err := l.loadPatches(); err != nil && !errors.Is(err, lsm.ErrClosed) {
		// Patches it cannot read: reads go on, writes are refused (a
		// full write must delete the patch of its key).
		l.mu.Lock()
		l.failLocked(err)
		l.mu.Unlock()
	}
	if err := db.Err(); err != nil && !errors.Is(err, lsm.ErrClosed) {
		// Opened on a disk that takes no writes (a full one): reads are
		// served from what recovery replayed, writes refused until
		// Recover.
		l.mu.Lock()
		if l.err == nil {
			l.failLocked(err)
		}
		l.mu.Unlock()
	}
	go l.background()
}

// DB returns the engine under the Log.
func (l *Log) DB() *lsm.DB { return l.db }

// drop is the engine's Options.Drop: the store's rule, for its keys. A
// patched key's base goes when the key's newest record (its patch) is
// dead; a patch begins as the record it stands for.
func (l *Log) drop(key, value []byte) bool {
	dead := l.dead.Load()
	if dead == nil || len(key) == 0 {
		return false
	}
	switch key[0] {
	case prefixKey:
		if h, ok := l.patches.latest(key[1:]); ok {
			return (*dead)(h.b[:h.n])
		}
		return (*dead)(value)
	case prefixPatch:
		return (*dead)(value)
	}
	return false
}

// Forget installs the store's rule for records compactions may delete.
func (l *Log) Forget(dead func(rec []byte) bool) { l.dead.Store(&dead) }

// Scan calls fn with every live record whose key is at or after from, in
// key order, after committing what is queued, so it sees every Write made
// before the call. The key and record are valid only during fn.
func (l *Log) Scan(from []byte, fn func(key, rec []byte, deadline int64) bool) error {
	if err := l.Sync(); err != nil {
		return err
	}
	// One iterator over the keys and the patches: a patched key's patch
	// is read from the snapshot its base is read from.
	it, err := l.db.NewIter(&lsm.IterOptions{LowerBound: []byte{prefixKey}, UpperBound: []byte{prefixPatch + 1}})
	if err != nil {
		return err
	}
	seek := make([]byte, 1+len(from))
	seek[0] = prefixKey
	copy(seek[1:], from)
	for ok := it.SeekGE(seek); ok && it.Key()[0] == prefixKey; ok = it.Next() {
		key, rec, exp := it.Key()[1:], it.Value(), it.Expiry()
		if l.patches.has(key) {
			if key, rec, err = scanPatched(it, key, rec); err != nil {
				return errors.Join(err, it.Close())
			}
		}
		if !fn(key, rec, deadlineOf(exp)) {
			break
		}
	}
	return errors.Join(it.Error(), it.Close())
}

// Compact commits what is queued and rewrites every table into the last
// level (lsm.DB.Compact), dropping overwritten versions, expired records
// and the ones the store's rule says are dead.
func (l *Log) Compact() error {
	if err := l.Sync(); err != nil {
		return err
	}
	return l.db.Compact()
}

// Usage reports the engine's size and health.
func (l *Log) Usage() store.DiskUsage {
	m := l.db.Metrics()
	var bytes int64
	for _, lv := range m.Levels {
		bytes += lv.Bytes
	}
	return store.DiskUsage{
		Bytes:            bytes + m.MemTableBytes,
		WriteStalls:      uint64(m.WriteStalls),
		StallTime:        m.StallDuration,
		Syncs:            uint64(m.LogSyncs),
		SyncTime:         m.LogSyncTime,
		MaxSync:          m.MaxLogSync,
		OpenTime:         l.openTime,
		Failures:         l.failures.Load(),
		Recoveries:       l.recoveries.Load(),
		CompactionErrors: uint64(m.CompactionErrors),
		Flushes:          uint64(m.Flushes),
		Compactions:      uint64(m.Compactions + m.Moves),
		Flushing:         m.Flushing,
		Compacting:       m.Compacting,
	}
}

// Write queues rec as key's record (nil: a delete), expiring at deadline
// (Unix ms, the store's unit; 0: never). It copies key and rec.
func (l *Log) Write(key, rec []byte, deadline int64) {
	l.queue(prefixKey, key, rec, deadline)
}

// WriteState queues the store's state record.
func (l *Log) WriteState(rec []byte) {
	l.queue(prefixState, nil, rec, 0)
}

// WriteAux queues the store's aux record name (nil: its delete).
func (l *Log) WriteAux(name string, rec []byte) {
	l.queue(prefixAux, []byte(name), rec, 0)
}

// ReadAux returns the aux record name, or nil.
func (l *Log) ReadAux(name string) ([]byte, error) {
	rec, _, err := l.read(append([]byte{prefixAux}, name...))
	return rec, err
}

func (l *Log) queue(prefix byte, key, rec []byte, deadline int64) {
	l.mu.Lock()
	for l.err == nil && l.holds == 0 && l.pending.Size() > 0 && l.pending.Size()+len(key)+len(rec) > maxBatch {
		l.mu.Unlock()
		_ = l.Sync() // commits what is queued; an error stays in l.err
		l.mu.Lock()
	}
	if l.err != nil {
		// Failed (or closed): the change goes nowhere. Memory has it
		// already; the store forgets the key (TakeLost), so it reads back
		// what the disk holds. The state record needs no such care: the
		// store writes it whole again once the disk is back (Recover).
		if (prefix == prefixKey || prefix == prefixPatch) && l.err != ErrClosed {
			l.loseLocked(key)
		}
		l.mu.Unlock()
		return
	}
	if prefix == prefixKey && l.patches.has(key) {
		// The key's patch goes in the batch its new base (or delete)
		// goes in: a patch is of one base. One still deferred is of the
		// old base, and goes.
		delete(l.deferred, string(key))
		pk := append(append(l.keyBuf[:0], prefixPatch), key...)
		l.keyBuf = pk
		l.pending.Delete(pk)
		l.pendRecs.put(pk, nil, 0)
		l.queued.Add(1)
		l.patches.note(key, rec, false)
	}
	k := append(append(l.keyBuf[:0], prefix), key...)
	l.keyBuf = k
	switch {
	case rec == nil:
		l.pending.Delete(k)
	case deadline != 0:
		l.pending.PutExpiring(k, rec, time.UnixMilli(deadline))
	default:
		l.pending.Put(k, rec)
	}
	l.pendRecs.put(k, rec, deadline)
	q := l.queued.Add(1)
	if l.overlap && len(l.inflight) == 1 && q-l.taken == l.inflight[0].n && len(l.waiters) > 0 {
		l.wakeLocked() // a batch as large as the one in flight may go (mayLeadLocked)
	}
	// Within a Hold the batch cannot go before the section ends (its
	// changes would be split): the section's end commits nothing itself,
	// the next reply's Sync does.
	big := l.pending.Size() >= maxPending && l.holds == 0
	l.mu.Unlock()
	if big {
		_ = l.Sync() // the error stays in l.err for the next Sync
	}
}

// Hold begins a section whose changes (those of one command or
// transaction over several keys: a RENAME's delete and set, an EXEC, a
// script) must reach the engine in one batch, so that after a crash
// either all of them are there or none: a Sync does not take the pending
// batch while a section is open. A Sync waiting for the sections to end
// makes new ones wait until it has taken the batch, so a stream of
// overlapping sections cannot starve the commits. The caller holds the
// locks of every key it will write (so no section waits on another), and
// calls Release when its last change is queued.
func (l *Log) Hold() {
	l.mu.Lock()
	l.holdLocked()
	l.mu.Unlock()
}

// holdLocked opens a Hold section. A section nested in a HoldCalls one
// does not wait for a leader to take the batch: the leader waits for the
// outer section, which cannot end before the nested one. l.mu is held.
func (l *Log) holdLocked() {
	for l.takeWait && l.calls == 0 {
		l.holdCond.Wait()
	}
	l.holds++
}

// HoldExclusive is Hold for a section that holds every shard of the store
// (store.Exclusive: a script, an EXEC). Nothing but the section queues a
// change until EndExclusive, so the replies sent meanwhile (another
// client's -BUSY while a script runs long) need only the changes queued
// before it: the section's start hands those to the engine, in a batch
// of their own, and caps every Sync's target at them (sync). A section
// nested in another (a Store.Hold of a replica applying an EXEC) has
// none of this: the outer section's changes before it cannot be split
// from its own.
func (l *Log) HoldExclusive() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.holdLocked()
	if l.holds > 1 || l.err != nil {
		return
	}
	n := l.queued.Load()
	l.exclCap.Store(n + 1)
	if n > l.taken {
		// A leader may be about to take the batch, or waiting in line
		// (mayLeadLocked): it finds its changes taken (syncTo).
		b, c := l.takeLocked()
		go func() { _ = l.finish(c, b, n) }()
		l.holdCond.Broadcast()
	}
}

// EndExclusive ends what HoldExclusive began beyond Hold: Syncs wait for
// every queued change again. Release ends the section.
func (l *Log) EndExclusive() { l.exclCap.Store(0) }

// HoldCalls begins a section of several calls on one goroutine (a
// replica applying its primary's command and recording its offset, with
// store.Store.Hold) whose changes reach the engine in one batch, as
// Hold's. Holds nested in it do not wait for a leader (holdLocked).
func (l *Log) HoldCalls() {
	l.mu.Lock()
	l.holdLocked()
	l.calls++
	l.mu.Unlock()
}

// ReleaseCalls ends a HoldCalls section.
func (l *Log) ReleaseCalls() {
	l.mu.Lock()
	l.calls--
	l.releaseLocked()
	l.mu.Unlock()
}

// Release ends a Hold section.
func (l *Log) Release() {
	l.mu.Lock()
	l.releaseLocked()
	l.mu.Unlock()
}

func (l *Log) releaseLocked() {
	l.holds--
	if l.holds == 0 {
		l.holdCond.Broadcast()
	}
}

// Read returns key's record as the last Write left it, or nil.
func (l *Log) Read(key []byte) ([]byte, int64, error) {
	k := make([]byte, 1+len(key))
	k[0] = prefixKey
	copy(k[1:], key)
	rec, deadline, err := l.read(k)
	if err == nil {
		rec, err = l.patched(key, rec)
	}
	return rec, deadline, err
}

// ReadState returns the state record, or nil.
func (l *Log) ReadState() ([]byte, error) {
	rec, _, err := l.read([]byte{prefixState})
	return rec, err
}

func (l *Log) read(k []byte) ([]byte, int64, error) {
	l.mu.Lock()
	r, ok := queuedRec{}, false
	if len(k) > 0 && k[0] == prefixPatch {
		r, ok = l.deferred[string(k[1:])]
	}
	if !ok {
		r, ok = l.pendRecs.find(k)
	}
	for i := len(l.inflight) - 1; !ok && i >= 0; i-- {
		r, ok = l.inflight[i].recs.find(k)
	}
	if ok && r.rec != nil {
		// The arena is reused once its batch is in: copy while mu holds it.
		r.rec = bytes.Clone(r.rec)
	}
	l.mu.Unlock()
	if ok {
		if r.rec == nil || r.deadline != 0 && r.deadline <= time.Now().UnixMilli() {
			return nil, 0, nil
		}
		return r.rec, r.deadline, nil
	}
	v, exp, err := l.db.GetEntry(k)
	switch {
	case errors.Is(err, lsm.ErrNotFound):
		return nil, 0, nil
	case err != nil:
		return nil, 0, err
	}
	return v, deadlineOf(exp), nil
}

// deadlineOf is the store's deadline (Unix ms; 0: never) for an engine
// expiry (the zero time: none). The engine keeps what Write gave it, whole
// milliseconds, past 2262 too; a record written when the store counted
// nanoseconds rounds down to its millisecond. The deadline is never 0, which
// would mean never.
func deadlineOf(exp time.Time) int64 {
	if exp.IsZero() {
		return 0
	}
	return max(exp.UnixMilli(), 1)
}

// Sync returns once every change queued before the call is in the engine
// (written to its log, and fsynced in SyncAlways mode).
//
// One caller at a time leads: it takes the pending batch and applies it;
// the others wait and return once a commit carried their changes, or lead
// the next one. Each waiter is woken once, when one of these holds
// (wakeLocked), not on every commit. Before it takes the batch,
// a leader yields its processor once: the connections the scheduler has
// ready then parse their requests and queue their changes, and they go out
// in this commit's one write(2) and fsync. Redis gets the same for free by
// writing its AOF buffer once per event loop pass; with a goroutine per
// connection on a few processors, a group would otherwise hold only the
// writes that arrived while the previous commit ran.
//
// The lead passes on as soon as the batch is taken, and the next leader
// may go once this batch is in (or, when commits overlap, earlier:
// mayLeadLocked). Batches are queued in the engine under l.mu, so they
// commit in the order taken, and the engine acknowledges them in order:
// when a batch's commit returns, every batch taken before it is in too.
func (l *Log) Sync() error { return l.sync(l.epoch.Load(), true) }

// SyncPass is Sync for a caller that has already gathered its group: an
// event loop, once per pass, for every change its connections made in
// the pass. It does not yield before it takes the batch (there is nobody
// on that loop to wait for, and a yield costs the scheduler a wake-up).
func (l *Log) SyncPass() error { return l.sync(l.epoch.Load(), false) }

// Epoch marks the start of a batch of requests for SyncSince: the
// server takes it before the batch's first request runs.
func (l *Log) Epoch() uint64 { return l.epoch.Load() }

// SyncSince is Sync for the replies of a batch of requests that began at
// mark (Epoch). If the disk failed after mark, a reply of the batch may
// carry a change that was lost (the batch's own, or one it read from
// memory before the store forgot it), so SyncSince returns the failure's
// error, even once the disk is back: the server closes the connection
// without those replies, and the client sees what it sees of any lost
// connection. A batch that began once the failure's lost keys were
// forgotten saw only what the disk holds, and its writes were refused
// before they ran: while the disk is failed its SyncSince returns nil.
func (l *Log) SyncSince(mark uint64) error { return l.sync(mark, true) }

// SyncAllSince is SyncSince for a caller that never holds an Exclusive
// section (an outbox's writer, store.Store.SyncAllSince): it waits for
// the open section's changes too, which what it writes may reveal.
func (l *Log) SyncAllSince(mark uint64) error { return l.syncTo(mark, l.queued.Load(), true) }

func (l *Log) sync(mark uint64, yield bool) error {
	// Every reply in durable mode passes here: with nothing queued it
	// costs four atomic loads, no lock.
	target := l.queued.Load()
	if c := l.exclCap.Load(); c != 0 && c-1 < target {
		// An Exclusive section is open (HoldExclusive): whatever was
		// queued after its start is the section's, and this reply's
		// batch cannot have made or read it.
		target = c - 1
	}
	return l.syncTo(mark, target, yield)
}

// syncTo returns once the changes queued up to target are durable, or
// with the error that keeps them from it (sync).
func (l *Log) syncTo(mark, target uint64, yield bool) error {
	if l.epoch.Load() != mark {
		return l.cutAcross()
	}
	if l.synced.Load() >= target && !l.failed.Load() {
		return nil
	}
	for {
		l.mu.Lock()
		for {
			if l.err != nil {
				err := l.err
				if err != ErrClosed && l.epoch.Load() == mark && mark%2 == 0 {
					err = nil // began after the failure was dealt with (above)
				}
				l.mu.Unlock()
				return err
			}
			if l.synced.Load() >= target {
				l.mu.Unlock()
				return nil
			}
			if l.mayLeadLocked() && l.taken < target {
				break // our changes are still pending: lead
			}
			w := syncWaiterPool.Get().(*syncWaiter)
			w.target = target
			l.waiters = append(l.waiters, w)
			l.mu.Unlock()
			<-w.ch
			syncWaiterPool.Put(w)
			l.mu.Lock()
		}
		l.leading = true
		l.mu.Unlock()

		if yield {
			runtime.Gosched()
		}

		l.mu.Lock()
		for l.holds > 0 && l.taken < target {
			// A multi-key change is half queued: wait for its end, so the
			// engine gets all of it or none in this batch (Hold).
			l.takeWait = true
			l.holdCond.Wait()
		}
		if l.takeWait {
			l.takeWait = false
			l.holdCond.Broadcast() // the Holds that waited may begin
		}
		l.leading = false
		if l.taken >= target {
			// An Exclusive section's start took our changes meanwhile
			// (HoldExclusive): wait for their commit as a follower.
			l.wakeLocked()
			l.mu.Unlock()
			continue
		}
		b, c := l.takeLocked()
		n := l.taken
		l.wakeLocked() // the next leader may take what is queued from now on
		l.mu.Unlock()
		return l.finish(c, b, n)
	}
}

// takeLocked hands the pending batch to the engine and returns it with
// its commit, for finish. l.mu is held.
func (l *Log) takeLocked() (*lsm.Batch, lsm.Commit) {
	l.batchDeferredLocked()
	b, n := l.pending, l.queued.Load()
	// Queued under l.mu, so batches reach the engine in the order taken.
	c := l.db.Enqueue(b)
	if len(l.inflight) > 0 {
		l.overlapped.Add(1)
	}
	l.inflight = append(l.inflight, inflightBatch{recs: l.pendRecs, n: n - l.taken, end: n})
	l.pending = l.spareBatch()
	l.pendRecs = l.spareSet()
	l.taken = n
	return b, c
}

// finish waits for the commit c of batch b, taken with the changes
// queued up to n, and settles it: the records of the batches it carried
// are dropped, synced moves to n, and the waiters it satisfies wake.
func (l *Log) finish(c lsm.Commit, b *lsm.Batch, n uint64) error {
	err := c.Wait()

	b.Reset()
	l.mu.Lock()
	if err != nil && l.err == nil {
		l.failLocked(err) // before the records of the batches in flight go
	}
	// The engine acknowledges batches in order, so every batch taken
	// before this one is in too (or failed with it): drop their records
	// with this one's, whichever Apply returned first.
	i := 0
	for i < len(l.inflight) && l.inflight[i].end <= n {
		l.recycleSet(l.inflight[i].recs)
		i++
	}
	l.inflight = append(l.inflight[:0], l.inflight[i:]...)
	if len(l.spares) < maxSpares {
		l.spares = append(l.spares, b)
	}
	err = l.err
	if err == nil && l.synced.Load() < n {
		l.synced.Store(n)
	}
	l.wakeLocked()
	l.mu.Unlock()
	return err
}

// cutAcross is SyncSince's error for a batch that a disk failure cut
// across: the failure's, whether or not the disk is back.
func (l *Log) cutAcross() error {
	l.mu.Lock()
	err := l.lastErr
	l.mu.Unlock()
	if err == nil {
		err = errors.New("durable: disk failure") // cannot happen: the epoch moves only on a failure
	}
	return err
}

// failLocked puts the Log in the failed state with the engine's error
// err. Every change not known to be durable may be lost: those of the
// batches in the engine (whose commits fail with this one, since the
// engine fails every group after a failed one) and those still queued.
// Their keys go to lost, for the store to forget, and the queue is
// dropped. Counting a change the engine did take as lost costs nothing
// but a read back from disk. l.mu is held.
func (l *Log) failLocked(err error) {
	l.err = err
	l.lastErr = err
	l.failed.Store(true)
	l.diskErr.Store(&err)
	l.failures.Add(1)
	lostOwn := false // a state or aux record: nothing to forget, but a change all the same
	for _, b := range l.inflight {
		lostOwn = l.loseSetLocked(b.recs) || lostOwn
	}
	lostOwn = l.loseSetLocked(l.pendRecs) || lostOwn
	for k := range l.deferred {
		l.lost = append(l.lost, []byte(k))
	}
	clear(l.deferred)
	l.pending.Reset()
	l.recycleSet(l.pendRecs)
	l.pendRecs = l.spareSet()
	l.taken = l.queued.Load()
	if len(l.lost) > 0 || lostOwn {
		// A batch that made one of these changes must not be answered:
		// the round closes it (the store writes its own records again
		// once the disk is back, RecoverDisk).
		l.beginRoundLocked()
	} else {
		// Nothing was lost (a flush or everysec's fsync failed, with
		// every change already in the engine): no batch can have read a
		// lost change, so none is cut across. The store still hears of
		// the failure at once.
		l.signalLocked()
	}
	l.wakeLocked()
}

// loseSetLocked notes the keys of every change in r as lost. l.mu is held.
// loseSetLocked adds r's keys to the lost ones, and reports whether r
// also held one of the store's own records (state, aux).
func (l *Log) loseSetLocked(r *recSet) (own bool) {
	for _, e := range r.recs {
		switch {
		case len(e.key) > 0 && (e.key[0] == prefixKey || e.key[0] == prefixPatch):
			l.lost = append(l.lost, []byte(e.key[1:]))
		case len(e.key) > 0:
			own = true
		}
	}
	return own
}

// loseLocked notes key, whose change the Log refused, as lost. l.mu is
// held.
func (l *Log) loseLocked(key []byte) {
	l.lost = append(l.lost, bytes.Clone(key))
	l.beginRoundLocked()
}

// beginRoundLocked starts a failure round, if none is open: from here
// until the store has forgotten the lost keys (Forgotten), a batch may
// read a lost change from memory. l.mu is held.
func (l *Log) beginRoundLocked() {
	if l.epoch.Load()%2 == 0 {
		l.epoch.Add(1)
	}
	l.signalLocked()
}

// signalLocked wakes the store's watcher (Lost). l.mu is held.
func (l *Log) signalLocked() {
	select {
	case l.lostCh <- struct{}{}:
	default:
	}
}

// Failure returns the disk error that keeps the Log from taking changes,
// or nil. It costs one atomic load.
func (l *Log) Failure() error {
	if p := l.diskErr.Load(); p != nil {
		return *p
	}
	return nil
}

// Lost is signalled when the Log fails and when a change is refused: the
// store then takes the lost keys (TakeLost).
func (l *Log) Lost() <-chan struct{} { return l.lostCh }

// TakeLost returns the keys whose changes were lost since the last call,
// and the round they belong to, for Forgotten. One caller at a time.
func (l *Log) TakeLost() ([][]byte, uint64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	keys := l.lost
	l.lost = nil
	return keys, l.epoch.Load()
}

// Forgotten reports that the store has forgotten every key TakeLost
// returned with round. If no key was lost since, the round ends: memory
// and disk agree again, and batches that begin from now on see nothing
// lost.
func (l *Log) Forgotten(round uint64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.epoch.Load() == round && round%2 == 1 && len(l.lost) == 0 {
		l.epoch.Add(1)
	}
}

// errForgetting is Recover's answer while lost keys wait to be forgotten.
var errForgetting = errors.New("durable: lost changes not yet forgotten")

// Recover brings a failed Log back: it has the engine start over from
// what it holds durably (lsm.DB.Resume: its memtables written to tables,
// a new log, nothing of a failed fsync trusted), commits state (the
// store's state record, which a failure may have lost) as the first
// change, proof that the log takes writes again, and takes changes
// again. It returns nil at once when the Log has not failed, and the
// engine's error while the disk still fails; the store calls it once a
// second (Redis retries a failed AOF write as often). The lost keys must
// have been forgotten first.
func (l *Log) Recover(state []byte) error {
	l.recoverMu.Lock()
	defer l.recoverMu.Unlock()
	l.mu.Lock()
	if l.err == nil || l.err == ErrClosed {
		l.mu.Unlock()
		return nil
	}
	if l.epoch.Load()%2 == 1 || len(l.inflight) > 0 || l.leading {
		l.mu.Unlock()
		return errForgetting
	}
	l.mu.Unlock()
	if err := l.db.Resume(); err != nil {
		return err
	}
	// Nothing else is queued or committed while the Log is failed, so
	// the state goes to the engine directly, first.
	b := lsm.NewBatch()
	b.Put([]byte{prefixState}, state)
	if err := l.db.Apply(b); err != nil {
		return err // the engine is failed again: so is the Log, still
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.epoch.Load()%2 == 1 || len(l.inflight) > 0 || l.leading {
		return errForgetting // a change was refused meanwhile: once more
	}
	if l.err == nil || l.err == ErrClosed {
		return nil
	}
	// Nothing is queued (the queue was dropped and changes refused since),
	// and every change counted so far is durable or forgotten.
	l.err = nil
	l.failed.Store(false)
	l.diskErr.Store(nil)
	l.taken = l.queued.Load()
	l.synced.Store(l.taken)
	l.recoveries.Add(1)
	return nil
}

// mayLeadLocked reports whether a Sync may take the pending batch now:
// when no batch is in the engine; or, if the engine pipelines fsyncs, when
// one is and as many changes are pending as it holds. So commits overlap
// (the next one's write(2) and fsync run while the previous fsync is in
// flight) only when the disk is slow enough for a whole group to gather
// meanwhile; when it is not, overlapping would only split groups in two
// and double the fsyncs and the CPU they cost. l.mu is held.
func (l *Log) mayLeadLocked() bool {
	if l.leading {
		return false
	}
	switch len(l.inflight) {
	case 0:
		return true
	case 1:
		return l.overlap && l.queued.Load()-l.taken >= l.inflight[0].n
	}
	return false
}

// wakeLocked wakes the waiters whose changes are committed (or that must
// see the error), and, if no one leads, the first waiter whose changes
// are still pending, to lead. l.mu is held.
func (l *Log) wakeLocked() {
	synced := l.synced.Load()
	lead := l.mayLeadLocked()
	kept := l.waiters[:0]
	for _, w := range l.waiters {
		switch {
		case l.err != nil || w.target <= synced:
			w.ch <- struct{}{}
		case lead && w.target > l.taken:
			lead = false
			w.ch <- struct{}{}
		default:
			kept = append(kept, w)
		}
	}
	clear(l.waiters[len(kept):])
	l.waiters = kept
}

// spareBatch returns an empty batch, reused if one is spare. l.mu is held.
func (l *Log) spareBatch() *lsm.Batch {
	if n := len(l.spares); n > 0 {
		b := l.spares[n-1]
		l.spares = l.spares[:n-1]
		return b
	}
	return lsm.NewBatch()
}

// spareSet returns an empty set for queued records. l.mu is held.
func (l *Log) spareSet() *recSet {
	if n := len(l.spareRecs); n > 0 {
		r := l.spareRecs[n-1]
		l.spareRecs = l.spareRecs[:n-1]
		return r
	}
	return &recSet{}
}

// reusable reports whether r is small enough to keep: a burst may have
// grown it, and a map never shrinks (clearing one costs its capacity),
// while a large arena or list would stay pinned.
func (r *recSet) reusable() bool {
	return len(r.m) <= maxSpareRecs && cap(r.recs) <= maxSpareList
}

// recycleSet keeps r for reuse if it is reusable. No batch refers to r
// any more, and Read copies what it takes from one under l.mu, so its
// arena may be written again. l.mu is held.
func (l *Log) recycleSet(r *recSet) {
	if r.reusable() && len(l.spareRecs) < maxSpares {
		if c := cap(r.arena); c > maxSpareArena && (c > maxBigArena || l.bigSpareLocked()) {
			r.arena = nil
		}
		if r.indexed {
			clear(r.m)
			r.indexed = false
		}
		clear(r.recs) // no string over an old arena array stays reachable
		r.recs = r.recs[:0]
		r.arena = r.arena[:0]
		l.spareRecs = append(l.spareRecs, r)
	}
}

// bigSpareLocked reports whether a spare set keeps an arena over
// maxSpareArena. l.mu is held.
func (l *Log) bigSpareLocked() bool {
	for _, r := range l.spareRecs {
		if cap(r.arena) > maxSpareArena {
			return true
		}
	}
	return false
}

// Checkpoint commits what is queued, then flushes the engine's memtables
// to tables, fsynced whatever the sync mode (lsm.DB.Flush).
func (l *Log) Checkpoint() error {
	if err := l.Sync(); err != nil {
		return err
	}
	return l.db.Flush()
}

// SyncData returns once every change queued before the call is on stable
// storage whatever the fsync mode: it commits them (Sync) and has the
// engine fsync its log at once (lsm.DB.SyncLog). WAITAOF calls it.
func (l *Log) SyncData() error {
	if err := l.Sync(); err != nil {
		return err
	}
	return l.db.SyncLog()
}

// background commits, every syncInterval, changes that no reply has
// committed (writes that get no reply), until Close.
func (l *Log) background() {
	defer close(l.done)
	t := time.NewTicker(syncInterval)
	defer t.Stop()
	for {
		select {
		case <-l.quit:
			return
		case <-t.C:
			if l.failed.Load() {
				continue
			}
			if l.queued.Load() > l.synced.Load() {
				_ = l.Sync()
			} else if err := l.db.Err(); err != nil && !errors.Is(err, lsm.ErrClosed) {
				// The engine failed with no commit of ours (a background
				// fsync of fsync everysec, a flush): fail now, not at the
				// next write, so reads go on and writes are refused.
				l.mu.Lock()
				if l.err == nil {
					l.failLocked(err)
				}
				l.mu.Unlock()
			}
		}
	}
}

// Close commits what is queued and stops the background pass. It does not
// close the DB.
func (l *Log) Close() error {
	select {
	case <-l.quit:
		return nil
	default:
	}
	close(l.quit)
	<-l.done
	err := l.Sync()
	l.mu.Lock()
	if l.err == nil {
		l.err = ErrClosed
		l.failed.Store(true)
	}
	l.wakeLocked()
	l.mu.Unlock()
	if l.ownsDB {
		err = errors.Join(err, l.db.Close())
	}
	return err
}

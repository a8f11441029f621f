// Package durable puts the LSM engine (internal/lsm) under the store: Log
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
// queue does inside the engine.
//
//	store (shard lock) --Write--> pending batch --Sync--> lsm.Apply --> WAL, memtable
//	                                   |                      |
//	store (miss) --Read--> pending, committing, then the engine
//
// Keys on disk carry a one-byte prefix: 'k' for the store's keys, 's' for
// its state record, so no client key can collide with the state.
package durable

import (
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/minikv/minikv/internal/lsm"
)

const (
	prefixKey   = 'k'
	prefixState = 's'

	// maxPending is the size of queued changes at which Write commits
	// them itself, so writes that get no reply (memcached noreply) cannot
	// grow the queue without bound between two replies.
	maxPending = 8 << 20

	// syncInterval is how often a background pass commits changes no
	// reply has committed yet (noreply writes): they reach the log within
	// this time.
	syncInterval = 5 * time.Millisecond
)

// Log is a store.Disk over an lsm.DB. It is safe for concurrent use.
type Log struct {
	db *lsm.DB

	mu         sync.Mutex           // protects the fields below it
	pending    *lsm.Batch           // changes queued since the last commit began
	pendRecs   map[string]queuedRec // the last queued change of each key in pending
	committing map[string]queuedRec // the changes of the batch being applied
	spare      *lsm.Batch           // an empty batch for the next round
	queued     atomic.Uint64        // changes queued so far; written under mu
	failed     atomic.Bool          // err is set; written under mu
	err        error                // the first commit error; every Sync after reports it

	commitMu sync.Mutex    // one commit at a time
	synced   atomic.Uint64 // changes durable so far (a prefix of queued)

	quit chan struct{}
	done chan struct{}
}

// queuedRec is a change waiting in a batch: the record, or a delete.
type queuedRec struct {
	rec      []byte // nil: deleted
	deadline int64
}

// ErrClosed is returned by Sync after Close.
var ErrClosed = errors.New("durable: log closed")

// New returns a Log over db, which it does not own: Close the Log, then
// the DB.
func New(db *lsm.DB) *Log {
	l := &Log{
		db:       db,
		pending:  lsm.NewBatch(),
		spare:    lsm.NewBatch(),
		pendRecs: map[string]queuedRec{},
		quit:     make(chan struct{}),
		done:     make(chan struct{}),
	}
	go l.background()
	return l
}

// Write queues rec as key's record (nil: a delete), expiring at deadline
// (Unix ns, 0: never). The Log keeps rec, which the caller must not
// change afterwards; it copies key.
func (l *Log) Write(key, rec []byte, deadline int64) {
	l.queue(prefixKey, key, rec, deadline)
}

// WriteState queues the store's state record.
func (l *Log) WriteState(rec []byte) {
	l.queue(prefixState, nil, rec, 0)
}

func (l *Log) queue(prefix byte, key, rec []byte, deadline int64) {
	k := make([]byte, 1+len(key))
	k[0] = prefix
	copy(k[1:], key)
	r := queuedRec{rec: rec, deadline: deadline} // rec is the Log's now
	l.mu.Lock()
	switch {
	case rec == nil:
		l.pending.Delete(k)
	case deadline != 0:
		l.pending.PutExpiring(k, rec, time.Unix(0, deadline))
	default:
		l.pending.Put(k, rec)
	}
	l.pendRecs[string(k)] = r
	l.queued.Add(1)
	big := l.pending.Size() >= maxPending
	l.mu.Unlock()
	if big {
		_ = l.Sync() // the error stays in l.err for the next Sync
	}
}

// Read returns key's record as the last Write left it, or nil.
func (l *Log) Read(key []byte) ([]byte, int64, error) {
	k := make([]byte, 1+len(key))
	k[0] = prefixKey
	copy(k[1:], key)
	return l.read(k)
}

// ReadState returns the state record, or nil.
func (l *Log) ReadState() ([]byte, error) {
	rec, _, err := l.read([]byte{prefixState})
	return rec, err
}

func (l *Log) read(k []byte) ([]byte, int64, error) {
	l.mu.Lock()
	r, ok := l.pendRecs[string(k)]
	if !ok {
		r, ok = l.committing[string(k)]
	}
	l.mu.Unlock()
	if ok {
		if r.rec == nil || r.deadline != 0 && r.deadline <= time.Now().UnixNano() {
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
	var deadline int64
	if !exp.IsZero() {
		deadline = exp.UnixNano()
	}
	return v, deadline, nil
}

// Sync returns once every change queued before the call is in the engine
// (written to its log, and fsynced in SyncAlways mode).
func (l *Log) Sync() error {
	// Every reply in durable mode passes here: with nothing queued it
	// costs two atomic loads, no lock.
	target := l.queued.Load()
	if l.failed.Load() {
		l.mu.Lock()
		err := l.err
		l.mu.Unlock()
		return err
	}
	if l.synced.Load() >= target {
		return nil
	}
	l.commitMu.Lock()
	defer l.commitMu.Unlock()
	if l.synced.Load() >= target {
		return nil
	}
	l.mu.Lock()
	if l.err != nil {
		err := l.err
		l.mu.Unlock()
		return err
	}
	b, n := l.pending, l.queued.Load()
	l.pending, l.spare = l.spare, nil
	l.committing, l.pendRecs = l.pendRecs, make(map[string]queuedRec, len(l.pendRecs))
	l.mu.Unlock()

	err := l.db.Apply(b)

	b.Reset()
	l.mu.Lock()
	l.committing, l.spare = nil, b
	if err != nil && l.err == nil {
		l.err = err
		l.failed.Store(true)
	}
	err = l.err
	l.mu.Unlock()
	if err == nil {
		l.synced.Store(n)
	}
	return err
}

// Checkpoint commits what is queued, then flushes the engine's memtables
// to tables, fsynced whatever the sync mode (lsm.DB.Flush).
func (l *Log) Checkpoint() error {
	if err := l.Sync(); err != nil {
		return err
	}
	return l.db.Flush()
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
			if l.queued.Load() > l.synced.Load() && !l.failed.Load() {
				_ = l.Sync()
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
	l.mu.Unlock()
	return err
}

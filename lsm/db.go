package lsm

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/minikv/minikv/lsm/vfs"
)

// Errors returned by the engine.
var (
	// ErrNotFound is returned by Get for an absent, deleted or expired key.
	ErrNotFound = errors.New("lsm: not found")
	// ErrClosed is returned by operations on a closed DB.
	ErrClosed = errors.New("lsm: closed")
)

// DB is an LSM-tree key-value store. All methods are safe for concurrent
// use.
type DB struct {
	dir   string
	fs    vfs.FS
	opts  Options
	cache *blockCache
	lock  io.Closer // the LOCK file, held while open

	// visibleSeq is the sequence number of the newest write readers may see:
	// every write at or below it is in the memtables or tables of the
	// current read state.
	visibleSeq atomic.Uint64
	rs         atomic.Pointer[readState]
	closing    atomic.Bool

	mu sync.Mutex // protects the fields below, down to the next blank line
	// writers is the commit queue; writers[0] is the leader.
	writers        []*writer
	mem            *memTable
	imm            []*memTable // full memtables awaiting flush, oldest first
	wal            *walFile
	current        *version
	nextFile       uint64
	logNum         uint64
	lastSeq        uint64
	bgErr          error
	closed         bool
	compactPointer [numLevels][]byte
	bgCond         sync.Cond // signalled when a flush or compaction ends
	flushing       bool
	snapshots      snapshotList // live snapshots, oldest first (snapshot.go)

	// manifestMu serializes version changes (logAndApply); it is taken
	// before mu, never after.
	manifestMu  sync.Mutex
	manifest    vfs.File
	manifestNum uint64

	// compactMu serializes compactions (background and manual).
	compactMu sync.Mutex

	walBuf    []byte // used only by the commit leader
	flushCh   chan struct{}
	compactCh chan struct{}
	quit      chan struct{}
	wg        sync.WaitGroup

	m metricsCounters
}

// readState is what a reader needs: the memtables (newest first) and the
// version, pinned together so a flush cannot move data out from under it.
type readState struct {
	mems []*memTable
	v    *version
	refs atomic.Int32
}

func (rs *readState) release() {
	if rs.refs.Add(-1) == 0 {
		rs.v.unref()
	}
}

func (d *DB) acquireReadState() (*readState, error) {
	for {
		rs := d.rs.Load()
		if rs == nil {
			return nil, ErrClosed
		}
		r := rs.refs.Load()
		if r > 0 && rs.refs.CompareAndSwap(r, r+1) {
			return rs, nil
		}
	}
}

// installReadStateLocked publishes the current memtables and version.
func (d *DB) installReadStateLocked() {
	rs := &readState{v: d.current}
	rs.refs.Store(1)
	d.current.ref()
	if d.mem != nil {
		rs.mems = append(rs.mems, d.mem)
	}
	for i := len(d.imm) - 1; i >= 0; i-- {
		rs.mems = append(rs.mems, d.imm[i])
	}
	if old := d.rs.Swap(rs); old != nil {
		old.release()
	}
}

// walFile is an open write-ahead log.
type walFile struct {
	num    uint64
	f      vfs.AppendLog
	mu     sync.Mutex // protects closed, and orders Sync against Close
	closed bool
}

func (w *walFile) sync() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return nil
	}
	return w.f.Sync()
}

func (w *walFile) close(sync bool) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return nil
	}
	w.closed = true
	var err error
	if sync {
		err = w.f.Sync()
	}
	return errors.Join(err, w.f.Close())
}

func (d *DB) path(name string) string { return filepath.Join(d.dir, name) }

func tableName(num uint64) string    { return fmt.Sprintf("%06d.sst", num) }
func walName(num uint64) string      { return fmt.Sprintf("%06d.log", num) }
func manifestName(num uint64) string { return fmt.Sprintf("MANIFEST-%06d", num) }

// Put writes value under key.
func (d *DB) Put(key, value []byte) error {
	b := batchPool.Get().(*Batch)
	b.Reset()
	b.Put(key, value)
	err := d.Apply(b)
	batchPool.Put(b)
	return err
}

// PutExpiring writes value under key; from expireAt on the key reads as
// absent, and compactions discard it.
func (d *DB) PutExpiring(key, value []byte, expireAt time.Time) error {
	b := batchPool.Get().(*Batch)
	b.Reset()
	b.PutExpiring(key, value, expireAt)
	err := d.Apply(b)
	batchPool.Put(b)
	return err
}

// Delete removes key.
func (d *DB) Delete(key []byte) error {
	b := batchPool.Get().(*Batch)
	b.Reset()
	b.Delete(key)
	err := d.Apply(b)
	batchPool.Put(b)
	return err
}

// Get returns the value stored under key, or ErrNotFound. The returned slice
// must not be modified; it stays valid (it may alias the memtable or a cached
// block, which are never rewritten).
func (d *DB) Get(key []byte) ([]byte, error) {
	v, _, err := d.GetEntry(key)
	return v, err
}

// GetEntry is Get that also returns the key's expiry (zero if none).
func (d *DB) GetEntry(key []byte) ([]byte, time.Time, error) {
	rs, err := d.acquireReadState()
	if err != nil {
		return nil, time.Time{}, err
	}
	// The sequence number is read after the read state is pinned: a
	// compaction finished before that may already have dropped versions
	// older than the newest one of a key, so a seq read earlier could
	// fall below every version the pinned tables still hold.
	seq := d.visibleSeq.Load()
	defer rs.release()
	return d.entryAt(rs, key, seq)
}

// entryAt is GetEntry at sequence number seq, in a pinned read state.
func (d *DB) entryAt(rs *readState, key []byte, seq uint64) ([]byte, time.Time, error) {
	k, v, found, err := d.getFrom(rs, key, seq)
	if err != nil || !found {
		if err == nil {
			err = ErrNotFound
		}
		return nil, time.Time{}, err
	}
	switch k {
	case kindSet:
		return v, time.Time{}, nil
	case kindSetExpiring:
		exp := int64(leUint64(v))
		if exp <= time.Now().UnixNano() {
			return nil, time.Time{}, ErrNotFound
		}
		return v[8:], time.Unix(0, exp), nil
	}
	return nil, time.Time{}, ErrNotFound
}

func leUint64(b []byte) uint64 { return binary.LittleEndian.Uint64(b) }

// getFrom finds the newest entry for key at or below seq.
func (d *DB) getFrom(rs *readState, key []byte, seq uint64) (kind, []byte, bool, error) {
	for _, m := range rs.mems {
		if k, v, ok := m.get(key, seq); ok {
			return k, v, true, nil
		}
	}
	h := hash64(key)
	var useful int64
	defer func() {
		if useful > 0 {
			d.m.bloomUseful.Add(useful)
		}
	}()
	for _, f := range rs.v.levels[0] {
		if !f.overlaps(key, key) {
			continue
		}
		k, v, ok, err := f.t.get(key, h, seq, &useful)
		if err != nil || ok {
			return k, v, ok, err
		}
	}
	for level := 1; level < numLevels; level++ {
		files := rs.v.levels[level]
		// Binary search for the first file whose largest key is >= key.
		lo, hi := 0, len(files)
		for lo < hi {
			mid := int(uint(lo+hi) >> 1)
			if compareUser(files[mid].largestUser(), key) < 0 {
				lo = mid + 1
			} else {
				hi = mid
			}
		}
		if lo == len(files) || compareUser(files[lo].smallestUser(), key) > 0 {
			continue
		}
		k, v, ok, err := files[lo].t.get(key, h, seq, &useful)
		if err != nil || ok {
			return k, v, ok, err
		}
	}
	return 0, nil, false, nil
}

// writer is one caller waiting in the commit queue.
type writer struct {
	batch *Batch
	done  bool
	err   error
	cond  sync.Cond
}

// batchPool recycles the one-entry batches of Put, PutExpiring and Delete:
// once Apply returns, the commit pipeline holds no reference to the batch.
var batchPool = sync.Pool{New: func() any { return new(Batch) }}

var writerPool = sync.Pool{New: func() any { return new(writer) }}

// maxGroupBytes caps a commit group so one leader does not hold up its own
// caller for too long.
const maxGroupBytes = 1 << 20

// Apply commits a batch atomically.
//
// Commits queue up; the writer at the head of the queue (the leader) takes
// the whole queue as a group, appends all of it to the WAL with one write(2)
// (and in SyncAlways one fsync), inserts it into the memtable, publishes it
// to readers and wakes the others. This is LevelDB's write path: concurrent
// writers share system calls, and a lone writer pays one lock round-trip.
func (d *DB) Apply(b *Batch) error {
	if b.count == 0 {
		return nil
	}
	w := writerPool.Get().(*writer)
	w.batch, w.done, w.err = b, false, nil
	w.cond.L = &d.mu

	d.mu.Lock()
	d.writers = append(d.writers, w)
	for !w.done && d.writers[0] != w {
		w.cond.Wait()
	}
	var err error
	if w.done {
		err = w.err
	} else {
		err = d.leadLocked()
	}
	d.mu.Unlock()
	w.batch = nil
	writerPool.Put(w)
	return err
}

// leadLocked commits, as the leader, the group that starts at the head of
// the commit queue (whose batch must be set), and hands the lead to the
// next writer. d.mu is held on entry and on return (it is released during
// the WAL write). It returns the group's error.
func (d *DB) leadLocked() error {
	// Gather the group.
	group := 1
	size := len(d.writers[0].batch.data)
	for group < len(d.writers) && d.writers[group].batch != nil &&
		size+len(d.writers[group].batch.data) <= maxGroupBytes {
		size += len(d.writers[group].batch.data)
		group++
	}
	need := 0
	for _, gw := range d.writers[:group] {
		need += memNeed(gw.batch)
	}
	err := d.makeRoomLocked(need)
	var last uint64
	if err == nil {
		seq := d.lastSeq + 1
		buf := d.walBuf[:0]
		for _, gw := range d.writers[:group] {
			gw.batch.setSeq(seq)
			seq += uint64(gw.batch.count)
			buf = appendRecord(buf, gw.batch.data)
		}
		last = seq - 1
		d.lastSeq = last
		mem, wal := d.mem, d.wal
		batches := make([]*Batch, group)
		for i, gw := range d.writers[:group] {
			batches[i] = gw.batch
		}
		d.mu.Unlock()

		_, err = wal.f.Write(buf)
		if err == nil && d.opts.Sync == SyncAlways {
			t0 := time.Now()
			err = wal.f.Sync()
			d.m.walSyncs.Add(1)
			d.m.noteSync(time.Since(t0))
		}
		d.m.commits.Add(int64(group))
		if err == nil {
			for _, gb := range batches {
				if err = insertBatch(mem, gb.data); err != nil {
					break
				}
			}
		}
		d.walBuf = buf
		d.m.walBytes.Add(int64(len(buf)))
		d.m.userBytes.Add(int64(size))

		d.mu.Lock()
		if err != nil {
			err = fmt.Errorf("lsm: write-ahead log: %w", err)
			if d.bgErr == nil {
				d.bgErr = err
			}
		} else {
			d.visibleSeq.Store(last)
		}
	}
	for i, gw := range d.writers[:group] {
		gw.err = err
		gw.done = true
		if i > 0 {
			gw.cond.Signal()
		}
	}
	clear(d.writers[:group])
	d.writers = d.writers[group:]
	if len(d.writers) > 0 {
		d.writers[0].cond.Signal()
	} else if d.closed {
		d.bgCond.Broadcast() // Close waits for the queue to drain
	}
	return err
}

// memNeed bounds the arena bytes a batch takes in a memtable.
func memNeed(b *Batch) int {
	return len(b.data) + int(b.count)*(nodeHeader+4*maxHeight+trailerLen+memAlign)
}

func insertBatch(m *memTable, data []byte) error {
	it, err := newBatchIter(data)
	if err != nil {
		return err
	}
	for {
		k, key, value, seq, ok, err := it.next()
		if err != nil {
			return err
		}
		if !ok {
			return nil
		}
		if err := m.add(key, seq, k, value); err != nil {
			return err
		}
	}
}

// makeRoomLocked makes sure the memtable can take need more bytes: it
// rotates a full memtable to the flush queue, and stalls writers while too
// many memtables wait for flushing or L0 has too many files — back-pressure
// instead of unbounded growth.
func (d *DB) makeRoomLocked(need int) error {
	stalled := time.Time{}
	defer func() {
		if !stalled.IsZero() {
			d.m.stallNanos.Add(int64(time.Since(stalled)))
		}
	}()
	for {
		switch {
		case d.bgErr != nil:
			return d.bgErr
		case d.closed:
			return ErrClosed
		case d.mem.size()+need <= len(d.mem.arena) && (d.wal == nil || d.wal.f.Room() >= int64(need)):
			return nil
		case len(d.imm) >= d.opts.MaxImmutableMemTables,
			!d.opts.DisableAutoCompaction && d.current.l0Depth >= d.opts.L0StopWrites:
			if stalled.IsZero() {
				stalled = time.Now()
				d.m.stalls.Add(1)
			}
			d.bgCond.Wait()
			continue
		}
		if err := d.rotateMemLocked(need); err != nil {
			return err
		}
	}
}

// createWAL creates log num, mapped when Options.MappedWAL asks for it and
// the filesystem can, with room for at least need bytes.
func (d *DB) createWAL(num uint64, need int) (vfs.AppendLog, error) {
	name := d.path(walName(num))
	var f vfs.AppendLog
	var err error
	if m, ok := d.fs.(vfs.LogMapper); ok && d.opts.MappedWAL {
		// A log holds about as many bytes as its memtable's arena; reserve
		// twice that, and rotate early if a commit would not fit.
		f, err = m.MapLog(name, int64(max(2*d.opts.MemTableSize, 2*need)+1<<20))
	}
	if f == nil {
		var file vfs.File
		if file, err = d.fs.Create(name); err == nil {
			f = vfs.FileLog{File: file}
		}
	}
	if err != nil {
		return nil, fmt.Errorf("lsm: create WAL: %w", err)
	}
	if d.opts.Sync == SyncAlways {
		// The new log's size and directory entry must be durable before
		// any write acknowledged from it.
		err = f.Sync()
		if err == nil {
			err = d.fs.SyncDir(d.dir)
		}
		if err != nil {
			_ = f.Close()
			return nil, fmt.Errorf("lsm: sync new WAL: %w", err)
		}
	}
	return f, nil
}

// rotateMemLocked starts a new WAL and memtable and queues the old memtable
// for flushing.
func (d *DB) rotateMemLocked(need int) error {
	num := d.nextFile
	d.nextFile++
	f, err := d.createWAL(num, need)
	if err != nil {
		return err
	}
	old := d.mem
	oldWAL := d.wal
	d.wal = &walFile{num: num, f: f}
	d.mem = newMemTable(max(d.opts.MemTableSize, need+4096), num)
	if old.empty() {
		// Nothing to flush: the old WAL holds no writes.
		if oldWAL != nil {
			_ = oldWAL.close(false)
			_ = d.fs.Remove(d.path(walName(oldWAL.num)))
		}
	} else {
		old.wal = oldWAL
		d.imm = append(d.imm, old)
		select {
		case d.flushCh <- struct{}{}:
		default:
		}
	}
	d.installReadStateLocked()
	return nil
}

package lsm

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"runtime"
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
	// ErrBatchTooLarge is returned by Apply and Commit.Wait for a batch
	// whose encoding exceeds MaxBatchSize; nothing of it is written, and
	// the DB takes writes as before.
	ErrBatchTooLarge = errors.New("lsm: batch too large")
)

// MaxBatchSize is the largest encoded batch (Batch.Size) one Apply
// takes: a log record's length word keeps its high bit for the format.
const MaxBatchSize = maxRecordPayload

// batchLimit is MaxBatchSize, lowered by tests.
var batchLimit = MaxBatchSize

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
	writers  []*writer
	mem      *memTable
	imm      []*memTable // full memtables awaiting flush, oldest first
	wal      *walFile
	current  *version
	nextFile uint64
	logNum   uint64
	lastSeq  uint64
	// bgErr is the error that failed the DB (failLocked): while it is
	// set, writes are refused and Resume is the way back. manifestBad
	// says the error came from a manifest write, so the manifest's tail
	// is suspect and Resume writes a fresh one instead of appending;
	// orphans are the tables such a failed edit added, which the suspect
	// manifest may name and which are removed only once a fresh manifest
	// is in place. A DB that Open left failed (OpenFailedOnWriteError)
	// has manifestBad set (it has no manifest open for appending), the
	// tables no manifest needs among orphans, and in recoveredLogs the
	// logs recovery read, which Resume removes once its fresh manifest
	// makes them obsolete.
	bgErr         error
	manifestBad   bool
	orphans       []uint64
	recoveredLogs []uint64
	closed        bool
	// committing is set while the commit leader works with d.mu released
	// between makeRoomLocked and handing the queue on; resuming while a
	// Resume waits for that, and for d.syncing, to end.
	committing     bool
	resuming       bool
	compactPointer [numLevels][]byte
	bgCond         sync.Cond // signalled when a flush or compaction ends
	flushing       bool
	flushMem       *memTable    // the memtable flushOne is writing, until its log is gone
	snapshots      snapshotList // live snapshots, oldest first (snapshot.go)

	// manifestMu serializes version changes (logAndApply); it is taken
	// before mu, never after.
	manifestMu  sync.Mutex
	manifest    vfs.File
	manifestNum uint64

	// compactMu serializes compactions (background and manual).
	compactMu sync.Mutex

	// flushMu serializes the writing of memtables to tables: flushOne and
	// Resume. resumeMu serializes Resume, and Resume with Close. The
	// order is resumeMu, flushMu, manifestMu, mu.
	flushMu  sync.Mutex
	resumeMu sync.Mutex

	// syncing holds the SyncAlways groups whose fsync is in flight, in
	// commit order (leadLocked); pipeErr is the first fsync error among
	// them, which fails every group acknowledged after it.
	syncing  []*syncGroup
	pipeErr  error
	syncCond sync.Cond // signalled when groups leave syncing

	// recycle says this DB reuses obsolete logs (Options.RecycleWAL);
	// recycLogs that it writes its logs in the recyclable format (with
	// RecycleWAL or MappedWAL); walRecyclable that the logs recovery
	// replays are (the manifest's recyclableLogs). spares are the numbers
	// of logs ready for reuse: obsolete logs, and logs preallocated in the
	// background (spareLoop); under mu.
	recycle       bool
	recycLogs     bool
	walRecyclable bool
	spares        []uint64
	spareCh       chan struct{}

	walBuf     []byte    // used only by the commit leader
	groupBuf   []*writer // used only by the commit leader
	concurrent bool      // the last group had company: more than one writer, or others queued behind it
	flushCh    chan struct{}
	compactCh  chan struct{}
	quit       chan struct{}
	wg         sync.WaitGroup

	m metricsCounters
}

// readState is what a reader needs: the memtables (newest first) and the
// version, pinned together so a flush cannot move data out from under it.
type readState struct {
	mems []*memTable
	v    *version
	refs atomic.Int32
}

// capSeq lowers a reader's sequence number seq to the read limit of the
// memtables of rs (memTable.readLimit): a read state pinned before a
// Resume may hold writes that failed, above the limit, and everything it
// holds that was acknowledged is at or below it, the tables' included.
// Readers that load seq after a Resume's later commits so still never see
// a failed write.
func (rs *readState) capSeq(seq uint64) uint64 {
	for _, m := range rs.mems {
		seq = min(seq, m.readLimit())
	}
	return seq
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
	num  uint64
	f    vfs.AppendLog
	fs   vfs.FS
	path string
	// recyclable: the log is written in the recyclable record format,
	// whose records carry the offset up to which the log is durable.
	// off is the end of the records handed to write(2) (the commit
	// leader's, under DB.mu); wrote the end of those write(2) returned;
	// synced the end of those an fsync returned for (noteSynced).
	recyclable bool
	off        int64
	wrote      atomic.Int64
	synced     atomic.Int64
	mu         sync.Mutex // protects the fields below, and orders Sync against Close
	// closed is set by close; handles are idle sync handles (syncHandle).
	closed  bool
	handles []vfs.File
}

func (w *walFile) sync() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return nil
	}
	end := w.wrote.Load()
	err := w.f.Sync()
	if err == nil {
		w.noteSynced(end)
	}
	return err
}

// noteSynced records that the log is durable up to end.
func (w *walFile) noteSynced(end int64) {
	for {
		s := w.synced.Load()
		if end <= s || w.synced.CompareAndSwap(s, end) {
			return
		}
	}
}

// pipelinable reports whether commits to w may fsync while the next group
// is written: w is a write(2) log (Options.PipelinedSync, DB.leadLocked).
func (w *walFile) pipelinable() bool {
	_, ok := w.f.(vfs.FileLog)
	return ok && w.fs != nil
}

// syncHandle returns a handle on w's file for one fsync: a file opened
// anew, so its own open file description. Linux reports a failed
// write-back once per open file description (errseq), so two fsyncs in
// flight through one descriptor could hand the error of the first group's
// pages to the second call only, and the first would return success.
// With a handle per fsync in flight, every fsync sees every write-back
// error since that handle's previous fsync. Handles are reused
// (releaseHandle) and closed with the log.
func (w *walFile) syncHandle() (vfs.File, error) {
	w.mu.Lock()
	if n := len(w.handles); n > 0 {
		h := w.handles[n-1]
		w.handles = w.handles[:n-1]
		w.mu.Unlock()
		return h, nil
	}
	w.mu.Unlock()
	return w.fs.Open(w.path)
}

func (w *walFile) releaseHandle(h vfs.File) {
	w.mu.Lock()
	if !w.closed {
		w.handles = append(w.handles, h)
		h = nil
	}
	w.mu.Unlock()
	if h != nil {
		_ = h.Close()
	}
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
	for _, h := range w.handles {
		_ = h.Close()
	}
	w.handles = nil
	return errors.Join(err, w.f.Close())
}

func (d *DB) newWALFile(num uint64, f vfs.AppendLog) *walFile {
	return &walFile{num: num, f: f, fs: d.fs, path: d.path(walName(num)), recyclable: d.recycLogs}
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
		if expiryPassed(exp, time.Now().UnixNano()) {
			return nil, time.Time{}, ErrNotFound
		}
		return v[8:], decodeExpiry(exp), nil
	}
	return nil, time.Time{}, ErrNotFound
}

func leUint64(b []byte) uint64 { return binary.LittleEndian.Uint64(b) }

// getFrom finds the newest entry for key at or below seq.
func (d *DB) getFrom(rs *readState, key []byte, seq uint64) (kind, []byte, bool, error) {
	seq = rs.capSeq(seq)
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
	taken bool // a leader took it into its group
	done  bool // committed, with err
	err   error
	cond  sync.Cond
}

// syncGroup is a commit group of SyncAlways whose records are in the log
// and the memtable and whose fsync is in flight (DB.syncing).
type syncGroup struct {
	writers []*writer
	last    uint64 // the group's last sequence number
	synced  bool   // its fsync returned
	err     error  // with this error
}

// batchPool recycles the one-entry batches of Put, PutExpiring and Delete:
// once Apply returns, the commit pipeline holds no reference to the batch.
var batchPool = sync.Pool{New: func() any { return new(Batch) }}

var writerPool = sync.Pool{New: func() any { return new(writer) }}

var syncGroupPool = sync.Pool{New: func() any { return new(syncGroup) }}

// maxSyncing bounds the pipelined fsyncs in flight (leadLocked).
const maxSyncing = 2

// maxGroupBytes caps a commit group so one leader does not hold up its own
// caller for too long.
const maxGroupBytes = 1 << 20

// Apply commits a batch atomically.
//
// Commits queue up; the writer at the head of the queue (the leader) takes
// the whole queue as a group, appends all of it to the WAL with one write(2),
// inserts it into the memtable, publishes it to readers and wakes the
// others. This is LevelDB's write path: concurrent writers share system
// calls, and a lone writer pays one lock round-trip.
//
// In SyncAlways the group is also fsynced before anyone is acknowledged.
// With Options.PipelinedSync the fsyncs overlap: once its group is written
// and inserted, the leader hands the head of the queue to the next writer
// and only then fsyncs, so the next group's write(2) and fsync run while
// this one's fsync is in flight (maxSyncing at most). Groups are
// acknowledged strictly in order: a group returns when its own fsync and
// every earlier group's have succeeded, and becomes visible to readers
// only then. A failed fsync fails its group and every group after it, and
// the DB refuses writes until Resume (see Err).
func (d *DB) Apply(b *Batch) error {
	if b.count == 0 {
		return nil
	}
	if len(b.data) > batchLimit {
		return ErrBatchTooLarge
	}
	w := d.newWriter(b)
	d.mu.Lock()
	d.writers = append(d.writers, w)
	err := d.commitLocked(w)
	d.mu.Unlock()
	w.batch = nil
	writerPool.Put(w)
	return err
}

func (d *DB) newWriter(b *Batch) *writer {
	w := writerPool.Get().(*writer)
	w.batch, w.taken, w.done, w.err = b, false, false, nil
	w.cond.L = &d.mu
	return w
}

// Commit is a batch in the commit queue, from Enqueue.
type Commit struct {
	d   *DB
	w   *writer
	err error // refused before it was queued (ErrBatchTooLarge)
}

// Enqueue queues b for commit and returns at once; Wait commits it and
// returns what Apply would. Batches commit in the order they are queued,
// so a caller that enqueues under its own lock orders its commits without
// holding that lock while they run. Wait must be called exactly once, and
// b must not be changed until it returns.
func (d *DB) Enqueue(b *Batch) Commit {
	if b.count == 0 {
		return Commit{}
	}
	if len(b.data) > batchLimit {
		return Commit{err: ErrBatchTooLarge}
	}
	w := d.newWriter(b)
	d.mu.Lock()
	d.writers = append(d.writers, w)
	d.mu.Unlock()
	return Commit{d: d, w: w}
}

// Wait commits the batch (see Apply) and returns its error.
func (c Commit) Wait() error {
	if c.w == nil {
		return c.err
	}
	d, w := c.d, c.w
	d.mu.Lock()
	err := d.commitLocked(w)
	d.mu.Unlock()
	w.batch = nil
	writerPool.Put(w)
	return err
}

// commitLocked waits until the batch of w, queued in d.writers, is
// committed, leading the commit if w reaches the head of the queue first,
// and returns its error. d.mu is held.
func (d *DB) commitLocked(w *writer) error {
	for !w.taken && d.writers[0] != w {
		w.cond.Wait()
	}
	if !w.taken {
		if d.concurrent {
			// Other writers were seen lately: let the ones the scheduler
			// has ready join this group before it is taken, so they share
			// its write(2) instead of each paying one. A lone writer never
			// yields.
			d.mu.Unlock()
			runtime.Gosched()
			d.mu.Lock()
		}
		d.leadLocked()
	}
	for !w.done {
		w.cond.Wait()
	}
	return w.err
}

// leadLocked commits, as the leader, the group that starts at the head of
// the commit queue (whose batch must be set), and hands the head of the
// queue to the next writer. d.mu is held on entry and on return (it is
// released during the WAL write and the fsync). The group's writers,
// the leader's included, are done (with their error) on return, or, in
// SyncAlways, once the groups before theirs are (advanceLocked).
func (d *DB) leadLocked() {
	// With maxSyncing fsyncs in flight, wait for one to return: the group
	// grows meanwhile, and a disk that is the bottleneck gets fewer,
	// larger fsyncs instead of one per writer.
	for len(d.syncing) >= maxSyncing {
		d.syncCond.Wait()
	}
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
		gw.taken = true
		need += memNeed(gw.batch)
	}
	if err := d.makeRoomLocked(need); err != nil {
		finishLocked(d.writers[:group], err)
		d.popLocked(group)
		return
	}
	// From here to the hand-over the group is in flight: a Resume waits
	// for it (endCommitLocked) before it touches the log or memtable.
	d.committing = true
	d.concurrent = group > 1 || len(d.writers) > group
	// ws is the leader's copy of the group: d.writers may grow (and move)
	// while the lock is released.
	ws := append(d.groupBuf[:0], d.writers[:group]...)
	d.groupBuf = ws
	seq := d.lastSeq + 1
	buf := d.walBuf[:0]
	wal := d.wal
	synced := wal.synced.Load()
	for _, gw := range ws {
		gw.batch.setSeq(seq)
		seq += uint64(gw.batch.count)
		if wal.recyclable {
			buf = appendLogRecord(buf, gw.batch.data, wal.num, synced)
		} else {
			buf = appendRecord(buf, gw.batch.data)
		}
	}
	last := seq - 1
	d.lastSeq = last
	wal.off += int64(len(buf))
	end := wal.off
	mem := d.mem
	pipelined := d.PipelinedSync() && wal.pipelinable()
	d.mu.Unlock()

	_, err := wal.f.Write(buf)
	if err == nil {
		wal.wrote.Store(end)
	}
	if err == nil && d.opts.Sync == SyncAlways && !pipelined {
		err = d.syncLog(wal.f)
		if err == nil {
			wal.noteSynced(end)
		}
	}
	d.m.commits.Add(int64(group))
	if err == nil {
		for _, gw := range ws {
			if err = insertBatch(mem, gw.batch.data); err != nil {
				break
			}
		}
	}
	d.walBuf = buf
	d.m.walBytes.Add(int64(len(buf)))
	d.m.userBytes.Add(int64(size))

	d.mu.Lock()
	if err != nil {
		// The group is not acknowledged; its sequence numbers are spent
		// (d.lastSeq stays past them) and whatever of it reached the log
		// or the memtable is never made visible (Resume).
		err = fmt.Errorf("lsm: write-ahead log: %w", err)
		d.failLocked(err)
	}
	if err != nil || !pipelined {
		if err == nil {
			d.visibleSeq.Store(last)
		}
		finishLocked(ws, err)
		d.endCommitLocked()
		d.popLocked(group)
		return
	}

	// The group is in the log and the memtable, invisible to readers until
	// it is acknowledged. Let the next group be written while this one
	// syncs.
	g := syncGroupPool.Get().(*syncGroup)
	g.writers = append(g.writers[:0], ws...)
	g.last = last
	if invariantsOn {
		prev := d.visibleSeq.Load()
		if n := len(d.syncing); n > 0 {
			prev = d.syncing[n-1].last
		}
		if last <= prev {
			panic(fmt.Sprintf("lsm: invariant broken: group ending at %d queued for fsync after %d", last, prev))
		}
	}
	d.syncing = append(d.syncing, g)
	d.endCommitLocked() // d.syncing holds it from here
	d.popLocked(group)
	d.mu.Unlock()

	err = d.syncPipelined(wal)
	if err == nil {
		wal.noteSynced(end)
	}

	d.mu.Lock()
	if err != nil {
		err = fmt.Errorf("lsm: write-ahead log: %w", err)
		if d.pipeErr == nil {
			d.pipeErr = err
		}
		d.failLocked(err)
	}
	g.synced, g.err = true, err
	d.advanceLocked()
}

// endCommitLocked marks the end of the commit leader's work outside d.mu
// (d.committing) and wakes a Resume waiting for it. d.mu is held.
func (d *DB) endCommitLocked() {
	d.committing = false
	if d.resuming {
		d.bgCond.Broadcast()
	}
}

// failLocked fails the DB with err, unless it has failed already: writes
// are refused with the first error until Resume succeeds. d.mu is held.
func (d *DB) failLocked(err error) {
	if d.bgErr == nil {
		d.bgErr = err
		d.m.backgroundErrors.Add(1)
	}
	d.bgCond.Broadcast()
}

// PipelinedSync reports whether commits overlap their fsyncs
// (Options.PipelinedSync in SyncAlways).
func (d *DB) PipelinedSync() bool { return d.opts.PipelinedSync && d.opts.Sync == SyncAlways }

// syncLog fsyncs the log f, counting it in the metrics.
func (d *DB) syncLog(f interface{ Sync() error }) error {
	t0 := time.Now()
	err := f.Sync()
	d.m.walSyncs.Add(1)
	d.m.noteSync(time.Since(t0))
	return err
}

// syncPipelined fsyncs wal for a pipelined group, through a handle of its
// own (walFile.syncHandle).
func (d *DB) syncPipelined(wal *walFile) error {
	h, err := wal.syncHandle()
	if err != nil {
		return err
	}
	err = d.syncLog(h)
	wal.releaseHandle(h)
	return err
}

// advanceLocked acknowledges, in order, the groups at the front of
// d.syncing whose fsync has returned: each with its own error, or the
// first fsync error of the pipeline if there was one, so that no group is
// acknowledged after one before it failed. d.mu is held.
func (d *DB) advanceLocked() {
	for len(d.syncing) > 0 && d.syncing[0].synced {
		g := d.syncing[0]
		d.syncing[0] = nil
		d.syncing = d.syncing[1:]
		err := g.err
		if err == nil {
			err = d.pipeErr
		}
		if err == nil {
			if invariantsOn && g.last <= d.visibleSeq.Load() {
				panic(fmt.Sprintf("lsm: invariant broken: group ending at %d acknowledged after %d", g.last, d.visibleSeq.Load()))
			}
			d.visibleSeq.Store(g.last)
		}
		finishLocked(g.writers, err)
		clear(g.writers)
		g.writers, g.synced, g.err = g.writers[:0], false, nil
		syncGroupPool.Put(g)
	}
	d.syncCond.Broadcast() // leadLocked and drainSyncsLocked wait for this
	if len(d.syncing) == 0 {
		d.bgCond.Broadcast() // Close waits for this
	}
}

// drainSyncsLocked waits until no pipelined fsync is in flight, so every
// write in the log and the memtable is acknowledged (or failed). d.mu is
// held.
func (d *DB) drainSyncsLocked() {
	for len(d.syncing) > 0 {
		d.syncCond.Wait()
	}
}

// finishLocked marks the writers done with err and wakes them. d.mu is
// held.
func finishLocked(ws []*writer, err error) {
	for _, w := range ws {
		w.err = err
		w.done = true
		w.cond.Signal()
	}
}

// popLocked removes the first n writers from the commit queue and wakes
// the next head. d.mu is held.
func (d *DB) popLocked(n int) {
	clear(d.writers[:n])
	if n == len(d.writers) {
		d.writers = d.writers[:0] // reuse the array: no allocation per commit
	} else {
		d.writers = d.writers[n:]
	}
	if len(d.writers) > 0 {
		d.writers[0].cond.Signal()
	} else {
		d.bgCond.Broadcast() // Close waits for the queue to drain
	}
}

// memNeed bounds the arena bytes a batch takes in a memtable, and the log
// bytes of its record.
func memNeed(b *Batch) int {
	return len(b.data) + int(b.count)*(nodeHeader+trailerLen+memAlign) + recycHeaderLen
}

func insertBatch(m *memTable, data []byte) error {
	it, err := newBatchIter(data)
	if err != nil {
		return err
	}
	// One entry (the engine's own Put) has no misses to overlap.
	if it.count == 1 {
		k, key, value, seq, _, err := it.next()
		if err == nil {
			err = m.add(key, seq, k, value)
		}
		if err == nil {
			_, _, _, _, _, err = it.next() // the end, or trailing bytes
		}
		return err
	}
	// The entries go in insertAhead at a time: first every entry's index
	// slot is prefetched, then the entry an occupied slot points to (the
	// key's newest version, which an overwrite compares and links), and
	// only then are they added. The cache misses of a group overlap
	// instead of being paid one after the other (docs/durability.md, "A
	// batch's memtable misses overlapped").
	group := &m.pending
	for {
		n := 0
		for n < insertAhead {
			e := &group[n]
			var ok bool
			e.k, e.key, e.value, e.seq, ok, err = it.next()
			if err != nil {
				return err
			}
			if !ok {
				break
			}
			n++
		}
		if n == 0 {
			return nil
		}
		m.prefetch(group[:n])
		for i := range group[:n] {
			e := &group[i]
			if err := m.addHashed(e.h, e.key, e.seq, e.k, e.value); err != nil {
				return err
			}
		}
		if n < insertAhead {
			return nil
		}
	}
}

// insertAhead is how many of a batch's entries insertBatch prefetches
// before adding them.
const insertAhead = 16

// pendingEntry is an entry of a batch on its way into the memtable.
type pendingEntry struct {
	k          kind
	key, value []byte
	seq        uint64
	h          uint32
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
		case len(d.syncing) > 0:
			// A memtable leaves for its flush holding only acknowledged
			// writes: a table never holds a write readers cannot see yet.
			d.syncCond.Wait()
			continue
		}
		if err := d.rotateMemLocked(need); err != nil {
			return err
		}
	}
}

// createWAL creates log num, mapped when Options.MappedWAL asks for it and
// the filesystem can, with room for at least need bytes; with recycling, it
// reuses a spare log (renamed to num) when one is ready. d.mu is held, or
// the DB is being opened.
func (d *DB) createWAL(num uint64, need int) (vfs.AppendLog, error) {
	name := d.path(walName(num))
	var f vfs.AppendLog
	var err error
	if n := len(d.spares); n > 0 {
		spare := d.spares[n-1]
		d.spares = d.spares[:n-1]
		select {
		case d.spareCh <- struct{}{}:
		default:
		}
		file, rerr := d.fs.(vfs.Reuser).ReuseForWrite(d.path(walName(spare)), name)
		if rerr == nil {
			f = vfs.FileLog{File: file}
			d.m.logsRecycled.Add(1)
		} else {
			_ = d.fs.Remove(d.path(walName(spare)))
		}
	}
	if f != nil {
		// A spare log: fall through to the syncs below.
	} else if m, ok := d.fs.(vfs.LogMapper); ok && d.opts.MappedWAL {
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
		// No write can go on without a new log: fail the DB, so that the
		// layer above sees it (Err) and Resume, which starts a log of its
		// own, brings it back. The old log and memtable stay as they
		// were; a log file half made is removed.
		_ = d.fs.Remove(d.path(walName(num)))
		d.failLocked(err)
		return err
	}
	old := d.mem
	oldWAL := d.wal
	d.wal = d.newWALFile(num, f)
	d.mem = newMemTable(max(d.opts.MemTableSize, need+4096), num)
	if old.empty() {
		// Nothing to flush: the old WAL holds no writes.
		if oldWAL != nil {
			_ = oldWAL.close(false)
			d.retireLogLocked(oldWAL)
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

// retireLogLocked deletes an obsolete log, or keeps it as a spare for
// reuse (Options.RecycleWAL): its records are recyclable, so what a later
// use leaves of them past its own records is never replayed. w is closed;
// d.mu is held.
func (d *DB) retireLogLocked(w *walFile) {
	if !d.keepSpareLocked(w) {
		_ = d.fs.Remove(w.path)
	}
}

// keepSpareLocked keeps the closed, obsolete log w as a spare for reuse if
// it can be one, and reports whether it did; if not, the caller removes
// it (after releasing d.mu, when it can: a slow remove must not hold up
// every reader of d's state). d.mu is held.
func (d *DB) keepSpareLocked(w *walFile) bool {
	if _, ok := w.f.(vfs.FileLog); ok && w.recyclable && !d.closed && len(d.spares) < d.opts.RecycleWAL {
		d.spares = append(d.spares, w.num)
		return true
	}
	return false
}

// spareLoop prepares a spare log in the background whenever none is
// ready, so that a rotation never creates a log that grows as it is
// written: the first logs of a DB have no obsolete log to reuse, so it
// writes a new one full of zeros and syncs it (off the commit path), and
// appends to it then overwrite allocated blocks, as to a recycled log.
func (d *DB) spareLoop() {
	defer d.wg.Done()
	for {
		select {
		case <-d.quit:
			return
		case <-d.spareCh:
		}
		d.mu.Lock()
		if len(d.spares) > 0 || d.closed || d.bgErr != nil {
			d.mu.Unlock()
			continue
		}
		num := d.nextFile
		d.nextFile++
		d.mu.Unlock()
		path := d.path(walName(num))
		if err := d.zeroFill(path, d.spareSize()); err != nil {
			_ = d.fs.Remove(path)
			continue
		}
		d.mu.Lock()
		if d.closed {
			_ = d.fs.Remove(path)
		} else {
			d.spares = append(d.spares, num)
			d.m.logsPreallocated.Add(1)
		}
		d.mu.Unlock()
	}
}

// spareSize is the size of a preallocated log: a memtable's log is
// shorter than its arena but for large values, where the two are close.
// A log that outgrows it appends past its end, as an unrecycled one does.
func (d *DB) spareSize() int64 { return int64(d.opts.MemTableSize) * 5 / 4 }

// zeroFill writes a file of size zero bytes and syncs it.
func (d *DB) zeroFill(path string, size int64) error {
	f, err := d.fs.Create(path)
	if err != nil {
		return err
	}
	zeros := make([]byte, 256<<10)
	for left := size; left > 0 && err == nil; left -= int64(len(zeros)) {
		if d.closing.Load() {
			err = ErrClosed
			break
		}
		_, err = f.Write(zeros[:min(left, int64(len(zeros)))])
	}
	if err == nil {
		err = f.Sync()
	}
	return errors.Join(err, f.Close())
}

package lsm

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/minikv/minikv/lsm/vfs"
)

// fault is one injection point: from the nth operation op on a file of
// kind on (".log", ".sst", "MANIFEST-", "CURRENT", or "dir" for the
// directory's SyncDir), every such operation fails with vfs.ErrInjected,
// as on a disk that stays full, until the test clears the injector.
type fault struct {
	op   vfs.Op
	kind string
	n    int
}

var opNames = map[vfs.Op]string{
	vfs.OpCreate: "create", vfs.OpOpen: "open", vfs.OpRead: "read", vfs.OpWrite: "write",
	vfs.OpSync: "sync", vfs.OpRemove: "remove", vfs.OpRename: "rename", vfs.OpSyncDir: "syncdir",
}

func (f fault) String() string { return fmt.Sprintf("%s-%s-%d", opNames[f.op], f.kind, f.n) }

func (f fault) matches(op vfs.Op, name string) bool {
	if op != f.op {
		return false
	}
	base := filepath.Base(name)
	switch f.kind {
	case ".log", ".sst":
		return strings.HasSuffix(base, f.kind)
	case "dir":
		return op == vfs.OpSyncDir
	}
	return strings.HasPrefix(base, f.kind)
}

// arm installs f on fs.
func (f fault) arm(fs *vfs.MemFS) {
	var seen atomic.Int64
	fs.SetInjector(func(op vfs.Op, name string) error {
		if f.matches(op, name) && seen.Add(1) >= int64(f.n) {
			return vfs.ErrInjected
		}
		return nil
	})
}

// faultModel is what a test knows of the DB: each key's last
// acknowledged value, and the values of the writes that failed since
// (which a crash before a Resume may or may not bring back).
type faultModel struct {
	mu     sync.Mutex
	acked  map[string]string
	failed map[string][]string
}

func newFaultModel() *faultModel {
	return &faultModel{acked: map[string]string{}, failed: map[string][]string{}}
}

func (m *faultModel) put(db *DB, k, v string) error {
	err := db.Put([]byte(k), []byte(v))
	m.mu.Lock()
	defer m.mu.Unlock()
	if err == nil {
		m.acked[k] = v
		delete(m.failed, k)
	} else {
		m.failed[k] = append(m.failed[k], v)
	}
	return err
}

func (m *faultModel) keys() []string {
	var ks []string
	for k := range m.acked {
		ks = append(ks, k)
	}
	for k := range m.failed {
		if _, ok := m.acked[k]; !ok {
			ks = append(ks, k)
		}
	}
	slices.Sort(ks)
	return ks
}

// check reads every key the model knows: each must hold its acknowledged
// value (or be absent if it has none); with maybeFailed, the value of a
// write that failed since is accepted too.
func (m *faultModel) check(t *testing.T, what string, db *DB, maybeFailed bool) {
	t.Helper()
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, k := range m.keys() {
		v, err := db.Get([]byte(k))
		want, acked := m.acked[k]
		switch {
		case err == nil && acked && string(v) == want:
		case errors.Is(err, ErrNotFound) && !acked:
		case err == nil && maybeFailed && slices.Contains(m.failed[k], string(v)):
		default:
			t.Fatalf("%s: Get(%s) = %q, %v; want %q (acknowledged: %v; failed writes: %q)",
				what, k, v, err, want, acked, m.failed[k])
		}
	}
}

// checkReopen opens the crash image fs and checks it against m.
func (m *faultModel) checkReopen(t *testing.T, what string, fs *vfs.MemFS, o Options, maybeFailed bool) {
	t.Helper()
	o.FS = fs
	db, err := Open("/db", o)
	if err != nil {
		t.Fatalf("%s: Open: %v", what, err)
	}
	m.check(t, what, db, maybeFailed)
	if err := db.Close(); err != nil {
		t.Fatalf("%s: Close: %v", what, err)
	}
}

// quiesce waits for a flush and a compaction that may be running to end:
// one that hit the fault before the injector was cleared reports it
// (fails the DB) before quiesce returns.
func quiesce(db *DB) {
	db.flushMu.Lock()
	db.flushMu.Unlock() //nolint:staticcheck // an empty critical section: a barrier
	db.compactMu.Lock()
	db.compactMu.Unlock() //nolint:staticcheck
}

type faultMode struct {
	name      string
	sync      SyncMode
	pipelined bool
	recycle   int // Options.RecycleWAL
}

var faultModes = []faultMode{
	{"always", SyncAlways, false, 0},
	{"pipelined", SyncAlways, true, 0},
	{"everysec", SyncEverySecond, false, 0},
}

// faultOptions keeps memtables and tables tiny, so that a few hundred
// writes rotate logs, flush and compact several times.
func faultOptions(mode faultMode) Options {
	return Options{
		Sync: mode.sync, PipelinedSync: mode.pipelined, RecycleWAL: mode.recycle,
		MemTableSize: 8 << 10, L0CompactionTrigger: 2, TargetFileSize: 8 << 10, LBaseMaxBytes: 32 << 10,
		syncPeriod: time.Hour, compactRetry: time.Millisecond,
	}
}

// faultWorkload runs writers goroutines, each writing its own keys (a few
// dozen, overwritten) until it has made count writes or one fails. In
// SyncEverySecond the first writer runs the background fsync now and then
// (the test's syncPeriod keeps the real one out of the way). It returns
// the number of writes that failed.
func faultWorkload(t *testing.T, db *DB, m *faultModel, mode faultMode, tag string, count int) int {
	t.Helper()
	const writers = 3
	var failed atomic.Int64
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range count {
				if mode.sync == SyncEverySecond && w == 0 && i%16 == 15 {
					db.syncWAL()
				}
				k := fmt.Sprintf("%s-w%d-k%02d", tag, w, i%40)
				v := fmt.Sprintf("%s-w%d-v%d-%s", tag, w, i, strings.Repeat("x", i%50))
				if err := m.put(db, k, v); err != nil {
					if !errors.Is(err, vfs.ErrInjected) {
						t.Errorf("Put %s: %v, want the injected error", k, err)
					}
					failed.Add(1)
					return
				}
			}
		}()
	}
	wg.Wait()
	return int(failed.Load())
}

// TestResumeFaultMatrix injects, one point at a time, a persistent error
// into each operation the engine performs on each kind of file while it
// writes, rotates logs, flushes, compacts and logs edits (the nth such
// operation and every later one fail), in SyncAlways with and without
// PipelinedSync and in SyncEverySecond. At each point:
//
//   - a write that fails reports the injected error, and then Err does
//     (the DB has failed) and every later write is refused with it;
//   - reads return every acknowledged value, and no failed one;
//   - a crash before any Resume (process crash; in SyncAlways power loss
//     too) keeps every acknowledged write; a failed write may or may not
//     be there (it may have reached the log);
//   - with the fault still on, Resume either fails with the injected
//     error and leaves the DB failed and readable, or succeeds (the fault
//     was on an operation Resume does not perform, such as a log append);
//   - once the fault is cleared Resume succeeds, and new writes do;
//   - a power loss and a process crash after that keep every
//     acknowledged write and bring back no failed one: their keys hold
//     the value acknowledged before the failure, or none.
//
// Faults on operations the engine treats as best effort (removing
// obsolete files) must not fail the DB at all; faults only a compaction
// meets are retried and do not fail it either.
func TestResumeFaultMatrix(t *testing.T) {
	faults := []struct {
		op   vfs.Op
		kind string
	}{
		{vfs.OpCreate, ".log"}, {vfs.OpWrite, ".log"}, {vfs.OpSync, ".log"}, {vfs.OpOpen, ".log"}, {vfs.OpRemove, ".log"},
		{vfs.OpCreate, ".sst"}, {vfs.OpWrite, ".sst"}, {vfs.OpSync, ".sst"}, {vfs.OpRemove, ".sst"},
		{vfs.OpWrite, "MANIFEST-"}, {vfs.OpSync, "MANIFEST-"},
		{vfs.OpSyncDir, "dir"},
	}
	ns := []int{1, 3, 8}
	if testing.Short() {
		ns = []int{2}
	}
	var points, failedPoints, resumeFailed atomic.Int64
	for _, mode := range faultModes {
		for _, ft := range faults {
			for _, n := range ns {
				f := fault{ft.op, ft.kind, n}
				t.Run(mode.name+"/"+f.String(), func(t *testing.T) {
					failed, rf := runFaultPoint(t, mode, f)
					points.Add(1)
					if failed {
						failedPoints.Add(1)
					}
					if rf {
						resumeFailed.Add(1)
					}
				})
			}
		}
	}
	t.Logf("%d points: the DB failed at %d, Resume failed under the fault at %d", points.Load(), failedPoints.Load(), resumeFailed.Load())
	if !t.Failed() && (failedPoints.Load() < points.Load()/2 || resumeFailed.Load() == 0) {
		t.Errorf("the matrix exercised too little: %d points, %d failed the DB, %d failed a Resume",
			points.Load(), failedPoints.Load(), resumeFailed.Load())
	}
}

// resumeMeets reports whether Resume performs the faulty operation once
// the fault has failed the DB: it writes the memtables to tables (a fault
// on a table failed a flush, so there is one to write), creates a log and
// syncs it and the directory, and writes the manifest, a fresh one after
// a manifest fault. It never appends to a log, nor opens one.
func resumeMeets(f fault) bool {
	return f.kind != ".log" || f.op == vfs.OpCreate || f.op == vfs.OpSync
}

// runFaultPoint runs one point of TestResumeFaultMatrix and reports
// whether the DB failed, and whether Resume failed under the fault.
func runFaultPoint(t *testing.T, mode faultMode, f fault) (dbFailed, resumeFailed bool) {
	fs := vfs.NewMem()
	o := faultOptions(mode)
	o.FS = fs
	db, err := Open("/db", o)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = db.Close() }()
	m := newFaultModel()
	o.FS = nil
	before := db.Metrics()

	f.arm(fs)
	writeFailures := faultWorkload(t, db, m, mode, "a", 150)
	if err := db.Flush(); err != nil && !errors.Is(err, vfs.ErrInjected) {
		t.Fatalf("Flush: %v", err)
	}
	bgErr := db.Err()
	if writeFailures > 0 && bgErr == nil {
		t.Fatalf("%d writes failed, yet Err() = nil", writeFailures)
	}
	if bgErr != nil {
		dbFailed = true
		if f.op == vfs.OpRemove {
			t.Fatalf("a failed remove of an obsolete file failed the DB: %v", bgErr)
		}
		if !errors.Is(bgErr, vfs.ErrInjected) {
			t.Fatalf("Err() = %v, want the injected error", bgErr)
		}
		if err := m.put(db, "refused", "x"); !errors.Is(err, vfs.ErrInjected) {
			t.Fatalf("Put on a failed DB = %v, want the injected error", err)
		}
		m.check(t, "failed DB", db, false)
		m.checkReopen(t, "process crash before Resume", fs.CrashClone(true), o, true)
		if mode.sync == SyncAlways {
			m.checkReopen(t, "power loss before Resume", fs.CrashClone(false), o, true)
		}
		if err := db.Resume(); err != nil {
			resumeFailed = true
			if !errors.Is(err, vfs.ErrInjected) {
				t.Fatalf("Resume under the fault = %v, want the injected error", err)
			}
			if db.Err() == nil {
				t.Fatal("Resume failed, yet Err() = nil")
			}
			if err := m.put(db, "refused", "y"); err == nil {
				t.Fatal("Put succeeded after a failed Resume")
			}
			m.check(t, "after a failed Resume", db, false)
		} else if err := db.Err(); err != nil {
			t.Fatalf("Resume returned nil, yet Err() = %v", err)
		} else if resumeMeets(f) {
			t.Fatalf("Resume succeeded with the fault on, though it creates, writes and syncs tables (the failed flush's memtable), a log, the directory and the manifest")
		}
	}
	fs.SetInjector(nil)
	quiesce(db)
	if err := db.Resume(); err != nil {
		t.Fatalf("Resume with the fault cleared: %v", err)
	}
	if err := db.Err(); err != nil {
		t.Fatalf("Err() after Resume = %v", err)
	}
	m.check(t, "after Resume", db, false)
	// New keys only: a key a failed write touched keeps its acknowledged
	// value, so a failed write that came back would show.
	if n := faultWorkload(t, db, m, mode, "b", 60); n > 0 {
		t.Fatalf("%d writes failed after Resume", n)
	}
	if mode.sync == SyncEverySecond {
		// The new writes are durable only once a background fsync or
		// a flush has covered them (a rotated log's included).
		if err := db.Flush(); err != nil {
			t.Fatalf("Flush after Resume: %v", err)
		}
	}
	m.check(t, "after Resume and more writes", db, false)
	m.checkReopen(t, "power loss after Resume", fs.CrashClone(false), o, false)
	m.checkReopen(t, "process crash after Resume", fs.CrashClone(true), o, false)

	if f.op != vfs.OpRemove { // a failed remove leaves its file, by design
		checkNoStrayTables(t, db, fs)
	}
	after := db.Metrics()
	if dbFailed {
		if after.BackgroundErrors <= before.BackgroundErrors || after.Resumes <= before.Resumes {
			t.Errorf("metrics: BackgroundErrors %d→%d, Resumes %d→%d, want both to grow",
				before.BackgroundErrors, after.BackgroundErrors, before.Resumes, after.Resumes)
		}
	}
	if err := db.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	return dbFailed, resumeFailed
}

// TestCompactionErrorRetried: a background compaction whose output table
// cannot be synced leaves its inputs, removes its output, counts the
// failure and is retried; the DB keeps taking writes meanwhile, and once
// the disk works again the retry succeeds. A manual Compact returns the
// error to its caller, and the DB goes on.
func TestCompactionErrorRetried(t *testing.T) {
	fs := vfs.NewMem()
	o := faultOptions(faultModes[0])
	o.FS = fs
	db, err := Open("/db", o)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	m := newFaultModel()
	// Each table spans a to z, so the two L0 tables overlap and compact.
	round := 0
	put := func(k string) {
		t.Helper()
		round++
		for _, k := range []string{"a", k, "z"} {
			if err := m.put(db, k, fmt.Sprint("v", round)); err != nil {
				t.Fatalf("Put %s: %v", k, err)
			}
		}
	}
	put("a")
	if err := db.Flush(); err != nil {
		t.Fatal(err)
	}
	// The next table written is the flush's; every later table sync
	// (the compaction's outputs) fails.
	var syncs atomic.Int64
	fs.SetInjector(func(op vfs.Op, name string) error {
		if op == vfs.OpSync && strings.HasSuffix(name, ".sst") && syncs.Add(1) > 1 {
			return vfs.ErrInjected
		}
		return nil
	})
	put("b")
	if err := db.Flush(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "two failed compactions", func() bool { return db.Metrics().CompactionErrors >= 2 })
	if err := db.Err(); err != nil {
		t.Fatalf("a failed compaction failed the DB: %v", err)
	}
	put("c")
	m.check(t, "while compactions fail", db, false)
	quiesce(db)
	if n := db.Metrics().Levels[0].Files; n != 2 {
		t.Errorf("L0 holds %d tables after failed compactions, want the 2 inputs", n)
	}
	checkNoStrayTables(t, db, fs)

	fs.SetInjector(nil)
	waitFor(t, "a compaction", func() bool { return db.Metrics().Compactions >= 1 })
	if n := db.Metrics().Levels[0].Files; n != 0 {
		t.Errorf("L0 holds %d tables after the retry succeeded, want 0", n)
	}
	m.check(t, "after the retry", db, false)

	// A manual Compact reports its failure.
	if err := db.Flush(); err != nil {
		t.Fatal(err)
	}
	fs.SetInjector(func(op vfs.Op, name string) error {
		if op == vfs.OpSync && strings.HasSuffix(name, ".sst") {
			return vfs.ErrInjected
		}
		return nil
	})
	if err := db.Compact(); !errors.Is(err, vfs.ErrInjected) {
		t.Fatalf("Compact with table syncs failing = %v, want the injected error", err)
	}
	if err := db.Err(); err != nil {
		t.Fatalf("a failed Compact failed the DB: %v", err)
	}
	fs.SetInjector(nil)
	quiesce(db)
	checkNoStrayTables(t, db, fs)
	put("d")
	m.check(t, "after a failed Compact", db, false)
	m.checkReopen(t, "power loss", fs.CrashClone(false), Options{}, false)
}

// checkNoStrayTables fails if the directory holds a table the current
// version does not list: a failed compaction left an output behind.
func checkNoStrayTables(t *testing.T, db *DB, fs *vfs.MemFS) {
	t.Helper()
	// No flush or compaction may be writing a table meanwhile.
	db.flushMu.Lock()
	defer db.flushMu.Unlock()
	db.compactMu.Lock()
	defer db.compactMu.Unlock()
	db.mu.Lock()
	live := map[string]bool{}
	for _, files := range db.current.levels {
		for _, f := range files {
			live[tableName(f.num)] = true
		}
	}
	db.mu.Unlock()
	for _, n := range fs.Names() {
		if b := filepath.Base(n); strings.HasSuffix(b, ".sst") && !live[b] {
			t.Errorf("stray table %s: no version lists it", b)
		}
	}
}

// waitFor polls cond until it holds (the background goroutines get there
// on their own; the test only waits for them, it asserts no timing).
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); !cond(); {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

// TestPipelinedFailedGroupNeverVisible: with PipelinedSync a group is in
// the memtable before its fsync returns. When the fsync fails, the group's
// writes must stay invisible: on the failed DB, after Resume, after later
// writes move the visible sequence number past theirs, to a reader that
// pinned its read state before the Resume, and after a crash.
func TestPipelinedFailedGroupNeverVisible(t *testing.T) {
	fs := vfs.NewMem()
	o := faultOptions(faultModes[1])
	o.FS = fs
	db, err := Open("/db", o)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	m := newFaultModel()
	for i := range 20 {
		if err := m.put(db, fmt.Sprintf("k%02d", i), "old"); err != nil {
			t.Fatal(err)
		}
	}
	fault{vfs.OpSync, ".log", 1}.arm(fs)
	for i := range 20 {
		if err := m.put(db, fmt.Sprintf("k%02d", i), "failed"); !errors.Is(err, vfs.ErrInjected) {
			t.Fatalf("Put k%02d with fsync failing = %v, want the injected error", i, err)
		}
	}
	db.mu.Lock()
	inMem, _, _ := db.mem.get([]byte("k00"), maxSeq)
	db.mu.Unlock()
	if inMem != kindSet {
		t.Fatal("the failed group is not in the memtable: the test does not test what it says")
	}
	m.check(t, "failed DB", db, false)
	pinned, err := db.acquireReadState()
	if err != nil {
		t.Fatal(err)
	}
	defer pinned.release()
	it, err := db.NewIter(nil)
	if err != nil {
		t.Fatal(err)
	}
	fs.SetInjector(nil)
	if err := db.Resume(); err != nil {
		t.Fatal(err)
	}
	for i := range 50 {
		if err := m.put(db, fmt.Sprintf("n%02d", i), "new"); err != nil {
			t.Fatal(err)
		}
	}
	m.check(t, "after Resume and new writes", db, false)
	// A reader that pinned its read state before the Resume and reads at
	// today's sequence number.
	if _, v, ok, err := db.getFrom(pinned, []byte("k00"), db.visibleSeq.Load()); err != nil || !ok || string(v) != "old" {
		t.Fatalf("read through a read state pinned before Resume = %q, %v, %v; want \"old\"", v, ok, err)
	}
	for ok := it.First(); ok; ok = it.Next() {
		if string(it.Value()) == "failed" {
			t.Fatalf("iterator opened before Resume shows failed write %s", it.Key())
		}
	}
	if err := it.Close(); err != nil {
		t.Fatal(err)
	}
	if err := db.Flush(); err != nil {
		t.Fatal(err)
	}
	m.check(t, "after a flush", db, false)
	m.checkReopen(t, "power loss", fs.CrashClone(false), Options{}, false)
	m.checkReopen(t, "process crash", fs.CrashClone(true), Options{}, false)
}

// TestEverysecSyncFailureFailsDB: in SyncEverySecond a failed background
// fsync fails the DB (so the layer above refuses writes), and Resume makes
// durable what the failed fsync should have: after it, a power loss keeps
// every acknowledged write, with no background fsync since.
func TestEverysecSyncFailureFailsDB(t *testing.T) {
	fs := vfs.NewMem()
	o := faultOptions(faultModes[2])
	o.MemTableSize = 1 << 20 // everything stays in the memtable and its log
	o.FS = fs
	db, err := Open("/db", o)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	m := newFaultModel()
	for i := range 100 {
		if err := m.put(db, fmt.Sprintf("k%03d", i), fmt.Sprint("v", i)); err != nil {
			t.Fatal(err)
		}
	}
	fault{vfs.OpSync, ".log", 1}.arm(fs)
	db.syncWAL()
	if err := db.Err(); !errors.Is(err, vfs.ErrInjected) {
		t.Fatalf("Err() after a failed background fsync = %v, want the injected error", err)
	}
	if err := m.put(db, "k000", "refused"); !errors.Is(err, vfs.ErrInjected) {
		t.Fatalf("Put after a failed background fsync = %v, want the injected error", err)
	}
	m.check(t, "failed DB", db, false)
	if err := db.Resume(); !errors.Is(err, vfs.ErrInjected) {
		t.Fatalf("Resume while fsync fails = %v, want the injected error", err)
	}
	fs.SetInjector(nil)
	if err := db.Resume(); err != nil {
		t.Fatal(err)
	}
	m.checkReopen(t, "power loss after Resume", fs.CrashClone(false), Options{}, false)
	if err := m.put(db, "after", "x"); err != nil {
		t.Fatal(err)
	}
	if mt := db.Metrics(); mt.BackgroundErrors != 1 || mt.Resumes != 1 {
		t.Errorf("BackgroundErrors %d, Resumes %d; want 1 and 1", mt.BackgroundErrors, mt.Resumes)
	}
}

// TestResumeFreshManifest: when the manifest's write fails (here, a
// flush's edit), the manifest is suspect; Resume writes a fresh one and
// points CURRENT at it. A failure of that switch (CURRENT's rename) leaves
// the DB failed, and the next Resume completes it; afterwards only the
// fresh manifest and the tables it lists remain.
func TestResumeFreshManifest(t *testing.T) {
	fs := vfs.NewMem()
	o := faultOptions(faultModes[0])
	o.FS = fs
	db, err := Open("/db", o)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	m := newFaultModel()
	for i := range 30 {
		if err := m.put(db, fmt.Sprintf("k%02d", i), "v"); err != nil {
			t.Fatal(err)
		}
	}
	db.manifestMu.Lock()
	oldManifest := manifestName(db.manifestNum)
	db.manifestMu.Unlock()
	fault{vfs.OpSync, "MANIFEST-", 1}.arm(fs)
	if err := db.Flush(); !errors.Is(err, vfs.ErrInjected) {
		t.Fatalf("Flush with the manifest failing = %v, want the injected error", err)
	}
	db.mu.Lock()
	bad, orphans := db.manifestBad, len(db.orphans)
	db.mu.Unlock()
	if !bad || orphans != 1 {
		t.Fatalf("manifestBad %v, %d orphans; want true and the flush's table", bad, orphans)
	}
	// The suspect manifest may hold the flush's edit (a process crash
	// keeps it): the table it names must still be there.
	m.checkReopen(t, "process crash before Resume", fs.CrashClone(true), Options{}, false)
	m.checkReopen(t, "power loss before Resume", fs.CrashClone(false), Options{}, false)

	fault{vfs.OpRename, "CURRENT", 1}.arm(fs)
	if err := db.Resume(); !errors.Is(err, vfs.ErrInjected) {
		t.Fatalf("Resume with CURRENT's rename failing = %v, want the injected error", err)
	}
	if db.Err() == nil {
		t.Fatal("Resume failed, yet Err() = nil")
	}
	m.check(t, "after a failed Resume", db, false)
	fs.SetInjector(nil)
	if err := db.Resume(); err != nil {
		t.Fatal(err)
	}
	for i := range 30 {
		if err := m.put(db, fmt.Sprintf("n%02d", i), "w"); err != nil {
			t.Fatal(err)
		}
	}
	db.manifestMu.Lock()
	newManifest := manifestName(db.manifestNum)
	db.manifestMu.Unlock()
	var manifests []string
	for _, n := range fs.Names() {
		if b := filepath.Base(n); strings.HasPrefix(b, "MANIFEST-") || b == "CURRENT.tmp" {
			manifests = append(manifests, b)
		}
	}
	if newManifest == oldManifest || !slices.Equal(manifests, []string{newManifest}) {
		t.Errorf("manifests after Resume %v (was %s), want only the fresh %s", manifests, oldManifest, newManifest)
	}
	quiesce(db)
	checkNoStrayTables(t, db, fs)
	m.checkReopen(t, "power loss after Resume", fs.CrashClone(false), Options{}, false)
	m.checkReopen(t, "process crash after Resume", fs.CrashClone(true), Options{}, false)
}

// TestResumeFreshManifestFaults fails the manifest first (its fsync, in a
// flush's edit), then injects a second persistent fault at each step of
// the fresh manifest Resume writes: creating, writing or syncing the new
// manifest or CURRENT.tmp, the rename over CURRENT, the directory fsync.
// Resume must fail and leave the DB failed and readable, and the
// directory must open after a process crash or a power loss at that
// moment with every acknowledged write (CURRENT may name either manifest
// then); once the fault is cleared, Resume succeeds and so do crashes
// after it.
func TestResumeFreshManifestFaults(t *testing.T) {
	faults := []fault{
		{vfs.OpCreate, "MANIFEST-", 1}, {vfs.OpWrite, "MANIFEST-", 1}, {vfs.OpSync, "MANIFEST-", 1},
		{vfs.OpCreate, "CURRENT", 1}, {vfs.OpWrite, "CURRENT", 1}, {vfs.OpSync, "CURRENT", 1},
		{vfs.OpRename, "CURRENT", 1}, {vfs.OpSyncDir, "dir", 1}, {vfs.OpSyncDir, "dir", 2},
	}
	for _, mode := range faultModes {
		for _, f := range faults {
			t.Run(mode.name+"/"+f.String(), func(t *testing.T) {
				fs := vfs.NewMem()
				o := faultOptions(mode)
				o.FS = fs
				db, err := Open("/db", o)
				if err != nil {
					t.Fatal(err)
				}
				defer db.Close()
				o.FS = nil
				m := newFaultModel()
				faultWorkload(t, db, m, mode, "a", 40)
				fault{vfs.OpSync, "MANIFEST-", 1}.arm(fs)
				if err := db.Flush(); !errors.Is(err, vfs.ErrInjected) {
					t.Fatalf("Flush with the manifest failing = %v, want the injected error", err)
				}
				f.arm(fs)
				if err := db.Resume(); !errors.Is(err, vfs.ErrInjected) {
					t.Fatalf("Resume under %v = %v, want the injected error", f, err)
				}
				if db.Err() == nil {
					t.Fatal("Resume failed, yet Err() = nil")
				}
				m.check(t, "after a failed Resume", db, false)
				m.checkReopen(t, "process crash after a failed Resume", fs.CrashClone(true), o, true)
				if mode.sync == SyncAlways {
					m.checkReopen(t, "power loss after a failed Resume", fs.CrashClone(false), o, true)
				}
				fs.SetInjector(nil)
				quiesce(db)
				if err := db.Resume(); err != nil {
					t.Fatal(err)
				}
				faultWorkload(t, db, m, mode, "b", 40)
				if mode.sync != SyncAlways {
					if err := db.Flush(); err != nil {
						t.Fatal(err)
					}
				}
				checkNoStrayTables(t, db, fs)
				m.checkReopen(t, "power loss after Resume", fs.CrashClone(false), o, false)
				m.checkReopen(t, "process crash after Resume", fs.CrashClone(true), o, false)
			})
		}
	}
}

// TestResumeHealthyAndClosed: Resume on a healthy DB does nothing; after
// Close, Err and Resume report ErrClosed.
func TestResumeHealthyAndClosed(t *testing.T) {
	db, err := Open("/db", Options{FS: vfs.NewMem()})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Err(); err != nil {
		t.Fatalf("Err() on a new DB = %v", err)
	}
	if err := db.Resume(); err != nil {
		t.Fatalf("Resume on a healthy DB = %v", err)
	}
	if mt := db.Metrics(); mt.Resumes != 0 || mt.BackgroundErrors != 0 {
		t.Errorf("Resumes %d, BackgroundErrors %d on a healthy DB", mt.Resumes, mt.BackgroundErrors)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if err := db.Err(); !errors.Is(err, ErrClosed) {
		t.Errorf("Err() after Close = %v, want ErrClosed", err)
	}
	if err := db.Resume(); !errors.Is(err, ErrClosed) {
		t.Errorf("Resume after Close = %v, want ErrClosed", err)
	}
}

// TestResumeRandomized mixes, on one DB, rounds of concurrent writes under
// a random fault, Resumes (some while the fault is on, some racing with
// writers and readers) and crash checks, against the model.
func TestResumeRandomized(t *testing.T) {
	kinds := []fault{
		{vfs.OpWrite, ".log", 0}, {vfs.OpSync, ".log", 0}, {vfs.OpCreate, ".log", 0},
		{vfs.OpCreate, ".sst", 0}, {vfs.OpWrite, ".sst", 0}, {vfs.OpSync, ".sst", 0},
		{vfs.OpWrite, "MANIFEST-", 0}, {vfs.OpSync, "MANIFEST-", 0}, {vfs.OpSyncDir, "dir", 0},
		{vfs.OpRename, "CURRENT", 0}, {vfs.OpCreate, "MANIFEST-", 0},
	}
	rounds := 24
	if testing.Short() {
		rounds = 8
	}
	modes := append(slices.Clone(faultModes),
		faultMode{"recycled", SyncAlways, false, 2},
		faultMode{"none-mapped", SyncNone, false, 0})
	for i, mode := range modes {
		t.Run(mode.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(uint64(i), 37))
			fs := vfs.NewMem()
			o := faultOptions(mode)
			o.FS = fs
			db, err := Open("/db", o)
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			o.FS = nil
			m := newFaultModel()
			// A reader of a key no write touches, all along: reads never
			// stop working, whatever the DB's state.
			if err := m.put(db, "stable", "s"); err != nil {
				t.Fatal(err)
			}
			stop := make(chan struct{})
			var readers sync.WaitGroup
			readers.Add(1)
			go func() {
				defer readers.Done()
				for {
					select {
					case <-stop:
						return
					default:
					}
					if v, err := db.Get([]byte("stable")); err != nil || string(v) != "s" {
						t.Errorf("Get(stable) = %q, %v", v, err)
						return
					}
				}
			}()
			for r := range rounds {
				f := kinds[rng.IntN(len(kinds))]
				f.n = 1 + rng.IntN(6)
				f.arm(fs)
				var wg sync.WaitGroup
				if rng.IntN(2) == 0 {
					// A Resume racing with the writers: it must not
					// break anything, whatever it returns.
					wg.Add(1)
					go func() {
						defer wg.Done()
						_ = db.Resume()
					}()
				}
				faultWorkload(t, db, m, mode, fmt.Sprintf("r%02d", r), 20+rng.IntN(60))
				wg.Wait()
				m.check(t, fmt.Sprintf("round %d (%v)", r, f), db, false)
				if rng.IntN(3) == 0 {
					if err := db.Resume(); err != nil && !errors.Is(err, vfs.ErrInjected) {
						t.Fatalf("round %d: Resume under %v = %v", r, f, err)
					}
				}
				fs.SetInjector(nil)
				quiesce(db)
				if err := db.Resume(); err != nil {
					t.Fatalf("round %d: Resume = %v", r, err)
				}
				if mode.sync != SyncAlways {
					// Durable from here on (checkReopen below).
					if err := db.Flush(); err != nil {
						t.Fatalf("round %d: Flush = %v", r, err)
					}
				}
				if rng.IntN(4) == 0 {
					m.checkReopen(t, fmt.Sprintf("round %d power loss", r), fs.CrashClone(false), o, false)
				}
			}
			close(stop)
			readers.Wait()
			checkNoStrayTables(t, db, fs) // no reader pins an obsolete table now
			m.checkReopen(t, "final power loss", fs.CrashClone(false), o, false)
			m.checkReopen(t, "final process crash", fs.CrashClone(true), o, false)
		})
	}
}

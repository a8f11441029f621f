package lsm

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/minikv/minikv/lsm/vfs"
)

// openFailedModes are the log setups an Open on a failing disk must cope
// with: every sync mode, write(2) and mapped logs, recycled logs.
var openFailedModes = []struct {
	name string
	o    Options
}{
	{"always", Options{Sync: SyncAlways}},
	{"everysec", Options{Sync: SyncEverySecond}},
	{"none-mapped", Options{Sync: SyncNone}},
	{"none-write", Options{Sync: SyncNone, WriteWAL: true}},
	{"always-recycle", Options{Sync: SyncAlways, RecycleWAL: 2}},
	{"pipelined", Options{Sync: SyncAlways, PipelinedSync: true}},
	{"everysec-mapped", Options{Sync: SyncEverySecond, MappedWAL: true}},
}

// openFailedFaults are the write points of recovery: writing a replayed
// memtable to a table (the first one, and a later one after two were
// written), creating and syncing the new log, and each step of the new
// manifest and of the switch of CURRENT.
var openFailedFaults = []fault{
	{vfs.OpCreate, ".sst", 1}, {vfs.OpCreate, ".sst", 3}, {vfs.OpWrite, ".sst", 1}, {vfs.OpSync, ".sst", 1},
	{vfs.OpSync, ".sst", 2},
	{vfs.OpCreate, ".log", 1}, {vfs.OpSync, ".log", 1},
	{vfs.OpCreate, "MANIFEST-", 1}, {vfs.OpWrite, "MANIFEST-", 1}, {vfs.OpSync, "MANIFEST-", 1},
	{vfs.OpCreate, "CURRENT", 1}, {vfs.OpWrite, "CURRENT", 1}, {vfs.OpSync, "CURRENT", 1},
	{vfs.OpRename, "CURRENT", 1}, {vfs.OpSyncDir, "dir", 1},
}

// armCounting installs f on fs and returns the count of the operations it
// failed.
func armCounting(fs *vfs.MemFS, f fault) *atomic.Int64 {
	var seen, hits atomic.Int64
	fs.SetInjector(func(op vfs.Op, name string) error {
		if f.matches(op, name) && seen.Add(1) >= int64(f.n) {
			hits.Add(1)
			return vfs.ErrInjected
		}
		return nil
	})
	return &hits
}

// ofState is what a directory holds: each key's value, or nil if absent.
type ofState map[string]*string

func (s ofState) check(t *testing.T, what string, db *DB) {
	t.Helper()
	for k, want := range s {
		v, err := db.Get([]byte(k))
		switch {
		case want == nil && errors.Is(err, ErrNotFound):
		case want != nil && err == nil && string(v) == *want:
		default:
			w := "<absent>"
			if want != nil {
				w = *want
			}
			t.Fatalf("%s: Get(%s) = %.20q, %v; want %.20q", what, k, v, err, w)
		}
	}
}

// checkOpen opens the crash image fs with no fault and checks it holds
// want; maybe lists keys that may also be absent (unsynced writes under
// power loss).
func (s ofState) checkOpen(t *testing.T, what string, fs *vfs.MemFS, o Options, maybe map[string]bool) {
	t.Helper()
	o.FS = fs
	o.OpenFailedOnWriteError = false
	db, err := Open("/db", o)
	if err != nil {
		t.Fatalf("%s: Open: %v", what, err)
	}
	defer func() { _ = db.Close() }()
	for k, want := range s {
		v, err := db.Get([]byte(k))
		switch {
		case want == nil && errors.Is(err, ErrNotFound):
		case want != nil && err == nil && string(v) == *want:
		case maybe[k] && errors.Is(err, ErrNotFound):
		default:
			t.Fatalf("%s: Get(%s) = %.20q, %v; want %.20q", what, k, v, err, fmt.Sprint(want))
		}
	}
}

// ofImage writes a table's worth of keys (flushed), then overwrites and
// deletes some and writes more, which stay in the log, and returns the
// directory as setup leaves it: after Close ("closed"), a process crash
// ("crash") or a power loss ("powerloss"), and the keys written.
func ofImage(t *testing.T, o Options, setup string) (*vfs.MemFS, []string) {
	fs := vfs.NewMem()
	o.FS = fs
	o.MemTableSize = 64 << 10 // the log holds several of recovery's memtables
	db, err := Open("/db", o)
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	val := func(phase string, i int) []byte {
		return []byte(fmt.Sprintf("%s-%d-%s", phase, i, strings.Repeat("v", 80)))
	}
	for i := range 60 {
		k := fmt.Sprintf("k%03d", i)
		keys = append(keys, k)
		if err := db.Put([]byte(k), val("a", i)); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.Flush(); err != nil {
		t.Fatal(err)
	}
	for i := 30; i < 230; i++ {
		k := fmt.Sprintf("k%03d", i)
		if i >= 60 {
			keys = append(keys, k)
		}
		if err := db.Put([]byte(k), val("b", i)); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 10 {
		if err := db.Delete([]byte(fmt.Sprintf("k%03d", i))); err != nil {
			t.Fatal(err)
		}
	}
	var img *vfs.MemFS
	switch setup {
	case "closed":
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
		img = fs.CrashClone(true)
	case "crash":
		img = fs.CrashClone(true)
		_ = db.Close()
	case "powerloss":
		if o.Sync == SyncEverySecond {
			db.syncWAL() // the background fsync's tick: the log is durable
		}
		img = fs.CrashClone(false)
		_ = db.Close()
	}
	return img, keys
}

// readState returns what db holds for keys.
func ofRead(t *testing.T, db *DB, keys []string) ofState {
	t.Helper()
	s := ofState{}
	for _, k := range keys {
		v, err := db.Get([]byte(k))
		switch {
		case err == nil:
			str := string(v)
			s[k] = &str
		case errors.Is(err, ErrNotFound):
			s[k] = nil
		default:
			t.Fatalf("Get(%s): %v", k, err)
		}
	}
	return s
}

// TestOpenFailedOnWriteError opens, with Options.OpenFailedOnWriteError, a
// directory left by a Close, a process crash or a power loss (with a log
// to replay into several memtables, but after Close), on a disk that fails
// one of recovery's writes from the nth such operation on, in each log
// setup. Where recovery meets the fault:
//
//   - Open without the option returns the injected error;
//   - Open with it returns a DB whose Err wraps the injected error, which
//     reads what an Open without the fault reads, and refuses writes with
//     the injected error;
//   - a process crash or power loss then, before Resume, leaves a
//     directory from which an Open recovers all of it;
//   - Resume under the fault fails with it, the DB stays failed and
//     readable, and a crash then still recovers all;
//   - with the fault cleared Resume succeeds, writes are taken, the logs
//     recovery replayed, the old manifests and the tables no manifest
//     names are gone, and a crash (power loss too) or a Close and Open
//     keep everything.
func TestOpenFailedOnWriteError(t *testing.T) {
	var failedOpens atomic.Int64
	for _, mode := range openFailedModes {
		for _, setup := range []string{"closed", "crash", "powerloss"} {
			for _, f := range openFailedFaults {
				t.Run(mode.name+"/"+setup+"/"+f.String(), func(t *testing.T) {
					if runOpenFailed(t, mode.o, setup, f) {
						failedOpens.Add(1)
					}
				})
			}
		}
	}
	// Recovery meets every fault in some setup.
	if !t.Failed() && failedOpens.Load() < int64(len(openFailedFaults)*2) {
		t.Errorf("only %d points opened failed", failedOpens.Load())
	}
}

func runOpenFailed(t *testing.T, mo Options, setup string, f fault) (openedFailed bool) {
	mo.syncPeriod = time.Hour
	img, keys := ofImage(t, mo, setup)
	// Recovery replays into memtables of 8 KiB: several tables.
	o := mo
	o.MemTableSize = 8 << 10
	o.DisableAutoCompaction = true // the directory's files are checked below

	// What a healthy disk recovers.
	ref := img.CrashClone(true)
	o.FS = ref
	db, err := Open("/db", o)
	if err != nil {
		t.Fatal(err)
	}
	want := ofRead(t, db, keys)
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	// Without the option recovery's error is Open's.
	plain := img.CrashClone(true)
	hits := armCounting(plain, f)
	o.FS = plain
	db, err = Open("/db", o)
	if hits.Load() == 0 {
		if err != nil {
			t.Fatalf("Open without meeting the fault: %v", err)
		}
		_ = db.Close()
	} else if db != nil || !errors.Is(err, vfs.ErrInjected) {
		t.Fatalf("Open without the option = %v, %v; want the injected error", db, err)
	}

	fs := img.CrashClone(true)
	imgNames, err := img.List("/db")
	if err != nil {
		t.Fatal(err)
	}
	hits = armCounting(fs, f)
	o.FS = fs
	o.OpenFailedOnWriteError = true
	db, err = Open("/db", o)
	if err != nil {
		t.Fatalf("Open with the option: %v", err)
	}
	defer func() { _ = db.Close() }()
	if hits.Load() == 0 {
		t.Logf("recovery does not meet the fault here")
		if err := db.Err(); err != nil {
			t.Fatalf("Open met no fault, yet Err() = %v", err)
		}
		return false
	}
	if err := db.Err(); !errors.Is(err, vfs.ErrInjected) {
		t.Fatalf("Err() = %v, want the injected error", err)
	}
	want.check(t, "opened failed", db)
	if err := db.Put([]byte("refused"), []byte("x")); !errors.Is(err, vfs.ErrInjected) {
		t.Fatalf("Put on a DB opened failed = %v, want the injected error", err)
	}
	if err := db.Flush(); !errors.Is(err, vfs.ErrInjected) {
		t.Fatalf("Flush on a DB opened failed = %v, want the injected error", err)
	}
	db.syncWAL() // no live log: nothing to do
	want.checkOpen(t, "process crash before Resume", fs.CrashClone(true), o, nil)
	want.checkOpen(t, "power loss before Resume", fs.CrashClone(false), o, nil)

	if err := db.Resume(); !errors.Is(err, vfs.ErrInjected) {
		t.Fatalf("Resume under the fault = %v, want the injected error", err)
	}
	if err := db.Err(); !errors.Is(err, vfs.ErrInjected) {
		t.Fatalf("after a failed Resume Err() = %v, want the injected error", err)
	}
	want.check(t, "after a failed Resume", db)
	want.checkOpen(t, "process crash after a failed Resume", fs.CrashClone(true), o, nil)
	want.checkOpen(t, "power loss after a failed Resume", fs.CrashClone(false), o, nil)

	fs.SetInjector(nil)
	if err := db.Resume(); err != nil {
		t.Fatalf("Resume: %v", err)
	}
	if err := db.Err(); err != nil {
		t.Fatalf("after Resume Err() = %v", err)
	}
	want.check(t, "after Resume", db)
	// Nothing recovery read is left but the live tables and the new
	// manifest.
	names, err := fs.List("/db")
	if err != nil {
		t.Fatal(err)
	}
	db.mu.Lock()
	live := map[uint64]bool{}
	for _, files := range db.current.levels {
		for _, lf := range files {
			live[lf.num] = true
		}
	}
	logNum := db.logNum
	db.mu.Unlock()
	for _, n := range names {
		if num, ok := parseNum(n, ".sst"); ok && !live[num] {
			t.Errorf("after Resume %s is in the directory, not in the version", n)
		}
		if strings.HasPrefix(n, "MANIFEST-") && n != manifestName(db.manifestNum) || n == "CURRENT.tmp" {
			t.Errorf("after Resume %s is in the directory", n)
		}
	}
	for _, n := range imgNames {
		if num, ok := parseNum(n, ".log"); ok && num < logNum && fileIn(names, n) {
			t.Errorf("after Resume the replayed log %s is in the directory", n)
		}
	}

	// New writes, then crashes.
	maybe := map[string]bool{}
	for i := range 50 {
		k, v := fmt.Sprintf("n%03d", i), fmt.Sprintf("new-%d", i)
		if err := db.Put([]byte(k), []byte(v)); err != nil {
			t.Fatalf("Put after Resume: %v", err)
		}
		want[k] = &v
		maybe[k] = o.Sync != SyncAlways // not synced: power loss may lose it
	}
	want.check(t, "writes after Resume", db)
	want.checkOpen(t, "process crash after Resume", fs.CrashClone(true), o, nil)
	want.checkOpen(t, "power loss after Resume", fs.CrashClone(false), o, maybe)
	if err := db.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	want.checkOpen(t, "Open after Close", fs, o, nil)
	return true
}

func fileIn(names []string, n string) bool {
	for _, x := range names {
		if x == n {
			return true
		}
	}
	return false
}

// TestOpenFailedClose closes a DB that Open left failed: Close writes
// nothing (it returns the DB's error) and the directory opens with every
// write, while a DB without the option fails Open and one with a corrupt
// log still fails it with the option.
func TestOpenFailedClose(t *testing.T) {
	for _, mode := range openFailedModes {
		t.Run(mode.name, func(t *testing.T) {
			mo := mode.o
			mo.syncPeriod = time.Hour
			img, keys := ofImage(t, mo, "crash")
			o := mo
			o.MemTableSize = 8 << 10
			o.FS = img.CrashClone(true)
			db, err := Open("/db", o)
			if err != nil {
				t.Fatal(err)
			}
			want := ofRead(t, db, keys)
			_ = db.Close()

			fs := img.CrashClone(true)
			fault{vfs.OpWrite, ".sst", 1}.arm(fs)
			o.FS = fs
			o.OpenFailedOnWriteError = true
			db, err = Open("/db", o)
			if err != nil {
				t.Fatal(err)
			}
			want.check(t, "opened failed", db)
			if err := db.Close(); !errors.Is(err, vfs.ErrInjected) {
				t.Fatalf("Close = %v, want the DB's error", err)
			}
			if err := db.Close(); !errors.Is(err, ErrClosed) {
				t.Fatalf("second Close = %v, want ErrClosed", err)
			}
			if err := db.Resume(); !errors.Is(err, ErrClosed) {
				t.Fatalf("Resume after Close = %v, want ErrClosed", err)
			}
			// Still failing: opens failed again; then healthy.
			db, err = Open("/db", o)
			if err != nil {
				t.Fatal(err)
			}
			want.check(t, "opened failed again", db)
			_ = db.Close()
			fs.SetInjector(nil)
			want.checkOpen(t, "Open after Close", fs, o, nil)
		})
	}
}

// TestOpenFailedCorruptionStillFails: damage is never opened failed.
func TestOpenFailedCorruptionStillFails(t *testing.T) {
	img, _ := ofImage(t, Options{Sync: SyncAlways}, "crash")
	var log string
	names, _ := img.List("/db")
	for _, n := range names {
		if _, ok := parseNum(n, ".log"); ok {
			log = n
		}
	}
	if log == "" {
		t.Fatal("no log in the image")
	}
	if err := img.Corrupt("/db/"+log, 100, 0xff); err != nil {
		t.Fatal(err)
	}
	fault{vfs.OpCreate, ".sst", 1}.arm(img)
	db, err := Open("/db", Options{FS: img, Sync: SyncAlways, OpenFailedOnWriteError: true})
	if !errors.Is(err, ErrCorrupt) {
		if db != nil {
			_ = db.Close()
		}
		t.Fatalf("Open of a corrupt log with the option = %v, want ErrCorrupt", err)
	}
}

// TestOpenFailedCrashPoints crashes (process crash and power loss) before
// every operation that changes the disk, during an Open that a fault on
// recovery's first table leaves failed, and then during the Resume that
// brings the DB back: an Open of each crash image recovers every write the
// logs held.
func TestOpenFailedCrashPoints(t *testing.T) {
	for _, mode := range openFailedModes {
		for _, f := range []fault{{vfs.OpCreate, ".sst", 2}, {vfs.OpSync, "MANIFEST-", 1}, {vfs.OpSyncDir, "dir", 1}} {
			t.Run(mode.name+"/"+f.String(), func(t *testing.T) {
				mo := mode.o
				mo.syncPeriod = time.Hour
				img, keys := ofImage(t, mo, "crash")
				o := mo
				o.MemTableSize = 8 << 10
				o.DisableAutoCompaction = true
				o.FS = img.CrashClone(true)
				db, err := Open("/db", o)
				if err != nil {
					t.Fatal(err)
				}
				want := ofRead(t, db, keys)
				_ = db.Close()

				fs := img.CrashClone(true)
				var imagesMu sync.Mutex
				var images []*vfs.MemFS
				var seen atomic.Int64
				var faultOn atomic.Bool
				faultOn.Store(true)
				fs.SetInjector(func(op vfs.Op, name string) error {
					switch op {
					case vfs.OpCreate, vfs.OpWrite, vfs.OpSync, vfs.OpRemove, vfs.OpRename, vfs.OpSyncDir:
						a, b := fs.CrashClone(true), fs.CrashClone(false)
						imagesMu.Lock()
						images = append(images, a, b)
						imagesMu.Unlock()
					}
					if faultOn.Load() && f.matches(op, name) && seen.Add(1) >= int64(f.n) {
						return vfs.ErrInjected
					}
					return nil
				})
				o.FS = fs
				o.OpenFailedOnWriteError = true
				db, err = Open("/db", o)
				if err != nil {
					t.Fatal(err)
				}
				defer func() { _ = db.Close() }()
				if err := db.Err(); !errors.Is(err, vfs.ErrInjected) {
					t.Fatalf("Err() = %v, want the injected error", err)
				}
				imagesMu.Lock()
				opened := len(images)
				imagesMu.Unlock()
				faultOn.Store(false) // Open's goroutines write nothing while failed
				if err := db.Resume(); err != nil {
					t.Fatalf("Resume: %v", err)
				}
				fs.SetInjector(nil)
				// A background goroutine (the spare log's zero fill) may
				// still be inside the injector it fetched before: work on
				// a copy taken under the lock.
				imagesMu.Lock()
				crashes := slices.Clone(images)
				imagesMu.Unlock()
				t.Logf("%d crash points, %d in Open", len(crashes)/2, opened/2)
				for i, c := range crashes {
					what := fmt.Sprintf("crash %d of %d (Open: %d), process crash %v", i/2, len(crashes)/2, opened/2, i%2 == 0)
					want.checkOpen(t, what, c, o, nil)
				}
				want.check(t, "after Resume", db)
			})
		}
	}
}

package durable

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/minikv/minikv/internal/store"
	"github.com/minikv/minikv/lsm"
	"github.com/minikv/minikv/lsm/vfs"
)

// enospc is the error a full disk gives, as the OS wraps it.
func enospc(name string) error {
	return &fs.PathError{Op: "write", Path: name, Err: syscall.ENOSPC}
}

// failOn makes every op of ops on a file whose name has suffix fail with
// ENOSPC; none fails once it returns the cleared func's effect.
func failOn(mem *vfs.MemFS, suffix string, ops ...vfs.Op) {
	mem.SetInjector(func(op vfs.Op, name string) error {
		for _, o := range ops {
			if op == o && strings.HasSuffix(name, suffix) {
				return enospc(name)
			}
		}
		return nil
	})
}

// openOnFS opens the engine at /data with o (its FS set), a Log over it
// and a store over the Log, with no sweeper.
func openOnFS(t *testing.T, o lsm.Options) (*lsm.DB, *Log, *store.Store) {
	t.Helper()
	db, err := lsm.Open("/data", o)
	if err != nil {
		t.Fatal(err)
	}
	l := New(db)
	s, err := store.Open(store.Config{SweepInterval: -1}, l)
	if err != nil {
		t.Fatal(err)
	}
	return db, l, s
}

func get(t *testing.T, s *store.Store, key string) string {
	t.Helper()
	it, ok := s.Get([]byte(key))
	if !ok {
		return "<missing>"
	}
	return string(it.Value)
}

// TestDiskFailureForgetsAndRecovers: a commit that fails (ENOSPC on the
// log) puts the Log and the store in the failed state: the change that
// failed, and one made while failed, are forgotten from memory and read
// back from disk as the last durable write left them; a batch that the
// failure cut across cannot sync (its replies may carry a lost change),
// one that began after can; Recover fails while the disk does and works
// once it takes writes; and after a crash (power loss where the mode
// fsyncs, the process dying where it does not) every acknowledged write
// is there and no lost one is.
func TestDiskFailureForgetsAndRecovers(t *testing.T) {
	for _, tc := range []struct {
		name      string
		o         lsm.Options
		ops       []vfs.Op
		powerLoss bool
	}{
		{"always/write", lsm.Options{Sync: lsm.SyncAlways}, []vfs.Op{vfs.OpWrite}, true},
		{"always/fsync", lsm.Options{Sync: lsm.SyncAlways}, []vfs.Op{vfs.OpSync}, true},
		{"always-pipelined/fsync", lsm.Options{Sync: lsm.SyncAlways, PipelinedSync: true}, []vfs.Op{vfs.OpSync}, true},
		{"everysec/write", lsm.Options{Sync: lsm.SyncEverySecond}, []vfs.Op{vfs.OpWrite}, false},
		{"no/write", lsm.Options{Sync: lsm.SyncNone, WriteWAL: true}, []vfs.Op{vfs.OpWrite}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mem := vfs.NewMem()
			o := tc.o
			o.FS = mem
			db, l, s := openOnFS(t, o)
			for i := range 50 {
				if _, err := s.Store(store.ModeSet, fmt.Appendf(nil, "k%d", i), []byte("v1"), 0, 0, 0); err != nil {
					t.Fatal(err)
				}
			}
			if err := s.Sync(); err != nil {
				t.Fatal(err)
			}
			before := s.DiskMark()

			failOn(mem, ".log", tc.ops...)
			if _, err := s.Store(store.ModeSet, []byte("k1"), []byte("lost"), 0, 0, 0); err != nil {
				t.Fatal(err)
			}
			err := s.Sync()
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatalf("Sync with the log failing = %v, want ENOSPC", err)
			}
			if !errors.Is(s.WriteErr(), syscall.ENOSPC) {
				t.Fatalf("WriteErr = %v, want ENOSPC", s.WriteErr())
			}
			// A change made while failed (a command already running) is
			// refused by the Log and lost too.
			if _, err := s.Store(store.ModeSet, []byte("k2"), []byte("lost too"), 0, 0, 0); err != nil {
				t.Fatal(err)
			}
			if err := s.RecoverDisk(); err == nil {
				t.Fatal("RecoverDisk worked with the disk still failing")
			}
			// RecoverDisk forgot the lost changes before it tried.
			for _, k := range []string{"k1", "k2", "k3"} {
				if got := get(t, s, k); got != "v1" {
					t.Errorf("%s while failed = %q, want the durable v1", k, got)
				}
			}
			if err := s.SyncSince(before); err == nil {
				t.Error("SyncSince a mark from before the failure = nil: a batch it cut across would reply")
			}
			if err := s.SyncSince(s.DiskMark()); err != nil {
				t.Errorf("SyncSince a mark taken after the lost keys were forgotten = %v, want nil (reads are served)", err)
			}
			if st := l.Usage(); st.Failures != 1 || st.Recoveries != 0 {
				t.Errorf("failures %d recoveries %d, want 1 0", st.Failures, st.Recoveries)
			}

			mem.SetInjector(nil)
			if err := s.RecoverDisk(); err != nil {
				t.Fatalf("RecoverDisk with the disk back = %v", err)
			}
			if err := s.WriteErr(); err != nil {
				t.Fatalf("WriteErr after recovery = %v", err)
			}
			if err := s.SyncSince(before); err == nil {
				t.Error("SyncSince a mark from before the failure = nil after recovery")
			}
			if _, err := s.Store(store.ModeSet, []byte("k3"), []byte("v3"), 0, 0, 0); err != nil {
				t.Fatal(err)
			}
			if err := s.Sync(); err != nil {
				t.Fatalf("Sync after recovery = %v", err)
			}
			if st := l.Usage(); st.Failures != 1 || st.Recoveries != 1 {
				t.Errorf("failures %d recoveries %d, want 1 1", st.Failures, st.Recoveries)
			}
			if !tc.powerLoss {
				// Without fsyncs a power loss may take acknowledged
				// writes; a process crash may not.
				if err := db.Flush(); err != nil {
					t.Fatal(err)
				}
			}
			// A process crash keeps what the log's failed write or fsync
			// left in the file: it must not come back. A power loss (where
			// the mode fsyncs) keeps only what was synced.
			clones := map[string]*vfs.MemFS{"process crash": mem.CrashClone(true)}
			if tc.powerLoss {
				clones["power loss"] = mem.CrashClone(false)
			}
			s.Close()
			_ = l.Close()
			_ = db.Close()
			for name, crashed := range clones {
				o.FS = crashed
				db, l, s := openOnFS(t, o)
				want := map[string]string{"k1": "v1", "k2": "v1", "k3": "v3", "k4": "v1", "k49": "v1"}
				for k, v := range want {
					if got := get(t, s, k); got != v {
						t.Errorf("after a %s: %s = %q, want %q", name, k, got, v)
					}
				}
				s.Close()
				_ = l.Close()
				_ = db.Close()
			}
		})
	}
}

// TestMultiKeyChangesCommitTogether: the changes of one multi-key step
// (a RENAME's delete and set, an EXEC) reach the engine in one batch, so
// a power loss at any moment leaves all of them or none: tokens renamed
// from key to key by several writers while other connections commit all
// the time are never lost nor doubled in a crash image. Without Hold a
// commit could take the delete of a RENAME without its set.
func TestMultiKeyChangesCommitTogether(t *testing.T) {
	mem := vfs.NewMem()
	o := lsm.Options{FS: mem, Sync: lsm.SyncAlways}
	db, l, s := openOnFS(t, o)
	const tokens, slots = 4, 16
	for i := range tokens {
		if _, err := s.Store(store.ModeSet, fmt.Appendf(nil, "slot%d", i), []byte("token"), 0, 0, 0); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Sync(); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w := range tokens {
		wg.Add(1)
		go func() { // moves token w around its own slots: w, w+tokens, ...
			defer wg.Done()
			at := w
			for n := 0; ; n++ {
				select {
				case <-stop:
					return
				default:
				}
				next := (at + tokens) % slots
				src, dst := fmt.Appendf(nil, "slot%d", at), fmt.Appendf(nil, "slot%d", next)
				_ = s.Tx([][]byte{src, dst}, func(tx *store.Tx) error {
					if !tx.Rename(src, dst, false) {
						t.Errorf("token %d not at slot%d", w, at)
					}
					return nil
				})
				at = next
				if n%3 == 0 {
					_ = s.Sync()
				}
			}
		}()
	}
	wg.Add(1)
	go func() { // another connection, committing all the time
		defer wg.Done()
		for n := 0; ; n++ {
			select {
			case <-stop:
				return
			default:
			}
			_, _ = s.Store(store.ModeSet, []byte("other"), fmt.Appendf(nil, "%d", n), 0, 0, 0)
			_ = s.Sync()
		}
	}()
	var images []*vfs.MemFS
	for range 40 {
		time.Sleep(2 * time.Millisecond)
		images = append(images, mem.CrashClone(false))
	}
	close(stop)
	wg.Wait()
	s.Close()
	_ = l.Close()
	_ = db.Close()
	for i, img := range images {
		o.FS = img
		db, err := lsm.Open("/data", o)
		if err != nil {
			t.Fatal(err)
		}
		found := 0
		for k := range slots {
			if _, err := db.Get(fmt.Appendf(nil, "kslot%d", k)); err == nil {
				found++
			}
		}
		_ = db.Close()
		if found != tokens {
			t.Fatalf("crash image %d holds %d tokens, want %d: a RENAME was split between commits", i, found, tokens)
		}
	}
}

// TestScanAndSaveInsideExclusive: a SCAN, DBSIZE or SAVE inside an EXEC
// commits what is queued before it reads the disk; the EXEC's own hold on
// the disk must not make that commit wait for the EXEC's end (it would
// never come).
func TestScanAndSaveInsideExclusive(t *testing.T) {
	s := openStore(t, t.TempDir(), store.Config{SweepInterval: -1})
	defer s.close(t)
	done := make(chan error, 1)
	go func() {
		done <- s.Exclusive(func(v *store.Store) error {
			if _, err := v.Store(store.ModeSet, []byte("in-exec"), []byte("v"), 0, 0, 0); err != nil {
				return err
			}
			var keys []string
			if _, err := v.ScanKeys(0, 100, func(k []byte) { keys = append(keys, string(k)) }); err != nil {
				return err
			}
			if len(keys) != 1 || keys[0] != "in-exec" {
				return fmt.Errorf("SCAN inside the section saw %q, want its own write", keys)
			}
			if _, _, err := v.Count(); err != nil {
				return err
			}
			return v.Save()
		})
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("SCAN or SAVE inside Exclusive did not return: the section's hold deadlocked its own commit")
	}
}

// TestLostAuxRecordClosesItsBatch: when the disk fails while only one of
// the store's own records (an aux record: FUNCTION LOAD's libraries) is
// queued, a failure round still begins, so the batch that made the change
// is closed unanswered rather than acknowledged (the store writes the
// record again once the disk is back).
func TestLostAuxRecordClosesItsBatch(t *testing.T) {
	mem := vfs.NewMem()
	_, l, s := openOnFS(t, lsm.Options{FS: mem, Sync: lsm.SyncAlways})
	defer s.Close()
	mark := s.DiskMark()
	s.SetAux("libs", []byte("payload"))
	failOn(mem, ".log", vfs.OpWrite, vfs.OpSync)
	if err := l.SyncPass(); err == nil {
		t.Fatal("the commit of the aux record succeeded on a failed disk")
	}
	if err := s.SyncSince(mark); err == nil {
		t.Error("the batch that wrote the lost aux record may still be answered")
	}
}

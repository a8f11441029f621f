package lsm

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/minikv/minikv/lsm/vfs"
)

// TestWALWriteErrorFailsWritesKeepsAcknowledged injects a write error into
// the log: the failing Put and every later write report it, and after a
// reopen every write acknowledged before the error is still there.
func TestWALWriteErrorFailsWritesKeepsAcknowledged(t *testing.T) {
	fs := vfs.NewMem()
	db, err := Open("/db", Options{FS: fs, MemTableSize: 16 << 10})
	if err != nil {
		t.Fatal(err)
	}
	acked := 0
	for i := 0; i < 500; i++ {
		if i == 300 {
			fs.SetInjector(func(op vfs.Op, name string) error {
				if op == vfs.OpWrite && strings.HasSuffix(name, ".log") {
					return vfs.ErrInjected
				}
				return nil
			})
		}
		err := db.Put(fmt.Appendf(nil, "k%04d", i), []byte("v"))
		if i < 300 {
			if err != nil {
				t.Fatalf("Put %d: %v", i, err)
			}
			acked++
			continue
		}
		if !errors.Is(err, vfs.ErrInjected) {
			t.Fatalf("Put %d after the log failed = %v, want the injected error", i, err)
		}
	}
	_ = db.Close()
	fs.SetInjector(nil)
	db, err = Open("/db", Options{FS: fs.CrashClone(true)})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for i := 0; i < acked; i++ {
		if _, err := db.Get(fmt.Appendf(nil, "k%04d", i)); err != nil {
			t.Fatalf("acknowledged k%04d lost: %v", i, err)
		}
	}
}

// TestFlushSyncErrorStopsWrites injects an fsync failure into table
// writing: the engine must stop accepting writes rather than drop data.
func TestFlushSyncErrorStopsWrites(t *testing.T) {
	fs := vfs.NewMem()
	db, err := Open("/db", Options{FS: fs, MemTableSize: 16 << 10, MaxImmutableMemTables: 1})
	if err != nil {
		t.Fatal(err)
	}
	fs.SetInjector(func(op vfs.Op, name string) error {
		if op == vfs.OpSync && strings.HasSuffix(name, ".sst") {
			return vfs.ErrInjected
		}
		return nil
	})
	var last error
	for i := 0; i < 5000 && last == nil; i++ {
		last = db.Put(fmt.Appendf(nil, "k%04d", i), make([]byte, 100))
	}
	if !errors.Is(last, vfs.ErrInjected) {
		t.Fatalf("writes kept succeeding after table syncs failed: %v", last)
	}
	fs.SetInjector(nil)
	_ = db.Close()
}

// TestOversizedBatchRefused: a batch whose encoding would not fit a log
// record's length word is refused by Apply and by Enqueue's Wait with
// ErrBatchTooLarge, nothing of it is written, and the DB goes on taking
// writes (the limit is lowered for the test: the real one is 2 GiB).
func TestOversizedBatchRefused(t *testing.T) {
	defer func(old int) { batchLimit = old }(batchLimit)
	batchLimit = 4 << 10
	fs := vfs.NewMem()
	db, err := Open("/db", Options{FS: fs})
	if err != nil {
		t.Fatal(err)
	}
	big := new(Batch)
	big.Put([]byte("big1"), make([]byte, 3<<10))
	big.Put([]byte("big2"), make([]byte, 3<<10))
	if err := db.Apply(big); !errors.Is(err, ErrBatchTooLarge) {
		t.Fatalf("Apply of a %d-byte batch = %v, want ErrBatchTooLarge", big.Size(), err)
	}
	if err := db.Enqueue(big).Wait(); !errors.Is(err, ErrBatchTooLarge) {
		t.Fatalf("Enqueue(...).Wait of a %d-byte batch = %v, want ErrBatchTooLarge", big.Size(), err)
	}
	if err := db.Put([]byte("small"), make([]byte, 3<<10)); err != nil {
		t.Fatalf("Put after the refusals: %v", err)
	}
	_ = db.Close()
	db, err = Open("/db", Options{FS: fs.CrashClone(true)})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, k := range []string{"big1", "big2"} {
		if _, err := db.Get([]byte(k)); !errors.Is(err, ErrNotFound) {
			t.Errorf("Get %s after a reopen = %v, want ErrNotFound", k, err)
		}
	}
	if _, err := db.Get([]byte("small")); err != nil {
		t.Errorf("Get small after a reopen: %v", err)
	}
}

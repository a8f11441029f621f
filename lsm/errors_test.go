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

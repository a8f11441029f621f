package lsm

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/minikv/minikv/lsm/vfs"
)

func TestHash64Vectors(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want uint64
	}{
		{"", 0xef46db3751d8e999},
		{"a", 0xd24ec4f1a98c6e5b},
		{"abc", 0x44bc2cf5ad770999},
		{"Nobody inspects the spammish repetition", 0xfbcea83c8a378bf1},
	} {
		if got := hash64([]byte(tc.in)); got != tc.want {
			t.Errorf("hash64(%q) = %#x, want %#x", tc.in, got, tc.want)
		}
	}
}

func TestPutGetAcrossFlushAndReopen(t *testing.T) {
	fs := vfs.NewMem()
	o := Options{FS: fs, MemTableSize: 64 << 10, BlockCacheSize: 1 << 20, LBaseMaxBytes: 256 << 10, TargetFileSize: 64 << 10}
	db, err := Open("/db", o)
	if err != nil {
		t.Fatal(err)
	}
	const n = 20000
	for i := 0; i < n; i++ {
		if err := db.Put(fmt.Appendf(nil, "key_%d", i), fmt.Appendf(nil, "value_%d", i)); err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; i < n; i += 3 {
		if err := db.Delete(fmt.Appendf(nil, "key_%d", i)); err != nil {
			t.Fatal(err)
		}
	}
	check := func(db *DB) {
		t.Helper()
		for i := 0; i < n; i++ {
			k := fmt.Appendf(nil, "key_%d", i)
			v, err := db.Get(k)
			if i%3 == 0 {
				if !errors.Is(err, ErrNotFound) {
					t.Fatalf("Get(%s) = %q, %v; want ErrNotFound", k, v, err)
				}
				continue
			}
			if err != nil || string(v) != fmt.Sprintf("value_%d", i) {
				t.Fatalf("Get(%s) = %q, %v", k, v, err)
			}
		}
		it, err := db.NewIter(nil)
		if err != nil {
			t.Fatal(err)
		}
		cnt := 0
		for ok := it.First(); ok; ok = it.Next() {
			cnt++
		}
		if err := it.Close(); err != nil {
			t.Fatal(err)
		}
		if want := n - (n+2)/3; cnt != want {
			t.Fatalf("iterated %d keys, want %d", cnt, want)
		}
	}
	check(db)
	t.Logf("%v", db.Metrics())
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db, err = Open("/db", o)
	if err != nil {
		t.Fatal(err)
	}
	check(db)
	if err := db.Compact(); err != nil {
		t.Fatal(err)
	}
	check(db)
	t.Logf("%v", db.Metrics())
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	t.Log(fs.Names())
}

// TestOpenTwiceIsRefused guards against two processes writing one database.
func TestOpenTwiceIsRefused(t *testing.T) {
	for _, fs := range []vfs.FS{vfs.NewMem(), vfs.Default} {
		dir := t.TempDir()
		db, err := Open(dir, Options{FS: fs})
		if err != nil {
			t.Fatal(err)
		}
		if db2, err := Open(dir, Options{FS: fs}); !errors.Is(err, vfs.ErrLocked) {
			t.Errorf("second Open = %v, %v; want ErrLocked", db2, err)
		}
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
		db, err = Open(dir, Options{FS: fs})
		if err != nil {
			t.Fatalf("Open after Close: %v", err)
		}
		db.Close()
	}
}

// TestSequentialLoadKeepsL0Bounded guards the L0 file-count trigger: tables
// of a sequential load never overlap, so the overlap depth alone would let
// L0 grow without bound.
func TestSequentialLoadKeepsL0Bounded(t *testing.T) {
	db, err := Open("/db", Options{FS: vfs.NewMem(), MemTableSize: 16 << 10})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for i := 0; i < 40000; i++ {
		if err := db.Put(fmt.Appendf(nil, "k%08d", i), make([]byte, 100)); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.Flush(); err != nil {
		t.Fatal(err)
	}
	limit := l0FileFactor * 4
	deadline := time.Now().Add(10 * time.Second)
	for {
		m := db.Metrics()
		if m.Levels[0].Files <= limit {
			t.Logf("flushes %d, L0 files %d", m.Flushes, m.Levels[0].Files)
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("L0 still has %d files (> %d) after %d flushes\n%v", m.Levels[0].Files, limit, m.Flushes, m)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

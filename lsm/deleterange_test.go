package lsm

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/minikv/minikv/lsm/vfs"
)

func TestDeleteRange(t *testing.T) {
	db, err := Open("/db", Options{FS: vfs.NewMem(), MemTableSize: 64 << 10})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for i := range 1000 {
		if err := db.Put(fmt.Appendf(nil, "k%04d", i), []byte("v")); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.PutExpiring([]byte("k0500x"), []byte("v"), time.Now().Add(-time.Second)); err != nil {
		t.Fatal(err)
	}
	if err := db.Flush(); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		start, end string
		nilEnd     bool
	}{
		{"k0100", "k0200", false}, // tables
		{"k0150", "k0150", false}, // empty range: nothing
		{"k0300", "k0299", false}, // start after end: nothing
		{"k0990", "", true},       // no upper bound
	} {
		end := []byte(tc.end)
		if tc.nilEnd {
			end = nil
		}
		if err := db.DeleteRange([]byte(tc.start), end); err != nil {
			t.Fatalf("DeleteRange(%q, %q): %v", tc.start, tc.end, err)
		}
	}
	for i := range 1000 {
		k := fmt.Appendf(nil, "k%04d", i)
		_, err := db.Get(k)
		deleted := i >= 100 && i < 200 || i >= 990
		if deleted != errors.Is(err, ErrNotFound) {
			t.Fatalf("Get(%s) err = %v, deleted = %v", k, err, deleted)
		}
	}
	db.Close()
	if err := db.DeleteRange([]byte("a"), []byte("b")); !errors.Is(err, ErrClosed) {
		t.Fatalf("DeleteRange after Close = %v, want ErrClosed", err)
	}
}

// TestDeleteRangeModel runs random writes, range deletions, flushes,
// compactions and reopenings against a map.
func TestDeleteRangeModel(t *testing.T) {
	for seed := uint64(1); seed <= 4; seed++ {
		rng := rand.New(rand.NewPCG(seed, 77))
		fs := vfs.NewMem()
		opts := modelOptions(fs, SyncNone, rng)
		db, err := Open("/db", opts)
		if err != nil {
			t.Fatal(err)
		}
		m := model{}
		key := func() []byte { return fmt.Appendf(nil, "k%04d", rng.IntN(2000)) }
		for i := range 6000 {
			switch r := rng.IntN(100); {
			case r < 60:
				k, v := key(), fmt.Appendf(nil, "v%d", i)
				if err := db.Put(k, v); err != nil {
					t.Fatal(err)
				}
				m[string(k)] = v
			case r < 70:
				k := key()
				if err := db.Delete(k); err != nil {
					t.Fatal(err)
				}
				delete(m, string(k))
			case r < 76:
				lo, hi := key(), key()
				if bytes.Compare(lo, hi) > 0 {
					lo, hi = hi, lo
				}
				if err := db.DeleteRange(lo, hi); err != nil {
					t.Fatalf("seed %d op %d: DeleteRange: %v", seed, i, err)
				}
				for k := range m {
					if k >= string(lo) && k < string(hi) {
						delete(m, k)
					}
				}
			case r < 90:
				lo, hi := key(), key()
				if bytes.Compare(lo, hi) > 0 {
					lo, hi = hi, lo
				}
				checkRange(t, i, db, m, lo, hi)
			case r < 95:
				if err := db.Flush(); err != nil {
					t.Fatal(err)
				}
			case r < 97:
				if err := db.Compact(); err != nil {
					t.Fatal(err)
				}
			default:
				db.Close()
				fs = fs.CrashClone(true)
				opts.FS = fs
				if db, err = Open("/db", opts); err != nil {
					t.Fatalf("seed %d op %d: reopen: %v", seed, i, err)
				}
			}
		}
		checkRange(t, -1, db, m, nil, nil)
		db.Close()
	}
}

// TestDeleteRangeIsAtomic has readers count the keys of a range while it is
// deleted: each iterator sees all of them or none.
func TestDeleteRangeIsAtomic(t *testing.T) {
	db, err := Open("/db", Options{FS: vfs.NewMem(), MemTableSize: 64 << 10})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	const n = 2000
	for i := range n {
		if err := db.Put(fmt.Appendf(nil, "r%05d", i), []byte("v")); err != nil {
			t.Fatal(err)
		}
	}
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				it, err := db.NewIter(&IterOptions{LowerBound: []byte("r"), UpperBound: []byte("s")})
				if err != nil {
					t.Error(err)
					return
				}
				count := 0
				for ok := it.First(); ok; ok = it.Next() {
					count++
				}
				it.Close()
				if count != 0 && count != n {
					t.Errorf("an iterator saw %d of %d keys: the deletion is not atomic", count, n)
					return
				}
			}
		}()
	}
	// Writers outside the range keep the commit queue busy meanwhile.
	for w := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				if err := db.Put(fmt.Appendf(nil, "w%d-%d", w, i%100), []byte("x")); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	time.Sleep(20 * time.Millisecond) // let readers see the full range first (not required)
	if err := db.DeleteRange([]byte("r"), []byte("s")); err != nil {
		t.Fatal(err)
	}
	close(stop)
	wg.Wait()
	it, _ := db.NewIter(&IterOptions{LowerBound: []byte("r"), UpperBound: []byte("s")})
	defer it.Close()
	if it.First() {
		t.Fatalf("key %s left after DeleteRange", it.Key())
	}
}

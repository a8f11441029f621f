package lsm

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/minikv/minikv/lsm/vfs"
)

// soak turns the short default tests into long ones (make soak).
var soak = flag.Bool("soak", false, "run long model, crash and corruption tests")

// TestModel runs random Put/PutExpiring/Delete/Batch/Get/Iterate operations
// against the engine and a map, with Flush, Compact, Close/Open, process
// crashes and (in SyncAlways) power losses in between, and checks every read
// against the map.
func TestModel(t *testing.T) {
	ops := 40_000
	if raceEnabled {
		ops = 15_000
	}
	if *soak {
		ops = 3_000_000
	}
	for _, mode := range []SyncMode{SyncNone, SyncAlways} {
		t.Run(mode.String(), func(t *testing.T) {
			seed := uint64(time.Now().UnixNano())
			t.Logf("seed %d", seed)
			runModel(t, seed, mode, ops)
		})
	}
}

type model map[string][]byte

func modelOptions(fs vfs.FS, mode SyncMode, rng *rand.Rand) Options {
	return Options{
		FS:                  fs,
		Sync:                mode,
		MemTableSize:        16<<10 + rng.IntN(32<<10),
		BlockSize:           256 + rng.IntN(2048),
		BlockCacheSize:      int64(rng.IntN(64 << 10)),
		BloomBitsPerKey:     []int{-1, 4, 10}[rng.IntN(3)],
		L0CompactionTrigger: 2 + rng.IntN(3),
		LBaseMaxBytes:       64 << 10,
		TargetFileSize:      uint64(8<<10 + rng.IntN(32<<10)),
	}
}

func runModel(t *testing.T, seed uint64, mode SyncMode, ops int) {
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	fs := vfs.NewMem()
	const dir = "/db"
	opts := modelOptions(fs, mode, rng)
	db, err := Open(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if db != nil {
			_ = db.Close()
		}
	}()
	m := model{}
	nkeys := 500 + rng.IntN(3000)
	key := func() []byte { return fmt.Appendf(nil, "k%05d", rng.IntN(nkeys)) }
	value := func(i int) []byte {
		v := make([]byte, rng.IntN(120))
		for j := range v {
			v[j] = byte(rng.Uint32())
		}
		return append(v, fmt.Sprint(i)...)
	}
	past, future := time.Now().Add(-time.Hour), time.Now().Add(time.Hour)
	reopen := func(next *vfs.MemFS) {
		_ = db.Close()
		fs = next
		opts = modelOptions(fs, mode, rng)
		if db, err = Open(dir, opts); err != nil {
			t.Fatalf("reopen: %v", err)
		}
	}
	for i := 0; i < ops; i++ {
		switch r := rng.IntN(1000); {
		case r < 350:
			k, v := key(), value(i)
			switch rng.IntN(10) {
			case 0:
				err = db.PutExpiring(k, v, past)
				delete(m, string(k))
			case 1:
				err = db.PutExpiring(k, v, future)
				m[string(k)] = v
			default:
				err = db.Put(k, v)
				m[string(k)] = v
			}
			if err != nil {
				t.Fatalf("op %d: Put: %v", i, err)
			}
		case r < 500:
			k := key()
			if err := db.Delete(k); err != nil {
				t.Fatalf("op %d: Delete: %v", i, err)
			}
			delete(m, string(k))
		case r < 580:
			var b Batch
			pending := model{}
			var dels []string
			for n := 1 + rng.IntN(20); n > 0; n-- {
				k := key()
				if rng.IntN(3) == 0 {
					b.Delete(k)
					delete(pending, string(k))
					dels = append(dels, string(k))
				} else {
					v := value(i)
					b.Put(k, v)
					pending[string(k)] = v
					dels = slices.DeleteFunc(dels, func(s string) bool { return s == string(k) })
				}
			}
			if err := db.Apply(&b); err != nil {
				t.Fatalf("op %d: Apply: %v", i, err)
			}
			for _, k := range dels {
				delete(m, k)
			}
			for k, v := range pending {
				m[k] = v
			}
		case r < 900:
			k := key()
			got, err := db.Get(k)
			want, ok := m[string(k)]
			if !ok {
				if !errors.Is(err, ErrNotFound) {
					t.Fatalf("op %d: Get(%s) = %q, %v; want ErrNotFound", i, k, got, err)
				}
			} else if err != nil || !bytes.Equal(got, want) {
				t.Fatalf("op %d: Get(%s) = %q, %v; want %q", i, k, got, err, want)
			}
		case r < 940:
			lo, hi := key(), key()
			if bytes.Compare(lo, hi) > 0 {
				lo, hi = hi, lo
			}
			checkRange(t, i, db, m, lo, hi)
		case r < 960:
			var lo, hi []byte
			if rng.IntN(2) == 0 {
				lo, hi = key(), key()
				if bytes.Compare(lo, hi) > 0 {
					lo, hi = hi, lo
				}
			}
			it, err := db.NewIter(&IterOptions{LowerBound: lo, UpperBound: hi})
			if err != nil {
				t.Fatalf("op %d: NewIter: %v", i, err)
			}
			checkWalk(t, i, it, m, lo, hi, rng, 50, func() []byte {
				return append(key(), "\x00"[:rng.IntN(2)]...) // between keys, too
			})
			if err := it.Close(); err != nil {
				t.Fatalf("op %d: iter: %v", i, err)
			}
		case r < 970:
			if err := db.Flush(); err != nil {
				t.Fatalf("op %d: Flush: %v", i, err)
			}
		case r < 975:
			if err := db.Compact(); err != nil {
				t.Fatalf("op %d: Compact: %v", i, err)
			}
		case r < 985:
			reopen(fs)
		case r < 995:
			// Process crash: the OS keeps every written byte.
			reopen(fs.CrashClone(true))
		default:
			if mode == SyncAlways {
				// Power loss: only synced bytes survive; with SyncAlways
				// that must include every acknowledged write.
				reopen(fs.CrashClone(false))
			}
		}
	}
	checkRange(t, ops, db, m, nil, nil)
	t.Logf("final: %d keys\n%v", len(m), db.Metrics())
}

func checkRange(t *testing.T, op int, db *DB, m model, lo, hi []byte) {
	t.Helper()
	var want []string
	for k := range m {
		if (lo == nil || k >= string(lo)) && (hi == nil || k < string(hi)) {
			want = append(want, k)
		}
	}
	slices.Sort(want)
	it, err := db.NewIter(&IterOptions{LowerBound: lo, UpperBound: hi})
	if err != nil {
		t.Fatalf("op %d: NewIter: %v", op, err)
	}
	i := 0
	for ok := it.First(); ok; ok = it.Next() {
		if i >= len(want) || string(it.Key()) != want[i] {
			w := "end"
			if i < len(want) {
				w = want[i]
			}
			t.Fatalf("op %d: iter [%q,%q) key %d = %q, want %q", op, lo, hi, i, it.Key(), w)
		}
		if !bytes.Equal(it.Value(), m[want[i]]) {
			t.Fatalf("op %d: iter value of %q = %q, want %q", op, it.Key(), it.Value(), m[want[i]])
		}
		i++
	}
	if i != len(want) {
		t.Fatalf("op %d: iter [%q,%q) saw %d keys, want %d", op, lo, hi, i, len(want))
	}
	// The same range backward.
	i = len(want) - 1
	for ok := it.Last(); ok; ok = it.Prev() {
		if i < 0 || string(it.Key()) != want[i] {
			w := "start"
			if i >= 0 {
				w = want[i]
			}
			t.Fatalf("op %d: reverse iter [%q,%q) key %d = %q, want %q", op, lo, hi, i, it.Key(), w)
		}
		if !bytes.Equal(it.Value(), m[want[i]]) {
			t.Fatalf("op %d: reverse iter value of %q = %q, want %q", op, it.Key(), it.Value(), m[want[i]])
		}
		i--
	}
	if err := it.Close(); err != nil {
		t.Fatalf("op %d: iter: %v", op, err)
	}
	if i != -1 {
		t.Fatalf("op %d: reverse iter [%q,%q) saw %d keys, want %d", op, lo, hi, len(want)-1-i, len(want))
	}
}

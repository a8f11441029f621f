package store

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"testing"
	"time"
)

func benchKeys(n int) [][]byte {
	keys := make([][]byte, n)
	for i := range keys {
		keys[i] = []byte("key:" + strconv.Itoa(i))
	}
	return keys
}

func BenchmarkGet(b *testing.B) { benchGet(b, 0) }

// BenchmarkGetTTL is BenchmarkGet over items with a deadline: each Get
// reads the clock once to check it.
func BenchmarkGetTTL(b *testing.B) { benchGet(b, Deadline(3600, time.Now())) }

// benchGet reads 16384 keys of 32-byte values stored with deadline, in turn.
func benchGet(b *testing.B, deadline int64) {
	s := newTestStore(b, Config{})
	keys := benchKeys(1 << 14)
	value := make([]byte, 32)
	for _, k := range keys {
		s.Store(ModeSet, k, value, 0, deadline, 0)
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		if _, ok := s.Get(keys[i&(len(keys)-1)]); !ok {
			b.Fatal("miss")
		}
		i++
	}
}

func BenchmarkGetParallel(b *testing.B) {
	s := newTestStore(b, Config{})
	keys := benchKeys(1 << 14)
	value := make([]byte, 32)
	for _, k := range keys {
		s.Store(ModeSet, k, value, 0, 0, 0)
	}
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		i := 0
		for pb.Next() {
			s.Get(keys[i&(len(keys)-1)])
			i++
		}
	})
}

func BenchmarkSet(b *testing.B) { benchSet(b, 0) }

// BenchmarkSetTTL is BenchmarkSet with a deadline on every write.
func BenchmarkSetTTL(b *testing.B) { benchSet(b, Deadline(3600, time.Now())) }

// benchSet overwrites 16384 keys with 32-byte values and deadline, in turn.
func benchSet(b *testing.B, deadline int64) {
	s := newTestStore(b, Config{})
	keys := benchKeys(1 << 14)
	value := make([]byte, 32)
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		if _, err := s.Store(ModeSet, keys[i&(len(keys)-1)], value, 0, deadline, 0); err != nil {
			b.Fatal(err)
		}
		i++
	}
}

// BenchmarkSetEvicting writes new keys into a full store with TTLs in
// play, so every write evicts.
func BenchmarkSetEvicting(b *testing.B) {
	s := newTestStore(b, Config{MemoryLimit: 1 << 20})
	keys := benchKeys(1 << 16)
	value := make([]byte, 32)
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		var deadline int64
		if i&1 == 0 {
			deadline = 1 << 62
		}
		if _, err := s.Store(ModeSet, keys[i&(len(keys)-1)], value, 0, deadline, 0); err != nil {
			b.Fatal(err)
		}
		i++
	}
}

// TestGetDoesNotAllocate guards the zero-allocation read path.
func TestGetDoesNotAllocate(t *testing.T) {
	s := newTestStore(t, Config{})
	s.Store(ModeSet, []byte("key"), []byte("value"), 0, 1<<62, 0)
	s.Store(ModeSet, []byte("empty"), nil, 0, 0, 0)
	key, empty, missing := []byte("key"), []byte("empty"), []byte("missing")
	if n := testing.AllocsPerRun(1000, func() {
		s.Get(key)
		s.Get(empty)
		s.Get(missing)
		s.Touch(key, 1<<62)
		s.GetAndTouch(key, 1<<62)
	}); n != 0 {
		t.Fatalf("Get/Touch/GetAndTouch allocate %.1f times per run, want 0", n)
	}
}

// BenchmarkGetRandom1M reads a million keys in random order, so almost
// every lookup misses the CPU caches: it measures the dependent memory
// reads of a lookup rather than the code path.
func BenchmarkGetRandom1M(b *testing.B) {
	const n = 1 << 20
	s := newTestStore(b, Config{MemoryLimit: 1 << 30})
	keys := benchKeys(n)
	value := make([]byte, 32)
	for _, k := range keys {
		s.Store(ModeSet, k, value, 0, 0, 0)
	}
	order := rand.New(rand.NewPCG(1, 2)).Perm(n)
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		if _, ok := s.Get(keys[order[i&(n-1)]]); !ok {
			b.Fatal("miss")
		}
		i++
	}
}

// BenchmarkGetBatch reads 100 k keys in random order, 16 at a time, the
// way a server runs a pipelined batch: plain, and after Prefetch of the
// batch's keys, which overlaps the lookups' cache misses. The keys sit
// back to back in one buffer, like requests in a read buffer. ns/op is per
// batch of 16.
func BenchmarkGetBatch(b *testing.B) {
	for _, n := range []int{1000, 10000, 30000, 100000, 1000000} {
		b.Run(fmt.Sprint("keys=", n), func(b *testing.B) { benchGetBatch(b, n) })
	}
}

// benchGetBatch reads batches of 16 of n keys in random order, with and
// without Prefetch: where the keys' slots and records fit in the cache
// the prefetch is pure cost (Store.PrefetchWorthIt).
func benchGetBatch(b *testing.B, n int) {
	const batch = 16
	s := newTestStore(b, Config{MemoryLimit: 1 << 30})
	value := make([]byte, 32)
	for _, k := range benchKeys(n) {
		s.Store(ModeSet, k, value, 0, 0, 0)
	}
	var buf []byte
	var keys [][]byte
	for _, i := range rand.New(rand.NewPCG(1, 2)).Perm(n) {
		start := len(buf)
		buf = strconv.AppendInt(append(buf, "key:"...), int64(i), 10)
		keys = append(keys, buf[start:len(buf):len(buf)])
	}
	for _, prefetch := range []bool{false, true} {
		name := "plain"
		if prefetch {
			name = "prefetch"
		}
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				if i+batch > n {
					i = 0
				}
				ks := keys[i : i+batch]
				if prefetch {
					s.Prefetch(ks)
				}
				for _, k := range ks {
					if _, ok := s.Get(k); !ok {
						b.Fatal("miss")
					}
				}
				i += batch
			}
		})
	}
}

// BenchmarkScanItems walks a store of 1 M short strings with
// ScanItemsFreq, as a snapshot does (rdb.Save).
func BenchmarkScanItems(b *testing.B) {
	st := New(Config{MemoryLimit: 4 << 30})
	defer st.Close()
	v := []byte("value-xxxxxxxxxxxxxxxxxxxxxxxxxxxx")
	for i := range 1_000_000 {
		_, _ = st.Store(ModeSet, []byte("k:"+strconv.Itoa(i)), v, 0, 0, 0)
	}
	n := 0
	for b.Loop() {
		for i := range st.NumShards() {
			st.ScanItemsFreq(i, func(k []byte, it Item, _ Encoding, _ uint8) bool {
				n += len(k) + len(it.Value)
				return true
			})
		}
	}
	if n == 0 {
		b.Fatal("walked nothing")
	}
}

package store

import (
	"runtime"
	"strconv"
	"testing"
)

// TestCollectionChargeMatchesHeap extends TestItemOverheadMatchesHeap to
// hashes: what a hash is charged (Stats().Bytes) must be what it costs on
// the Go heap, small (a listpack in the record) or big (a table): not
// more than half again, and not less, but for the records a hash leaves
// dead in its segments when it grows out of its listpack, which wait for
// compaction uncharged like every overwritten item (at most a quarter of
// a shard's segment bytes; here under a tenth of the total).
func TestCollectionChargeMatchesHeap(t *testing.T) {
	for _, tc := range []struct {
		name           string
		hashes, fields int
	}{
		{"small 100000x10", 100000, 10},
		{"big 100x5000", 100, 5000},
		{"one of 500000", 1, 500000},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var h Hash
			key := make([]byte, 0, 16)
			field := make([]byte, 0, 16)
			checkChargeAgainstHeap(t, tc.hashes*tc.fields, "field", func(s *Store) {
				for i := range tc.hashes {
					key = strconv.AppendInt(append(key[:0], 'h'), int64(100_000_000+i), 10)
					if err := s.UpdateHash(key, &h, func() error {
						for j := range tc.fields {
							field = strconv.AppendInt(append(field[:0], 'f'), int64(j), 10)
							h.Set(field, []byte("a value of 20 bytes."))
						}
						return nil
					}); err != nil {
						t.Fatal(err)
					}
				}
			})
		})
	}
}

// checkChargeAgainstHeap runs load on a fresh Store and checks that what
// the Store charges (Stats().Bytes) for the n elements it stored is
// between 0.9 and 1.5 times the memory the load took: the Go heap it grew
// by plus the bytes it mapped outside the heap (bigmem.go), which are the
// large slices' capacities exactly. The bound of
// TestCollectionChargeMatchesHeap and its siblings for the other kinds.
func checkChargeAgainstHeap(t *testing.T, n int, unit string, load func(s *Store)) {
	t.Helper()
	s := New(Config{MemoryLimit: 1 << 40, SweepInterval: -1})
	defer s.Close()
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	mapped0 := s.Stats().OffHeap
	load(s)
	runtime.GC()
	runtime.ReadMemStats(&after)
	heap := float64(int64(after.HeapAlloc) - int64(before.HeapAlloc))
	st := s.Stats()
	mapped := float64(st.OffHeap - mapped0)
	mem, charged := heap+mapped, float64(st.Bytes)
	runtime.KeepAlive(s)
	t.Logf("heap %.0f B + mapped %.0f B, charged %.0f B (%.2f), %.1f B per %s charged", heap, mapped, charged, charged/mem, charged/float64(n), unit)
	if charged < 0.9*mem || charged > 1.5*mem {
		t.Errorf("charged %.0f B for %.0f B of heap and %.0f B mapped: want between 0.9 and 1.5 times", charged, heap, mapped)
	}
}

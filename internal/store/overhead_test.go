package store

import (
	"runtime"
	"strconv"
	"testing"
)

// heapPerItem stores n items with keys of 10 bytes and values of vlen bytes
// and returns the heap growth per item beyond the key and value bytes.
func heapPerItem(t *testing.T, n, vlen int, deadline int64) float64 {
	t.Helper()
	s := New(Config{MemoryLimit: 1 << 40, SweepInterval: -1})
	defer s.Close()
	key := make([]byte, 0, 16)
	value := make([]byte, vlen)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for i := range n {
		key = strconv.AppendInt(append(key[:0], 'k'), int64(100_000_000+i), 10)
		if _, err := s.Store(ModeSet, key, value, 0, deadline, 0); err != nil {
			t.Fatalf("Store(%q): %v", key, err)
		}
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	if got := s.Stats().Items; got != int64(n) {
		t.Fatalf("Items = %d, want %d", got, n)
	}
	runtime.KeepAlive(s)
	return float64(int64(after.HeapAlloc)-int64(before.HeapAlloc))/float64(n) - float64(10+vlen)
}

// TestItemOverheadMatchesHeap guards ItemOverhead against drifting from
// what an item really costs on the Go heap: the charge must never be below
// the real cost of any layout (MemoryLimit would then not bound memory).
// It must be within 70% of the cost of an item with a deadline, the layout
// it is set from, and within 60% for items without one, which cost 8 B
// less (see ItemOverhead for why one constant cannot be closer to both).
func TestItemOverheadMatchesHeap(t *testing.T) {
	const n = 200_000
	for _, tc := range []struct {
		name     string
		vlen     int
		deadline int64
		lo       float64 // the least share of the charge the item must cost
	}{
		{"value=10", 10, 0, 0.60},
		{"value=30", 30, 0, 0.60},
		{"value=100", 100, 0, 0.60},
		{"value=30,ttl", 30, 1 << 62, 0.70},
		{"value=100,ttl", 100, 1 << 62, 0.70},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := heapPerItem(t, n, tc.vlen, tc.deadline)
			t.Logf("measured %.1f B/item beyond key+value, ItemOverhead = %d", got, ItemOverhead)
			if lo, hi := tc.lo*ItemOverhead, 1.0*ItemOverhead; got < lo || got > hi {
				t.Errorf("measured overhead %.1f B/item, want between %.0f%% and 100%% of ItemOverhead %d", got, 100*tc.lo, ItemOverhead)
			}
		})
	}
}

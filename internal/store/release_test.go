package store

import (
	"strconv"
	"sync/atomic"
	"testing"
	"time"
)

// TestShrinkReleasesMemory: when the store's segments shrink by
// releaseAfterShrink or more below their high-water mark, the freed
// memory goes back to the system (debug.FreeOSMemory, in the background):
// after a FlushAll, after deleting key by key (FLUSHDB in a database
// other than 0), after a mass expiry reclaimed by the sweeper. A small
// flush does not, and neither do overwrites, which drop segments as fast
// as they fill new ones.
func TestShrinkReleasesMemory(t *testing.T) {
	value := make([]byte, 1000)
	const many = releaseAfterShrink/1000 + 1000 // past the threshold
	put := func(t *testing.T, s *Store, n int, deadline int64) {
		for i := range n {
			if _, err := s.Store(ModeSet, []byte("k"+strconv.Itoa(i)), value, 0, deadline, 0); err != nil {
				t.Fatal(err)
			}
		}
	}
	released := func(t *testing.T, calls *atomic.Int32, what string) {
		t.Helper()
		for deadline := time.Now().Add(30 * time.Second); calls.Load() == 0; time.Sleep(time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("%s did not release memory", what)
			}
		}
	}
	newStore := func(t *testing.T, sweep time.Duration) (*Store, *atomic.Int32) {
		calls := new(atomic.Int32)
		s := newTestStore(t, Config{MemoryLimit: 1 << 30, SweepInterval: sweep})
		s.freeOS = func() { calls.Add(1) }
		return s, calls
	}

	t.Run("flush", func(t *testing.T) {
		s, calls := newStore(t, -1)
		put(t, s, 1000, 0) // about 1 MB
		s.FlushAll(0)
		time.Sleep(50 * time.Millisecond)
		if n := calls.Load(); n != 0 {
			t.Fatalf("a flush of 1 MB released memory %d times", n)
		}
		put(t, s, many, 0)
		s.FlushAll(0)
		released(t, calls, "a flush of 64 MB")
	})
	t.Run("deletes", func(t *testing.T) {
		s, calls := newStore(t, -1)
		put(t, s, many, 0)
		for i := range many {
			if err := s.Delete([]byte("k" + strconv.Itoa(i))); err != nil {
				t.Fatal(err)
			}
		}
		released(t, calls, "deleting 64 MB key by key")
	})
	t.Run("expiry", func(t *testing.T) {
		// The items get their deadline, already past, once all are
		// stored, and the sweeper's passes run here: items expiring
		// while a slow machine still stores the rest would be reclaimed
		// as they go (by a sweeper, or by the store's own writes), and
		// the store would never be 64 MB below its peak.
		s, calls := newStore(t, -1)
		put(t, s, many, 0)
		past := time.Now().UnixMilli() - 1
		for i := range many {
			s.Touch([]byte("k"+strconv.Itoa(i)), past)
		}
		for s.sweep() {
		}
		released(t, calls, "the sweeper reclaiming 64 MB of expired items")
	})
	t.Run("overwrites", func(t *testing.T) {
		s, calls := newStore(t, -1)
		for range 4 { // 256 MB written over the same 64 MB of keys
			put(t, s, many, 0)
		}
		time.Sleep(50 * time.Millisecond)
		if n := calls.Load(); n != 0 {
			t.Fatalf("overwrites released memory %d times", n)
		}
	})
}

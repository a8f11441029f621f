package durable

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/minikv/minikv/internal/store"
)

// warmKeys writes n keys of 100-byte values to a durable store in dir and
// closes it.
func warmKeys(t *testing.T, dir string, n int) {
	t.Helper()
	s := openStore(t, dir, store.Config{SweepInterval: -1, MemoryLimit: 1 << 30})
	for i := range n {
		mustStore(t, s, fmt.Sprintf("k%06d", i), warmValue(i, "old"), 0, 0)
	}
	s.close(t)
}

func warmValue(i int, tag string) string {
	return fmt.Sprintf("%s-%06d-%s", tag, i, strings.Repeat("v", 86))
}

// warmedUp waits for the warm-up to end (a bound for a broken store).
func warmedUp(t *testing.T, s *durableStore) store.DiskStats {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(5 * time.Millisecond) {
		if ds := s.DiskStats(); ds.WarmTime > 0 {
			return ds
		}
		if time.Now().After(deadline) {
			t.Fatal("the warm-up did not end within a minute")
		}
	}
}

// TestWarmUpLoadsTheDisk: after a restart the store loads what the disk
// holds back into memory in the background, so reads find it in memory
// (no disk hit), with the values, and DiskStats counts what it loaded.
func TestWarmUpLoadsTheDisk(t *testing.T) {
	const n = 20000
	dir := t.TempDir()
	warmKeys(t, dir, n)
	s := openStore(t, dir, store.Config{SweepInterval: -1, MemoryLimit: 1 << 30})
	defer s.close(t)
	ds := warmedUp(t, s)
	if ds.Warmed != n || s.Stats().Items != n {
		t.Fatalf("warm-up loaded %d items, %d in memory; want %d", ds.Warmed, s.Stats().Items, n)
	}
	for i := range n {
		if it, ok := s.Get(fmt.Appendf(nil, "k%06d", i)); !ok || string(it.Value) != warmValue(i, "old") {
			t.Fatalf("k%06d = %q, %v", i, it.Value, ok)
		}
	}
	if hits := s.DiskStats().Hits; hits != 0 {
		t.Errorf("%d reads went to the disk after the warm-up", hits)
	}
}

// TestWarmUpStopsShortOfTheLimit: with a memory limit below the data, the
// warm-up fills up to 90 % of it and evicts nothing; the rest is read
// from the disk when asked for.
func TestWarmUpStopsShortOfTheLimit(t *testing.T) {
	const n, limit = 20000, 1 << 20
	dir := t.TempDir()
	warmKeys(t, dir, n)
	s := openStore(t, dir, store.Config{SweepInterval: -1, MemoryLimit: limit})
	defer s.close(t)
	ds := warmedUp(t, s)
	st := s.Stats()
	if ds.Warmed == 0 || st.Bytes > limit*9/10+200 || st.Bytes < limit*8/10 || st.Evictions != 0 {
		t.Fatalf("warm-up loaded %d items, %d bytes of a %d limit, %d evictions; want 80-90 %% of the limit, none evicted",
			ds.Warmed, st.Bytes, limit, st.Evictions)
	}
	if it, ok := s.Get(fmt.Appendf(nil, "k%06d", n-1)); !ok || string(it.Value) != warmValue(n-1, "old") {
		t.Fatalf("the last key, beyond the warm-up = %q, %v", it.Value, ok)
	}
}

// TestWarmUpNeverResurrects: writes and deletes made while the warm-up
// runs win over what it loads: a key deleted after the start stays
// deleted, one overwritten keeps its new value, whichever came first.
func TestWarmUpNeverResurrects(t *testing.T) {
	const n = 20000
	dir := t.TempDir()
	warmKeys(t, dir, n)
	s := openStore(t, dir, store.Config{SweepInterval: -1, MemoryLimit: 1 << 30})
	defer s.close(t)
	for i := 1; i < n; i += 2 { // racing the warm-up, which starts at the first key too
		k := fmt.Appendf(nil, "k%06d", i)
		if i%4 == 1 {
			if err := s.Delete(k); err != nil {
				t.Fatal(err)
			}
		} else {
			mustStore(t, s, string(k), warmValue(i, "new"), 0, 0)
		}
	}
	warmedUp(t, s)
	for i := range n {
		it, ok := s.Get(fmt.Appendf(nil, "k%06d", i))
		switch {
		case i%2 == 0 && (!ok || string(it.Value) != warmValue(i, "old")):
			t.Fatalf("k%06d (untouched) = %q, %v", i, it.Value, ok)
		case i%4 == 1 && ok:
			t.Fatalf("k%06d (deleted) = %q after the warm-up", i, it.Value)
		case i%4 == 3 && (!ok || string(it.Value) != warmValue(i, "new")):
			t.Fatalf("k%06d (overwritten) = %q, %v", i, it.Value, ok)
		}
	}
}

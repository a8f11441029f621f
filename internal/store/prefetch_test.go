package store

import (
	"fmt"
	"sync"
	"testing"
)

// TestPrefetchChangesNothing: Prefetch is a hint. Present, absent, more
// than MaxPrefetch and empty keys leave every item, count and byte total as
// they were, allocate nothing, and a later Get sees the same thing.
func TestPrefetchChangesNothing(t *testing.T) {
	s := newTestStore(t, Config{})
	var keys [][]byte
	for i := range 100 {
		k := []byte(fmt.Sprintf("key:%d", i))
		keys = append(keys, k)
		if i%2 == 0 {
			if _, err := s.Store(ModeSet, k, []byte(fmt.Sprintf("value %d", i)), uint32(i), 0, 0); err != nil {
				t.Fatal(err)
			}
		}
	}
	keys = append(keys, []byte{}, nil)
	before := s.Stats()
	if n := testing.AllocsPerRun(10, func() { s.Prefetch(keys) }); n != 0 {
		t.Errorf("Prefetch allocates %.1f times per call", n)
	}
	s.Prefetch(keys[:1])
	s.Prefetch(nil)
	if after := s.Stats(); after.Items != before.Items || after.Bytes != before.Bytes {
		t.Errorf("stats after Prefetch %+v, before %+v", after, before)
	}
	for i, k := range keys[:100] {
		it, ok := s.Get(k)
		if want := i%2 == 0; ok != want {
			t.Fatalf("Get(%q) found %v, want %v", k, ok, want)
		}
		if ok && (string(it.Value) != fmt.Sprintf("value %d", i) || it.Flags != uint32(i)) {
			t.Fatalf("Get(%q) = %q flags %d", k, it.Value, it.Flags)
		}
	}
}

// TestPrefetchWhileWriting runs Prefetch against writers that grow the
// index, overwrite, delete and compact, so the race detector sees every
// read Prefetch makes (it takes the shard locks; only the prefetch
// instruction itself runs outside them).
func TestPrefetchWhileWriting(t *testing.T) {
	s := newTestStore(t, Config{MemoryLimit: 4 << 20})
	keys := benchKeys(4096)
	var wg sync.WaitGroup
	for w := range 2 {
		wg.Go(func() {
			for i := range 20000 {
				k := keys[(i*7+w)%len(keys)]
				if i%5 == 0 {
					s.Delete(k)
				} else {
					s.Store(ModeSet, k, make([]byte, i%200), 0, 0, 0)
				}
			}
		})
	}
	wg.Go(func() {
		for i := range 20000 {
			j := i * 16 % (len(keys) - MaxPrefetch)
			s.Prefetch(keys[j : j+MaxPrefetch])
		}
	})
	wg.Wait()
}

// TestPrefetchPaysOnlyPastTheCache: with no sweeper the store always
// says Prefetch pays; the sweeper's tick says it does not while the store
// is small, and does again once it holds more than prefetchMinItems.
func TestPrefetchPaysOnlyPastTheCache(t *testing.T) {
	s := newTestStore(t, Config{MemoryLimit: 1 << 30})
	if !s.PrefetchPays() {
		t.Fatal("PrefetchPays before any estimate = false")
	}
	mustStore(t, s, ModeSet, "one", "v", 0, 0)
	s.sweep()
	if s.PrefetchPays() {
		t.Fatal("PrefetchPays with one item = true")
	}
	for _, k := range benchKeys(2 * prefetchMinItems) {
		if _, err := s.Store(ModeSet, k, []byte("v"), 0, 0, 0); err != nil {
			t.Fatal(err)
		}
	}
	s.sweep()
	if !s.PrefetchPays() {
		t.Fatalf("PrefetchPays with %d items = false", 2*prefetchMinItems)
	}
}

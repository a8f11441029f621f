package store

import (
	"bytes"
	"fmt"
	"testing"
	"unsafe"
)

// newTestStore returns a Store closed at the end of the test. The sweeper
// is off unless cfg asks for it, so tests decide when expiry happens.
func newTestStore(t testing.TB, cfg Config) *Store {
	t.Helper()
	if cfg.SweepInterval == 0 {
		cfg.SweepInterval = -1
	}
	s := New(cfg)
	t.Cleanup(func() { s.Close() })
	return s
}

// mustStore stores or fails the test.
func mustStore(t testing.TB, s *Store, mode Mode, key, value string, flags uint32, deadline int64) uint64 {
	t.Helper()
	cas, err := s.Store(mode, []byte(key), []byte(value), flags, deadline, 0)
	if err != nil {
		t.Fatalf("Store(%v, %q, %q) = %v", mode, key, value, err)
	}
	return cas
}

// sameShardKeys returns n distinct keys of the given length that land in
// one shard of s, all with the same prefix.
func sameShardKeys(s *Store, prefix string, n int) []string {
	var keys []string
	var want *shard
	for i := 0; len(keys) < n; i++ {
		k := fmt.Sprintf("%s%06d", prefix, i)
		sh := s.shardFor([]byte(k))
		if want == nil {
			want = sh
		}
		if sh == want {
			keys = append(keys, k)
		}
	}
	return keys
}

// otherShardKeys returns n keys of the form o%06d that are not in key's
// shard.
func otherShardKeys(s *Store, key string, n int) []string {
	var keys []string
	for i := 0; len(keys) < n; i++ {
		k := fmt.Sprintf("o%06d", i)
		if s.shardFor([]byte(k)) != s.shardFor([]byte(key)) {
			keys = append(keys, k)
		}
	}
	return keys
}

// lruOrder lists the keys of key's shard from most to least recently used.
func lruOrder(s *Store, key string) []string {
	sh := s.shardFor([]byte(key))
	sh.mu.Lock()
	defer sh.mu.Unlock()
	var keys []string
	for it := sh.head; it != nil; it = it.next {
		keys = append(keys, it.key())
	}
	return keys
}

// peek returns the item stored under key, dead or alive, without touching
// recency, counters or expiry.
func peek(s *Store, key string) (Item, bool) {
	sh := s.shardFor([]byte(key))
	sh.mu.Lock()
	defer sh.mu.Unlock()
	it := sh.items[key]
	if it == nil {
		return Item{}, false
	}
	return it.snapshot(), true
}

// keyState is everything a failed write must leave as it was.
type keyState struct {
	item  Item
	ok    bool
	lru   []string
	stats Stats
}

func captureKey(s *Store, key string) keyState {
	it, ok := peek(s, key)
	return keyState{item: it, ok: ok, lru: lruOrder(s, key), stats: s.Stats()}
}

func (a keyState) equal(b keyState) bool {
	return a.ok == b.ok && bytes.Equal(a.item.Value, b.item.Value) &&
		a.item.Flags == b.item.Flags && a.item.CAS == b.item.CAS &&
		a.item.Deadline == b.item.Deadline &&
		fmt.Sprint(a.lru) == fmt.Sprint(b.lru) && a.stats == b.stats
}

func (a keyState) String() string {
	return fmt.Sprintf("{item:%q/%d/cas%d/dl%d ok:%v lru:%v stats:%+v}",
		a.item.Value, a.item.Flags, a.item.CAS, a.item.Deadline, a.ok, a.lru, a.stats)
}

// checkInvariants verifies the accounting and the shard indexes: every
// shard's byte count is the exact sum over its items, the global counter
// and Stats agree with it, the LRU list and the expiry heap hold exactly
// the shard's items (the heap those with a deadline), and the heap is
// ordered.
func checkInvariants(t testing.TB, s *Store) {
	t.Helper()
	var total, items int64
	for i := range s.shards {
		sh := &s.shards[i]
		sh.mu.Lock()
		var bytes int64
		inHeap := 0
		for k, it := range sh.items {
			if k != it.key() {
				t.Fatalf("shard %d: map key %q holds item with key %q", i, k, it.key())
			}
			bytes += int64(len(k)) + int64(it.vlen) + ItemOverhead
			if it.deadline != 0 {
				inHeap++
				if it.heapIdx < 0 || int(it.heapIdx) >= len(sh.expiry) || sh.expiry[it.heapIdx] != it {
					t.Fatalf("shard %d: item %q with deadline %d not at its heap index %d", i, k, it.deadline, it.heapIdx)
				}
			} else if it.heapIdx != -1 {
				t.Fatalf("shard %d: item %q without deadline has heap index %d", i, k, it.heapIdx)
			}
		}
		if bytes != sh.bytes {
			t.Fatalf("shard %d: bytes = %d, sum over items = %d", i, sh.bytes, bytes)
		}
		if inHeap != len(sh.expiry) {
			t.Fatalf("shard %d: heap has %d entries, %d items have deadlines", i, len(sh.expiry), inHeap)
		}
		for j := 1; j < len(sh.expiry); j++ {
			if sh.expiry[(j-1)/2].deadline > sh.expiry[j].deadline {
				t.Fatalf("shard %d: heap out of order at %d", i, j)
			}
		}
		wantNext := int64(1<<63 - 1)
		if len(sh.expiry) > 0 {
			wantNext = sh.expiry[0].deadline
		}
		if got := sh.nextExpiry.Load(); got != wantNext {
			t.Fatalf("shard %d: nextExpiry = %d, want %d", i, got, wantNext)
		}
		n := 0
		var prev *item
		for it := sh.head; it != nil; it = it.next {
			if it.prev != prev || sh.items[it.key()] != it {
				t.Fatalf("shard %d: LRU list broken at %q", i, it.key())
			}
			prev = it
			n++
		}
		if n != len(sh.items) || sh.tail != prev {
			t.Fatalf("shard %d: LRU list has %d items, map %d", i, n, len(sh.items))
		}
		total += bytes
		items += int64(len(sh.items))
		sh.mu.Unlock()
	}
	if got := s.used.Load(); got != total {
		t.Fatalf("global byte counter = %d, sum over items = %d", got, total)
	}
	if total > s.limit {
		t.Fatalf("bytes %d above the limit %d", total, s.limit)
	}
	st := s.Stats()
	if st.Bytes != total || st.Items != items {
		t.Fatalf("Stats() = {Items:%d Bytes:%d}, want {Items:%d Bytes:%d}", st.Items, st.Bytes, items, total)
	}
}

// unsafeBytes views n bytes at p.
func unsafeBytes(p *byte, n int) []byte {
	return unsafe.Slice(p, n)
}

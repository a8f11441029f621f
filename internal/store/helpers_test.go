package store

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"testing"
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
	for ref := sh.head; ref != 0; ref = sh.at(ref).next {
		keys = append(keys, string(sh.key(sh.at(ref))))
	}
	return keys
}

// peek returns the item stored under key, dead or alive, without touching
// recency, counters or expiry.
func peek(s *Store, key string) (Item, bool) {
	sh := s.shardFor([]byte(key))
	sh.mu.Lock()
	defer sh.mu.Unlock()
	it := sh.findLocked([]byte(key))
	if it == nil {
		return Item{}, false
	}
	return sh.snapshot(it), true
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
		inHeap, inIndex := 0, 0
		segLive := make(map[uint32]uint32)
		for _, v := range sh.index.slots {
			if v == 0 {
				continue
			}
			inIndex++
			it := sh.at(uint32(v))
			k := string(sh.key(it))
			if got := sh.findLocked([]byte(k)); got != it {
				t.Fatalf("shard %d: index slot for %q does not find its item", i, k)
			}
			if tag := sh.tag([]byte(k)); uint32(v>>32) != tag {
				t.Fatalf("shard %d: item %q under tag %x, want %x", i, k, v>>32, tag)
			}
			if hdr := binary.LittleEndian.Uint32(sh.segs[it.seg].buf[it.off:]); hdr != it.self {
				t.Fatalf("shard %d: record of %q has header %x, want ref %x", i, k, hdr, it.self)
			}
			segLive[it.seg] += hdrLen + it.klen + it.vlen
			bytes += int64(len(k)) + int64(it.vlen) + ItemOverhead
			if it.deadline != 0 {
				inHeap++
				if it.heapIdx < 0 || int(it.heapIdx) >= len(sh.expiry) || sh.expiry[it.heapIdx] != it.self {
					t.Fatalf("shard %d: item %q with deadline %d not at its heap index %d", i, k, it.deadline, it.heapIdx)
				}
			} else if it.heapIdx != -1 {
				t.Fatalf("shard %d: item %q without deadline has heap index %d", i, k, it.heapIdx)
			}
		}
		if inIndex != sh.len() {
			t.Fatalf("shard %d: index holds %d items, counts %d", i, inIndex, sh.len())
		}
		var segBytes, dead int64
		for j, sg := range sh.segs {
			if sg.buf == nil {
				continue
			}
			if sg.live != segLive[uint32(j)] {
				t.Fatalf("shard %d: segment %d live = %d, records of live items = %d", i, j, sg.live, segLive[uint32(j)])
			}
			segBytes += int64(len(sg.buf))
			if uint32(j) == sh.active {
				dead += int64(sg.used) - int64(sg.live)
			} else {
				dead += int64(len(sg.buf)) - int64(sg.live)
			}
		}
		if segBytes != sh.segBytes || dead != sh.dead {
			t.Fatalf("shard %d: segBytes, dead = %d, %d; want %d, %d", i, sh.segBytes, sh.dead, segBytes, dead)
		}
		if bytes != sh.bytes {
			t.Fatalf("shard %d: bytes = %d, sum over items = %d", i, sh.bytes, bytes)
		}
		if inHeap != len(sh.expiry) {
			t.Fatalf("shard %d: heap has %d entries, %d items have deadlines", i, len(sh.expiry), inHeap)
		}
		for j := 1; j < len(sh.expiry); j++ {
			if sh.heapDeadline((j-1)/2) > sh.heapDeadline(j) {
				t.Fatalf("shard %d: heap out of order at %d", i, j)
			}
		}
		wantNext := int64(1<<63 - 1)
		if len(sh.expiry) > 0 {
			wantNext = sh.heapDeadline(0)
		}
		if got := sh.nextExpiry.Load(); got != wantNext {
			t.Fatalf("shard %d: nextExpiry = %d, want %d", i, got, wantNext)
		}
		n := 0
		var prev uint32
		for ref := sh.head; ref != 0; ref = sh.at(ref).next {
			it := sh.at(ref)
			if it.prev != prev || sh.findLocked(sh.key(it)) != it {
				t.Fatalf("shard %d: LRU list broken at %q", i, sh.key(it))
			}
			prev = ref
			n++
		}
		if n != sh.len() || sh.tail != prev {
			t.Fatalf("shard %d: LRU list has %d items, index %d", i, n, sh.len())
		}
		total += bytes
		items += int64(sh.len())
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

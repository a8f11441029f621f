package store

import (
	"bytes"
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
		sh := s.shardFor(s.hash([]byte(k)))
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
		if s.shardFor(s.hash([]byte(k))) != s.shardFor(s.hash([]byte(key))) {
			keys = append(keys, k)
		}
	}
	return keys
}

// recency lists the live keys of key's shard in the order the eviction
// walk will meet them, each with its access count ("k1:0").
func recency(s *Store, key string) []string {
	sh := s.shardFor(s.hash([]byte(key)))
	sh.mu.Lock()
	defer sh.mu.Unlock()
	var keys []string
	var e entry
	for seg := sh.oldest; seg != noSeg; seg = sh.segs[seg].next {
		sg := &sh.segs[seg]
		for off := sg.hand; off < sg.used; off += e.size() {
			decodeHeader(sg, off, &e)
			e.seg = seg
			if e.info&infoDead == 0 {
				keys = append(keys, fmt.Sprintf("%s:%d", sh.key(&e), e.freq()))
			}
		}
	}
	return keys
}

// peek returns the item stored under key, dead or alive, without touching
// recency, counters or expiry.
func peek(s *Store, key string) (Item, bool) {
	h := s.hash([]byte(key))
	sh := s.shardFor(h)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	var e entry
	if !sh.findLocked(h, []byte(key), &e) {
		return Item{}, false
	}
	return sh.snapshot(&e), true
}

// keyState is everything a failed write must leave as it was.
type keyState struct {
	item    Item
	ok      bool
	recency []string
	stats   Stats
}

func captureKey(s *Store, key string) keyState {
	it, ok := peek(s, key)
	return keyState{item: it, ok: ok, recency: recency(s, key), stats: s.Stats()}
}

func (a keyState) equal(b keyState) bool {
	return a.ok == b.ok && bytes.Equal(a.item.Value, b.item.Value) &&
		a.item.Flags == b.item.Flags && a.item.CAS == b.item.CAS &&
		a.item.Deadline == b.item.Deadline &&
		fmt.Sprint(a.recency) == fmt.Sprint(b.recency) && a.stats == b.stats
}

func (a keyState) String() string {
	return fmt.Sprintf("{item:%q/%d/cas%d/dl%d ok:%v recency:%v stats:%+v}",
		a.item.Value, a.item.Flags, a.item.CAS, a.item.Deadline, a.ok, a.recency, a.stats)
}

// checkInvariants verifies the accounting, the segments and the index of
// every shard: each live record is found through the index under its own
// tag and each slot names a live record; segment byte counts, deadline
// counts and summaries agree with a walk over the records; the segment list
// holds every segment once; the index keeps the Robin Hood order; the
// shard's byte count is the exact sum over its items; and the global
// counter and Stats agree with it.
func checkInvariants(t testing.TB, s *Store) {
	t.Helper()
	var total, items int64
	for i := range s.shards {
		sh := &s.shards[i]
		sh.mu.Lock()
		bytes, n := checkShard(t, s, i, sh)
		total += bytes
		items += int64(n)
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

func checkShard(t testing.TB, s *Store, i int, sh *shard) (int64, int) {
	t.Helper()
	var bytes int64
	live := 0
	minDeadline := int64(1<<63 - 1)
	inList := make(map[uint32]bool)
	prev := noSeg
	for seg := sh.oldest; seg != noSeg; seg = sh.segs[seg].next {
		if inList[seg] || sh.segs[seg].prev != prev {
			t.Fatalf("shard %d: segment list broken at %d", i, seg)
		}
		inList[seg] = true
		prev = seg
	}
	if sh.newest != prev {
		t.Fatalf("shard %d: newest = %d, list ends at %d", i, sh.newest, prev)
	}
	var segBytes, dead int64
	var e, f entry
	for j := range sh.segs {
		seg := uint32(j)
		sg := &sh.segs[j]
		if sg.buf == nil {
			if inList[seg] {
				t.Fatalf("shard %d: free segment %d in the list", i, j)
			}
			continue
		}
		if !inList[seg] {
			t.Fatalf("shard %d: segment %d not in the list", i, j)
		}
		var segLive, ttl uint32
		off := uint32(0)
		for off < sg.used {
			decodeHeader(sg, off, &e)
			e.seg = seg
			off += e.size()
			if e.info&infoDead != 0 {
				continue
			}
			k := sh.key(&e)
			h := s.hash(k)
			if s.shardFor(h) != sh {
				t.Fatalf("shard %d: record %q belongs to another shard", i, k)
			}
			if !sh.findLocked(h, k, &f) || f.seg != e.seg || f.off != e.off {
				t.Fatalf("shard %d: live record %q at %d/%d not found through the index (found %d/%d)", i, k, e.seg, e.off, f.seg, f.off)
			}
			live++
			segLive += e.size()
			bytes += e.cost()
			if e.deadline != 0 {
				ttl++
				minDeadline = min(minDeadline, e.deadline)
				if sg.minDeadline > e.deadline {
					t.Fatalf("shard %d: segment %d minDeadline %d above %q's %d", i, j, sg.minDeadline, k, e.deadline)
				}
			}
			if sg.minCAS > e.cas {
				t.Fatalf("shard %d: segment %d minCAS %d above %q's %d", i, j, sg.minCAS, k, e.cas)
			}
		}
		if off != sg.used {
			t.Fatalf("shard %d: segment %d records end at %d, used %d", i, j, off, sg.used)
		}
		if sg.live != segLive || sg.ttl != ttl {
			t.Fatalf("shard %d: segment %d live, ttl = %d, %d; records say %d, %d", i, j, sg.live, sg.ttl, segLive, ttl)
		}
		if sg.big && sg.used != uint32(len(sg.buf)) {
			t.Fatalf("shard %d: big segment %d uses %d of %d bytes", i, j, sg.used, len(sg.buf))
		}
		segBytes += int64(len(sg.buf))
		if seg == sh.active {
			dead += int64(sg.used) - int64(sg.live)
		} else {
			dead += int64(len(sg.buf)) - int64(sg.live)
		}
	}
	if segBytes != sh.segBytes || dead != sh.dead {
		t.Fatalf("shard %d: segBytes, dead = %d, %d; want %d, %d", i, sh.segBytes, sh.dead, segBytes, dead)
	}
	ix := &sh.index
	inIndex := 0
	for j, v := range ix.slots {
		if v == 0 {
			continue
		}
		inIndex++
		seg, off := slotSeg(v), slotOff(v)
		if int(seg) >= len(sh.segs) || off >= sh.segs[seg].used {
			t.Fatalf("shard %d: slot %d points at %d/%d, outside the segments", i, j, seg, off)
		}
		decodeHeader(&sh.segs[seg], off, &e)
		e.seg = seg
		if e.info&infoDead != 0 {
			t.Fatalf("shard %d: slot %d points at a dead record", i, j)
		}
		if tag := tagOf(s.hash(sh.key(&e))); slotTag(v) != tag {
			t.Fatalf("shard %d: %q under tag %x, want %x", i, sh.key(&e), slotTag(v), tag)
		}
		p := j - 1
		if p < 0 {
			p = len(ix.slots) - 1
		}
		if d := ix.dist(j, v); d > 0 && (ix.slots[p] == 0 || ix.dist(p, ix.slots[p])+1 < d) {
			t.Fatalf("shard %d: slot %d is %d from home, out of Robin Hood order", i, j, d)
		}
	}
	if inIndex != sh.len() || inIndex != live {
		t.Fatalf("shard %d: index holds %d slots, counts %d, %d live records", i, inIndex, sh.len(), live)
	}
	if bytes != sh.bytes {
		t.Fatalf("shard %d: bytes = %d, sum over items = %d", i, sh.bytes, bytes)
	}
	if got := sh.nextExpiry.Load(); got > minDeadline {
		t.Fatalf("shard %d: nextExpiry = %d, above the earliest deadline %d", i, got, minDeadline)
	}
	return bytes, live
}

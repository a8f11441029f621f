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

// checkInvariants fails the test unless the store is consistent: the
// accounting, the segments and the index of every shard, the global
// counter and Stats (Store.verify, the check that -tags invariants also
// runs on every touched shard as the store works).
func checkInvariants(t testing.TB, s *Store) {
	t.Helper()
	if err := s.verify(); err != nil {
		t.Fatal(err)
	}
}

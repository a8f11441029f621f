package store

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"
)

// costOf is the accounted size of an item.
func costOf(key string, valueLen int) int64 {
	return int64(len(key)+valueLen) + ItemOverhead
}

const valLen = 100

var val = strings.Repeat("v", valLen)

// TestEvictionOrderExpiredThenLRU: in a full shard, an expired item goes
// first, then live items from the least recently used end.
func TestEvictionOrderExpiredThenLRU(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := New(Config{MemoryLimit: 4 * costOf("k000000", valLen), SweepInterval: -1})
		defer s.Close()
		k := sameShardKeys(s, "k", 7)
		mustStore(t, s, ModeSet, k[0], val, 0, 0)
		mustStore(t, s, ModeSet, k[1], val, 0, Deadline(10, time.Now()))
		mustStore(t, s, ModeSet, k[2], val, 0, 0)
		mustStore(t, s, ModeSet, k[3], val, 0, 0)
		time.Sleep(time.Minute) // k1 expires; the sweeper is off
		s.Get([]byte(k[0]))     // LRU, oldest first: k2 k3 k0

		for _, step := range []struct {
			set       string
			wantGone  string
			evictions uint64
			reclaimed uint64
		}{
			{k[4], k[1], 0, 1}, // the expired item, though k2 is older
			{k[5], k[2], 1, 1},
			{k[6], k[3], 2, 1},
		} {
			mustStore(t, s, ModeSet, step.set, val, 0, 0)
			if _, ok := peek(s, step.wantGone); ok {
				t.Fatalf("after Store(%s): %s still stored; LRU %v", step.set, step.wantGone, recency(s, step.set))
			}
			st := s.Stats()
			if st.Evictions != step.evictions || st.Reclaimed != step.reclaimed || st.Items != 4 {
				t.Fatalf("after Store(%s): Evictions %d Reclaimed %d Items %d, want %d %d 4",
					step.set, st.Evictions, st.Reclaimed, st.Items, step.evictions, step.reclaimed)
			}
			checkInvariants(t, s)
		}
		if _, ok := s.Get([]byte(k[0])); !ok {
			t.Fatalf("Get(%s), refreshed before the evictions, missed", k[0])
		}
		if st := s.Stats(); st.EvictedUnfetched != 2 || st.ExpiredUnfetched != 1 {
			t.Fatalf("EvictedUnfetched %d ExpiredUnfetched %d, want 2 and 1", st.EvictedUnfetched, st.ExpiredUnfetched)
		}
	})
}

// TestEvictionPrefersExpiredInOtherShards: an expired item anywhere goes
// before a live item of the writer's shard.
func TestEvictionPrefersExpiredInOtherShards(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := New(Config{MemoryLimit: 3 * costOf("k000000", valLen), SweepInterval: -1})
		defer s.Close()
		k := sameShardKeys(s, "k", 3)
		other := otherShardKeys(s, k[0], 1)[0]
		mustStore(t, s, ModeSet, other, val, 0, Deadline(1, time.Now()))
		mustStore(t, s, ModeSet, k[0], val, 0, 0)
		mustStore(t, s, ModeSet, k[1], val, 0, 0)
		time.Sleep(2 * time.Second)
		mustStore(t, s, ModeSet, k[2], val, 0, 0)
		for _, key := range k {
			if _, ok := peek(s, key); !ok {
				t.Errorf("%s was evicted although %s in another shard had expired", key, other)
			}
		}
		if st := s.Stats(); st.Evictions != 0 || st.Reclaimed != 1 {
			t.Errorf("Evictions %d Reclaimed %d, want 0 and 1", st.Evictions, st.Reclaimed)
		}
		checkInvariants(t, s)
	})
}

// TestEvictionFromOtherShards: when the writer's shard has nothing left
// to evict, room comes from the other shards (the budget is global).
func TestEvictionFromOtherShards(t *testing.T) {
	one := costOf("o000000", valLen)
	s := newTestStore(t, Config{MemoryLimit: 10 * one})
	others := otherShardKeys(s, "b", 10)
	for _, k := range others {
		mustStore(t, s, ModeSet, k, val, 0, 0)
	}
	// "b" needs the room of three items; its own shard is empty.
	big := strings.Repeat("b", int(3*one-costOf("b", 0)))
	mustStore(t, s, ModeSet, "b", big, 0, 0)
	if it, ok := s.Get([]byte("b")); !ok || len(it.Value) != len(big) {
		t.Fatalf("Get(b) = %d bytes, %v; want %d bytes", len(it.Value), ok, len(big))
	}
	if st := s.Stats(); st.Evictions != 3 || st.Items != 8 || st.Bytes != s.limit.Load() {
		t.Errorf("Evictions %d Items %d Bytes %d, want 3, 8, %d", st.Evictions, st.Items, st.Bytes, s.limit.Load())
	}
	checkInvariants(t, s)
}

// TestNeverEvictItemBeingReplaced: growing an item evicts its neighbours,
// not the item itself.
func TestNeverEvictItemBeingReplaced(t *testing.T) {
	s := newTestStore(t, Config{MemoryLimit: 3 * costOf("k000000", valLen)})
	k := sameShardKeys(s, "k", 3)
	mustStore(t, s, ModeSet, k[0], val, 0, 0) // least recently used
	mustStore(t, s, ModeSet, k[1], val, 0, 0)
	mustStore(t, s, ModeSet, k[2], val, 0, 0)
	bigger := strings.Repeat("w", 2*valLen)
	mustStore(t, s, ModeSet, k[0], bigger, 0, 0)
	if it, ok := s.Get([]byte(k[0])); !ok || string(it.Value) != bigger {
		t.Fatalf("Get(%s) after growing it = %d bytes, %v", k[0], len(it.Value), ok)
	}
	if _, ok := peek(s, k[1]); ok {
		t.Errorf("%s, the LRU item after the one replaced, was not evicted", k[1])
	}
	// The whole budget for one item: everything else goes, it stays.
	all := strings.Repeat("x", int(3*costOf("k000000", valLen)-costOf(k[0], 0)))
	mustStore(t, s, ModeAppend, k[0], all[len(bigger):], 0, 0)
	if st := s.Stats(); st.Items != 1 || st.Bytes != s.limit.Load() {
		t.Errorf("after growing %s to the whole limit: Items %d Bytes %d, want 1 and %d", k[0], st.Items, st.Bytes, s.limit.Load())
	}
	checkInvariants(t, s)
}

func TestNoEvictKeepsOldValue(t *testing.T) {
	for _, tc := range []struct {
		name string
		op   func(s *Store, k []string) error
	}{
		{"set new key", func(s *Store, k []string) error {
			return storeErr(s.Store(ModeSet, []byte(k[2]), []byte("x"), 0, 0, 0))
		}},
		{"grow existing", func(s *Store, k []string) error {
			return storeErr(s.Store(ModeSet, []byte(k[0]), []byte(val+"x"), 0, 0, 0))
		}},
		{"append", func(s *Store, k []string) error {
			return storeErr(s.Store(ModeAppend, []byte(k[0]), []byte("x"), 0, 0, 0))
		}},
		{"incr 99 to 100", func(s *Store, k []string) error {
			_, _, err := s.Incr([]byte(k[0]), 1, false)
			return err
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// Two items that fill the budget to the last byte.
			s := newTestStore(t, Config{MemoryLimit: costOf("k000000", 2) + costOf("k000000", valLen), NoEvict: true})
			k := sameShardKeys(s, "k", 3)
			mustStore(t, s, ModeSet, k[0], "99", 1, 0)
			mustStore(t, s, ModeSet, k[1], val, 2, 0)
			before := captureKey(s, k[0])
			if err := tc.op(s, k); !errors.Is(err, ErrNoMemory) {
				t.Fatalf("%s with NoEvict and a full store = %v, want ErrNoMemory", tc.name, err)
			}
			if after := captureKey(s, k[0]); !after.equal(before) {
				t.Errorf("%s changed state:\n got %v\nwant %v", tc.name, after, before)
			}
			checkInvariants(t, s)
		})
	}
}

// TestNoEvictReclaimsExpired: NoEvict keeps live items, not dead ones.
func TestNoEvictReclaimsExpired(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := New(Config{MemoryLimit: 2 * costOf("k000000", valLen), NoEvict: true, SweepInterval: -1})
		defer s.Close()
		mustStore(t, s, ModeSet, "k000000", val, 0, Deadline(1, time.Now()))
		mustStore(t, s, ModeSet, "k000001", val, 0, 0)
		time.Sleep(2 * time.Second)
		mustStore(t, s, ModeSet, "k000002", val, 0, 0)
		if st := s.Stats(); st.Items != 2 || st.Reclaimed != 1 || st.Evictions != 0 {
			t.Fatalf("Stats = %+v; want Items 2, Reclaimed 1, Evictions 0", st)
		}
		checkInvariants(t, s)
	})
}

// TestNoEvictReclaimsFlushedElsewhere: with NoEvict and no sweeper,
// flushed items in other shards still make room.
func TestNoEvictReclaimsFlushedElsewhere(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := New(Config{MemoryLimit: 2 * costOf("k000000", valLen), NoEvict: true, SweepInterval: -1})
		defer s.Close()
		k := sameShardKeys(s, "k", 1)[0]
		for _, o := range otherShardKeys(s, k, 2) {
			mustStore(t, s, ModeSet, o, val, 0, 0)
		}
		s.FlushAll(time.Now().Add(time.Second).UnixMilli())
		time.Sleep(2 * time.Second)
		mustStore(t, s, ModeSet, k, val, 0, 0)
		if st := s.Stats(); st.Reclaimed != 1 || st.Evictions != 0 || st.Items != 2 {
			t.Fatalf("Stats = %+v; want Reclaimed 1, Evictions 0, Items 2", st)
		}
		checkInvariants(t, s)
	})
}

// TestItemLargerThanLimitEvictsNothing: no amount of eviction could fit it.
func TestItemLargerThanLimitEvictsNothing(t *testing.T) {
	s := newTestStore(t, Config{MemoryLimit: 10 << 10})
	for i := range 20 {
		mustStore(t, s, ModeSet, fmt.Sprint("k", i), val, 0, 0)
	}
	before := s.Stats()
	if _, err := s.Store(ModeSet, []byte("big"), make([]byte, 10<<10), 0, 0, 0); !errors.Is(err, ErrNoMemory) {
		t.Fatalf("Store(value larger than MemoryLimit) = %v, want ErrNoMemory", err)
	}
	if after := s.Stats(); after != before {
		t.Fatalf("Stats changed:\n got %+v\nwant %+v", after, before)
	}
}

// TestGlobalBudgetSmallerThanShardShare: with a tiny limit over many
// shards, one item may still take half the whole budget.
func TestGlobalBudgetSmallerThanShardShare(t *testing.T) {
	const limit = 16 << 10
	s := newTestStore(t, Config{MemoryLimit: limit, Shards: 64}) // 256 B a shard if split
	if _, err := s.Store(ModeSet, []byte("half"), make([]byte, limit/2), 0, 0, 0); err != nil {
		t.Fatalf("Store(%d-byte value, limit %d over 64 shards) = %v", limit/2, limit, err)
	}
	if _, err := s.Store(ModeSet, []byte("other"), make([]byte, limit/4), 0, 0, 0); err != nil {
		t.Fatalf("Store(second value) = %v", err)
	}
	checkInvariants(t, s)
}

// TestRecencyPerCommand checks which commands count as a use of an item
// for the eviction walk: those that do raise its access count (a write
// moves it to the end of the walk with the count raised); those that do not
// leave the shard's walk order and counts exactly as they were. Keys a, b,
// c are stored in that order; each command is applied to a. (With the exact
// LRU this test checked the list order; the walk has counts instead.)
func TestRecencyPerCommand(t *testing.T) {
	for _, tc := range []struct {
		name    string
		op      func(s *Store, a []byte, cas uint64)
		refresh bool
	}{
		{"get", func(s *Store, a []byte, _ uint64) { s.Get(a) }, true},
		{"gat", func(s *Store, a []byte, _ uint64) { s.GetAndTouch(a, 0) }, true},
		{"touch", func(s *Store, a []byte, _ uint64) { s.Touch(a, 0) }, true},
		{"set", func(s *Store, a []byte, _ uint64) { s.Store(ModeSet, a, []byte("2"), 0, 0, 0) }, true},
		{"replace", func(s *Store, a []byte, _ uint64) { s.Store(ModeReplace, a, []byte("2"), 0, 0, 0) }, true},
		{"append", func(s *Store, a []byte, _ uint64) { s.Store(ModeAppend, a, []byte("2"), 0, 0, 0) }, true},
		{"prepend", func(s *Store, a []byte, _ uint64) { s.Store(ModePrepend, a, []byte("2"), 0, 0, 0) }, true},
		{"cas match", func(s *Store, a []byte, cas uint64) { s.Store(ModeCAS, a, []byte("2"), 0, 0, cas) }, true},
		{"incr", func(s *Store, a []byte, _ uint64) { s.Incr(a, 1, false) }, true},
		{"decr", func(s *Store, a []byte, _ uint64) { s.Incr(a, 1, true) }, true},
		{"failed add", func(s *Store, a []byte, _ uint64) { s.Store(ModeAdd, a, []byte("2"), 0, 0, 0) }, false},
		{"failed cas", func(s *Store, a []byte, cas uint64) { s.Store(ModeCAS, a, []byte("2"), 0, 0, cas+99) }, false},
		{"failed set, too large", func(s *Store, a []byte, _ uint64) {
			s.Store(ModeSet, a, make([]byte, 2<<20), 0, 0, 0)
		}, false},
		{"failed append, too large", func(s *Store, a []byte, _ uint64) {
			s.Store(ModeAppend, a, make([]byte, s.MaxValueLen(len(a))), 0, 0, 0)
		}, false},
		{"peek", func(s *Store, a []byte, _ uint64) { s.Peek(a) }, false},
		{"mg u", func(s *Store, a []byte, _ uint64) { s.MetaGet(a, GetOptions{NoBump: true}) }, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newTestStore(t, Config{})
			k := sameShardKeys(s, "k", 3)
			cas := mustStore(t, s, ModeSet, k[0], "1", 0, 0)
			mustStore(t, s, ModeSet, k[1], "1", 0, 0)
			mustStore(t, s, ModeSet, k[2], "1", 0, 0)
			before := recency(s, k[0])
			tc.op(s, []byte(k[0]), cas)
			got := recency(s, k[0])
			switch {
			case !tc.refresh && fmt.Sprint(got) != fmt.Sprint(before):
				t.Errorf("%s %s: walk order %v, want it unchanged %v", tc.name, k[0], got, before)
			case tc.refresh && !slices.Contains(got, k[0]+":1"):
				t.Errorf("%s %s: walk order %v, want %s with access count 1", tc.name, k[0], got, k[0])
			}
		})
	}
	t.Run("failed incr on a word", func(t *testing.T) {
		s := newTestStore(t, Config{})
		k := sameShardKeys(s, "k", 2)
		mustStore(t, s, ModeSet, k[0], "word", 0, 0)
		mustStore(t, s, ModeSet, k[1], "1", 0, 0)
		s.Incr([]byte(k[0]), 1, false)
		if got, want := recency(s, k[0]), []string{k[0] + ":0", k[1] + ":0"}; fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("failed incr: walk order %v, want %v", got, want)
		}
	})
	t.Run("delete", func(t *testing.T) {
		s := newTestStore(t, Config{})
		k := sameShardKeys(s, "k", 3)
		for _, key := range k {
			mustStore(t, s, ModeSet, key, "1", 0, 0)
		}
		s.Delete([]byte(k[1]))
		if got, want := recency(s, k[0]), []string{k[0] + ":0", k[2] + ":0"}; fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("delete %s: walk order %v, want %v", k[1], got, want)
		}
	})
}

// TestGetProtectsFromEviction: a read item outlives older unread ones.
func TestGetProtectsFromEviction(t *testing.T) {
	s := newTestStore(t, Config{MemoryLimit: 3 * costOf("k000000", valLen)})
	k := sameShardKeys(s, "k", 4)
	for _, key := range k[:3] {
		mustStore(t, s, ModeSet, key, val, 0, 0)
	}
	s.Get([]byte(k[0]))
	mustStore(t, s, ModeSet, k[3], val, 0, 0)
	if _, ok := peek(s, k[0]); !ok {
		t.Errorf("%s, read before the eviction, was evicted", k[0])
	}
	if _, ok := peek(s, k[1]); ok {
		t.Errorf("%s, the least recently used, survived", k[1])
	}
	if st := s.Stats(); st.EvictedUnfetched != 1 {
		t.Errorf("EvictedUnfetched = %d, want 1", st.EvictedUnfetched)
	}
}

// TestAllowOOMOverdraws: with NoEvict and the budget spent, a write is
// refused, but the same write through AllowOOM's view is stored past the
// limit (Redis's allow-oom scripts), even one larger than the whole
// limit; plain writes are refused again afterwards.
func TestAllowOOMOverdraws(t *testing.T) {
	s := newTestStore(t, Config{MemoryLimit: 2 * costOf("k000000", valLen), NoEvict: true})
	mustStore(t, s, ModeSet, "k000000", val, 0, 0)
	mustStore(t, s, ModeSet, "k000001", val, 0, 0)
	if _, err := s.Store(ModeSet, []byte("k000002"), []byte(val), 0, 0, 0); !errors.Is(err, ErrNoMemory) {
		t.Fatalf("Store past the limit: %v, want ErrNoMemory", err)
	}
	big := strings.Repeat("b", 3*valLen)
	for _, k := range []string{"k000002", "k000003"} {
		v := val
		if k == "k000003" {
			v = big
		}
		if _, err := s.AllowOOM().Store(ModeSet, []byte(k), []byte(v), 0, 0, 0); err != nil {
			t.Fatalf("AllowOOM().Store(%s): %v", k, err)
		}
		if it, ok := s.Get([]byte(k)); !ok || string(it.Value) != v {
			t.Fatalf("%s after AllowOOM's write: %v", k, ok)
		}
	}
	if st := s.Stats(); st.Items != 4 || st.Evictions != 0 || !s.Full() {
		t.Fatalf("Stats = %+v, Full %v; want 4 items, no eviction, full", st, s.Full())
	}
	if _, err := s.Store(ModeSet, []byte("k000004"), []byte("x"), 0, 0, 0); !errors.Is(err, ErrNoMemory) {
		t.Fatalf("plain Store after the overdraft: %v, want ErrNoMemory", err)
	}
	checkInvariants(t, s)
}

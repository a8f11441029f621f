package store

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// TestSetMemoryLimitEvicts: lowering the limit below what is stored evicts
// down to it at once, from every shard, and later writes keep to it.
func TestSetMemoryLimitEvicts(t *testing.T) {
	s := newTestStore(t, Config{MemoryLimit: 8 << 20, Shards: 16})
	for i := range 20000 {
		mustStore(t, s, ModeSet, fmt.Sprintf("k%06d", i), val, 0, 0)
	}
	before := s.Stats()
	if before.Evictions != 0 || before.Bytes < 2<<20 {
		t.Fatalf("before: %+v", before)
	}
	s.SetMemoryLimit(1 << 20)
	st := s.Stats()
	if st.Bytes > 1<<20 || st.Limit != 1<<20 || s.MemoryLimit() != 1<<20 {
		t.Fatalf("after SetMemoryLimit(1 MiB): Bytes %d Limit %d", st.Bytes, st.Limit)
	}
	if st.Evictions == 0 || st.Items == 0 {
		t.Fatalf("after SetMemoryLimit(1 MiB): Evictions %d Items %d", st.Evictions, st.Items)
	}
	if st.MinShardItems == 0 {
		t.Errorf("a shard was emptied: MinShardItems 0 of %d items", st.Items)
	}
	checkInvariants(t, s)
	for i := range 5000 {
		mustStore(t, s, ModeSet, fmt.Sprintf("n%06d", i), val, 0, 0)
	}
	if st := s.Stats(); st.Bytes > 1<<20 {
		t.Fatalf("writes after the cut: Bytes %d over the limit", st.Bytes)
	}
	checkInvariants(t, s)
}

// TestSetMemoryLimitNoEvict: with NoEvict a lower limit keeps every item
// and refuses writes until a higher limit makes room again.
func TestSetMemoryLimitNoEvict(t *testing.T) {
	s := newTestStore(t, Config{MemoryLimit: 8 << 20})
	for i := range 2000 {
		mustStore(t, s, ModeSet, fmt.Sprintf("k%06d", i), val, 0, 0)
	}
	s.SetNoEvict(true)
	if !s.NoEvict() {
		t.Fatal("NoEvict() = false after SetNoEvict(true)")
	}
	s.SetMemoryLimit(64 << 10)
	if st := s.Stats(); st.Items != 2000 || st.Evictions != 0 {
		t.Fatalf("NoEvict cut: Items %d Evictions %d, want 2000 0", st.Items, st.Evictions)
	}
	if !s.Full() {
		t.Fatal("Full() = false over the limit with NoEvict")
	}
	if _, err := s.Store(ModeSet, []byte("new"), []byte(val), 0, 0, 0); !errors.Is(err, ErrNoMemory) {
		t.Fatalf("Store over the limit = %v, want ErrNoMemory", err)
	}
	s.SetNoEvict(false)
	mustStore(t, s, ModeSet, "new", val, 0, 0) // evicts for itself
	s.SetMemoryLimit(8 << 20)
	if s.Full() {
		t.Fatal("Full() after raising the limit")
	}
	checkInvariants(t, s)
}

// TestSetMemoryLimitZeroLiftsLimit: SetMemoryLimit(0) is no limit, as
// Redis's maxmemory 0: MemoryLimit and Stats report 0, writes far past
// the old limit evict nothing, and a limit set again evicts down to it.
// A store built with NoMemoryLimit starts that way.
func TestSetMemoryLimitZeroLiftsLimit(t *testing.T) {
	s := newTestStore(t, Config{MemoryLimit: 1 << 20, MaxItemSize: 8 << 20})
	s.SetMemoryLimit(0)
	if got, st := s.MemoryLimit(), s.Stats(); got != 0 || st.Limit != 0 {
		t.Fatalf("after SetMemoryLimit(0): MemoryLimit %d, Stats.Limit %d, want 0", got, st.Limit)
	}
	big := strings.Repeat("b", 4<<20) // more than the old limit on its own
	mustStore(t, s, ModeSet, "big", big, 0, 0)
	for i := range 20000 {
		mustStore(t, s, ModeSet, fmt.Sprintf("k%06d", i), val, 0, 0)
	}
	if st := s.Stats(); st.Evictions != 0 || st.Bytes < 5<<20 || s.Full() {
		t.Fatalf("without a limit: Evictions %d Bytes %d Full %v", st.Evictions, st.Bytes, s.Full())
	}
	checkInvariants(t, s)
	s.SetNoEvict(true)
	mustStore(t, s, ModeSet, "more", val, 0, 0) // never full without a limit
	s.SetNoEvict(false)

	s.SetMemoryLimit(2 << 20)
	if st := s.Stats(); st.Bytes > 2<<20 || st.Evictions == 0 || st.Limit != 2<<20 {
		t.Fatalf("after SetMemoryLimit(2 MiB): Bytes %d Evictions %d Limit %d", st.Bytes, st.Evictions, st.Limit)
	}
	checkInvariants(t, s)

	u := newTestStore(t, Config{MemoryLimit: NoMemoryLimit, MaxItemSize: 8 << 20})
	if u.MemoryLimit() != 0 {
		t.Fatalf("Config{MemoryLimit: NoMemoryLimit}: MemoryLimit %d, want 0", u.MemoryLimit())
	}
	mustStore(t, u, ModeSet, "big", big, 0, 0)
	checkInvariants(t, u)
}

// TestWithMaxItemSize: a view's writes refuse items over its own limit,
// as memcached's -I does on its port, while the store takes them from
// another view and the limited view reads them whole.
func TestWithMaxItemSize(t *testing.T) {
	s := newTestStore(t, Config{MaxItemSize: 8 << 20})
	mc := s.WithMaxItemSize(1 << 20)
	if got, want := mc.MaxValueLen(3), (1<<20)-3-ItemOverhead; got != want {
		t.Errorf("view MaxValueLen(3) = %d, want %d", got, want)
	}
	if got := s.WithMaxItemSize(16 << 20).MaxValueLen(0); got != s.MaxValueLen(0) {
		t.Errorf("a view above MaxItemSize: MaxValueLen %d, want the store's %d", got, s.MaxValueLen(0))
	}
	big := []byte(strings.Repeat("b", 2<<20))
	if _, err := mc.Store(ModeSet, []byte("k"), big, 0, 0, 0); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("view Store of 2 MiB = %v, want ErrTooLarge", err)
	}
	mustStore(t, s, ModeSet, "k", string(big), 0, 0)
	if it, ok := mc.Get([]byte("k")); !ok || len(it.Value) != len(big) {
		t.Fatalf("view Get of the 2 MiB item: %d bytes, found %v", len(it.Value), ok)
	}
	if _, err := mc.Store(ModeAppend, []byte("k"), []byte("x"), 0, 0, 0); !errors.Is(err, ErrTooLarge) {
		t.Errorf("view append to the 2 MiB item = %v, want ErrTooLarge", err)
	}
	if _, _, err := mc.MetaSet([]byte("k"), big, 0, 0, SetOptions{}); !errors.Is(err, ErrTooLarge) {
		t.Errorf("view MetaSet of 2 MiB = %v, want ErrTooLarge", err)
	}
	if _, err := s.Store(ModeAppend, []byte("k"), []byte("x"), 0, 0, 0); err != nil {
		t.Errorf("store append to the 2 MiB item: %v", err)
	}
	err := mc.Exclusive(func(v *Store) error {
		if v.MaxValueLen(0) != mc.MaxValueLen(0) {
			t.Errorf("Exclusive view of the view: MaxValueLen %d, want %d", v.MaxValueLen(0), mc.MaxValueLen(0))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	checkInvariants(t, s)
}

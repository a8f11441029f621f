package store

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"testing/synctest"
	"time"
)

func TestShardCount(t *testing.T) {
	for _, tc := range []struct{ in, want int }{
		{1, 16}, {16, 16}, {17, 32}, {100, 128}, {1 << 20, 1 << 16},
	} {
		if got := shardCount(tc.in); got != tc.want {
			t.Errorf("shardCount(%d) = %d, want %d", tc.in, got, tc.want)
		}
	}
	if got := shardCount(0); got < 16 || got&(got-1) != 0 {
		t.Errorf("shardCount(0) = %d, want a power of two >= 16", got)
	}
	s := newTestStore(t, Config{Shards: 20})
	if got := s.Stats().Shards; got != 32 {
		t.Errorf("New(Shards: 20).Stats().Shards = %d, want 32", got)
	}
}

func TestStoreModes(t *testing.T) {
	// Each case starts from a store holding "k" = "old" with flags 7.
	for _, tc := range []struct {
		name      string
		mode      Mode
		key       string
		value     string
		flags     uint32
		cas       func(old uint64) uint64
		wantErr   error
		wantValue string // "" with wantOK false: key absent
		wantFlags uint32
	}{
		{"set existing", ModeSet, "k", "new", 1, nil, nil, "new", 1},
		{"set missing", ModeSet, "m", "new", 1, nil, nil, "new", 1},
		{"add existing", ModeAdd, "k", "new", 1, nil, ErrNotStored, "old", 7},
		{"add missing", ModeAdd, "m", "new", 1, nil, nil, "new", 1},
		{"replace existing", ModeReplace, "k", "new", 1, nil, nil, "new", 1},
		{"replace missing", ModeReplace, "m", "new", 1, nil, ErrNotStored, "", 0},
		{"append existing", ModeAppend, "k", "+x", 1, nil, nil, "old+x", 7},
		{"append missing", ModeAppend, "m", "+x", 1, nil, ErrNotStored, "", 0},
		{"prepend existing", ModePrepend, "k", "x+", 1, nil, nil, "x+old", 7},
		{"prepend missing", ModePrepend, "m", "x+", 1, nil, ErrNotStored, "", 0},
		{"cas match", ModeCAS, "k", "new", 1, func(c uint64) uint64 { return c }, nil, "new", 1},
		{"cas mismatch", ModeCAS, "k", "new", 1, func(c uint64) uint64 { return c + 1 }, ErrExists, "old", 7},
		{"cas missing", ModeCAS, "m", "new", 1, func(c uint64) uint64 { return c }, ErrNotFound, "", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newTestStore(t, Config{})
			old := mustStore(t, s, ModeSet, "k", "old", 7, 0)
			var cas uint64
			if tc.cas != nil {
				cas = tc.cas(old)
			}
			newCAS, err := s.Store(tc.mode, []byte(tc.key), []byte(tc.value), tc.flags, 0, cas)
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("Store(%v, %q, %q, cas %d) error = %v, want %v", tc.mode, tc.key, tc.value, cas, err, tc.wantErr)
			}
			if err == nil && newCAS <= old {
				t.Errorf("Store(%v, %q) CAS = %d, want > %d", tc.mode, tc.key, newCAS, old)
			}
			it, ok := s.Get([]byte(tc.key))
			if got, want := ok, tc.wantValue != ""; got != want {
				t.Fatalf("after Store(%v, %q): Get ok = %v, want %v", tc.mode, tc.key, got, want)
			}
			if ok && (string(it.Value) != tc.wantValue || it.Flags != tc.wantFlags) {
				t.Errorf("after Store(%v, %q, %q): Get = %q flags %d, want %q flags %d",
					tc.mode, tc.key, tc.value, it.Value, it.Flags, tc.wantValue, tc.wantFlags)
			}
			if err == nil && ok && it.CAS != newCAS {
				t.Errorf("Get CAS = %d, want the CAS Store returned, %d", it.CAS, newCAS)
			}
			checkInvariants(t, s)
		})
	}
}

// TestStoreCopiesKeyAndValue guards against keeping the caller's buffers,
// which the server reuses for the next request.
func TestStoreCopiesKeyAndValue(t *testing.T) {
	s := newTestStore(t, Config{})
	key, value := []byte("key"), []byte("value")
	mustStoreBytes := func(mode Mode) {
		if _, err := s.Store(mode, key, value, 0, 0, 0); err != nil {
			t.Fatalf("Store(%v, %q, %q) = %v", mode, key, value, err)
		}
	}
	mustStoreBytes(ModeSet)
	copy(key, "KEY")
	copy(value, "VALUE")
	if it, ok := s.Get([]byte("key")); !ok || string(it.Value) != "value" {
		t.Fatalf("Get(key) after the caller reused its buffers = %q, %v; want \"value\", true", it.Value, ok)
	}
	copy(key, "key")
	mustStoreBytes(ModeAppend)
	copy(value, "XXXXX")
	if it, _ := s.Get([]byte("key")); string(it.Value) != "valueVALUE" {
		t.Fatalf("Get(key) after append = %q, want %q", it.Value, "valueVALUE")
	}
}

// TestReturnedValueNeverMutated guards the rule that lets the server write
// a value out after the shard lock is released.
func TestReturnedValueNeverMutated(t *testing.T) {
	s := newTestStore(t, Config{})
	mustStore(t, s, ModeSet, "k", "12", 0, 0)
	got, _ := s.Get([]byte("k"))
	steps := []func(){
		func() { mustStore(t, s, ModeAppend, "k", "3", 0, 0) },
		func() { mustStore(t, s, ModePrepend, "k", "0", 0, 0) },
		func() { s.Incr([]byte("k"), 1, false) },
		func() { mustStore(t, s, ModeSet, "k", "xy", 0, 0) },
		func() { s.Delete([]byte("k")) },
	}
	for i, step := range steps {
		step()
		if string(got.Value) != "12" {
			t.Fatalf("after step %d the value Get returned earlier reads %q, want \"12\"", i, got.Value)
		}
	}
	// Appending to a returned value must not write into the store.
	mustStore(t, s, ModeSet, "k", "ab", 0, 0)
	got, _ = s.Get([]byte("k"))
	_ = append(got.Value, 'c')
	mustStore(t, s, ModeSet, "k2", "zz", 0, 0)
	if it, _ := s.Get([]byte("k")); string(it.Value) != "ab" {
		t.Fatalf("Get(k) = %q after the caller appended to a returned value, want \"ab\"", it.Value)
	}
}

func TestEmptyValue(t *testing.T) {
	s := newTestStore(t, Config{})
	mustStore(t, s, ModeSet, "k", "", 3, 0)
	it, ok := s.Get([]byte("k"))
	if !ok || len(it.Value) != 0 || it.Value == nil || it.Flags != 3 {
		t.Fatalf("Get(k) = %+v, %v; want empty non-nil value, flags 3", it, ok)
	}
	mustStore(t, s, ModeAppend, "k", "x", 0, 0)
	if it, _ := s.Get([]byte("k")); string(it.Value) != "x" {
		t.Fatalf("Get(k) after append = %q, want \"x\"", it.Value)
	}
	checkInvariants(t, s)
}

// TestCASNeverReused guards the process-wide token counter: a token is
// never handed out twice, even to a key deleted and created again, and
// touch keeps the token.
func TestCASNeverReused(t *testing.T) {
	s := newTestStore(t, Config{})
	c1 := mustStore(t, s, ModeSet, "k", "v1", 0, 0)
	if c1 != 1 {
		t.Errorf("first CAS = %d, want 1", c1)
	}
	if err := s.Delete([]byte("k")); err != nil {
		t.Fatalf("Delete(k) = %v", err)
	}
	c2 := mustStore(t, s, ModeSet, "k", "v2", 0, 0)
	if c2 <= c1 {
		t.Fatalf("CAS after delete-and-recreate = %d, want > %d", c2, c1)
	}
	if _, err := s.Store(ModeCAS, []byte("k"), []byte("v3"), 0, 0, c1); !errors.Is(err, ErrExists) {
		t.Fatalf("Store(ModeCAS, k, stale token %d) = %v, want ErrExists", c1, err)
	}
	if !s.Touch([]byte("k"), 0) {
		t.Fatal("Touch(k) = false")
	}
	if it, _ := s.GetAndTouch([]byte("k"), 0); it.CAS != c2 {
		t.Fatalf("CAS after touch and gat = %d, want unchanged %d", it.CAS, c2)
	}
	seen := map[uint64]bool{c1: true, c2: true}
	for i := range 100 {
		var c uint64
		switch i % 4 {
		case 0:
			c = mustStore(t, s, ModeSet, "n", "1", 0, 0)
		case 1:
			_, c, _ = s.Incr([]byte("n"), 1, false)
		case 2:
			c = mustStore(t, s, ModeAppend, "n", "0", 0, 0)
		case 3:
			c = mustStore(t, s, ModeSet, fmt.Sprint("x", i), "v", 0, 0)
		}
		if seen[c] {
			t.Fatalf("step %d: CAS %d handed out twice", i, c)
		}
		seen[c] = true
	}
}

func TestIncr(t *testing.T) {
	for _, tc := range []struct {
		value     string
		delta     uint64
		decr      bool
		want      uint64
		wantValue string
		wantErr   error
	}{
		{"0", 1, false, 1, "1", nil},
		{"41", 1, false, 42, "42", nil},
		{"99", 1, false, 100, "100", nil},
		{"007", 1, false, 8, "8", nil},
		{"18446744073709551615", 1, false, 0, "0", nil},
		{"18446744073709551615", 2, false, 1, "1", nil},
		{"18446744073709551614", 1, false, 18446744073709551615, "18446744073709551615", nil},
		{"10", 1, true, 9, "9", nil}, // shrinks, no space padding
		{"1000", 999, true, 1, "1", nil},
		{"5", 10, true, 0, "0", nil}, // floor at 0
		{"5", 5, true, 0, "0", nil},
		{"18446744073709551615", 18446744073709551615, true, 0, "0", nil},
		{"abc", 1, false, 0, "abc", ErrNotNumeric},
		{"", 1, false, 0, "", ErrNotNumeric},
		{"-1", 1, false, 0, "-1", ErrNotNumeric},
		{"+1", 1, false, 2, "2", nil},
		{" 1", 1, false, 2, "2", nil},
		{"1 ", 1, false, 2, "2", nil},
		{"12 ", 1, true, 11, "11", nil},
		{"018446744073709551615", 1, false, 0, "0", nil},
		{" ", 1, false, 0, " ", ErrNotNumeric},
		{"+", 1, false, 0, "+", ErrNotNumeric},
		{"1x", 1, false, 0, "1x", ErrNotNumeric},
		{"1.5", 1, false, 0, "1.5", ErrNotNumeric},
		{"0x10", 1, false, 0, "0x10", ErrNotNumeric},
		{"18446744073709551616", 1, false, 0, "18446744073709551616", ErrNotNumeric},
		{"000000000000000000001", 1, false, 2, "2", nil}, // leading zeros, as strtoull
		{"99999999999999999999", 1, false, 0, "99999999999999999999", ErrNotNumeric},
	} {
		s := newTestStore(t, Config{})
		old := mustStore(t, s, ModeSet, "n", tc.value, 9, 1<<62)
		got, cas, err := s.Incr([]byte("n"), tc.delta, tc.decr)
		if !errors.Is(err, tc.wantErr) || got != tc.want {
			t.Errorf("Incr(%q, %d, decr=%v) = %d, %v; want %d, %v", tc.value, tc.delta, tc.decr, got, err, tc.want, tc.wantErr)
			continue
		}
		it, _ := s.Get([]byte("n"))
		if string(it.Value) != tc.wantValue || it.Flags != 9 || it.Deadline != 1<<62 {
			t.Errorf("after Incr(%q, %d, decr=%v): item %q flags %d deadline %d; want %q flags 9 deadline %d",
				tc.value, tc.delta, tc.decr, it.Value, it.Flags, it.Deadline, tc.wantValue, int64(1<<62))
		}
		if wantCAS := map[bool]uint64{true: old, false: cas}[err != nil]; it.CAS != wantCAS || (err == nil && cas <= old) {
			t.Errorf("after Incr(%q): CAS %d (returned %d), old %d", tc.value, it.CAS, cas, old)
		}
		checkInvariants(t, s)
	}
	s := newTestStore(t, Config{})
	if _, _, err := s.Incr([]byte("missing"), 1, false); !errors.Is(err, ErrNotFound) {
		t.Errorf("Incr(missing) = %v, want ErrNotFound", err)
	}
}

func TestAppendPrependKeepFlagsAndDeadline(t *testing.T) {
	for _, mode := range []Mode{ModeAppend, ModePrepend} {
		synctest.Test(t, func(t *testing.T) {
			s := New(Config{SweepInterval: -1})
			defer s.Close()
			deadline := Deadline(10, time.Now())
			mustStore(t, s, ModeSet, "k", "v", 5, deadline)
			time.Sleep(5 * time.Second)
			if _, err := s.Store(mode, []byte("k"), []byte("w"), 9, 0, 0); err != nil {
				t.Fatalf("Store(%v, k) = %v", mode, err)
			}
			it, _ := s.Get([]byte("k"))
			if it.Flags != 5 || it.Deadline != deadline {
				t.Errorf("after Store(%v, flags 9, no deadline): flags %d deadline %d, want 5 and %d", mode, it.Flags, it.Deadline, deadline)
			}
			time.Sleep(5 * time.Second)
			if _, ok := s.Get([]byte("k")); ok {
				t.Errorf("after Store(%v): the item outlived the original deadline", mode)
			}
			checkInvariants(t, s)
		})
	}
}

func TestDelete(t *testing.T) {
	s := newTestStore(t, Config{})
	mustStore(t, s, ModeSet, "k", "v", 0, 0)
	if err := s.Delete([]byte("k")); err != nil {
		t.Fatalf("Delete(k) = %v, want nil", err)
	}
	if err := s.Delete([]byte("k")); !errors.Is(err, ErrNotFound) {
		t.Fatalf("second Delete(k) = %v, want ErrNotFound", err)
	}
	if _, ok := s.Get([]byte("k")); ok {
		t.Fatal("Get(k) after Delete found it")
	}
	if st := s.Stats(); st.Items != 0 || st.Bytes != 0 || st.Reclaimed != 0 || st.Evictions != 0 {
		t.Fatalf("Stats after Delete = %+v, want no items, no bytes, nothing reclaimed or evicted", st)
	}
}

// TestMaxValueLenBoundary pins the largest value the default config takes,
// which the memcached front end relies on.
func TestMaxValueLenBoundary(t *testing.T) {
	s := newTestStore(t, Config{})
	key := []byte("key")
	if got, want := s.MaxValueLen(len(key)), 1<<20-len(key)-ItemOverhead; got != want {
		t.Fatalf("MaxValueLen(%d) = %d, want %d", len(key), got, want)
	}
	for _, tc := range []struct {
		n    int
		want error
	}{
		{1_047_552, nil},
		{s.MaxValueLen(len(key)), nil},
		{s.MaxValueLen(len(key)) + 1, ErrTooLarge},
		{1_048_576, ErrTooLarge},
	} {
		if _, err := s.Store(ModeSet, key, make([]byte, tc.n), 0, 0, 0); !errors.Is(err, tc.want) {
			t.Errorf("Store(%d-byte value) = %v, want %v", tc.n, err, tc.want)
		}
	}
	if got := s.MaxValueLen(2 << 20); got != 0 {
		t.Errorf("MaxValueLen(2 MiB) = %d, want 0", got)
	}
	checkInvariants(t, s)
}

// TestFailedWritesLeaveStateUnchanged checks every way a write can fail:
// the item keeps its value, flags, deadline, CAS and LRU position, and no
// counter moves.
func TestFailedWritesLeaveStateUnchanged(t *testing.T) {
	s := newTestStore(t, Config{})
	big := strings.Repeat("x", s.MaxValueLen(1)+1)
	near := strings.Repeat("x", s.MaxValueLen(1)-1) // fits alone, not with "old"
	for _, tc := range []struct {
		name string
		op   func(s *Store, cas uint64) error
		want error
	}{
		{"set too large", func(s *Store, _ uint64) error {
			_, err := s.Store(ModeSet, []byte("k"), []byte(big), 1, 0, 0)
			return err
		}, ErrTooLarge},
		{"append result too large", func(s *Store, _ uint64) error {
			_, err := s.Store(ModeAppend, []byte("k"), []byte(near), 1, 0, 0)
			return err
		}, ErrTooLarge},
		{"prepend result too large", func(s *Store, _ uint64) error {
			_, err := s.Store(ModePrepend, []byte("k"), []byte(near), 1, 0, 0)
			return err
		}, ErrTooLarge},
		{"add existing", func(s *Store, _ uint64) error {
			_, err := s.Store(ModeAdd, []byte("k"), []byte("new"), 1, 0, 0)
			return err
		}, ErrNotStored},
		{"replace missing", func(s *Store, _ uint64) error {
			_, err := s.Store(ModeReplace, []byte("missing"), []byte("new"), 1, 0, 0)
			return err
		}, ErrNotStored},
		{"append missing", func(s *Store, _ uint64) error {
			_, err := s.Store(ModeAppend, []byte("missing"), []byte("new"), 1, 0, 0)
			return err
		}, ErrNotStored},
		{"prepend missing", func(s *Store, _ uint64) error {
			_, err := s.Store(ModePrepend, []byte("missing"), []byte("new"), 1, 0, 0)
			return err
		}, ErrNotStored},
		{"cas mismatch", func(s *Store, cas uint64) error {
			_, err := s.Store(ModeCAS, []byte("k"), []byte("new"), 1, 0, cas+1000)
			return err
		}, ErrExists},
		{"cas missing", func(s *Store, cas uint64) error {
			_, err := s.Store(ModeCAS, []byte("missing"), []byte("new"), 1, 0, cas)
			return err
		}, ErrNotFound},
		{"incr non-numeric", func(s *Store, _ uint64) error {
			_, _, err := s.Incr([]byte("k"), 1, false)
			return err
		}, ErrNotNumeric},
		{"incr missing", func(s *Store, _ uint64) error {
			_, _, err := s.Incr([]byte("missing"), 1, false)
			return err
		}, ErrNotFound},
		{"delete missing", func(s *Store, _ uint64) error {
			return s.Delete([]byte("missing"))
		}, ErrNotFound},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newTestStore(t, Config{})
			// "k" sits behind a newer key of its shard, so a refresh would show.
			keys := sameShardKeys(s, "k", 2)
			cas := mustStore(t, s, ModeSet, "k", "old", 7, 1<<62)
			mustStore(t, s, ModeSet, keys[1], "newer", 0, 0)
			before := captureKey(s, "k")
			err := tc.op(s, cas)
			if !errors.Is(err, tc.want) {
				t.Fatalf("%s: error = %v, want %v", tc.name, err, tc.want)
			}
			if after := captureKey(s, "k"); !after.equal(before) {
				t.Errorf("%s changed state:\n got %v\nwant %v", tc.name, after, before)
			}
			checkInvariants(t, s)
		})
	}
}

// TestSetTooLargeKeepsOldValue guards MiniKV's documented difference from
// memcached, which drops the old value when a too-large set fails.
func TestSetTooLargeKeepsOldValue(t *testing.T) {
	s := newTestStore(t, Config{MaxItemSize: 1024})
	cas := mustStore(t, s, ModeSet, "k", "old", 3, 0)
	before := s.Stats()
	_, err := s.Store(ModeSet, []byte("k"), make([]byte, 1024), 4, 0, 0)
	if !errors.Is(err, ErrTooLarge) {
		t.Fatalf("Store(1024-byte value, MaxItemSize 1024) = %v, want ErrTooLarge", err)
	}
	it, ok := s.Get([]byte("k"))
	if !ok || string(it.Value) != "old" || it.Flags != 3 || it.CAS != cas {
		t.Fatalf("Get(k) after failed set = %q flags %d cas %d ok %v; want \"old\" flags 3 cas %d", it.Value, it.Flags, it.CAS, ok, cas)
	}
	if after := s.Stats(); after != before {
		t.Fatalf("Stats changed by failed set:\n got %+v\nwant %+v", after, before)
	}
}

func TestStatsCounters(t *testing.T) {
	s := newTestStore(t, Config{Shards: 16})
	mustStore(t, s, ModeSet, "a", "1", 0, 0)
	mustStore(t, s, ModeSet, "a", "2", 0, 0)
	mustStore(t, s, ModeAdd, "b", "1", 0, 0)
	s.Incr([]byte("b"), 1, false)
	s.Store(ModeAdd, []byte("b"), []byte("x"), 0, 0, 0) // fails: not counted
	s.FlushAll(1)
	st := s.Stats()
	if st.TotalItems != 4 || st.Items != 0 || st.Bytes != 0 || st.Reclaimed != 2 || st.Flushes != 1 ||
		st.Limit != 64<<20 || st.Shards != 16 || st.MinShardItems != 0 || st.MaxShardItems != 0 {
		t.Fatalf("Stats() = %+v", st)
	}
	for i := range 1000 {
		mustStore(t, s, ModeSet, fmt.Sprint("key", i), "v", 0, 0)
	}
	st = s.Stats()
	if st.MinShardItems <= 0 || st.MaxShardItems < st.MinShardItems || st.MaxShardItems >= 1000 {
		t.Fatalf("1000 keys over %d shards: min %d max %d items per shard", st.Shards, st.MinShardItems, st.MaxShardItems)
	}
}

func TestValueBytesHelpers(t *testing.T) {
	// parseDecimal is the incr gatekeeper; check it against its definition.
	for _, in := range []string{"0", "1", "18446744073709551615", "18446744073709551616", "", "a", "00000000000000000000"} {
		got, ok := parseDecimal([]byte(in))
		var want uint64
		wantOK := len(in) >= 1 && len(in) <= 20 && strings.Trim(in, "0123456789") == ""
		if wantOK {
			_, err := fmt.Sscan(in, &want)
			wantOK = err == nil
		}
		if got != want || ok != wantOK {
			t.Errorf("parseDecimal(%q) = %d, %v; want %d, %v", in, got, ok, want, wantOK)
		}
	}
}

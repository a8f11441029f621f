package store

import (
	"strconv"
	"testing"
	"testing/synctest"
	"time"
)

func TestDeadline(t *testing.T) {
	now := time.Date(2030, 1, 2, 3, 4, 5, 6, time.UTC)
	for _, tc := range []struct {
		exptime int64
		want    int64
	}{
		{0, 0},                                // never
		{-1, 1},                               // already expired
		{-1000000, 1},                         // already expired
		{1, now.Add(time.Second).UnixMilli()}, // relative
		{100, now.Add(100 * time.Second).UnixMilli()},
		{2592000, now.Add(2592000 * time.Second).UnixMilli()}, // 30 days: still relative
		{2592001, 2592001000},                                 // absolute: 1970-01-31, long past
		{1893456000, 1893456000000},                           // absolute: 2030-01-01
		{33177117420, 33177117420000},                         // absolute: 3021, past int64 ns
		{9223372036854775, 9223372036854775000},               // the last whole second in int64 ms
		{9223372036854776, 1<<63 - 1},                         // beyond: saturates
		{1 << 62, 1<<63 - 1},
	} {
		if got := Deadline(tc.exptime, now); got != tc.want {
			t.Errorf("Deadline(%d, %v) = %d, want %d", tc.exptime, now, got, tc.want)
		}
	}
	for _, exptime := range []int64{-1, 2592001, 1893456000} {
		if d := Deadline(exptime, now); d == 0 || d > now.UnixMilli() {
			t.Errorf("Deadline(%d, %v) = %d, want a time in the past (expired)", exptime, now, d)
		}
	}
}

// TestExpiredMeansMissing checks every operation against a key whose
// deadline has passed but which nothing has reclaimed yet.
func TestExpiredMeansMissing(t *testing.T) {
	for _, tc := range []struct {
		name string
		op   func(s *Store, cas uint64) any
		want any
	}{
		{"get", func(s *Store, _ uint64) any { _, ok := s.Get([]byte("k")); return ok }, false},
		{"gat", func(s *Store, _ uint64) any { _, ok := s.GetAndTouch([]byte("k"), 0); return ok }, false},
		{"touch", func(s *Store, _ uint64) any { return s.Touch([]byte("k"), 0) }, false},
		{"delete", func(s *Store, _ uint64) any { return s.Delete([]byte("k")) }, ErrNotFound},
		{"incr", func(s *Store, _ uint64) any { _, _, err := s.Incr([]byte("k"), 1, false); return err }, ErrNotFound},
		{"decr", func(s *Store, _ uint64) any { _, _, err := s.Incr([]byte("k"), 1, true); return err }, ErrNotFound},
		{"add", func(s *Store, _ uint64) any { return storeErr(s.Store(ModeAdd, []byte("k"), []byte("new"), 0, 0, 0)) }, nil},
		{"replace", func(s *Store, _ uint64) any {
			return storeErr(s.Store(ModeReplace, []byte("k"), []byte("new"), 0, 0, 0))
		}, ErrNotStored},
		{"append", func(s *Store, _ uint64) any {
			return storeErr(s.Store(ModeAppend, []byte("k"), []byte("new"), 0, 0, 0))
		}, ErrNotStored},
		{"prepend", func(s *Store, _ uint64) any {
			return storeErr(s.Store(ModePrepend, []byte("k"), []byte("new"), 0, 0, 0))
		}, ErrNotStored},
		{"cas", func(s *Store, cas uint64) any {
			return storeErr(s.Store(ModeCAS, []byte("k"), []byte("new"), 0, 0, cas))
		}, ErrNotFound},
		{"set", func(s *Store, _ uint64) any { return storeErr(s.Store(ModeSet, []byte("k"), []byte("new"), 0, 0, 0)) }, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				s := New(Config{SweepInterval: -1})
				defer s.Close()
				cas := mustStore(t, s, ModeSet, "k", "12", 0, Deadline(10, time.Now()))
				time.Sleep(10 * time.Second) // the deadline is now, which is expired
				if got := tc.op(s, cas); got != tc.want {
					t.Fatalf("%s on an expired key = %v, want %v", tc.name, got, tc.want)
				}
				it, ok := s.Get([]byte("k"))
				if wantOK := tc.want == nil; ok != wantOK || (ok && string(it.Value) != "new") {
					t.Fatalf("Get(k) after %s = %q, %v; want present %v", tc.name, it.Value, ok, wantOK)
				}
				if st := s.Stats(); st.Reclaimed != 1 || st.ExpiredUnfetched != 1 {
					t.Errorf("after %s: Reclaimed %d ExpiredUnfetched %d, want 1 and 1", tc.name, st.Reclaimed, st.ExpiredUnfetched)
				}
				checkInvariants(t, s)
			})
		})
	}
}

func storeErr(_ uint64, err error) error { return err }

// TestStoreWithPastDeadline: memcached answers STORED to a set with a
// negative exptime and the key is gone; the old value must go with it.
func TestStoreWithPastDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := New(Config{SweepInterval: -1})
		defer s.Close()
		old := mustStore(t, s, ModeSet, "k", "old", 0, 0)
		for _, exptime := range []int64{-1, 2592001} {
			cas, err := s.Store(ModeSet, []byte("k"), []byte("new"), 0, Deadline(exptime, time.Now()), 0)
			if err != nil || cas <= old {
				t.Fatalf("Store(k, exptime %d) = %d, %v; want a new CAS, nil", exptime, cas, err)
			}
			if _, ok := s.Get([]byte("k")); ok {
				t.Fatalf("Get(k) after Store with exptime %d found it", exptime)
			}
		}
		if st := s.Stats(); st.Items != 0 || st.TotalItems != 3 {
			t.Fatalf("Stats = %+v, want Items 0, TotalItems 3", st)
		}
		checkInvariants(t, s)
	})
}

func TestTouchAndGetAndTouch(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := New(Config{SweepInterval: -1})
		defer s.Close()
		mustStore(t, s, ModeSet, "k", "v", 0, Deadline(10, time.Now()))
		time.Sleep(5 * time.Second)
		if !s.Touch([]byte("k"), Deadline(10, time.Now())) {
			t.Fatal("Touch(k) = false")
		}
		time.Sleep(9 * time.Second) // 14 s after the set, 9 after the touch
		it, ok := s.GetAndTouch([]byte("k"), Deadline(100, time.Now()))
		if !ok || it.Deadline != Deadline(100, time.Now()) {
			t.Fatalf("GetAndTouch(k) = %+v, %v; want the new deadline", it, ok)
		}
		time.Sleep(99 * time.Second)
		if !s.Touch([]byte("k"), 0) {
			t.Fatal("Touch(k, never) = false")
		}
		time.Sleep(2 * time.Minute) // 1200 sweeper ticks
		if _, ok := s.Get([]byte("k")); !ok {
			t.Fatal("Get(k) after Touch(k, never) missed")
		}
		// A deadline in the past expires the item; gat still returns it once.
		if it, ok := s.GetAndTouch([]byte("k"), Deadline(-1, time.Now())); !ok || string(it.Value) != "v" {
			t.Fatalf("GetAndTouch(k, past) = %+v, %v", it, ok)
		}
		if _, ok := s.Get([]byte("k")); ok {
			t.Fatal("Get(k) after GetAndTouch(k, past) found it")
		}
		checkInvariants(t, s)
	})
}

// TestFarFutureDeadlinesReadBackExactly guards the deadline's unit:
// Redis accepts absolute deadlines up to PEXPIREAT 9223372036854775807,
// far past 2262, where int64 nanoseconds end. Every way of setting one
// must read back exactly, and the item must stay live while the sweeper
// runs and a near deadline beside it passes.
func TestFarFutureDeadlinesReadBackExactly(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := New(Config{SweepInterval: 100 * time.Millisecond})
		defer s.Close()
		const (
			y3021  = 33177117420000      // EXPIREAT 33177117420
			lastS  = 9223372036854775000 // EXPIREAT 9223372036854775
			maxDL  = 1<<63 - 1           // PEXPIREAT 9223372036854775807
			y3021s = 33177117420
		)
		if d := Deadline(y3021s, time.Now()); d != y3021 {
			t.Fatalf("Deadline(%d) = %d, want %d", int64(y3021s), d, int64(y3021))
		}
		want := map[string]int64{}
		set := func(k string, dl int64) {
			t.Helper()
			mustStore(t, s, ModeSet, k, "v", 0, dl)
			want[k] = dl
		}
		set("store", y3021)
		set("max", maxDL)
		set("touch", Deadline(10, time.Now()))
		if !s.Touch([]byte("touch"), lastS) {
			t.Fatal("Touch = false")
		}
		want["touch"] = lastS
		set("gat", 0)
		if it, ok := s.GetAndTouch([]byte("gat"), maxDL); !ok || it.Deadline != maxDL {
			t.Fatalf("GetAndTouch = %+v, %v; want deadline %d", it, ok, int64(maxDL))
		}
		want["gat"] = maxDL
		set("retime", Deadline(10, time.Now()))
		if _, err := s.Update([]byte("retime"), func(Item, bool) Change {
			return Change{Op: Retime, Deadline: y3021}
		}); err != nil {
			t.Fatal(err)
		}
		want["retime"] = y3021
		if _, _, err := s.MetaSet([]byte("ms"), []byte("v"), 0, lastS, SetOptions{}); err != nil {
			t.Fatal(err)
		}
		want["ms"] = lastS
		set("mg", 0)
		if mi, ok := s.MetaGet([]byte("mg"), GetOptions{Touch: true, Deadline: y3021}); !ok || mi.Deadline != y3021 {
			t.Fatalf("MetaGet(T) = %+v, %v; want deadline %d", mi, ok, int64(y3021))
		}
		want["mg"] = y3021
		mustStore(t, s, ModeSet, "near", "v", 0, Deadline(60, time.Now()))

		time.Sleep(2 * time.Minute) // 1200 sweeper ticks
		synctest.Wait()             // the tick due now has finished
		if _, ok := s.Get([]byte("near")); ok {
			t.Error("Get(near) found it 2 min after its 60 s deadline")
		}
		for k, dl := range want {
			it, ok := s.Get([]byte(k))
			if !ok || it.Deadline != dl {
				t.Errorf("Get(%s) = deadline %d, %v; want %d, true", k, it.Deadline, ok, dl)
			}
		}
		if st := s.Stats(); st.Items != int64(len(want)) {
			t.Errorf("Stats.Items = %d, want %d", st.Items, len(want))
		}
		checkInvariants(t, s)
	})
}

// TestSweeperReclaimsExpiredItems: nothing reads the expired keys, yet
// their memory comes back.
func TestSweeperReclaimsExpiredItems(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := New(Config{SweepInterval: 100 * time.Millisecond})
		defer s.Close()
		for i := range 5000 {
			mustStore(t, s, ModeSet, "ttl"+strconv.Itoa(i), "v", 0, Deadline(1, time.Now()))
		}
		for i := range 10 {
			mustStore(t, s, ModeSet, "keep"+strconv.Itoa(i), "v", 0, 0)
		}
		mustStore(t, s, ModeSet, "later", "v", 0, Deadline(60, time.Now()))
		time.Sleep(2 * time.Second)
		synctest.Wait() // the tick due now has finished
		st := s.Stats()
		if st.Items != 11 || st.Reclaimed != 5000 || st.ExpiredUnfetched != 5000 || st.GetExpired != 0 {
			t.Fatalf("Stats after the sweep = %+v; want Items 11, Reclaimed 5000, ExpiredUnfetched 5000", st)
		}
		checkInvariants(t, s)
	})
}

// TestSweeperBatchIsBounded: one pass of the sweeper takes at most
// sweepBatch items from a shard, so it never holds a lock for long, and
// says whether a shard had a full batch (there may be more).
func TestSweeperBatchIsBounded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := New(Config{SweepInterval: -1})
		defer s.Close()
		const n = 3*sweepBatch + 10
		for _, k := range sameShardKeys(s, "k", n) {
			mustStore(t, s, ModeSet, k, "v", 0, Deadline(1, time.Now()))
		}
		time.Sleep(1500 * time.Millisecond) // past the deadline
		for pass, left := range []int{n - sweepBatch, n - 2*sweepBatch, n - 3*sweepBatch, 0} {
			more := s.sweep()
			if got := s.Stats().Items; got != int64(left) || more != (left > 0) {
				t.Fatalf("after pass %d: %d items, more %v; want %d, %v", pass+1, got, more, left, left > 0)
			}
		}
		checkInvariants(t, s)
	})
}

// TestSweeperTickGoesOn: while passes find full batches, one tick goes on
// with more of them (up to a quarter of the interval, which the fake
// clock here never reaches): a backlog of expired items is cleared in
// one tick instead of one batch per tick.
func TestSweeperTickGoesOn(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := New(Config{SweepInterval: time.Second})
		defer s.Close()
		const n = 10*sweepBatch + 10
		for _, k := range sameShardKeys(s, "k", n) {
			mustStore(t, s, ModeSet, k, "v", 0, Deadline(1, time.Now()))
		}
		time.Sleep(1500 * time.Millisecond) // one tick after the deadline
		synctest.Wait()
		if got := s.Stats().Items; got != 0 {
			t.Fatalf("Items after one tick = %d, want 0", got)
		}
		checkInvariants(t, s)
	})
}

func TestCloseIsIdempotent(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := New(Config{SweepInterval: time.Millisecond})
		for range 2 {
			if err := s.Close(); err != nil {
				t.Fatalf("Close() = %v", err)
			}
		}
		// Without the sweeper the store still works, expiring lazily.
		mustStore(t, s, ModeSet, "k", "v", 0, Deadline(1, time.Now()))
		time.Sleep(2 * time.Second)
		if _, ok := s.Get([]byte("k")); ok {
			t.Fatal("Get(k) after Close and expiry found it")
		}
	})
}

func TestFlushAllNow(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := New(Config{})
		defer s.Close()
		for i := range 100 {
			mustStore(t, s, ModeSet, "k"+strconv.Itoa(i), "v", 0, Deadline(int64(i), time.Now()))
		}
		s.FlushAll(time.Now().UnixMilli())
		st := s.Stats()
		if st.Items != 0 || st.Bytes != 0 || st.Reclaimed != 100 || st.Flushes != 1 {
			t.Fatalf("Stats after FlushAll(now) = %+v; want empty, Reclaimed 100, Flushes 1", st)
		}
		if _, ok := s.Get([]byte("k1")); ok {
			t.Fatal("Get(k1) after FlushAll(now) found it")
		}
		mustStore(t, s, ModeAdd, "k1", "again", 0, 0)
		if it, ok := s.Get([]byte("k1")); !ok || string(it.Value) != "again" {
			t.Fatalf("Get(k1) stored after the flush = %q, %v", it.Value, ok)
		}
		checkInvariants(t, s)
	})
}

// TestFlushAllDelayed: items stored at or before the flush time vanish
// when it comes; items stored after it stay.
func TestFlushAllDelayed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := New(Config{SweepInterval: -1})
		defer s.Close()
		mustStore(t, s, ModeSet, "early", "v", 0, 0)
		s.FlushAll(time.Now().Add(10 * time.Second).UnixMilli())
		time.Sleep(5 * time.Second)
		if _, ok := s.Get([]byte("early")); !ok {
			t.Fatal("Get(early) before the flush time missed")
		}
		mustStore(t, s, ModeSet, "before", "v", 0, 0)
		time.Sleep(5 * time.Second) // now == flush time
		mustStore(t, s, ModeSet, "at", "v", 0, 0)
		for _, k := range []string{"early", "before", "at"} {
			if _, ok := s.Get([]byte(k)); ok {
				t.Errorf("Get(%s) at the flush time found it", k)
			}
		}
		time.Sleep(time.Second)
		mustStore(t, s, ModeSet, "after", "v", 0, 0)
		mustStore(t, s, ModeAdd, "early", "new", 0, 0)
		for _, k := range []string{"after", "early"} {
			if _, ok := s.Get([]byte(k)); !ok {
				t.Errorf("Get(%s) stored after the flush time missed", k)
			}
		}
		if st := s.Stats(); st.GetFlushed != 3 || st.Items != 2 || st.Flushes != 1 {
			t.Errorf("Stats = %+v; want GetFlushed 3, Items 2, Flushes 1", st)
		}
		checkInvariants(t, s)
	})
}

// TestFlushAllDelayedIsSwept: flushed items nobody reads are reclaimed by
// the sweeper.
func TestFlushAllDelayedIsSwept(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := New(Config{SweepInterval: 100 * time.Millisecond})
		defer s.Close()
		for i := range 2000 {
			mustStore(t, s, ModeSet, "k"+strconv.Itoa(i), "v", 0, 0)
		}
		s.FlushAll(time.Now().Add(time.Second).UnixMilli())
		time.Sleep(1050 * time.Millisecond)
		mustStore(t, s, ModeSet, "survivor", "v", 0, 0)
		time.Sleep(time.Second)
		if st := s.Stats(); st.Items != 1 || st.Reclaimed != 2000 {
			t.Fatalf("Stats after the sweep = %+v; want Items 1, Reclaimed 2000", st)
		}
		checkInvariants(t, s)
	})
}

// TestFlushAllReplacesArmedFlush follows memcached: the last flush_all wins.
func TestFlushAllReplacesArmedFlush(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := New(Config{SweepInterval: -1})
		defer s.Close()
		mustStore(t, s, ModeSet, "a", "v", 0, 0)
		s.FlushAll(time.Now().Add(10 * time.Second).UnixMilli())
		s.FlushAll(time.Now().Add(20 * time.Second).UnixMilli())
		time.Sleep(15 * time.Second)
		if _, ok := s.Get([]byte("a")); !ok {
			t.Fatal("Get(a) between the replaced and the new flush time missed")
		}
		time.Sleep(5 * time.Second)
		if _, ok := s.Get([]byte("a")); ok {
			t.Fatal("Get(a) at the new flush time found it")
		}
		mustStore(t, s, ModeSet, "b", "v", 0, 0)
		s.FlushAll(time.Now().Add(10 * time.Second).UnixMilli())
		s.FlushAll(0) // now: cancels the armed one
		mustStore(t, s, ModeSet, "c", "v", 0, 0)
		time.Sleep(15 * time.Second)
		if _, ok := s.Get([]byte("c")); !ok {
			t.Fatal("Get(c) after a cancelled delayed flush missed")
		}
		if _, ok := s.Get([]byte("b")); ok {
			t.Fatal("Get(b) after FlushAll(0) found it")
		}
	})
}

// TestEvictionReclaimsFlushedBeforeLive: under memory pressure flushed
// items go before live ones.
func TestEvictionReclaimsFlushedBeforeLive(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cost := int64(len("k000000")+100) + ItemOverhead
		s := New(Config{MemoryLimit: 4 * cost, SweepInterval: -1})
		defer s.Close()
		keys := sameShardKeys(s, "k", 8)
		val := string(make([]byte, 100))
		mustStore(t, s, ModeSet, keys[0], val, 0, 0)
		mustStore(t, s, ModeSet, keys[1], val, 0, 0)
		s.FlushAll(time.Now().Add(time.Second).UnixMilli())
		time.Sleep(2 * time.Second)
		mustStore(t, s, ModeSet, keys[2], val, 0, 0)
		mustStore(t, s, ModeSet, keys[3], val, 0, 0)
		mustStore(t, s, ModeSet, keys[4], val, 0, 0) // full: reclaims a flushed item
		mustStore(t, s, ModeSet, keys[5], val, 0, 0) // reclaims the other
		if st := s.Stats(); st.Evictions != 0 || st.Reclaimed != 2 || st.Items != 4 {
			t.Fatalf("Stats = %+v; want Evictions 0, Reclaimed 2, Items 4", st)
		}
		checkInvariants(t, s)
	})
}

// TestExclusiveFreezesTime: inside an Exclusive section a key whose
// deadline passes while the section runs is still there, in every kind
// of read and in a nested Tx, as Redis freezes its clock for a script or
// EXEC; once the section is over the key has expired.
func TestExclusiveFreezesTime(t *testing.T) {
	s := newTestStore(t, Config{})
	_ = s.Exclusive(func(v *Store) error {
		now := v.Now()
		if _, err := v.Store(ModeSet, []byte("k"), []byte("v"), 0, now+1, 0); err != nil {
			t.Fatal(err)
		}
		us := v.FrozenMicros()
		if us/1000 != now {
			t.Errorf("FrozenMicros %d is not the section's instant %d ms", us, now)
		}
		time.Sleep(5 * time.Millisecond) // the deadline passes on the wall clock
		if v.Now() != now || v.FrozenMicros() != us {
			t.Errorf("the clock moved inside the section: %d then %d ms, %d then %d µs", now, v.Now(), us, v.FrozenMicros())
		}
		if _, ok := v.Get([]byte("k")); !ok {
			t.Error("Get: the key expired inside the section")
		}
		if _, ok := v.Peek([]byte("k")); !ok {
			t.Error("Peek: the key expired inside the section")
		}
		_ = v.Tx([][]byte{[]byte("k")}, func(tx *Tx) error {
			if tx.clk.now() != now {
				t.Errorf("nested Tx clock %d, section began at %d", tx.clk.now(), now)
			}
			return nil
		})
		return nil
	})
	if _, ok := s.Get([]byte("k")); ok {
		t.Error("the key outlived its deadline after the section")
	}
	if s.FrozenMicros() != 0 {
		t.Errorf("FrozenMicros outside a section = %d, want 0", s.FrozenMicros())
	}
}

// TestRefreeze: Refreeze moves a section's frozen instant to now, for
// Store.Now, FrozenMicros and the section's own Tx, so the next script of
// a batch sees a key expired that the previous one saw alive; outside a
// section it does nothing.
func TestRefreeze(t *testing.T) {
	s := newTestStore(t, Config{})
	_ = s.Exclusive(func(v *Store) error {
		now, us := v.Now(), v.FrozenMicros()
		if _, err := v.Store(ModeSet, []byte("k"), []byte("v"), 0, now+1, 0); err != nil {
			t.Fatal(err)
		}
		time.Sleep(3 * time.Millisecond)
		v.Refreeze()
		if v.Now() < now+3 || v.FrozenMicros() < us+3000 || v.FrozenMicros()/1000 != v.Now() {
			t.Errorf("after 3 ms and Refreeze: Now %d (was %d), FrozenMicros %d (was %d)", v.Now(), now, v.FrozenMicros(), us)
		}
		if _, ok := v.Get([]byte("k")); ok {
			t.Error("the key whose deadline passed before Refreeze is still there")
		}
		if v.excl.clk.now() != v.Now() {
			t.Errorf("the section's Tx clock %d, its view's %d", v.excl.clk.now(), v.Now())
		}
		return nil
	})
	s.Refreeze()
	if s.Now() == 0 || s.FrozenMicros() != 0 {
		t.Errorf("Refreeze outside a section froze the store: FrozenMicros %d", s.FrozenMicros())
	}
}

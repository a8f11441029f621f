package store

import (
	"testing"
	"testing/synctest"
	"time"
)

// objectFreq is Object's Freq for key, failing when the key is missing.
func objectFreq(t *testing.T, s *Store, key string) uint8 {
	t.Helper()
	oi, ok := s.Object([]byte(key))
	if !ok {
		t.Fatalf("Object(%s): missing", key)
	}
	return oi.Freq
}

// TestLFUCounterAndDecay: in LFU mode with lfu-log-factor 0 every use
// raises the counter by one from LFU_INIT_VAL, up to 255, and it decays
// by one per lfu-decay-time minutes, measured on the store's clock (the
// bubble's, with the sweeper off).
func TestLFUCounterAndDecay(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := New(Config{SweepInterval: -1})
		defer s.Close()
		s.SetLFU(true)
		s.SetLFUParams(0, 1)
		mustStore(t, s, ModeSet, "k", "v", 0, 0)
		if f := objectFreq(t, s, "k"); f != lfuInitVal {
			t.Fatalf("new key: Freq %d, want %d", f, lfuInitVal)
		}
		for range 10 {
			s.Get([]byte("k"))
		}
		if f := objectFreq(t, s, "k"); f != 15 {
			t.Fatalf("after 10 reads: Freq %d, want 15", f)
		}
		time.Sleep(3*time.Minute + time.Second)
		if f := objectFreq(t, s, "k"); f != 12 {
			t.Fatalf("3 minutes later: Freq %d, want 12 (one per minute)", f)
		}
		// The idle time (memcached's la=) comes from the LFU word's minutes.
		if oi, _ := s.Object([]byte("k")); oi.Idle != 180 {
			t.Fatalf("3 minutes later: Idle %d s, want 180 (whole minutes)", oi.Idle)
		}
		s.Get([]byte("k")) // stores the decayed counter, raised, as of now
		if f := objectFreq(t, s, "k"); f != 13 {
			t.Fatalf("after a read: Freq %d, want 13", f)
		}
		s.SetLFUParams(0, 2)
		time.Sleep(4 * time.Minute)
		if f := objectFreq(t, s, "k"); f != 11 {
			t.Fatalf("4 minutes later, decay time 2: Freq %d, want 11", f)
		}
		s.SetLFUParams(0, 0)
		time.Sleep(time.Hour)
		if f := objectFreq(t, s, "k"); f != 13 {
			t.Fatalf("decay time 0, an hour later: Freq %d, want 13 (no decay)", f)
		}
		s.SetLFUParams(0, 1)
		if f := objectFreq(t, s, "k"); f != 0 {
			t.Fatalf("decay time 1 after 64 minutes: Freq %d, want 0", f)
		}
		for range 300 {
			s.Get([]byte("k"))
		}
		if f := objectFreq(t, s, "k"); f != 255 {
			t.Fatalf("after 300 reads: Freq %d, want 255", f)
		}
		// An overwrite is a use of the old value (Redis's dbOverwrite
		// keeps it); a new key starts again at LFU_INIT_VAL.
		mustStore(t, s, ModeSet, "k", "w", 0, 0)
		if f := objectFreq(t, s, "k"); f != 255 {
			t.Fatalf("overwritten: Freq %d, want 255", f)
		}
		s.Delete([]byte("k"))
		mustStore(t, s, ModeSet, "k", "v", 0, 0)
		if f := objectFreq(t, s, "k"); f != lfuInitVal {
			t.Fatalf("stored again: Freq %d, want %d", f, lfuInitVal)
		}
	})
}

// TestLFULogFactor: with the default lfu-log-factor 10 the counter grows
// logarithmically: Redis's table gives about 18 after 1000 uses, and far
// from 255.
func TestLFULogFactor(t *testing.T) {
	s := New(Config{SweepInterval: -1})
	defer s.Close()
	s.SetLFU(true)
	mustStore(t, s, ModeSet, "k", "v", 0, 0)
	for range 1000 {
		s.Get([]byte("k"))
	}
	if f := objectFreq(t, s, "k"); f < 12 || f > 30 {
		t.Fatalf("after 1000 reads at factor 10: Freq %d, want about 18", f)
	}
}

// TestLFUEvictionKeepsHotKeys: under memory pressure in LFU mode, keys
// read many times survive while the keys written and never read again
// are evicted; in the same run under the default (CLOCK) policy, whose
// access count saturates at 3, the hot keys go on the walk's fourth pass.
// The 800 new keys make about four passes (180 cold keys evicted per
// pass): a hot key's counter, 55 after 50 reads, is halved above 5 on
// each (30, 17, 11, 8, 6), and it would go on the seventh. Counts only:
// the walk's order is the records' write order.
func TestLFUEvictionKeepsHotKeys(t *testing.T) {
	const capacity, hot = 200, 20
	run := func(t *testing.T, lfu bool) (hotLeft, coldLeft int) {
		s := New(Config{SweepInterval: -1})
		defer s.Close()
		keys := sameShardKeys(s, "k", capacity+4*capacity) // one shard: one walk
		s.SetMemoryLimit(capacity * costOf(keys[0], valLen))
		s.SetLFU(lfu)
		s.SetLFUParams(0, 0) // every read counts; no decay
		for _, k := range keys[:capacity] {
			mustStore(t, s, ModeSet, k, val, 0, 0)
		}
		for _, k := range keys[:hot] {
			for range 50 {
				if _, ok := s.Get([]byte(k)); !ok {
					t.Fatalf("Get(%s) missed before any pressure", k)
				}
			}
		}
		// Four times the capacity in new keys, never read.
		for _, k := range keys[capacity:] {
			mustStore(t, s, ModeSet, k, val, 0, 0)
		}
		checkInvariants(t, s)
		for _, k := range keys[:hot] {
			if _, ok := peek(s, k); ok {
				hotLeft++
			}
		}
		for _, k := range keys[hot:capacity] {
			if _, ok := peek(s, k); ok {
				coldLeft++
			}
		}
		if st := s.Stats(); st.Evictions < 4*capacity-10 {
			t.Fatalf("Evictions %d, want about %d", st.Evictions, 4*capacity)
		}
		return hotLeft, coldLeft
	}
	hotLeft, coldLeft := run(t, true)
	if hotLeft != hot || coldLeft != 0 {
		t.Errorf("LFU: %d of %d hot keys and %d of %d cold keys left, want all hot and no cold",
			hotLeft, hot, coldLeft, capacity-hot)
	}
	hotLeft, coldLeft = run(t, false)
	if hotLeft != 0 || coldLeft != 0 {
		t.Errorf("CLOCK: %d of %d hot keys and %d cold keys left, want none: its count saturates at 3",
			hotLeft, hot, coldLeft)
	}
}

// TestLFURestoredFreq: SetRestored's freq sets the LFU counter in LFU
// mode (0-255, RESTORE ... FREQ and RDB_OPCODE_FREQ), and idle is ignored
// there, as Redis's objectSetLRUOrLFU.
func TestLFURestoredFreq(t *testing.T) {
	s := New(Config{SweepInterval: -1})
	defer s.Close()
	s.SetLFU(true)
	s.SetLFUParams(0, 1)
	for _, c := range []struct {
		idle int64
		freq int
		want uint8
	}{{-1, 200, 200}, {1000, -1, 200}, {-1, 0, 0}, {5000, 255, 255}} {
		_ = s.Tx([][]byte{[]byte("k")}, func(tx *Tx) error {
			if _, ok := tx.Kind([]byte("k")); !ok {
				if err := tx.PutString([]byte("k"), []byte("v")); err != nil {
					return err
				}
			}
			if !tx.SetRestored([]byte("k"), 0, c.idle, c.freq) {
				t.Fatal("SetRestored: no value")
			}
			return nil
		})
		if f := objectFreq(t, s, "k"); f != c.want {
			t.Fatalf("SetRestored(idle %d, freq %d): Freq %d, want %d", c.idle, c.freq, f, c.want)
		}
	}
}

// TestLFURenameRelabel: a renamed value starts at LFU_INIT_VAL again, as
// Redis 7.2's dbAdd resets it; Relabel (SWAPDB) keeps the counter; Use
// counts a use.
func TestLFURenameRelabel(t *testing.T) {
	s := New(Config{SweepInterval: -1})
	defer s.Close()
	s.SetLFU(true)
	s.SetLFUParams(0, 1) // a step per use
	mustStore(t, s, ModeSet, "a", "v", 0, 0)
	for range 4 {
		s.Get([]byte("a"))
	}
	if f := objectFreq(t, s, "a"); f != 9 {
		t.Fatalf("after 4 reads: Freq %d, want 9", f)
	}
	tx := func(keys []string, fn func(tx *Tx)) {
		var bk [][]byte
		for _, k := range keys {
			bk = append(bk, []byte(k))
		}
		_ = s.Tx(bk, func(tx *Tx) error { fn(tx); return nil })
	}
	tx([]string{"a", "b"}, func(tx *Tx) {
		if !tx.Relabel([]byte("a"), []byte("b")) {
			t.Fatal("Relabel: no value")
		}
	})
	if f := objectFreq(t, s, "b"); f != 9 {
		t.Fatalf("relabelled: Freq %d, want 9", f)
	}
	tx([]string{"b"}, func(tx *Tx) { tx.Use([]byte("b")) })
	if f := objectFreq(t, s, "b"); f != 10 {
		t.Fatalf("after Use: Freq %d, want 10", f)
	}
	tx([]string{"b", "c"}, func(tx *Tx) {
		if !tx.Rename([]byte("b"), []byte("c"), false) {
			t.Fatal("Rename: no value")
		}
	})
	if f := objectFreq(t, s, "c"); f != 5 {
		t.Fatalf("renamed: Freq %d, want 5", f)
	}
}

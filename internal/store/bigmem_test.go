package store

import (
	"bytes"
	"fmt"
	"strconv"
	"testing"
	"time"
)

// bigMemConfig maps from one page, so that tables of a few thousand
// elements are mapped (in every build; the invariants build does it by
// default).
var bigMemConfig = Config{OffHeapMin: 4 << 10}

// fillBigHash stores n fields f0.. with values v0.. under key.
func fillBigHash(t testing.TB, s *Store, key string, n int) {
	t.Helper()
	var h Hash
	if err := s.UpdateHash([]byte(key), &h, func() error {
		for i := range n {
			h.Set([]byte("f"+strconv.Itoa(i)), []byte("value number "+strconv.Itoa(i)))
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}

func offHeap(s *Store) int64 { return s.Stats().OffHeap }

// waitOffHeap polls until the mapped bytes are want (a hang guard only:
// the state is polled, not timed).
func waitOffHeap(t *testing.T, s *Store, want int64) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); offHeap(s) != want; {
		if time.Now().After(deadline) {
			t.Fatalf("mapped bytes = %d, want %d", offHeap(s), want)
		}
		time.Sleep(time.Millisecond)
	}
}

// TestBigMemFreedOnEveryWayOut: a big collection's mapped memory goes back
// to the system however its key goes (DEL, SET over it, expiry, eviction,
// FLUSHALL, emptied by its own command, a Tx clearing it), moves with
// RENAME and is doubled by COPY, and the invariants (verifyMapped: what is
// mapped is what the objects hold) hold after each.
func TestBigMemFreedOnEveryWayOut(t *testing.T) {
	for _, tc := range []struct {
		name string
		out  func(t *testing.T, s *Store, key []byte)
	}{
		{"delete", func(t *testing.T, s *Store, key []byte) {
			if err := s.Delete(key); err != nil {
				t.Fatal(err)
			}
		}},
		{"string over it", func(t *testing.T, s *Store, key []byte) {
			mustStore(t, s, ModeSet, string(key), "now a string", 0, 0)
		}},
		{"expiry", func(t *testing.T, s *Store, key []byte) {
			s.Touch(key, time.Now().Add(time.Millisecond).UnixMilli())
			for {
				if _, ok := s.Get(key); !ok {
					return
				}
				time.Sleep(time.Millisecond)
			}
		}},
		{"flush", func(t *testing.T, s *Store, key []byte) { s.FlushAll(0) }},
		{"emptied", func(t *testing.T, s *Store, key []byte) {
			var h Hash
			_ = s.UpdateHash(key, &h, func() error {
				for i := range 3000 {
					h.Delete([]byte("f" + strconv.Itoa(i)))
				}
				return nil
			})
		}},
		{"tx clear", func(t *testing.T, s *Store, key []byte) {
			_ = s.Tx([][]byte{key}, func(tx *Tx) error { tx.Clear(key); return nil })
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newTestStore(t, bigMemConfig)
			key := []byte("h")
			fillBigHash(t, s, "h", 3000)
			if offHeap(s) == 0 {
				t.Fatal("a hash of 3000 fields mapped nothing")
			}
			checkInvariants(t, s)
			tc.out(t, s, key)
			waitOffHeap(t, s, 0)
			checkInvariants(t, s)
		})
	}

	t.Run("eviction", func(t *testing.T) {
		cfg := bigMemConfig
		cfg.MemoryLimit = 4 << 20
		s := newTestStore(t, cfg)
		fillBigHash(t, s, "h", 3000)
		for i := 0; ; i++ {
			mustStore(t, s, ModeSet, fmt.Sprint("k", i), string(make([]byte, 1000)), 0, 0)
			if _, ok := s.Peek([]byte("h")); !ok {
				break
			}
		}
		waitOffHeap(t, s, 0)
		checkInvariants(t, s)
	})

	t.Run("rename and copy", func(t *testing.T) {
		s := newTestStore(t, bigMemConfig)
		fillBigHash(t, s, "h", 3000)
		one := offHeap(s)
		_ = s.Tx([][]byte{[]byte("h"), []byte("g")}, func(tx *Tx) error {
			tx.Rename([]byte("h"), []byte("g"), false)
			return nil
		})
		if got := offHeap(s); got != one {
			t.Fatalf("after RENAME: mapped %d, want %d", got, one)
		}
		checkInvariants(t, s)
		_ = s.Tx([][]byte{[]byte("g"), []byte("c")}, func(tx *Tx) error {
			tx.Copy([]byte("g"), []byte("c"), false)
			return nil
		})
		if got := offHeap(s); got < one*3/2 {
			t.Fatalf("after COPY: mapped %d, want about %d", got, 2*one)
		}
		checkInvariants(t, s)
		var h Hash
		for _, k := range []string{"g", "c"} {
			_ = s.ViewHash([]byte(k), &h, func() error {
				if v, ok := h.Get([]byte("f2999")); !ok || string(v) != "value number 2999" {
					t.Errorf("%s: f2999 = %q, %v", k, v, ok)
				}
				return nil
			})
		}
		_ = s.Delete([]byte("g"))
		_ = s.Delete([]byte("c"))
		waitOffHeap(t, s, 0)
		checkInvariants(t, s)
	})
}

// TestBigMemSlicesLastUntilFnReturns: a slice a handle returned stays
// readable until the function returns, even after the table grew out of
// the arena it points into and resized its slots several times (mapped
// memory is retired, not freed, until then), and even after a Tx cleared
// the key it came from or EXEC deleted it. In the invariants build a
// freed region is inaccessible, so an early free faults here.
func TestBigMemSlicesLastUntilFnReturns(t *testing.T) {
	s := newTestStore(t, bigMemConfig)
	fillBigHash(t, s, "h", 2000)
	var h Hash
	if err := s.UpdateHash([]byte("h"), &h, func() error {
		v, _ := h.Get([]byte("f7"))
		f := h.c.obj.(*bigHash).t
		arena := &f.arena[0]
		for i := 2000; i < 40000; i++ {
			h.Set([]byte("f"+strconv.Itoa(i)), []byte("value number "+strconv.Itoa(i)))
		}
		if &f.arena[0] == arena {
			t.Error("the arena did not move: the test does not test")
		}
		if string(v) != "value number 7" {
			t.Errorf("f7's value read before the growth = %q", v)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	checkInvariants(t, s)

	var kept [][]byte
	var st Set
	key := []byte("s")
	_ = s.UpdateSet(key, &st, func() error {
		for i := range 3000 {
			st.Add([]byte("member:" + strconv.Itoa(i)))
		}
		return nil
	})
	_ = s.Tx([][]byte{key}, func(tx *Tx) error {
		if err := tx.Set(key, &st, false); err != nil {
			return err
		}
		st.Each(func(m []byte) bool { kept = append(kept, m); return len(kept) < 100 })
		tx.DoneSet(&st)
		tx.Clear(key) // SINTERSTORE s s x: the sources' members are still read
		for _, m := range kept {
			if !bytes.HasPrefix(m, []byte("member:")) {
				t.Fatalf("a member read before the key was cleared reads %q", m)
			}
		}
		return nil
	})
	checkInvariants(t, s)

	fillBigHash(t, s, "h2", 3000)
	_ = s.Exclusive(func(v *Store) error {
		var v7 []byte
		_ = v.ViewHash([]byte("h2"), &h, func() error { v7, _ = h.Get([]byte("f7")); return nil })
		_ = v.Delete([]byte("h2"))
		if string(v7) != "value number 7" {
			t.Errorf("a value read in EXEC before its key was deleted reads %q", v7)
		}
		return nil
	})
	checkInvariants(t, s)
}

// TestBigMemThresholdKeepsSmallTablesOnHeap: at the default threshold a
// hash just past its listpack (600 fields, a table of 14 KB) maps
// nothing, and OffHeapMin < 0 maps nothing at all.
func TestBigMemThresholdKeepsSmallTablesOnHeap(t *testing.T) {
	s := newTestStore(t, Config{OffHeapMin: offHeapMin})
	fillBigHash(t, s, "h", 600)
	if got := offHeap(s); got != 0 {
		t.Errorf("a hash of 600 fields mapped %d bytes at a %d-byte threshold", got, offHeapMin)
	}
	fillBigHash(t, s, "big", 100000)
	if offHeap(s) == 0 {
		t.Error("a hash of 100000 fields mapped nothing")
	}
	checkInvariants(t, s)
	s2 := newTestStore(t, Config{OffHeapMin: -1})
	fillBigHash(t, s2, "big", 100000)
	if got := offHeap(s2); got != 0 {
		t.Errorf("OffHeapMin -1 mapped %d bytes", got)
	}
	checkInvariants(t, s2)
}

// BenchmarkBigMemHashLifecycle builds a hash of m fields 100 at a time
// and deletes it, with its slices mapped from min bytes on (-1: all on
// the heap): what mapping, growing in place and unmapping cost against
// the heap's allocation, copying and collection (bigmem.go's offHeapMin).
func BenchmarkBigMemHashLifecycle(b *testing.B) {
	for _, m := range []int{1000, 3000, 20000} {
		for _, least := range []int{4 << 10, offHeapMin, 64 << 10, -1} {
			b.Run(fmt.Sprintf("fields=%d/min=%d", m, least), func(b *testing.B) {
				s := New(Config{MemoryLimit: 1 << 40, SweepInterval: -1, OffHeapMin: least})
				defer s.Close()
				var h Hash
				f := make([]byte, 0, 32)
				key := []byte("h")
				b.ReportAllocs()
				for b.Loop() {
					for j := 0; j < m; j += 100 {
						_ = s.UpdateHash(key, &h, func() error {
							for k := j; k < j+100 && k < m; k++ {
								f = strconv.AppendInt(append(f[:0], "field:"...), int64(k), 10)
								h.Set(f, f)
							}
							return nil
						})
					}
					_ = s.Delete(key)
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*m), "ns/field")
			})
		}
	}
}

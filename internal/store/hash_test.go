package store

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"
)

// hashModel applies random HSET/HDEL to a Hash and to a map, across the
// listpack-to-table conversion, and checks every read against the map.
func TestHashMatchesModel(t *testing.T) {
	for _, n := range []int{5, 100, 3000} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			s := newTestStore(t, Config{MemoryLimit: 256 << 20})
			key := []byte("h")
			model := map[string]string{}
			rng := rand.New(rand.NewPCG(1, uint64(n)))
			var h Hash
			for i := range n * 3 {
				f := fmt.Sprintf("f%d", rng.IntN(n))
				v := fmt.Sprint(rng.IntN(1000))
				if i%7 == 0 {
					v = string(bytes.Repeat([]byte("v"), rng.IntN(80))) // some values over HashValue
				}
				if rng.IntN(4) == 0 {
					var had bool
					if err := s.UpdateHash(key, &h, func() error { had = h.Delete([]byte(f)); return nil }); err != nil {
						t.Fatal(err)
					}
					if _, ok := model[f]; ok != had {
						t.Fatalf("Delete(%q) = %v, model says %v", f, had, ok)
					}
					delete(model, f)
					continue
				}
				var added bool
				if err := s.UpdateHash(key, &h, func() error { added = h.Set([]byte(f), []byte(v)); return nil }); err != nil {
					t.Fatal(err)
				}
				if _, ok := model[f]; ok == added {
					t.Fatalf("Set(%q) added = %v, model had it: %v", f, added, ok)
				}
				model[f] = v
			}
			err := s.ViewHash(key, &h, func() error {
				if h.Len() != len(model) {
					t.Fatalf("Len = %d, model %d", h.Len(), len(model))
				}
				for f, v := range model {
					got, ok := h.Get([]byte(f))
					if !ok || string(got) != v {
						t.Fatalf("Get(%q) = %q %v, want %q", f, got, ok, v)
					}
				}
				seen := map[string]bool{}
				h.Each(func(f, v []byte) bool {
					if model[string(f)] != string(v) || seen[string(f)] {
						t.Fatalf("Each gave %q=%q (seen %v)", f, v, seen[string(f)])
					}
					seen[string(f)] = true
					return true
				})
				if len(seen) != len(model) {
					t.Fatalf("Each gave %d fields, want %d", len(seen), len(model))
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			checkInvariants(t, s)
		})
	}
}

// TestHashScanAcrossGrowth: fields present for the whole scan are given,
// even though the table grows and shrinks between calls.
func TestHashScanAcrossGrowth(t *testing.T) {
	s := newTestStore(t, Config{MemoryLimit: 256 << 20})
	key := []byte("h")
	var h Hash
	set := func(f string) {
		if err := s.UpdateHash(key, &h, func() error { h.Set([]byte(f), []byte("v")); return nil }); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 500 {
		set(fmt.Sprint("keep", i))
	}
	seen := map[string]bool{}
	cursor, calls := uint64(0), 0
	for {
		err := s.ViewHash(key, &h, func() error {
			cursor = h.Scan(cursor, 20, func(f, _ []byte) { seen[string(f)] = true })
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		calls++
		// Grow the table to many times its size, then delete again.
		if calls == 3 {
			for i := range 5000 {
				set(fmt.Sprint("tmp", i))
			}
		}
		if calls == 10 {
			if err := s.UpdateHash(key, &h, func() error {
				for i := range 5000 {
					h.Delete([]byte(fmt.Sprint("tmp", i)))
				}
				return nil
			}); err != nil {
				t.Fatal(err)
			}
		}
		if cursor == 0 {
			break
		}
	}
	for i := range 500 {
		if !seen[fmt.Sprint("keep", i)] {
			t.Fatalf("scan missed keep%d (%d calls)", i, calls)
		}
	}
}

// TestHashAccountingAndRemoval: a hash is charged for its record and its
// object, the key goes when the last field does, and DEL, SET over it and
// eviction give every byte back.
func TestHashAccountingAndRemoval(t *testing.T) {
	s := newTestStore(t, Config{MemoryLimit: 64 << 20})
	var h Hash
	fill := func(key string, n int) {
		if err := s.UpdateHash([]byte(key), &h, func() error {
			for i := range n {
				h.Set([]byte(fmt.Sprint("field", i)), []byte("value"))
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	fill("small", 10)
	fill("big", 10000)
	st := s.Stats()
	if st.Items != 2 || st.Bytes < 10000*10 {
		t.Fatalf("Stats = %+v, want 2 items and the big hash's bytes", st)
	}
	checkInvariants(t, s)
	if _, err := s.Store(ModeSet, []byte("big"), []byte("x"), 0, 0, 0); err != nil {
		t.Fatal(err)
	}
	if it, _ := s.Get([]byte("big")); it.Kind != KindString {
		t.Fatalf("SET over a hash left kind %v", it.Kind)
	}
	if err := s.UpdateHash([]byte("small"), &h, func() error {
		for i := range 10 {
			h.Delete([]byte(fmt.Sprint("field", i)))
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if _, ok := s.Peek([]byte("small")); ok {
		t.Fatal("an emptied hash still exists")
	}
	s.Delete([]byte("big"))
	if st := s.Stats(); st.Items != 0 || st.Bytes != 0 {
		t.Fatalf("after removing everything Stats = %+v", st)
	}
	checkInvariants(t, s)
}

// TestHashEviction: big hashes over the memory limit are evicted whole
// and the accounting stays exact.
func TestHashEviction(t *testing.T) {
	s := newTestStore(t, Config{MemoryLimit: 8 << 20, Shards: 16})
	var h Hash
	for k := range 40 {
		if err := s.UpdateHash([]byte(fmt.Sprint("h", k)), &h, func() error {
			for i := range 10000 {
				h.Set([]byte(fmt.Sprint("field", i)), []byte("some value bytes"))
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	st := s.Stats()
	if st.Evictions == 0 || st.Bytes > st.Limit {
		t.Fatalf("Stats = %+v: want evictions and bytes within the limit", st)
	}
	checkInvariants(t, s)
}

// TestHashWrongType: string operations refuse a hash and leave it; hash
// operations refuse a string.
func TestHashWrongType(t *testing.T) {
	s := newTestStore(t, Config{})
	var h Hash
	key := []byte("k")
	if err := s.UpdateHash(key, &h, func() error { h.Set([]byte("f"), []byte("1")); return nil }); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.Incr(key, 1, false); !errors.Is(err, ErrWrongType) {
		t.Errorf("Incr on a hash: %v", err)
	}
	if _, err := s.Store(ModeAppend, key, []byte("x"), 0, 0, 0); !errors.Is(err, ErrWrongType) {
		t.Errorf("append on a hash: %v", err)
	}
	if it, ok := s.Take(key); !ok || it.Kind != KindHash {
		t.Errorf("Take = %+v %v", it, ok)
	}
	if _, ok := s.Peek(key); !ok {
		t.Fatal("Take removed a hash")
	}
	mustStore(t, s, ModeSet, "str", "v", 0, 0)
	if err := s.ViewHash([]byte("str"), &h, func() error { return nil }); !errors.Is(err, ErrWrongType) {
		t.Errorf("ViewHash on a string: %v", err)
	}
	checkInvariants(t, s)
}

// TestHashSetZeroAllocs: HSET and HGET on a small hash allocate nothing.
func TestHashSetZeroAllocs(t *testing.T) {
	s := newTestStore(t, Config{})
	var h Hash
	key, f, v := []byte("k"), []byte("field"), []byte("a value longer than sixteen bytes")
	allocs := testing.AllocsPerRun(100, func() {
		_ = s.UpdateHash(key, &h, func() error { h.Set(f, v); return nil })
		_ = s.ViewHash(key, &h, func() error { h.Get(f); return nil })
	})
	if allocs != 0 {
		t.Errorf("HSET+HGET allocate %.1f times", allocs)
	}
}

// TestCompactCollectionRewrittenInPlace: a write that leaves a compact
// collection the same size overwrites its record (same place, no dead
// bytes, a new CAS token); one that changes the size writes a new record.
func TestCompactCollectionRewrittenInPlace(t *testing.T) {
	s := newTestStore(t, Config{Shards: 1})
	key := []byte("h")
	where := func() (at uint64, cas uint64, used uint32) {
		h := s.hash(key)
		sh := s.shardFor(h)
		sh.mu.Lock()
		defer sh.mu.Unlock()
		var e entry
		if !sh.findLocked(h, key, &e) {
			t.Fatal("key missing")
		}
		return loc(e.seg, e.off), e.cas, sh.segs[sh.active].used
	}
	var h Hash
	hset := func(f, v string) {
		t.Helper()
		if err := s.UpdateHash(key, &h, func() error { h.Set([]byte(f), []byte(v)); return nil }); err != nil {
			t.Fatal(err)
		}
	}
	hget := func(f string) string {
		var out string
		_ = s.ViewHash(key, &h, func() error { v, _ := h.Get([]byte(f)); out = string(v); return nil })
		return out
	}
	hset("f", "aaaa")
	hset("g", "1234")
	l0, c0, u0 := where()
	hset("f", "bbbb")
	l1, c1, u1 := where()
	if l1 != l0 || u1 != u0 || c1 <= c0 {
		t.Fatalf("same-size HSET: loc %x→%x, segment used %d→%d, cas %d→%d; want in place with a new token", l0, l1, u0, u1, c0, c1)
	}
	hset("g", "2345") // an integer field, same encoded size (13-bit)
	if l2, _, _ := where(); l2 != l0 {
		t.Fatalf("same-size integer HSET moved the record")
	}
	if hget("f") != "bbbb" || hget("g") != "2345" {
		t.Fatalf("after in-place writes f=%q g=%q", hget("f"), hget("g"))
	}
	hset("f", "ccccc")
	if l3, _, u3 := where(); l3 == l0 || u3 == u0 {
		t.Fatalf("a longer value stayed in place")
	}
	if hget("f") != "ccccc" {
		t.Fatalf("f=%q", hget("f"))
	}
	var l List
	lk := []byte("l")
	for _, v := range []string{"x1", "x2", "x3"} {
		if err := s.UpdateList(lk, &l, func() error { l.Push(false, []byte(v)); return nil }); err != nil {
			t.Fatal(err)
		}
	}
	key = lk
	before, _, _ := where()
	if err := s.UpdateList(lk, &l, func() error { l.Pop(true, nil); l.Push(false, []byte("x4")); return nil }); err != nil {
		t.Fatal(err)
	}
	if after, _, _ := where(); after != before {
		t.Fatalf("LPOP+RPUSH of equal sizes moved the list")
	}
	var got []string
	_ = s.ViewList(lk, &l, func() error {
		l.Each(0, false, func(_ int, v []byte) bool { got = append(got, string(v)); return true })
		return nil
	})
	if fmt.Sprint(got) != "[x2 x3 x4]" {
		t.Fatalf("list = %v", got)
	}
	checkInvariants(t, s)
}

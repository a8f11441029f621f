package store

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// zmodel is a sorted set as a map, ordered on demand.
type zmodel map[string]float64

type zpair struct {
	m string
	s float64
}

func (md zmodel) sorted() []zpair {
	out := make([]zpair, 0, len(md))
	for m, s := range md {
		out = append(out, zpair{m, s})
	}
	slices.SortFunc(out, func(a, b zpair) int {
		if c := cmp.Compare(a.s, b.s); c != 0 {
			return c
		}
		return cmp.Compare(a.m, b.m)
	})
	return out
}

// checkBigZSet checks a big sorted set's structure: chunks in order,
// counts and byte total right, the table agreeing with the chunks.
func checkBigZSet(t *testing.T, b *bigZSet) {
	t.Helper()
	n := 0
	var bytesCap int64
	var ps float64
	var pm []byte
	for ci, ch := range b.chunks {
		if ch.n == 0 {
			t.Fatalf("chunk %d is empty", ci)
		}
		bytesCap += int64(cap(ch.data))
		if ch.marked {
			was := ch.marks
			if b.chunks[ci].mark(); b.chunks[ci].marks != was {
				t.Fatalf("chunk %d's marks %v are stale: %v now", ci, was, b.chunks[ci].marks)
			}
		}
		k := 0
		for off := 0; off < len(ch.data); k++ {
			s, m, e := zentry(ch.data, off)
			if n+k > 0 && zcmp(ps, pm, s, m) >= 0 {
				t.Fatalf("chunk %d out of order at %q", ci, m)
			}
			if v, ok := b.score(m); !ok || v != s {
				t.Fatalf("table has %q = %v %v, chunk %v", m, v, ok, s)
			}
			ps, pm = s, m
			off = e
		}
		if k != ch.n {
			t.Fatalf("chunk %d holds %d entries, counts %d", ci, k, ch.n)
		}
		n += k
	}
	if n != b.t.n || bytesCap != b.bytes {
		t.Fatalf("chunks hold %d members (table %d), %d bytes (counted %d)", n, b.t.n, bytesCap, b.bytes)
	}
}

// TestZSetMatchesModel applies random ZADD/ZREM/range removals to a ZSet
// and to a map, across the listpack-to-big conversion, and checks scores,
// ranks, ranges and counts against the model.
func TestZSetMatchesModel(t *testing.T) {
	for _, n := range []int{5, 100, 3000} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			s := newTestStore(t, Config{MemoryLimit: 256 << 20})
			key := []byte("z")
			md := zmodel{}
			rng := rand.New(rand.NewPCG(2, uint64(n)))
			prng := rand.New(rand.NewPCG(3, uint64(n)))
			var pc patchCheck
			everyRecordABase(t)
			scores := []float64{0, 1, 2.5, -3, 0.1, 1e300, math.Inf(1), math.Inf(-1), 1e17, -7}
			var z ZSet
			check := func() {
				err := s.ViewZSet(key, &z, func() error {
					want := md.sorted()
					if z.Len() != len(want) {
						t.Fatalf("Len = %d, model %d", z.Len(), len(want))
					}
					if b := z.big(); b != nil {
						checkBigZSet(t, b)
					}
					for r, p := range want {
						if rng.IntN(8) != 0 {
							continue
						}
						got, ok := z.Score([]byte(p.m))
						if !ok || got != p.s {
							t.Fatalf("Score(%q) = %v %v, want %v", p.m, got, ok, p.s)
						}
						rk, _, ok := z.Rank([]byte(p.m))
						if !ok || rk != r {
							t.Fatalf("Rank(%q) = %d %v, want %d", p.m, rk, ok, r)
						}
					}
					if len(want) == 0 {
						return nil
					}
					a := rng.IntN(len(want))
					b := a + rng.IntN(len(want)-a)
					rev := rng.IntN(2) == 0
					i := a
					if rev {
						i = b
					}
					z.Range(a, b, rev, func(m []byte, sc float64) bool {
						if string(m) != want[i].m || sc != want[i].s {
							t.Fatalf("Range(%d, %d, %v) at %d gave %q %v, want %+v", a, b, rev, i, m, sc, want[i])
						}
						if rev {
							i--
						} else {
							i++
						}
						return true
					})
					if rev && i != a-1 || !rev && i != b+1 {
						t.Fatalf("Range(%d, %d, %v) stopped at %d", a, b, rev, i)
					}
					x := scores[rng.IntN(len(scores))]
					incl := rng.IntN(2) == 0
					wantN := 0
					for _, p := range want {
						if p.s < x || incl && p.s == x {
							wantN++
						}
					}
					if got := z.CountBelow(x, incl); got != wantN {
						t.Fatalf("CountBelow(%v, %v) = %d, want %d", x, incl, got, wantN)
					}
					// RangeFromScore from x: the model's members from
					// the first whose score is not below x.
					j := 0
					for j < len(want) && want[j].s < x {
						j++
					}
					z.RangeFromScore(x, func(m []byte, sc float64) bool {
						if j >= len(want) || string(m) != want[j].m || sc != want[j].s {
							t.Fatalf("RangeFromScore(%v) gave %q %v at %d", x, m, sc, j)
						}
						j++
						return rng.IntN(40) != 0
					})
					return nil
				})
				if err != nil {
					t.Fatal(err)
				}
			}
			for i := range n * 4 {
				m := fmt.Sprintf("m%d", rng.IntN(n))
				if i%11 == 0 {
					m += string(bytes.Repeat([]byte("x"), rng.IntN(80))) // some over ZSetValue
				}
				switch op := rng.IntN(10); {
				case op < 2:
					var had bool
					if err := s.UpdateZSet(key, &z, func() error { had = z.Delete([]byte(m)); return nil }); err != nil {
						t.Fatal(err)
					}
					if _, ok := md[m]; ok != had {
						t.Fatalf("Delete(%q) = %v, model %v", m, had, ok)
					}
					delete(md, m)
				case op == 2 && i%5 == 0:
					want := md.sorted()
					a, b := rng.IntN(len(want)+1), rng.IntN(len(want)+1)
					a, b = min(a, b), max(a, b)
					b = min(b, a+20)
					var got int
					if err := s.UpdateZSet(key, &z, func() error { got = z.DeleteRange(a, b-1); return nil }); err != nil {
						t.Fatal(err)
					}
					if got != b-a {
						t.Fatalf("DeleteRange(%d, %d) = %d", a, b-1, got)
					}
					for _, p := range want[a:b] {
						delete(md, p.m)
					}
				default:
					sc := scores[rng.IntN(len(scores))]
					if rng.IntN(2) == 0 {
						sc = float64(rng.IntN(1000)) / 8
					}
					var added bool
					if err := s.UpdateZSet(key, &z, func() error { added = z.Set([]byte(m), sc); return nil }); err != nil {
						t.Fatal(err)
					}
					if _, ok := md[m]; ok == added {
						t.Fatalf("Set(%q) added = %v, model had it: %v", m, added, ok)
					}
					md[m] = sc
				}
				// A range read marks the chunk it starts in (zchunk.marks),
				// which the next changes must clear.
				_ = s.ViewZSet(key, &z, func() error {
					z.RangeFromScore(float64(rng.IntN(1000))/8, func([]byte, float64) bool { return false })
					if b := z.big(); b != nil { // durable mode's patches (patch.go)
						pc.check(t, b, key, prng, fmt.Sprintf("step %d", i))
					}
					return nil
				})
				if i%(n/5+1) == 0 {
					check()
				}
			}
			check()
			checkInvariants(t, s)
			if n == 3000 && pc.patches < 500 {
				t.Errorf("only %d of %d changes were checked as patches", pc.patches, 4*n)
			}
		})
	}
}

// TestZSetLex: CountBelowLex over a set of equal scores, small and big.
func TestZSetLex(t *testing.T) {
	s := newTestStore(t, Config{})
	var z ZSet
	var all []string
	for _, n := range []int{50, 2000} {
		key := []byte(fmt.Sprint("lex", n))
		all = all[:0]
		if err := s.UpdateZSet(key, &z, func() error {
			for i := range n {
				m := fmt.Sprintf("w%d", (i*7919)%n)
				z.Set([]byte(m), 0)
				all = append(all, m)
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		slices.Sort(all)
		_ = s.ViewZSet(key, &z, func() error {
			for _, probe := range []string{"", "w", "w1", "w10", "w5", "w999", "x", all[len(all)/3]} {
				for _, incl := range []bool{false, true} {
					want := 0
					for _, m := range all {
						if m < probe || incl && m == probe {
							want++
						}
					}
					if got := z.CountBelowLex([]byte(probe), incl); got != want {
						t.Fatalf("n=%d CountBelowLex(%q, %v) = %d, want %d", n, probe, incl, got, want)
					}
				}
			}
			return nil
		})
	}
}

// TestZSetEncoding: a set leaves its listpack past the limits, and the
// listpack writes scores as Redis does.
func TestZSetEncoding(t *testing.T) {
	s := newTestStore(t, Config{})
	var z ZSet
	key := []byte("z")
	for i := range 128 {
		_ = s.UpdateZSet(key, &z, func() error { z.Set([]byte(fmt.Sprint(i)), float64(i)); return nil })
	}
	_ = s.ViewZSet(key, &z, func() error {
		if z.Encoding() != "listpack" {
			t.Fatalf("128 members: %s", z.Encoding())
		}
		return nil
	})
	_ = s.UpdateZSet(key, &z, func() error { z.Set([]byte("one more"), 0.5); return nil })
	_ = s.ViewZSet(key, &z, func() error {
		if z.Encoding() != "skiplist" || z.Len() != 129 {
			t.Fatalf("129 members: %s %d", z.Encoding(), z.Len())
		}
		return nil
	})
	for _, c := range []struct {
		f    float64
		want string
	}{{0.1, "0.1"}, {3, "3"}, {-0.0, "0"}, {1e17, "100000000000000000"}, {1e300, "1e+300"},
		{math.Inf(-1), "-inf"}, {4.7e18, "4.7e+18"}, {4.6e18, "4600000000000000000"}} {
		if got := string(appendLPScore(nil, c.f)); got != c.want {
			t.Errorf("listpack score of %v = %q, want %q", c.f, got, c.want)
		}
	}
	if got := string(AppendD2String(nil, 1e17)); got != "100000000000000000" {
		t.Errorf("d2string(1e17) = %q", got)
	}
	if got := string(appendScanScore(nil, 1e17)); got != "1e+17" {
		t.Errorf("ZSCAN score of 1e17 = %q", got)
	}
	if got := string(appendScanScore(nil, 0.1)); got != "0.10000000000000001" {
		t.Errorf("ZSCAN score of 0.1 = %q", got)
	}
	if got := string(AppendD2String(nil, math.Copysign(0, -1))); got != "-0" {
		t.Errorf("d2string(-0) = %q", got)
	}
}

// TestZSetAccountingEviction: big sorted sets are charged for their
// objects, give every byte back when removed, and are evicted whole.
func TestZSetAccountingEviction(t *testing.T) {
	s := newTestStore(t, Config{MemoryLimit: 8 << 20, Shards: 16})
	var z ZSet
	for k := range 40 {
		if err := s.UpdateZSet([]byte(fmt.Sprint("z", k)), &z, func() error {
			for i := range 5000 {
				z.Set([]byte(fmt.Sprint("member", i)), float64(i%97))
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
	s.FlushAll(0)
	if st := s.Stats(); st.Items != 0 || st.Bytes != 0 {
		t.Fatalf("after flush Stats = %+v", st)
	}
	mustStore(t, s, ModeSet, "str", "v", 0, 0)
	if err := s.ViewZSet([]byte("str"), &z, func() error { return nil }); !errors.Is(err, ErrWrongType) {
		t.Errorf("ViewZSet on a string: %v", err)
	}
}

// TestZSetFlatRoundTrip: a big set's flat encoding rebuilds it, and
// malformed encodings are refused.
func TestZSetFlatRoundTrip(t *testing.T) {
	s := newTestStore(t, Config{})
	var z ZSet
	key := []byte("z")
	_ = s.UpdateZSet(key, &z, func() error {
		for i := range 1000 {
			z.Set([]byte(fmt.Sprint("m", i)), float64(i%13)/3)
		}
		return nil
	})
	_ = s.ViewZSet(key, &z, func() error {
		flat := z.big().appendFlat(nil)
		o, err := decodeFlat(&z.c.s.mem, z.c.sh.seed, KindZSet, flat)
		if err != nil {
			t.Fatal(err)
		}
		b := o.(*bigZSet)
		defer b.free()
		checkBigZSet(t, b)
		if !bytes.Equal(b.appendFlat(nil), flat) {
			t.Fatal("flat encoding does not round-trip")
		}
		for _, bad := range [][]byte{flat[:len(flat)-1], append(slices.Clone(flat), 0), {5, 1, 'a'}} {
			if _, err := decodeFlat(&z.c.s.mem, z.c.sh.seed, KindZSet, bad); err == nil {
				t.Errorf("decodeFlat accepted %d bad bytes", len(bad))
			}
		}
		return nil
	})
}

// TestZSetZeroAllocs: ZADD and ZSCORE allocate nothing, small and big.
func TestZSetZeroAllocs(t *testing.T) {
	s := newTestStore(t, Config{})
	var z ZSet
	for _, n := range []int{10, 1000} {
		key := []byte(fmt.Sprint("z", n))
		_ = s.UpdateZSet(key, &z, func() error {
			for i := range n {
				z.Set([]byte(fmt.Sprint("member", i)), float64(i))
			}
			return nil
		})
		m := []byte("member5")
		sc := 0.0
		allocs := testing.AllocsPerRun(200, func() {
			sc++
			_ = s.UpdateZSet(key, &z, func() error { z.Set(m, float64(int(sc)%n)); return nil })
			_ = s.ViewZSet(key, &z, func() error { z.Score(m); return nil })
		})
		if allocs != 0 {
			t.Errorf("n=%d: ZADD+ZSCORE allocate %.1f times", n, allocs)
		}
	}
}

// FuzzZSetFlat: zsetFromFlat refuses or rebuilds whatever bytes it is
// given, never panics, and what it accepts writes itself back readably.
func FuzzZSetFlat(f *testing.F) {
	s := newTestStore(f, Config{})
	var z ZSet
	_ = s.UpdateZSet([]byte("z"), &z, func() error {
		for i := range 200 {
			z.Set([]byte(fmt.Sprint("m", i)), float64(i%7)-2.5)
		}
		return nil
	})
	_ = s.ViewZSet([]byte("z"), &z, func() error { f.Add(z.big().appendFlat(nil)); return nil })
	f.Add([]byte{1, 1, 'a', 0, 0, 0, 0, 0, 0, 0xf8, 0x7f})
	f.Add([]byte{0})
	f.Fuzz(func(t *testing.T, b []byte) {
		o, err := decodeFlat(&s.mem, s.shards[0].seed, KindZSet, b)
		if err != nil {
			return
		}
		bz := o.(*bigZSet)
		defer bz.free()
		checkBigZSet(t, bz)
		got := bz.appendFlat(nil) // b, or b with its lengths written minimally
		o2, err := decodeFlat(&s.mem, s.shards[0].seed, KindZSet, got)
		if err == nil {
			defer o2.free()
		}
		if err != nil || o2.len() != bz.len() || !bytes.Equal(o2.appendFlat(nil), got) {
			t.Fatalf("accepted %x but its rewrite %x does not read back: %v", b, got, err)
		}
	})
}

// TestRangeFromScore: the members from the first whose score reaches x
// are the ones CountBelow and Range give, in compact and big sets, for
// scores before, between, at, after and among repeated members'.
func TestRangeFromScore(t *testing.T) {
	for _, n := range []int{5, 3000} {
		s := New(Config{MemoryLimit: 256 << 20})
		var z ZSet
		key := []byte(fmt.Sprint("z", n))
		_ = s.UpdateZSet(key, &z, func() error {
			for i := range n {
				m := fmt.Sprint("m", i)
				if i%7 == 0 { // a two-byte length: the skip's slow path
					m += strings.Repeat("x", 120+i%60)
				}
				z.Set([]byte(m), float64(i/3))
			}
			return nil
		})
		_ = s.ViewZSet(key, &z, func() error {
			xs := []float64{-1, 0, 0.5, 1, float64(n/6) + 0.5, float64(n / 3), float64(n/3) + 1}
			for x := -0.25; x < float64(n/3); x += 13.5 { // into every chunk
				xs = append(xs, x, math.Floor(x))
			}
			for _, x := range xs {
				var want, got []string
				if first := z.CountBelow(x, false); first < z.Len() {
					z.Range(first, z.Len()-1, false, func(m []byte, s float64) bool {
						want = append(want, fmt.Sprint(string(m), s))
						return true
					})
				}
				z.RangeFromScore(x, func(m []byte, s float64) bool {
					got = append(got, fmt.Sprint(string(m), s))
					return true
				})
				if fmt.Sprint(got) != fmt.Sprint(want) {
					t.Errorf("n=%d x=%v: RangeFromScore %d members, CountBelow+Range %d", n, x, len(got), len(want))
				}
			}
			return nil
		})
	}
}

// TestZSetRandomInsertFill adds members in random score order, as a
// leaderboard or a geo set grows, and checks that the chunks end well
// filled (rebalance shares a full chunk's entries with a neighbour before
// splitting it; splitting alone left them 72 % full on average) and the
// structure whole.
func TestZSetRandomInsertFill(t *testing.T) {
	s := newTestStore(t, Config{MemoryLimit: 256 << 20})
	key := []byte("z")
	r := rand.New(rand.NewPCG(9, 10))
	var z ZSet
	for i := range 100000 {
		if err := s.UpdateZSet(key, &z, func() error {
			z.Set(fmt.Appendf(nil, "member:%d", i), float64(r.Uint64()>>12))
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	_ = s.ViewZSet(key, &z, func() error {
		b := z.big()
		checkBigZSet(t, b)
		used := 0
		for _, ch := range b.chunks {
			used += len(ch.data)
		}
		if fill := float64(used) / float64(len(b.chunks)*zChunkMax); fill < 0.8 {
			t.Fatalf("%d chunks %.2f full on average", len(b.chunks), fill)
		}
		return nil
	})
}

package store

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// setMember draws a member: mostly integers (some needing 4 or 8 bytes in
// an intset), some short strings, a few longer than SetListpackValue.
func setMember(rng *rand.Rand, n int, strs bool) string {
	switch r := rng.IntN(20); {
	case !strs || r < 12:
		v := int64(rng.IntN(n))
		switch rng.IntN(6) {
		case 0:
			v = -v
		case 1:
			v += math.MaxInt16
		case 2:
			v = -v - math.MaxInt32 - 2
		}
		return strconv.FormatInt(v, 10)
	case r < 19:
		return fmt.Sprintf("m%d", rng.IntN(n))
	default:
		return fmt.Sprintf("%s%d", strings.Repeat("l", 70), rng.IntN(n))
	}
}

// checkSet compares st with the model: Len, Has of every model member and
// of some non-members, Each, and the encoding's order.
func checkSet(t *testing.T, st *Set, model map[string]bool) {
	t.Helper()
	if st.Len() != len(model) {
		t.Fatalf("Len = %d, model %d (%s)", st.Len(), len(model), st.Encoding())
	}
	for m := range model {
		if !st.Has([]byte(m)) {
			t.Fatalf("Has(%q) = false (%s)", m, st.Encoding())
		}
	}
	for _, m := range []string{"nope", "-0", "01", "+1", "99999999999999999999", "9223372036854775808"} {
		if st.Has([]byte(m)) != model[m] {
			t.Fatalf("Has(%q) = %v (%s)", m, !model[m], st.Encoding())
		}
	}
	var got []string
	st.Each(func(m []byte) bool { got = append(got, string(m)); return true })
	if len(got) != len(model) {
		t.Fatalf("Each gave %d members, want %d", len(got), len(model))
	}
	seen := map[string]bool{}
	for _, m := range got {
		if !model[m] || seen[m] {
			t.Fatalf("Each gave %q (in model %v, twice %v)", m, model[m], seen[m])
		}
		seen[m] = true
	}
	if st.Encoding() == "intset" {
		xs := make([]int64, len(got))
		for i, m := range got {
			xs[i], _ = strconv.ParseInt(m, 10, 64)
		}
		if !slices.IsSorted(xs) {
			t.Fatalf("intset Each not ascending: %v", got)
		}
		if err := isValidate(st.c.lp); len(got) > 0 && err != nil {
			t.Fatalf("intset does not validate: %v", err)
		}
	}
	if st.Encoding() == "listpack" && st.c.lp != nil {
		if err := lpValidate(st.c.lp); err != nil {
			t.Fatalf("listpack does not validate: %v", err)
		}
	}
}

// TestSetMatchesModel applies random SADD/SREM/SPOP to a Set and to a Go
// map, across the intset, listpack and table encodings and the
// conversions between them, and checks every answer and the whole set
// against the map.
func TestSetMatchesModel(t *testing.T) {
	for _, tc := range []struct {
		n    int
		strs bool
		want string // the final encoding
	}{
		{5, false, "intset"}, {300, false, "intset"}, {3000, false, "hashtable"},
		{5, true, "listpack"}, {60, true, "listpack"}, {300, true, "hashtable"}, {3000, true, "hashtable"},
	} {
		t.Run(fmt.Sprint(tc.n, tc.strs), func(t *testing.T) {
			s := newTestStore(t, Config{MemoryLimit: 256 << 20})
			key := []byte("s")
			model := map[string]bool{}
			rng := rand.New(rand.NewPCG(2, uint64(tc.n)))
			var st Set
			encodings := map[string]bool{}
			for i := range tc.n * 3 {
				// Integers first, then strings: intset, listpack, table.
				m := setMember(rng, tc.n, tc.strs && i >= tc.n/3)
				if tc.n < 100 {
					m = strings.TrimPrefix(m, strings.Repeat("l", 70)) // stay small
				}
				var got bool
				var popped []byte
				op := rng.IntN(8)
				err := s.UpdateSet(key, &st, func() error {
					switch {
					case op == 0:
						got = st.Remove([]byte(m))
					case op == 1 && st.Len() > 0:
						popped = st.Pop(nil)
					default:
						got = st.Add([]byte(m))
					}
					encodings[st.Encoding()] = true
					return nil
				})
				if err != nil {
					t.Fatal(err)
				}
				switch {
				case op == 0:
					if got != model[m] {
						t.Fatalf("Remove(%q) = %v, model %v", m, got, model[m])
					}
					delete(model, m)
				case popped != nil:
					if !model[string(popped)] {
						t.Fatalf("Pop gave %q, not a member", popped)
					}
					delete(model, string(popped))
				case op != 1:
					if got == model[m] {
						t.Fatalf("Add(%q) = %v, model had it: %v", m, got, model[m])
					}
					model[m] = true
				}
				if i%97 == 0 || i == tc.n*3-1 {
					if err := s.ViewSet(key, &st, func() error { checkSet(t, &st, model); return nil }); err != nil {
						t.Fatal(err)
					}
					checkInvariants(t, s)
				}
			}
			_ = s.ViewSet(key, &st, func() error {
				if len(model) > 0 && st.Encoding() != tc.want {
					t.Errorf("encoding %s, want %s", st.Encoding(), tc.want)
				}
				return nil
			})
			t.Logf("encodings seen: %v", encodings)
		})
	}
}

// TestSetEncodings pins Redis 7.2's encoding choices and conversions.
func TestSetEncodings(t *testing.T) {
	s := newTestStore(t, Config{})
	var st Set
	enc := func(key string, members ...string) string {
		t.Helper()
		var e string
		if err := s.UpdateSet([]byte(key), &st, func() error {
			for _, m := range members {
				st.Add([]byte(m))
			}
			e = st.Encoding()
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		return e
	}
	many := func(prefix string, n int) []string {
		var out []string
		for i := range n {
			out = append(out, fmt.Sprint(prefix, i))
		}
		return out
	}
	for _, c := range []struct {
		key     string
		members []string
		want    string
	}{
		{"a", []string{"1", "2", "-3"}, "intset"},
		{"a", []string{"x"}, "listpack"},
		{"b", many("", 512), "intset"},
		{"b", []string{"512"}, "hashtable"},
		{"c", many("", 127), "intset"},
		{"c", []string{"x"}, "listpack"}, // 127 < 128 entries
		{"d", many("", 128), "intset"},
		{"d", []string{"x"}, "hashtable"}, // the listpack would have 129
		{"e", many("m", 128), "listpack"},
		{"e", []string{"m0"}, "listpack"},
		{"e", []string{"x"}, "hashtable"},
		{"f", []string{strings.Repeat("x", 64)}, "listpack"},
		{"g", []string{strings.Repeat("x", 65)}, "hashtable"},
		{"h", []string{"01"}, "listpack"},
		{"i", []string{"9223372036854775807", "-9223372036854775808"}, "intset"},
		{"j", []string{"9223372036854775808"}, "listpack"},
	} {
		if got := enc(c.key, c.members...); got != c.want {
			t.Errorf("%s after %d members (%.20q...): %s, want %s", c.key, len(c.members), c.members, got, c.want)
		}
	}
	// A big intset with a member too wide for a listpack: a table.
	s.SetLimits(Limits{HashEntries: 128, HashValue: 64, SetIntsetEntries: 512, SetListpackEntries: 128, SetListpackValue: 5})
	if got := enc("k", "1", "123456"); got != "intset" {
		t.Errorf("k: %s", got)
	}
	if got := enc("k", "x"); got != "hashtable" {
		t.Errorf("k with 6-digit integers and the value limit 5: %s, want hashtable", got)
	}
	s.SetLimits(DefaultLimits)
	// Prepare: SADD's size hint picks the first encoding.
	for _, c := range []struct {
		first string
		n     int
		want  string
	}{{"1", 512, "intset"}, {"1", 513, "hashtable"}, {"1", 100, "intset"}, {"x", 128, "listpack"}, {"x", 129, "hashtable"}} {
		key := []byte("p" + c.first + fmt.Sprint(c.n))
		_ = s.UpdateSet(key, &st, func() error {
			st.Prepare([]byte(c.first), c.n)
			st.Add([]byte(c.first))
			if got := st.Encoding(); got != c.want {
				t.Errorf("Prepare(%q, %d): %s, want %s", c.first, c.n, got, c.want)
			}
			return nil
		})
	}
	checkInvariants(t, s)
}

// TestIntsetUpgrade: widening keeps the order and the values, whichever
// end the new element goes to.
func TestIntsetUpgrade(t *testing.T) {
	for _, seq := range [][]int64{
		{1, -5, 300, math.MaxInt16 + 1, -7},
		{5, 3, math.MinInt32 - 1, 4, math.MaxInt64, math.MinInt64},
		{math.MaxInt32 + 1, 0, -1},
		{-1, math.MinInt16 - 1},
	} {
		is := append([]byte(nil), emptyIntset...)
		var model []int64
		for _, v := range seq {
			i, found := isSearch(is, v)
			if found {
				t.Fatalf("%d found in %v", v, model)
			}
			is = isInsert(is, i, v)
			model = append(model, v)
			slices.Sort(model)
		}
		if err := isValidate(is); err != nil {
			t.Fatalf("%v: %v", seq, err)
		}
		for i, v := range model {
			if g := isGet(is, i); g != v {
				t.Fatalf("%v: element %d = %d, want %d", seq, i, g, v)
			}
		}
		if w, want := isWidth(is), slices.Max(mapSlice(model, isWidthOf)); w != want {
			t.Fatalf("%v: width %d, want %d", seq, w, want)
		}
	}
}

func mapSlice(xs []int64, f func(int64) int) []int {
	out := make([]int, len(xs))
	for i, x := range xs {
		out[i] = f(x)
	}
	return out
}

func TestIntsetValidate(t *testing.T) {
	mk := func(w int, vs ...int64) []byte {
		b := binary.LittleEndian.AppendUint32(nil, uint32(w))
		b = binary.LittleEndian.AppendUint32(b, uint32(len(vs)))
		for _, v := range vs {
			switch w {
			case 2:
				b = binary.LittleEndian.AppendUint16(b, uint16(v))
			case 4:
				b = binary.LittleEndian.AppendUint32(b, uint32(v))
			default:
				b = binary.LittleEndian.AppendUint64(b, uint64(v))
			}
		}
		return b
	}
	for _, c := range []struct {
		in []byte
		ok bool
	}{
		{mk(2, 1, 2, 3), true},
		{mk(8, -5, 1<<40), true},
		{mk(4, 7), true},
		{mk(2), false},           // empty
		{mk(2, 2, 1), false},     // descending
		{mk(2, 1, 1), false},     // twice
		{mk(3, 1), false},        // no such encoding
		{mk(2, 1)[:9], false},    // short
		{emptyIntset[:7], false}, // no header
		{append(mk(2, 1), 0), false},
		{nil, false},
	} {
		if err := isValidate(c.in); (err == nil) != c.ok {
			t.Errorf("isValidate(%x) = %v, want ok %v", c.in, err, c.ok)
		}
	}
}

// FuzzIntsetValidate: whatever the bytes, isValidate does not panic, and
// an intset it accepts works with every operation.
func FuzzIntsetValidate(f *testing.F) {
	f.Add([]byte{2, 0, 0, 0, 2, 0, 0, 0, 1, 0, 2, 0})
	f.Add([]byte{8, 0, 0, 0, 1, 0, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8})
	f.Add([]byte{4, 0, 0, 0, 0xff, 0xff, 0xff, 0xff})
	f.Fuzz(func(t *testing.T, b []byte) {
		if isValidate(b) != nil {
			return
		}
		n := isLen(b)
		is := append([]byte(nil), b...)
		for i := 1; i < n; i++ {
			if isGet(is, i-1) >= isGet(is, i) {
				t.Fatalf("accepted an unsorted intset %x", b)
			}
		}
		for i := range n {
			v := isGet(b, i)
			if j, found := isSearch(is, v); !found || j != i {
				t.Fatalf("isSearch(%d) = %d %v, want %d", v, j, found, i)
			}
		}
		v := isGet(is, n-1)
		if v < math.MaxInt64 {
			i, found := isSearch(is, v+1)
			if found || i != n {
				t.Fatalf("isSearch(max+1) = %d %v", i, found)
			}
			is = isInsert(is, i, v+1)
			if isValidate(is) != nil || isLen(is) != n+1 {
				t.Fatalf("insert broke %x", is)
			}
		}
		for isLen(is) > 0 {
			is = isDelete(is, 0)
		}
	})
}

// TestSetScanAcrossGrowth: members present for the whole scan are given,
// even though the table grows and shrinks between calls.
func TestSetScanAcrossGrowth(t *testing.T) {
	s := newTestStore(t, Config{MemoryLimit: 256 << 20})
	key := []byte("s")
	var st Set
	update := func(fn func()) {
		if err := s.UpdateSet(key, &st, func() error { fn(); return nil }); err != nil {
			t.Fatal(err)
		}
	}
	update(func() {
		for i := range 500 {
			st.Add([]byte(fmt.Sprint("keep", i)))
		}
	})
	seen := map[string]bool{}
	cursor, calls := uint64(0), 0
	for {
		if err := s.ViewSet(key, &st, func() error {
			cursor = st.Scan(cursor, 20, func(m []byte) { seen[string(m)] = true })
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		calls++
		switch calls {
		case 3:
			update(func() {
				for i := range 5000 {
					st.Add([]byte(fmt.Sprint("tmp", i)))
				}
			})
		case 10:
			update(func() {
				for i := range 5000 {
					st.Remove([]byte(fmt.Sprint("tmp", i)))
				}
			})
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
	// A small set comes whole in one batch.
	n := 0
	_ = s.UpdateSet([]byte("small"), &st, func() error {
		st.Add([]byte("1"))
		st.Add([]byte("2"))
		return nil
	})
	_ = s.ViewSet([]byte("small"), &st, func() error {
		if c := st.Scan(0, 1, func([]byte) { n++ }); c != 0 || n != 2 {
			t.Errorf("small Scan: cursor %d, %d members", c, n)
		}
		return nil
	})
}

// TestSetAccountingAndRemoval: a set is charged for its record and its
// object, the key goes with its last member, and DEL, SET over it and
// eviction give every byte back.
func TestSetAccountingAndRemoval(t *testing.T) {
	s := newTestStore(t, Config{MemoryLimit: 64 << 20})
	var st Set
	fill := func(key string, n int, prefix string) {
		if err := s.UpdateSet([]byte(key), &st, func() error {
			for i := range n {
				st.Add([]byte(fmt.Sprint(prefix, i)))
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	fill("ints", 100, "")
	fill("small", 10, "m")
	fill("big", 10000, "member")
	st1 := s.Stats()
	if st1.Items != 3 || st1.Bytes < 10000*7 {
		t.Fatalf("Stats = %+v, want 3 items and the big set's bytes", st1)
	}
	checkInvariants(t, s)
	if _, err := s.Store(ModeSet, []byte("big"), []byte("x"), 0, 0, 0); err != nil {
		t.Fatal(err)
	}
	if it, _ := s.Get([]byte("big")); it.Kind != KindString {
		t.Fatalf("SET over a set left kind %v", it.Kind)
	}
	for _, key := range []string{"ints", "small"} {
		if err := s.UpdateSet([]byte(key), &st, func() error {
			for st.Len() > 0 {
				st.Pop(nil)
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		if _, ok := s.Peek([]byte(key)); ok {
			t.Fatalf("an emptied set %s still exists", key)
		}
	}
	fill("cleared", 1000, "c")
	if err := s.UpdateSet([]byte("cleared"), &st, func() error { st.Clear(); return nil }); err != nil {
		t.Fatal(err)
	}
	if _, ok := s.Peek([]byte("cleared")); ok {
		t.Fatal("a cleared set still exists")
	}
	s.Delete([]byte("big"))
	if st := s.Stats(); st.Items != 0 || st.Bytes != 0 {
		t.Fatalf("after removing everything Stats = %+v", st)
	}
	checkInvariants(t, s)
}

// TestSetEviction: big sets over the memory limit are evicted whole and
// the accounting stays exact.
func TestSetEviction(t *testing.T) {
	s := newTestStore(t, Config{MemoryLimit: 8 << 20, Shards: 16})
	var st Set
	for k := range 40 {
		if err := s.UpdateSet([]byte(fmt.Sprint("s", k)), &st, func() error {
			for i := range 10000 {
				st.Add([]byte(fmt.Sprint("some member ", i)))
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	stats := s.Stats()
	if stats.Evictions == 0 || stats.Bytes > stats.Limit {
		t.Fatalf("Stats = %+v: want evictions and bytes within the limit", stats)
	}
	checkInvariants(t, s)
}

// TestSetWrongType: set operations refuse other kinds, and the others
// refuse a set.
func TestSetWrongType(t *testing.T) {
	s := newTestStore(t, Config{})
	var st Set
	var h Hash
	key := []byte("k")
	if err := s.UpdateSet(key, &st, func() error { st.Add([]byte("1")); return nil }); err != nil {
		t.Fatal(err)
	}
	if err := s.ViewHash(key, &h, func() error { return nil }); !errors.Is(err, ErrWrongType) {
		t.Errorf("ViewHash on a set: %v", err)
	}
	if _, _, err := s.Incr(key, 1, false); !errors.Is(err, ErrWrongType) {
		t.Errorf("Incr on a set: %v", err)
	}
	if it, ok := s.Peek(key); !ok || it.Kind != KindSet {
		t.Errorf("Peek = %+v %v", it, ok)
	}
	mustStore(t, s, ModeSet, "str", "v", 0, 0)
	if err := s.UpdateSet([]byte("str"), &st, func() error { return nil }); !errors.Is(err, ErrWrongType) {
		t.Errorf("UpdateSet on a string: %v", err)
	}
	checkInvariants(t, s)
}

// TestSetTx: SMOVE's shape: two sets in one Tx, one emptied and deleted.
func TestSetTx(t *testing.T) {
	s := newTestStore(t, Config{})
	var a, b Set
	_ = s.UpdateSet([]byte("a"), &a, func() error { a.Add([]byte("x")); return nil })
	err := s.Tx([][]byte{[]byte("a"), []byte("b")}, func(tx *Tx) error {
		if err := tx.Set([]byte("a"), &a, true); err != nil {
			return err
		}
		if err := tx.Set([]byte("b"), &b, true); err != nil {
			return err
		}
		if a.Remove([]byte("x")) {
			b.Add([]byte("x"))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := s.Peek([]byte("a")); ok {
		t.Error("a still exists")
	}
	_ = s.ViewSet([]byte("b"), &b, func() error {
		if !b.Has([]byte("x")) || b.Len() != 1 {
			t.Error("b lacks x")
		}
		return nil
	})
	checkInvariants(t, s)
}

// TestSetAddRemoveZeroAllocs: SADD, SREM and SISMEMBER on every encoding
// allocate nothing.
func TestSetAddRemoveZeroAllocs(t *testing.T) {
	s := newTestStore(t, Config{})
	var st Set
	for _, c := range []struct {
		key    string
		fill   string
		member []byte
	}{{"ints", "", []byte("12345")}, {"strs", "m", []byte("member")}, {"big", "big", []byte("member")}} {
		key := []byte(c.key)
		n := 10
		if c.key == "big" {
			n = 1000
		}
		_ = s.UpdateSet(key, &st, func() error {
			for i := range n {
				st.Add([]byte(fmt.Sprint(c.fill, i)))
			}
			return nil
		})
		allocs := testing.AllocsPerRun(100, func() {
			_ = s.UpdateSet(key, &st, func() error { st.Add(c.member); return nil })
			_ = s.ViewSet(key, &st, func() error { st.Has(c.member); return nil })
			_ = s.UpdateSet(key, &st, func() error { st.Remove(c.member); return nil })
		})
		if allocs != 0 {
			t.Errorf("%s: SADD+SISMEMBER+SREM allocate %.1f times", c.key, allocs)
		}
	}
}

// TestIntsetEach: an intset's members in order, and malformed bytes
// refused before any member is given.
func TestIntsetEach(t *testing.T) {
	is := append([]byte(nil), emptyIntset...)
	for _, v := range []int64{5, -70000, 3} {
		i, _ := isSearch(is, v)
		is = isInsert(is, i, v)
	}
	var got []string
	if err := IntsetEach(is, func(m []byte) { got = append(got, string(m)) }); err != nil || strings.Join(got, " ") != "-70000 3 5" {
		t.Errorf("IntsetEach = %v %v", got, err)
	}
	calls := 0
	if err := IntsetEach(emptyIntset, func([]byte) { calls++ }); !errors.Is(err, ErrBadEncoding) || calls != 0 {
		t.Errorf("IntsetEach(empty) = %v after %d calls, want ErrBadEncoding", err, calls)
	}
}

// TestSetChargeMatchesHeap: what sets are charged is what they hold on
// the heap, in each encoding, as TestCollectionChargeMatchesHeap checks
// for hashes.
func TestSetChargeMatchesHeap(t *testing.T) {
	for _, tc := range []struct {
		name          string
		sets, members int
		prefix        string
	}{
		{"intsets 100000x10", 100000, 10, ""},
		{"listpacks 100000x10", 100000, 10, "m"},
		{"big 100x5000", 100, 5000, "member"},
		{"one of 500000", 1, 500000, "member"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var st Set
			key := make([]byte, 0, 16)
			m := make([]byte, 0, 16)
			checkChargeAgainstHeap(t, tc.sets*tc.members, "member", func(s *Store) {
				for i := range tc.sets {
					key = strconv.AppendInt(append(key[:0], 's'), int64(100_000_000+i), 10)
					if err := s.UpdateSet(key, &st, func() error {
						for j := range tc.members {
							st.Add(strconv.AppendInt(append(m[:0], tc.prefix...), int64(j), 10))
						}
						return nil
					}); err != nil {
						t.Fatal(err)
					}
				}
			})
		})
	}
}

package store

import (
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestRestoreListpackMatchesBuilding: a listpack of a hash, sorted set or
// list is stored as it is (RestoreListpack) exactly when building the
// value element by element leaves it one listpack with those bytes, over
// random values around the compact encodings' limits; one in a wrong
// order, with a field or member twice, or with a score that is not a
// number is refused. A set's listpack is stored as it is exactly when
// its members fit the set listpack limits, as Redis 7.2 keeps one (of
// integers only too, which SADD would have made an intset); when SADD
// makes a listpack of the members, with those bytes.
func TestRestoreListpackMatchesBuilding(t *testing.T) {
	s := New(Config{MemoryLimit: 64 << 20})
	defer s.Close()
	lim := DefaultLimits
	lim.ListPackSize = -1 // 4 KiB nodes: reached by a few long elements
	s.SetLimits(lim)
	rng := rand.New(rand.NewPCG(1, 2))
	// Three kinds of values, each about one limit: a list's node bytes
	// (4 KiB here), the value length (64) and the entry count (128).
	var mode int
	elem := func() []byte {
		switch {
		case mode == 0 && rng.IntN(3) == 0:
			return []byte(strconv.Itoa(rng.IntN(200000) - 1000)) // held as an integer
		case mode == 0:
			return []byte(strings.Repeat("x", rng.IntN(121)))
		case mode == 1 && rng.IntN(2) == 0:
			id := "y" + strconv.Itoa(rng.IntN(100000))
			return []byte(id + strings.Repeat("y", 60+rng.IntN(9)-len(id)))
		}
		return []byte("e" + strconv.Itoa(rng.IntN(100000)))
	}
	restore := func(key string, kind Kind, lp []byte) bool {
		ok := false
		_ = s.Tx([][]byte{[]byte(key)}, func(tx *Tx) error {
			ok = tx.RestoreListpack([]byte(key), kind, lp)
			return nil
		})
		return ok
	}
	// check builds key with fill, then restores the listpack built from
	// the elements alone (as a file holds it) under key+":r".
	check := func(key string, kind Kind, fill func(tx *Tx) []byte, elems [][]byte) {
		t.Helper()
		var built []byte
		_ = s.Tx([][]byte{[]byte(key)}, func(tx *Tx) error { built = fill(tx); return nil })
		lp := ListpackNew()
		for _, e := range elems {
			lp = ListpackAppend(lp, e)
		}
		if built != nil && kind != KindZSet && string(built) != string(lp) {
			t.Fatalf("%s: the store built other bytes than ListpackAppend", key)
		}
		if built != nil {
			lp = built
		}
		if got := restore(key+":r", kind, lp); got != (built != nil) {
			t.Fatalf("%s (%d elements): restored %v, but building it made it one listpack: %v", key, len(elems), got, built != nil)
		}
		if built == nil {
			return
		}
		var again []byte
		switch kind {
		case KindHash:
			var h Hash
			_ = s.ViewHash([]byte(key+":r"), &h, func() error { again = h.HashListpack(); return nil })
		case KindList:
			var l List
			_ = s.ViewList([]byte(key+":r"), &l, func() error { again = l.Listpack(); return nil })
		case KindZSet:
			var z ZSet
			_ = s.ViewZSet([]byte(key+":r"), &z, func() error { again = z.Listpack(); return nil })
		}
		if string(again) != string(built) {
			t.Fatalf("%s: restored bytes differ", key)
		}
	}
	// checkSet builds a set of members with SADD's Add, and restores
	// their listpack (as Redis 7.2 would hold it) under key+":r".
	checkSet := func(key string, members [][]byte) {
		t.Helper()
		var built []byte
		_ = s.Tx([][]byte{[]byte(key)}, func(tx *Tx) error {
			var st Set
			_ = tx.Set([]byte(key), &st, true)
			st.Prepare(members[0], len(members))
			for _, m := range members {
				st.Add(m)
			}
			tx.DoneSet(&st)
			built = st.Listpack()
			return nil
		})
		lp := ListpackNew()
		fits := int64(len(members)) <= lim.SetListpackEntries
		for _, m := range members {
			lp = ListpackAppend(lp, m)
			fits = fits && int64(len(m)) <= lim.SetListpackValue
		}
		if built != nil && string(built) != string(lp) {
			t.Fatalf("%s: the store built other bytes than ListpackAppend", key)
		}
		if got := restore(key+":r", KindSet, lp); got != fits {
			t.Fatalf("%s (%d members): restored %v, want %v", key, len(members), got, fits)
		}
		if !fits {
			return
		}
		var again []byte
		var st Set
		_ = s.ViewSet([]byte(key+":r"), &st, func() error { again = st.Listpack(); return nil })
		if string(again) != string(lp) {
			t.Fatalf("%s: restored bytes differ", key)
		}
	}
	for i := range 1500 {
		mode = i % 3
		var elems [][]byte
		switch mode {
		case 0:
			for size := 0; size < 4000+rng.IntN(200); {
				elems = append(elems, elem())
				size += len(elems[len(elems)-1]) + 2
			}
		case 1:
			for range 1 + rng.IntN(10) {
				elems = append(elems, elem())
			}
		default:
			for range 120 + rng.IntN(18) {
				elems = append(elems, elem())
			}
		}
		k := strconv.Itoa(i)
		check("list:"+k, KindList, func(tx *Tx) []byte {
			var l List
			_ = tx.List([]byte("list:"+k), &l, true)
			for _, e := range elems {
				l.Push(false, e)
			}
			tx.DoneList(&l)
			return l.Listpack()
		}, elems)
		var pairs [][]byte
		seen := map[string]bool{}
		for _, e := range elems {
			if !seen[string(e)] {
				seen[string(e)] = true
				pairs = append(pairs, e, elem())
			}
		}
		check("hash:"+k, KindHash, func(tx *Tx) []byte {
			var h Hash
			_ = tx.Hash([]byte("hash:"+k), &h, true)
			for j := 0; j < len(pairs); j += 2 {
				h.Set(pairs[j], pairs[j+1])
			}
			tx.DoneHash(&h)
			return h.HashListpack()
		}, pairs)
		var members [][]byte
		for j := 0; j < len(pairs); j += 2 {
			members = append(members, pairs[j])
		}
		checkSet("set:"+k, members)
		score := func(j int) float64 { return float64(j%7)/4 - 0.5 }
		order := make([]int, len(members))
		for j := range order {
			order[j] = j
		}
		slices.SortFunc(order, func(a, b int) int { return zcmp(score(a), members[a], score(b), members[b]) })
		var sorted [][]byte // the pairs in order, as a file holds them
		for _, j := range order {
			sorted = append(sorted, members[j], strconv.AppendFloat(nil, score(j), 'g', 17, 64))
		}
		check("zset:"+k, KindZSet, func(tx *Tx) []byte {
			var z ZSet
			_ = tx.ZSet([]byte("zset:"+k), &z, true)
			for j, m := range members {
				z.Set(m, score(j))
			}
			tx.DoneZSet(&z)
			return z.Listpack()
		}, sorted)
	}

	lp := func(elems ...string) []byte {
		p := ListpackNew()
		for _, e := range elems {
			p = ListpackAppend(p, []byte(e))
		}
		return p
	}
	for _, c := range []struct {
		name  string
		kind  Kind
		elems []string
		ok    bool
	}{
		{"sorted", KindZSet, []string{"a", "1", "b", "1", "a0", "2.5", "c", "inf"}, true},
		{"out of order", KindZSet, []string{"b", "1", "a", "0"}, false},
		{"same score, members out of order", KindZSet, []string{"b", "1", "a", "1"}, false},
		{"member twice", KindZSet, []string{"a", "1", "a", "2"}, false},
		{"NaN score", KindZSet, []string{"a", "nan"}, false},
		{"score not a number", KindZSet, []string{"a", "one"}, false},
		{"odd count", KindZSet, []string{"a", "1", "b"}, false},
		{"hash", KindHash, []string{"f", "1", "g", "2"}, true},
		{"field twice", KindHash, []string{"f", "1", "f", "2"}, false},
		{"field twice of many", KindHash, manyPairs(20, "dup"), false},
		{"odd hash", KindHash, []string{"f", "1", "g"}, false},
		{"list", KindList, []string{"x", "x", "1"}, true},
		{"set", KindSet, []string{"x", "1"}, true},
		{"set of integers", KindSet, []string{"3", "1"}, true},
		{"member twice", KindSet, []string{"x", "1", "x"}, false},
		{"integer twice", KindSet, []string{"1", "2", "1"}, false},
		{"empty", KindList, nil, false},
	} {
		if got := restore("case:"+c.name, c.kind, lp(c.elems...)); got != c.ok {
			t.Errorf("%s: restored %v, want %v", c.name, got, c.ok)
		}
	}
	if restore("bad", KindList, []byte("\x07\x00\x00\x00\x01\x00")) {
		t.Error("a listpack without its end byte was restored")
	}
}

// manyPairs is n field, value pairs whose last field repeats the first.
func manyPairs(n int, prefix string) []string {
	var out []string
	for i := range n {
		out = append(out, prefix+strconv.Itoa(i), "v")
	}
	return append(out, prefix+"0", "v")
}

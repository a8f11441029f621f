package store

import (
	"bytes"
	"errors"
	"fmt"
	"hash/maphash"
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"
	"unsafe"

	"github.com/klauspost/compress/s2"
)

// listValue returns a random element: small integers (stored as
// integers), short and long strings, now and then one larger than a node.
func listValue(rng *rand.Rand) string {
	switch n := rng.IntN(100); {
	case n < 35:
		return strconv.Itoa(rng.IntN(2000) - 1000)
	case n < 40:
		return strconv.FormatInt(rng.Int64(), 10)
	case n < 85:
		return fmt.Sprintf("v%d", rng.IntN(50))
	case n < 99:
		return string(bytes.Repeat([]byte{'a' + byte(rng.IntN(3))}, rng.IntN(300)))
	default:
		return string(bytes.Repeat([]byte("L"), 9000+rng.IntN(4000)))
	}
}

// checkList compares the list under key with want and checks its
// structure: every node a valid listpack with its count, none empty,
// none over the limit unless it holds one element, the counts summed,
// and the charge the capacity it holds.
func checkList(t *testing.T, s *Store, key []byte, want []string) (compressed int) {
	t.Helper()
	var l List
	err := s.ViewList(key, &l, func() error {
		if l.Len() != len(want) {
			t.Fatalf("Len = %d, model %d", l.Len(), len(want))
		}
		var got []string
		l.Each(0, false, func(i int, v []byte) bool {
			if i != len(got) {
				t.Fatalf("Each gave index %d at position %d", i, len(got))
			}
			got = append(got, string(v))
			return true
		})
		if !slices.Equal(got, want) {
			t.Fatalf("list = %q\nmodel %q", short(got), short(want))
		}
		if q := l.quick(); q != nil {
			compressed = checkQuicklist(t, q)
			if ch := l.c.sh.objs[l.c.sh.objID(&l.c.e)].charged; ch != q.size() {
				t.Fatalf("charged %d for a quicklist of size %d", ch, q.size())
			}
		} else if l.c.lp != nil {
			if err := lpValidate(l.c.lp); err != nil {
				t.Fatalf("listpack: %v", err)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return compressed
}

// checkQuicklist checks a quicklist's structure, and its compression:
// the depth nodes at each end plain, the nodes past the next one at each
// end compressed unless compressing them did not pay, every compressed
// node decompressing to a valid listpack of its length.
func checkQuicklist(t *testing.T, q *quicklist) (compressed int) {
	t.Helper()
	total, caps := 0, int64(cap(q.spare))
	for j := range q.count() {
		nd := q.node(j)
		lp := nd.lp
		if nd.raw > 0 {
			compressed++
			var err error
			if lp, err = s2.Decode(nil, nd.lp); err != nil || len(lp) != nd.raw {
				t.Fatalf("node %d: compressed %d bytes decode to %d (raw %d): %v", j, len(nd.lp), len(lp), nd.raw, err)
			}
			if len(nd.lp)+qpackMinSaving > nd.raw {
				t.Fatalf("node %d: compressed %d bytes for a listpack of %d", j, len(nd.lp), nd.raw)
			}
		}
		end := j < q.depth || j >= q.count()-q.depth
		switch {
		case q.depth == 0 && nd.raw > 0:
			t.Fatalf("node %d compressed at depth 0", j)
		case end && nd.raw > 0:
			t.Fatalf("node %d of %d compressed at depth %d", j, q.count(), q.depth)
		case q.depth > 0 && !end && j != q.depth && j != q.count()-1-q.depth && nd.raw == 0:
			t.Fatalf("node %d of %d plain at depth %d, not tried", j, q.count(), q.depth)
		}
		if err := lpValidate(lp); err != nil {
			t.Fatalf("node %d: %v", j, err)
		}
		if nd.n == 0 || nd.n != lpCount(lp) {
			t.Fatalf("node %d: count %d, listpack says %d", j, nd.n, lpCount(lp))
		}
		if nd.n > 1 && listExceeds(q.fill, len(lp), nd.n) {
			t.Fatalf("node %d over the limit: %d bytes, %d entries (fill %d)", j, len(lp), nd.n, q.fill)
		}
		total += nd.n
		caps += int64(cap(nd.lp))
	}
	if total != q.n {
		t.Fatalf("nodes hold %d elements, list says %d", total, q.n)
	}
	if caps != q.capBytes {
		t.Fatalf("capBytes = %d, nodes and spare hold %d", q.capBytes, caps)
	}
	for i := range q.nodes {
		if (i < q.lo || i >= q.hi) && q.nodes[i].lp != nil {
			t.Fatalf("slot %d outside [%d,%d) still holds a listpack", i, q.lo, q.hi)
		}
	}
	return compressed
}

func short(l []string) []string {
	out := make([]string, len(l))
	for i, s := range l {
		if len(s) > 20 {
			s = fmt.Sprintf("%s...(%d)", s[:10], len(s))
		}
		out[i] = s
	}
	return out
}

// TestListMatchesModel applies random operations to a List and to a
// slice, across the listpack-to-quicklist conversion and under several
// list-max-listpack-size values, and checks the whole list and its
// structure after each.
//
// With list-compress-depth 1 and 2 (and now and then a CONFIG SET of
// another depth, which the next write applies), the nodes of a long list
// past the end ones are compressed. The "compressed" runs keep the list
// long (deletes of at most 20 elements) and its nodes small (16 entries),
// so that tens of its nodes are compressed and most reads
// and changes go through a compressed node.
func TestListMatchesModel(t *testing.T) {
	listPatches = patchCheck{}
	defer func() {
		if !t.Failed() && (listPatches.patches < 5000 || listPatches.fromFront < 500) {
			t.Errorf("only %d changes were checked as patches, %d with changed nodes before the unchanged ones", listPatches.patches, listPatches.fromFront)
		}
	}()
	for _, fill := range []int64{-2, -1, -5, 0, 5, 128} {
		for _, n := range []int{30, 3000} {
			for _, depth := range []int64{0, 1, 2} {
				t.Run(fmt.Sprintf("fill%d/n%d/depth%d", fill, n, depth), func(t *testing.T) {
					testListMatchesModel(t, fill, n, depth, 2000, 0)
				})
			}
		}
	}
	for _, depth := range []int64{1, 2} {
		t.Run(fmt.Sprintf("compressed/depth%d", depth), func(t *testing.T) {
			if c := testListMatchesModel(t, 16, 3000, depth, 20, 0); c < 15 {
				t.Errorf("at most %d nodes were compressed at once", c)
			}
		})
	}
	for seed := uint64(1); seed <= 3; seed++ { // 2 and 3 split nodes near the ends
		t.Run(fmt.Sprintf("compressed/depth1/seed%d", seed), func(t *testing.T) {
			testListMatchesModel(t, 16, 3000, 1, 20, seed)
		})
	}
}

// listPatches counts what TestListMatchesModel checked of durable patches.
var listPatches patchCheck

// testListMatchesModel runs TestListMatchesModel's operations and returns
// the most nodes it saw compressed at once.
func testListMatchesModel(t *testing.T, fill int64, n int, depth int64, maxDelete int, seed uint64) (compressed int) {
	everyRecordABase(t)
	var pc patchCheck
	prng := rand.New(rand.NewPCG(uint64(n), 5))
	s := newTestStore(t, Config{MemoryLimit: 256 << 20})
	l := DefaultLimits
	l.ListPackSize = fill
	l.ListCompressDepth = depth
	s.SetLimits(l)
	rng := rand.New(rand.NewPCG(uint64(fill+10)+seed<<32, uint64(n)*3+uint64(depth)))
	key := []byte("l")
	var model []string
	var h List
	step := 0
	update := func(fn func()) {
		t.Helper()
		if err := s.UpdateList(key, &h, func() error {
			fn()
			if q := h.quick(); q != nil {
				pc.check(t, q, key, prng, fmt.Sprintf("step %d", step)) // durable mode's patches (patch.go)
				if q.depth > 0 {
					checkQuicklist(t, q) // compression right after every change
				}
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	defer func() {
		listPatches.patches, listPatches.fromFront = listPatches.patches+pc.patches, listPatches.fromFront+pc.fromFront
	}()
	for ; step < n*3; step++ {
		v := listValue(rng)
		grow := len(model) < n
		switch op := rng.IntN(20); {
		case op < 4 && grow || op < 2:
			update(func() { h.Push(true, []byte(v)) })
			model = append([]string{v}, model...)
		case op < 8 && grow || op < 4:
			update(func() { h.Push(false, []byte(v)) })
			model = append(model, v)
		case op < 10:
			left := rng.IntN(2) == 0
			var got []byte
			var ok bool
			update(func() { got, ok = h.Pop(left, []byte("x")) })
			if ok != (len(model) > 0) {
				t.Fatalf("step %d: Pop ok = %v with %d elements", step, ok, len(model))
			}
			if ok {
				var w string
				if left {
					w, model = model[0], model[1:]
				} else {
					w, model = model[len(model)-1], model[:len(model)-1]
				}
				if string(got) != "x"+w {
					t.Fatalf("step %d: Pop(%v) = %q, want %q", step, left, got, "x"+w)
				}
			}
		case op < 12:
			i := rng.IntN(len(model)+2) - 1
			var ok bool
			update(func() { ok = h.Set(i, []byte(v)) })
			j := i
			if j < 0 {
				j += len(model)
			}
			if ok != (j >= 0 && j < len(model)) {
				t.Fatalf("step %d: Set(%d) = %v with %d elements", step, i, ok, len(model))
			}
			if ok {
				model[j] = v
			}
		case op < 14:
			i := rng.IntN(len(model) + 1)
			update(func() { h.InsertAt(i, []byte(v)) })
			model = slices.Insert(model, i, v)
		case op < 15 && len(model) > 0:
			i := rng.IntN(len(model))
			k := rng.IntN(min(len(model)-i, 1+rng.IntN(maxDelete)) + 1)
			update(func() { h.Delete(i, k) })
			model = slices.Delete(model, i, i+k)
		case op < 17 && len(model) > 0:
			target := model[rng.IntN(len(model))]
			count := rng.IntN(7) - 3
			var removed int
			update(func() { removed = h.Remove([]byte(target), count) })
			want := 0
			if count >= 0 {
				for i := 0; i < len(model); i++ {
					if model[i] == target && (count == 0 || want < count) {
						model = slices.Delete(model, i, i+1)
						want++
						i--
					}
				}
			} else {
				for i := len(model) - 1; i >= 0; i-- {
					if model[i] == target && want < -count {
						model = slices.Delete(model, i, i+1)
						want++
					}
				}
			}
			if removed != want {
				t.Fatalf("step %d: Remove(%q, %d) = %d, want %d", step, short([]string{target}), count, removed, want)
			}
		default:
			i := rng.IntN(len(model)+4) - 2
			err := s.ViewList(key, &h, func() error {
				got, ok := h.Index(i)
				j := i
				if j < 0 {
					j += len(model)
				}
				if in := j >= 0 && j < len(model); ok != in || in && string(got) != model[j] {
					t.Fatalf("step %d: Index(%d) = %q %v", step, i, got, ok)
				}
				if len(model) > 0 {
					from := rng.IntN(len(model))
					want := model[:from+1]
					var back []string
					h.Each(from, true, func(_ int, v []byte) bool { back = append(back, string(v)); return true })
					slices.Reverse(back)
					if !slices.Equal(back, want) {
						t.Fatalf("step %d: Each(%d, reverse) = %q, want %q", step, from, short(back), short(want))
					}
					target := model[rng.IntN(len(model))]
					if f := h.Find([]byte(target)); f != slices.Index(model, target) {
						t.Fatalf("step %d: Find = %d, want %d", step, f, slices.Index(model, target))
					}
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
		}
		if step%17 == 0 || len(model) < 40 {
			compressed = max(compressed, checkList(t, s, key, model))
		}
		if depth > 0 && step%499 == 498 {
			// CONFIG SET list-compress-depth: the next write applies it.
			l.ListCompressDepth = int64(rng.IntN(4))
			s.SetLimits(l)
			update(func() { h.Touch() })
			checkList(t, s, key, model)
		}
	}
	checkList(t, s, key, model)
	if len(model) == 0 {
		if _, ok := s.Peek(key); ok {
			t.Fatal("an empty list still exists")
		}
	}
	checkInvariants(t, s)
	return compressed
}

// TestListConversion: a list becomes a quicklist when its listpack would
// pass the limit, and the store is charged what the nodes hold.
func TestListConversion(t *testing.T) {
	s := newTestStore(t, Config{MemoryLimit: 64 << 20})
	var l List
	key := []byte("l")
	enc := ""
	push := func(v string) {
		if err := s.UpdateList(key, &l, func() error { l.Push(false, []byte(v)); enc = l.Encoding(); return nil }); err != nil {
			t.Fatal(err)
		}
	}
	for range 100 {
		push("0123456789") // 12 bytes each: 1206 bytes in all
	}
	if enc != "listpack" {
		t.Fatalf("100 short elements: encoding %s", enc)
	}
	if oi, _ := s.Object(key); oi.Encoding != "listpack" {
		t.Fatalf("Object encoding %s", oi.Encoding)
	}
	for range 1000 {
		push("0123456789")
	}
	if enc != "quicklist" {
		t.Fatalf("13 KiB of elements: encoding %s", enc)
	}
	if oi, _ := s.Object(key); oi.Encoding != "quicklist" {
		t.Fatalf("Object encoding %s", oi.Encoding)
	}
	st := s.Stats()
	if st.Bytes < 1100*12 || st.Bytes > 1100*12*3 {
		t.Fatalf("Stats.Bytes = %d for 13 KiB of elements", st.Bytes)
	}
	checkInvariants(t, s)
	// One element past the limit converts at once.
	if err := s.UpdateList([]byte("big1"), &l, func() error {
		l.Push(true, bytes.Repeat([]byte("x"), 9000))
		enc = l.Encoding()
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if enc != "quicklist" {
		t.Fatalf("a 9000-byte element: encoding %s", enc)
	}
}

// TestListAccountingAndRemoval: a list is charged for its record and
// nodes, the key goes with its last element, and DEL, SET over it and
// eviction give every byte back.
func TestListAccountingAndRemoval(t *testing.T) {
	s := newTestStore(t, Config{MemoryLimit: 64 << 20})
	var l List
	fill := func(key string, n int) {
		if err := s.UpdateList([]byte(key), &l, func() error {
			for i := range n {
				l.Push(i%2 == 0, []byte(fmt.Sprint("element", i)))
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	fill("small", 10)
	fill("big", 100000)
	st := s.Stats()
	if st.Items != 2 || st.Bytes < 100000*2 { // compressed: a few bytes per element
		t.Fatalf("Stats = %+v, want 2 items and the big list's bytes", st)
	}
	checkInvariants(t, s)
	if _, err := s.Store(ModeSet, []byte("big"), []byte("x"), 0, 0, 0); err != nil {
		t.Fatal(err)
	}
	if it, _ := s.Get([]byte("big")); it.Kind != KindString {
		t.Fatalf("SET over a list left kind %v", it.Kind)
	}
	s.Delete([]byte("big"))
	fill("big", 50000)
	if err := s.UpdateList([]byte("big"), &l, func() error { l.Delete(0, l.Len()); return nil }); err != nil {
		t.Fatal(err)
	}
	if err := s.UpdateList([]byte("small"), &l, func() error {
		for {
			if _, ok := l.Pop(true, nil); !ok {
				return nil
			}
		}
	}); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"small", "big"} {
		if _, ok := s.Peek([]byte(k)); ok {
			t.Fatalf("emptied list %s still exists", k)
		}
	}
	if st := s.Stats(); st.Items != 0 || st.Bytes != 0 {
		t.Fatalf("after removing everything Stats = %+v", st)
	}
	fill("big", 50000)
	s.Delete([]byte("big"))
	if st := s.Stats(); st.Items != 0 || st.Bytes != 0 {
		t.Fatalf("after DEL Stats = %+v", st)
	}
	checkInvariants(t, s)
}

// TestListEviction: big lists over the memory limit are evicted whole and
// the accounting stays exact.
func TestListEviction(t *testing.T) {
	s := newTestStore(t, Config{MemoryLimit: 4 << 20, Shards: 16}) // 40 compressed lists need 5.6 MB
	var l List
	for k := range 40 {
		if err := s.UpdateList([]byte(fmt.Sprint("l", k)), &l, func() error {
			for i := range 20000 {
				l.Push(false, []byte(fmt.Sprint("some element bytes ", i)))
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

// TestListWrongType: string operations refuse a list, list operations a
// string or a hash.
func TestListWrongType(t *testing.T) {
	s := newTestStore(t, Config{})
	var l List
	key := []byte("k")
	if err := s.UpdateList(key, &l, func() error { l.Push(true, []byte("a")); return nil }); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.Incr(key, 1, false); !errors.Is(err, ErrWrongType) {
		t.Errorf("Incr on a list: %v", err)
	}
	var h Hash
	if err := s.ViewHash(key, &h, func() error { return nil }); !errors.Is(err, ErrWrongType) {
		t.Errorf("ViewHash on a list: %v", err)
	}
	mustStore(t, s, ModeSet, "str", "v", 0, 0)
	if err := s.UpdateList([]byte("str"), &l, func() error { l.Push(true, []byte("a")); return nil }); !errors.Is(err, ErrWrongType) {
		t.Errorf("UpdateList on a string: %v", err)
	}
	if it, _ := s.Get([]byte("str")); string(it.Value) != "v" {
		t.Errorf("the string changed: %q", it.Value)
	}
	checkInvariants(t, s)
}

// TestListFlatRoundTrip: a quicklist reads back its flat encoding, and a
// COPY of it (Tx.Copy goes through the flat encoding) is its own list.
func TestListFlatRoundTrip(t *testing.T) {
	s := newTestStore(t, Config{MemoryLimit: 64 << 20})
	var l List
	var want []string
	if err := s.UpdateList([]byte("src"), &l, func() error {
		for i := range 5000 {
			v := fmt.Sprint(i * 7)
			if i%3 == 0 {
				v = fmt.Sprint("e", i)
			}
			l.Push(false, []byte(v))
			want = append(want, v)
		}
		q := l.quick()
		q2, err := quicklistFromFlat(q.appendFlat(nil))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(q2.appendFlat(nil), q.appendFlat(nil)) || q2.n != q.n {
			t.Fatal("flat encoding does not round-trip")
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if err := s.Tx([][]byte{[]byte("src"), []byte("dst")}, func(tx *Tx) error {
		tx.Copy([]byte("src"), []byte("dst"), false)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if err := s.UpdateList([]byte("src"), &l, func() error { l.Pop(true, nil); return nil }); err != nil {
		t.Fatal(err)
	}
	checkList(t, s, []byte("dst"), want)
	checkList(t, s, []byte("src"), want[1:])
	checkInvariants(t, s)
}

// FuzzListFlat: decodeFlat never panics on a list's flat encoding from a
// damaged disk, and what it accepts is a list the handle can walk.
func FuzzListFlat(f *testing.F) {
	q := newQuicklist(3, 0) // small nodes: several of them in a short input
	for i := range 30 {
		q.push(i%2 == 0, []byte(fmt.Sprint("x", i)))
	}
	f.Add(q.appendFlat(nil))
	f.Add([]byte{3, 1, 7, 7, 0, 0, 0, 0, 0, 0xff})
	f.Fuzz(func(t *testing.T, b []byte) {
		o, err := decodeFlat(heapMem, maphash.MakeSeed(), KindList, b)
		if err != nil {
			return
		}
		q := o.(*quicklist)
		n := 0
		q.each(0, false, func(int, []byte, int) bool { n++; return true })
		if n != q.len() {
			t.Fatalf("walked %d elements of %d", n, q.len())
		}
		// Compressed (as the store reads a list back), the same walk
		// and the same bytes.
		flat := q.appendFlat(nil)
		q.setDepth(int64(len(b) % 3))
		m := 0
		q.each(q.len()-1, true, func(int, []byte, int) bool { m++; return true })
		if m != n || !bytes.Equal(q.appendFlat(nil), flat) {
			t.Fatalf("compressed: walked %d elements of %d, flat encoding equal: %v", m, n, bytes.Equal(q.appendFlat(nil), flat))
		}
		for q.len() > 0 {
			q.pop(q.len()%2 == 0, nil)
		}
	})
}

// TestListPushPopZeroAllocs: LPUSH, RPUSH, LPOP and RPOP allocate nothing
// per command, on a small list and on a big one.
func TestListPushPopZeroAllocs(t *testing.T) {
	s := newTestStore(t, Config{})
	var l List
	v := []byte("a value longer than sixteen bytes")
	dst := make([]byte, 0, 64)
	for _, n := range []int{10, 20000} {
		key := []byte(fmt.Sprint("l", n))
		if err := s.UpdateList(key, &l, func() error {
			for range n {
				l.Push(false, v)
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		allocs := testing.AllocsPerRun(1000, func() {
			_ = s.UpdateList(key, &l, func() error { l.Push(true, v); return nil })
			_ = s.UpdateList(key, &l, func() error { l.Push(false, v); return nil })
			_ = s.UpdateList(key, &l, func() error { dst, _ = l.Pop(true, dst[:0]); return nil })
			_ = s.UpdateList(key, &l, func() error { dst, _ = l.Pop(false, dst[:0]); return nil })
		})
		if allocs != 0 {
			t.Errorf("%d elements: LPUSH+RPUSH+LPOP+RPOP allocate %.1f times", n, allocs)
		}
	}
	// Growing a big list: node allocations amortised over the elements.
	key := []byte("grow")
	allocs := testing.AllocsPerRun(20000, func() {
		_ = s.UpdateList(key, &l, func() error { l.Push(false, v); return nil })
	})
	if allocs != 0 {
		t.Errorf("RPUSH onto a growing list allocates %.2f times per push", allocs)
	}
}

// BenchmarkListPushPop is LPUSH and RPOP on a big list.
func BenchmarkListPushPop(b *testing.B) {
	s := newTestStore(b, Config{})
	var l List
	key, v := []byte("l"), []byte("value")
	_ = s.UpdateList(key, &l, func() error {
		for range 100000 {
			l.Push(false, v)
		}
		return nil
	})
	dst := make([]byte, 0, 64)
	b.ReportAllocs()
	for b.Loop() {
		_ = s.UpdateList(key, &l, func() error { l.Push(true, v); return nil })
		_ = s.UpdateList(key, &l, func() error { dst, _ = l.Pop(false, dst[:0]); return nil })
	}
}

// TestListChargeMatchesHeap: what a big list is charged is the memory it
// takes, compressed (list-compress-depth 1, the default) or not: the
// capacity of its nodes' bytes, compressed or plain, which for compressed
// nodes is their allocation's size class (checkChargeAgainstHeap).
func TestListChargeMatchesHeap(t *testing.T) {
	if sz := unsafe.Sizeof(qnode{}); sz != qnodeSize {
		t.Fatalf("a node is %d bytes, charged as %d", sz, qnodeSize)
	}
	for _, tc := range []struct {
		name         string
		lists, elems int
		depth        int64
	}{
		{"one of 500000", 1, 500000, 1},
		{"one of 500000 plain", 1, 500000, 0},
		{"100x5000", 100, 5000, 1},
		{"100x5000 plain", 100, 5000, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var l List
			key := make([]byte, 0, 16)
			elem := make([]byte, 0, 16)
			checkChargeAgainstHeap(t, tc.lists*tc.elems, "element", func(s *Store) {
				lim := DefaultLimits
				lim.ListCompressDepth = tc.depth
				s.SetLimits(lim)
				for i := range tc.lists {
					key = strconv.AppendInt(append(key[:0], 'l'), int64(100_000_000+i), 10)
					for j := 0; j < tc.elems; j += 100 {
						if err := s.UpdateList(key, &l, func() error {
							for k := j; k < j+100; k++ {
								elem = strconv.AppendInt(append(elem[:0], "element:"...), int64(1_000_000+k), 10)
								l.Push(false, elem)
							}
							return nil
						}); err != nil {
							t.Fatal(err)
						}
					}
				}
			})
		})
	}
}

// BenchmarkListMiddle is LINDEX and LRANGE (100 elements) in the middle
// of a list of 100 k elements (element:NNNNNNN), whose middle node is
// plain (depth0) or compressed (depth1: each call decompresses it), and
// LSET there (decompress, change, compress again).
func BenchmarkListMiddle(b *testing.B) {
	for _, depth := range []int64{0, 1} {
		s := newTestStore(b, Config{MemoryLimit: 1 << 30})
		lim := DefaultLimits
		lim.ListCompressDepth = depth
		s.SetLimits(lim)
		var l List
		key := []byte("l")
		_ = s.UpdateList(key, &l, func() error {
			for i := range 100_000 {
				l.Push(false, fmt.Appendf(nil, "element:%07d", i))
			}
			return nil
		})
		mid := 50_000
		b.Run(fmt.Sprintf("index/depth%d", depth), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				_ = s.ViewList(key, &l, func() error { l.Index(mid); return nil })
			}
		})
		b.Run(fmt.Sprintf("range100/depth%d", depth), func(b *testing.B) {
			b.ReportAllocs()
			n := 0
			for b.Loop() {
				_ = s.ViewList(key, &l, func() error {
					l.Each(mid, false, func(i int, v []byte) bool { n += len(v); return i < mid+99 })
					return nil
				})
			}
		})
		v := []byte("element:x")
		b.Run(fmt.Sprintf("set/depth%d", depth), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				_ = s.UpdateList(key, &l, func() error { l.Set(mid, v); return nil })
			}
		})
	}
}

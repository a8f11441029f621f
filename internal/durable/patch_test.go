package durable

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/minikv/minikv/internal/store"
)

// TestStreamPatchesSurviveRestart: a long stream changed by appends,
// deletions, trims and group deliveries is written as patches of its
// base (the engine holds a patch record), and reads back as the model
// says after restarts (the warm-up's scan), after compactions (the base
// of a patched key stays), after being pushed out of memory (a point
// read), and after a RENAME (the new key is written whole).
func TestStreamPatchesSurviveRestart(t *testing.T) {
	dir := t.TempDir()
	cfg := store.Config{SweepInterval: -1, MemoryLimit: 16 << 20}
	r := rand.New(rand.NewPCG(3, 9))
	type entry struct {
		id store.StreamID
		v  string
	}
	models := map[string][]entry{}
	next := store.StreamID{Ms: 1}
	var st store.Stream
	update := func(s *durableStore, key string, fn func(m []entry) []entry) {
		t.Helper()
		if err := s.UpdateStream([]byte(key), &st, func() error { models[key] = fn(models[key]); return nil }); err != nil {
			t.Fatal(err)
		}
	}
	appendN := func(s *durableStore, key string, n int) {
		update(s, key, func(m []entry) []entry {
			for range n {
				next.Seq++
				v := fmt.Sprintf("%x", r.Uint64())                           // hardly compressible
				st.Append(next, [][]byte{[]byte("f"), []byte(v)}, 4096, 100) // Redis's node limits
				m = append(m, entry{next, v})
			}
			return m
		})
	}
	check := func(s *durableStore, key string) {
		t.Helper()
		if err := s.ViewStream([]byte(key), &st, func() error {
			var got []entry
			st.Range(store.StreamID{}, store.MaxStreamID, false, func(id store.StreamID, fv [][]byte) bool {
				got = append(got, entry{id, string(fv[1])})
				return true
			})
			if !slices.Equal(got, models[key]) {
				t.Fatalf("%s: %d entries back, want %d (equal: %v)", key, len(got), len(models[key]), slices.Equal(got, models[key]))
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	hasPatch := func(s *durableStore, key string) bool { return hasPatchOf(t, s, key) }

	s := openStore(t, dir, cfg)
	appendN(s, "s", 8000) // about 150 KB: a base
	patched := 0
	for round := range 6 {
		for step := range 200 {
			switch op := r.IntN(10); {
			case op < 6:
				appendN(s, "s", 1+r.IntN(3))
			case op == 6:
				update(s, "s", func(m []entry) []entry {
					i := r.IntN(len(m))
					st.Delete(m[i].id)
					return slices.Delete(m, i, i+1)
				})
			case op == 7:
				update(s, "s", func(m []entry) []entry {
					n := st.Trim(store.StreamTrim{MaxLen: uint64(len(m) - r.IntN(20)), Approx: r.IntN(2) == 0})
					return m[n:]
				})
			default:
				update(s, "s", func(m []entry) []entry {
					g := st.Group([]byte("g"))
					if g == nil {
						g, _ = st.CreateGroup([]byte("g"), store.StreamID{}, -1)
					}
					c, _ := st.CreateConsumer(g, []byte("c"), 1)
					st.Range(g.LastID(), store.MaxStreamID, false, func(id store.StreamID, _ [][]byte) bool {
						if id == g.LastID() {
							return true
						}
						st.Advance(g, id)
						st.Deliver(g, c, id, int64(step))
						return false
					})
					return m
				})
			}
			if hasPatch(s, "s") {
				patched++
			}
		}
		check(s, "s")
		if compactOrEvict(t, s, round) {
			check(s, "s") // read back through the point read
			appendN(s, "s", 5)
		}
		switch round {
		case 3:
			rename(t, s, "s", "t")
			models["t"], models["s"] = models["s"], nil
			appendN(s, "t", 3)
			check(s, "t")
			rename(t, s, "t", "s")
			models["s"], models["t"] = models["t"], nil
			appendN(s, "s", 3)
		}
		s.close(t)
		s = openStore(t, dir, cfg)
		check(s, "s")
	}
	if patched < 600 {
		t.Fatalf("a patch was on disk after only %d of 1200 changes", patched)
	}
	// Deleted: neither the base nor the patch reads back.
	if err := s.Delete([]byte("s")); err != nil {
		t.Fatal(err)
	}
	if hasPatch(s, "s") {
		t.Fatal("the patch outlived its key's delete")
	}
	s.close(t)
	s = openStore(t, dir, cfg)
	if _, ok := s.Peek([]byte("s")); ok {
		t.Fatal("a deleted stream is back")
	}
	s.close(t)
}

// TestListPatchesSurviveRestart: a long list changed at both ends and in
// the middle (pushes, pops, LSET, LINSERT, LTRIM, LREM) is written as
// patches of its base, and reads back as the model says after restarts,
// a compaction and being pushed out of memory.
func TestListPatchesSurviveRestart(t *testing.T) {
	dir := t.TempDir()
	cfg := store.Config{SweepInterval: -1, MemoryLimit: 16 << 20}
	r := rand.New(rand.NewPCG(4, 9))
	var model []string
	var l store.List
	seq := 0
	val := func() string { seq++; return fmt.Sprintf("job:%08d:%x", seq, r.Uint32()) }
	update := func(s *durableStore, fn func()) {
		t.Helper()
		if err := s.UpdateList([]byte("q"), &l, func() error { fn(); return nil }); err != nil {
			t.Fatal(err)
		}
	}
	check := func(s *durableStore) {
		t.Helper()
		if err := s.ViewList([]byte("q"), &l, func() error {
			var got []string
			l.Each(0, false, func(_ int, v []byte) bool { got = append(got, string(v)); return true })
			if !slices.Equal(got, model) {
				t.Fatalf("%d elements back, want %d (equal: %v)", len(got), len(model), slices.Equal(got, model))
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	s := openStore(t, dir, cfg)
	update(s, func() {
		for range 6000 { // about 130 KB: a base
			v := val()
			l.Push(false, []byte(v))
			model = append(model, v)
		}
	})
	patched, s := patchRounds(t, s, dir, cfg, "q", func(s *durableStore) {
		switch op := r.IntN(12); {
		case op < 3:
			update(s, func() {
				v := val()
				l.Push(true, []byte(v))
				model = slices.Insert(model, 0, v)
			})
		case op < 6:
			update(s, func() {
				v := val()
				l.Push(false, []byte(v))
				model = append(model, v)
			})
		case op < 8:
			left := op == 6
			update(s, func() {
				l.Pop(left, nil)
				if left {
					model = model[1:]
				} else {
					model = model[:len(model)-1]
				}
			})
		case op == 8:
			update(s, func() {
				i, v := r.IntN(len(model)), val()
				l.Set(i, []byte(v))
				model[i] = v
			})
		case op == 9:
			update(s, func() {
				i, v := r.IntN(len(model)), val()
				l.InsertAt(i, []byte(v))
				model = slices.Insert(model, i, v)
			})
		case op == 10:
			update(s, func() { // LTRIM 2 -1
				l.Delete(0, 2)
				model = model[2:]
			})
		default:
			update(s, func() {
				v := model[len(model)-1-r.IntN(50)]
				l.Remove([]byte(v), -1)
				model = slices.DeleteFunc(model, func(x string) bool { return x == v })
			})
		}
	}, check)
	if patched < 750 {
		t.Fatalf("a patch was on disk after only %d of 1500 changes", patched)
	}
	s.close(t)
}

// TestZSetPatchesSurviveRestart: a big sorted set used as a schedule
// (members added with later and later scores, the earliest popped, some
// removed or rescheduled anywhere) is written as patches of its base,
// and reads back as the model says after restarts, a compaction and
// being pushed out of memory.
func TestZSetPatchesSurviveRestart(t *testing.T) {
	dir := t.TempDir()
	cfg := store.Config{SweepInterval: -1, MemoryLimit: 16 << 20}
	r := rand.New(rand.NewPCG(5, 9))
	type entry struct {
		m string
		s float64
	}
	model := map[string]float64{}
	sorted := func() []entry {
		var out []entry
		for m, sc := range model {
			out = append(out, entry{m, sc})
		}
		slices.SortFunc(out, func(a, b entry) int {
			if a.s != b.s {
				return cmp.Compare(a.s, b.s)
			}
			return strings.Compare(a.m, b.m)
		})
		return out
	}
	var z store.ZSet
	seq, now := 0, 1.764e12
	update := func(s *durableStore, fn func()) {
		t.Helper()
		if err := s.UpdateZSet([]byte("sched"), &z, func() error { fn(); return nil }); err != nil {
			t.Fatal(err)
		}
	}
	schedule := func() { // a job due a little after the last one
		seq++
		now += float64(r.IntN(1000))
		m := fmt.Sprintf("job:%08d:%x", seq, r.Uint32())
		z.Set([]byte(m), now)
		model[m] = now
	}
	check := func(s *durableStore) {
		t.Helper()
		want := sorted()
		if err := s.ViewZSet([]byte("sched"), &z, func() error {
			var got []entry
			z.Range(0, z.Len()-1, false, func(m []byte, sc float64) bool { got = append(got, entry{string(m), sc}); return true })
			if !slices.Equal(got, want) {
				t.Fatalf("%d members back, want %d (equal: %v)", len(got), len(want), slices.Equal(got, want))
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	s := openStore(t, dir, cfg)
	update(s, func() {
		for range 6000 { // about 150 KB: a base
			schedule()
		}
	})
	patched, s := patchRounds(t, s, dir, cfg, "sched", func(s *durableStore) {
		switch op := r.IntN(10); {
		case op < 5:
			update(s, schedule)
		case op < 8: // ZPOPMIN of what is due
			update(s, func() {
				k := 1 + r.IntN(3)
				for _, e := range sorted()[:k] {
					delete(model, e.m)
				}
				z.DeleteRange(0, k-1)
			})
		case op == 8: // ZREM of a job anywhere
			update(s, func() {
				all := sorted()
				m := all[r.IntN(len(all))].m
				z.Delete([]byte(m))
				delete(model, m)
			})
		default: // a job rescheduled at the end
			update(s, func() {
				all := sorted()
				m := all[r.IntN(len(all))].m
				now += 1
				z.Set([]byte(m), now)
				model[m] = now
			})
		}
	}, check)
	if patched < 500 {
		t.Fatalf("a patch was on disk after only %d of 1500 changes", patched)
	}
	s.close(t)
}

// patchRounds runs five rounds of 300 steps on key, a collection in s
// (the store open at dir): after each round it checks the collection,
// compacts or evicts (compactOrEvict) and checks it again, restarts and
// checks it again. It returns how many steps left a patch on disk, and
// the store, open.
func patchRounds(t *testing.T, s *durableStore, dir string, cfg store.Config, key string, step, check func(s *durableStore)) (int, *durableStore) {
	t.Helper()
	patched := 0
	for round := range 5 {
		for range 300 {
			step(s)
			if hasPatchOf(t, s, key) {
				patched++
			}
		}
		check(s)
		if compactOrEvict(t, s, round) {
			check(s)
		}
		s.close(t)
		s = openStore(t, dir, cfg)
		check(s)
	}
	return patched, s
}

// compactOrEvict compacts the engine in round 1; in round 2 it pushes
// everything out of memory with other keys and reports true.
func compactOrEvict(t *testing.T, s *durableStore, round int) bool {
	t.Helper()
	switch round {
	case 1:
		if err := s.log.Compact(); err != nil {
			t.Fatal(err)
		}
	case 2:
		for i := range 40000 {
			mustStore(t, s, fmt.Sprint("filler", i), string(make([]byte, 400)), 0, 0)
		}
		return true
	}
	return false
}

func hasPatchOf(t *testing.T, s *durableStore, key string) bool {
	t.Helper()
	if err := s.log.Sync(); err != nil {
		t.Fatal(err)
	}
	_, err := s.db.Get(append([]byte{prefixPatch}, key...))
	return err == nil
}

func rename(t *testing.T, s *durableStore, src, dst string) {
	t.Helper()
	err := s.Tx([][]byte{[]byte(src), []byte(dst)}, func(tx *store.Tx) error {
		if !tx.Rename([]byte(src), []byte(dst), false) {
			return fmt.Errorf("Rename(%s, %s) = false", src, dst)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestApplyPatchRejects: a patch that does not fit its base (another
// base, a truncated record) is an error, never a record made of the
// wrong bytes.
func TestApplyPatchRejects(t *testing.T) {
	base := bytes.Repeat([]byte("0123456789"), 10)
	p := &store.Patch{Head: []byte("HEAD"), Tail: []byte("TAIL"), KeepOff: 10, KeepLen: 20, BaseLen: len(base), BaseHead: base[:13]}
	enc := func(p *store.Patch) []byte { return appendPatch(nil, p) }
	got, err := applyPatch(base, enc(p))
	if want := "HEAD" + string(base[10:30]) + "TAIL"; err != nil || string(got) != want {
		t.Fatalf("applyPatch = %q, %v; want %q", got, err, want)
	}
	other := slices.Clone(base)
	other[5] = 'x'
	for name, tc := range map[string]struct {
		base, patch []byte
	}{
		"another base":  {other, enc(p)},
		"shorter base":  {base[:90], enc(p)},
		"truncated":     {base, enc(p)[:20]},
		"bad version":   {base, append(enc(p)[:len(enc(p))-1], 9)},
		"range outside": {base, enc(&store.Patch{KeepOff: 90, KeepLen: 20, BaseLen: len(base)})},
	} {
		if got, err := applyPatch(tc.base, tc.patch); err == nil {
			t.Errorf("%s: applyPatch = %q, nil; want an error", name, got)
		}
	}
}

// FuzzApplyPatch: a patch record read from disk is untrusted bytes (a
// damaged table): applying it to any base never panics, and what it
// returns is the patch's head, then the range of the base it names, then
// its tail.
func FuzzApplyPatch(f *testing.F) {
	base := bytes.Repeat([]byte("0123456789"), 10)
	f.Add(base, appendPatch(nil, &store.Patch{Head: []byte("HEAD"), Tail: []byte("TAIL"), KeepOff: 10, KeepLen: 20, BaseLen: len(base), BaseHead: base[:13]}))
	f.Add(base[:5], appendPatch(nil, &store.Patch{BaseLen: 5}))
	f.Add([]byte{}, []byte{patchVersion})
	f.Fuzz(func(t *testing.T, base, p []byte) {
		out, err := applyPatch(base, p)
		if err != nil {
			return
		}
		tr := p[len(p)-patchTrailer:]
		headLen := int(binary.LittleEndian.Uint32(tr))
		baseHeadLen := int(binary.LittleEndian.Uint32(tr[4:]))
		keepOff := int(binary.LittleEndian.Uint64(tr[8:]))
		keepLen := int(binary.LittleEndian.Uint64(tr[16:]))
		body := p[:len(p)-patchTrailer]
		tail := body[headLen : len(body)-baseHeadLen]
		want := append(append(slices.Clone(body[:headLen]), base[keepOff:keepOff+keepLen]...), tail...)
		if !bytes.Equal(out, want) || !bytes.HasPrefix(base, body[len(body)-baseHeadLen:]) {
			t.Fatalf("applyPatch made %d bytes, not head, base range and tail (%d)", len(out), len(want))
		}
	})
}

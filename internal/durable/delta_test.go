package durable

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/minikv/minikv/internal/store"
)

// TestHashDeltasSurviveRestart: a big hash changed by new fields,
// overwrites of either length and deletions is written as deltas of its
// base (the engine holds a delta patch), and reads back as the model says
// after restarts (the warm-up's scan), after compactions, and after being
// pushed out of memory (a point read). An EXPIRE and a RENAME write it
// whole again.
func TestHashDeltasSurviveRestart(t *testing.T) {
	dir := t.TempDir()
	cfg := store.Config{SweepInterval: -1, MemoryLimit: 16 << 20}
	r := rand.New(rand.NewPCG(7, 9))
	model := map[string]string{}
	var h store.Hash
	key := "h"
	update := func(s *durableStore, fn func()) {
		t.Helper()
		if err := s.UpdateHash([]byte(key), &h, func() error { fn(); return nil }); err != nil {
			t.Fatal(err)
		}
	}
	set := func(f, v string) {
		h.Set([]byte(f), []byte(v))
		model[f] = v
	}
	anyField := func() string {
		fs := slices.Sorted(maps.Keys(model))
		return fs[r.IntN(len(fs))]
	}
	next := 0
	check := func(s *durableStore) {
		t.Helper()
		got := map[string]string{}
		if err := s.ViewHash([]byte(key), &h, func() error {
			h.Each(func(f, v []byte) bool { got[string(f)] = string(v); return true })
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		if !maps.Equal(got, model) {
			t.Fatalf("%s: %d fields back, want %d", key, len(got), len(model))
		}
	}
	s := openStore(t, dir, cfg)
	update(s, func() {
		for range 3000 { // about 100 KB: a base
			next++
			set(fmt.Sprintf("field:%06d", next), fmt.Sprintf("%x", r.Uint64()))
		}
	})
	deltas := 0
	patched, s := patchRounds(t, s, dir, cfg, key, func(s *durableStore) {
		switch op := r.IntN(20); {
		case op < 8: // a new field
			next++
			update(s, func() { set(fmt.Sprintf("field:%06d", next), fmt.Sprintf("%x", r.Uint64())) })
		case op < 11: // an overwrite of another length
			update(s, func() { set(anyField(), fmt.Sprint(r.IntN(1000))) })
		case op < 13: // the same counter, again and again
			update(s, func() { set("counter", fmt.Sprintf("%016d", r.Uint64()%1e16)) })
		case op < 18:
			update(s, func() {
				f := anyField()
				if !h.Delete([]byte(f)) {
					t.Fatalf("HDEL %s: not there", f)
				}
				delete(model, f)
			})
		case op == 18: // a field set and deleted in one call: the delta says gone
			update(s, func() {
				h.Set([]byte("brief"), []byte("x"))
				h.Delete([]byte("brief"))
			})
		default: // a big value
			update(s, func() { set(anyField(), string(bytes.Repeat([]byte{'v'}, 300+r.IntN(300)))) })
		}
		if isDelta(t, s, key) {
			deltas++
		}
	}, check)
	if patched < 1200 || deltas != patched {
		t.Fatalf("a patch was on disk after %d of 1500 changes, %d of them deltas", patched, deltas)
	}
	// A RENAME writes the new key whole; the old one is gone with its delta.
	rename(t, s, key, "h2")
	key = "h2"
	check(s)
	if hasPatchOf(t, s, "h") || hasPatchOf(t, s, "h2") {
		t.Fatal("a patch is left after RENAME")
	}
	update(s, func() { set("after-rename", "1") })
	if !isDelta(t, s, key) {
		t.Fatal("no delta after the renamed hash's second write")
	}
	// An EXPIRE writes it whole with the deadline; then deltas again.
	deadline := int64(4102444800000) // 2100
	if !s.Touch([]byte(key), deadline) {
		t.Fatal("Touch: no key")
	}
	if hasPatchOf(t, s, key) {
		t.Fatal("a patch is left after EXPIRE")
	}
	update(s, func() { set("after-expire", "1") })
	if !isDelta(t, s, key) {
		t.Fatal("no delta after EXPIRE's whole write")
	}
	s.close(t)
	s = openStore(t, dir, cfg)
	check(s)
	if it, ok := s.Get([]byte(key)); !ok || it.Deadline != deadline {
		t.Fatalf("deadline %d after restart, want %d", it.Deadline, deadline)
	}
	s.close(t)
}

// TestSetDeltasSurviveRestart: the same for a big set, SADD and SREM.
func TestSetDeltasSurviveRestart(t *testing.T) {
	dir := t.TempDir()
	cfg := store.Config{SweepInterval: -1, MemoryLimit: 16 << 20}
	r := rand.New(rand.NewPCG(8, 9))
	model := map[string]bool{}
	var st store.Set
	update := func(s *durableStore, fn func()) {
		t.Helper()
		if err := s.UpdateSet([]byte("s"), &st, func() error { fn(); return nil }); err != nil {
			t.Fatal(err)
		}
	}
	add := func() {
		m := fmt.Sprintf("member:%x", r.Uint64())
		st.Add([]byte(m))
		model[m] = true
	}
	check := func(s *durableStore) {
		t.Helper()
		got := map[string]bool{}
		if err := s.ViewSet([]byte("s"), &st, func() error {
			st.Each(func(m []byte) bool { got[string(m)] = true; return true })
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		if !maps.Equal(got, model) {
			t.Fatalf("%d members back, want %d", len(got), len(model))
		}
	}
	s := openStore(t, dir, cfg)
	update(s, func() {
		for range 4000 { // about 100 KB: a base
			add()
		}
	})
	deltas := 0
	patched, s := patchRounds(t, s, dir, cfg, "s", func(s *durableStore) {
		if r.IntN(2) == 0 {
			update(s, add)
		} else {
			update(s, func() {
				ms := slices.Sorted(maps.Keys(model))
				m := ms[r.IntN(len(ms))]
				if !st.Remove([]byte(m)) {
					t.Fatalf("SREM %s: not there", m)
				}
				delete(model, m)
			})
		}
		if isDelta(t, s, "s") {
			deltas++
		}
	}, check)
	if patched < 1200 || deltas != patched {
		t.Fatalf("a patch was on disk after %d of 1500 changes, %d of them deltas", patched, deltas)
	}
	s.close(t)
}

// isDelta reports whether key has a patch on disk, and that it is a delta.
func isDelta(t *testing.T, s *durableStore, key string) bool {
	t.Helper()
	if !hasPatchOf(t, s, key) {
		return false
	}
	p, err := s.db.Get(append([]byte{prefixPatch}, key...))
	if err != nil {
		t.Fatal(err)
	}
	return len(p) > 0 && p[len(p)-1] == patchDelta
}

// TestApplyDeltaRejects: a delta that does not fit its base, or is not
// well formed, is an error, never a record made of the wrong bytes.
func TestApplyDeltaRejects(t *testing.T) {
	base, delta := deltaSample()
	p := &store.Patch{Head: base[:13], Delta: delta, BaseLen: len(base), BaseHead: base[:13]}
	enc := func(p *store.Patch) []byte { return appendPatch(nil, p) }
	if _, err := applyPatch(base, enc(p)); err != nil {
		t.Fatalf("applyPatch of a good delta: %v", err)
	}
	other := slices.Clone(base)
	other[3] ^= 1
	dup := append(slices.Clone(delta), delta...)
	for name, tc := range map[string]struct {
		base, patch []byte
	}{
		"another base":    {other, enc(p)},
		"shorter base":    {base[:len(base)-1], enc(p)},
		"truncated":       {base, enc(p)[:20]},
		"a field twice":   {base, enc(&store.Patch{Head: base[:13], Delta: dup, BaseLen: len(base), BaseHead: base[:13]})},
		"cut delta":       {base, enc(&store.Patch{Head: base[:13], Delta: delta[:len(delta)-1], BaseLen: len(base), BaseHead: base[:13]})},
		"short head":      {base, enc(&store.Patch{Head: base[:12], Delta: delta, BaseLen: len(base), BaseHead: base[:13]})},
		"another kind":    {base, enc(&store.Patch{Head: append([]byte{0}, base[1:13]...), Delta: delta, BaseLen: len(base), BaseHead: base[:13]})},
		"not a table":     {append([]byte{0}, base[1:]...), enc(&store.Patch{Head: append([]byte{0}, base[1:13]...), Delta: delta, BaseLen: len(base), BaseHead: append([]byte{0}, base[1:13]...)})},
		"base's count":    {append(slices.Clone(base[:13]), append([]byte{9}, base[14:]...)...), enc(&store.Patch{Head: base[:13], Delta: delta, BaseLen: len(base), BaseHead: base[:13]})},
		"bad delta flags": {base, append(enc(p)[:len(enc(p))-1], 3)},
	} {
		if got, err := applyPatch(tc.base, tc.patch); err == nil {
			t.Errorf("%s: applyPatch = %q, nil; want an error", name, got)
		}
	}
}

// deltaSample is a big hash's whole record and a delta of it, made by a
// store in durable mode.
func deltaSample() (base, delta []byte) {
	rec := []byte{0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0}
	rec[0] = 1<<3 | 2<<6 // a hash, big
	rec = append(rec, 3)
	for _, fv := range [][2]string{{"a", "1"}, {"bb", "22"}, {"c", ""}} {
		rec = append(rec, byte(len(fv[0])))
		rec = append(rec, fv[0]...)
		rec = append(rec, byte(len(fv[1])))
		rec = append(rec, fv[1]...)
	}
	// bb set to "x", a gone, d added.
	delta = []byte{2, 'b', 'b', 2, 'x', 1, 'a', 0, 1, 'd', 1}
	return rec, delta
}

// TestApplyZSetDelta: a sorted set's delta merges its members into the
// order of scores and members; a score that is not 8 bytes, or NaN, is
// refused.
func TestApplyZSetDelta(t *testing.T) {
	entry := func(m string, sc float64) []byte {
		b := append([]byte{byte(len(m))}, m...)
		return binary.LittleEndian.AppendUint64(b, math.Float64bits(sc))
	}
	head := []byte{4<<3 | 2<<6, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0} // a sorted set, big
	base := append(slices.Clone(head), 3)
	base = append(append(append(base, entry("a", 1)...), entry("b", 2)...), entry("c", 3)...)
	set := func(m string, sc float64) []byte {
		return append(append([]byte{byte(len(m))}, m...), append([]byte{9}, binary.LittleEndian.AppendUint64(nil, math.Float64bits(sc))...)...)
	}
	delta := append(append(append(set("d", 0.5), set("b", 4)...), set("e", 2.5)...), 1, 'c', 0)
	p := appendPatch(nil, &store.Patch{Head: head, Delta: delta, BaseLen: len(base), BaseHead: base[:13]})
	got, err := applyPatch(base, p)
	want := append(slices.Clone(head), 4)
	want = append(append(append(append(want, entry("d", 0.5)...), entry("a", 1)...), entry("e", 2.5)...), entry("b", 4)...)
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("applyPatch = %q, %v; want %q", got, err, want)
	}
	for name, d := range map[string][]byte{
		"a short score": {1, 'x', 8, 0, 0, 0, 0, 0, 0, 0},
		"NaN":           set("x", math.NaN()),
	} {
		p := appendPatch(nil, &store.Patch{Head: head, Delta: d, BaseLen: len(base), BaseHead: base[:13]})
		if got, err := applyPatch(base, p); err == nil {
			t.Errorf("%s: applyPatch = %q, nil; want an error", name, got)
		}
	}
}

// FuzzApplyDelta: a delta read from disk is untrusted bytes: applying it
// to any base never panics, and what it makes begins with the delta's
// head and is a table's record the store can read.
func FuzzApplyDelta(f *testing.F) {
	base, delta := deltaSample()
	f.Add(base, delta, base[:13])
	f.Add(base, []byte{}, base[:13])
	f.Add(base[:14], []byte{1, 'a', 0}, base[:13])
	zhead := []byte{4<<3 | 2<<6, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0} // a sorted set, big
	zbase := append(slices.Clone(zhead), 2, 1, 'a', 0, 0, 0, 0, 0, 0, 0xf0, 0x3f, 1, 'b', 0, 0, 0, 0, 0, 0, 0, 0x40)
	f.Add(zbase, []byte{1, 'c', 9, 0, 0, 0, 0, 0, 0, 0xf8, 0x3f, 1, 'a', 0}, zhead)
	f.Fuzz(func(t *testing.T, base, delta, head []byte) {
		p := appendPatch(nil, &store.Patch{Head: head, Delta: delta, BaseLen: len(base), BaseHead: base[:min(13, len(base))]})
		out, err := applyPatch(base, p)
		if err != nil {
			return
		}
		if !bytes.HasPrefix(out, head) {
			t.Fatalf("the record does not begin with the delta's head")
		}
		if _, err := store.MergeDelta(out, head, nil); err != nil {
			t.Fatalf("the record made is not a table's: %v", err)
		}
	})
}

// TestZSetDeltasSurviveRestart: a big sorted set used as a leaderboard
// (new members and new scores anywhere in the order, removals, now and
// then a ZPOPMIN) is written as patches, mostly deltas of its members,
// and reads back in the model's order after restarts, compactions and
// being pushed out of memory.
func TestZSetDeltasSurviveRestart(t *testing.T) {
	dir := t.TempDir()
	cfg := store.Config{SweepInterval: -1, MemoryLimit: 16 << 20}
	r := rand.New(rand.NewPCG(9, 9))
	model := map[string]float64{}
	var z store.ZSet
	update := func(s *durableStore, fn func()) {
		t.Helper()
		if err := s.UpdateZSet([]byte("board"), &z, func() error { fn(); return nil }); err != nil {
			t.Fatal(err)
		}
	}
	set := func(m string, sc float64) {
		z.Set([]byte(m), sc)
		model[m] = sc
	}
	anyMember := func() string {
		ms := slices.Sorted(maps.Keys(model))
		return ms[r.IntN(len(ms))]
	}
	type entry struct {
		m string
		s float64
	}
	sorted := func() []entry {
		out := make([]entry, 0, len(model))
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
	check := func(s *durableStore) {
		t.Helper()
		var got []entry
		if err := s.ViewZSet([]byte("board"), &z, func() error {
			z.Range(0, z.Len()-1, false, func(m []byte, sc float64) bool { got = append(got, entry{string(m), sc}); return true })
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		if want := sorted(); !slices.Equal(got, want) {
			t.Fatalf("%d members back, want %d (equal: %v)", len(got), len(want), slices.Equal(got, want))
		}
	}
	s := openStore(t, dir, cfg)
	update(s, func() {
		for i := range 5000 { // about 130 KB: a base
			set(fmt.Sprintf("player:%06d", i), float64(r.IntN(100000)))
		}
	})
	deltas, next := 0, 5000
	patched, s := patchRounds(t, s, dir, cfg, "board", func(s *durableStore) {
		switch op := r.IntN(10); {
		case op < 4: // a new player, anywhere
			next++
			update(s, func() { set(fmt.Sprintf("player:%06d", next), float64(r.IntN(100000))) })
		case op < 8: // a new score (ZINCRBY), or the same score (no change)
			update(s, func() {
				m := anyMember()
				if op == 7 {
					set(m, model[m])
				} else {
					set(m, model[m]+float64(r.IntN(1000))-500.5)
				}
			})
		case op == 8:
			update(s, func() {
				m := anyMember()
				z.Delete([]byte(m))
				delete(model, m)
			})
		default: // ZPOPMIN
			update(s, func() {
				delete(model, sorted()[0].m)
				z.DeleteRange(0, 0)
			})
		}
		if isDelta(t, s, "board") {
			deltas++
		}
	}, check)
	if patched < 1200 || deltas < 1000 {
		t.Fatalf("a patch was on disk after %d of 1500 changes, %d of them deltas", patched, deltas)
	}
	s.close(t)
}

// TestDeferredPatches: a key's patch waits aside until its batch is
// taken, a newer one replacing it (WritePatch reports that); a read finds
// it there; a whole write of the key drops it. Big hashes changed from
// many goroutines at once (each WritePatch encodes under the Log's lock)
// all read back after a restart.
func TestDeferredPatches(t *testing.T) {
	dir := t.TempDir()
	cfg := store.Config{SweepInterval: -1, MemoryLimit: 64 << 20}
	s := openStore(t, dir, cfg)
	l := s.log
	p := &store.Patch{Head: []byte("head-of-13-by"), Delta: []byte{1, 'a', 0}, BaseLen: 20, BaseHead: []byte("base-head-13-")}
	if l.WritePatch([]byte("k"), p, 0) {
		t.Fatal("the first patch of a batch replaced one")
	}
	if !l.WritePatch([]byte("k"), p, 0) {
		t.Fatal("the second patch of the batch did not replace the first")
	}
	if rec, _, err := l.read([]byte("pk")); err != nil || rec == nil || rec[len(rec)-1] != patchDelta {
		t.Fatalf("read of a deferred patch: %q, %v", rec, err)
	}
	if err := l.Sync(); err != nil {
		t.Fatal(err)
	}
	if l.WritePatch([]byte("k"), p, 0) {
		t.Fatal("the first patch after a commit replaced one")
	}
	l.Write([]byte("k"), nil, 0) // a delete: the deferred patch goes, and the one on disk
	if err := l.Sync(); err != nil {
		t.Fatal(err)
	}
	if _, err := s.db.Get([]byte("pk")); err == nil {
		t.Fatal("a patch is left after the key's delete")
	}

	const keys, fields = 4, 3000
	models := make([]map[string]string, keys)
	done := make(chan error, keys)
	for g := range keys {
		models[g] = map[string]string{}
		go func() {
			var h store.Hash
			key := []byte(fmt.Sprint("hash", g))
			r := rand.New(rand.NewPCG(uint64(g), 1))
			for i := range fields + 2000 {
				n := 1
				if i == 0 {
					n = fields // about 100 KB: a base
				}
				err := s.UpdateHash(key, &h, func() error {
					for range n {
						f, v := fmt.Sprint("f", r.IntN(2*fields)), fmt.Sprintf("%x", r.Uint64())
						h.Set([]byte(f), []byte(v))
						models[g][f] = v
					}
					return nil
				})
				if err != nil {
					done <- err
					return
				}
			}
			done <- nil
		}()
	}
	for range keys {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
	for g := range keys {
		if !isDelta(t, s, fmt.Sprint("hash", g)) {
			t.Fatalf("hash%d has no delta on disk", g)
		}
	}
	s.close(t)
	s = openStore(t, dir, cfg)
	for g := range keys {
		var h store.Hash
		got := map[string]string{}
		if err := s.ViewHash([]byte(fmt.Sprint("hash", g)), &h, func() error {
			h.Each(func(f, v []byte) bool { got[string(f)] = string(v); return true })
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		if !maps.Equal(got, models[g]) {
			t.Fatalf("hash%d: %d fields back, want %d", g, len(got), len(models[g]))
		}
	}
	s.close(t)
}

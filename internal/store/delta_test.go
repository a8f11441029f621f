package store

import (
	"encoding/binary"
	"fmt"
	"hash/maphash"
	"maps"
	"math/rand/v2"
	"testing"
)

// TestTableDeltaEncoding: after any sequence of sets and deletes, with
// the delta brought up to date now and then, the delta names each field
// changed since the base once, with its value now or as gone: whether its
// entry was appended, rewritten in place, rewritten as the last one or
// encoded anew.
func TestTableDeltaEncoding(t *testing.T) {
	for seed := range uint64(20) {
		r := rand.New(rand.NewPCG(seed, 3))
		tbl := newTable(heapMem, maphash.MakeSeed(), 0)
		for i := range 200 {
			tbl.set(fmt.Appendf(nil, "f%d", i), []byte("base"))
		}
		tbl.delta = &tableDelta{}
		tbl.delta.rebase([]byte("k"), make([]byte, 1<<20), 0)
		changed := map[string]bool{}
		for step := range 2000 {
			f := fmt.Appendf(nil, "f%d", r.IntN(300))
			if r.IntN(20) == 0 {
				f = []byte("counter")
			}
			switch op := r.IntN(10); {
			case op < 6:
				tbl.set(f, fmt.Appendf(nil, "%d", r.IntN(1<<uint(r.IntN(20)))))
			case op < 8:
				tbl.set(f, []byte("same"))
			default:
				if !tbl.del(f) {
					continue // nothing changed
				}
			}
			changed[string(f)] = true
			if r.IntN(4) > 0 {
				continue
			}
			tbl.encodeDelta()
			got := map[string]string{}
			for b := tbl.delta.enc; len(b) > 0; {
				f, rest, ok := cutFlat(b)
				if !ok {
					t.Fatalf("seed %d step %d: a cut entry", seed, step)
				}
				tag, k := binary.Uvarint(rest)
				v := "(gone)"
				if tag > 0 {
					v = string(rest[k : k+int(tag)-1])
				}
				if _, dup := got[string(f)]; dup {
					t.Fatalf("seed %d step %d: %s twice", seed, step, f)
				}
				got[string(f)] = v
				b = rest[k+int(max(tag, 1)-1):]
			}
			want := map[string]string{}
			for f := range changed {
				v, ok := tbl.get([]byte(f))
				want[f] = "(gone)"
				if ok {
					want[f] = string(v)
				}
			}
			if !maps.Equal(got, want) {
				t.Fatalf("seed %d step %d: the delta has %d fields, want %d: %v", seed, step, len(got), len(want), got)
			}
		}
	}
}

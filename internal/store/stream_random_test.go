package store

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// TestStreamRandomOps runs seeded random appends, deletions, trims (exact
// and approximate, by length and by ID) and group deliveries, acks and
// claims on a stream with small nodes, checking after every step against
// a model (the live IDs and their fields) and that the stream passes its
// own deep check (what RESTORE applies) with exact byte accounting.
func TestStreamRandomOps(t *testing.T) {
	everyRecordABase(t)
	for seed := uint64(1); seed <= 4; seed++ {
		var pc patchCheck
		r := rand.New(rand.NewPCG(seed, 7))
		s := New(Config{MemoryLimit: 64 << 20})
		key := []byte("s")
		type entry struct {
			id StreamID
			fv []string
		}
		var model []entry
		next := StreamID{1, 0}
		pending := map[StreamID]bool{}
		packed := 0 // steps that ended with a compressed node
		for step := 0; step < 3000; step++ {
			var st Stream
			op := r.IntN(10)
			err := s.UpdateStream(key, &st, func() error {
				switch {
				case op < 5:
					next.Seq += uint64(r.IntN(3) + 1)
					if r.IntN(4) == 0 {
						next = StreamID{next.Ms + uint64(r.IntN(5)+1), uint64(r.IntN(3))}
					}
					fv := []string{"f", fmt.Sprint(step)}
					if r.IntN(2) == 0 { // values that compress: nodes get packed
						fv[1] = strings.Repeat(fmt.Sprint(step%7), 20+r.IntN(40))
					}
					if r.IntN(3) == 0 {
						fv = append(fv, "g", fmt.Sprint(r.IntN(1000)))
					}
					args := make([][]byte, len(fv))
					for i, f := range fv {
						args[i] = []byte(f)
					}
					st.Append(next, args, int64(64+r.IntN(200)), int64(1+r.IntN(8)))
					model = append(model, entry{next, fv})
				case op == 5 && len(model) > 0:
					victim := model[r.IntN(len(model))].id
					if !st.Delete(victim) {
						t.Fatalf("seed %d step %d: Delete(%v) of a live entry = false", seed, step, victim)
					}
					model = slices.DeleteFunc(model, func(e entry) bool { return e.id == victim })
				case op == 6 && st.Exists():
					tr := StreamTrim{Approx: r.IntN(2) == 0}
					if r.IntN(2) == 0 {
						tr.MaxLen = uint64(r.IntN(len(model) + 1))
					} else if len(model) > 0 {
						tr.MinID, tr.ID = true, model[r.IntN(len(model))].id
					}
					n := st.Trim(tr)
					// The model keeps what the stream kept: its first n
					// live entries went.
					if int(n) > len(model) {
						t.Fatalf("seed %d step %d: Trim removed %d of %d", seed, step, n, len(model))
					}
					model = model[n:]
				case op == 7 && st.Exists():
					g, _ := st.CreateGroup([]byte("g"), StreamID{}, -1)
					c, _ := st.CreateConsumer(g, []byte(fmt.Sprint("c", r.IntN(3))), 1)
					st.Range(g.LastID(), MaxStreamID, false, func(id StreamID, _ [][]byte) bool {
						if id == g.LastID() {
							return true
						}
						st.Advance(g, id)
						st.Deliver(g, c, id, int64(step))
						pending[id] = true
						return false
					})
				case op == 8 && st.Exists():
					if g := st.Group([]byte("g")); g != nil {
						for id := range pending {
							if st.Ack(g, id) != pending[id] {
								t.Fatalf("seed %d step %d: Ack(%v) disagrees with the model", seed, step, id)
							}
							delete(pending, id)
							break
						}
					}
				case op == 9 && st.Exists():
					if g := st.Group([]byte("g")); g != nil && g.PendingCount() > 0 {
						c, _ := st.CreateConsumer(g, []byte("claimer"), 2)
						st.SetNACK(g, c, g.FirstPending(), int64(step), 9)
					}
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			// The stream against the model, and its deep check.
			err = s.ViewStream(key, &st, func() error {
				if !st.Exists() {
					return nil
				}
				var got []entry
				st.Range(StreamID{}, MaxStreamID, false, func(id StreamID, fv [][]byte) bool {
					e := entry{id: id}
					for _, b := range fv {
						e.fv = append(e.fv, string(b))
					}
					got = append(got, e)
					return true
				})
				if fmt.Sprint(got) != fmt.Sprint(model) || st.Len() != uint64(len(model)) {
					t.Fatalf("seed %d step %d (op %d): stream %v (len %d), model %v", seed, step, op, got, st.Len(), model)
				}
				var rev []StreamID
				st.Range(StreamID{}, MaxStreamID, true, func(id StreamID, _ [][]byte) bool { rev = append(rev, id); return true })
				for i, id := range rev {
					if id != model[len(model)-1-i].id {
						t.Fatalf("seed %d step %d: reverse walk %v", seed, step, rev)
					}
				}
				o := st.o()
				if _, err := streamFromValue(st.Export()); err != nil {
					t.Fatalf("seed %d step %d (op %d): the stream fails its own check: %v", seed, step, op, err)
				}
				var caps int64
				for _, nd := range o.nodes {
					caps += int64(cap(nd.LP))
				}
				if caps != o.lpBytes {
					t.Fatalf("seed %d step %d: lpBytes %d, capacities %d", seed, step, o.lpBytes, caps)
				}
				// Every node but the last is compressed or was tried;
				// point reads in random order move the view between
				// compressed nodes.
				for i, nd := range o.nodes {
					if i < len(o.nodes)-1 && nd.raw == 0 {
						t.Fatalf("seed %d step %d: node %d of %d is plain, never tried", seed, step, i, len(o.nodes))
					}
					if i == len(o.nodes)-1 && nd.raw > 0 {
						t.Fatalf("seed %d step %d: the last node is compressed", seed, step)
					}
					if nd.raw > 0 {
						packed++
						break
					}
				}
				for k := 0; k < 4 && len(model) > 0; k++ {
					e := model[r.IntN(len(model))]
					found := false
					st.Range(e.id, e.id, false, func(id StreamID, fv [][]byte) bool {
						found = id == e.id && len(fv) == len(e.fv) && string(fv[1]) == e.fv[1]
						return false
					})
					if !found {
						t.Fatalf("seed %d step %d: point read of %v missed", seed, step, e.id)
					}
				}
				pc.check(t, o, key, r, fmt.Sprintf("seed %d step %d (op %d)", seed, step, op))
				if step%100 == 0 { // through the flat encoding (durable mode, COPY)
					flat := o.appendFlat(nil)
					back, err := streamFromFlat(flat)
					if err != nil {
						t.Fatalf("seed %d step %d: streamFromFlat: %v", seed, step, err)
					}
					if again := back.appendFlat(nil); !bytes.Equal(again, flat) {
						var a, b []int
						for _, nd := range o.nodes {
							a = append(a, nd.raw, len(nd.LP))
						}
						for _, nd := range back.(*stream).nodes {
							b = append(b, nd.raw, len(nd.LP))
						}
						t.Fatalf("seed %d step %d: the flat round trip differs: nodes (raw, len) %v, read back %v", seed, step, a, b)
					}
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
		}
		if packed < 100 {
			t.Fatalf("seed %d: a node was compressed after only %d steps of 3000", seed, packed)
		}
		if pc.patches < 300 || pc.fromFront < 3 { // 800-1500 and 14-53 in 24 runs (the test walks a map)
			t.Fatalf("seed %d: only %d steps of 3000 were checked as patches, %d with changed nodes before the unchanged ones", seed, pc.patches, pc.fromFront)
		}
	}
}

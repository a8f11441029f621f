package store

import (
	"runtime"
	"strconv"
	"testing"
)

// TestZSetChunksFillInOrder: members added in score order (how a big
// sorted set is usually built) fill their chunks whole, and in random
// order at least half; chunks are not regrown past zChunkMax (their
// capacity is what is charged, and a regrown chunk left its smaller copy
// to the collector).
func TestZSetChunksFillInOrder(t *testing.T) {
	for _, tc := range []struct {
		name     string
		score    func(i int) float64
		maxWaste float64 // capacity / data
	}{
		{"ascending", func(i int) float64 { return float64(i) }, 1.05},
		{"descending", func(i int) float64 { return float64(-i) }, 1.05},
		{"random", func(i int) float64 { return float64((i * 7919) % 100003) }, 2.0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newTestStore(t, Config{MemoryLimit: 1 << 30})
			var z ZSet
			m := make([]byte, 0, 32)
			_ = s.UpdateZSet([]byte("z"), &z, func() error {
				for i := range 100_000 {
					m = strconv.AppendInt(append(m[:0], "member:"...), int64(i), 10)
					z.Set(m, tc.score(i))
				}
				var data, capacity int
				for _, ch := range z.big().chunks {
					data += len(ch.data)
					capacity += cap(ch.data)
					if cap(ch.data) > zChunkMax && ch.n > 1 {
						t.Fatalf("a chunk of %d entries has capacity %d, past %d", ch.n, cap(ch.data), zChunkMax)
					}
				}
				checkBigZSet(t, z.big())
				if r := float64(capacity) / float64(data); r > tc.maxWaste {
					t.Errorf("chunks hold %d bytes in %d of capacity (%.2f), want at most %.2f", data, capacity, r, tc.maxWaste)
				}
				return nil
			})
			checkInvariants(t, s)
		})
	}
}

// TestListNodesAllocatedOnce: a long list pushed at either end allocates
// each new node once, at the size of the full one before it, instead of
// doubling it up to there and leaving each smaller copy to the collector
// (which kept RSS above the charge): the bytes allocated while pushing
// are about the nodes' data, and their capacity (what is charged) too.
// Compressed (list-compress-depth 1), the nodes' capacity is their
// allocation's size class, at most an eighth over their bytes, and the
// plain node each compressed one was made from is reused for the next.
func TestListNodesAllocatedOnce(t *testing.T) {
	for _, tc := range []struct {
		front    bool
		depth    int64
		maxWaste float64
	}{{false, 0, 1.05}, {true, 0, 1.05}, {false, 1, 1.14}, {true, 1, 1.14}} {
		front := tc.front
		s := newTestStore(t, Config{MemoryLimit: 1 << 30})
		lim := DefaultLimits
		lim.ListCompressDepth = tc.depth
		s.SetLimits(lim)
		var l List
		e := make([]byte, 0, 32)
		_ = s.UpdateList([]byte("l"), &l, func() error {
			for i := range 2000 { // a quicklist of a few nodes
				e = strconv.AppendInt(append(e[:0], "element:"...), int64(i), 10)
				l.Push(front, e)
			}
			return nil
		})
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		_ = s.UpdateList([]byte("l"), &l, func() error {
			for i := range 200_000 {
				e = strconv.AppendInt(append(e[:0], "element:"...), int64(i), 10)
				l.Push(front, e)
			}
			return nil
		})
		runtime.ReadMemStats(&after)
		_ = s.ViewList([]byte("l"), &l, func() error {
			q := l.c.obj.(*quicklist)
			data := 0
			for j := range q.count() {
				data += len(q.node(j).lp)
			}
			if r := float64(q.capBytes) / float64(data); r > tc.maxWaste {
				t.Errorf("front=%v depth %d: nodes hold %d bytes in %d of capacity (%.2f), want at most %.2f", front, tc.depth, data, q.capBytes, r, tc.maxWaste)
			}
			if alloc := after.TotalAlloc - before.TotalAlloc; float64(alloc) > 1.2*float64(data) && !(raceEnabled && tc.depth > 0) {
				t.Errorf("front=%v depth %d: pushing %d bytes of nodes allocated %d bytes, want at most 1.2 times", front, tc.depth, data, alloc)
			}
			return nil
		})
		checkInvariants(t, s)
	}
}

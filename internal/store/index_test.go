package store

import (
	"math/rand/v2"
	"testing"
)

// probeStats returns the mean and longest number of slots a lookup reads
// for the tags present (hits) and for random tags not present (misses),
// with the Robin Hood early stop findLocked uses.
func probeStats(ix *index, r *rand.Rand, present map[uint32]bool) (hitMean float64, hitMax int, missMean float64) {
	probe := func(tag uint32) (int, bool) {
		for i, d := ix.home(tag), 0; ; d++ {
			v := ix.slots[i]
			if v == 0 || slotTag(v) != tag && ix.dist(i, v) < d {
				return d + 1, false
			}
			if slotTag(v) == tag {
				return d + 1, true
			}
			i = ix.next(i)
		}
	}
	var hits, misses int
	for tag := range present {
		n, ok := probe(tag)
		if !ok {
			panic("index lost a tag")
		}
		hits += n
		hitMax = max(hitMax, n)
	}
	const tries = 10000
	for range tries {
		tag := r.Uint32()>>(32-tagBits) | 1
		if present[tag] {
			continue
		}
		n, _ := probe(tag)
		misses += n
	}
	return float64(hits) / float64(len(present)), hitMax, float64(misses) / tries
}

// TestIndexProbeLengths fills an index with random tags through the
// growth cycle and checks that probes stay short even right below the
// growth point (load 7/8), for hits and for misses, and that deletion
// keeps every remaining entry reachable.
func TestIndexProbeLengths(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 9))
	ix := &index{slots: make([]uint64, minIndex)}
	present := make(map[uint32]bool)
	var slots []uint64
	for len(present) < 200_000 {
		tag := r.Uint32()>>(32-tagBits) | 1
		if present[tag] {
			continue
		}
		present[tag] = true
		v := slotOf(tag, loc(uint32(len(slots)), 0))
		slots = append(slots, v)
		ix.insert(v)
		if n := ix.n; n%40_000 == 0 || (ix.n+1)*maxLoadDen > len(ix.slots)*maxLoadNum && n > 1000 {
			hit, hitMax, miss := probeStats(ix, r, present)
			load := float64(ix.n) / float64(len(ix.slots))
			t.Logf("n=%d load %.3f: hit mean %.2f max %d, miss mean %.2f", n, load, hit, hitMax, miss)
			if hit > 6 || miss > 8 {
				t.Errorf("n=%d load %.3f: mean probe %.2f (hit), %.2f (miss) slots; want short probes", n, load, hit, miss)
			}
		}
	}
	r.Shuffle(len(slots), func(i, j int) { slots[i], slots[j] = slots[j], slots[i] })
	for i, v := range slots[:150_000] {
		ix.remove(v, -1)
		delete(present, slotTag(v))
		if i%50_000 == 0 {
			for _, w := range slots[i+1:] {
				ix.where(w, -1) // panics if lost
			}
		}
	}
	hit, hitMax, miss := probeStats(ix, r, present)
	t.Logf("after deletes, n=%d load %.3f: hit mean %.2f max %d, miss mean %.2f", ix.n, float64(ix.n)/float64(len(ix.slots)), hit, hitMax, miss)
}

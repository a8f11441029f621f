package store

import (
	"container/list"
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"testing"
)

// zipfKeys draws n key numbers in [0, keys) with the YCSB zipfian skew
// theta (0 < theta < 1), from a precomputed CDF.
func zipfKeys(keys, n int, theta float64, seed uint64) []int {
	cdf := make([]float64, keys)
	sum := 0.0
	for i := range keys {
		sum += 1 / math.Pow(float64(i+1), theta)
		cdf[i] = sum
	}
	r := rand.New(rand.NewPCG(seed, seed+1))
	perm := r.Perm(keys) // hot keys spread over the keyspace and the shards
	out := make([]int, n)
	for i := range out {
		out[i] = perm[sort.SearchFloat64s(cdf, r.Float64()*sum)]
	}
	return out
}

// lruSim is an exact, global LRU cache of capacity items: the reference
// the store's eviction is measured against.
type lruSim struct {
	cap   int
	order *list.List
	where map[int]*list.Element
}

func (l *lruSim) access(k int) bool {
	if e, ok := l.where[k]; ok {
		l.order.MoveToFront(e)
		return true
	}
	if l.order.Len() == l.cap {
		old := l.order.Back()
		l.order.Remove(old)
		delete(l.where, old.Value.(int))
	}
	l.where[k] = l.order.PushFront(k)
	return false
}

// BenchmarkHitRatio replays a zipf(0.99) trace of get-then-set-on-miss over
// 100,000 keys of 100-byte values against the store with a memory limit of
// 1%, 10% and 50% of the working set, against the same store in LFU mode
// (Redis's allkeys-lfu counters, lfu.go), and against an exact global LRU
// holding the same number of items, and reports the three hit ratios. The
// store's policy is a per-shard eviction walk with two-bit access counts
// (evict.go); it must do at least as well as the exact LRU at every size.
func BenchmarkHitRatio(b *testing.B) {
	const keys, accesses = 100_000, 2_000_000
	trace := zipfKeys(keys, accesses, 0.99, 7)
	value := make([]byte, 100)
	for _, pct := range []int{1, 10, 50} {
		b.Run(fmt.Sprintf("cache=%d%%", pct), func(b *testing.B) {
			var storeHit, lfuHit, lruHit float64
			for b.Loop() {
				itemCost := int64(len("key:0000000000")) + int64(len(value)) + ItemOverhead
				capItems := keys * pct / 100
				s := New(Config{MemoryLimit: int64(capItems) * itemCost, SweepInterval: -1})
				lfu := New(Config{MemoryLimit: int64(capItems) * itemCost, SweepInterval: -1})
				lfu.SetLFU(true) // Redis's defaults: lfu-log-factor 10, lfu-decay-time 1
				sim := &lruSim{cap: capItems, order: list.New(), where: make(map[int]*list.Element)}
				var hits, lfuHits, simHits int
				var kb []byte
				for _, k := range trace {
					kb = fmt.Appendf(kb[:0], "key:%010d", k)
					if _, ok := s.Get(kb); ok {
						hits++
					} else if _, err := s.Store(ModeSet, kb, value, 0, 0, 0); err != nil {
						b.Fatal(err)
					}
					if _, ok := lfu.Get(kb); ok {
						lfuHits++
					} else if _, err := lfu.Store(ModeSet, kb, value, 0, 0, 0); err != nil {
						b.Fatal(err)
					}
					if sim.access(k) {
						simHits++
					}
				}
				s.Close()
				lfu.Close()
				storeHit = float64(hits) / accesses
				lfuHit = float64(lfuHits) / accesses
				lruHit = float64(simHits) / accesses
			}
			b.ReportMetric(100*storeHit, "store-hit-%")
			b.ReportMetric(100*lfuHit, "lfu-hit-%")
			b.ReportMetric(100*lruHit, "exact-lru-hit-%")
		})
	}
}

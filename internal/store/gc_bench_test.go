package store

import (
	"flag"
	"math"
	"math/rand/v2"
	"runtime"
	"runtime/metrics"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

var gcItems = flag.Int("gcitems", 1_000_000, "items BenchmarkGCPause loads (docs/performance.md uses 10000000)")

// BenchmarkGCPause loads -gcitems items of 100-byte values (14-byte keys),
// then runs a 1:9 set:get load on two goroutines while the collector runs,
// and reports the stop-the-world pauses of the collections during the load
// (runtime/metrics /sched/pauses/total/gc:seconds): their count, p50, p99
// and max, plus the heap and the GC CPU share. One b.N iteration is 10,000
// requests per goroutine; the collector runs on its own pacing, plus one
// forced cycle per iteration so every run sees several.
func BenchmarkGCPause(b *testing.B) {
	n := *gcItems
	s := New(Config{MemoryLimit: int64(n) * 400, SweepInterval: -1})
	defer s.Close()
	value := make([]byte, 100)
	key := func(buf []byte, i int) []byte {
		return strconv.AppendInt(append(buf[:0], "key:"...), int64(1_000_000_000+i), 10)
	}
	var kb []byte
	for i := range n {
		kb = key(kb, i)
		if _, err := s.Store(ModeSet, kb, value, 0, 0, 0); err != nil {
			b.Fatal(err)
		}
	}
	runtime.GC()
	samples := []metrics.Sample{
		{Name: "/sched/pauses/total/gc:seconds"},
		{Name: "/cpu/classes/gc/total:cpu-seconds"},
		{Name: "/cpu/classes/total:cpu-seconds"},
		{Name: "/gc/heap/live:bytes"},
		{Name: "/gc/cycles/total:gc-cycles"},
	}
	metrics.Read(samples)
	before := samples[0].Value.Float64Histogram()
	beforeCounts := append([]uint64(nil), before.Counts...)
	gcCPU0, cpu0 := samples[1].Value.Float64(), samples[2].Value.Float64()
	cycles0 := samples[4].Value.Uint64()

	var ops atomic.Int64
	b.ResetTimer()
	for b.Loop() {
		var wg sync.WaitGroup
		for g := range 2 {
			wg.Go(func() {
				r := rand.New(rand.NewPCG(uint64(g), uint64(time.Now().UnixNano())))
				var kb []byte
				for i := range 10_000 {
					kb = key(kb, r.IntN(n))
					if i%10 == 0 {
						_, _ = s.Store(ModeSet, kb, value, 0, 0, 0)
					} else {
						s.Get(kb)
					}
				}
				ops.Add(10_000)
			})
		}
		runtime.GC()
		wg.Wait()
	}
	b.StopTimer()
	metrics.Read(samples)
	after := samples[0].Value.Float64Histogram()
	counts := make([]uint64, len(after.Counts))
	var total uint64
	for i := range counts {
		counts[i] = after.Counts[i] - beforeCounts[i]
		total += counts[i]
	}
	quantile := func(q float64) float64 {
		if total == 0 {
			return 0
		}
		want := uint64(math.Ceil(q * float64(total)))
		var seen uint64
		for i, c := range counts {
			seen += c
			if seen >= want {
				return after.Buckets[i+1] // the bucket's upper bound
			}
		}
		return after.Buckets[len(after.Buckets)-1]
	}
	maxPause := 0.0
	for i := len(counts) - 1; i >= 0; i-- {
		if counts[i] > 0 {
			maxPause = after.Buckets[i+1]
			break
		}
	}
	b.ReportMetric(float64(total), "pauses")
	b.ReportMetric(float64(samples[4].Value.Uint64()-cycles0), "gc-cycles")
	b.ReportMetric(quantile(0.50)*1e6, "p50-pause-µs")
	b.ReportMetric(quantile(0.99)*1e6, "p99-pause-µs")
	b.ReportMetric(maxPause*1e6, "max-pause-µs")
	b.ReportMetric(float64(samples[3].Value.Uint64())/float64(n), "live-heap-B/item")
	if cpu := samples[2].Value.Float64() - cpu0; cpu > 0 {
		b.ReportMetric(100*(samples[1].Value.Float64()-gcCPU0)/cpu, "gc-cpu-%")
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(ops.Load()), "ns/req")
}

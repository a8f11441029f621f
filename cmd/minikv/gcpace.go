package main

import (
	"runtime/debug"
	"runtime/metrics"
	"sync"
	"time"
)

// The collector's pace. Go's default, GOGC=100, lets the heap grow to
// twice what was live after the last collection before it collects
// again: for a cache holding gigabytes of items, gigabytes of resident
// memory that hold nothing. MiniKV's heap is mostly its segments and
// index, pointer-free, which a collection does not scan, so collecting
// more often costs little CPU (docs/benchmarks.md: the same CPU per
// request at GOGC 5 as at 100 under 1.3 M SETs/s). Unless GOGC is in the
// environment, followHeap reads the live heap every gcPoll and sets GOGC
// to let the heap grow by gcHeadroom before the next collection: 100 up
// to 16 MiB live, then less, down to minGOGC (5 %) from 320 MiB live.

const (
	gcPoll     = time.Second
	gcHeadroom = 16 << 20
	minGOGC    = 5
)

// gcPercent is the GOGC that lets a heap of live bytes grow by
// gcHeadroom, within [minGOGC, 100].
func gcPercent(live uint64) int {
	if live == 0 {
		return 100
	}
	return int(min(max(100*gcHeadroom/live, minGOGC), 100))
}

// followHeap starts pacing the collector and returns the function that
// stops it (and waits for it).
func followHeap() (stop func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTicker(gcPoll)
		defer t.Stop()
		sample := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
		set := 100
		for {
			select {
			case <-done:
				return
			case <-t.C:
			}
			metrics.Read(sample)
			if sample[0].Value.Kind() != metrics.KindUint64 {
				return // not in this runtime: keep Go's default
			}
			if p := gcPercent(sample[0].Value.Uint64()); p != set {
				debug.SetGCPercent(p)
				set = p
			}
		}
	})
	return func() {
		close(done)
		wg.Wait()
	}
}

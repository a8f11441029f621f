package main

import (
	"math"
	"runtime/debug"
	"sync"
	"time"

	"github.com/minikv/minikv/internal/store"
)

// The Go heap's soft limit (softMemoryLimit) bounds the memory the Go
// runtime holds, and the store's big collections keep their large slices
// outside it (mapped memory, internal/store's bigmem.go), charged to -m
// like the rest of the items. Left alone, the heap could still grow to the
// whole soft limit while collections hold up to -m more beside it; so
// while MiniKV sets the limit itself, followOffHeap keeps it at
// softMemoryLimit of the store's current memory limit (CONFIG SET
// maxmemory changes it) minus the bytes mapped, and the process as a whole
// within the bound the soft limit promised.

const (
	offHeapPoll = time.Second
	offHeapStep = 4 << 20 // a change below this is not worth a new limit
)

// followOffHeap starts following st's mapped bytes and returns the
// function that stops it (and waits for it).
func followOffHeap(st *store.Store, durable bool) (stop func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTicker(offHeapPoll)
		defer t.Stop()
		set := debug.SetMemoryLimit(-1)
		for {
			select {
			case <-done:
				return
			case <-t.C:
			}
			want := heapLimit(softMemoryLimit(st.MemoryLimit(), durable), st.OffHeap())
			if d := want - set; d >= offHeapStep || d <= -offHeapStep {
				debug.SetMemoryLimit(want)
				set = want
			}
		}
	})
	return func() {
		close(done)
		wg.Wait()
	}
}

// heapLimit is the soft limit lim less what the store maps outside the
// heap, never below a quarter of lim (mapped bytes are charged to -m, so
// they stay well under lim; the floor only keeps a transient peak from
// driving the collector to run without pause). No soft limit
// (math.MaxInt64) stays none.
func heapLimit(lim, mapped int64) int64 {
	if lim == math.MaxInt64 {
		return lim
	}
	return max(lim-mapped, lim/4)
}

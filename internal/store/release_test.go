package store

import (
	"strconv"
	"sync/atomic"
	"testing"
	"time"
)

// TestFlushReleasesMemory: a FlushAll that drops releaseAfterFlush bytes
// or more hands the freed memory back to the system (debug.FreeOSMemory,
// in the background); a small one does not.
func TestFlushReleasesMemory(t *testing.T) {
	var calls atomic.Int32
	s := newTestStore(t, Config{MemoryLimit: 1 << 30})
	s.freeOS = func() { calls.Add(1) }
	value := make([]byte, 1000)
	put := func(n int) {
		for i := range n {
			if _, err := s.Store(ModeSet, []byte("k"+strconv.Itoa(i)), value, 0, 0, 0); err != nil {
				t.Fatal(err)
			}
		}
	}
	put(1000) // about 1 MB
	s.FlushAll(0)
	time.Sleep(50 * time.Millisecond)
	if n := calls.Load(); n != 0 {
		t.Fatalf("a flush of 1 MB released memory %d times", n)
	}
	put(releaseAfterFlush/1000 + 1000) // past the threshold
	s.FlushAll(0)
	for deadline := time.Now().Add(30 * time.Second); calls.Load() == 0; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("a flush of 64 MB did not release memory")
		}
	}
}

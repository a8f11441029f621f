//go:build invariants

package store

import (
	"fmt"
	"sync/atomic"
)

// invariantsOn tells whether the store checks itself as it runs: this
// build was made with -tags invariants.
const invariantsOn = true

// defaultOffHeapMin: from one page, so that the whole test suite runs over
// mapped tables, whose freed memory internal/offheap makes inaccessible in
// this build: a use after free faults.
const defaultOffHeapMin = 4 << 10

// checkBudget bounds the average work of the check per operation, in
// index slots plus 32-byte units of segment memory. A shard within it is
// checked after every operation; a larger one after about one operation
// in cost/checkBudget (picked by a process-wide counter), so a test that
// fills a store with a million items still runs in seconds. A broken
// invariant stays broken until a check sees it; a large shard's check may
// only name a later operation than the one that broke it.
const checkBudget = 256

var checkTicks atomic.Uint64

// assertShardLocked runs the deep check (verifyShardLocked) on sh, which
// the caller holds locked and has just changed, and panics naming op and
// the broken invariant. It checks one shard, not the global counters,
// which other shards' writers change concurrently.
func (s *Store) assertShardLocked(sh *shard, op string) {
	if n := (uint64(len(sh.index.slots)) + uint64(sh.segBytes)>>5) / checkBudget; n > 1 && checkTicks.Add(1)%n != 0 {
		return
	}
	i := 0
	for i < len(s.shards) && &s.shards[i] != sh {
		i++
	}
	if _, _, err := s.verifyShardLocked(i, sh); err != nil {
		panic(fmt.Sprintf("store: invariant broken (%s): %v", op, err))
	}
}

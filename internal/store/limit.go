package store

import "math"

// Run-time changes to the memory budget and the eviction policy (Redis's
// CONFIG SET maxmemory and maxmemory-policy). Both are atomics that every
// write reads anyway, so changing them costs the hot path nothing.

// SetMemoryLimit changes the bytes the items may take; n <= 0 lifts the
// limit (Redis's maxmemory 0): nothing is evicted for size any more, and
// memory is bounded by the machine. Lowering it below what is stored
// removes items down to the new limit before it returns:
// each shard gives up its share of the excess, expired and flushed items
// first, then, unless NoEvict is set, live ones in eviction order, so the
// cut falls evenly and no shard is emptied for the rest. With NoEvict the
// store stays over the limit and writes that need memory are refused
// (Full) until deletes, expiry or a higher limit make room, as Redis's
// noeviction does.
func (s *Store) SetMemoryLimit(n int64) {
	if n <= 0 {
		n = noLimit
	}
	s.limit.Store(n)
	used := s.used.Load()
	if used <= n {
		return
	}
	clk := s.clock()
	fence := s.fence.Load()
	for i := range s.shards {
		sh := &s.shards[i]
		s.lock(sh)
		target := int64(float64(sh.bytes) * float64(n) / float64(used))
		if over := sh.bytes - target; over > 0 {
			s.reclaimLocked(sh, &clk, fence, math.MaxInt, over)
			for !s.noEvict.Load() && sh.bytes > target && s.evictOneLocked(sh, &clk, nil) > 0 {
			}
			sh.compactLocked()
		}
		s.assertShardLocked(sh, "SetMemoryLimit")
		s.unlock(sh)
	}
	// Writers that ran meanwhile, and rounding, may leave a little over.
	for stalls := 0; stalls <= len(s.shards); {
		used := s.used.Load()
		over := used - s.limit.Load()
		if over <= 0 || !s.makeRoom(nil, over) {
			return
		}
		if s.used.Load() >= used {
			stalls++
		}
	}
}

// noLimit is the limit while there is none: every comparison with used
// bytes then passes, and used+n cannot overflow it.
const noLimit = math.MaxInt64

// MemoryLimit is the bytes the items may take, or 0 for no limit.
func (s *Store) MemoryLimit() int64 { return reportedLimit(s.limit.Load()) }

// reportedLimit is limit as callers see it: 0 for noLimit, as Redis's
// maxmemory.
func reportedLimit(limit int64) int64 {
	if limit == noLimit {
		return 0
	}
	return limit
}

// SetNoEvict turns the eviction of live items off (on) or on again
// (off): Config.NoEvict at run time.
func (s *Store) SetNoEvict(on bool) { s.noEvict.Store(on) }

// NoEvict reports whether live items are kept when memory is full.
func (s *Store) NoEvict() bool { return s.noEvict.Load() }

package store

import (
	"math"
	"time"
)

// Memory accounting and eviction.
//
// The budget is global: one atomic counter, s.used, holds the bytes charged
// to stored items, and a write reserves the growth it causes with a
// compare-and-swap that fails instead of passing MemoryLimit. The
// reservation is taken while the writer holds its shard lock and before it
// touches anything, so concurrent writers cannot overshoot, and a writer
// that cannot get room leaves its shard exactly as it found it.
//
// When the reservation fails, room is made in this order:
//
//  1. dead (expired or flushed) items of the writer's own shard;
//  2. dead items of other shards, found without taking their locks through
//     the earliest deadline and the swept flush fence each shard publishes
//     (before a live item of its own shard is evicted, a writer looks only
//     for expired items elsewhere, and trusts a scan that found none for
//     expiryScanWindow);
//  3. the least recently used live items of the writer's own shard;
//  4. the least recently used live items of other shards.
//
// Steps 2 and 4 happen after the writer has released its own lock: it
// locks one other shard at a time, frees what it needs there, and then
// starts its operation again from the lookup, because anything may have
// changed in between. The item a write replaces is never evicted to make
// room for its own replacement. With NoEvict, steps 3 and 4 are skipped.

// dropReason says why an item leaves the store, for the counters.
type dropReason uint8

const (
	dropDeleted dropReason = iota // deleted, or overwritten by an already-expired value
	dropExpired                   // reclaimed after its deadline
	dropFlushed                   // reclaimed after a FlushAll
	dropEvicted                   // live, removed to make room
)

// maxRoomAttempts bounds how often one write releases its lock to make room
// in other shards before it gives up with ErrNoMemory. Each attempt frees
// memory; only writers racing for the same freed bytes need more than two.
const maxRoomAttempts = 16

// dropLocked removes it from sh and from the global count.
func (s *Store) dropLocked(sh *shard, it *item, why dropReason) {
	sh.removeLocked(it)
	s.used.Add(-it.cost())
	switch why {
	case dropExpired:
		sh.reclaimed++
		if !it.fetched {
			sh.expiredUnfetched++
		}
	case dropFlushed:
		sh.reclaimed++
	case dropEvicted:
		sh.evictions++
		if !it.fetched {
			sh.evictedUnfetched++
		}
	}
}

// dropDeadLocked removes an item already known not to be live.
func (s *Store) dropDeadLocked(sh *shard, it *item, state liveness) {
	if state == flushed {
		s.dropLocked(sh, it, dropFlushed)
	} else {
		s.dropLocked(sh, it, dropExpired)
	}
}

// tryReserve charges n bytes to the budget if they fit.
func (s *Store) tryReserve(n int64) bool {
	for {
		used := s.used.Load()
		if used+n > s.limit {
			return false
		}
		if s.used.CompareAndSwap(used, used+n) {
			return true
		}
	}
}

// reserveLocked charges need bytes, making room in sh if it has to. It
// returns 0 on success, or the number of bytes still missing when room must
// be made in other shards first (the caller releases sh.mu, calls makeRoom
// and starts over). keep, the item being replaced, is never removed.
func (s *Store) reserveLocked(sh *shard, clk *clock, need int64, keep *item) (deficit int64) {
	for {
		if s.tryReserve(need) {
			return 0
		}
		if s.reclaimOneLocked(sh, clk, keep) > 0 {
			continue
		}
		if s.expiredElsewhere(sh, clk) {
			break // expired items anywhere go before live ones here
		}
		if !s.noEvict && s.evictOneLocked(sh, clk, keep) > 0 {
			continue
		}
		break
	}
	return max(need-(s.limit-s.used.Load()), 1)
}

// reclaimOneLocked removes one dead item of sh, the expired item with the
// earliest deadline or a flushed item at the LRU tail, and returns its
// cost, or 0 if there is none. It never scans.
func (s *Store) reclaimOneLocked(sh *shard, clk *clock, keep *item) int64 {
	if it := sh.heapTopLocked(); it != nil {
		if it != keep && it.deadline <= clk.now() {
			s.dropDeadLocked(sh, it, s.stateOf(it, clk))
			return it.cost()
		}
	}
	if it := sh.tailLocked(); it != nil && it != keep && it.cas <= s.fence.Load() {
		s.dropLocked(sh, it, dropFlushed)
		return it.cost()
	}
	return 0
}

// evictOneLocked removes the least recently used item of sh other than
// keep and returns its cost, or 0 if there is none.
func (s *Store) evictOneLocked(sh *shard, clk *clock, keep *item) int64 {
	it := sh.tailLocked()
	if it != nil && it == keep {
		it = sh.prevLocked(it)
	}
	if it == nil {
		return 0
	}
	if state := s.stateOf(it, clk); state != live {
		s.dropDeadLocked(sh, it, state)
	} else {
		s.dropLocked(sh, it, dropEvicted)
	}
	return it.cost()
}

// expiryScanWindow is how long a scan of the shards that found no expired
// item is trusted. Peeking at every shard costs one atomic load each, which
// adds up on a store with hundreds of shards where every write evicts; the
// window makes it at most one scan per millisecond. The price is that an
// item may expire up to a millisecond before pressure prefers it to a live
// one, well within what the sweeper's own period already allows.
const expiryScanWindow = int64(time.Millisecond)

// expiredElsewhere reports whether a shard other than sh holds an expired
// item, by peeking at the earliest deadline each shard publishes.
func (s *Store) expiredElsewhere(sh *shard, clk *clock) bool {
	now := clk.now()
	if now < s.noExpiryUntil.Load() {
		return false
	}
	next := now + expiryScanWindow
	for i := range s.shards {
		o := &s.shards[i]
		d := o.nextExpiry.Load()
		if d <= now && o != sh {
			return true
		}
		next = min(next, d)
	}
	s.noExpiryUntil.Store(next)
	return false
}

// makeRoom frees about deficit bytes in shards other than sh, holding one
// shard lock at a time (the caller holds none). Dead items anywhere go
// first; live items are evicted only if no dead item was found. It reports
// whether it freed anything, that is whether a retry can succeed.
func (s *Store) makeRoom(sh *shard, deficit int64) bool {
	var clk clock
	n := len(s.shards)
	start := int(s.victim.Add(1)) // spread eviction pressure over the shards
	fence := s.fence.Load()
	var freed int64
	for i := 0; i < n && freed < deficit; i++ {
		o := &s.shards[(start+i)&(n-1)]
		if o == sh || !o.mayHoldDead(clk.now(), fence) {
			continue
		}
		o.mu.Lock()
		_, f := s.reclaimLocked(o, &clk, fence, math.MaxInt, deficit-freed)
		o.mu.Unlock()
		freed += f
	}
	if freed > 0 || s.noEvict {
		return freed > 0
	}
	for i := 0; i < n && freed < deficit; i++ {
		o := &s.shards[(start+i)&(n-1)]
		if o == sh {
			continue
		}
		o.mu.Lock()
		for freed < deficit {
			c := s.evictOneLocked(o, &clk, nil)
			if c == 0 {
				break
			}
			freed += c
		}
		o.mu.Unlock()
	}
	return freed > 0
}

// mayHoldDead tells, without the lock, whether sh may hold an expired item
// or a flushed one not yet swept.
func (sh *shard) mayHoldDead(now int64, fence uint64) bool {
	return sh.nextExpiry.Load() <= now || sh.sweptFence.Load() < fence
}

// reclaimLocked removes dead items from sh until it has removed maxItems or
// freed maxBytes, and returns how many items and bytes it removed. When it
// runs out of dead items it notes that sh holds no flushed item below
// fence, so later passes can skip the shard.
func (s *Store) reclaimLocked(sh *shard, clk *clock, fence uint64, maxItems int, maxBytes int64) (n int, freed int64) {
	for n < maxItems && freed < maxBytes {
		c := s.reclaimOneLocked(sh, clk, nil)
		if c == 0 {
			if sh.sweptFence.Load() < fence {
				sh.sweptFence.Store(fence)
			}
			break
		}
		n++
		freed += c
	}
	return n, freed
}

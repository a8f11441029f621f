package store

import (
	"encoding/binary"
	"math"
)

// Memory accounting and eviction.
//
// The budget is global: one atomic counter, s.used, holds the bytes charged
// to stored items, and a write reserves the growth it causes with a
// compare-and-swap that fails instead of passing MemoryLimit. The
// reservation is taken while the writer holds its shard lock and before it
// touches anything, so concurrent writers cannot overshoot, and a writer
// that cannot get room leaves its items exactly as it found them.
//
// When the reservation fails, room is made in this order:
//
//  1. dead (expired or flushed) items of the writer's own shard;
//  2. dead items of other shards, found without taking their locks through
//     the earliest deadline and the swept flush fence each shard publishes
//     (before a live item of its own shard is evicted, a writer looks only
//     for expired items elsewhere, and trusts a scan that found none for
//     expiryScanWindow);
//  3. live items of the writer's own shard, chosen by the eviction walk;
//  4. live items of other shards, the same way.
//
// Steps 2 and 4 happen after the writer has released its own lock: it
// locks one other shard at a time, frees what it needs there, and then
// starts its operation again from the lookup, because anything may have
// changed in between. The item a write replaces is never evicted to make
// room for its own replacement. With NoEvict, steps 3 and 4 are skipped.
//
// # The eviction walk
//
// Live items are chosen by a second-chance ("CLOCK") walk over the records
// in the order they were written, with a two-bit access count per record
// instead of one bit: every use (get, gat, touch, a successful write or
// incr) raises the count, up to 3. The walk starts at the first record of
// the oldest segment not yet walked. A dead record is skipped; a dead
// (expired or flushed) item is reclaimed; a live record whose count is 0 is
// evicted; one whose count is above 0 has it lowered by one and is copied
// forward to the open segment, where the walk will meet it again after
// every other record. Once the walk has passed the last record of a
// segment, that segment holds nothing live and is dropped.
//
// So an item written and never used again is evicted on the first pass
// (memcached's segmented LRU and S3-FIFO get the same effect with a small
// probationary queue), and an item used often survives up to three more
// passes without a use. On a skewed (zipf) workload that keeps more of the
// hot set than an exact LRU of the same size, which spends room on items
// used once (BenchmarkHitRatio, docs/performance.md). It needs no links:
// the per-item cost of recency is two bits of the header, where an exact
// LRU took 8 B of links in every item.
//
// Recency is still per shard, as before: a walk evicts the shard's
// candidate, not the store's.
//
// In LFU mode (lfu.go) the walk judges a record by its decayed LFU
// counter instead of the two-bit count: at or below LFU_INIT_VAL (5, a
// new item never used since, or one whose uses have decayed away) it is
// evicted; above it, it is copied forward with the counter's distance
// above 5 halved and its decrement time set to now. An item used often
// (counter 255) so survives about eight passes without a use, one used
// once one pass. Redis instead samples maxmemory-samples keys into an
// eviction pool and evicts the lowest counter; the walk is the CLOCK
// approximation of that, with the same per-item state.

// dropReason says why an item leaves the store, for the counters.
type dropReason uint8

const (
	dropDeleted   dropReason = iota // deleted, or overwritten by an already-expired value
	dropExpired                     // reclaimed after its deadline
	dropFlushed                     // reclaimed after a FlushAll
	dropEvicted                     // live, removed to make room
	dropForgotten                   // durable mode: its change was lost, the disk's record stands (diskfail.go)
)

// maxRoomAttempts bounds how often one write releases its lock to make room
// in other shards before it gives up with ErrNoMemory. Each attempt frees
// memory; only writers racing for the same freed bytes need more than two.
const maxRoomAttempts = 16

// maxMoves bounds the records one eviction copies forward before it evicts
// the next live record whatever its access count, so a shard full of hot
// items does not make one write copy it all.
const maxMoves = 128

// dropLocked removes e from sh and from the global count, and returns
// what it was charged.
func (s *Store) dropLocked(sh *shard, e *entry, why dropReason) int64 {
	if why == dropDeleted {
		s.unpersist(sh.key(e))
	}
	var key []byte
	if why == dropExpired || why == dropEvicted && s.disk == nil {
		key = sh.key(e) // the record's bytes outlive its removal
	}
	c := sh.removeLocked(e)
	s.used.Add(-c)
	switch why {
	case dropExpired:
		sh.reclaimed++
		if !e.fetched() {
			sh.expiredUnfetched++
		}
		s.notifyLocked(key, EventExpired)
		s.feedDelete(key)
	case dropFlushed:
		sh.reclaimed++
	case dropEvicted:
		sh.evictions++
		if !e.fetched() {
			sh.evictedUnfetched++
		}
		if s.disk == nil { // a durable store still holds the key on disk
			s.notifyLocked(key, EventEvicted)
			s.feedDelete(key)
		}
	}
	return c
}

// dropDeadLocked removes an item already known not to be live, and
// returns what it was charged.
func (s *Store) dropDeadLocked(sh *shard, e *entry, state liveness) int64 {
	if state == flushed {
		return s.dropLocked(sh, e, dropFlushed)
	}
	return s.dropLocked(sh, e, dropExpired)
}

// tryReserve charges n bytes to the budget if they fit.
func (s *Store) tryReserve(n int64) bool {
	for {
		used := s.used.Load()
		if used+n > s.limit.Load() {
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
// and starts over). keep, the item being replaced, is never removed; the
// eviction walk may move it, and then updates it.
func (s *Store) reserveLocked(sh *shard, clk *clock, need int64, keep *entry) (deficit int64) {
	for {
		if s.tryReserve(need) {
			return 0
		}
		if s.reclaimOneLocked(sh, clk) > 0 {
			continue
		}
		if s.expiredElsewhere(sh, clk) {
			break // expired items anywhere go before live ones here
		}
		if !s.noEvict.Load() && s.evictOneLocked(sh, clk, keep) > 0 {
			continue
		}
		break
	}
	if s.overdraw && s.noEvict.Load() {
		s.used.Add(need) // AllowOOM: past the limit, as Redis's allow-oom script
		return 0
	}
	return max(need-(s.limit.Load()-s.used.Load()), 1)
}

// reclaimOneLocked removes one dead item of sh and returns its cost, or 0
// if it finds none. It walks only segments whose summary says they may
// hold one, and skips the shard at once when its published summary says
// none can.
func (s *Store) reclaimOneLocked(sh *shard, clk *clock) int64 {
	fence := s.fence.Load()
	if sh.sweptFence.Load() >= fence {
		if next := sh.nextExpiry.Load(); next == math.MaxInt64 || next > clk.now() {
			return 0
		}
	}
	_, freed := s.reclaimLocked(sh, clk, fence, 1, math.MaxInt64)
	return freed
}

// evictOneLocked runs the eviction walk of sh until it has removed one
// item other than keep, and returns its cost, or 0 if sh holds none.
func (s *Store) evictOneLocked(sh *shard, clk *clock, keep *entry) int64 {
	if sh.walking {
		return 0 // a Tx holds the shard: its records must stay put
	}
	others := sh.len()
	if keep != nil {
		others--
	}
	if others <= 0 {
		return 0
	}
	sh.walking = true
	defer func() { sh.walking = false }()
	lfu := s.lfu.Load()
	var sec uint32
	if lfu {
		sec = s.nowSec(clk)
	}
	var e entry
	for moved := 0; ; {
		seg := sh.oldest
		if seg == noSeg {
			panic("store: eviction walk found no segment")
		}
		if seg == sh.active {
			// Copies must go behind the walk, to a new segment.
			sh.sealActiveLocked()
			continue
		}
		sg := &sh.segs[seg]
		if sg.hand >= sg.used {
			sh.releaseSegmentLocked(seg) // everything in it is dead or moved
			continue
		}
		decodeHeader(sg, sg.hand, &e)
		e.seg = seg
		sg.hand += e.size()
		if e.info&infoDead != 0 {
			continue
		}
		e.tag = sh.tagOf(sh.key(&e))
		isKeep := keep != nil && keep.seg == e.seg && keep.off == e.off
		if !isKeep {
			if state := s.stateOf(&e, clk); state != live {
				return s.dropDeadLocked(sh, &e, state)
			}
			if lfu {
				c := s.lfuDecayed(e.atime, sec)
				if c <= lfuInitVal || moved >= maxMoves {
					return s.dropLocked(sh, &e, dropEvicted)
				}
				e.atime = lfuWord(lfuMinutes(sec), lfuAged(c))
			} else {
				f := e.freq()
				if f == 0 || moved >= maxMoves {
					return s.dropLocked(sh, &e, dropEvicted)
				}
				e.setFreq(f - 1)
			}
			moved++
		}
		if sg.big {
			// A segment of one record goes to the back of the list
			// instead of being copied.
			sg.buf[0] = e.info
			binary.LittleEndian.PutUint32(sg.buf[atimeAt(e.info):], e.atime)
			sg.hand = 0
			sh.unlinkLocked(seg)
			sh.linkNewestLocked(seg)
		} else {
			sh.moveLocked(&e)
		}
		if isKeep {
			*keep = e
		}
	}
}

// expiryScanWindow is how long a scan of the shards that found no expired
// item is trusted. Peeking at every shard costs one atomic load each, which
// adds up on a store with hundreds of shards where every write evicts; the
// window makes it at most one scan per millisecond. The price is that an
// item may expire up to a millisecond before pressure prefers it to a live
// one, well within what the sweeper's own period already allows.
const expiryScanWindow = 1 // ms, the deadlines' unit

// expiredElsewhere reports whether a shard other than sh may hold an
// expired item, by peeking at the lower bound of the deadlines each shard
// publishes.
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

// withRoom runs op with sh locked, on a fresh clock that has polled a due
// delayed flush. op returns the bytes its write lacked (0 when it finished,
// successfully or not); then withRoom unlocks, makes that room in other
// shards and runs op again from the start, up to maxRoomAttempts times. It
// reports false when room could not be made; op's runs that lacked room
// changed nothing. The caller owns clk, which op also uses, so that neither
// escapes to the heap (a clock passed to op as an argument did).
func (s *Store) withRoom(sh *shard, clk *clock, op func() (deficit int64)) bool {
	for attempt := 0; ; attempt++ {
		*clk = s.clock()
		s.pollFlush(clk)
		s.lock(sh)
		deficit := op()
		s.assertShardLocked(sh, "write")
		s.unlock(sh)
		if deficit == 0 {
			return true
		}
		if attempt == maxRoomAttempts || !s.makeRoom(sh, deficit) {
			return false
		}
	}
}

// makeRoom frees about deficit bytes in shards other than sh, holding one
// shard lock at a time (the caller holds none). Dead items anywhere go
// first; live items are evicted only if no dead item was found. It reports
// whether a retry can succeed: it freed something, or it found that a
// shard's published summary promised dead items it no longer holds (the
// walk has corrected it, and the retry will evict in the writer's own
// shard first).
func (s *Store) makeRoom(sh *shard, deficit int64) bool {
	clk := s.clock()
	n := len(s.shards)
	start := int(s.victim.Add(1)) // spread eviction pressure over the shards
	fence := s.fence.Load()
	var freed int64
	corrected := false
	for i := 0; i < n && freed < deficit; i++ {
		o := &s.shards[(start+i)&(n-1)]
		if o == sh || !o.mayHoldDead(clk.now(), fence) {
			continue
		}
		s.lock(o)
		_, f := s.reclaimLocked(o, &clk, fence, math.MaxInt, deficit-freed)
		o.compactLocked()
		s.assertShardLocked(o, "makeRoom")
		corrected = corrected || f == 0 && !o.mayHoldDead(clk.now(), fence)
		s.unlock(o)
		freed += f
	}
	if freed > 0 || s.noEvict.Load() {
		return freed > 0
	}
	if corrected {
		return true
	}
	for i := 0; i < n && freed < deficit; i++ {
		o := &s.shards[(start+i)&(n-1)]
		if o == sh {
			continue
		}
		s.lock(o)
		for freed < deficit {
			c := s.evictOneLocked(o, &clk, nil)
			if c == 0 {
				break
			}
			freed += c
		}
		o.compactLocked()
		s.assertShardLocked(o, "makeRoom")
		s.unlock(o)
	}
	return freed > 0
}

// mayHoldDead tells, without the lock, whether sh may hold an expired item
// or a flushed one not yet swept.
func (sh *shard) mayHoldDead(now int64, fence uint64) bool {
	return sh.nextExpiry.Load() <= now || sh.sweptFence.Load() < fence
}

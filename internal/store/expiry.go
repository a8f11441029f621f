package store

import (
	"math"
	"time"
)

// maxRelativeExptime is memcached's cut-off between relative and absolute
// exptimes: 30 days in seconds. memcached's protocol has no separate field
// for "absolute", so it guesses: nobody sets a TTL of more than a month,
// and no useful absolute time is within a month of 1970.
const maxRelativeExptime = 30 * 24 * 60 * 60

// sweepBatch bounds the items the sweeper removes from one shard per tick,
// which bounds how long it holds that shard's lock.
const sweepBatch = 256

// Deadline converts a memcached exptime into a deadline in Unix
// nanoseconds, the form every Store method takes:
//
//	exptime == 0                   0 (never expires)
//	exptime < 0                    1 (already expired)
//	1 <= exptime <= 2592000        now + exptime seconds
//	exptime > 2592000              exptime as absolute Unix seconds
//
// An absolute time in the past yields a deadline that has already passed.
// Times beyond 2262 (the end of int64 nanoseconds) saturate.
func Deadline(exptime int64, now time.Time) int64 {
	switch {
	case exptime == 0:
		return 0
	case exptime < 0:
		return 1
	case exptime <= maxRelativeExptime:
		return now.UnixNano() + exptime*int64(time.Second)
	case exptime > math.MaxInt64/int64(time.Second):
		return math.MaxInt64
	default:
		return exptime * int64(time.Second)
	}
}

// clock reads time.Now at most once per operation, and only if the
// operation needs it: a Get of an item without a deadline never does.
type clock struct{ ns int64 }

func (c *clock) now() int64 {
	if c.ns == 0 {
		c.ns = time.Now().UnixNano()
	}
	return c.ns
}

// nowSec is the time in Unix seconds for last-access stamps and for the
// idle time computed from them: the sweeper's coarse clock (at most one tick
// behind), or time.Now when the sweeper is off. Stamps and readings always
// come from the same source, so an item touched a moment ago reads as idle
// for 0 s.
func (s *Store) nowSec(clk *clock) uint32 {
	if v := s.secs.Load(); v != 0 {
		return v
	}
	return uint32(clk.now() / int64(time.Second))
}

// liveness tells whether an item found in a map may still be seen.
type liveness uint8

const (
	live liveness = iota
	expired
	flushed
)

// stateOf classifies it. An item is flushed when its CAS is at or below the
// flush fence: CAS tokens are handed out in store order, so the fence (the
// counter's value at the moment a flush takes effect) splits the items
// stored before the flush from those stored after it without a per-item
// timestamp.
func (s *Store) stateOf(it *item, clk *clock) liveness {
	if it.cas <= s.fence.Load() {
		return flushed
	}
	if it.deadline != 0 && it.deadline <= clk.now() {
		return expired
	}
	return live
}

// FlushAll invalidates every item stored at or before at (Unix ns).
//
// If at is not in the future, every item is dropped now: the flush fence
// is raised so that nothing stored before the call is visible from here
// on, then each shard's map is swapped for an empty one, one shard lock at
// a time, and the memory is released.
//
// Otherwise the flush is armed: the first operation (or sweeper tick) at or
// after at raises the fence to the current CAS counter, which hides every
// item stored before that moment and none stored after it. The hidden items
// are reclaimed lazily, by the sweeper, or under memory pressure. A later
// FlushAll replaces an armed one, as in memcached.
func (s *Store) FlushAll(at int64) {
	s.flushes.Add(1)
	if at > time.Now().UnixNano() {
		s.flushMu.Lock()
		s.flushAt.Store(at)
		s.flushMu.Unlock()
		return
	}
	s.flushMu.Lock()
	s.flushAt.Store(0)
	fence := s.raiseFenceLocked()
	s.flushMu.Unlock()
	for i := range s.shards {
		sh := &s.shards[i]
		sh.mu.Lock()
		n, bytes := sh.clearLocked()
		s.used.Add(-bytes)
		sh.reclaimed += uint64(n)
		if sh.sweptFence.Load() < fence {
			sh.sweptFence.Store(fence)
		}
		sh.mu.Unlock()
	}
}

// pollFlush makes an armed FlushAll take effect once its time has come.
// Every operation calls it before it looks at an item or takes a CAS, so
// no write after the flush time can get a token below the fence. It costs
// one atomic load when no flush is armed.
//
// Items stored at the flush time itself are flushed too ("at or before"):
// while the clock reads exactly at, every operation raises the fence again;
// the flush is disarmed only once the clock has moved past at.
func (s *Store) pollFlush(clk *clock) {
	if at := s.flushAt.Load(); at == 0 || clk.now() < at {
		return
	}
	s.flushMu.Lock()
	if at := s.flushAt.Load(); at != 0 && clk.now() >= at {
		s.raiseFenceLocked()
		if clk.now() > at {
			s.flushAt.Store(0) // after the fence: whoever sees 0 sees the fence
		}
	}
	s.flushMu.Unlock()
}

// raiseFenceLocked hides every item stored so far. s.flushMu must be held.
func (s *Store) raiseFenceLocked() uint64 {
	fence := s.cas.Load()
	if fence > s.fence.Load() {
		s.fence.Store(fence)
	}
	return s.fence.Load()
}

// sweepLoop is the active half of expiry: every interval it reclaims a
// bounded batch of expired and flushed items from each shard. It runs
// until Close.
func (s *Store) sweepLoop(interval time.Duration) {
	defer s.wg.Done()
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-s.quit:
			return
		case <-t.C:
			s.sweep()
		}
	}
}

// sweep runs one tick. It takes one shard lock at a time, skips shards
// whose earliest deadline is still ahead and which have no flushed items
// left, and removes at most sweepBatch items per shard: expired items come
// off the top of the shard's deadline heap and flushed items off the tail
// of its LRU list, where they gather because nothing can refresh them, so
// it never scans live items.
func (s *Store) sweep() {
	var clk clock
	s.pollFlush(&clk)
	now := clk.now()
	s.secs.Store(uint32(now / int64(time.Second)))
	fence := s.fence.Load()
	for i := range s.shards {
		sh := &s.shards[i]
		if !sh.mayHoldDead(now, fence) {
			continue
		}
		sh.mu.Lock()
		s.reclaimLocked(sh, &clk, fence, sweepBatch, math.MaxInt64)
		sh.mu.Unlock()
	}
}

// The expiry heap: a binary min-heap on deadline over the shard's items
// that have one, each item knowing its index. The earliest deadline is
// found in O(1) and removed in O(log n), so neither the sweeper nor a
// writer under memory pressure ever scans for expired items.

func (sh *shard) heapPushLocked(it *item) {
	it.heapIdx = int32(len(sh.expiry))
	sh.expiry = append(sh.expiry, it.self)
	sh.heapUpLocked(len(sh.expiry) - 1)
	sh.noteNextExpiryLocked()
}

// heapRemoveLocked removes the item at index i of the heap.
func (sh *shard) heapRemoveLocked(i int) {
	h := sh.expiry
	last := len(h) - 1
	it := sh.at(h[i])
	if i != last {
		sh.heapSwapLocked(i, last)
	}
	sh.expiry = h[:last]
	if i != last && !sh.heapDownLocked(i) {
		sh.heapUpLocked(i)
	}
	it.heapIdx = -1
	sh.noteNextExpiryLocked()
}

// heapFixLocked restores the heap order after the deadline at index i changed.
func (sh *shard) heapFixLocked(i int) {
	if !sh.heapDownLocked(i) {
		sh.heapUpLocked(i)
	}
	sh.noteNextExpiryLocked()
}

// heapTopLocked is the item with the earliest deadline, or nil.
func (sh *shard) heapTopLocked() *item {
	if len(sh.expiry) == 0 {
		return nil
	}
	return sh.at(sh.expiry[0])
}

func (sh *shard) heapDeadline(i int) int64 {
	return sh.at(sh.expiry[i]).deadline
}

func (sh *shard) heapSwapLocked(i, j int) {
	h := sh.expiry
	h[i], h[j] = h[j], h[i]
	sh.at(h[i]).heapIdx = int32(i)
	sh.at(h[j]).heapIdx = int32(j)
}

func (sh *shard) heapUpLocked(i int) {
	for i > 0 {
		parent := (i - 1) / 2
		if sh.heapDeadline(parent) <= sh.heapDeadline(i) {
			return
		}
		sh.heapSwapLocked(i, parent)
		i = parent
	}
}

// heapDownLocked sifts index i down and reports whether it moved.
func (sh *shard) heapDownLocked(i int) bool {
	n := len(sh.expiry)
	start := i
	for {
		child := 2*i + 1
		if child >= n {
			break
		}
		if r := child + 1; r < n && sh.heapDeadline(r) < sh.heapDeadline(child) {
			child = r
		}
		if sh.heapDeadline(i) <= sh.heapDeadline(child) {
			break
		}
		sh.heapSwapLocked(i, child)
		i = child
	}
	return i > start
}

// noteNextExpiryLocked publishes the earliest deadline for lock-free peeks.
func (sh *shard) noteNextExpiryLocked() {
	next := int64(math.MaxInt64)
	if len(sh.expiry) > 0 {
		next = sh.heapDeadline(0)
	}
	if sh.nextExpiry.Load() != next {
		sh.nextExpiry.Store(next)
	}
}

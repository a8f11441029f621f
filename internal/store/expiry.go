package store

import (
	"math"
	"runtime/debug"
	"sync/atomic"
	"time"
)

// maxRelativeExptime is memcached's cut-off between relative and absolute
// exptimes: 30 days in seconds. memcached's protocol has no separate field
// for "absolute", so it guesses: nobody sets a TTL of more than a month,
// and no useful absolute time is within a month of 1970.
const maxRelativeExptime = 30 * 24 * 60 * 60

// sweepBatch bounds the items the sweeper removes from one shard per tick,
// and reclaimVisits the records one reclaim walk reads, which together
// bound how long it holds that shard's lock.
const (
	sweepBatch    = 256
	reclaimVisits = 16 * sweepBatch
)

// Deadline converts a memcached exptime into a deadline in Unix
// milliseconds, the form every Store method takes:
//
//	exptime == 0                   0 (never expires)
//	exptime < 0                    1 (already expired)
//	1 <= exptime <= 2592000        now + exptime seconds
//	exptime > 2592000              exptime as absolute Unix seconds
//
// An absolute time in the past yields a deadline that has already passed.
// Milliseconds are Redis's unit for expiries: an int64 of them reaches
// every deadline Redis accepts (up to PEXPIREAT 9223372036854775807),
// where nanoseconds would end in 2262. An exptime beyond that range
// (after the year 292 million) saturates.
func Deadline(exptime int64, now time.Time) int64 {
	switch {
	case exptime == 0:
		return 0
	case exptime < 0:
		return 1
	case exptime <= maxRelativeExptime:
		return now.UnixMilli() + exptime*1000
	case exptime > math.MaxInt64/1000:
		return math.MaxInt64
	default:
		return exptime * 1000
	}
}

// clock reads time.Now at most once per operation, and only if the
// operation needs it: a Get of an item without a deadline never does.
type clock struct{ ms int64 }

// now is the operation's time in Unix milliseconds, the deadlines' unit.
func (c *clock) now() int64 {
	if c.ms == 0 {
		c.ms = time.Now().UnixMilli()
	}
	return c.ms
}

// clock is a new operation's clock: frozen at the start of the Exclusive
// section when s is its view, else read when first needed.
func (s *Store) clock() clock { return clock{ms: s.frozen} }

// Now is the time (Unix ms) s's operations judge deadlines by: in the
// view Exclusive hands out, the moment the section began (a script's or
// EXEC's commands see one instant, as in Redis); elsewhere the clock.
func (s *Store) Now() int64 {
	if s.frozen != 0 {
		return s.frozen
	}
	return time.Now().UnixMilli()
}

// FrozenMicros is the instant (Unix µs) an Exclusive view stands still
// at, what TIME answers in a script or EXEC as in Redis 7.2; zero
// elsewhere.
func (s *Store) FrozenMicros() int64 { return s.frozenUs }

// nowSec is the time in Unix seconds for last-access stamps and for the
// idle time computed from them: the sweeper's coarse clock (at most one tick
// behind), or time.Now when the sweeper is off. Stamps and readings always
// come from the same source, so an item touched a moment ago reads as idle
// for 0 s.
func (s *Store) nowSec(clk *clock) uint32 {
	if v := s.secs.Load(); v != 0 {
		return v
	}
	return uint32(clk.now() / 1000)
}

// liveness tells whether an item found in the index may still be seen.
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
func (s *Store) stateOf(e *entry, clk *clock) liveness {
	if e.cas <= s.fence.Load() {
		return flushed
	}
	if e.deadline != 0 && e.deadline <= clk.now() {
		return expired
	}
	return live
}

// FlushAll invalidates every item stored at or before at (Unix ms).
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
	if at > time.Now().UnixMilli() {
		s.flushMu.Lock()
		s.flushAt.Store(at)
		s.saveState()
		s.flushMu.Unlock()
		return
	}
	// One instant: every shard held while the fence rises and the shards
	// are cleared, so no write lands between the two (a write to a shard
	// not yet cleared would be lost here but reach replicas after the
	// FLUSHALL), and a full resync's snapshot sees the flush whole or not
	// at all. Shards before flushMu, as inside Exclusive.
	for i := range s.shards {
		s.lock(&s.shards[i])
	}
	s.flushMu.Lock()
	s.flushAt.Store(0)
	fence := s.raiseFenceLocked()
	s.saveState()
	s.flushMu.Unlock()
	for i := range s.shards {
		sh := &s.shards[i]
		n, bytes := sh.clearLocked() // its segments' drop may release memory (segTotal)
		s.used.Add(-bytes)
		sh.reclaimed += uint64(n)
		if sh.sweptFence.Load() < fence {
			sh.sweptFence.Store(fence)
		}
		s.assertShardLocked(sh, "FlushAll")
	}
	for i := len(s.shards) - 1; i >= 0; i-- {
		s.unlock(&s.shards[i])
	}
}

// releaseAfterShrink is how far the segments must shrink below their
// high-water mark for the memory to go back to the system at once
// (releaseMemory): a flush, FLUSHDB, a mass expiry or a DEL of many keys.
// Overwrites, which drop segments as fast as they fill new ones, never
// move the total that far, so a steady load does not trigger it.
const releaseAfterShrink = 64 << 20

// segTotal follows the bytes of every shard's segments and their
// high-water mark since memory was last given back.
type segTotal struct {
	bytes, peak atomic.Int64
	release     func() // called once the total fell releaseAfterShrink below the peak
}

// add records a change of n bytes (negative: segments dropped).
func (t *segTotal) add(n int64) {
	v := t.bytes.Add(n)
	if n > 0 {
		for p := t.peak.Load(); v > p && !t.peak.CompareAndSwap(p, v); p = t.peak.Load() {
		}
		return
	}
	if p := t.peak.Load(); p-v >= releaseAfterShrink && t.peak.CompareAndSwap(p, v) {
		t.release()
	}
}

// releaseMemory gives the heap's free memory back to the system, in the
// background, once at a time. Dropped segments are left to the
// collector, which runs only as the heap grows again, and the runtime
// returns freed pages to the system slowly: without this, a server
// flushed of 500 MB kept its 500 MB of RSS.
func (s *Store) releaseMemory() {
	if !s.releasing.CompareAndSwap(false, true) {
		return
	}
	release := debug.FreeOSMemory
	if s.freeOS != nil {
		release = s.freeOS // a test's
	}
	go func() {
		defer s.releasing.Store(false)
		release()
	}()
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
		s.saveState()
	}
	s.flushMu.Unlock()
}

// raiseFenceLocked hides every item stored so far. s.flushMu must be held.
func (s *Store) raiseFenceLocked() uint64 {
	fence := s.cas.Load()
	if fence > s.fence.Load() {
		s.fence.Store(fence)
	}
	if s.disk != nil {
		s.ds.flushFence.Store(s.fence.Load())
	}
	if f := s.feeder(); f != nil {
		f.Flush(s.fence.Load())
	}
	return s.fence.Load()
}

// sweepLoop is the active half of expiry: every interval it reclaims a
// bounded batch of expired and flushed items from each shard, and while
// some shard had a full batch to reclaim it goes on with more batches,
// for up to a quarter of the interval (Redis's active expiry takes up to
// 25 % of its cycle the same way): a million keys expiring at once are
// gone in seconds, not minutes. It runs until Close.
func (s *Store) sweepLoop(interval time.Duration) {
	defer s.wg.Done()
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-s.quit:
			return
		case <-t.C:
			start := time.Now()
			for s.sweep() && time.Since(start) < interval/4 {
			}
		}
	}
}

// sweep runs one tick. It takes one shard lock at a time, skips shards
// whose earliest deadline is still ahead and which have no flushed items
// left, and removes at most sweepBatch items per shard, walking only the
// segments whose summary says they may hold a dead record (reclaimLocked).
// It reports whether some shard had a full batch, and so may have more.
func (s *Store) sweep() (more bool) {
	clk := s.clock()
	s.pollFlush(&clk)
	now := clk.now()
	s.secs.Store(uint32(now / 1000))
	s.notePrefetchSize()
	fence := s.fence.Load()
	for i := range s.shards {
		sh := &s.shards[i]
		if !sh.mayHoldDead(now, fence) {
			continue
		}
		s.lock(sh)
		if n, _ := s.reclaimLocked(sh, &clk, fence, sweepBatch, math.MaxInt64); n == sweepBatch {
			more = true
		}
		sh.compactLocked()
		s.assertShardLocked(sh, "sweep")
		s.unlock(sh)
	}
	return more
}

// cursor is where a reclaim walk stopped: it resumes there, so a shard
// whose candidates take several ticks to walk is walked once, not from the
// start on every tick. minDeadline and minCAS collect the summary of the
// live records passed so far, which becomes the segment's exact summary
// when the walk reaches its end.
type cursor struct {
	seg         uint32 // noSeg when no walk is under way
	id          uint64 // the segment's id, in case it was dropped since
	off         uint32
	minDeadline int64
	minCAS      uint64
}

// reclaimLocked removes dead (expired and flushed) items from sh until it
// has removed maxItems or freed maxBytes or read reclaimVisits records, and
// returns how many items and bytes it removed. It walks only the segments
// whose summary says they may hold a dead record, and leaves each one it
// finishes with an exact summary. Once it has walked every such segment it
// publishes the shard's summary: the earliest deadline left and the fence
// up to which no flushed item is left.
func (s *Store) reclaimLocked(sh *shard, clk *clock, fence uint64, maxItems int, maxBytes int64) (n int, freed int64) {
	now := clk.now()
	walking := sh.walking // a Tx may hold the shard with handles open
	sh.walking = true
	defer func() { sh.walking = walking }()
	visits := reclaimVisits
	var e entry
	nsegs := len(sh.segs)
	start := 0
	if c := &sh.cursor; c.seg != noSeg && int(c.seg) < nsegs {
		start = int(c.seg)
	}
	for k := range nsegs {
		seg := uint32((start + k) % nsegs)
		sg := &sh.segs[seg]
		c := &sh.cursor
		if sg.buf == nil || !sg.mayHoldDead(now, fence) {
			if c.seg == seg {
				c.seg = noSeg
			}
			continue
		}
		if c.seg != seg || c.id != sg.id {
			*c = cursor{seg: seg, id: sg.id, minDeadline: math.MaxInt64, minCAS: math.MaxUint64}
		}
		for c.off < sh.segs[seg].used {
			if visits == 0 || n >= maxItems || freed >= maxBytes {
				return n, freed
			}
			visits--
			decodeHeader(&sh.segs[seg], c.off, &e)
			e.seg = seg
			c.off += e.size()
			if e.info&infoDead != 0 {
				continue
			}
			state := s.stateOf(&e, clk)
			if state == live {
				c.minCAS = min(c.minCAS, e.cas)
				if e.deadline != 0 {
					c.minDeadline = min(c.minDeadline, e.deadline)
				}
				continue
			}
			e.tag = sh.tagOf(sh.key(&e))
			freed += s.dropDeadLocked(sh, &e, state)
			n++
			if sh.segs[seg].id != c.id {
				break // that was its last live record: the segment is gone
			}
		}
		if sg := &sh.segs[seg]; sg.id == c.id {
			sg.minDeadline, sg.minCAS = c.minDeadline, c.minCAS
		}
		c.seg = noSeg
	}
	next := int64(math.MaxInt64)
	for i := range sh.segs {
		if sg := &sh.segs[i]; sg.buf != nil && sg.ttl > 0 {
			next = min(next, sg.minDeadline)
		}
	}
	sh.nextExpiry.Store(next)
	if sh.sweptFence.Load() < fence {
		sh.sweptFence.Store(fence)
	}
	return n, freed
}

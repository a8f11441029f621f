package store

import (
	"math"
	"math/bits"
	"unsafe"
)

// Segments: where records live.
//
// Each shard appends records to large byte slices, its segments, instead of
// allocating one block per item. Segments are kept in a list in the order
// they were opened, oldest first; the newest is usually the open
// ("active") segment that new records go to. Records are never written
// over except for their header fields (record.go): a Get hands out the
// value without copying it, and a segment that is walked, compacted or
// emptied is dropped rather than reused, so a value handed out stays valid
// for as long as the caller holds it (the garbage collector keeps the
// segment alive).
//
// Segments are pointer-free ([]byte), so the collector does not scan them;
// a shard holds a few hundred at most. A shard's next segment is an eighth
// of what it already holds, between minSegment and maxSegment, so small
// stores stay small and large ones allocate rarely. A record larger than
// bigRecord gets a segment of its own, dropped as soon as the record dies.
//
// Each segment keeps a summary of its live records: how many have a
// deadline, a lower bound of their deadlines and of their CAS tokens. The
// sweeper and writers under memory pressure walk only the segments whose
// summary says they may hold an expired or flushed record (expiry.go).
//
// Records leave a segment in three ways: they die in place (delete,
// overwrite, expiry), the eviction walk passes them (evict.go), or
// compaction copies them forward. When a tenth of a shard's segment bytes
// are dead (and at least deadFloor: deadAllowance), the shard compacts: it
// copies the live records of the sealed segment with the most dead bytes
// to the open segment and drops the old one. Each step copies at most maxSegment bytes
// under the lock.

const (
	minSegment = 8 << 10
	maxSegment = 1 << offBits // 64 KiB: offsets fit the index slot
	bigRecord  = 64 << 10
	noSeg      = ^uint32(0)

	// compactSteps bounds the segments one write compacts, so the lock is
	// never held for more than a few hundred microseconds of copying.
	compactSteps = 4
)

// segment is one append-only block of records.
type segment struct {
	buf  []byte // nil when the slot is free
	id   uint64 // unique per shard, so a walk can tell its segment was dropped
	used uint32 // bytes appended
	live uint32 // bytes of live records
	hand uint32 // the eviction walk's position, in the oldest segment
	ttl  uint32 // live records with a deadline

	baseCAS uint64 // the token of its first record; short CAS fields are relative to it

	minDeadline int64  // at most the earliest deadline of a live record
	minCAS      uint64 // at most the lowest CAS token of a live record

	prev, next uint32 // the shard's list of segments, oldest first
	big        bool   // holds one large record and nothing else
}

// mayHoldDead tells from the summary whether the segment may hold an
// expired or flushed record.
func (sg *segment) mayHoldDead(now int64, fence uint64) bool {
	return sg.ttl > 0 && sg.minDeadline <= now || sg.minCAS <= fence
}

// placeLocked finds room for a record of e with a key of klen and a value
// of vlen bytes and counts it in the segment: in the open segment if it
// fits there, else in a new one (its own if it is larger than bigRecord).
// It chooses the record's layout, the short CAS form whenever the token
// fits the segment's base, and returns where the record goes, its layout
// and the segment's base token.
func (sh *shard) placeLocked(e *entry, klen, vlen int) (seg, off uint32, rec []byte, layout uint8, base uint64) {
	fields := e.layout(0) &^ infoCAS32
	short := fields | infoCAS32
	n := hdrSize(short, klen, vlen) + klen + vlen // in a new segment, whose base is e.cas
	if n > bigRecord {
		seg = sh.newSegmentLocked(n)
		sg := &sh.segs[seg]
		sg.big, sg.used, sg.live, sg.baseCAS = true, uint32(n), uint32(n), e.cas
		return seg, 0, sg.buf, short, e.cas
	}
	if sh.active != noSeg {
		sg := &sh.segs[sh.active]
		base = sg.baseCAS
		if sg.used == 0 {
			base = e.cas
		}
		layout = fields
		if fitsCAS32(e.cas, base) {
			layout = short
		}
		if m := hdrSize(layout, klen, vlen) + klen + vlen; len(sg.buf)-int(sg.used) >= m {
			off = sg.used
			sg.used += uint32(m)
			sg.live += uint32(m)
			sg.baseCAS = base
			return sh.active, off, sg.buf[off : off+uint32(m)], layout, base
		}
		sh.sealActiveLocked()
	}
	size := 1 << bits.Len64(uint64(sh.segBytes/8))
	size = min(max(size, minSegment), maxSegment)
	sh.active = sh.newSegmentLocked(max(size, n))
	sg := &sh.segs[sh.active]
	sg.used, sg.live, sg.baseCAS = uint32(n), uint32(n), e.cas
	return sh.active, 0, sg.buf[:n], short, e.cas
}

// newSegmentLocked allocates a segment of size bytes in a free slot and
// puts it at the new end of the list.
func (sh *shard) newSegmentLocked(size int) uint32 {
	var seg uint32
	if k := len(sh.freeSegs); k > 0 {
		seg = sh.freeSegs[k-1]
		sh.freeSegs = sh.freeSegs[:k-1]
	} else {
		seg = uint32(len(sh.segs))
		if seg >= maxSegs {
			panic("store: more segments in one shard than an index slot can name")
		}
		sh.segs = append(sh.segs, segment{})
	}
	sh.segID++
	sh.segs[seg] = segment{
		buf:         make([]byte, size),
		id:          sh.segID,
		minDeadline: math.MaxInt64,
		minCAS:      math.MaxUint64,
		prev:        noSeg,
		next:        noSeg,
	}
	sh.linkNewestLocked(seg)
	sh.segBytes += int64(size)
	sh.total.add(int64(size))
	return seg
}

func (sh *shard) linkNewestLocked(seg uint32) {
	sg := &sh.segs[seg]
	sg.prev, sg.next = sh.newest, noSeg
	if sh.newest != noSeg {
		sh.segs[sh.newest].next = seg
	} else {
		sh.oldest = seg
	}
	sh.newest = seg
}

func (sh *shard) unlinkLocked(seg uint32) {
	sg := &sh.segs[seg]
	if sg.prev != noSeg {
		sh.segs[sg.prev].next = sg.next
	} else {
		sh.oldest = sg.next
	}
	if sg.next != noSeg {
		sh.segs[sg.next].prev = sg.prev
	} else {
		sh.newest = sg.prev
	}
	sg.prev, sg.next = noSeg, noSeg
}

// sealActiveLocked closes the open segment: its unused tail becomes dead
// space, and an empty one is dropped at once.
func (sh *shard) sealActiveLocked() {
	if sh.active == noSeg {
		return
	}
	sg := &sh.segs[sh.active]
	seg := sh.active
	sh.active = noSeg
	sh.dead += int64(len(sg.buf)) - int64(sg.used)
	if sg.live == 0 {
		sh.releaseSegmentLocked(seg)
	}
}

// releaseSegmentLocked drops a sealed segment without live records.
func (sh *shard) releaseSegmentLocked(seg uint32) {
	sg := &sh.segs[seg]
	if sg.live != 0 || seg == sh.active {
		panic("store: releasing a segment in use")
	}
	sh.unlinkLocked(seg)
	sh.dead -= int64(len(sg.buf))
	sh.segBytes -= int64(len(sg.buf))
	sh.total.add(-int64(len(sg.buf)))
	*sg = segment{}
	sh.freeSegs = append(sh.freeSegs, seg)
}

// appendLocked writes a record for e holding key followed by a and b, and
// sets e's location. key, a and b may point into an older record: segments
// are never overwritten, so they stay readable while the new one is built.
func (sh *shard) appendLocked(e *entry, key, a, b []byte) {
	e.klen, e.vlen = uint32(len(key)), uint32(len(a)+len(b))
	seg, off, rec, layout, base := sh.placeLocked(e, len(key), len(a)+len(b))
	h := encodeHeader(rec, e, layout, base)
	i := h + copy(rec[h:], key)
	i += copy(rec[i:], a)
	copy(rec[i:], b)
	e.seg, e.off, e.body = seg, off, off+uint32(h)
	sh.noteLiveLocked(e)
}

// noteLiveLocked adds a record that just arrived in its segment (appended
// or moved there) to the segment's summary. allocLocked counted its bytes.
func (sh *shard) noteLiveLocked(e *entry) {
	sg := &sh.segs[e.seg]
	if e.deadline != 0 {
		sg.ttl++
		sh.countTTLLocked(sh.key(e), 1)
	}
	sh.lowerSummaryLocked(e)
}

// lowerSummaryLocked makes the summaries of e's segment and shard cover
// e's deadline and CAS token, after e was added or changed in place.
func (sh *shard) lowerSummaryLocked(e *entry) {
	sg := &sh.segs[e.seg]
	sg.minCAS = min(sg.minCAS, e.cas)
	if e.deadline != 0 {
		sg.minDeadline = min(sg.minDeadline, e.deadline)
		if e.deadline < sh.nextExpiry.Load() {
			sh.nextExpiry.Store(e.deadline)
		}
	}
	if c := &sh.cursor; c.seg == e.seg {
		// The sweeper's walk may already have passed e.
		c.minCAS = min(c.minCAS, e.cas)
		if e.deadline != 0 {
			c.minDeadline = min(c.minDeadline, e.deadline)
		}
	}
}

// freeRecordLocked marks e's record dead and drops its segment if that
// leaves it empty. Outside a walk it then compacts when too much of the
// shard is dead.
func (sh *shard) freeRecordLocked(e *entry) {
	sh.killLocked(e)
	sg := &sh.segs[e.seg]
	if sg.live == 0 && e.seg != sh.active {
		sh.releaseSegmentLocked(e.seg)
	}
	if !sh.walking {
		sh.compactLocked()
	}
}

// killLocked marks e's record dead and takes it out of its segment's
// counts; the segment stays, even if empty.
func (sh *shard) killLocked(e *entry) {
	sg := &sh.segs[e.seg]
	n := e.size()
	sg.live -= n
	sh.dead += int64(n)
	if e.info&infoDeadline != 0 { // what the record holds, whatever e now says
		sg.ttl--
		sh.countTTLLocked(sh.key(e), -1)
	}
	e.info |= infoDead
	sg.buf[e.off] = e.info
}

// compactLocked compacts while more dead bytes than deadAllowance allows
// are in the shard's segments, at most compactSteps segments.
func (sh *shard) compactLocked() {
	for i := 0; i < compactSteps && sh.dead > sh.deadAllowance() && sh.dead > minSegment; i++ {
		if !sh.compactOneLocked() {
			break
		}
	}
}

// deadAllowance is how many dead segment bytes the shard keeps before it
// compacts: a tenth of its segment bytes, or sh.deadFloor (deadFloor) if
// that is more. Dead bytes are resident memory the items do not use, so
// the tenth bounds the segments to 10/9 of the live records' bytes
// whatever the memory limit; compacting sooner copies more per byte
// reclaimed (a victim is then mostly live: at a tenth, about three moves
// per overwrite under uniform random overwrites, docs/performance.md).
// The floor spares small shards that copying: below 10 MiB a shard may
// hold up to 1 MiB dead, but never more than half its segment bytes.
func (sh *shard) deadAllowance() int64 {
	return max(sh.segBytes/10, min(sh.segBytes/2, sh.deadFloor))
}

// deadFloor is a shard's dead bytes allowance whatever its size
// (deadAllowance).
const deadFloor = 1 << 20

// compactOneLocked moves the live records of the sealed segment with the
// most dead bytes to the open segment and drops it. It reports whether it
// found a segment to compact.
func (sh *shard) compactOneLocked() bool {
	victim, most := noSeg, 0
	for i := range sh.segs {
		sg := &sh.segs[i]
		if sg.buf == nil || sg.big || uint32(i) == sh.active {
			continue
		}
		if d := len(sg.buf) - int(sg.live); d > most {
			victim, most = uint32(i), d
		}
	}
	if victim == noSeg {
		return false
	}
	// First the live records' tags, prefetching each one's index slots,
	// then the moves: each move's index probe finds its slots in the cache
	// instead of waiting on a miss per record.
	used := sh.segs[victim].used
	live := sh.moving[:0]
	var e entry
	for off := uint32(0); off < used; {
		decodeHeader(&sh.segs[victim], off, &e)
		e.seg = victim
		if e.info&infoDead == 0 {
			tag := sh.tagOf(sh.key(&e))
			prefetch(unsafe.Pointer(&sh.index.slots[sh.index.home(tag)]))
			live = append(live, movingRecord{off, tag})
		}
		off += e.size()
	}
	for _, r := range live {
		decodeHeader(&sh.segs[victim], r.off, &e)
		e.seg, e.tag = victim, r.tag
		sh.moveLocked(&e)
	}
	sh.moving = live[:0]
	// The victim is sealed and now empty.
	sh.releaseSegmentLocked(victim)
	return true
}

// movingRecord is a live record of a segment being compacted: its offset
// and index tag.
type movingRecord struct{ off, tag uint32 }

// moveLocked copies e's record, with e's info byte, to the open segment
// (its header re-encoded for the new segment's base token), points the
// index at the copy and marks the original dead, leaving its segment in
// place for the caller to drop. e (with its tag set) then describes the
// copy.
func (sh *shard) moveLocked(e *entry) {
	from := *e
	src := sh.segs[from.seg].buf
	seg, off, rec, layout, base := sh.placeLocked(e, int(e.klen), int(e.vlen))
	h := encodeHeader(rec, e, layout, base)
	copy(rec[h:], src[from.body:from.body+from.klen+from.vlen])
	e.seg, e.off, e.body = seg, off, off+uint32(h)
	sh.noteLiveLocked(e)
	sh.index.replace(e.tag, loc(from.seg, from.off), loc(seg, off), from.pos)
	sh.killLocked(&from)
	sh.moves++
}

// key returns e's key without copying; it is never modified.
func (sh *shard) key(e *entry) []byte {
	return sh.segs[e.seg].buf[e.body : e.body+e.klen : e.body+e.klen]
}

// value returns e's value without copying; the caller must not modify it.
// The capacity is clipped so an append by the caller copies.
func (sh *shard) value(e *entry) []byte {
	if e.vlen == 0 {
		return []byte{}
	}
	start := e.body + e.klen
	return sh.segs[e.seg].buf[start : start+e.vlen : start+e.vlen]
}

// snapshot returns the exported view of e.
func (sh *shard) snapshot(e *entry) Item {
	return Item{Value: sh.value(e), Flags: e.flags, CAS: e.cas, Deadline: e.deadline, Kind: kindOf(e.meta)}
}

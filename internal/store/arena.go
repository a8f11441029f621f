package store

import (
	"encoding/binary"
	"math/bits"
)

// Segments: where keys and values live.
//
// Each shard appends records to large byte slices, its segments, instead of
// allocating one block per item. A record is
//
//	+-----------+-----------+-------------+
//	| hdr (4 B) | key bytes | value bytes |
//	+-----------+-----------+-------------+
//
// hdr is the ref of the item that owns the record, or, once the record is
// dead (its item was deleted or given a new value), deadBit | record length,
// so compaction can walk a segment without the items. Key and value bytes
// are never written after the record is built: a Get hands out the value
// without copying it, and a segment that is compacted or emptied is dropped
// rather than reused, so a value handed out stays valid for as long as the
// caller holds it (the garbage collector keeps the segment alive). Only the
// header is rewritten, under the shard lock, and nothing outside the store
// reads it.
//
// Segments are pointer-free ([]byte), so the collector does not scan them;
// a shard holds a few hundred at most. A shard's next segment is an eighth
// of what it already holds, between minSegment and maxSegment, so small
// stores stay small and large ones allocate rarely. A record larger than
// bigRecord gets a segment of its own, dropped as soon as the record dies.
//
// When a quarter of a shard's segment bytes are dead, the shard compacts:
// it copies the live records of the sealed segment with the most dead bytes
// to the open segment and drops the old one. Each step copies at most
// maxSegment bytes under the lock.

const (
	minSegment = 8 << 10
	maxSegment = 256 << 10
	bigRecord  = 64 << 10
	hdrLen     = 4
	deadBit    = 1 << 31
	noSeg      = ^uint32(0)

	// compactSteps bounds the segments one write compacts, so the lock is
	// never held for more than a few hundred microseconds of copying.
	compactSteps = 4
)

// segment is one append-only block of records.
type segment struct {
	buf  []byte // nil when the slot is free
	used uint32 // bytes appended
	live uint32 // bytes of live records
	big  bool   // holds one large record and nothing else
}

// Item table: fixed chunks of items, addressed by ref. Ref 0 is never
// handed out, so it can mean "none" in links.
const (
	chunkShift = 10
	chunkLen   = 1 << chunkShift
)

// at returns the item with the given ref.
func (sh *shard) at(ref uint32) *item {
	return &sh.chunks[ref>>chunkShift][ref&(chunkLen-1)]
}

// newItemLocked takes a free item from the table, growing it by a chunk
// when none is free.
func (sh *shard) newItemLocked() *item {
	if sh.freeItem == 0 {
		base := uint32(len(sh.chunks)) << chunkShift
		c := new([chunkLen]item)
		sh.chunks = append(sh.chunks, c)
		first := uint32(0)
		if base == 0 {
			first = 1 // ref 0 stays unused
		}
		for i := uint32(chunkLen) - 1; i >= first; i-- {
			c[i] = item{self: base + i, seg: noSeg, next: sh.freeItem}
			sh.freeItem = base + i
			if i == 0 {
				break
			}
		}
	}
	it := sh.at(sh.freeItem)
	sh.freeItem = it.next
	*it = item{self: it.self, seg: noSeg, heapIdx: -1}
	return it
}

// freeItemLocked returns it to the free list, after its record is freed.
// Its other fields stay as they were, so a caller may still read its cost.
func (sh *shard) freeItemLocked(it *item) {
	it.seg = noSeg
	it.prev = 0
	it.next = sh.freeItem
	sh.freeItem = it.self
}

// record returns the bytes of it's record after the header.
func (sh *shard) record(it *item) []byte {
	s := &sh.segs[it.seg]
	start := it.off + hdrLen
	return s.buf[start : start+it.klen+it.vlen : start+it.klen+it.vlen]
}

// key returns the item's key without copying; it is valid until the lock
// is released (and, being immutable, after).
func (sh *shard) key(it *item) []byte {
	r := sh.record(it)
	return r[:it.klen:it.klen]
}

// value returns the item's value without copying; the caller must not
// modify it. The capacity is clipped so an append by the caller copies.
func (sh *shard) value(it *item) []byte {
	if it.vlen == 0 {
		return []byte{}
	}
	return sh.record(it)[it.klen:]
}

// snapshot returns the exported view of the item.
func (sh *shard) snapshot(it *item) Item {
	return Item{Value: sh.value(it), Flags: it.flags, CAS: it.cas, Deadline: it.deadline}
}

// setDataLocked gives it a new record holding key followed by a and b, and
// frees its old one. key, a and b may point into the old record: segments
// are never overwritten, so they stay readable while the new one is built.
func (sh *shard) setDataLocked(it *item, key, a, b []byte) {
	oldSeg, oldOff, oldLen := it.seg, it.off, hdrLen+it.klen+it.vlen
	n := hdrLen + len(key) + len(a) + len(b)
	seg, off, rec := sh.allocLocked(n)
	binary.LittleEndian.PutUint32(rec, it.self)
	i := hdrLen + copy(rec[hdrLen:], key)
	i += copy(rec[i:], a)
	copy(rec[i:], b)
	it.seg, it.off = seg, off
	it.klen, it.vlen = uint32(len(key)), uint32(len(a)+len(b))
	if oldSeg != noSeg {
		sh.freeRecordLocked(oldSeg, oldOff, oldLen)
	}
}

// freeDataLocked frees it's record; the item keeps its sizes.
func (sh *shard) freeDataLocked(it *item) {
	if it.seg != noSeg {
		sh.freeRecordLocked(it.seg, it.off, hdrLen+it.klen+it.vlen)
		it.seg = noSeg
	}
}

// allocLocked appends an n-byte record and returns where it is.
func (sh *shard) allocLocked(n int) (seg, off uint32, rec []byte) {
	if n > bigRecord {
		seg = sh.newSegmentLocked(n)
		s := &sh.segs[seg]
		s.big, s.used, s.live = true, uint32(n), uint32(n)
		return seg, 0, s.buf
	}
	if sh.active == noSeg || len(sh.segs[sh.active].buf)-int(sh.segs[sh.active].used) < n {
		sh.sealActiveLocked()
		size := 1 << bits.Len64(uint64(sh.segBytes/8))
		size = min(max(size, minSegment), maxSegment)
		sh.active = sh.newSegmentLocked(max(size, n))
	}
	s := &sh.segs[sh.active]
	off = s.used
	s.used += uint32(n)
	s.live += uint32(n)
	return sh.active, off, s.buf[off : off+uint32(n)]
}

// newSegmentLocked allocates a segment of size bytes in a free slot.
func (sh *shard) newSegmentLocked(size int) uint32 {
	var seg uint32
	if k := len(sh.freeSegs); k > 0 {
		seg = sh.freeSegs[k-1]
		sh.freeSegs = sh.freeSegs[:k-1]
	} else {
		seg = uint32(len(sh.segs))
		sh.segs = append(sh.segs, segment{})
	}
	sh.segs[seg] = segment{buf: make([]byte, size)}
	sh.segBytes += int64(size)
	return seg
}

// sealActiveLocked closes the open segment: its unused tail becomes dead
// space, and an empty one is dropped at once.
func (sh *shard) sealActiveLocked() {
	if sh.active == noSeg {
		return
	}
	s := &sh.segs[sh.active]
	seg := sh.active
	sh.active = noSeg
	sh.dead += int64(len(s.buf)) - int64(s.used)
	if s.live == 0 {
		sh.releaseSegmentLocked(seg)
	}
}

// releaseSegmentLocked drops an empty, sealed segment.
func (sh *shard) releaseSegmentLocked(seg uint32) {
	s := &sh.segs[seg]
	sh.dead -= int64(len(s.buf))
	sh.segBytes -= int64(len(s.buf))
	*s = segment{}
	sh.freeSegs = append(sh.freeSegs, seg)
}

// freeRecordLocked marks a record dead, drops its segment if that leaves
// it empty, and compacts when too much of the shard is dead.
func (sh *shard) freeRecordLocked(seg, off, n uint32) {
	s := &sh.segs[seg]
	s.live -= n
	sh.dead += int64(n)
	if s.big {
		sh.releaseSegmentLocked(seg)
		return
	}
	binary.LittleEndian.PutUint32(s.buf[off:], deadBit|n)
	if s.live == 0 && seg != sh.active {
		sh.releaseSegmentLocked(seg)
	}
	for i := 0; i < compactSteps && sh.dead > sh.segBytes/4 && sh.dead > minSegment; i++ {
		if !sh.compactOneLocked() {
			break
		}
	}
}

// compactOneLocked moves the live records of the sealed segment with the
// most dead bytes to the open segment and drops it. It reports whether it
// found a segment to compact.
func (sh *shard) compactOneLocked() bool {
	victim, most := noSeg, 0
	for i := range sh.segs {
		s := &sh.segs[i]
		if s.buf == nil || s.big || uint32(i) == sh.active {
			continue
		}
		if d := len(s.buf) - int(s.live); d > most {
			victim, most = uint32(i), d
		}
	}
	if victim == noSeg {
		return false
	}
	s := &sh.segs[victim]
	buf, used := s.buf, s.used
	for off := uint32(0); off < used; {
		hdr := binary.LittleEndian.Uint32(buf[off:])
		if hdr&deadBit != 0 {
			off += hdr &^ deadBit
			continue
		}
		it := sh.at(hdr)
		n := hdrLen + it.klen + it.vlen
		seg, noff, rec := sh.allocLocked(int(n))
		copy(rec, buf[off:off+n])
		it.seg, it.off = seg, noff
		sh.segs[victim].live -= n
		sh.dead += int64(n)
		off += n
	}
	// The victim is sealed and now empty.
	sh.releaseSegmentLocked(victim)
	return true
}

package store

import (
	"bytes"
	"encoding/binary"
	"hash/maphash"
	"math"
	"sync"
	"sync/atomic"
)

// shard is one lock's worth of the keyspace: an index from key hashes to
// record locations and the segments that hold the records. Apart from the
// segments' byte slices, nothing in it holds a Go pointer, so a shard with
// millions of items gives the collector a few hundred objects to look at.
// No code path ever holds two shard locks.
type shard struct {
	mu sync.Mutex // protects every field up to and including the counters

	seed        maphash.Seed // the Store's seed, to rehash the key of a record being moved
	index       index
	segs        []segment
	others      *dbCounts      // items of databases other than 0 (made at the first; db.go)
	othersN     int64          // their sum: database 0 holds len() - othersN
	othersTTL   int64          // how many of them have a deadline (the segments' ttl holds the rest)
	freeSegs    []uint32       // free segment slots
	active      uint32         // the open segment, or noSeg
	oldest      uint32         // the list of segments in the order they were opened
	newest      uint32         //
	segID       uint64         // last segment.id handed out
	segBytes    int64          // bytes of all segments
	dead        int64          // bytes of segments not holding live records
	deadFloor   int64          // dead bytes kept however few the segment bytes (deadAllowance)
	removals    uint64         // items removed from the index so far (the warm-up's check, warmup.go)
	total       *segTotal      // the store's, told of every change to segBytes
	bytes       int64          // sum of cost() over live records
	moves       uint64         // records moved by eviction walks and compaction
	walking     bool           // a walk is under way: no compaction, which would move records under it
	cursor      cursor         // where the last reclaim walk stopped
	objs        []objSlot      // big collections' structures, named by their records (object.go)
	freeObjs    []uint32       // free slots of objs
	scratch     []byte         // a collection's encoding while a command changes it (coll.go)
	moving      []movingRecord // compactOneLocked's list of the victim's live records
	diskRec     []byte         // a disk record while Disk.Write copies it (recordHead)
	props       []byte         // a call's commands for the Feed while it copies them (coll.props)
	scratchBusy bool           // scratch is in use by a collection handle
	txDepth     int            // Tx (and Exclusive) calls holding the shard: objects wait in reclaim and doomed (bigmem.go)
	reclaim     []object       // objects whose retired slices are freed when the Tx ends
	doomed      []object       // objects dropped during the Tx, freed when it ends

	// Counters, summed by Store.Stats.
	totalItems       uint64
	evictions        uint64
	reclaimed        uint64
	expiredUnfetched uint64
	evictedUnfetched uint64
	getExpired       uint64
	getFlushed       uint64

	// Written under mu, read without it so the sweeper and writers under
	// memory pressure can skip shards that have nothing to reclaim.
	nextExpiry atomic.Int64  // at most the earliest deadline of a record; MaxInt64 if none
	sweptFence atomic.Uint64 // flush fence up to which the shard was swept

	_ [64]byte // keep neighbouring shards' locks off each other's cache lines
}

func (sh *shard) init(seed maphash.Seed, total *segTotal) {
	sh.seed = seed
	sh.total = total
	sh.deadFloor = deadFloor
	sh.resetLocked()
}

// resetLocked empties the shard's tables.
func (sh *shard) resetLocked() {
	sh.index = index{slots: make([]uint64, minIndex)}
	sh.others, sh.othersN, sh.othersTTL = nil, 0, 0
	sh.segs = nil
	sh.freeSegs = nil
	sh.active, sh.oldest, sh.newest = noSeg, noSeg, noSeg
	if sh.segBytes != 0 {
		sh.total.add(-sh.segBytes)
	}
	sh.segBytes, sh.dead = 0, 0
	sh.removals++ // every item went
	sh.cursor = cursor{seg: noSeg}
	sh.nextExpiry.Store(math.MaxInt64)
	sh.bytes = 0
	sh.objs, sh.freeObjs = nil, nil
}

// tagOf is the index tag of key, for records whose hash is not at hand.
func (sh *shard) tagOf(key []byte) uint32 {
	return tagOf(maphash.Bytes(sh.seed, key))
}

// findLocked looks up the record stored under key, whose hash is h, dead
// or alive, and decodes it into e. A probe reads only slots until a tag
// matches, and then the record, which holds the key and every field.
func (sh *shard) findLocked(h uint64, key []byte, e *entry) bool {
	ix := &sh.index
	tag := tagOf(h)
	slots := ix.slots
	for i, d := ix.home(tag), 0; ; d++ {
		v := slots[i]
		if v == 0 {
			return false
		}
		if slotTag(v) == tag {
			seg := slotSeg(v)
			sg := &sh.segs[seg]
			decodeHeader(sg, slotOff(v), e)
			if int(e.klen) == len(key) && bytes.Equal(sg.buf[e.body:e.body+e.klen], key) {
				e.seg, e.tag, e.pos = seg, tag, int32(i)
				return true
			}
		} else if ix.dist(i, v) < d {
			return false // Robin Hood: key would have displaced this entry
		}
		if i++; i == len(slots) {
			i = 0
		}
	}
}

// len is the number of items in the shard.
func (sh *shard) len() int { return sh.index.n }

// insertLocked writes a new record for e (tag, header fields set) holding
// key and a+b and indexes it. The caller has reserved its cost.
func (sh *shard) insertLocked(e *entry, key, a, b []byte) {
	sh.appendLocked(e, key, a, b)
	sh.index.insert(slotOf(e.tag, loc(e.seg, e.off)))
	sh.countDBLocked(key, 1)
}

// replaceLocked writes a new record for e holding key and a+b in place of
// old's, which it frees. e and old are distinct entries of the same key.
func (sh *shard) replaceLocked(e *entry, key, a, b []byte, old *entry) {
	sh.appendLocked(e, key, a, b)
	sh.index.replace(e.tag, loc(old.seg, old.off), loc(e.seg, e.off), old.pos)
	if old.isBig() && (!e.isBig() || sh.objID(e) != sh.objID(old)) {
		sh.freeObjLocked(sh.objID(old)) // the caller settles its charge
	}
	sh.freeRecordLocked(old)
}

// removeLocked takes e out of the index, frees its record (and object)
// and takes it out of the shard's byte count, and returns what it was
// charged. The caller settles the global count.
func (sh *shard) removeLocked(e *entry) int64 {
	c := sh.costOf(e)
	sh.removals++
	sh.index.remove(slotOf(e.tag, loc(e.seg, e.off)), e.pos)
	sh.countDBLocked(sh.key(e), -1)
	sh.bytes -= c
	if e.isBig() {
		sh.freeObjLocked(sh.objID(e))
	}
	sh.freeRecordLocked(e)
	return c
}

// commitLocked writes e's changed header fields back. Changes that keep
// the layout (access bits, CAS, access time, a deadline that stays set)
// are written in place; one that adds or drops a field, or a token that
// no longer fits a short CAS, rewrites the record into the open segment.
func (sh *shard) commitLocked(e *entry) {
	if sg := &sh.segs[e.seg]; fitsInPlace(sg, e) {
		writeInPlace(sg, e)
		sh.lowerSummaryLocked(e)
		return
	}
	old := *e
	k, v := sh.key(&old), sh.value(&old)
	sh.replaceLocked(e, k, v, nil, &old)
}

// markUsedLocked records a read of e at sec: an access for the eviction
// walk, fetched, and the access time. Only the info byte and atime change,
// in place, and only when they do change: a hot item read many times a
// second is then not written at all, so its cache line stays clean.
func (sh *shard) markUsedLocked(e *entry, sec uint32) {
	sh.markAccessLocked(e, e.info|infoFetched, sec)
}

// markTouchedLocked records a use of e that read no value (a write
// command's lookup that changed nothing, Store.Use): markUsedLocked
// without fetched.
func (sh *shard) markTouchedLocked(e *entry, sec uint32) {
	sh.markAccessLocked(e, e.info, sec)
}

// markAccessLocked raises e's access count, gives it the info byte info
// and the access time sec, in place.
func (sh *shard) markAccessLocked(e *entry, info uint8, sec uint32) {
	if f := e.freq(); f < maxFreq {
		info += 1 << freqShift
	}
	sh.setAccessLocked(e, info, sec)
}

// setAccessLocked gives e the info byte info (with the same presence
// bits) and the access time sec, written in place, and only when they
// change: a hot item read many times a second then keeps its cache line
// clean.
func (sh *shard) setAccessLocked(e *entry, info uint8, sec uint32) {
	if info == e.info && sec == e.atime {
		return
	}
	e.info, e.atime = info, sec
	buf := sh.segs[e.seg].buf[e.off:]
	buf[0] = info
	binary.LittleEndian.PutUint32(buf[atimeAt(info):], sec)
}

// clearLocked drops every item at once by swapping in empty tables, and
// returns how many items and bytes it dropped. The old tables and
// segments are left to the garbage collector (values handed out earlier
// stay valid); the big objects' mapped memory, which only handles reach,
// is freed (bigmem.go), so the call is O(objects) under the lock.
func (sh *shard) clearLocked() (n int, bytes int64) {
	n, bytes = sh.len(), sh.bytes
	for _, o := range sh.objs {
		if o.obj != nil {
			sh.freeObjectLocked(o.obj)
		}
	}
	sh.resetLocked()
	return n, bytes
}

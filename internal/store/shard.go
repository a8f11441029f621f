package store

import (
	"bytes"
	"hash/maphash"
	"math"
	"sync"
	"sync/atomic"
)

// shard is one lock's worth of the keyspace: a table of items, an index
// from key hashes to items, the segments that hold keys and values, an
// intrusive LRU list and a min-heap of deadlines. Apart from the segments'
// byte slices and the table's chunk pointers, nothing in it holds a Go
// pointer, so a shard with millions of items gives the collector a few
// hundred objects to look at. No code path ever holds two shard locks.
type shard struct {
	mu sync.Mutex // protects every field up to and including the counters

	seed   maphash.Seed      // the Store's seed, for index tags
	chunks []*[chunkLen]item // the item table; refs index it
	index  index
	segs   []segment
	head   uint32   // LRU list: head is the most recently used; 0 = empty
	tail   uint32   //
	expiry []uint32 // min-heap on deadline of the items that have one
	bytes  int64    // sum of cost() over items

	freeItem uint32   // free list of items, linked through next
	freeSegs []uint32 // free segment slots
	active   uint32   // the open segment, or noSeg
	segBytes int64    // bytes of all segments
	dead     int64    // bytes of segments not holding live records

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
	nextExpiry atomic.Int64  // deadline at the top of expiry; MaxInt64 if none
	sweptFence atomic.Uint64 // flush fence up to which the LRU tail was swept

	_ [64]byte // keep neighbouring shards' locks off each other's cache lines
}

func (sh *shard) init(seed maphash.Seed) {
	sh.seed = seed
	sh.resetLocked()
}

// resetLocked empties the shard's tables.
func (sh *shard) resetLocked() {
	sh.chunks = nil
	sh.index = index{slots: make([]uint64, minIndex)}
	sh.segs = nil
	sh.freeSegs = nil
	sh.freeItem = 0
	sh.active = noSeg
	sh.segBytes, sh.dead = 0, 0
	sh.head, sh.tail = 0, 0
	sh.expiry = nil
	sh.nextExpiry.Store(math.MaxInt64)
	sh.bytes = 0
}

// tag is the index tag of key: the upper half of its hash, the lower half
// having chosen the shard.
func (sh *shard) tag(key []byte) uint32 {
	return uint32(maphash.Bytes(sh.seed, key) >> 32)
}

// findLocked returns the item stored under key, dead or alive, or nil.
func (sh *shard) findLocked(key []byte) *item {
	ix := &sh.index
	tag := sh.tag(key)
	mask := len(ix.slots) - 1
	for i := ix.home(tag); ; i = (i + 1) & mask {
		v := ix.slots[i]
		if v == 0 {
			return nil
		}
		if uint32(v>>32) != tag {
			continue
		}
		it := sh.at(uint32(v))
		if int(it.klen) == len(key) && bytes.Equal(sh.key(it), key) {
			return it
		}
	}
}

// len is the number of items in the shard.
func (sh *shard) len() int { return sh.index.n }

// pushFrontLocked links a new item at the head of the LRU list.
func (sh *shard) pushFrontLocked(it *item) {
	it.prev = 0
	it.next = sh.head
	if sh.head != 0 {
		sh.at(sh.head).prev = it.self
	} else {
		sh.tail = it.self
	}
	sh.head = it.self
}

// unlinkLRULocked takes it out of the LRU list.
func (sh *shard) unlinkLRULocked(it *item) {
	if it.prev != 0 {
		sh.at(it.prev).next = it.next
	} else {
		sh.head = it.next
	}
	if it.next != 0 {
		sh.at(it.next).prev = it.prev
	} else {
		sh.tail = it.prev
	}
	it.prev, it.next = 0, 0
}

// touchLocked makes it the most recently used item of the shard.
func (sh *shard) touchLocked(it *item) {
	if sh.head == it.self {
		return
	}
	sh.unlinkLRULocked(it)
	sh.pushFrontLocked(it)
}

// tailLocked is the least recently used item, or nil.
func (sh *shard) tailLocked() *item {
	if sh.tail == 0 {
		return nil
	}
	return sh.at(sh.tail)
}

// prevLocked is the item used just after it, or nil.
func (sh *shard) prevLocked(it *item) *item {
	if it.prev == 0 {
		return nil
	}
	return sh.at(it.prev)
}

// removeLocked takes it out of the index, the LRU list and the expiry
// heap, frees its record and its table entry, and takes it out of the
// shard's byte count. The caller settles the global count; it may still
// read it's cost and flags.
func (sh *shard) removeLocked(it *item) {
	sh.index.remove(sh.tag(sh.key(it)), it.self)
	sh.unlinkLRULocked(it)
	if it.heapIdx >= 0 {
		sh.heapRemoveLocked(int(it.heapIdx))
	}
	sh.bytes -= it.cost()
	sh.freeDataLocked(it)
	sh.freeItemLocked(it)
}

// clearLocked drops every item at once by swapping in empty tables, and
// returns how many items and bytes it dropped. It is O(1) under the lock:
// the old tables and segments are left to the garbage collector (values
// handed out earlier stay valid).
func (sh *shard) clearLocked() (n int, bytes int64) {
	n, bytes = sh.len(), sh.bytes
	sh.resetLocked()
	return n, bytes
}

// setDeadlineLocked changes the item's deadline and keeps the expiry heap in step.
func (sh *shard) setDeadlineLocked(it *item, deadline int64) {
	it.deadline = deadline
	switch {
	case it.heapIdx >= 0 && deadline == 0:
		sh.heapRemoveLocked(int(it.heapIdx))
	case it.heapIdx >= 0:
		sh.heapFixLocked(int(it.heapIdx))
	case deadline != 0:
		sh.heapPushLocked(it)
	}
}

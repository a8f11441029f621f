package store

import (
	"math"
	"sync"
	"sync/atomic"
)

// shard is one lock's worth of the keyspace: a map, an intrusive LRU list
// and a min-heap of deadlines. No code path ever holds two shard locks.
type shard struct {
	mu sync.Mutex // protects every field up to and including the counters

	items      map[string]*item // keyed by item.key(), which shares the item's data
	head, tail *item            // LRU list: head is the most recently used
	expiry     []*item          // min-heap on deadline of the items that have one
	bytes      int64            // sum of cost() over items

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

func (sh *shard) init() {
	sh.items = make(map[string]*item)
	sh.nextExpiry.Store(math.MaxInt64)
}

// pushFrontLocked links a new item at the head of the LRU list.
func (sh *shard) pushFrontLocked(it *item) {
	it.prev = nil
	it.next = sh.head
	if sh.head != nil {
		sh.head.prev = it
	} else {
		sh.tail = it
	}
	sh.head = it
}

// unlinkLRULocked takes it out of the LRU list.
func (sh *shard) unlinkLRULocked(it *item) {
	if it.prev != nil {
		it.prev.next = it.next
	} else {
		sh.head = it.next
	}
	if it.next != nil {
		it.next.prev = it.prev
	} else {
		sh.tail = it.prev
	}
	it.prev, it.next = nil, nil
}

// touchLocked makes it the most recently used item of the shard.
func (sh *shard) touchLocked(it *item) {
	if sh.head == it {
		return
	}
	sh.unlinkLRULocked(it)
	sh.pushFrontLocked(it)
}

// removeLocked takes it out of the map, the LRU list and the expiry heap,
// and out of the shard's byte count. The caller settles the global count.
func (sh *shard) removeLocked(it *item) {
	delete(sh.items, it.key())
	sh.unlinkLRULocked(it)
	if it.heapIdx >= 0 {
		sh.heapRemoveLocked(int(it.heapIdx))
	}
	sh.bytes -= it.cost()
}

// clearLocked drops every item at once by swapping in an empty map, and
// returns how many items and bytes it dropped. It is O(1) under the lock:
// the old map and items are left to the garbage collector.
func (sh *shard) clearLocked() (n int, bytes int64) {
	n, bytes = len(sh.items), sh.bytes
	sh.items = make(map[string]*item)
	sh.head, sh.tail = nil, nil
	sh.expiry = nil
	sh.nextExpiry.Store(math.MaxInt64)
	sh.bytes = 0
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

package lsm

import (
	"sync"
	"sync/atomic"
)

// blockCache is a sharded LRU of verified, decoded blocks with a byte budget.
// Blocks are immutable once cached, so readers share them without copying.
// 16 shards keep lock contention negligible at 2–16 cores while the per-shard
// budget (capacity/16) still holds hundreds of 4 KiB blocks.
type blockCache struct {
	shards [cacheShards]cacheShard
	hits   atomic.Int64
	misses atomic.Int64
}

const cacheShards = 16

type cacheKey struct {
	file uint64
	off  uint64
}

type cacheEntry struct {
	key        cacheKey
	val        []byte
	prev, next *cacheEntry
}

type cacheShard struct {
	mu       sync.Mutex // protects m, head, used
	m        map[cacheKey]*cacheEntry
	head     cacheEntry // sentinel; head.next is the most recently used
	used     int64
	capacity int64
}

func newBlockCache(capacity int64) *blockCache {
	c := &blockCache{}
	for i := range c.shards {
		s := &c.shards[i]
		s.m = make(map[cacheKey]*cacheEntry)
		s.head.next, s.head.prev = &s.head, &s.head
		s.capacity = capacity / cacheShards
	}
	return c
}

func (c *blockCache) shard(k cacheKey) *cacheShard {
	h := (k.file*0x9e3779b97f4a7c15 ^ k.off*0xff51afd7ed558ccd) >> 60
	return &c.shards[h]
}

func (c *blockCache) get(k cacheKey) []byte {
	s := c.shard(k)
	s.mu.Lock()
	e, ok := s.m[k]
	if ok {
		s.unlinkLocked(e)
		s.pushFrontLocked(e)
	}
	s.mu.Unlock()
	if ok {
		c.hits.Add(1)
		return e.val
	}
	c.misses.Add(1)
	return nil
}

func (c *blockCache) put(k cacheKey, v []byte) {
	s := c.shard(k)
	size := int64(len(v)) + 64
	if size > s.capacity {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.m[k]; ok {
		return
	}
	e := &cacheEntry{key: k, val: v}
	s.m[k] = e
	s.pushFrontLocked(e)
	s.used += size
	for s.used > s.capacity {
		old := s.head.prev
		s.unlinkLocked(old)
		delete(s.m, old.key)
		s.used -= int64(len(old.val)) + 64
	}
}

// evictFile drops every block of a deleted table.
func (c *blockCache) evictFile(file uint64) {
	for i := range c.shards {
		s := &c.shards[i]
		s.mu.Lock()
		for k, e := range s.m {
			if k.file == file {
				s.unlinkLocked(e)
				delete(s.m, k)
				s.used -= int64(len(e.val)) + 64
			}
		}
		s.mu.Unlock()
	}
}

func (c *blockCache) size() int64 {
	var n int64
	for i := range c.shards {
		s := &c.shards[i]
		s.mu.Lock()
		n += s.used
		s.mu.Unlock()
	}
	return n
}

func (s *cacheShard) unlinkLocked(e *cacheEntry) {
	e.prev.next = e.next
	e.next.prev = e.prev
}

func (s *cacheShard) pushFrontLocked(e *cacheEntry) {
	e.next = s.head.next
	e.prev = &s.head
	s.head.next.prev = e
	s.head.next = e
}

package store

import (
	"slices"
	"sync"

	"github.com/minikv/minikv/internal/offheap"
)

// Big collections' large slices outside the Go heap.
//
// A big hash, set or sorted set is a table (table.go): a slot array and an
// arena of entries, a few tens of MB each for a million elements. On the
// Go heap such a slice costs about three times its bytes in resident
// memory: each growth leaves the old array to the collector, which lets
// the heap reach twice the live data before it runs and hands freed pages
// back to the system slowly (a 51 MB hash held 156 MB of RSS,
// docs/benchmarks.md). So a table's slices of offHeapMin bytes or more
// are mapped instead (internal/offheap): they cost the pages written,
// grow in place without copying, and are unmapped the moment the table
// lets go of them. Smaller ones stay on the heap, where a few KiB cost
// less than a system call and a kernel memory area each.
//
// The collector no longer keeps such memory alive for whoever still holds
// a slice of it, so when it is freed is this file's rule:
//
//   - A slice a table replaces while a command runs (the arena it grew out
//     of, the slots and arena a resize rebuilt) may still be referenced by
//     the command: a handle's slices are valid until its function returns.
//     The table keeps it in retired, and the store frees it (reclaim) once
//     the function has returned, still under the shard lock: at the end
//     of Store.collection, or of the Tx.
//   - A whole object is freed (free) when its record is dropped or replaced
//     (freeObjLocked), under the shard lock: no function runs on the shard
//     then, except inside a Tx, whose function may still hold slices of a
//     key it cleared or overwrote, or Exclusive (EXEC, SORT's lookups);
//     there the object waits in the shard's doomed list until it ends.
//   - An object moved to another key (RENAME) is not freed with its old
//     record; FLUSHALL frees every object of a shard; a Store the
//     collector finds unreachable unmaps whatever is left (New).
//
// What a table is charged stays the capacity of its slices, mapped or not:
// a mapped slice's capacity is its read-write pages.
type bigMem struct {
	a    *offheap.Allocator // nil: every slice on the heap
	min  int                // a slice of at least this many bytes is mapped
	slab *chunkSlab         // sorted sets' chunks; nil: on the heap
}

// chunkSlab holds big sorted sets' chunks (zset.go) outside the Go heap.
// A chunk is zChunkMax bytes, one page: too small to map by itself (a
// million members make some ten thousand chunks), and on the heap it
// would cost up to twice its bytes in resident memory, the collector's
// headroom (1 M geo members: 118 MB RSS, 40 MB of it live heap, most of
// that chunks). So chunks are slots of blocks of chunkBlock bytes mapped
// once and kept; a free slot waits in free for the next chunk, its page
// given back to the system (Discard) when a whole sorted set went away.
type chunkSlab struct {
	mu     sync.Mutex
	free   [][]byte // empty slots, capacity zChunkMax
	blocks int64    // blocks mapped
}

// chunkBlock is the size of the slab's mappings: 256 chunks.
const chunkBlock = 1 << 20

// chunk returns an empty slot of zChunkMax bytes and true, or false when
// there is no slab or the system declines to map a block (the caller then
// uses the heap).
func (m *bigMem) chunk() ([]byte, bool) {
	s := m.slab
	if s == nil {
		return nil, false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.free) == 0 {
		blk := m.a.Alloc(chunkBlock, 0)
		if blk == nil {
			return nil, false
		}
		s.blocks++
		for off := 0; off+zChunkMax <= len(blk); off += zChunkMax {
			s.free = append(s.free, blk[off:off:off+zChunkMax])
		}
	}
	d := s.free[len(s.free)-1]
	s.free = s.free[:len(s.free)-1]
	if offheap.PageSize == zChunkMax {
		offheap.Unpoison(d[:zChunkMax]) // -tags invariants: free slots fault
	}
	return d, true
}

// freeChunk takes back a slot chunk gave, its page discarded if asked
// (the slot then costs nothing resident until reused).
func (m *bigMem) freeChunk(d []byte, discard bool) {
	d = d[:0:zChunkMax]
	if offheap.PageSize == zChunkMax { // a slot is a page (4 KiB pages)
		if discard {
			offheap.Discard(d[:zChunkMax])
		}
		offheap.Poison(d[:zChunkMax]) // -tags invariants: a use after free faults
	}
	m.slab.mu.Lock()
	m.slab.free = append(m.slab.free, d)
	m.slab.mu.Unlock()
}

const (
	// offHeapMin is where a slice leaves the heap: 16 KiB, 4 pages, 2048
	// slots, a hash of about 600 fields. Measured (2 M fields in hashes
	// of m fields each, resident bytes per field after the load): m=1000
	// 52.6 mapped from 16 KiB against 56.7 from 64 KiB (and 39.9 from
	// 4 KiB); m=3000 35.7 against 54.8; m=10000 and up the same. Building
	// and deleting a hash costs the same mapped or not at 1000 and 3000
	// fields and less mapped at 20000 (207 against 295 ns per field:
	// growth copies nothing), BenchmarkBigMemHashLifecycle. Below 16 KiB
	// a page's rounding would cost up to a quarter of the slice, and the
	// regions, which the allocator caps at a quarter of vm.max_map_count
	// (heap beyond that), would go to the smallest tables first.
	offHeapMin = 16 << 10
	// arenaRoom is how far past its first size an arena's mapping reserves
	// address space to grow in place: an arena is rebuilt at each resize,
	// which comes before it has doubled.
	arenaRoom = 4
)

// mapped reports whether a slice of n bytes should be mapped.
func (m *bigMem) mapped(n int) bool { return m.a != nil && n >= m.min }

// bytes returns an empty slice with room for n bytes, mapped with address
// space to grow in place to room bytes when it is large.
func (m *bigMem) bytes(n, room int) []byte {
	if m.mapped(n) {
		if b := m.a.Alloc(n, room); b != nil {
			return b[:0]
		}
	}
	return make([]byte, 0, n)
}

// uint64s returns a zeroed slice of n uint64s.
func (m *bigMem) uint64s(n int) []uint64 {
	if m.mapped(n * 8) {
		if b := m.a.Alloc(n*8, 0); b != nil {
			return offheap.Uint64s(b)
		}
	}
	return make([]uint64, n)
}

// grow returns b with capacity for at least need bytes. A mapped b grows
// in place when its reservation allows, in steps of a sixteenth (a mapped
// slice costs its written pages whatever its capacity, but is charged its
// capacity); otherwise b's bytes move to a new slice and b is retired.
func (m *bigMem) grow(b []byte, need int, retired *[][]byte) []byte {
	if need <= cap(b) {
		return b
	}
	if m.mapped(need) {
		want := max(need, cap(b)+cap(b)/16)
		if g, ok := m.a.Grow(b, want); ok {
			return g
		}
		if nb := m.a.Alloc(want, want*arenaRoom); nb != nil {
			nb = nb[:len(b)]
			copy(nb, b)
			m.retire(b, retired)
			return nb
		}
	}
	nb := slices.Grow(b[:len(b):len(b)], need-len(b))
	m.retire(b, retired)
	return nb
}

// retire adds b, which its owner no longer uses, to retired when it may be
// mapped, for reclaim to free once no handle can refer to it.
func (m *bigMem) retire(b []byte, retired *[][]byte) {
	if m.a != nil && cap(b) >= m.min {
		*retired = append(*retired, b)
	}
}

// free unmaps b if it is mapped; a heap slice is left to the collector.
func (m *bigMem) free(b []byte) {
	if m.a != nil && cap(b) >= m.min {
		m.a.Free(b)
	}
}

// mappedBytes is b's capacity if it is mapped, else 0 (checks and tests).
func (m *bigMem) mappedBytes(b []byte) int64 {
	if m.a != nil && cap(b) >= m.min && m.a.Owns(b) {
		return int64(cap(b))
	}
	return 0
}

// OffHeap is the bytes big collections have mapped outside the Go heap
// (part of Stats().Bytes; cmd/minikv lowers the heap's soft limit by it).
func (s *Store) OffHeap() int64 {
	if s.mem.a == nil {
		return 0
	}
	return s.mem.a.Mapped()
}

// heapMem keeps every slice on the heap: objects built outside a Store
// (tests of the structures alone).
var heapMem = &bigMem{}

// reclaimLocked frees o's retired slices once no handle can refer to
// them: at once after a collection's function, at the end of a Tx when
// inside one (the Tx's function may go on using what it read).
func (sh *shard) reclaimLocked(o object) {
	if sh.txDepth > 0 {
		sh.reclaim = append(sh.reclaim, o)
		return
	}
	o.reclaim()
}

// freeObjectLocked frees o, dropped from the shard, now or, inside a Tx,
// when the Tx ends.
func (sh *shard) freeObjectLocked(o object) {
	if sh.txDepth > 0 {
		sh.doomed = append(sh.doomed, o)
		return
	}
	o.free()
}

// endTxLocked frees what waited for the Tx that held sh to end, unless
// it is nested in another (inside Exclusive).
func (sh *shard) endTxLocked() {
	if sh.txDepth--; sh.txDepth > 0 {
		return
	}
	for i, o := range sh.reclaim {
		o.reclaim()
		sh.reclaim[i] = nil
	}
	sh.reclaim = sh.reclaim[:0]
	for i, o := range sh.doomed {
		o.free()
		sh.doomed[i] = nil
	}
	sh.doomed = sh.doomed[:0]
}

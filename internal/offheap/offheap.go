// Package offheap maps memory outside the Go heap for large pointer-free
// slices whose lifetime the owner knows exactly: the store's big
// collections (a million-field hash's slot array and entry arena).
//
// Why: on the Go heap such a slice costs more than its bytes. Growing it
// leaves the old array behind until the collector runs, and the
// collector lets the heap reach twice the live data (GOGC=100) before it
// does, then returns the freed pages to the system slowly; a 51 MB hash
// kept the process at 156 MB resident. A region mapped here costs the
// pages written to it, is freed the moment its owner calls Free, and grows
// in place (its address space is reserved up front), so growth copies
// nothing and leaves nothing behind.
//
// The price is the collector's safety net: a slice into a freed region is
// a crash (SIGSEGV), not a value kept alive. The owner must free a region
// exactly once, when nothing can read it any more; built with -tags
// invariants, a freed region's pages are dropped and made inaccessible
// (PROT_NONE) and kept reserved for a while, so a use after free faults in
// the tests instead of reading whatever was mapped there next. A region
// must hold no Go pointer: the collector does not scan it.
//
// Layout of a region (one anonymous private mapping):
//
//	| read-write: committed bytes, cap of the slice | PROT_NONE: reserved room to grow |
//	^ base (the key of the region table)
//
// On systems without mmap (and on 32-bit ones, whose address space is too
// small to reserve in), Alloc declines and the caller uses the heap.
package offheap

import (
	"sync"
	"sync/atomic"
	"unsafe"
)

// Allocator maps and frees regions and counts them. It is safe for
// concurrent use; every call but Mapped and Regions takes its mutex,
// which is meant for large, infrequent allocations (a syscall each).
type Allocator struct {
	mu         sync.Mutex
	regions    map[uintptr]*region // live regions by base address
	quarantine []*region           // invariants: freed regions kept PROT_NONE, oldest first
	maxRegions int

	mapped  atomic.Int64 // read-write bytes of live regions
	nlive   atomic.Int64 // live regions
	failed  atomic.Int64 // mappings the system refused
	limited atomic.Int64 // allocations declined at maxRegions
}

// region is one mapping: mem is the whole reservation, the first used
// bytes of it read-write.
type region struct {
	mem  []byte
	used int
}

// quarantineLen is how many freed regions the invariants build keeps
// inaccessible before it unmaps the oldest.
const quarantineLen = 1024

// New returns an Allocator that keeps at most maxRegions regions live
// (each is up to two of the kernel's memory areas, which it caps at
// vm.max_map_count for the whole process); 0 picks a quarter of
// vm.max_map_count.
func New(maxRegions int) *Allocator {
	if maxRegions <= 0 {
		maxRegions = maxMapCount() / 4
	}
	return &Allocator{regions: make(map[uintptr]*region), maxRegions: maxRegions}
}

// PageSize is the granularity of regions: capacities are multiples of it.
var PageSize = pageSize()

func roundPage(n int) int { return (n + PageSize - 1) &^ (PageSize - 1) }

func base(b []byte) uintptr { return uintptr(unsafe.Pointer(unsafe.SliceData(b[:cap(b)]))) }

// Alloc returns a zeroed slice of length n whose capacity is n rounded up
// to the page size, mapped outside the Go heap, with address space
// reserved for it to grow in place (Grow) up to reserve bytes. It returns
// nil when it declines (the caller then uses the heap): mapping is not
// supported here, maxRegions regions are live, or the system refused.
// The slice must be given back to Free once nothing refers to it.
func (a *Allocator) Alloc(n, reserve int) []byte {
	if n <= 0 || !supported {
		return nil
	}
	c := roundPage(n)
	r := max(roundPage(reserve), c)
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(a.regions) >= a.maxRegions {
		a.limited.Add(1)
		return nil
	}
	mem, err := mapRegion(c, r)
	if err != nil {
		a.failed.Add(1)
		return nil
	}
	g := &region{mem: mem, used: c}
	a.regions[base(mem)] = g
	a.mapped.Add(int64(c))
	a.nlive.Add(1)
	return mem[:n:c]
}

// Grow makes b's capacity at least n without moving it, when b is a slice
// Alloc returned (from its first byte) and its region has the room
// reserved. It returns the slice with b's length and the new capacity and
// true, or b and false when it cannot (the caller then allocates anew and
// copies).
func (a *Allocator) Grow(b []byte, n int) ([]byte, bool) {
	if cap(b) == 0 || !supported {
		return b, false
	}
	if n <= cap(b) {
		return b, true
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	g := a.regions[base(b)]
	if g == nil {
		return b, false
	}
	if g.used != cap(b) {
		panic("offheap: Grow of a slice whose capacity is not its region's")
	}
	c := roundPage(n)
	if c > len(g.mem) {
		return b, false
	}
	if err := commit(g.mem[g.used:c]); err != nil {
		a.failed.Add(1)
		return b, false
	}
	a.mapped.Add(int64(c - g.used))
	g.used = c
	return g.mem[:len(b):c], true
}

// Free unmaps the region b begins, which Alloc returned, and reports
// true. For any other slice (one from the heap, or empty) it does
// nothing and reports false. Nothing may read or write the region after
// Free; in the invariants build such an access faults.
func (a *Allocator) Free(b []byte) bool {
	if cap(b) == 0 || !supported {
		return false
	}
	p := base(b)
	a.mu.Lock()
	defer a.mu.Unlock()
	g := a.regions[p]
	if g == nil {
		if poison {
			a.checkUnknownLocked(p)
		}
		return false
	}
	delete(a.regions, p)
	a.mapped.Add(-int64(g.used))
	a.nlive.Add(-1)
	a.releaseLocked(g)
	return true
}

// releaseLocked gives g's memory back: unmapped at once, or in the
// invariants build dropped, made inaccessible and quarantined.
func (a *Allocator) releaseLocked(g *region) {
	if !poison {
		unmap(g.mem)
		return
	}
	protectNone(g.mem)
	a.quarantine = append(a.quarantine, g)
	if len(a.quarantine) > quarantineLen {
		unmap(a.quarantine[0].mem)
		a.quarantine[0] = nil
		a.quarantine = a.quarantine[1:]
	}
}

// checkUnknownLocked panics if p, which is not a live region's base, lies
// in a live or quarantined region: a second Free, or a Free of a slice
// that does not start at its region's base.
func (a *Allocator) checkUnknownLocked(p uintptr) {
	for _, g := range a.quarantine {
		if b := base(g.mem); p >= b && p < b+uintptr(len(g.mem)) {
			panic("offheap: Free of a region already freed")
		}
	}
	for b, g := range a.regions {
		if p > b && p < b+uintptr(len(g.mem)) {
			panic("offheap: Free of a slice inside a region, not at its base")
		}
	}
}

// Owns reports whether b begins a live region.
func (a *Allocator) Owns(b []byte) bool {
	if cap(b) == 0 || !supported {
		return false
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.regions[base(b)] != nil
}

// Mapped is the read-write bytes of the live regions: what they can hold
// resident at most.
func (a *Allocator) Mapped() int64 { return a.mapped.Load() }

// Regions is the number of live regions.
func (a *Allocator) Regions() int { return int(a.nlive.Load()) }

// Declined is how many allocations were declined because maxRegions
// regions were live or the system refused the mapping.
func (a *Allocator) Declined() int64 { return a.limited.Load() + a.failed.Load() }

// Release frees every live region at once: their owner is gone (a store
// the collector found unreachable), so nothing can refer to them.
func (a *Allocator) Release() {
	a.mu.Lock()
	defer a.mu.Unlock()
	for p, g := range a.regions {
		delete(a.regions, p)
		a.mapped.Add(-int64(g.used))
		a.nlive.Add(-1)
		unmap(g.mem)
	}
	for _, g := range a.quarantine {
		unmap(g.mem)
	}
	a.quarantine = nil
}

// Uint64s views b (from Alloc, or any slice whose length and capacity
// are multiples of 8 and whose first byte is 8-aligned) as []uint64.
func Uint64s(b []byte) []uint64 {
	if cap(b) == 0 {
		return nil
	}
	return unsafe.Slice((*uint64)(unsafe.Pointer(unsafe.SliceData(b))), cap(b)/8)[:len(b)/8]
}

// Bytes views u as the bytes it covers, for Free.
func Bytes(u []uint64) []byte {
	if cap(u) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(u))), cap(u)*8)[:len(u)*8]
}

// Discard gives the pages of b, whole pages inside a slice Alloc
// returned, back to the system without unmapping them: they read as
// zeroes when next touched.
func Discard(b []byte) {
	if len(b) > 0 {
		discard(b)
	}
}

// Poison makes the whole pages of b, inside a slice Alloc returned,
// inaccessible in the invariants build, so that a use faults; Unpoison
// makes them read-write again. Otherwise both do nothing. The store's
// chunk slab poisons its free slots.
func Poison(b []byte) {
	if poison && len(b) > 0 {
		protectNone(b)
	}
}

// Unpoison undoes Poison.
func Unpoison(b []byte) {
	if poison && len(b) > 0 {
		if err := commit(b); err != nil {
			panic("offheap: mprotect: " + err.Error())
		}
	}
}

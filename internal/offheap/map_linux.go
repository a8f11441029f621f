//go:build linux

package offheap

import (
	"math/bits"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// supported: anonymous mappings with reserved address space, on 64-bit
// Linux (a 32-bit address space is too small to reserve room to grow in).
const supported = bits.UintSize == 64

func pageSize() int { return os.Getpagesize() }

// maxMapCount is the kernel's limit on a process's memory areas.
func maxMapCount() int {
	b, err := os.ReadFile("/proc/sys/vm/max_map_count")
	if err != nil {
		return 65530
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || n <= 0 {
		return 65530
	}
	return n
}

// mapRegion maps reserve bytes, the first n of them read-write and the
// rest reserved, inaccessible and not counted against the system's
// commit limit until committed.
func mapRegion(n, reserve int) ([]byte, error) {
	if n == reserve {
		return syscall.Mmap(-1, 0, n, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE|syscall.MAP_ANON)
	}
	mem, err := syscall.Mmap(-1, 0, reserve, syscall.PROT_NONE, syscall.MAP_PRIVATE|syscall.MAP_ANON|syscall.MAP_NORESERVE)
	if err != nil {
		return nil, err
	}
	if err := commit(mem[:n]); err != nil {
		unmap(mem)
		return nil, err
	}
	return mem, nil
}

// commit makes b, reserved by mapRegion, read-write.
func commit(b []byte) error {
	return syscall.Mprotect(b, syscall.PROT_READ|syscall.PROT_WRITE)
}

// protectNone drops b's pages and makes it inaccessible, keeping the
// addresses reserved (the invariants build's freed regions).
func protectNone(b []byte) {
	if err := syscall.Madvise(b, syscall.MADV_DONTNEED); err != nil {
		panic("offheap: madvise: " + err.Error())
	}
	if err := syscall.Mprotect(b, syscall.PROT_NONE); err != nil {
		panic("offheap: mprotect: " + err.Error())
	}
}

// unmap gives b, a whole mapping from mapRegion, back to the system.
func unmap(b []byte) {
	if err := syscall.Munmap(b); err != nil {
		// Only an address that is not a mapping fails: a broken
		// invariant of this package, not a condition to go on from.
		panic("offheap: munmap: " + err.Error())
	}
}

// discard drops b's pages, keeping them mapped read-write: the next
// touch finds zeroed pages.
func discard(b []byte) {
	if err := syscall.Madvise(b, syscall.MADV_DONTNEED); err != nil {
		panic("offheap: madvise: " + err.Error())
	}
}

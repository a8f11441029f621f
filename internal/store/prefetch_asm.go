//go:build amd64 || arm64

package store

import "unsafe"

// prefetch asks the CPU to start loading the cache line at p. It is a
// hint: it never faults, whatever p is, and it reads nothing a Go program
// can observe, so it needs no lock.
//
//go:noescape
func prefetch(p unsafe.Pointer)

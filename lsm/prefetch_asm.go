//go:build amd64 || arm64

package lsm

import "unsafe"

// prefetch asks the CPU to start loading the cache line at p. It is a
// hint that never faults and reads nothing a Go program can observe.
// (internal/store has the same three lines of assembly: the engine
// imports nothing of the server's.)
//
//go:noescape
func prefetch(p unsafe.Pointer)

//go:build !linux

package offheap

import (
	"errors"
	"os"
)

// supported is false: Alloc declines and callers use the heap.
const supported = false

func pageSize() int    { return os.Getpagesize() }
func maxMapCount() int { return 65530 }

var errUnsupported = errors.New("offheap: not supported on this system")

func mapRegion(n, reserve int) ([]byte, error) { return nil, errUnsupported }
func commit(b []byte) error                    { return errUnsupported }
func protectNone(b []byte)                     {}
func unmap(b []byte)                           {}
func discard(b []byte)                         {}

//go:build !amd64 && !arm64

package store

import "unsafe"

// prefetch is a no-op where MiniKV has no prefetch instruction wired up.
func prefetch(unsafe.Pointer) {}

//go:build !amd64 && !arm64

package lsm

import "unsafe"

// prefetch is a no-op where the engine has no prefetch instruction wired up.
func prefetch(unsafe.Pointer) {}

//go:build !linux

package server

// socketUnread and socketReceived cannot tell elsewhere.
func socketUnread(int) int              { return 0 }
func socketReceived(int) (uint64, bool) { return 0, false }

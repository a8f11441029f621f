package server

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// socketUnread is the number of bytes received on socket fd and not yet
// read (SIOCINQ), or 0 when it cannot tell.
func socketUnread(fd int) int {
	if fd < 0 {
		return 0
	}
	n, err := unix.IoctlGetInt(fd, unix.SIOCINQ)
	if err != nil {
		return 0
	}
	return n
}

// socketReceived is the bytes TCP socket fd has received in order since
// it was established (tcp_info's tcpi_bytes_received, Linux 4.1), read
// into a buffer on the stack; ok is false when the kernel cannot tell.
func socketReceived(fd int) (n uint64, ok bool) {
	if fd < 0 {
		return 0, false
	}
	var ti unix.TCPInfo
	l := uint32(unsafe.Sizeof(ti))
	_, _, e := unix.Syscall6(unix.SYS_GETSOCKOPT, uintptr(fd), unix.IPPROTO_TCP, unix.TCP_INFO,
		uintptr(unsafe.Pointer(&ti)), uintptr(unsafe.Pointer(&l)), 0)
	if e != 0 || uintptr(l) < unsafe.Offsetof(ti.Bytes_received)+8 {
		return 0, false
	}
	return ti.Bytes_received, true
}

//go:build linux

package server

import (
	"errors"
	"fmt"
	"sync/atomic"
	"unsafe"

	"golang.org/x/sys/unix"
)

// An event loop's reads and replies go through io_uring when the kernel
// offers it. When epoll reports several connections readable, one
// IORING_OP_RECV each, submitted together in one io_uring_enter, reads
// them all, where read(2) took a system call per connection; at the end
// of a pass every served connection's replies become one IORING_OP_SEND
// each, again in one io_uring_enter. Both carry MSG_DONTWAIT, so each
// completes inside that call (with what the socket had or took, or
// -EAGAIN), never later: the loop treats the results exactly as read(2)'s
// and write(2)'s (a short send leaves the rest in spill and the connection
// leaves the loop). Readiness still comes from epoll.

const (
	uringOpSend       = 26
	uringOpRecv       = 27
	uringEnterGetEv   = 1 << 0
	uringFeatSingleMM = 1 << 0
	uringOffSQRing    = 0
	uringOffSQEs      = 0x10000000
	uringEntries      = 256
)

type uringSQOffsets struct {
	Head, Tail, RingMask, RingEntries, Flags, Dropped, Array, Resv1 uint32
	UserAddr                                                        uint64
}

type uringCQOffsets struct {
	Head, Tail, RingMask, RingEntries, Overflow, Cqes, Flags, Resv1 uint32
	UserAddr                                                        uint64
}

type uringParams struct {
	SQEntries, CQEntries, Flags, SQThreadCPU, SQThreadIdle, Features, WQFd uint32
	Resv                                                                   [3]uint32
	SQOff                                                                  uringSQOffsets
	CQOff                                                                  uringCQOffsets
}

type uringSQE struct {
	Opcode      uint8
	Flags       uint8
	Ioprio      uint16
	Fd          int32
	Off         uint64
	Addr        uint64
	Len         uint32
	OpFlags     uint32
	UserData    uint64
	BufGroup    uint16
	Personality uint16
	SpliceFdIn  int32
	Addr3       uint64
	Pad         uint64
}

type uringCQE struct {
	UserData uint64
	Res      int32
	Flags    uint32
}

// ioRing is one loop's io_uring, for its batched receives and sends.
type ioRing struct {
	fd             int
	sqHead, sqTail *uint32
	sqMask         uint32
	sqes           []uringSQE
	cqHead, cqTail *uint32
	cqMask         uint32
	cqes           []uringCQE
	maps           [][]byte
}

// errNoSingleMmap: a kernel too old for the ring layout used here.
var errNoSingleMmap = errors.New("io_uring: kernel without IORING_FEAT_SINGLE_MMAP")

// newIORing sets up a ring, or fails when the kernel does not allow
// io_uring (too old, or disabled by sysctl or seccomp).
func newIORing() (*ioRing, error) {
	var p uringParams
	fd, _, errno := unix.Syscall(unix.SYS_IO_URING_SETUP, uringEntries, uintptr(unsafe.Pointer(&p)), 0)
	if errno != 0 {
		return nil, fmt.Errorf("io_uring_setup: %w", errno)
	}
	r := &ioRing{fd: int(fd)}
	if p.Features&uringFeatSingleMM == 0 {
		r.close()
		return nil, errNoSingleMmap
	}
	sqSize := p.SQOff.Array + p.SQEntries*4
	cqSize := p.CQOff.Cqes + p.CQEntries*uint32(unsafe.Sizeof(uringCQE{}))
	rb, err := unix.Mmap(r.fd, uringOffSQRing, int(max(sqSize, cqSize)), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED|unix.MAP_POPULATE)
	if err != nil {
		r.close()
		return nil, fmt.Errorf("io_uring: mmap rings: %w", err)
	}
	r.maps = append(r.maps, rb)
	sb, err := unix.Mmap(r.fd, uringOffSQEs, int(p.SQEntries)*int(unsafe.Sizeof(uringSQE{})), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED|unix.MAP_POPULATE)
	if err != nil {
		r.close()
		return nil, fmt.Errorf("io_uring: mmap sqes: %w", err)
	}
	r.maps = append(r.maps, sb)
	base := unsafe.Pointer(&rb[0])
	r.sqHead = (*uint32)(unsafe.Add(base, p.SQOff.Head))
	r.sqTail = (*uint32)(unsafe.Add(base, p.SQOff.Tail))
	r.sqMask = *(*uint32)(unsafe.Add(base, p.SQOff.RingMask))
	r.sqes = unsafe.Slice((*uringSQE)(unsafe.Pointer(&sb[0])), p.SQEntries)
	r.cqHead = (*uint32)(unsafe.Add(base, p.CQOff.Head))
	r.cqTail = (*uint32)(unsafe.Add(base, p.CQOff.Tail))
	r.cqMask = *(*uint32)(unsafe.Add(base, p.CQOff.RingMask))
	r.cqes = unsafe.Slice((*uringCQE)(unsafe.Add(base, p.CQOff.Cqes)), p.CQEntries)
	// The SQ array maps ring slots to SQEs one to one, once.
	array := unsafe.Slice((*uint32)(unsafe.Add(base, p.SQOff.Array)), p.SQEntries)
	for i := range array {
		array[i] = uint32(i)
	}
	return r, nil
}

func (r *ioRing) close() {
	for _, m := range r.maps {
		_ = unix.Munmap(m)
	}
	r.maps = nil
	_ = unix.Close(r.fd)
}

// size is how many sends one submission takes.
func (r *ioRing) size() int { return len(r.sqes) }

// sendAll sends each of bufs on its fd in one io_uring_enter and stores
// each send's result (bytes sent, or -errno) in res. len(bufs) must not
// exceed size(). The buffers must stay untouched until it returns.
func (r *ioRing) sendAll(fds []int, bufs [][]byte, res []int32) error {
	return r.submitAll(uringOpSend, unix.MSG_DONTWAIT|unix.MSG_NOSIGNAL, fds, bufs, res)
}

// recvAll receives into each of bufs from its fd in one io_uring_enter:
// res gets the bytes received, 0 at the end of the stream, or -errno
// (-EAGAIN when nothing was there).
func (r *ioRing) recvAll(fds []int, bufs [][]byte, res []int32) error {
	return r.submitAll(uringOpRecv, unix.MSG_DONTWAIT, fds, bufs, res)
}

func (r *ioRing) submitAll(op uint8, flags uint32, fds []int, bufs [][]byte, res []int32) error {
	n := uint32(len(bufs))
	tail := atomic.LoadUint32(r.sqTail)
	for i, b := range bufs {
		s := &r.sqes[(tail+uint32(i))&r.sqMask]
		*s = uringSQE{Opcode: op, Fd: int32(fds[i]), Len: uint32(len(b)), OpFlags: flags, UserData: uint64(i)}
		if len(b) > 0 {
			s.Addr = uint64(uintptr(unsafe.Pointer(&b[0])))
		}
	}
	atomic.StoreUint32(r.sqTail, tail+n)
	for got := uint32(0); got < n; {
		// Non-blocking operations complete while they are submitted; waiting
		// for all of them costs nothing more, and covers a kernel that
		// would complete one later.
		toSubmit := uintptr(0)
		if got == 0 {
			toSubmit = uintptr(n)
		}
		_, _, errno := unix.Syscall6(unix.SYS_IO_URING_ENTER, uintptr(r.fd), toSubmit, uintptr(n-got), uringEnterGetEv, 0, 0)
		if errno != 0 && errno != unix.EINTR {
			return fmt.Errorf("io_uring_enter: %w", errno)
		}
		head := atomic.LoadUint32(r.cqHead)
		end := atomic.LoadUint32(r.cqTail)
		for ; head != end; head++ {
			c := &r.cqes[head&r.cqMask]
			if c.UserData < uint64(len(res)) {
				res[c.UserData] = c.Res
				got++
			}
		}
		atomic.StoreUint32(r.cqHead, head)
	}
	return nil
}

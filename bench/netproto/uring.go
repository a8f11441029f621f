package main

import (
	"fmt"
	"runtime"
	"sync/atomic"
	"unsafe"

	"golang.org/x/sys/unix"
)

// A minimal io_uring event loop per core: a multishot accept on its own
// SO_REUSEPORT listener, a multishot receive per connection into buffers
// from a provided-buffer ring, one send in flight per connection (replies
// that arrive meanwhile are gathered and sent when it completes), and one
// io_uring_enter per loop pass that both submits and waits.

const (
	opAccept = 13
	opSend   = 26
	opRecv   = 27

	setupSingleIssuer = 1 << 12
	setupDeferTaskrun = 1 << 13
	setupNoSQArray    = 1 << 16
	featSingleMmap    = 1 << 0

	offSQRing = 0
	offSQEs   = 0x10000000

	enterGetEvents = 1 << 0

	sqeBufferSelect = 1 << 5
	acceptMultishot = 1 << 0
	recvMultishot   = 1 << 1

	cqeFBuffer = 1 << 0
	cqeFMore   = 1 << 1

	registerPbufRing = 22

	ringEntries = 4096
	bufCount    = 1024 // provided buffers per loop
	bufSize     = 16 << 10
	bufGroup    = 0
)

type sqringOffsets struct {
	Head, Tail, RingMask, RingEntries, Flags, Dropped, Array, Resv1 uint32
	UserAddr                                                        uint64
}

type cqringOffsets struct {
	Head, Tail, RingMask, RingEntries, Overflow, Cqes, Flags, Resv1 uint32
	UserAddr                                                        uint64
}

type uringParams struct {
	SQEntries, CQEntries, Flags, SQThreadCPU, SQThreadIdle, Features, WQFd uint32
	Resv                                                                   [3]uint32
	SQOff                                                                  sqringOffsets
	CQOff                                                                  cqringOffsets
}

type sqe struct {
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

type cqe struct {
	UserData uint64
	Res      int32
	Flags    uint32
}

type bufReg struct {
	RingAddr    uint64
	RingEntries uint32
	Bgid        uint16
	Flags       uint16
	Resv        [3]uint64
}

type ring struct {
	fd             int
	sqHead, sqTail *uint32
	sqMask         uint32
	sqes           []sqe
	cqHead, cqTail *uint32
	cqMask         uint32
	cqes           []cqe
	tail           uint32 // our SQ tail, published before enter
	submitted      uint32 // the tail at the last enter
	bufRing        []byte // io_uring_buf entries; the tail is at byte 14
	bufTail        uint16
	bufs           []byte // bufCount × bufSize
	conns          map[int32]*uconn
	lfd            int
	serve          serveFunc
}

type uconn struct {
	fd       int32
	in       []byte // a partial request carried over
	out      []byte // replies gathered while a send is in flight
	sending  []byte // the send in flight
	inFlight bool
	closing  bool
}

func newRing(lfd int, serve serveFunc) (*ring, error) {
	var p uringParams
	p.Flags = setupSingleIssuer | setupDeferTaskrun | setupNoSQArray
	fd, _, errno := unix.Syscall(unix.SYS_IO_URING_SETUP, ringEntries, uintptr(unsafe.Pointer(&p)), 0)
	if errno != 0 {
		return nil, fmt.Errorf("io_uring_setup: %w", errno)
	}
	if p.Features&featSingleMmap == 0 {
		return nil, fmt.Errorf("io_uring: no single mmap")
	}
	sqSize := p.SQOff.Array + p.SQEntries*4
	if p.Flags&setupNoSQArray != 0 {
		sqSize = p.SQOff.RingEntries + 64 // the array is absent; map past the fields
	}
	cqSize := p.CQOff.Cqes + p.CQEntries*uint32(unsafe.Sizeof(cqe{}))
	size := max(sqSize, cqSize)
	rb, err := unix.Mmap(int(fd), offSQRing, int(size), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED|unix.MAP_POPULATE)
	if err != nil {
		return nil, fmt.Errorf("mmap rings: %w", err)
	}
	sb, err := unix.Mmap(int(fd), offSQEs, int(p.SQEntries)*int(unsafe.Sizeof(sqe{})), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED|unix.MAP_POPULATE)
	if err != nil {
		return nil, fmt.Errorf("mmap sqes: %w", err)
	}
	base := unsafe.Pointer(&rb[0])
	r := &ring{
		fd:     int(fd),
		sqHead: (*uint32)(unsafe.Add(base, p.SQOff.Head)),
		sqTail: (*uint32)(unsafe.Add(base, p.SQOff.Tail)),
		sqMask: *(*uint32)(unsafe.Add(base, p.SQOff.RingMask)),
		sqes:   unsafe.Slice((*sqe)(unsafe.Pointer(&sb[0])), p.SQEntries),
		cqHead: (*uint32)(unsafe.Add(base, p.CQOff.Head)),
		cqTail: (*uint32)(unsafe.Add(base, p.CQOff.Tail)),
		cqMask: *(*uint32)(unsafe.Add(base, p.CQOff.RingMask)),
		cqes:   unsafe.Slice((*cqe)(unsafe.Add(base, p.CQOff.Cqes)), p.CQEntries),
		conns:  map[int32]*uconn{},
		lfd:    lfd,
		serve:  serve,
	}
	r.tail = atomic.LoadUint32(r.sqTail)
	r.submitted = r.tail
	// The provided-buffer ring.
	r.bufRing, err = unix.Mmap(-1, 0, bufCount*16, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS|unix.MAP_POPULATE)
	if err != nil {
		return nil, err
	}
	r.bufs, err = unix.Mmap(-1, 0, bufCount*bufSize, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		return nil, err
	}
	reg := bufReg{RingAddr: uint64(uintptr(unsafe.Pointer(&r.bufRing[0]))), RingEntries: bufCount, Bgid: bufGroup}
	if _, _, errno := unix.Syscall6(unix.SYS_IO_URING_REGISTER, fd, registerPbufRing, uintptr(unsafe.Pointer(&reg)), 1, 0, 0); errno != 0 {
		return nil, fmt.Errorf("register buffer ring: %w", errno)
	}
	for i := range bufCount {
		r.provide(uint16(i))
	}
	r.publishBufs()
	return r, nil
}

// provide puts buffer bid back in the ring (published by publishBufs).
func (r *ring) provide(bid uint16) {
	e := unsafe.Pointer(&r.bufRing[int(r.bufTail&(bufCount-1))*16])
	*(*uint64)(e) = uint64(uintptr(unsafe.Pointer(&r.bufs[int(bid)*bufSize])))
	*(*uint32)(unsafe.Add(e, 8)) = bufSize
	*(*uint16)(unsafe.Add(e, 12)) = bid
	r.bufTail++
}

func (r *ring) publishBufs() {
	atomic.StoreUint32((*uint32)(unsafe.Pointer(&r.bufRing[12])), uint32(r.bufTail)<<16|uint32(*(*uint16)(unsafe.Pointer(&r.bufRing[12]))))
}

// get returns the next free SQE, submitting first if the ring is full.
func (r *ring) get() *sqe {
	for r.tail-atomic.LoadUint32(r.sqHead) >= uint32(len(r.sqes)) {
		r.enter(0)
	}
	s := &r.sqes[r.tail&r.sqMask]
	*s = sqe{}
	r.tail++
	return s
}

func (r *ring) enter(wait uint32) {
	atomic.StoreUint32(r.sqTail, r.tail)
	n := r.tail - r.submitted
	flags := uintptr(0)
	if wait > 0 {
		flags = enterGetEvents
	}
	for {
		done, _, errno := unix.Syscall6(unix.SYS_IO_URING_ENTER, uintptr(r.fd), uintptr(n), uintptr(wait), flags, 0, 0)
		if errno == unix.EINTR {
			continue
		}
		if errno == 0 {
			r.submitted += uint32(done)
		}
		return
	}
}

func (r *ring) armAccept() {
	s := r.get()
	s.Opcode, s.Fd, s.Ioprio = opAccept, int32(r.lfd), acceptMultishot
	s.OpFlags = unix.SOCK_CLOEXEC
	s.UserData = 1
}

func (r *ring) armRecv(fd int32) {
	s := r.get()
	s.Opcode, s.Fd, s.Ioprio, s.Flags, s.BufGroup = opRecv, fd, recvMultishot, sqeBufferSelect, bufGroup
	s.UserData = uint64(fd)<<8 | 2
}

func (r *ring) send(c *uconn) {
	c.sending, c.out = c.out, c.sending[:0]
	c.inFlight = true
	s := r.get()
	s.Opcode, s.Fd = opSend, c.fd
	s.Addr, s.Len = uint64(uintptr(unsafe.Pointer(&c.sending[0]))), uint32(len(c.sending))
	s.UserData = uint64(c.fd)<<8 | 3
}

func (r *ring) run() error {
	runtime.LockOSThread()
	r.armAccept()
	var y yielder
	for {
		y.maybe()
		r.enter(1)
		head := *r.cqHead
		tail := atomic.LoadUint32(r.cqTail)
		bufs := false
		for ; head != tail; head++ {
			e := r.cqes[head&r.cqMask]
			switch e.UserData & 0xff {
			case 1: // accept
				if e.Res >= 0 {
					_ = unix.SetsockoptInt(int(e.Res), unix.IPPROTO_TCP, unix.TCP_NODELAY, 1)
					r.conns[e.Res] = &uconn{fd: e.Res, out: make([]byte, 0, 16<<10), sending: make([]byte, 0, 16<<10)}
					r.armRecv(e.Res)
				}
				if e.Flags&cqeFMore == 0 {
					r.armAccept()
				}
			case 2: // recv
				fd := int32(e.UserData >> 8)
				c := r.conns[fd]
				if e.Flags&cqeFBuffer != 0 {
					bid := uint16(e.Flags >> 16)
					if c != nil && e.Res > 0 {
						data := r.bufs[int(bid)*bufSize : int(bid)*bufSize+int(e.Res)]
						if len(c.in) > 0 {
							c.in = append(c.in, data...)
							data = c.in
						}
						done, out := r.serve(data, c.out)
						c.out = out
						c.in = append(c.in[:0], data[done:]...)
						if len(c.out) > 0 && !c.inFlight {
							r.send(c)
						}
					}
					r.provide(bid)
					bufs = true
				}
				if c == nil {
					continue
				}
				if e.Res == 0 || (e.Res < 0 && e.Res != -int32(unix.ENOBUFS)) {
					r.closeConn(c)
					continue
				}
				if e.Flags&cqeFMore == 0 {
					r.armRecv(fd)
				}
			case 3: // send
				fd := int32(e.UserData >> 8)
				c := r.conns[fd]
				if c == nil {
					continue
				}
				c.inFlight = false
				if e.Res < 0 {
					r.closeConn(c)
					continue
				}
				if int(e.Res) < len(c.sending) {
					// A short send: the rest goes first.
					rest := append([]byte(nil), c.sending[e.Res:]...)
					c.out = append(rest, c.out...)
				}
				if c.closing {
					r.closeConn(c)
					continue
				}
				if len(c.out) > 0 {
					r.send(c)
				}
			}
		}
		atomic.StoreUint32(r.cqHead, head)
		if bufs {
			r.publishBufs()
		}
	}
}

func (r *ring) closeConn(c *uconn) {
	if c.inFlight {
		c.closing = true
		return
	}
	delete(r.conns, c.fd)
	_ = unix.Close(int(c.fd))
}

// serveURing runs loops rings, each on its own SO_REUSEPORT listener of
// the same port.
func serveURing(addr string, loops int, serve serveFunc) (string, error) {
	var got string
	errc := make(chan error, loops)
	for i := range loops {
		lfd, a, err := listenFD(addr, true)
		if err != nil {
			return "", err
		}
		if i == 0 {
			got, addr = a, a
		}
		ready := make(chan error)
		go func() {
			runtime.LockOSThread()
			r, err := newRing(lfd, serve)
			ready <- err
			if err == nil {
				errc <- r.run()
			}
		}()
		if err := <-ready; err != nil {
			return "", err
		}
	}
	go func() { panic(<-errc) }()
	return got, nil
}

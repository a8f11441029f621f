package main

import (
	"net"
	"runtime"
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// econn is one connection of the epoll model.
type econn struct {
	fd      int
	in      []byte
	have    int
	out     []byte
	pending []byte // reply bytes a full socket buffer did not take
}

var econns [1 << 16]atomic.Pointer[econn]

// listenFD opens a non-blocking listening socket on addr ("127.0.0.1:0")
// and returns it with the address it got. With reusePort (SO_REUSEPORT)
// several loops can each listen on the same port and the kernel spreads
// connections over them.
func listenFD(addr string, reusePort bool) (int, string, error) {
	ta, err := net.ResolveTCPAddr("tcp4", addr)
	if err != nil {
		return 0, "", err
	}
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return 0, "", err
	}
	_ = unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_REUSEADDR, 1)
	if reusePort {
		_ = unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_REUSEPORT, 1)
	}
	sa := &unix.SockaddrInet4{Port: ta.Port}
	copy(sa.Addr[:], ta.IP.To4())
	if err := unix.Bind(fd, sa); err != nil {
		return 0, "", err
	}
	if err := unix.Listen(fd, 4096); err != nil {
		return 0, "", err
	}
	got, err := unix.Getsockname(fd)
	if err != nil {
		return 0, "", err
	}
	g := got.(*unix.SockaddrInet4)
	return fd, (&net.TCPAddr{IP: net.IP(g.Addr[:]), Port: g.Port}).String(), nil
}

// serveEpoll is an event loop per core over epoll, as Redis and memcached
// run: each loop waits for ready connections, reads each once, answers
// everything complete, writes the replies at once.
func serveEpoll(lfd, loops int, serve serveFunc) error {
	eps := make([]int, loops)
	for i := range eps {
		ep, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
		if err != nil {
			return err
		}
		eps[i] = ep
	}
	if err := unix.EpollCtl(eps[0], unix.EPOLL_CTL_ADD, lfd, &unix.EpollEvent{Events: unix.EPOLLIN, Fd: int32(lfd)}); err != nil {
		return err
	}
	next := 0
	errc := make(chan error, loops)
	for i := range eps {
		go func(ep int) {
			runtime.LockOSThread()
			events := make([]unix.EpollEvent, 256)
			var y yielder
			for {
				y.maybe()
				n, err := unix.EpollWait(ep, events, -1)
				if err == unix.EINTR {
					continue
				}
				if err != nil {
					errc <- err
					return
				}
				for _, ev := range events[:n] {
					fd := int(ev.Fd)
					if fd == lfd {
						for {
							nfd, _, err := unix.Accept4(lfd, unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC)
							if err != nil {
								break
							}
							_ = unix.SetsockoptInt(nfd, unix.IPPROTO_TCP, unix.TCP_NODELAY, 1)
							econns[nfd].Store(&econn{fd: nfd, in: make([]byte, 16<<10), out: make([]byte, 0, 16<<10)})
							_ = unix.EpollCtl(eps[next%loops], unix.EPOLL_CTL_ADD, nfd, &unix.EpollEvent{Events: unix.EPOLLIN, Fd: int32(nfd)})
							next++
						}
						continue
					}
					c := econns[fd].Load()
					if c == nil {
						continue
					}
					if ev.Events&unix.EPOLLOUT != 0 && len(c.pending) > 0 {
						w, err := unix.Write(fd, c.pending)
						if err != nil && err != unix.EAGAIN {
							eclose(ep, c)
							continue
						}
						c.pending = c.pending[max(w, 0):]
						if len(c.pending) == 0 {
							_ = unix.EpollCtl(ep, unix.EPOLL_CTL_MOD, fd, &unix.EpollEvent{Events: unix.EPOLLIN, Fd: int32(fd)})
						}
					}
					if ev.Events&(unix.EPOLLIN|unix.EPOLLHUP|unix.EPOLLERR) == 0 {
						continue
					}
					r, err := unix.Read(fd, c.in[c.have:])
					if r <= 0 {
						if err == unix.EAGAIN {
							continue
						}
						eclose(ep, c)
						continue
					}
					c.have += r
					done, out := serve(c.in[:c.have], c.out[:0])
					c.out = out
					c.have = copy(c.in, c.in[done:c.have])
					if len(out) == 0 {
						continue
					}
					if len(c.pending) > 0 {
						c.pending = append(c.pending, out...)
						continue
					}
					w, err := unix.Write(fd, out)
					if err != nil && err != unix.EAGAIN {
						eclose(ep, c)
						continue
					}
					if w < len(out) {
						c.pending = append([]byte(nil), out[max(w, 0):]...)
						_ = unix.EpollCtl(ep, unix.EPOLL_CTL_MOD, fd, &unix.EpollEvent{Events: unix.EPOLLIN | unix.EPOLLOUT, Fd: int32(fd)})
					}
				}
			}
		}(eps[i])
	}
	return <-errc
}

func eclose(ep int, c *econn) {
	_ = unix.EpollCtl(ep, unix.EPOLL_CTL_DEL, c.fd, nil)
	econns[c.fd].Store(nil)
	_ = unix.Close(c.fd)
}

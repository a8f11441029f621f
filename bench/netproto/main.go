// Command netproto is a set of null servers, one per connection model,
// that answer RESP (GET, SET, PING) or memcached text (get, set) with
// canned replies and no store: the I/O floor of each model, measured
// with the peers' own load tools (issue 17, docs/performance.md).
//
//	netproto -model goroutine|epoll|gnet|uring -proto resp|memcache [-loops N] [-addr 127.0.0.1:0]
//
// It prints "listening ADDR" once it serves, and runs until killed.
package main

import (
	"flag"
	"fmt"
	"net"
	"os"
	"runtime"

	"golang.org/x/sys/unix"
)

func main() {
	model := flag.String("model", "goroutine", "goroutine, epoll, gnet or uring")
	proto := flag.String("proto", "resp", "resp or memcache")
	addr := flag.String("addr", "127.0.0.1:0", "listen address")
	loops := flag.Int("loops", runtime.GOMAXPROCS(0), "event loops (epoll, gnet, uring)")
	flag.Parse()
	serve := serveRESP
	if *proto == "memcache" {
		serve = serveMemcache
	}
	if err := run(*model, *addr, *loops, serve); err != nil {
		fmt.Fprintln(os.Stderr, "netproto:", err)
		os.Exit(1)
	}
}

func run(model, addr string, loops int, serve serveFunc) error {
	switch model {
	case "goroutine":
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			return err
		}
		fmt.Println("listening", ln.Addr())
		return serveGoroutines(ln, serve)
	case "epoll":
		lfd, a, err := listenFD(addr)
		if err != nil {
			return err
		}
		fmt.Println("listening", a)
		return serveEpoll(lfd, loops, serve)
	case "gnet":
		// gnet binds itself: find a free port first.
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			return err
		}
		a := ln.Addr().String()
		ln.Close()
		fmt.Println("listening", a)
		return serveGnet(a, loops, serve)
	case "uring":
		a, err := serveURing(addr, loops, serve)
		if err != nil {
			return err
		}
		fmt.Println("listening", a)
		select {}
	}
	return fmt.Errorf("unknown model %q", model)
}

// listenReuse is listenFD with SO_REUSEPORT, so several loops can each
// listen on the same port and the kernel spreads connections over them.
func listenReuse(addr string) (int, string, error) {
	ta, err := net.ResolveTCPAddr("tcp4", addr)
	if err != nil {
		return 0, "", err
	}
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return 0, "", err
	}
	_ = unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_REUSEADDR, 1)
	_ = unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_REUSEPORT, 1)
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

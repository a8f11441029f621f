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
	"time"
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
		lfd, a, err := listenFD(addr, false)
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

// yielder makes a loop goroutine yield its processor every 8 ms, as
// MiniKV's event loop does (internal/server, loopYield): a goroutine that
// runs 10 ms on one scheduling tick is preempted by the runtime's sysmon,
// which, finding it in its blocking wait, takes its processor away and
// goes back to polling every 20 µs.
type yielder struct{ last time.Time }

func (y *yielder) maybe() {
	if now := time.Now(); now.Sub(y.last) >= 8*time.Millisecond {
		y.last = now
		runtime.Gosched()
	}
}

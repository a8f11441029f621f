package main

import (
	"github.com/panjf2000/gnet/v2"
)

// gnetServer is gnet v2's event loop per core (epoll, its own buffers).
type gnetServer struct {
	gnet.BuiltinEventEngine
	serve serveFunc
}

func (s *gnetServer) OnTraffic(c gnet.Conn) gnet.Action {
	in, _ := c.Peek(-1)
	out, _ := c.Context().([]byte)
	n, out := s.serve(in, out[:0])
	_, _ = c.Discard(n)
	if len(out) > 0 {
		_, _ = c.Write(out)
	}
	c.SetContext(out)
	return gnet.None
}

func serveGnet(addr string, loops int, serve serveFunc) error {
	return gnet.Run(&gnetServer{serve: serve}, "tcp://"+addr, gnet.WithNumEventLoop(loops), gnet.WithReusePort(false))
}

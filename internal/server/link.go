package server

import (
	"net"
	"sync/atomic"
	"time"
)

// NewLinkConn returns a Conn over nc, a connection MiniKV opened itself
// (a replica's link to its primary), for a protocol handler that runs the
// commands the link reads: the handler gets the Conn's counters, identity
// and write path as any client's. The core does not serve it (no read
// loop, deadlines or idle timeout, no slot among max-connections): the
// link reads nc itself and closes it. ListLinkConn lists it among the
// connections (CLIENT LIST, CLIENT KILL), as Redis lists its primary's
// link.
func (s *Server) NewLinkConn(nc net.Conn, proto Protocol) *Conn {
	c := &Conn{srv: s, nc: nc, raddr: nc.RemoteAddr(), laddr: nc.LocalAddr(), proto: proto,
		id: s.nextConnID.Add(1), created: time.Now(), authed: true, idleExempt: true}
	c.diskMark = s.store.DiskMark()
	c.lastCmd.Store(c.created.UnixNano())
	_, c.tcp = nc.(*net.TCPConn)
	c.ctl.init(nc)
	return c
}

// ListLinkConn lists c, a NewLinkConn whose handler is h, among the
// server's connections (EachConn: CLIENT LIST shows it, CLIENT KILL
// closes its socket) until unlist is called, when its counters join
// the closed connections'. It takes no slot among max-connections and
// Shutdown does not wait for it.
func (s *Server) ListLinkConn(c *Conn, h Handler) (unlist func()) {
	c.ctl.handler.Store(&h)
	s.mu.Lock()
	s.conns[c] = struct{}{}
	s.mu.Unlock()
	return func() {
		s.mu.Lock()
		if _, ok := s.conns[c]; ok {
			delete(s.conns, c)
			s.closed.addFrom(&c.stats)
		}
		s.mu.Unlock()
	}
}

// Ran stamps the time of the link's last command (CLIENT LIST's idle):
// the core stamps its own connections' as it reads them.
func (c *Conn) Ran() { c.lastCmd.Store(time.Now().UnixNano()) }

// writeGate decides whether clients' writes are taken, on every port: a
// replica refuses them (replica-read-only), a primary with too few
// replicas in reach too (min-replicas-to-write). Set by the RESP
// protocol's replication; nil, one atomic load per write, when nothing
// refuses.
type writeGate struct{ fn atomic.Pointer[func() string] }

// SetWriteGate installs fn, which returns why a client's write is refused
// (the words of Redis's error: "READONLY ...", "NOREPLICAS ...") or ""
// to take it; nil removes the gate.
func (s *Server) SetWriteGate(fn func() string) {
	if fn == nil {
		s.gate.fn.Store(nil)
		return
	}
	s.gate.fn.Store(&fn)
}

// WriteRefusal returns why clients' writes are refused now, or "".
func (s *Server) WriteRefusal() string {
	if f := s.gate.fn.Load(); f != nil {
		return (*f)()
	}
	return ""
}

// SetPassEnd makes every event loop run fn after each pass, once the
// pass's replies are written (nil: nothing): a primary encodes its
// replication stream there (replication.Source.EncodeNow).
func (s *Server) SetPassEnd(fn func()) {
	if fn == nil {
		s.passEnd.Store(nil)
		return
	}
	s.passEnd.Store(&fn)
}

// InPass reports whether an event loop is inside a pass, whose end will
// run the SetPassEnd function: work that function does (a primary's
// stream encoding) needs no goroutine woken for it meanwhile.
func (s *Server) InPass() bool { return s.passes.Load() > 0 }

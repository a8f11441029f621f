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
// loop, deadlines or idle timeout, no slot among max-connections, not
// listed by CLIENT LIST): the link reads nc itself and closes it.
func (s *Server) NewLinkConn(nc net.Conn, proto Protocol) *Conn {
	c := &Conn{srv: s, nc: nc, raddr: nc.RemoteAddr(), laddr: nc.LocalAddr(), proto: proto,
		id: s.nextConnID.Add(1), created: time.Now(), authed: true, idleExempt: true}
	c.diskMark = s.store.DiskMark()
	c.lastCmd.Store(c.created.UnixNano())
	_, c.tcp = nc.(*net.TCPConn)
	c.ctl.init(nc)
	return c
}

// readOnly is why clients' writes are refused on every port, or nil: a
// replica's (replica-read-only), set by the RESP protocol's replication.
type readOnly struct{ reason atomic.Pointer[string] }

// SetReadOnly makes every port refuse clients' writes with reason (the
// words of Redis's -READONLY error), or, with "", lets them through again.
func (s *Server) SetReadOnly(reason string) {
	if reason == "" {
		s.ro.reason.Store(nil)
		return
	}
	s.ro.reason.Store(&reason)
}

// ReadOnly returns why clients' writes are refused, or "".
func (s *Server) ReadOnly() string {
	if r := s.ro.reason.Load(); r != nil {
		return *r
	}
	return ""
}

package server

import "errors"

// ErrWouldBlock is what a Conn's Read returns in an event loop when no
// byte has arrived: the loop reads again when the socket is readable.
var ErrWouldBlock = errors.New("server: no input yet")

// LoopConns reports how many connections the event loops took, and how
// many of those left for a goroutine of their own (a request larger than
// the read buffer, a blocking command, a subscriber, ...).
func (s *Server) LoopConns() (attached, departed uint64) {
	return s.loopAttached.Load(), s.loopDeparted.Load()
}

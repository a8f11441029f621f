//go:build !linux

package server

import (
	"errors"
)

// Event loops are Linux only (epoll); elsewhere every connection has a
// goroutine of its own.

type loopConn struct {
	spill   []byte
	closing bool
}

type eventLoop struct{}

func (s *Server) startLoops() error { return errors.New("event loops need Linux") }

func (s *Server) attach(*Conn) bool { return false }

func (l *eventLoop) shutdown() {}

func (l *eventLoop) kill(*Conn) {}

func (lc *loopConn) read(*Conn, []byte) (int, error)  { return 0, ErrWouldBlock }
func (lc *loopConn) write(*Conn, []byte) (int, error) { return 0, ErrWouldBlock }

// InLoop is always false without event loops.
func (c *Conn) InLoop() bool { return false }

// A LoopLoan is an event loop lent to a connection's work; there are none
// without event loops.
type LoopLoan struct{}

// LendLoop returns nil without event loops.
func (c *Conn) LendLoop() *LoopLoan { return nil }

// Rescue does nothing without event loops.
func (ln *LoopLoan) Rescue() {}

// Return does nothing without event loops.
func (ln *LoopLoan) Return() {}

// WatchFD needs an event loop: the caller reads fd itself.
func (s *Server) WatchFD(int, func() bool) (func(), bool) { return nil, false }

package server

import (
	"errors"
	"os"
	"sync/atomic"
	"time"
)

// Blocking commands (Redis's BLPOP, BZPOPMIN, ...) park a connection until
// another connection serves it. The protocol keeps the keys, the queues of
// waiters and the results; the core keeps the parking itself, behind a
// small API that knows nothing of keys:
//
//	w := c.NewWaiter("blpop")   // on the serving goroutine
//	(the protocol registers w where pushers will find it)
//	end, err := c.Block(w, deadline, fill)
//
//	// on any other goroutine (a pusher, CLIENT UNBLOCK):
//	if w.Claim() { (fill in the protocol's result); w.Deliver() }
//
// A Waiter is claimed at most once: by a pusher or CLIENT UNBLOCK (Claim,
// then Deliver once its result is complete), or by the blocked connection
// itself when its deadline passes, its client goes away or the server
// shuts down (Block cancels it). Whoever loses the race learns it from
// Claim's false, so an element is popped for a waiter only once the
// waiter can no longer give up: it reaches the waiter's reply, or it is
// never popped.
//
// While it waits, the serving goroutine reads its socket (fill), so a
// client that closes is seen at once and bytes that arrive (pipelined
// commands) are kept for after the reply; the wait costs no CPU. Deliver
// wakes it by setting the socket's read deadline in the past, as Shutdown
// does; the waiter's own timeout is the read deadline too. (Should
// connections move to an event loop, only this file changes.)

// Waiter states.
const (
	waitWaiting   uint32 = iota
	waitClaimed          // a claimer is filling in the result
	waitDelivered        // the result is complete
	waitCancelled        // the connection gave up: nobody may claim it
)

// Waiter is one blocked command of one connection.
type Waiter struct {
	c     *Conn
	cmd   string
	state atomic.Uint32
	ready chan struct{} // closed by Deliver
}

// NewWaiter returns a waiter for the connection's blocking command cmd
// (its name as CLIENT LIST shows it). Only the serving goroutine may call
// it, and it must then call Block.
func (c *Conn) NewWaiter(cmd string) *Waiter {
	w := &Waiter{c: c, cmd: cmd, ready: make(chan struct{})}
	c.blocked.Store(w)
	return w
}

// Blocked reports the name of the command the connection is blocked in,
// if it is blocked. It may be called from any goroutine.
func (c *Conn) Blocked() (cmd string, ok bool) {
	if w := c.blocked.Load(); w != nil {
		return w.cmd, true
	}
	return "", false
}

// Conn is the connection w belongs to.
func (w *Waiter) Conn() *Conn { return w.c }

// Waiting reports whether w may still be claimed.
func (w *Waiter) Waiting() bool { return w.state.Load() == waitWaiting }

// Claim takes w for the caller, which must then fill in the protocol's
// result and call Deliver. It reports false when w was claimed or given
// up already: the caller must leave it alone.
func (w *Waiter) Claim() bool { return w.state.CompareAndSwap(waitWaiting, waitClaimed) }

// Deliver hands the claimed w's result to its connection and wakes it.
// The result must be complete. Deliver touches the socket (the wake-up)
// before it marks w delivered, so nothing of it can reach the
// connection's next command.
func (w *Waiter) Deliver() {
	_ = w.c.nc.SetReadDeadline(aLongTimeAgo)
	w.state.Store(waitDelivered)
	close(w.ready)
}

// cancel gives w up for its own connection; false when a claimer was
// first (then the result is, or will shortly be, delivered).
func (w *Waiter) cancel() bool { return w.state.CompareAndSwap(waitWaiting, waitCancelled) }

// aLongTimeAgo is a read deadline in the past: it wakes a blocked Read.
var aLongTimeAgo = time.Unix(1, 0)

// BlockEnd is how a Block ended.
type BlockEnd uint8

const (
	// BlockServed: a claimer delivered w's result.
	BlockServed BlockEnd = iota
	// BlockTimeout: the deadline passed first.
	BlockTimeout
	// BlockClosed: the client went away or the server is shutting down;
	// the connection must close without a reply.
	BlockClosed
)

// Block parks the serving goroutine until w is delivered, the deadline
// passes (zero: no deadline), the client closes or the server shuts down.
// fill reads more of the client's input into the protocol's buffer
// without consuming any (bytes that arrive while blocked are served after
// the reply); it reports full when the buffer has no room, and then Block
// waits without reading. The error is the read error that ended a
// BlockClosed, if any. The idle timeout does not apply while blocked, as
// in Redis; the command timeout does not either, and both start again
// from the end of the block.
func (c *Conn) Block(w *Waiter, deadline time.Time, fill func() (full bool, err error)) (end BlockEnd, err error) {
	_ = c.nc.SetReadDeadline(deadline)
	defer c.unblock()
	for w.state.Load() == waitWaiting {
		if c.srv.shuttingDown.Load() {
			end = BlockClosed
			break
		}
		if !deadline.IsZero() && !time.Now().Before(deadline) {
			end = BlockTimeout
			break
		}
		if c.Killed() {
			end = BlockClosed
			break
		}
		full, rerr := fill()
		switch {
		case full:
			c.blockFull(w, deadline)
		case rerr == nil, errors.Is(rerr, os.ErrDeadlineExceeded):
			// Bytes kept, or a wake-up: look at the state again.
		default:
			end, err = BlockClosed, rerr
		}
		if end == BlockClosed {
			break
		}
	}
	if w.cancel() {
		return end, err
	}
	<-w.ready // claimed: the result is being filled in
	return BlockServed, nil
}

// blockFull waits, without reading, for w's delivery, its deadline, a
// CLIENT KILL or the server's shutdown: the protocol's buffer is full of
// requests that must wait for the blocked one. The client's going away
// is noticed after.
func (c *Conn) blockFull(w *Waiter, deadline time.Time) {
	var timeout <-chan time.Time
	if !deadline.IsZero() {
		t := time.NewTimer(time.Until(deadline))
		defer t.Stop()
		timeout = t.C
	}
	select {
	case <-w.ready:
	case <-timeout:
	case <-c.srv.closing:
	case <-c.KillCh():
	}
}

// unblock ends a Block: the connection is no longer listed as blocked,
// and the read deadline is what it would be after a command that just
// completed (the time blocked counts as activity, not idleness).
func (c *Conn) unblock() {
	c.blocked.Store(nil)
	_ = c.nc.SetReadDeadline(time.Time{})
	c.readDeadline = 0
	now := time.Now().UnixNano()
	c.lastCmd.Store(now)
	c.armRead(now)
	if c.srv.shuttingDown.Load() {
		// Checked after the sets: Shutdown's past deadline stays.
		_ = c.nc.SetReadDeadline(aLongTimeAgo)
	}
}

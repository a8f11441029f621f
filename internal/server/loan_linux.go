//go:build linux

package server

import (
	"time"

	"golang.org/x/sys/unix"
)

// Lending a loop. Work that almost always ends at once but may not (a
// Lua script: EVALSHA of a lock's release runs for microseconds, a
// `while true do end` until SCRIPT KILL) runs on the loop's goroutine, as
// Redis runs it on its one thread, instead of sending the connection to a
// goroutine of its own for good (that cost a script's client about 40 %
// of its CPU per request at redis-benchmark -P 1, docs/benchmarks.md).
// While it runs the loop's other connections wait, as Redis's clients
// do. When it has run long (the caller says when: busy-reply-threshold
// for a script), Rescue starts a stand-in goroutine that serves the
// other connections from the same epoll set (BUSY, SCRIPT KILL), until
// the work ends and Return takes the loop back, as Redis serves clients
// from inside a long script (processEventsWhileBlocked).
//
// The stand-in owns the loop's state (its connections, flush list, ring)
// while the lending goroutine is inside the work, which touches none of
// it; l.mu orders the hand-over both ways. It skips the lent connection
// and the wake-up eventfd: new connections, kills and shutdown wait for
// the loop itself.

// A LoopLoan is an event loop lent to one connection's work (LendLoop).
type LoopLoan struct {
	l *eventLoop
	c *Conn
}

// LendLoop lends c's event loop to work the Handler is about to run in
// Serve, or returns nil: c is not served by a loop, or the loop is being
// served by a stand-in (the Handler then detaches the request, as for a
// blocking command). Return must follow the work.
func (c *Conn) LendLoop() *LoopLoan {
	lc := c.lc
	if lc == nil {
		return nil
	}
	l := lc.loop
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.lentTo != nil || l.standIn != nil {
		return nil
	}
	l.lentTo = c
	return &lc.loan
}

// Rescue has a stand-in goroutine serve the loop's other connections
// until Return, if the loan is still running. Any goroutine may call it.
func (ln *LoopLoan) Rescue() {
	l := ln.l
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.lentTo != ln.c || l.standIn != nil || l.stop {
		return
	}
	done := make(chan struct{})
	l.standIn = done
	l.srv.log.Debug("event loop: long work; a stand-in serves the other connections", "conn_id", ln.c.id)
	// The loop's pass will not end soon: it no longer counts as one
	// (InPass), and the stand-in runs passEnd after each of its own.
	l.srv.passes.Add(-1)
	go l.serveStandIn(ln.c, done)
}

// Return ends the loan: the stand-in, if one was started, stops after
// its pass, and the loop is the caller's again.
func (ln *LoopLoan) Return() {
	l := ln.l
	l.mu.Lock()
	l.lentTo = nil
	done := l.standIn
	l.reclaim = done != nil
	l.mu.Unlock()
	if done == nil {
		return
	}
	<-done
	l.srv.passes.Add(1) // the loop's pass again, ended by the loop
	l.mu.Lock()
	l.standIn, l.reclaim = nil, false
	l.mu.Unlock()
}

// serveStandIn is the stand-in: passes over the loop's ready
// connections but lent, with read(2), until Return asks it to stop.
func (l *eventLoop) serveStandIn(lent *Conn, done chan struct{}) {
	defer close(done)
	events := make([]unix.EpollEvent, 64)
	for {
		l.mu.Lock()
		stop := l.reclaim
		l.mu.Unlock()
		if stop {
			return
		}
		n, err := unix.EpollWait(l.epfd, events, 10)
		if err != nil {
			n = 0
		}
		l.now = time.Now().UnixNano()
		served := 0
		for _, ev := range events[:n] {
			if int(ev.Fd) == l.wakefd {
				continue
			}
			if c := l.conns.get(ev.Fd); c != nil && c != lent {
				l.serve(c, true)
				served++
			}
		}
		// Input epoll no longer reports: what the ring read for the
		// lender's pass before the loop was lent, and complete requests
		// left in read buffers (past ReqsPerEvent).
		for _, c := range l.conns {
			if c == nil || c == lent {
				continue
			}
			if requests, _ := c.lc.h.Buffered(); c.lc.received || requests > 0 {
				l.serve(c, c.lc.received)
			}
		}
		l.flushAll()
		if f := l.srv.passEnd.Load(); f != nil {
			(*f)()
		}
		if served == 0 && n > 0 {
			// Only the lent connection or the eventfd is ready; they stay
			// ready (level-triggered) until the loop is back.
			time.Sleep(time.Millisecond)
		}
	}
}

package server

import (
	"crypto/tls"
	"errors"
	"io"
	"net"
	"os"
	"runtime/debug"
	"sync/atomic"
	"time"

	"github.com/minikv/minikv/internal/protocol/memcache"
)

// Per-connection counters. Each connection bumps its own (so two cores never
// fight over one cache line per request); stats sums the live connections
// and the totals of closed ones.
const (
	statCmdGet = iota
	statCmdSet
	statCmdFlush
	statCmdTouch
	statGetHits
	statGetMisses
	statDeleteHits
	statDeleteMisses
	statIncrHits
	statIncrMisses
	statDecrHits
	statDecrMisses
	statCASHits
	statCASMisses
	statCASBadval
	statTouchHits
	statTouchMisses
	statStoreTooLarge
	statStoreNoMemory
	statAuthCmds
	statAuthErrors
	statBytesRead
	statBytesWritten
	statIdleKicks
	statConnYields
	statCommandTimeouts
	statWriteTimeouts
	statCommands // every command run, on both ports (RESP total_commands_processed)
	numStats
)

type counters [numStats]atomic.Uint64

func (c *counters) add(i int, n uint64) { c[i].Add(n) }

func (c *counters) addFrom(o *counters) {
	for i := range o {
		c[i].Add(o[i].Load())
	}
}

// conn is one client connection.
type conn struct {
	srv     *Server
	nc      net.Conn
	id      uint64
	proto   protocol
	created time.Time
	lastCmd atomic.Int64 // Unix ns of the last complete command
	stats   counters
	w       *memcache.Writer // reply writer, owned by the serving goroutine

	// testHook, when set by a test, runs before each dispatched command.
	testHook atomic.Pointer[func()]

	// Owned by the serving goroutine.
	authed      bool  // passed auth (or none is configured)
	waiting     bool  // blocked between commands (a timeout now is idleness)
	writeFailed bool  // the last error came from a write
	armedAt     int64 // Unix ns when the command deadline was last set
}

// Read counts bytes for stats and lets conn stand in for the net.Conn under
// the codec's buffered reader.
func (c *conn) Read(p []byte) (int, error) {
	n, err := c.nc.Read(p)
	c.stats.add(statBytesRead, uint64(n))
	return n, err
}

// Write counts bytes for stats.
// Every write gets a fresh deadline, so a client that stops reading is cut
// off after WriteTimeout instead of pinning its goroutine and buffers.
func (c *conn) Write(p []byte) (int, error) {
	if t := c.srv.cfg.WriteTimeout; t > 0 {
		_ = c.nc.SetWriteDeadline(time.Now().Add(t))
	}
	n, err := c.nc.Write(p)
	c.stats.add(statBytesWritten, uint64(n))
	if err != nil {
		c.writeFailed = true
	}
	return n, err
}

// serve runs the connection until it ends, recovering from a panic so one
// bad request can only ever cost its own connection (as net/http does).
func (c *conn) serve() {
	defer c.srv.removeConn(c)
	defer c.nc.Close()
	defer func() {
		if r := recover(); r != nil {
			c.srv.log.Error("panic serving connection", "conn_id", c.id,
				"remote", c.nc.RemoteAddr().String(), "panic", r, "stack", string(debug.Stack()))
		}
	}()
	c.srv.log.Debug("connection opened", "conn_id", c.id, "remote", c.nc.RemoteAddr().String())
	c.authed = !c.srv.authRequired()
	var err error
	if tc, ok := c.nc.(*tls.Conn); ok {
		err = c.handshake(tc)
	}
	switch {
	case err != nil:
	case c.proto == protoRESP:
		err = c.serveRESP()
	default:
		err = c.serveMemcache()
	}
	switch {
	case err == nil, errors.Is(err, io.EOF), errors.Is(err, net.ErrClosed):
	case errors.Is(err, os.ErrDeadlineExceeded):
		switch {
		case c.srv.shuttingDown.Load():
		case c.writeFailed:
			c.stats.add(statWriteTimeouts, 1)
			c.srv.log.Debug("client stopped reading; connection closed", "conn_id", c.id)
		case c.waiting:
			c.stats.add(statIdleKicks, 1)
			c.srv.log.Debug("idle connection closed", "conn_id", c.id)
		default:
			c.stats.add(statCommandTimeouts, 1)
			c.srv.log.Debug("command not completed in time; connection closed", "conn_id", c.id)
		}
	default:
		c.srv.log.Debug("connection closed", "conn_id", c.id, "err", err)
	}
}

// armIdle sets the read deadline for the next command. It is called only
// when the read buffer is drained, i.e. after a complete command, so a client
// trickling a command one byte at a time is still cut off IdleTimeout after
// its last complete command. It reports false when the server is shutting
// down; the check comes after the deadline is set so that a concurrent
// Shutdown's past deadline is never overwritten unseen.
func (c *conn) armIdle() bool {
	if t := c.srv.cfg.IdleTimeout; t > 0 {
		_ = c.nc.SetReadDeadline(time.Now().Add(t))
	} else if c.srv.cfg.CommandTimeout > 0 {
		_ = c.nc.SetReadDeadline(time.Time{})
	}
	return !c.srv.shuttingDown.Load()
}

// waitForCommand blocks until the first byte of the next command arrives
// (under the idle deadline armIdle set), then arms the command deadline: from
// here the command must be complete within CommandTimeout, however slowly
// its bytes trickle in.
func (c *conn) waitForCommand(wait func() (byte, error)) error {
	c.waiting = true
	first, err := wait()
	if err != nil {
		return err // still waiting: a timeout here is an idle kick
	}
	c.waiting = false
	if first == tlsHandshakeRecord {
		// A TLS client on a plain port would otherwise sit until the
		// command deadline: no command of either protocol starts with
		// this byte. (Behind a TLS listener c reads decrypted bytes.)
		return errTLSOnPlainPort
	}
	c.armedAt = 0 // armIdle replaced the deadline: always re-arm
	c.armCommand(time.Now().UnixNano())
	return nil
}

// commandsDone records that the commands parsed since the last flush are
// complete: it stamps lastCmd and re-arms the command deadline. The
// connection loops call it where they flush, once per batch rather than
// once per command, so a pipelined batch reads the clock once (the clock
// read was 6 % of the server's CPU at P=16 when it was per command).
func (c *conn) commandsDone() {
	now := time.Now().UnixNano()
	c.lastCmd.Store(now)
	c.armCommand(now)
}

// armCommand (re)sets the command deadline. Called after every batch of
// complete commands, it touches the timer only once per half timeout, so a
// busy pipelined stream pays a clock read per batch and a timer reset rarely,
// while any one command still gets at least half the timeout.
func (c *conn) armCommand(now int64) {
	t := c.srv.cfg.CommandTimeout
	if t <= 0 || now-c.armedAt < int64(t/2) {
		return
	}
	if c.srv.shuttingDown.Load() {
		return // keep Shutdown's deadline in the past
	}
	c.armedAt = now
	deadline := time.Unix(0, now).Add(t)
	if it := c.srv.cfg.IdleTimeout; it > 0 {
		// Never later than the idle deadline counted from the last
		// complete command.
		if idle := time.Unix(0, c.lastCmd.Load()).Add(it); idle.Before(deadline) {
			deadline = idle
		}
	}
	_ = c.nc.SetReadDeadline(deadline)
}

// tlsHandshakeRecord is the first byte of a TLS ClientHello.
const tlsHandshakeRecord = 0x16

var errTLSOnPlainPort = errors.New("server: TLS handshake on a plain-text port")

// handshake completes a TLS handshake within CommandTimeout, so a client
// that connects and never speaks TLS cannot hold a connection slot.
func (c *conn) handshake(tc *tls.Conn) error {
	if t := c.srv.cfg.CommandTimeout; t > 0 {
		_ = tc.SetDeadline(time.Now().Add(t))
	}
	if err := tc.Handshake(); err != nil {
		return err
	}
	return tc.SetDeadline(time.Time{})
}

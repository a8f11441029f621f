package server

import (
	"crypto/tls"
	"errors"
	"io"
	"math"
	"net"
	"os"
	"runtime/debug"
	"sync/atomic"
	"time"

	"github.com/minikv/minikv/internal/protocol/memcache"
	"github.com/minikv/minikv/internal/store"
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
	authed       bool                      // passed auth (or none is configured)
	waiting      bool                      // blocked between commands (a timeout now is idleness)
	writeFailed  bool                      // the last error came from a write
	readDeadline int64                     // Unix ns of the read deadline armRead last set; 0: none
	writeArmedAt int64                     // Unix ns when the write deadline was last set
	flushAt      int64                     // the clock commandsDone read, for the flush right after it; 0: none
	keys         [store.MaxPrefetch][]byte // the keys of a batch being prefetched
}

// Read counts bytes for stats and lets conn stand in for the net.Conn under
// the codec's buffered reader.
func (c *conn) Read(p []byte) (int, error) {
	n, err := c.nc.Read(p)
	c.stats.add(statBytesRead, uint64(n))
	return n, err
}

// Write counts bytes for stats.
// Every write has a deadline at least half of WriteTimeout away (see
// armRead), so a client that stops reading is cut off instead of pinning
// its goroutine and buffers.
func (c *conn) Write(p []byte) (int, error) {
	// Durable mode: no reply leaves before the changes made so far are
	// durable (the store answers at once when there is no disk, and when
	// nothing is waiting). Every reply of both protocols passes here.
	if err := c.srv.store.Sync(); err != nil {
		c.srv.log.Error("durable write failed; connection closed without its replies", "conn_id", c.id, "err", err)
		return 0, err
	}
	if t := c.srv.cfg.WriteTimeout; t > 0 {
		now := c.flushAt
		c.flushAt = 0
		if now == 0 {
			now = time.Now().UnixNano()
		}
		if now-c.writeArmedAt >= int64(t/2) {
			c.writeArmedAt = now
			_ = c.nc.SetWriteDeadline(time.Unix(0, now).Add(t))
		}
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
	if err == nil {
		// The first deadline: an idle timeout counts from the connection's
		// creation until its first command.
		c.armRead(time.Now().UnixNano())
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

// Deadlines are set lazily, because setting one is a runtime timer
// operation and re-arming two or three of them per pipelined batch cost
// several percent of the server's CPU. The read deadline is re-armed only
// once it is half used (armRead), and a deadline that runs out while the
// connection waits for its next command is checked against the real rule
// before anything is closed (waitForCommand): the idle timeout still counts
// exactly from the last complete command, and without one an idle
// connection waits forever. A started command gets at least half of
// CommandTimeout, a reply write at least half of WriteTimeout.

// waitForCommand blocks until the first byte of the next command arrives,
// then arms the command deadline: from here the command must be complete
// within CommandTimeout, however slowly its bytes trickle in.
func (c *conn) waitForCommand(wait func() (byte, error)) error {
	c.waiting = true
	first, err := wait()
	for err != nil {
		if !errors.Is(err, os.ErrDeadlineExceeded) || !c.rearmIdle() {
			return err // still waiting: a timeout here is an idle kick
		}
		first, err = wait()
	}
	c.waiting = false
	if first == tlsHandshakeRecord {
		// A TLS client on a plain port would otherwise sit until the
		// command deadline: no command of either protocol starts with
		// this byte. (Behind a TLS listener c reads decrypted bytes.)
		return errTLSOnPlainPort
	}
	c.armRead(time.Now().UnixNano())
	return nil
}

// rearmIdle handles a read deadline that ran out while the connection was
// waiting for a command. It reports true, having set the right deadline,
// when the connection should go on waiting: the deadline was an earlier
// command's, and the idle timeout (if any) has not passed since the last
// complete command. It reports false when the connection must close: the
// server is shutting down, or the connection has been idle too long.
func (c *conn) rearmIdle() bool {
	if c.srv.shuttingDown.Load() {
		return false
	}
	var deadline time.Time // none: wait forever
	if it := c.srv.cfg.IdleTimeout; it > 0 {
		deadline = time.Unix(0, c.lastCmd.Load()).Add(it)
		if !time.Now().Before(deadline) {
			return false
		}
	}
	c.readDeadline = 0
	if !deadline.IsZero() {
		c.readDeadline = deadline.UnixNano()
	}
	_ = c.nc.SetReadDeadline(deadline)
	// Checked after the set, so a concurrent Shutdown's past deadline is
	// never overwritten unseen.
	return !c.srv.shuttingDown.Load()
}

// commandsDone records that the commands parsed since the last flush are
// complete: it stamps lastCmd and re-arms the read deadline. The
// connection loops call it where they flush, once per batch rather than
// once per command, so a pipelined batch reads the clock once (the clock
// read was 6 % of the server's CPU at P=16 when it was per command). The
// flush right after it reuses the reading; the loops clear it after that
// flush, so a write later in the stream (a reply larger than the buffer)
// never arms its deadline from an old clock.
func (c *conn) commandsDone() {
	now := time.Now().UnixNano()
	c.lastCmd.Store(now)
	c.flushAt = now
	c.armRead(now)
}

// armRead (re)sets the read deadline: CommandTimeout from now, and never
// later than IdleTimeout after the last complete command. It touches the
// timer only when the deadline in place is less than half the shorter
// timeout away, so a busy pipelined stream pays a timer reset rarely while
// any one command still gets at least half its timeout.
func (c *conn) armRead(now int64) {
	t, it := c.srv.cfg.CommandTimeout, c.srv.cfg.IdleTimeout
	period := t
	if it > 0 && (period <= 0 || it < period) {
		period = it
	}
	if period <= 0 || c.readDeadline != 0 && c.readDeadline-now >= int64(period/2) {
		return
	}
	if c.srv.shuttingDown.Load() {
		return // keep Shutdown's deadline in the past
	}
	deadline := int64(math.MaxInt64)
	if t > 0 {
		deadline = now + int64(t)
	}
	if it > 0 {
		deadline = min(deadline, c.lastCmd.Load()+int64(it))
	}
	c.readDeadline = deadline
	_ = c.nc.SetReadDeadline(time.Unix(0, deadline))
}

// prefetch has the store start loading what the lookups of keys, the keys
// of a batch that just arrived, will read, so the batch's cache misses
// overlap instead of coming one after the other. A single key has nothing
// to overlap with, so P=1 traffic skips it.
func (c *conn) prefetch(keys [][]byte) {
	if len(keys) > 1 {
		c.srv.store.Prefetch(keys)
	}
	clear(keys) // no reference to the read buffer outlives the batch
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

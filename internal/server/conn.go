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

	"github.com/minikv/minikv/internal/server/acl"
	"github.com/minikv/minikv/internal/store"
)

// Buffer sizes per connection, for the protocols' readers and writers.
// 16 KiB holds a deep pipeline of small requests (one read syscall serves
// many commands) while 1024 idle connections cost 32 MiB at most.
const (
	ReadBufSize  = 16 << 10
	WriteBufSize = 16 << 10
)

// Conn is one client connection. The core owns it: its socket, deadlines,
// counters and auth state. The protocol's Handler reads requests from it
// and writes replies to it (Conn is the io.Reader and io.Writer under the
// protocol's codec) and bumps its counters.
type Conn struct {
	srv          *Server
	nc           net.Conn
	raddr        net.Addr // nc's addresses, kept: nc changes when the connection leaves an event loop
	laddr        net.Addr
	id           uint64
	proto        Protocol
	created      time.Time
	lastCmd      atomic.Int64             // Unix ns of the last complete command
	tcp          bool                     // nc is a plain TCP socket (not TLS): rawIn counts its bytes
	rawIn        atomic.Uint64            // bytes read from the socket (InputMark); unlike stats, never reset
	servedIn     atomic.Uint64            // rawIn when every complete request read so far was served
	monitorMuted atomic.Bool              // no monitor lines to it (CLIENT REPLY OFF)
	aclUser      atomic.Pointer[acl.User] // the ACL user it authenticated as; nil: the default user
	stats        counters
	blocked      atomic.Pointer[Waiter] // the blocking command it waits in (block.go); nil: none
	ctl          connControl            // kill, pause, what CLIENT LIST shows (client.go)
	inLoop       *eventLoop             // the event loop serving it, under srv.mu (for Kill); nil: its own goroutine

	// Owned by the serving goroutine (or the event loop serving it).
	lc           *loopConn                 // in an event loop (loop_linux.go); nil: on its own goroutine
	out          *Outbox                   // once started (StartOutbox), every write goes through it
	idleExempt   bool                      // no idle timeout (a subscriber waiting for messages)
	authed       bool                      // passed auth (or none is configured)
	waiting      bool                      // blocked between commands (a timeout now is idleness)
	writeFailed  bool                      // the last error came from a write
	readDeadline int64                     // Unix ns of the read deadline armRead last set; 0: none
	writeArmedAt int64                     // Unix ns when the write deadline was last set
	flushAt      int64                     // the clock commandsDone read, for the flush right after it; 0: none
	diskMark     uint64                    // durable mode: the store's DiskMark when the batch being served began (Write)
	holdWrites   bool                      // Write keeps what it gets in heldOut (HoldWrites)
	heldOut      []byte                    // writes kept while the store is held exclusively
	heldErr      error                     // ReleaseWrites' failure: every later Write returns it
	keys         [store.MaxPrefetch][]byte // the keys of a batch being prefetched
}

// Server returns the server c belongs to.
func (c *Conn) Server() *Server { return c.srv }

// ID is the connection's number, unique within the server.
func (c *Conn) ID() uint64 { return c.id }

// RemoteAddr is the client's address.
func (c *Conn) RemoteAddr() net.Addr { return c.raddr }

// LocalAddr is the address the client connected to.
func (c *Conn) LocalAddr() net.Addr { return c.laddr }

// Created is when the connection was accepted.
func (c *Conn) Created() time.Time { return c.created }

// LastCommand is when the connection's last complete batch of commands
// ended (its creation until then). It may be read from any goroutine.
func (c *Conn) LastCommand() time.Time { return time.Unix(0, c.lastCmd.Load()) }

// Authed reports whether the connection may run commands: it has
// authenticated, or the server requires no auth.
func (c *Conn) Authed() bool { return c.authed }

// SetAuthed records that the connection has authenticated. Only the
// serving goroutine may call it.
func (c *Conn) SetAuthed() { c.authed = true }

// ResetAuth returns the connection to its state before auth (Redis's
// RESET): it must authenticate again if the server requires it. Only
// the serving goroutine may call it.
func (c *Conn) ResetAuth() { c.authed = !c.srv.AuthRequired() }

// SetIdleExempt exempts the connection from the idle timeout (on) or
// subjects it again (off), as Redis exempts a subscribed client, which
// waits for messages rather than commands. Only the serving goroutine
// may call it.
func (c *Conn) SetIdleExempt(on bool) { c.idleExempt = on }

// Count adds one to the connection's counter st. Each connection bumps
// its own counters (so two cores never fight over one cache line per
// request); Server.Stats sums the live connections and the totals of
// closed ones.
func (c *Conn) Count(st Stat) { c.stats[st].Add(1) }

// Read counts bytes for stats and lets Conn stand in for the net.Conn under
// the codec's buffered reader.
func (c *Conn) Read(p []byte) (int, error) {
	if lc := c.lc; lc != nil {
		return lc.read(c, p) // never waits: ErrWouldBlock
	}
	n, err := c.nc.Read(p)
	if n > 0 {
		// Busy before the bytes are counted, so InputPending never sees
		// them read and not yet being served.
		c.ctl.state.CompareAndSwap(connWaiting, connBusy)
		c.rawIn.Add(uint64(n))
	}
	c.stats[StatBytesRead].Add(uint64(n))
	return n, err
}

// HoldWrites keeps what the connection writes in memory until
// ReleaseWrites: the serving goroutine calls it while it holds the store
// exclusively (a script, an EXEC), whose changes are durable only once
// the hold ends (store.Disk.HoldExclusive). A reply written before then,
// because it overflowed the protocol's buffer, would wait for the
// section's end from inside it; or, since replies sent meanwhile wait
// only for the changes queued before the section, leave before the
// changes it acknowledges are durable.
func (c *Conn) HoldWrites() { c.holdWrites = c.out == nil } // an outbox's writer waits for the section (SyncAllSince)

// ReleaseWrites ends HoldWrites and writes what it kept, as Write does.
// If that fails, every later Write fails the same way (the protocol's
// buffered writer then closes the connection).
func (c *Conn) ReleaseWrites() {
	c.holdWrites = false
	p := c.heldOut
	if len(p) == 0 {
		return
	}
	c.heldOut = p[:0]
	if cap(p) > 1<<20 {
		c.heldOut = nil // a large EXEC reply is not kept
	}
	if _, err := c.Write(p); err != nil {
		c.heldErr = err
	}
}

// Write counts bytes for stats.
// Every write has a deadline at least half of WriteTimeout away (see
// armRead), so a client that stops reading is cut off instead of pinning
// its goroutine and buffers.
func (c *Conn) Write(p []byte) (int, error) {
	if c.holdWrites {
		c.heldOut = append(c.heldOut, p...)
		return len(p), nil
	}
	if c.heldErr != nil {
		return 0, c.heldErr
	}
	if c.out != nil {
		return c.out.write(p) // queued behind the messages already there (outbox.go)
	}
	// Durable mode: no reply leaves before the changes made so far are
	// durable (the store answers at once when there is no disk, and when
	// nothing is waiting). Every reply of both protocols passes here. A
	// batch that a disk failure cut across may carry a lost change: the
	// connection closes without its replies (docs/durability.md).
	if err := c.srv.store.SyncSince(c.diskMark); err != nil {
		c.srv.log.Warn("disk failed while the batch ran; connection closed without its replies", "conn_id", c.id, "err", err)
		return 0, err
	}
	if lc := c.lc; lc != nil {
		return lc.write(c, p) // never waits: the rest leaves with the connection
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
	c.stats[StatBytesWritten].Add(uint64(n))
	if err != nil {
		c.writeFailed = true
	}
	return n, err
}

// serve runs the connection until it ends, recovering from a panic so one
// bad request can only ever cost its own connection (as net/http does).
func (c *Conn) serve() { c.serveHandler(nil, nil) }

// serveHandler is serve for a connection accepted in goroutine mode (h
// nil: made here, after the TLS handshake), for one whose protocol an
// event loop cannot drive (h made by attach), and for one leaving an event
// loop (from: its loop state, with the reply bytes its socket did not take
// and the Handler that holds everything else).
func (c *Conn) serveHandler(h Handler, from *loopConn) {
	defer c.srv.removeConn(c)
	defer c.nc.Close()
	defer func() {
		if c.out != nil {
			c.out.stop() // send what is queued, stop the writer
		}
	}()
	defer func() {
		if r := recover(); r != nil {
			c.srv.log.Error("panic serving connection", "conn_id", c.id,
				"remote", c.nc.RemoteAddr().String(), "panic", r, "stack", string(debug.Stack()))
		}
	}()
	var err error
	if from == nil {
		c.srv.log.Debug("connection opened", "conn_id", c.id, "remote", c.nc.RemoteAddr().String())
	}
	if h == nil {
		c.authed = !c.srv.AuthRequired()
		if tc, ok := c.nc.(*tls.Conn); ok {
			err = c.handshake(tc)
		}
	}
	if err == nil {
		// The first deadline: an idle timeout counts from the connection's
		// creation until its first command.
		c.armRead(time.Now().UnixNano())
	}
	if err == nil && h == nil {
		h = c.proto.NewHandler(c)
		c.ctl.handler.Store(&h)
	}
	if h != nil {
		if cl, ok := h.(io.Closer); ok {
			// The protocol lets go of the connection (a subscriber leaves
			// every channel) before its output is drained and it closes.
			defer cl.Close()
		}
	}
	if err == nil && from != nil && c.Killed() {
		err = net.ErrClosed // killed as it left its event loop
	}
	if err == nil && from != nil && len(from.spill) > 0 {
		_, err = c.Write(from.spill)
		from.spill = nil
	}
	if err == nil && (from == nil || !from.closing) {
		err = c.loop(h)
	}
	switch {
	case err == nil, errors.Is(err, io.EOF), errors.Is(err, net.ErrClosed):
	case errors.Is(err, os.ErrDeadlineExceeded):
		switch {
		case c.srv.shuttingDown.Load():
		case c.writeFailed:
			c.Count(StatWriteTimeouts)
			c.srv.log.Debug("client stopped reading; connection closed", "conn_id", c.id)
		case c.waiting:
			c.Count(StatIdleKicks)
			c.srv.log.Debug("idle connection closed", "conn_id", c.id)
		default:
			c.Count(StatCommandTimeouts)
			c.srv.log.Debug("command not completed in time; connection closed", "conn_id", c.id)
		}
	default:
		c.srv.log.Debug("connection closed", "conn_id", c.id, "err", err)
	}
}

// loop is the connection loop of every protocol. Replies are buffered and
// flushed only when the read buffer is drained (or every ReqsPerEvent
// requests), so a pipelined batch is answered with one write syscall; the
// deadlines are re-armed once per batch; shutdown is noticed between
// batches.
func (c *Conn) loop(h Handler) error {
	pending := 0 // requests served since the last flush
	for {
		requests, replies := h.Buffered()
		if requests == 0 {
			if pending > 0 {
				c.commandsDone()
			}
			if replies > 0 {
				if err := h.Flush(); err != nil {
					return err
				}
			}
			c.flushAt = 0 // unused when nothing was flushed; never stale later
			pending = 0
			if c.srv.shuttingDown.Load() {
				return nil
			}
			if err := c.waitForCommand(h); err != nil {
				return err
			}
			if c.authed {
				c.prefetchBatch(h)
			}
		} else if pending >= c.srv.cfg.ReqsPerEvent {
			c.Count(StatConnYields)
			c.commandsDone()
			if err := h.Flush(); err != nil {
				return err
			}
			c.flushAt = 0
			pending = 0
		}
		switch res, err := h.Serve(); res {
		case Served:
			pending++
		case Closing:
			return err
		}
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
func (c *Conn) waitForCommand(h Handler) error {
	c.waiting = true
	c.enterWait()
	c.applyIdleTimeout()
	first, err := h.Wait()
	for err != nil {
		c.leaveWait() // a poke's deadline is replaced below
		if !errors.Is(err, os.ErrDeadlineExceeded) || !c.rearmIdle() {
			return err // still waiting: a timeout here is an idle kick
		}
		c.enterWait()
		first, err = h.Wait()
	}
	c.leaveWait()
	c.waiting = false
	// A new batch: every reply of the last one is flushed.
	c.diskMark = c.srv.store.DiskMark()
	if first == tlsHandshakeRecord {
		// A TLS client on a plain port would otherwise sit until the
		// command deadline: no command of either protocol starts with
		// this byte. (Behind a TLS listener c reads decrypted bytes.)
		return errTLSOnPlainPort
	}
	c.armRead(time.Now().UnixNano())
	return nil
}

// applyIdleTimeout brings the read deadline in line with the idle timeout
// in force, once the connection is marked waiting. SetIdleTimeout stores
// the new timeout before it pokes the waiting connections, so a connection
// that armed its deadline with the old timeout and was not yet waiting
// when the poke came sees the new one here.
func (c *Conn) applyIdleTimeout() {
	it := c.srv.IdleTimeout()
	if it <= 0 || c.idleExempt {
		return
	}
	d := c.lastCmd.Load() + int64(it)
	if c.readDeadline != 0 && c.readDeadline <= d {
		return
	}
	c.ctl.pokeMu.Lock()
	defer c.ctl.pokeMu.Unlock()
	c.readDeadline = d
	_ = c.nc.SetReadDeadline(time.Unix(0, d))
}

// rearmIdle handles a read deadline that ran out while the connection was
// waiting for a command. It reports true, having set the right deadline,
// when the connection should go on waiting: the deadline was an earlier
// command's, and the idle timeout (if any) has not passed since the last
// complete command. It reports false when the connection must close: the
// server is shutting down, or the connection has been idle too long.
func (c *Conn) rearmIdle() bool {
	if c.srv.shuttingDown.Load() {
		return false
	}
	var deadline time.Time // none: wait forever
	if it := c.srv.IdleTimeout(); it > 0 && !c.idleExempt {
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
// connection loop calls it where it flushes, once per batch rather than
// once per command, so a pipelined batch reads the clock once (the clock
// read was 6 % of the server's CPU at P=16 when it was per command). The
// flush right after it reuses the reading; the loop clears it after that
// flush, so a write later in the stream (a reply larger than the buffer)
// never arms its deadline from an old clock.
func (c *Conn) commandsDone() {
	now := time.Now().UnixNano()
	c.commandsDoneAt(now)
	c.armRead(now)
}

// commandsDoneAt is commandsDone for an event loop, which reads the clock
// once per pass for every connection it serves, and arms no read
// deadline: the socket it reads has none (the loop's deadline check
// stands in for it), so readDeadline stays 0 while the connection is in
// the loop, and a connection leaving it arms its new socket's deadline
// from scratch (serveHandler).
func (c *Conn) commandsDoneAt(now int64) {
	c.lastCmd.Store(now)
	c.flushAt = now
}

// armRead (re)sets the read deadline: CommandTimeout from now, and never
// later than IdleTimeout after the last complete command. It touches the
// timer only when the deadline in place is less than half the shorter
// timeout away, so a busy pipelined stream pays a timer reset rarely while
// any one command still gets at least half its timeout.
func (c *Conn) armRead(now int64) {
	t, it := c.srv.cfg.CommandTimeout, c.srv.IdleTimeout()
	if c.idleExempt {
		it = 0
	}
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

// prefetchBatch has the store start loading what the lookups of the keys
// of the batch h just received will read, so the batch's cache misses
// overlap instead of coming one after the other. A single key has nothing
// to overlap with, so P=1 traffic skips it, and so does a store small
// enough to sit in the CPU cache (store.PrefetchPays), where the scan for
// the keys would cost as much as it saves.
func (c *Conn) prefetchBatch(h Handler) {
	if !c.srv.store.PrefetchPays() {
		return
	}
	keys := h.Keys(c.keys[:0])
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
func (c *Conn) handshake(tc *tls.Conn) error {
	if t := c.srv.cfg.CommandTimeout; t > 0 {
		_ = tc.SetDeadline(time.Now().Add(t))
	}
	if err := tc.Handshake(); err != nil {
		return err
	}
	return tc.SetDeadline(time.Time{})
}

package server

import (
	"crypto/tls"
	"errors"
	"os"
	"sync"
	"syscall"
	"time"
)

// OutputLimit bounds the output a connection with an Outbox may have
// pending (queued or being written), as Redis's client-output-buffer-limit
// does for its pubsub class: over Hard bytes the connection is closed at
// once; over Soft bytes for SoftFor, it is closed too. The zero value is
// Redis's pubsub default, 32 MiB hard, 8 MiB soft for 60 s; a negative
// Hard or Soft turns that bound off.
type OutputLimit struct {
	Hard    int64
	Soft    int64
	SoftFor time.Duration
}

// withDefaults fills in Redis's pubsub defaults.
func (l OutputLimit) withDefaults() OutputLimit {
	if l.Hard == 0 {
		l.Hard = 32 << 20
	}
	if l.Soft == 0 {
		l.Soft = 8 << 20
	}
	if l.SoftFor == 0 {
		l.SoftFor = 60 * time.Second
	}
	return l
}

// queuedOverhead is what one queued chunk costs besides its bytes (its
// slice header in the queue), counted against the limit so a flood of
// tiny messages is bounded by the memory it really takes.
const queuedOverhead = 24

// noDiskMark is writeAsync's mark for output that holds no reply of the
// connection's own.
const noDiskMark = ^uint64(0)

// errOutboxClosed is what writes to an Outbox get once it has been cut
// off (output limit, write error) or stopped.
var errOutboxClosed = errors.New("server: connection output closed")

// Outbox is a connection's ordered, bounded output queue and the
// goroutine that writes it to the socket. A connection that receives
// messages from other connections (pub/sub) starts one (Conn.StartOutbox):
// from then on every byte it sends, its own replies included, goes
// through the queue in order, so a reply is never cut by a message and a
// confirmation queued before a message is sent before it.
//
//	publisher goroutines ──Push(shared bytes)──┐
//	                                           ▼
//	serving goroutine ──Conn.Write(copy)──▶ queue ──▶ writer goroutine ──▶ socket
//
// Push never blocks on the socket: a subscriber that does not read only
// grows its own queue, and once that passes the OutputLimit it is cut
// off (its queue dropped, its socket closed, StatOutputLimitKicks
// counted), so neither a publisher nor the server's memory depends on
// how fast any one client reads. The Conn owns the writer: when the
// connection ends, Conn.serve drains the queue (within the write
// deadline) and waits for the writer to exit.
type Outbox struct {
	c     *Conn
	limit OutputLimit

	mu        sync.Mutex // protects the fields below
	cond      sync.Cond  // signalled on a new chunk, stop or cut-off
	queue     [][]byte   // chunks not yet taken by the writer
	pending   int64      // bytes queued or being written, with queuedOverhead per chunk
	softSince time.Time  // when pending last went over the soft limit; zero: under it
	stopping  bool       // the connection ended: drain, then exit
	dead      bool       // cut off or failed: drop everything
	mark      uint64     // the oldest DiskMark of the connection's own replies queued
	marked    bool       // the queue holds replies of the connection's own (mark is set)
	busy      bool       // a write to the socket is under way: the writer's or WriteNow's

	done chan struct{} // closed when the writer has exited
}

// StartOutbox gives c an Outbox (or returns the one it has) bounded by
// Config.PubsubOutputLimit, and starts its writer. From this call on,
// Conn.Write queues instead of writing. Only the serving goroutine may
// call it, with its buffered replies flushed or still to be flushed
// through Conn.Write (they then take the queue in order).
func (c *Conn) StartOutbox() *Outbox {
	if c.out != nil {
		return c.out
	}
	o := &Outbox{c: c, limit: c.srv.cfg.PubsubOutputLimit, done: make(chan struct{})}
	o.cond.L = &o.mu
	c.out = o
	if c.holdWrites {
		// Started inside a section that holds the store (SUBSCRIBE in
		// EXEC): what it kept goes first, and the writer's Syncs wait
		// for the section's changes.
		c.holdWrites = false
		if p := c.heldOut; len(p) > 0 {
			c.heldOut = nil
			_, _ = o.write(p)
		}
	}
	go o.run()
	return o
}

// Push queues b, which must not change afterwards: the same bytes can be
// queued to many connections (a message encoded once for every
// subscriber). It reports false when the connection is cut off or
// closing. It may cut the connection off (the output limit), but never
// blocks on the socket.
func (o *Outbox) Push(b []byte) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.pushLocked(b)
}

func (o *Outbox) pushLocked(b []byte) bool {
	if o.dead || o.stopping {
		return false
	}
	o.pending += int64(len(b)) + queuedOverhead
	if o.overLimitLocked() {
		o.cutLocked()
		return false
	}
	o.queue = append(o.queue, b)
	o.cond.Signal()
	return true
}

// overLimitLocked applies the output limit to the pending bytes: the
// hard bound at once, the soft one once it has been passed for SoftFor,
// checked as output is added (as Redis does).
func (o *Outbox) overLimitLocked() bool {
	l := o.limit
	if l.Hard > 0 && o.pending > l.Hard {
		return true
	}
	if l.Soft <= 0 || o.pending <= l.Soft {
		o.softSince = time.Time{}
		return false
	}
	now := time.Now()
	if o.softSince.IsZero() {
		o.softSince = now
		return false
	}
	return now.Sub(o.softSince) >= l.SoftFor
}

// cutLocked closes a connection over its output limit: its queue is
// dropped at once, and its socket closed so that both its serving
// goroutine (blocked reading) and its writer (blocked writing) return.
// The raw TCP socket is closed rather than a TLS one, whose Close could
// block the publisher on a close-notify alert to a client that does not
// read.
func (o *Outbox) cutLocked() {
	o.dead = true
	clear(o.queue)
	o.queue = nil
	o.cond.Signal()
	o.c.Count(StatOutputLimitKicks)
	o.c.srv.log.Info("client closed for overcoming its output buffer limit",
		"conn_id", o.c.id, "pending", o.pending, "limit", o.limit.Hard)
	o.c.closeRaw()
}

// WriteNow sends b on the caller's goroutine, as far as the socket takes
// it without waiting, when nothing is queued or being written; what is
// left (or all of b, when the writer is busy) is queued in order, as Push
// queues it, from a copy. It reports false when the connection is cut
// off or closing. Only for output that needs no durability wait (a
// primary's replication stream in cache mode): a primary's event loop
// sends its replicas the stream this way at the end of its pass, as
// Redis writes to its replicas from its one thread, instead of waking
// the writer goroutine for every pass (docs/benchmarks.md).
func (o *Outbox) WriteNow(b []byte) bool {
	o.mu.Lock()
	if o.dead || o.stopping {
		o.mu.Unlock()
		return false
	}
	if o.busy || len(o.queue) > 0 {
		ok := o.pushLocked(append([]byte(nil), b...))
		o.mu.Unlock()
		return ok
	}
	o.busy = true
	o.mu.Unlock()
	n, err := o.c.writeNoWait(b)
	o.mu.Lock()
	defer o.mu.Unlock()
	o.busy = false
	if err != nil {
		if !o.dead {
			o.dead = true
			clear(o.queue)
			o.queue = nil
			o.c.writeFailedAsync(err)
		}
		return false
	}
	if n < len(b) {
		// The rest goes first: what was queued meanwhile came after it.
		rest := append([]byte(nil), b[n:]...)
		o.pending += int64(len(rest)) + queuedOverhead
		o.queue = append(o.queue, nil)
		copy(o.queue[1:], o.queue)
		o.queue[0] = rest
		if o.overLimitLocked() {
			o.cutLocked()
			return false
		}
	}
	if len(o.queue) > 0 {
		o.cond.Signal()
	}
	return true
}

// writeNoWait writes p to the socket as far as it takes it now: a TCP
// socket through its file descriptor, without waiting for room; any
// other kind is written by the writer (0, nil).
func (c *Conn) writeNoWait(p []byte) (int, error) {
	sc, ok := c.nc.(syscall.Conn)
	if !ok {
		return 0, nil
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return 0, nil
	}
	n := 0
	var werr error
	err = rc.Write(func(fd uintptr) bool {
		for n < len(p) {
			k, e := syscall.Write(int(fd), p[n:])
			if e == syscall.EINTR {
				continue
			}
			if e != nil {
				if e != syscall.EAGAIN {
					werr = e
				}
				break
			}
			n += k
		}
		return true // never wait: the rest is the writer's
	})
	if err != nil && werr == nil {
		werr = err
	}
	c.stats[StatBytesWritten].Add(uint64(n))
	return n, werr
}

// write is Conn.Write once the Outbox is started: the serving
// goroutine's replies, copied (its buffer is reused), join the queue.
func (o *Outbox) write(p []byte) (int, error) {
	b := append([]byte(nil), p...)
	o.mu.Lock()
	defer o.mu.Unlock()
	if !o.pushLocked(b) {
		return 0, errOutboxClosed
	}
	if !o.marked {
		o.mark, o.marked = o.c.diskMark, true
	}
	return len(p), nil
}

// Pending is the number of bytes queued or being written, with a small
// overhead per queued chunk: what the output limit is checked against.
func (o *Outbox) Pending() int64 {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.pending
}

// stop is called by Conn.serve when the connection ends: the writer
// sends what is queued (within the write deadline; the socket's close on
// a forced shutdown ends it sooner) and exits, and stop waits for it.
func (o *Outbox) stop() {
	o.mu.Lock()
	o.stopping = true
	o.cond.Signal()
	o.mu.Unlock()
	<-o.done
}

// run is the writer goroutine: it takes the whole queue at once and
// writes it through a buffer, so a burst of small messages costs one
// write system call per WriteBufSize bytes rather than one per message.
func (o *Outbox) run() {
	defer close(o.done)
	buf := make([]byte, 0, WriteBufSize)
	var batch [][]byte
	var armedAt time.Time // when the write deadline was last set
	for {
		o.mu.Lock()
		for (len(o.queue) == 0 || o.busy) && !o.dead && !(o.stopping && len(o.queue) == 0) {
			o.cond.Wait()
		}
		if o.dead || len(o.queue) == 0 {
			o.mu.Unlock()
			return
		}
		o.busy = true
		batch, o.queue = o.queue, batch[:0]
		mark, marked := o.mark, o.marked
		o.marked = false
		o.mu.Unlock()
		if !marked {
			mark = noDiskMark // only messages: nothing read from the store
		}

		var n int64
		var err error
		for _, b := range batch {
			n += int64(len(b)) + queuedOverhead
			if len(buf)+len(b) > cap(buf) && len(buf) > 0 {
				if err = o.c.writeAsync(buf, mark, &armedAt); err != nil {
					break
				}
				buf = buf[:0]
			}
			if len(b) >= cap(buf) {
				if err = o.c.writeAsync(b, mark, &armedAt); err != nil {
					break
				}
				continue
			}
			buf = append(buf, b...)
		}
		if err == nil && len(buf) > 0 {
			err = o.c.writeAsync(buf, mark, &armedAt)
		}
		buf = buf[:0]
		clear(batch) // the messages can be collected once every subscriber has sent them

		o.mu.Lock()
		o.pending -= n
		o.busy = false
		if err != nil && !o.dead {
			o.dead = true
			clear(o.queue)
			o.queue = nil
			o.c.writeFailedAsync(err)
		}
		dead := o.dead
		o.mu.Unlock()
		if dead {
			return
		}
	}
}

// writeAsync is Conn.Write for the Outbox's writer goroutine: the same
// durability wait, write deadline and byte count, with the deadline's
// bookkeeping kept by the writer (the serving goroutine owns Conn's).
//
// mark is the DiskMark of the oldest of the connection's own replies in
// p, or noDiskMark when p holds only messages of other connections: they
// carry nothing read from the store, and while the disk is failed they
// go out without waiting for it.
func (c *Conn) writeAsync(p []byte, mark uint64, armedAt *time.Time) error {
	st := c.srv.store
	if mark == noDiskMark {
		if st.WriteErr() == nil {
			mark = st.DiskMark()
		}
	}
	if mark != noDiskMark {
		// The writer never holds the store: it waits for a script's
		// changes too (a notification of one would reveal it).
		if err := st.SyncAllSince(mark); err != nil {
			c.srv.log.Warn("disk failed while the batch ran; connection closed without its replies", "conn_id", c.id, "err", err)
			return err
		}
	}
	if t := c.srv.cfg.WriteTimeout; t > 0 {
		now := time.Now()
		if now.Sub(*armedAt) >= t/2 {
			*armedAt = now
			_ = c.nc.SetWriteDeadline(now.Add(t))
		}
	}
	n, err := c.nc.Write(p)
	c.stats[StatBytesWritten].Add(uint64(n))
	return err
}

// writeFailedAsync ends a connection whose Outbox writer could not write:
// a client that stopped reading for WriteTimeout is counted as a write
// timeout, as on the serving goroutine's own writes. The socket is closed
// so the serving goroutine, blocked reading, returns.
func (c *Conn) writeFailedAsync(err error) {
	if errors.Is(err, os.ErrDeadlineExceeded) && !c.srv.shuttingDown.Load() {
		c.Count(StatWriteTimeouts)
		c.srv.log.Debug("client stopped reading; connection closed", "conn_id", c.id)
	}
	c.closeRaw()
}

// closeRaw closes the connection's TCP socket (under TLS, the one below
// it) from any goroutine, without blocking.
func (c *Conn) closeRaw() {
	nc := c.nc
	if tc, ok := nc.(*tls.Conn); ok {
		nc = tc.NetConn()
	}
	_ = nc.Close()
}

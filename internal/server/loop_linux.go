//go:build linux

package server

import (
	"errors"
	"io"
	"net"
	"os"
	"runtime"
	"runtime/debug"
	"slices"
	"sync"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Event loops (Config.EventLoops > 0): a few goroutines, each waiting on
// its own epoll set for any of its connections to become readable, serve
// what arrived on every ready connection, then write the replies of all of
// them, as Redis and memcached do. A connection costs no goroutine, no
// park and wake-up per request, and one read and one write system call per
// batch; under load one epoll_wait serves many connections
// (docs/performance.md has the measurements behind this design).
//
// The loop serves only what it can serve without waiting: complete
// requests (the Handler's Framing), replies the socket takes at once.
// Everything else moves the connection to a goroutine of its own, which
// serves it as a connection accepted in goroutine mode is served, for the
// rest of its life: a request larger than the read buffer, one the framing
// does not vouch for (inline commands, malformed input), a reply the
// socket would not take whole, a command that blocks or streams (the
// Handler answers Detach), TLS (never attached). Work that may run long
// but seldom does (a Lua script) stays: the loop is lent to it
// (loan_linux.go).
//
// A connection in a loop has no net.Conn of its own: the loop owns a
// duplicate of its socket, and c.nc is the closed original (its addresses
// still answer). Deadlines become a periodic check by the loop.

// fdConns are a loop's connections, indexed by their sockets' file
// descriptors (small integers the kernel reuses): a lookup per event
// without hashing.
type fdConns []*Conn

func (t fdConns) get(fd int32) *Conn {
	if uint(fd) < uint(len(t)) {
		return t[fd]
	}
	return nil
}

// put sets fd's connection (nil: none), growing the table to hold fd.
func (t *fdConns) put(fd int32, c *Conn) {
	if int(fd) >= len(*t) {
		if c == nil {
			return
		}
		*t = append(*t, make(fdConns, int(fd)+1-len(*t)+len(*t)/2)...)
	}
	(*t)[fd] = c
}

// loopConn is a connection's state while a loop serves it.
type loopConn struct {
	fd        int
	loop      *eventLoop
	h         LoopHandler
	spill     []byte // reply bytes the socket did not take: the connection's goroutine sends them
	leave     bool   // move to a goroutine after this pass
	closing   bool   // Serve answered Closing: close once spill is sent
	eof       bool   // the client closed its side: close once its complete requests are served
	queued    bool   // on the loop's flush list for this pass
	batched   bool   // its replies are in the ring's batch (flushRing)
	again     bool   // on the loop's again list
	received  bool   // the ring read for it this pass: pre and preRes are its read's result
	pre       []byte
	preRes    int32
	partialAt int64 // Unix ns when an incomplete request was first seen waiting; 0: none
	loan      LoopLoan
}

// eventLoop is one loop: its epoll set and the connections in it.
type eventLoop struct {
	srv    *Server
	epfd   int
	wakefd int // an eventfd: wakes the loop for its inbox and for shutdown

	mu    sync.Mutex // protects inbox, kills, stop, lentTo, standIn, reclaim
	inbox []*Conn    // accepted, to be added
	kills []*Conn    // to be closed (Kill)
	stop  bool

	watchAdd []*watch // WatchFD calls, under mu
	watchDel []*watch // unwatch calls, under mu
	stopped  bool     // the loop has ended: unwatch closes the fd itself (under mu)
	watches  map[int32]*watch

	// The loop lent to a connection's work (loan_linux.go).
	lentTo  *Conn         // the connection whose work has the loop; nil: none
	standIn chan struct{} // closed when the stand-in has stopped; nil: none running
	reclaim bool          // the stand-in must stop

	// Owned by the loop's goroutine.
	conns fdConns // by socket fd
	again []*Conn // served their ReqsPerEvent share with complete requests left
	spare []*Conn // the previous pass's again, reused
	flush []*Conn // served this pass: their replies go out at its end
	ring  *ioRing // io_uring for the pass's reads and sends (uring_linux.go); nil: system calls

	// While flushAll gathers a pass's replies for the ring (batching),
	// loopConn.write records them here instead of writing.
	batching bool
	batch    []pendingSend
	fds      []int
	bufs     [][]byte
	res      []int32
	rbufs    [][]byte // receive buffers for recvRing, one per ready connection, kept
	ready    []*Conn  // the connections recvRing read for
	next     int64    // Unix ns of the next deadline check
	now      int64    // Unix ns read once per pass, after the wait: the pass's clock
	yieldAt  int64    // Unix ns of the loop's last runtime.Gosched (loopYield)
}

// loopYield is how long a loop runs before it yields its processor once,
// before it waits (runtime.Gosched). A goroutine that runs longer than
// 10 ms on one scheduling tick is one the runtime's monitor (sysmon)
// preempts, and if it finds it in a system call, as the loop mostly is, it
// takes its processor away and polls every 20 µs again instead of every
// 10 ms: at P=1 the sysmon thread alone took about 0.4 µs of a request's
// CPU. A yield every 8 ms costs far less: 0.2 µs per request saved in all
// (docs/performance.md 7.10).
const loopYield = 8 * time.Millisecond

// startLoops starts Config.EventLoops loops.
func (s *Server) startLoops() error {
	for range s.cfg.EventLoops {
		ep, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
		if err != nil {
			return err
		}
		wfd, err := unix.Eventfd(0, unix.EFD_CLOEXEC|unix.EFD_NONBLOCK)
		if err != nil {
			unix.Close(ep)
			return err
		}
		if err := unix.EpollCtl(ep, unix.EPOLL_CTL_ADD, wfd, &unix.EpollEvent{Events: unix.EPOLLIN, Fd: int32(wfd)}); err != nil {
			return err
		}
		l := &eventLoop{srv: s, epfd: ep, wakefd: wfd}
		if !s.cfg.NoIOURing {
			if r, err := newIORing(); err == nil {
				l.ring = r
			} else if len(s.loops) == 0 {
				s.log.Info("event loops write with write(2): io_uring is not available", "err", err)
			}
		}
		s.loops = append(s.loops, l)
		s.loopsWG.Add(1)
		go l.run()
	}
	return nil
}

// attach hands the new connection c to a loop, if c can be served by
// one: a plain TCP connection whose protocol has a LoopHandler. It
// reports false when c must be served by its own goroutine (c.serve).
func (s *Server) attach(c *Conn) bool {
	if len(s.loops) == 0 {
		return false
	}
	tc, ok := c.nc.(*net.TCPConn)
	if !ok {
		return false // TLS (its records need the goroutine path) or another kind
	}
	c.authed = !s.AuthRequired()
	h := c.proto.NewHandler(c)
	c.ctl.handler.Store(&h)
	lh, ok := h.(LoopHandler)
	l := s.pickLoop(c.id)
	if !ok || l == nil {
		// No loop handler, or every loop is lent to long work (a script
		// running past busy-reply-threshold, loan_linux.go): a new
		// client, maybe the one sending SCRIPT KILL, gets a goroutine.
		go c.serveHandler(h, nil)
		return true
	}
	// The loop works on a duplicate of the socket; closing the original
	// takes it out of Go's poller, so only the loop's epoll watches it.
	fd := -1
	rc, err := tc.SyscallConn()
	if err == nil {
		cerr := rc.Control(func(sfd uintptr) {
			fd, err = unix.FcntlInt(sfd, unix.F_DUPFD_CLOEXEC, 0)
		})
		if err == nil {
			err = cerr
		}
	}
	if err != nil {
		go c.serveHandler(h, nil)
		return true
	}
	_ = tc.Close()
	c.lc = &loopConn{fd: fd, loop: l, h: lh}
	c.lc.loan = LoopLoan{l: l, c: c}
	s.mu.Lock()
	c.inLoop = l // for Kill, from other goroutines
	c.ctl.setFD(fd)
	s.mu.Unlock()
	l.mu.Lock()
	stopped := l.stop
	if !stopped {
		l.inbox = append(l.inbox, c)
	}
	l.mu.Unlock()
	if stopped {
		l.finish(c, nil)
		return true
	}
	s.loopAttached.Add(1)
	l.wake()
	return true
}

// pickLoop chooses the loop of a new connection with id: by id, passing
// over loops lent to long work (a stand-in serves them: a script past
// busy-reply-threshold), whose new connections would wait for it to end;
// nil when every loop is. A loop lent to short work (most scripts run for
// microseconds) is taken: its new connection waits that long.
func (s *Server) pickLoop(id uint64) *eventLoop {
	n := uint64(len(s.loops))
	for i := range n {
		l := s.loops[(id+i)%n]
		l.mu.Lock()
		long := l.lentTo != nil && l.standIn != nil
		l.mu.Unlock()
		if !long {
			return l
		}
	}
	return nil
}

func (l *eventLoop) wake() {
	var one = [8]byte{1}
	_, _ = unix.Write(l.wakefd, one[:])
}

// shutdown tells the loop to serve what its connections have buffered,
// flush, close them all and end.
func (l *eventLoop) shutdown() {
	l.mu.Lock()
	l.stop = true
	l.mu.Unlock()
	l.wake()
}

// InLoop reports whether an event loop serves the connection (then its
// Handler must not wait: see Detach). Only the serving side may call it.
func (c *Conn) InLoop() bool { return c.lc != nil }

// kill has the loop close c at its next pass (Conn.Kill).
func (l *eventLoop) kill(c *Conn) {
	l.mu.Lock()
	l.kills = append(l.kills, c)
	l.mu.Unlock()
	l.wake()
}

func (l *eventLoop) run() {
	defer l.srv.loopsWG.Done()
	defer unix.Close(l.epfd)
	defer unix.Close(l.wakefd)
	defer func() {
		if l.ring != nil {
			l.ring.close()
		}
	}()
	events := make([]unix.EpollEvent, 256)
	for {
		tick := l.tick()
		if l.next == 0 {
			l.next = time.Now().Add(tick).UnixNano()
		}
		timeout := int(tick / time.Millisecond)
		if len(l.again) > 0 {
			timeout = 0
		}
		if l.now-l.yieldAt >= int64(loopYield) {
			// See loopYield.
			l.yieldAt = l.now
			runtime.Gosched()
		}
		n, err := unix.EpollWait(l.epfd, events, timeout)
		if err != nil && err != unix.EINTR {
			l.srv.log.Error("event loop: epoll_wait failed", "err", err)
			n = 0
		}
		l.srv.passes.Add(1) // InPass: the pass's end runs passEnd
		// One clock reading serves the pass: its connections' last
		// command times and the deadline check at its end.
		l.now = time.Now().UnixNano()
		// The connections that used their share last pass go after the
		// ready ones; the two lists trade places, so neither allocates.
		again := l.again
		l.again, l.spare = l.spare[:0], again
		for _, c := range again {
			if c.lc != nil {
				c.lc.again = false
			}
		}
		stop := false
		if l.ring != nil && n > 1 {
			l.recvRing(events[:n])
		}
		for _, ev := range events[:max(n, 0)] {
			if int(ev.Fd) == l.wakefd {
				stop = l.takeInbox()
				continue
			}
			if c := l.conns.get(ev.Fd); c != nil {
				l.serve(c, true)
			} else if l.watches != nil {
				l.serveWatch(ev.Fd)
			}
		}
		for i, c := range again {
			again[i] = nil
			if c.lc != nil && c.lc.loop == l && l.conns.get(int32(c.lc.fd)) == c {
				l.serve(c, false)
			}
		}
		// The pass's end work (a primary's replication stream, sent to
		// its replicas) before its replies: a client that reads a
		// replica after its write's reply finds it there sooner.
		l.srv.passes.Add(-1) // before passEnd: a change queued after this may have seen no pass
		if f := l.srv.passEnd.Load(); f != nil {
			(*f)()
		}
		l.flushAll()
		if stop {
			l.closeAll()
			return
		}
		if l.now >= l.next {
			l.next = l.now + int64(tick)
			l.checkDeadlines(l.now)
		}
	}
}

// takeInbox adds the accepted connections, closes the killed ones and
// reports whether the loop must stop.
func (l *eventLoop) takeInbox() bool {
	var buf [8]byte
	_, _ = unix.Read(l.wakefd, buf[:])
	l.mu.Lock()
	inbox, kills, stop := l.inbox, l.kills, l.stop
	l.inbox, l.kills = nil, nil
	l.takeWatchesLocked()
	l.mu.Unlock()
	for _, c := range inbox {
		lc := c.lc
		if err := unix.EpollCtl(l.epfd, unix.EPOLL_CTL_ADD, lc.fd, &unix.EpollEvent{Events: unix.EPOLLIN | unix.EPOLLRDHUP, Fd: int32(lc.fd)}); err != nil {
			l.finish(c, err)
			continue
		}
		l.conns.put(int32(lc.fd), c)
		// Bytes may already be waiting (a client that wrote right after
		// connecting): level-triggered epoll reports them at the next wait.
	}
	for _, c := range kills {
		if c.lc != nil && c.lc.loop == l && l.conns.get(int32(c.lc.fd)) == c {
			l.close(c, nil)
		}
	}
	return stop
}

// serve runs what connection c has ready: reads once when its socket is
// readable, then serves its complete requests, up to ReqsPerEvent of them
// (the rest wait for the next pass, so one client cannot starve the
// others). Its replies go out at the end of the pass (flushAll).
func (l *eventLoop) serve(c *Conn, readable bool) {
	lc := c.lc
	defer func() {
		if r := recover(); r != nil {
			l.srv.log.Error("panic serving connection", "conn_id", c.id,
				"remote", c.RemoteAddr().String(), "panic", r, "stack", string(debug.Stack()))
			l.close(c, nil)
		}
	}()
	h := lc.h
	if !lc.queued {
		// A new batch: the replies of the last one are flushed.
		c.diskMark = l.srv.store.DiskMark()
	}
	c.ctl.state.Store(connBusy) // what CLIENT LIST and stats conns show
	if readable && !lc.eof {
		if err := h.Fill(); err != nil && !errors.Is(err, ErrWouldBlock) {
			lc.eof = true // served below as far as it goes, then closed
			if !errors.Is(err, io.EOF) {
				l.srv.log.Debug("connection closed", "conn_id", c.id, "err", err)
			}
		}
	}
	pending := 0
	for {
		requests, _ := h.Buffered()
		if requests == 0 {
			lc.partialAt = 0
			c.servedIn.Store(c.rawIn.Load())
			c.ctl.state.Store(connWaiting)
			break
		}
		framing := h.Framing()
		if framing != FrameComplete && l.firstByteIsTLS(c) {
			// A TLS client on a plain port would otherwise wait for the
			// command timeout: no request of either protocol starts so.
			l.close(c, errTLSOnPlainPort)
			return
		}
		if pending == 0 && c.authed && readable && framing == FrameComplete {
			c.prefetchBatch(h)
		}
		switch framing {
		case FrameNeedMore:
			if requests < ReadBufSize && !lc.eof {
				if lc.partialAt == 0 {
					lc.partialAt = l.now
				}
				goto done
			}
			if lc.eof {
				goto done // an unfinished request and no more to come
			}
			lc.leave = true // larger than the read buffer
			goto done
		case FrameOther:
			lc.leave = true
			goto done
		}
		if pending >= l.srv.cfg.ReqsPerEvent {
			c.Count(StatConnYields)
			if !lc.again {
				// Once: served from both lists in one pass, it would
				// otherwise be listed twice, and a pass later thrice.
				lc.again = true
				l.again = append(l.again, c)
			}
			goto done
		}
		lc.partialAt = 0
		res, err := h.Serve()
		switch res {
		case Served:
			pending++
		case Closing:
			if pending > 0 {
				c.commandsDoneAt(l.now)
			}
			if len(lc.spill) > 0 {
				lc.closing, lc.leave = true, true
				l.depart(c)
				return
			}
			l.close(c, err)
			return
		case Detach:
			lc.leave = true
		}
		if lc.leave {
			break
		}
	}
done:
	if pending > 0 {
		c.commandsDoneAt(l.now)
	}
	if lc.leave {
		l.depart(c)
		return
	}
	if !lc.queued {
		lc.queued = true
		l.flush = append(l.flush, c)
	}
}

// firstByteIsTLS reports whether the buffer starts with a TLS handshake
// record: a TLS client on a plain port, which no request starts like.
func (l *eventLoop) firstByteIsTLS(c *Conn) bool {
	if p, ok := c.lc.h.(interface{ Pending() []byte }); ok {
		b := p.Pending()
		return len(b) > 0 && b[0] == tlsHandshakeRecord
	}
	return false
}

// flushAll writes the replies of every connection served this pass. In
// durable mode the first write waits for the log (Conn.Write), so one
// commit covers the whole pass, as Redis writes its AOF once per loop.
func (l *eventLoop) flushAll() {
	flush := l.flush
	l.flush = flush[:0]
	if len(flush) > 0 {
		// Durable mode: the changes of the whole pass are committed
		// together, in one write(2) (and fsync), before any of its
		// replies leaves; each reply's own Sync (Conn.Write) then finds
		// nothing left to wait for. An error here is the log's sticky
		// one: those Syncs report it and close their connections.
		_ = l.srv.store.SyncPass()
	}
	if l.ring != nil {
		l.flushRing(flush)
		return
	}
	for i, c := range flush {
		flush[i] = nil
		lc := c.lc
		if lc == nil || lc.loop != l || l.conns.get(int32(lc.fd)) != c {
			continue // left or closed meanwhile
		}
		lc.queued = false
		l.flushConn(c)
	}
}

// recvRing reads every readable connection of events that has room in
// its read buffer, in one submission; serve's Fill then takes the bytes
// (loopConn.read). Each read asks for no more than the room the
// connection's reader has, so Fill takes all of them.
func (l *eventLoop) recvRing(events []unix.EpollEvent) {
	l.ready, l.fds, l.bufs, l.res = l.ready[:0], l.fds[:0], l.bufs[:0], l.res[:0]
	for _, ev := range events {
		if len(l.ready) == l.ring.size() {
			break
		}
		c := l.conns.get(ev.Fd)
		if c == nil || c.lc.eof {
			continue
		}
		requests, _ := c.lc.h.Buffered()
		room := ReadBufSize - requests
		if room <= 0 {
			continue
		}
		i := len(l.ready)
		if i == len(l.rbufs) {
			l.rbufs = append(l.rbufs, make([]byte, ReadBufSize))
		}
		l.ready = append(l.ready, c)
		l.fds = append(l.fds, c.lc.fd)
		l.bufs = append(l.bufs, l.rbufs[i][:room])
		l.res = append(l.res, 0)
	}
	if len(l.ready) < 2 {
		return // one read(2) costs what one submission does
	}
	if err := l.ring.recvAll(l.fds, l.bufs, l.res); err != nil {
		// Nothing was read, or what was is unknown: those connections
		// are closed, and the loop reads with read(2) from now on.
		l.srv.log.Error("event loop: io_uring receive failed; using read(2) and write(2) from now on", "err", err)
		l.ring.close()
		l.ring = nil
		for _, c := range l.ready {
			l.close(c, err)
		}
		return
	}
	for i, c := range l.ready {
		c.lc.received, c.lc.pre, c.lc.preRes = true, l.bufs[i], l.res[i]
		l.ready[i] = nil
	}
}

// pendingSend is a reply buffer flushAll gathered for the ring.
type pendingSend struct {
	c *Conn
	p []byte
}

// flushRing is flushAll through the ring: every connection's Flush hands
// its buffer to loopConn.write, which records it; then one submission
// sends them all (as many submissions as the ring's size needs), and the
// results are applied as write(2)'s would have been. The buffers are the
// writers' own and nothing writes to them until the sends are done.
func (l *eventLoop) flushRing(flush []*Conn) {
	l.batching = true
	for _, c := range flush {
		lc := c.lc
		if lc == nil || lc.loop != l || l.conns.get(int32(lc.fd)) != c {
			continue
		}
		lc.queued = false
		if _, replies := lc.h.Buffered(); replies > 0 {
			if err := lc.h.Flush(); err != nil {
				l.close(c, err)
			}
		}
	}
	l.batching = false
	batch := l.batch
	for len(batch) > 0 {
		k := min(len(batch), l.ring.size())
		l.fds, l.bufs, l.res = l.fds[:0], l.bufs[:0], l.res[:0]
		for _, ps := range batch[:k] {
			l.fds = append(l.fds, ps.c.lc.fd)
			l.bufs = append(l.bufs, ps.p)
			l.res = append(l.res, 0)
		}
		err := l.ring.sendAll(l.fds, l.bufs, l.res)
		if err != nil {
			// Whether the kernel sent them is unknown: the connections
			// are closed rather than risk a reply twice or never.
			l.srv.log.Error("event loop: io_uring send failed; using write(2) from now on", "err", err)
			l.ring.close()
			l.ring = nil
		}
		for i, ps := range batch[:k] {
			c := ps.c
			lc := c.lc
			if lc == nil || lc.loop != l || l.conns.get(int32(lc.fd)) != c {
				continue // closed by an earlier send's failure
			}
			if err != nil {
				l.close(c, err)
				continue
			}
			l.sent(c, ps.p, l.res[i])
		}
		clear(batch[:k])
		batch = batch[k:]
	}
	l.batch = l.batch[:0]
	for i, c := range flush {
		flush[i] = nil
		lc := c.lc
		if lc == nil || lc.loop != l || l.conns.get(int32(lc.fd)) != c {
			continue
		}
		l.afterFlush(c)
	}
}

// sent applies the result of the ring's send of p for c: what the socket
// did not take waits in spill and c leaves the loop, as with write(2).
func (l *eventLoop) sent(c *Conn, p []byte, res int32) {
	lc := c.lc
	lc.batched = false
	written := 0
	switch {
	case res >= 0:
		written = int(res)
	case unix.Errno(-res) == unix.EAGAIN:
	default:
		c.writeFailed = true
		l.close(c, unix.Errno(-res))
		return
	}
	c.stats[StatBytesWritten].Add(uint64(written))
	if written < len(p) {
		lc.spill = slices.Insert(lc.spill, 0, p[written:]...)
		lc.leave = true
	}
}

// flushConn writes connection c's replies, then lets it leave or closes
// it if that is what is left to do.
func (l *eventLoop) flushConn(c *Conn) {
	lc := c.lc
	if _, replies := lc.h.Buffered(); replies > 0 {
		if err := lc.h.Flush(); err != nil {
			l.close(c, err)
			return
		}
	}
	l.afterFlush(c)
}

// afterFlush lets connection c leave, or closes it, once its replies
// were written, if that is what is left to do.
func (l *eventLoop) afterFlush(c *Conn) {
	lc := c.lc
	c.flushAt = 0
	if lc.leave {
		l.depart(c)
		return
	}
	if lc.eof {
		if requests, _ := lc.h.Buffered(); requests == 0 || lc.h.Framing() != FrameComplete {
			l.close(c, nil)
		}
	}
}

// tick is how often the loop checks its connections' deadlines: a
// quarter of the shorter timeout (CONFIG SET timeout changes the idle
// one at run time), at most a second, at least 10 ms.
func (l *eventLoop) tick() time.Duration {
	tick := time.Second
	for _, t := range []time.Duration{l.srv.IdleTimeout(), l.srv.cfg.CommandTimeout} {
		if t > 0 {
			tick = min(tick, t/4)
		}
	}
	return max(tick, 10*time.Millisecond)
}

// checkDeadlines closes the connections that have not completed a
// started request within CommandTimeout, and those whose last complete
// command is more than IdleTimeout ago. The idle time counts from the last
// complete command whether or not a request has begun since, as on a
// connection's own goroutine (armRead), so a client that trickles the
// bytes of a request it never finishes (slowloris) is closed by the idle
// timeout too; it counts as a command timeout there, and here. (Writes
// never wait in a loop: a reply the socket does not take moves the
// connection to its goroutine, where WriteTimeout applies.)
func (l *eventLoop) checkDeadlines(now int64) {
	it, ct := l.srv.IdleTimeout(), l.srv.cfg.CommandTimeout
	if it <= 0 && ct <= 0 {
		return
	}
	for _, c := range l.conns {
		if c == nil {
			continue
		}
		lc := c.lc
		started := lc.partialAt != 0
		idle := it > 0 && !c.idleExempt && now-c.lastCmd.Load() >= int64(it)
		switch {
		case started && (idle || ct > 0 && now-lc.partialAt >= int64(ct)):
			c.Count(StatCommandTimeouts)
			l.srv.log.Debug("command not completed in time; connection closed", "conn_id", c.id)
			l.close(c, nil)
		case idle:
			if requests, _ := lc.h.Buffered(); requests > 0 {
				continue // complete requests wait for their turn (again)
			}
			c.Count(StatIdleKicks)
			l.srv.log.Debug("idle connection closed", "conn_id", c.id)
			l.close(c, nil)
		}
	}
}

// closeAll ends the loop at shutdown: every connection's complete
// buffered requests are served and answered, then it is closed.
func (l *eventLoop) closeAll() {
	for range 2 {
		for _, c := range l.conns {
			if c == nil {
				continue
			}
			l.serve(c, false)
		}
		l.flushAll()
		if len(l.again) == 0 {
			break
		}
		l.again = nil
	}
	for _, c := range l.conns {
		if c == nil {
			continue
		}
		l.close(c, nil)
	}
	l.mu.Lock()
	inbox := l.inbox
	l.inbox = nil
	l.endWatchesLocked()
	l.mu.Unlock()
	for _, c := range inbox {
		l.finish(c, nil)
	}
}

// close ends connection c, which is in the loop.
func (l *eventLoop) close(c *Conn, err error) {
	lc := c.lc
	_ = unix.EpollCtl(l.epfd, unix.EPOLL_CTL_DEL, lc.fd, nil)
	l.conns.put(int32(lc.fd), nil)
	l.finish(c, err)
}

// finish releases connection c, in the loop or never added to it.
func (l *eventLoop) finish(c *Conn, err error) {
	lc := c.lc
	if cl, ok := lc.h.(io.Closer); ok {
		_ = cl.Close()
	}
	_ = unix.Close(lc.fd)
	if err != nil && !errors.Is(err, io.EOF) {
		l.srv.log.Debug("connection closed", "conn_id", c.id, "err", err)
	}
	l.srv.removeConn(c)
}

// depart moves connection c from the loop to a goroutine of its own: its
// socket goes back to Go's poller, its Handler keeps every byte it holds,
// and the goroutine first sends what the socket did not take.
func (l *eventLoop) depart(c *Conn) {
	lc := c.lc
	_ = unix.EpollCtl(l.epfd, unix.EPOLL_CTL_DEL, lc.fd, nil)
	l.conns.put(int32(lc.fd), nil)
	f := os.NewFile(uintptr(lc.fd), "tcp")
	nc, err := net.FileConn(f) // a duplicate, in Go's poller
	_ = f.Close()
	if err != nil {
		lc.fd = -1
		if cl, ok := lc.h.(io.Closer); ok {
			_ = cl.Close()
		}
		l.srv.log.Error("connection could not leave the event loop; closed", "conn_id", c.id, "err", err)
		l.srv.removeConn(c)
		return
	}
	c.srv.mu.Lock()
	c.nc, c.inLoop = nc, nil
	c.ctl.setFD(fdOf(nc))
	if c.srv.shuttingDown.Load() || c.Killed() {
		_ = nc.SetReadDeadline(time.Unix(1, 0))
	}
	c.srv.mu.Unlock()
	c.lc = nil
	l.srv.loopDeparted.Add(1)
	l.srv.log.Debug("connection left the event loop for a goroutine", "conn_id", c.id)
	go c.serveHandler(lc.h, lc)
}

// read is Conn.Read in a loop: one non-blocking read.
func (lc *loopConn) read(c *Conn, p []byte) (int, error) {
	if lc.received {
		// The ring read for this connection this pass (recvRing).
		lc.received = false
		pre, res := lc.pre, lc.preRes
		lc.pre = nil
		switch {
		case res == 0:
			return 0, io.EOF
		case unix.Errno(-res) == unix.EAGAIN:
			return 0, ErrWouldBlock
		case res < 0:
			return 0, unix.Errno(-res)
		}
		n := copy(p, pre[:res])
		if n < int(res) {
			// Cannot happen: the read asked for no more than the room.
			return n, errReceivedTooMuch
		}
		c.stats[StatBytesRead].Add(uint64(n))
		c.rawIn.Add(uint64(n))
		return n, nil
	}
	for {
		n, err := rawRead(lc.fd, p)
		switch {
		case err == unix.EINTR:
			continue
		case err == unix.EAGAIN:
			return 0, ErrWouldBlock
		case err != nil:
			return 0, err
		case n == 0 && len(p) > 0:
			return 0, io.EOF
		}
		c.stats[StatBytesRead].Add(uint64(n))
		c.rawIn.Add(uint64(n))
		return n, nil
	}
}

// write is Conn.Write in a loop: what the socket takes now; the rest
// waits in spill, and the connection leaves the loop after this pass.
func (lc *loopConn) write(c *Conn, p []byte) (int, error) {
	if l := lc.loop; l.batching {
		if lc.batched || len(lc.spill) > 0 {
			// After bytes the ring has not sent yet: they wait in spill
			// (sent puts what that send leaves in front of them).
			lc.spill = append(lc.spill, p...)
			lc.leave = true
			return len(p), nil
		}
		lc.batched = true
		l.batch = append(l.batch, pendingSend{c, p}) // flushRing sends it
		return len(p), nil
	}
	written := 0
	for len(lc.spill) == 0 && written < len(p) {
		n, err := rawWrite(lc.fd, p[written:])
		if err == unix.EINTR {
			continue
		}
		if err == unix.EAGAIN {
			break
		}
		if err != nil {
			c.writeFailed = true
			c.stats[StatBytesWritten].Add(uint64(written))
			return written, err
		}
		written += n
	}
	c.stats[StatBytesWritten].Add(uint64(written))
	if written < len(p) {
		lc.spill = append(lc.spill, p[written:]...)
		lc.leave = true
	}
	return len(p), nil
}

var errReceivedTooMuch = errors.New("server: event loop received more than the read buffer's room")

// The loop's sockets are non-blocking, so their reads and writes return at
// once: they go through RawSyscall, without the runtime's entersyscall and
// exitsyscall around them (which a call that may block needs, to hand
// the thread's P to another goroutine). At one read and one write per
// request at P=1, that bookkeeping was a measurable part of the request.

func rawRead(fd int, p []byte) (int, error)  { return rawIO(unix.SYS_READ, fd, p) }
func rawWrite(fd int, p []byte) (int, error) { return rawIO(unix.SYS_WRITE, fd, p) }

// rawIO is read(2) or write(2) (trap) of p on fd through RawSyscall.
func rawIO(trap uintptr, fd int, p []byte) (int, error) {
	var ptr unsafe.Pointer
	if len(p) > 0 {
		ptr = unsafe.Pointer(&p[0])
	}
	n, _, e := unix.RawSyscall(trap, uintptr(fd), uintptr(ptr), uintptr(len(p)))
	if e != 0 {
		return 0, e
	}
	return int(n), nil
}

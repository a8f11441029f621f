package server

import (
	"crypto/tls"
	"net"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// Operators' controls over connections, shared by both ports: the settings
// CONFIG SET changes while connections run (maxclients, timeout), killing
// a connection from another one (CLIENT KILL), pausing clients (CLIENT
// PAUSE), and what each connection publishes for CLIENT LIST and
// memcached's "stats conns".
//
// Every field here is read or written by goroutines other than the
// connection's own, so each is an atomic (or behind its own lock); the
// connection's hot path reads at most one of them per command (the pause
// pointer) and one per batch (the idle timeout).

// liveSettings are the server's settings that change at run time.
type liveSettings struct {
	maxConns    atomic.Int64 // Config.MaxConns
	idleTimeout atomic.Int64 // Config.IdleTimeout in ns; <= 0: none
	pause       atomic.Pointer[pauseState]
}

func (l *liveSettings) init(cfg *Config) {
	l.maxConns.Store(int64(cfg.MaxConns))
	l.idleTimeout.Store(int64(cfg.IdleTimeout))
}

// connControl is a connection's part in the controls.
type connControl struct {
	sockFD  atomic.Int32  // the socket's descriptor, for CLIENT LIST, stats conns and InputPending from any goroutine; -1: unknown
	killed  atomic.Bool   // Kill was called
	killCh  chan struct{} // closed by Kill
	handler atomic.Pointer[Handler]
	command atomic.Pointer[string] // the last command's name (SetCommand)
	cmdOwn  *string                // the serving goroutine's copy of command

	// state is what the serving goroutine is doing (connBusy, ...), and
	// pokeMu orders a poke (a past read deadline that makes a waiting
	// connection look at its idle timeout again) against the connection
	// leaving its wait; see poke.
	state  atomic.Int32
	pokeMu sync.Mutex
}

// Connection states (connControl.state).
const (
	connBusy    int32 = iota // reading or running a command
	connWaiting              // waiting for the next command
	connPoked                // waiting, and a poke set a past read deadline
	connPaused               // waiting for a client pause to end
)

func (cc *connControl) init(nc net.Conn) {
	cc.setFD(fdOf(nc))
	cc.killCh = make(chan struct{})
}

// setFD records the socket's descriptor (it changes when the connection
// enters or leaves an event loop). srv.mu is held, or the connection is
// not yet listed.
func (cc *connControl) setFD(fd int) {
	cc.sockFD.Store(int32(fd))
}

// InputMark marks the input the client has sent so far, for InputServed:
// on a plain TCP socket the bytes the kernel has received (tcp_info), so
// bytes a read has just taken and not yet counted are covered too; ok is
// false elsewhere (TLS, Unix sockets, not Linux). Any goroutine may call
// it. PUBLISH waits on the two so that it comes after what a subscriber
// sent before it (an UNSUBSCRIBE), as Redis's one thread serves requests
// in the order they arrive.
func (c *Conn) InputMark() (mark uint64, ok bool) {
	if !c.tcp {
		return 0, false
	}
	return socketReceived(int(c.ctl.sockFD.Load()))
}

// InputServed reports whether the connection has served every complete
// request within the first mark bytes of its input, or waits in a
// blocking command (whose later requests wait for it). Any goroutine may
// call it.
func (c *Conn) InputServed(mark uint64) bool {
	return c.servedIn.Load() >= mark || c.blocked.Load() != nil
}

// InputPending reports, where InputMark cannot tell, whether the client
// has sent requests the connection has not served yet: it is reading or
// running commands (not waiting in a blocking command or a client pause),
// or bytes wait unread in its socket.
func (c *Conn) InputPending() bool {
	// serving again after the socket: a read that took the bytes after
	// the first look marks the connection busy before it returns.
	return c.serving() || socketUnread(int(c.ctl.sockFD.Load())) > 0 || c.serving()
}

// serving reports whether the connection is reading or running commands,
// and not waiting in a blocking command.
func (c *Conn) serving() bool {
	return c.ctl.state.Load() == connBusy && c.blocked.Load() == nil
}

// fdOf is nc's file descriptor, or -1. The descriptor is only read, never
// used for I/O.
func fdOf(nc net.Conn) int {
	if tc, ok := nc.(*tls.Conn); ok {
		nc = tc.NetConn()
	}
	sc, ok := nc.(syscall.Conn)
	if !ok {
		return -1
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return -1
	}
	fd := -1
	_ = raw.Control(func(f uintptr) { fd = int(f) })
	return fd
}

// MaxConns is the connection limit in effect (memcached -c, Redis's
// maxclients).
func (s *Server) MaxConns() int { return int(s.live.maxConns.Load()) }

// SetMaxConns changes the connection limit. Connections over a lowered
// limit stay; new ones are refused until the count is under it, as in
// Redis.
func (s *Server) SetMaxConns(n int) { s.live.maxConns.Store(int64(n)) }

// IdleTimeout is the idle timeout in effect; 0: none.
func (s *Server) IdleTimeout() time.Duration { return max(time.Duration(s.live.idleTimeout.Load()), 0) }

// SetIdleTimeout changes the idle timeout (d <= 0: none). Connections
// waiting for a command look at it at once: one idle longer than d since
// its last command is closed, the others wait under the new rule.
func (s *Server) SetIdleTimeout(d time.Duration) {
	s.live.idleTimeout.Store(int64(max(d, 0)))
	s.EachConn(func(c *Conn) { c.poke() })
}

// poke wakes the connection if it is waiting for a command, by setting its
// read deadline in the past, so that it applies the idle timeout again
// (rearmIdle). A connection that is reading or running a command is left
// alone: a past deadline would cut its command short. The connection
// marks itself waiting before it reads and clears the mark when its wait
// ends (leaveWait); the poke only touches the deadline after turning the
// mark into connPoked, under pokeMu, and a connection that finds its mark
// poked takes pokeMu before it sets its own deadline, so the poke's past
// deadline can never outlive the wait.
func (c *Conn) poke() {
	c.ctl.pokeMu.Lock()
	defer c.ctl.pokeMu.Unlock()
	if c.ctl.state.CompareAndSwap(connWaiting, connPoked) {
		_ = c.nc.SetReadDeadline(pokeDeadline)
	}
}

// pokeDeadline is a read deadline in the past: it wakes a blocked Read.
var pokeDeadline = time.Unix(1, 0)

// enterWait marks the connection waiting for a command.
func (c *Conn) enterWait() {
	c.servedIn.Store(c.rawIn.Load()) // every complete request read is served
	c.ctl.state.Store(connWaiting)
}

// leaveWait ends a wait. It reports whether a poke happened, in which case
// it has cleared the poke's deadline and the caller must set its own.
func (c *Conn) leaveWait() bool {
	if c.ctl.state.Swap(connBusy) != connPoked {
		return false
	}
	c.ctl.pokeMu.Lock() // the poke has finished with the deadline
	c.ctl.pokeMu.Unlock()
	_ = c.nc.SetReadDeadline(time.Time{})
	c.readDeadline = 0
	if c.srv.shuttingDown.Load() {
		_ = c.nc.SetReadDeadline(pokeDeadline) // keep Shutdown's
	}
	return true
}

// Kill closes the connection from any goroutine (CLIENT KILL). Its own
// goroutine sees its socket closed and ends as if the client had gone, and
// a wait it is in (a client pause) ends. It reports false if the
// connection was killed already. A connection killing itself should
// rather end after its reply, as QUIT does.
func (c *Conn) Kill() bool {
	if c.ctl.killed.Swap(true) {
		return false
	}
	close(c.ctl.killCh)
	c.srv.mu.Lock()
	nc, l := c.nc, c.inLoop
	c.srv.mu.Unlock()
	if l != nil {
		l.kill(c) // its loop closes it (a connection leaving the loop meanwhile sees Killed)
		return true
	}
	if tc, ok := nc.(*tls.Conn); ok {
		// tls.Conn.Close writes close_notify under the lock a blocked
		// reply write holds; the socket itself closes at once.
		nc = tc.NetConn()
	}
	_ = nc.Close()
	return true
}

// Killed reports whether Kill was called.
func (c *Conn) Killed() bool { return c.ctl.killed.Load() }

// KillCh is closed when the connection is killed, for waits that must end
// then.
func (c *Conn) KillCh() <-chan struct{} { return c.ctl.killCh }

// Fd is the connection's socket descriptor, or -1.
func (c *Conn) Fd() int { return int(c.ctl.sockFD.Load()) }

// Handler is the protocol's side of the connection, once it has one (nil
// before), for a protocol that describes its connections from another
// goroutine (CLIENT LIST); what it reads there must be safe for that.
func (c *Conn) Handler() Handler {
	if h := c.ctl.handler.Load(); h != nil {
		return *h
	}
	return nil
}

// SetCommand records the name of the command the connection runs, for
// CLIENT LIST's cmd; name must not change afterwards (a command table's
// entry). It is on every command's path: the atomic store (a locked
// instruction on amd64) happens only when the command differs from the
// previous one, which a plain comparison tells. Only the serving
// goroutine may call it.
func (c *Conn) SetCommand(name *string) {
	if c.ctl.cmdOwn != name {
		c.ctl.cmdOwn = name
		c.ctl.command.Store(name)
	}
}

// Command is the name SetCommand last recorded, or "NULL" (Redis's word
// for a client that has run nothing).
func (c *Conn) Command() string {
	if p := c.ctl.command.Load(); p != nil {
		return *p
	}
	return "NULL"
}

// ConnState is what a connection is doing, as another goroutine sees it.
type ConnState uint8

const (
	// StateBusy: reading or running a command.
	StateBusy ConnState = iota
	// StateWaiting: waiting for the next command.
	StateWaiting
	// StatePaused: waiting for a client pause to end.
	StatePaused
)

// State is what the connection is doing now.
func (c *Conn) State() ConnState {
	switch c.ctl.state.Load() {
	case connWaiting, connPoked:
		return StateWaiting
	case connPaused:
		return StatePaused
	}
	return StateBusy
}

// pauseState is one client pause (CLIENT PAUSE): until end, the commands
// it covers wait. A pause that is extended keeps its done channel, which
// is closed when it ends.
type pauseState struct {
	end  time.Time
	all  bool // every command waits, not only writes
	done chan struct{}
}

// Pause makes commands wait until end: every command when all is set,
// else only those that write (the protocol decides which: Conn.Unpaused).
// A pause already in force is extended, never shortened, and never
// narrowed from all to writes, as Redis's pauseClients.
func (s *Server) Pause(end time.Time, all bool) {
	for {
		old := s.live.pause.Load()
		n := &pauseState{end: end, all: all}
		if old != nil {
			n.end, n.all, n.done = old.end, old.all || all, old.done
			if end.After(old.end) {
				n.end = end
			}
		} else {
			n.done = make(chan struct{})
		}
		if s.live.pause.CompareAndSwap(old, n) {
			return
		}
	}
}

// Unpause ends the pause in force, if any (CLIENT UNPAUSE).
func (s *Server) Unpause() {
	for {
		ps := s.live.pause.Load()
		if ps == nil || s.endPause(ps) {
			return
		}
	}
}

// endPause ends ps if it is the pause in force, and reports whether it was.
func (s *Server) endPause(ps *pauseState) bool {
	if !s.live.pause.CompareAndSwap(ps, nil) {
		return false
	}
	close(ps.done)
	return true
}

// Paused reports whether a pause may be in force: the one check on every
// command's path, an atomic load. A pause whose time has passed stays
// until a command looks at it (Unpaused).
func (s *Server) Paused() bool { return s.live.pause.Load() != nil }

// PauseInfo reports the pause in force: whether there is one, its end and
// whether it covers every command.
func (s *Server) PauseInfo() (on bool, end time.Time, all bool) {
	ps := s.live.pause.Load()
	if ps == nil || !time.Now().Before(ps.end) {
		return false, time.Time{}, false
	}
	return true, ps.end, ps.all
}

// Unpaused waits, without using the CPU, until no pause covers a command
// that writes (write) or any command (!write), and reports true; or false
// when the connection is killed or the server shuts down meanwhile (the
// command must then not run). Call it when Paused reports true.
func (c *Conn) Unpaused(write bool) bool {
	s := c.srv
	for {
		if c.Killed() {
			// Checked first: a kill that woke the wait below may come
			// just before the pause ends, and the command must not run.
			return false
		}
		ps := s.live.pause.Load()
		if ps == nil || !ps.all && !write {
			return true
		}
		d := time.Until(ps.end)
		if d <= 0 {
			s.endPause(ps)
			continue
		}
		if c.Killed() || s.shuttingDown.Load() {
			return false
		}
		c.ctl.state.Store(connPaused)
		t := time.NewTimer(d)
		select {
		case <-ps.done:
		case <-t.C:
		case <-c.ctl.killCh:
		}
		t.Stop()
		c.ctl.state.Store(connBusy)
	}
}

// ListenerFd is one listener's address and socket descriptor, for
// memcached's "stats conns".
type ListenerFd struct {
	Addr string
	Fd   int // -1: unknown (a TLS listener hides its socket)
}

// ListenerFds lists the listeners handed to Serve with their descriptors.
func (s *Server) ListenerFds() []ListenerFd {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]ListenerFd, 0, len(s.listeners))
	for _, ln := range s.listeners {
		fd := -1
		if sc, ok := ln.(syscall.Conn); ok {
			if raw, err := sc.SyscallConn(); err == nil {
				_ = raw.Control(func(f uintptr) { fd = int(f) })
			}
		}
		out = append(out, ListenerFd{Addr: ln.Addr().String(), Fd: fd})
	}
	return out
}

package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/minikv/minikv/internal/server/acl"
	"github.com/minikv/minikv/internal/store"
)

// Version is the version string answered to memcached's "version" command.
// memcached clients (libmemcached in particular) parse the leading
// major.minor.micro numbers, so it keeps memcached's shape and carries
// MiniKV's own release after the dash.
const Version = ProtocolVersion + "-minikv-" + Release

// Release is MiniKV's own release number.
const Release = "0.1.0"

// ProtocolVersion is the memcached version whose text protocol MiniKV speaks.
const ProtocolVersion = "1.6.38"

// Config holds the server settings. One convention for every field, as in
// store.Config and lsm.Options: the zero value is the default noted, and a
// negative duration turns that timeout off. (IdleTimeout's default is off.)
type Config struct {
	MaxConns        int               // simultaneous connections; default 1024
	IdleTimeout     time.Duration     // counted from the last complete command; default (0) and <0: never
	CommandTimeout  time.Duration     // a started command (and a TLS handshake) must finish within this; default 30s, <0 = never
	WriteTimeout    time.Duration     // a reply write must make progress within this; default 30s, <0 = never
	AuthToken       []byte            // when set, "auth <token>" (memcached) / AUTH (RESP) must come first
	AuthUsers       map[string]string // memcached -Y: user -> password for the set-handshake
	ACLFile         string            // aclfile: the ACL users, loaded at start, ACL LOAD and ACL SAVE
	ReqsPerEvent    int               // flush after this many pipelined requests; default 20
	DisableCAS      bool              // -C: report CAS 0, cas behaves as without tokens
	DisableFlushAll bool              // -F: flush_all is refused
	Databases       int               // the RESP port's databases (SELECT 0..n-1); default 16, at most 255
	ShutdownTimeout time.Duration     // default 10s
	Threads         int               // reported in stats (memcached -t)
	Verbosity       int               // verbosity level (memcached -v)
	MaxItemSize     int64             // memcached's -I: the memcached port's item size (0: the store's); reported in stats settings
	NoEvict         bool              // reported in stats settings
	Logger          *slog.Logger      // default slog.Default()

	// PubsubOutputLimit bounds the output pending on a connection with
	// an Outbox (a pub/sub subscriber); default Redis's pubsub class,
	// 32 MiB hard, 8 MiB for 60 s soft (outbox.go).
	PubsubOutputLimit OutputLimit

	// EventLoops is the number of event loops serving plain TCP
	// connections (loop_linux.go); 0 (the default) serves each
	// connection on a goroutine of its own. Linux only.
	EventLoops int
	// NoIOURing makes the event loops write with write(2) even where the
	// kernel offers io_uring (which they use to send a pass's replies in
	// one system call).
	NoIOURing bool

	// NotifyKeyspaceEvents are the keyspace event classes published at
	// start (events.go); CONFIG SET notify-keyspace-events changes them.
	NotifyKeyspaceEvents EventClass
}

// Server is the core every protocol shares: it accepts connections on
// any number of listeners, each speaking one Protocol, and runs each
// connection's loop over the one Store, with the same limits, deadlines,
// auth and counters on every port.
type Server struct {
	cfg   Config
	store *store.Store
	log   *slog.Logger
	start time.Time

	shuttingDown atomic.Bool
	gate         writeGate              // replication's refusal of clients' writes (link.go)
	passEnd      atomic.Pointer[func()] // what an event loop runs after each pass (SetPassEnd)
	passes       atomic.Int32           // event loops inside a pass (InPass)
	closing      chan struct{}          // closed when Shutdown begins
	nextConnID   atomic.Uint64
	currConns    atomic.Int64
	totalConns   atomic.Uint64
	rejected     atomic.Uint64

	mu        sync.Mutex // protects conns, listeners, closed
	conns     map[*Conn]struct{}
	listeners []net.Listener
	closed    counters // counters of connections that have gone away

	wg sync.WaitGroup // one per serving connection and accept loop

	loops        []*eventLoop   // Config.EventLoops of them (loop_linux.go)
	loopsWG      sync.WaitGroup // one per running loop
	loopAttached atomic.Uint64  // connections an event loop took
	loopDeparted atomic.Uint64  // and of those, the ones that left it for a goroutine

	live liveSettings // what CONFIG SET and CLIENT PAUSE change (client.go)

	events keyEvents // keyspace notifications (events.go)

	monitors monitorHub // MONITOR connections (monitor.go)

	acl *acl.Users // the ACL users of both ports (auth.go)
}

// New returns a Server over st.
func New(cfg Config, st *store.Store) *Server {
	if cfg.MaxConns <= 0 {
		cfg.MaxConns = 1024
	}
	if cfg.ReqsPerEvent <= 0 {
		cfg.ReqsPerEvent = 20
	}
	if cfg.CommandTimeout == 0 {
		cfg.CommandTimeout = 30 * time.Second
	}
	if cfg.WriteTimeout == 0 {
		cfg.WriteTimeout = 30 * time.Second
	}
	if cfg.ShutdownTimeout <= 0 {
		cfg.ShutdownTimeout = 10 * time.Second
	}
	if cfg.Threads <= 0 {
		cfg.Threads = runtime.GOMAXPROCS(0)
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	cfg.PubsubOutputLimit = cfg.PubsubOutputLimit.withDefaults()
	s := &Server{
		cfg:     cfg,
		store:   st,
		log:     cfg.Logger,
		start:   time.Now(),
		conns:   make(map[*Conn]struct{}),
		closing: make(chan struct{}),
	}
	s.acl = newACL(s)
	s.live.init(&cfg)
	if cfg.NotifyKeyspaceEvents != 0 {
		s.SetKeyEvents(cfg.NotifyKeyspaceEvents)
	}
	if cfg.EventLoops > 0 {
		if err := s.startLoops(); err != nil {
			// Every connection is served by a goroutine instead.
			s.log.Error("event loops could not start; a goroutine serves each connection", "err", err)
			s.cfg.EventLoops = 0
		}
	}
	return s
}

// ErrServerClosed is returned by Serve after Shutdown.
var ErrServerClosed = errors.New("server: closed")

// Serve accepts connections on ln until Shutdown and serves each with
// proto (memcache.New, redis.New), over the same store, limits and
// counters as every other listener. It always returns a non-nil error;
// after Shutdown it is ErrServerClosed.
func (s *Server) Serve(ln net.Listener, proto Protocol) error {
	s.mu.Lock()
	if s.shuttingDown.Load() {
		s.mu.Unlock()
		ln.Close()
		return ErrServerClosed
	}
	s.listeners = append(s.listeners, ln)
	s.wg.Add(1)
	s.mu.Unlock()
	defer s.wg.Done()

	var backoff time.Duration
	for {
		nc, err := ln.Accept()
		if err != nil {
			if s.shuttingDown.Load() {
				return ErrServerClosed
			}
			// Out of file descriptors and friends: back off and keep
			// serving the connections we have, as net/http does.
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() || isTemporary(err) {
				backoff = min(max(2*backoff, 5*time.Millisecond), time.Second)
				s.log.Warn("accept failed; retrying", "err", err, "delay", backoff)
				time.Sleep(backoff)
				continue
			}
			return fmt.Errorf("server: accept: %w", err)
		}
		backoff = 0
		s.totalConns.Add(1)
		if s.currConns.Add(1) > s.live.maxConns.Load() {
			s.currConns.Add(-1)
			s.rejected.Add(1)
			s.reject(nc, proto)
			continue
		}
		c := s.newConn(nc, proto)
		if c == nil { // shutting down
			s.currConns.Add(-1)
			nc.Close()
			continue
		}
		if !s.attach(c) {
			go c.serve()
		}
	}
}

// reject answers a connection over max-connections in its protocol's form
// (memcached's and Redis's own texts) and closes it. The write is bounded so
// a client that never reads cannot hold the accept loop.
func (s *Server) reject(nc net.Conn, proto Protocol) {
	_ = nc.SetWriteDeadline(time.Now().Add(time.Second))
	_, _ = nc.Write([]byte(proto.MaxConnsReply()))
	nc.Close()
}

func (s *Server) newConn(nc net.Conn, proto Protocol) *Conn {
	c := &Conn{
		srv:     s,
		nc:      nc,
		raddr:   nc.RemoteAddr(),
		laddr:   nc.LocalAddr(),
		proto:   proto,
		id:      s.nextConnID.Add(1),
		created: time.Now(),
	}
	c.diskMark = s.store.DiskMark()
	c.lastCmd.Store(c.created.UnixNano())
	_, c.tcp = nc.(*net.TCPConn)
	c.ctl.init(nc)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.shuttingDown.Load() {
		return nil
	}
	s.conns[c] = struct{}{}
	s.wg.Add(1)
	return c
}

func (s *Server) removeConn(c *Conn) {
	s.mu.Lock()
	delete(s.conns, c)
	s.closed.addFrom(&c.stats)
	s.mu.Unlock()
	s.currConns.Add(-1)
	s.wg.Done()
}

// Shutdown stops accepting, lets in-flight commands finish and flush, closes
// idle connections and waits for every connection to end. When ctx expires
// first, the remaining connections are closed by force.
func (s *Server) Shutdown(ctx context.Context) error {
	s.mu.Lock()
	if !s.shuttingDown.Swap(true) {
		close(s.closing)
	}
	for _, ln := range s.listeners {
		ln.Close()
	}
	s.Unpause() // paused commands go on, and their connections end
	// A read deadline in the past wakes every connection blocked in Read;
	// one that is busy finishes its buffered commands, flushes and exits.
	now := time.Now()
	for c := range s.conns {
		_ = c.nc.SetReadDeadline(now)
	}
	s.mu.Unlock()
	// The loops serve what their connections have buffered, flush, close
	// them and end.
	for _, l := range s.loops {
		l.shutdown()
	}
	defer s.loopsWG.Wait()

	done := make(chan struct{})
	go func() { s.wg.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
	}
	s.mu.Lock()
	for c := range s.conns {
		c.nc.Close()
	}
	s.mu.Unlock()
	<-done
	return ctx.Err()
}

// CurrConns is the number of open client connections.
func (s *Server) CurrConns() int64 { return s.currConns.Load() }

func isTemporary(err error) bool {
	var se interface{ Temporary() bool }
	if errors.As(err, &se) {
		return se.Temporary()
	}
	return errors.Is(err, os.ErrDeadlineExceeded)
}

// Config returns the settings in effect: the Config given to New with its
// defaults filled in.
func (s *Server) Config() Config { return s.cfg }

// Store returns the store every connection serves.
func (s *Server) Store() *store.Store { return s.store }

// Logger returns the server's logger.
func (s *Server) Logger() *slog.Logger { return s.log }

// Started returns the time New was called: uptime counts from it.
func (s *Server) Started() time.Time { return s.start }

// ShuttingDown reports whether Shutdown has begun: from then on no
// connection is accepted.
func (s *Server) ShuttingDown() bool { return s.shuttingDown.Load() }

// EachConn calls fn for every open connection, holding the server's lock:
// fn must not call the Server's other methods.
func (s *Server) EachConn(fn func(c *Conn)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for c := range s.conns {
		fn(c)
	}
}

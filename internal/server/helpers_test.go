package server

import (
	"bufio"
	"context"
	"io"
	"log/slog"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/minikv/minikv/internal/store"
)

// testServer is a MiniKV serving on a real 127.0.0.1 listener.
type testServer struct {
	srv   *Server
	store *store.Store
	addr  string
	done  chan error
}

// startServer starts a server with cfg over a fresh store on 127.0.0.1:0
// and stops both when the test ends.
func startServer(t testing.TB, cfg Config, scfg store.Config) *testServer {
	t.Helper()
	return startServerWith(t, cfg, scfg, func(s *Server) Protocol { return newMemcache(s) })
}

// startServerWith is startServer with the protocol proto returns for the
// listener.
func startServerWith(t testing.TB, cfg Config, scfg store.Config, proto func(*Server) Protocol) *testServer {
	t.Helper()
	if scfg.MaxItemSize == 0 {
		scfg.MaxItemSize = 1 << 20
	}
	if cfg.MaxItemSize == 0 {
		cfg.MaxItemSize = scfg.MaxItemSize
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	st := store.New(scfg)
	srv := New(cfg, st)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ts := &testServer{srv: srv, store: st, addr: ln.Addr().String(), done: make(chan error, 1)}
	p := proto(srv)
	go func() { ts.done <- srv.serve(ln, p) }()
	t.Cleanup(func() { ts.stop(t) })
	return ts
}

func (ts *testServer) stop(t testing.TB) {
	if ts.srv == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := ts.srv.Shutdown(ctx); err != nil {
		t.Errorf("Shutdown: %v", err)
	}
	if err := <-ts.done; err != ErrServerClosed {
		t.Errorf("Serve returned %v, want ErrServerClosed", err)
	}
	ts.store.Close()
	ts.srv = nil
}

// client is a raw text-protocol connection for transcript tests.
type client struct {
	t  testing.TB
	nc net.Conn
	br *bufio.Reader
}

func dial(t testing.TB, addr string) *client {
	t.Helper()
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	return &client{t: t, nc: nc, br: bufio.NewReader(nc)}
}

func (c *client) send(s string) {
	c.t.Helper()
	if _, err := io.WriteString(c.nc, s); err != nil {
		c.t.Fatalf("write %q: %v", s, err)
	}
}

// line reads one reply line without its CRLF.
func (c *client) line() string {
	c.t.Helper()
	_ = c.nc.SetReadDeadline(time.Now().Add(5 * time.Second))
	s, err := c.br.ReadString('\n')
	if err != nil {
		c.t.Fatalf("read: %v (got %q)", err, s)
	}
	return strings.TrimSuffix(s, "\r\n")
}

// expect sends req and checks the reply lines that follow.
func (c *client) expect(req string, want ...string) {
	c.t.Helper()
	c.send(req)
	for _, w := range want {
		if got := c.line(); got != w {
			c.t.Fatalf("after %q: got %q, want %q", req, got, w)
		}
	}
}

// closed reports whether the server closed the connection within d.
func (c *client) closed(d time.Duration) bool {
	_ = c.nc.SetReadDeadline(time.Now().Add(d))
	_, err := c.br.ReadByte()
	return err == io.EOF
}

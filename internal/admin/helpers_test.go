package admin

import (
	"bufio"
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/minikv/minikv/internal/server"
	"github.com/minikv/minikv/internal/server/memcache"
	"github.com/minikv/minikv/internal/server/redis"
	"github.com/minikv/minikv/internal/store"
)

// env is a MiniKV server and its admin port, both on real 127.0.0.1
// listeners, stopped when the test ends.
type env struct {
	srv      *server.Server
	store    *store.Store
	admin    *Server
	addr     string // memcached port
	respAddr string // RESP port, when asked for
	url      string // http://127.0.0.1:port of the admin port

	serveErr chan error
	adminErr chan error
	stopped  bool
}

type envConfig struct {
	server server.Config
	store  store.Config
	admin  Config
	resp   bool       // also serve RESP on a second listener
	disk   store.Disk // the store's disk (durable mode); nil: none
}

func quietLogger() *slog.Logger {
	return slog.New(slog.NewTextHandler(io.Discard, nil))
}

func startEnv(t testing.TB, ec envConfig) *env {
	t.Helper()
	if ec.server.Logger == nil {
		ec.server.Logger = quietLogger()
	}
	if ec.admin.Logger == nil {
		ec.admin.Logger = quietLogger()
	}
	st, err := store.Open(ec.store, ec.disk) // a nil disk: store.New
	if err != nil {
		t.Fatal(err)
	}
	srv := server.New(ec.server, st)
	e := &env{srv: srv, store: st, serveErr: make(chan error, 2), adminErr: make(chan error, 1)}

	ln := listen(t)
	e.addr = ln.Addr().String()
	go func() { e.serveErr <- srv.Serve(ln, memcache.New(srv)) }()
	nServe := 1
	if ec.resp {
		rln := listen(t)
		e.respAddr = rln.Addr().String()
		go func() { e.serveErr <- srv.Serve(rln, redis.New(srv)) }()
		nServe++
	}
	aln := listen(t)
	e.url = "http://" + aln.Addr().String()
	ec.admin.Addr = aln.Addr().String()
	e.admin = New(ec.admin, srv, st)
	go func() { e.adminErr <- e.admin.Serve(aln) }()

	// Serve registers its listener in its own goroutine; wait for it so a
	// test never races start-up.
	deadline := time.Now().Add(5 * time.Second)
	for len(srv.ListenerAddrs()) < nServe {
		if time.Now().After(deadline) {
			t.Fatal("server did not start listening")
		}
		time.Sleep(time.Millisecond)
	}
	t.Cleanup(func() { e.stop(t, nServe) })
	return e
}

func (e *env) stop(t testing.TB, nServe int) {
	if e.stopped {
		return
	}
	e.stopped = true
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := e.srv.Shutdown(ctx); err != nil {
		t.Errorf("server Shutdown: %v", err)
	}
	for range nServe {
		if err := <-e.serveErr; !errors.Is(err, server.ErrServerClosed) {
			t.Errorf("server Serve returned %v, want ErrServerClosed", err)
		}
	}
	if err := e.admin.Shutdown(ctx); err != nil {
		t.Errorf("admin Shutdown: %v", err)
	}
	if err := <-e.adminErr; !errors.Is(err, ErrServerClosed) {
		t.Errorf("admin Serve returned %v, want ErrServerClosed", err)
	}
	e.store.Close()
}

func listen(t testing.TB) net.Listener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return ln
}

// get fetches path from the admin port and returns the status and body.
func (e *env) get(t testing.TB, path string) (int, string) {
	t.Helper()
	c := &http.Client{Timeout: 10 * time.Second}
	resp, err := c.Get(e.url + path)
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("GET %s: reading body: %v", path, err)
	}
	return resp.StatusCode, string(body)
}

// mcConn is a raw memcached text-protocol connection.
type mcConn struct {
	t  testing.TB
	nc net.Conn
	br *bufio.Reader
}

func dialMC(t testing.TB, addr string) *mcConn {
	t.Helper()
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	return &mcConn{t: t, nc: nc, br: bufio.NewReader(nc)}
}

// do sends req and reads reply lines (without CRLF) until one of them is
// a line in until.
func (c *mcConn) do(req string, until ...string) []string {
	c.t.Helper()
	if _, err := io.WriteString(c.nc, req); err != nil {
		c.t.Fatalf("write %q: %v", req, err)
	}
	var lines []string
	_ = c.nc.SetReadDeadline(time.Now().Add(5 * time.Second))
	for {
		s, err := c.br.ReadString('\n')
		if err != nil {
			c.t.Fatalf("after %q: read: %v (got %q so far)", req, err, lines)
		}
		s = strings.TrimSuffix(s, "\r\n")
		lines = append(lines, s)
		for _, u := range until {
			if s == u {
				return lines
			}
		}
	}
}

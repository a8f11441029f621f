package server_test

import (
	"fmt"
	"io"
	"net"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/minikv/minikv/internal/server"
	"github.com/minikv/minikv/internal/server/memcache"
	"github.com/minikv/minikv/internal/server/servertest"
	"github.com/minikv/minikv/internal/store"
)

// TestTwoThousandIdleConnectionsPlusOne fills max-connections with idle
// clients; one more is refused in memcached's words and the held ones still
// work.
func TestTwoThousandIdleConnectionsPlusOne(t *testing.T) {
	if testing.Short() {
		t.Skip("load test")
	}
	ts := startServer(t, server.Config{MaxConns: 2000}, store.Config{})
	conns := make([]net.Conn, 0, 2000)
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	for i := range 2000 {
		c, err := net.Dial("tcp", ts.addr)
		if err != nil {
			t.Fatalf("dial %d: %v", i, err)
		}
		conns = append(conns, c)
	}
	waitFor(t, func() bool { return ts.srv.CurrConns() == 2000 })
	extra := dial(t, ts.addr)
	if got := extra.Line(); got != "ERROR Too many open connections" {
		t.Fatalf("connection 2001 got %q", got)
	}
	for _, i := range []int{0, 999, 1999} {
		c := servertest.NewClient(t, conns[i])
		c.Expect("version\r\n", "VERSION "+server.Version)
	}
	if s := ts.srv.Stats(); s.Rejected != 1 {
		t.Errorf("rejected_connections = %d, want 1", s.Rejected)
	}
}

// TestConnectionChurnLeaksNothing opens and closes connections in every
// state (fresh, mid-command, mid-value, after quit) and checks that no
// goroutine is left behind once the server stops.
func TestConnectionChurnLeaksNothing(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	st := store.New(store.Config{})
	srv := server.New(server.Config{}, st)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln, memcache.New(srv)) }()
	inputs := []string{"", "get a", "set a 0 0 10\r\nabc", "version\r\n", "quit\r\n", "set a 0 0 1\r\nx\r\nget a\r\n"}
	for i := range 500 {
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		io.WriteString(c, inputs[i%len(inputs)])
		c.Close()
	}
	waitFor(t, func() bool { return srv.CurrConns() == 0 })
	if err := srv.Shutdown(t.Context()); err != nil {
		t.Fatal(err)
	}
	<-done
	st.Close()
	runtime.GC()
}

// TestPanicInOneConnectionSparesTheRest checks the per-connection recovery:
// a panic while serving one client closes only that client.
func TestPanicInOneConnectionSparesTheRest(t *testing.T) {
	var victimAddr atomic.Value // the victim's address, once it has connected
	ts := startServerWith(t, server.Config{}, store.Config{}, func(s *server.Server) server.Protocol {
		return panicking{memcache.New(s), &victimAddr}
	})
	bystander := dial(t, ts.addr)
	bystander.Expect("set k 0 0 1\r\nv\r\n", "STORED")

	victim, err := net.Dial("tcp", ts.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer victim.Close()
	waitFor(t, func() bool { return ts.srv.CurrConns() == 2 })
	victimAddr.Store(victim.LocalAddr().String())
	io.WriteString(victim, "version\r\n")
	if _, closed := servertest.ReadReply(victim, 1, 2*time.Second); !closed {
		t.Error("panicking connection not closed")
	}
	bystander.Expect("get k\r\n", "VALUE k 0 1", "v", "END")
}

// panicking wraps a protocol so that serving the client at *victim
// panics: a broken invariant no client input can cause, injected directly.
type panicking struct {
	server.Protocol
	victim *atomic.Value
}

func (p panicking) NewHandler(c *server.Conn) server.Handler {
	return &panicHandler{Handler: p.Protocol.NewHandler(c), c: c, victim: p.victim}
}

type panicHandler struct {
	server.Handler
	c      *server.Conn
	victim *atomic.Value
}

func (h *panicHandler) Serve() (server.Result, error) {
	if addr, _ := h.victim.Load().(string); addr == h.c.RemoteAddr().String() {
		panic(fmt.Sprintf("injected panic for %s", addr))
	}
	return h.Handler.Serve()
}

package server

import (
	"fmt"
	"io"
	"net"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/minikv/minikv/internal/store"
)

// robustCase is one hostile input on the memcached port: the exact reply,
// whether the connection must close, and (checked by the harness) that the
// sentinel value written before it survives byte for byte.
type robustCase struct {
	name   string
	send   string
	want   string
	closed bool
}

var memcacheBadInputs = []robustCase{
	{"negative length", "set s 0 0 -1\r\n", "CLIENT_ERROR bad command line format\r\n", false},
	{"huge length", "set s 0 0 99999999999999999999\r\n", "CLIENT_ERROR bad command line format\r\n", false},
	{"length over int32", "set s 0 0 4294967296\r\n", "CLIENT_ERROR bad command line format\r\n", false},
	{"too large value swallowed", "set s 0 0 2000000\r\n" + strings.Repeat("z", 2000000) + "\r\nget s\r\n",
		"SERVER_ERROR object too large for cache\r\nVALUE s 7 8\r\nsentinel\r\nEND\r\n", false},
	{"wrong data length", "set s 0 0 3\r\nabcdef\r\n", "CLIENT_ERROR bad data chunk\r\nERROR\r\n", false},
	{"missing CRLF after data", "set s 0 0 3\r\nabcXY", "CLIENT_ERROR bad data chunk\r\n", false},
	{"bare LF data", "set s 0 0 1\nx\nget s\n", "CLIENT_ERROR bad data chunk\r\nERROR\r\n", false},
	{"control character in key", "set s\x01 0 0 1\r\nx\r\n", "CLIENT_ERROR bad command line format\r\nERROR\r\n", false},
	{"key too long", "get " + strings.Repeat("k", 251) + "\r\n", "CLIENT_ERROR bad command line format\r\n", false},
	{"flags over 32 bits", "set s 4294967296 0 1\r\nx\r\n", "CLIENT_ERROR bad command line format\r\nERROR\r\n", false},
	{"negative flags", "set s -1 0 1\r\nx\r\n", "CLIENT_ERROR bad command line format\r\nERROR\r\n", false},
	{"failed add", "add s 0 0 1\r\nx\r\n", "NOT_STORED\r\n", false},
	{"stale cas", "cas s 0 0 1 999999\r\nx\r\n", "EXISTS\r\n", false},
	{"incr non-numeric", "incr s 1\r\n", "CLIENT_ERROR cannot increment or decrement non-numeric value\r\n", false},
	{"bad delta", "incr s -1\r\n", "CLIENT_ERROR invalid numeric delta argument\r\n", false},
	{"garbage between commands", "get s\r\n\x00\x01\x02\r\nget s\r\n",
		"VALUE s 7 8\r\nsentinel\r\nEND\r\nERROR\r\nVALUE s 7 8\r\nsentinel\r\nEND\r\n", false},
	{"upper case command", "SET s 0 0 1\r\nx\r\n", "ERROR\r\nERROR\r\n", false},
	{"empty line", "\r\n", "ERROR\r\n", false},
	{"HTTP request", "GET / HTTP/1.1\r\nHost: x\r\n\r\n", "", true},
	{"HTTP POST", "POST /set HTTP/1.0\r\n", "", true},
	{"binary protocol magic", "\x80\x01\x00\x01\x00\x00\x00\x00", "", true},
	{"TLS ClientHello on the plain port", "\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03" + strings.Repeat("\x00", 200), "", true},
	{"line over 2048 bytes", strings.Repeat("x", 3000) + "\r\n", "", true},
	{"no newline at all", strings.Repeat("y", 5000), "", true},
}

// TestBadInputCorpus sends each hostile input on a fresh connection after
// storing a sentinel, checks the exact reply and whether the connection
// closed, and then that the sentinel and the accounting did not change.
func TestBadInputCorpus(t *testing.T) {
	ts := startServer(t, Config{}, store.Config{})
	setup := dial(t, ts.addr)
	setup.expect("set s 7 0 8\r\nsentinel\r\n", "STORED")
	setup.send("gets s\r\n")
	casLine := setup.line()
	setup.line()
	setup.line()
	before := ts.store.Stats()
	for _, tc := range memcacheBadInputs {
		t.Run(tc.name, func(t *testing.T) {
			nc, err := net.Dial("tcp", ts.addr)
			if err != nil {
				t.Fatal(err)
			}
			defer nc.Close()
			go io.WriteString(nc, tc.send)
			got, closed := readReply(nc, len(tc.want), 2*time.Second)
			if got != tc.want || closed != tc.closed {
				t.Errorf("%q...:\n got %q (closed %v)\nwant %q (closed %v)", trunc(tc.send), got, closed, tc.want, tc.closed)
			}
			check := dial(t, ts.addr)
			check.expect("gets s\r\n", casLine, "sentinel", "END")
			if st := ts.store.Stats(); st.Items != before.Items || st.Bytes != before.Bytes {
				t.Errorf("store changed: items %d->%d bytes %d->%d", before.Items, st.Items, before.Bytes, st.Bytes)
			}
		})
	}
}

// readReply reads want bytes (or until close or timeout when want is 0) and
// reports whether the server closed the connection right after.
func readReply(nc net.Conn, want int, d time.Duration) (string, bool) {
	_ = nc.SetReadDeadline(time.Now().Add(d))
	buf := make([]byte, want)
	n, err := io.ReadFull(nc, buf)
	if err != nil {
		return string(buf[:n]), err == io.EOF || err == io.ErrUnexpectedEOF || isReset(err)
	}
	_ = nc.SetReadDeadline(time.Now().Add(300 * time.Millisecond))
	var one [1]byte
	_, err = nc.Read(one[:])
	return string(buf), err == io.EOF || isReset(err)
}

func isReset(err error) bool {
	return err != nil && (strings.Contains(err.Error(), "reset") || strings.Contains(err.Error(), "broken pipe"))
}

func trunc(s string) string {
	if len(s) > 40 {
		return s[:40]
	}
	return s
}

// TestTwoThousandIdleConnectionsPlusOne fills max-connections with idle
// clients; one more is refused in memcached's words and the held ones still
// work.
func TestTwoThousandIdleConnectionsPlusOne(t *testing.T) {
	if testing.Short() {
		t.Skip("load test")
	}
	ts := startServer(t, Config{MaxConns: 2000}, store.Config{})
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
	if got := extra.line(); got != "ERROR Too many open connections" {
		t.Fatalf("connection 2001 got %q", got)
	}
	for _, i := range []int{0, 999, 1999} {
		c := &client{t: t, nc: conns[i], br: newBufReader(conns[i])}
		c.expect("version\r\n", "VERSION "+Version)
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
	srv := New(Config{}, st)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
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
	ts := startServerWith(t, Config{}, store.Config{}, func(s *Server) Protocol {
		return panicking{newMemcache(s), &victimAddr}
	})
	bystander := dial(t, ts.addr)
	bystander.expect("set k 0 0 1\r\nv\r\n", "STORED")

	victim, err := net.Dial("tcp", ts.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer victim.Close()
	waitFor(t, func() bool { return ts.srv.CurrConns() == 2 })
	victimAddr.Store(victim.LocalAddr().String())
	io.WriteString(victim, "version\r\n")
	if _, closed := readReply(victim, 1, 2*time.Second); !closed {
		t.Error("panicking connection not closed")
	}
	bystander.expect("get k\r\n", "VALUE k 0 1", "v", "END")
}

// panicking wraps a protocol so that serving the client at *victim
// panics: a broken invariant no client input can cause, injected directly.
type panicking struct {
	Protocol
	victim *atomic.Value
}

func (p panicking) NewHandler(c *Conn) Handler {
	return &panicHandler{Handler: p.Protocol.NewHandler(c), c: c, victim: p.victim}
}

type panicHandler struct {
	Handler
	c      *Conn
	victim *atomic.Value
}

func (h *panicHandler) Serve() (Result, error) {
	if addr, _ := h.victim.Load().(string); addr == h.c.RemoteAddr().String() {
		panic(fmt.Sprintf("injected panic for %s", addr))
	}
	return h.Handler.Serve()
}

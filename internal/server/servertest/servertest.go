// Package servertest runs MiniKV servers for the tests of the server core
// and of its protocol packages: a server over a fresh store on real
// 127.0.0.1 listeners, stopped when the test ends, and raw clients that
// check replies byte for byte.
//
// It imports no protocol package (their tests import it), so the caller
// hands each listener its Protocol:
//
//	s := servertest.Start(t, server.Config{}, store.Config{})
//	addr := s.Listen(t, memcache.New(s.Server))
//	c := servertest.Dial(t, addr)
//	c.Expect("set k 0 0 1\r\nv\r\n", "STORED")
package servertest

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/minikv/minikv/internal/server"
	"github.com/minikv/minikv/internal/store"
)

// Server is a server core over its own store.
type Server struct {
	*server.Server
	Store *store.Store

	done    []chan error // one per listener: what its Serve returned
	stopped bool
}

// Start starts a server with cfg over a fresh store with scfg, with no
// listener yet, and stops both when the test ends. As in minikv, the
// store's item size defaults to the record's limit (4 GiB-1) and the
// memcached port's (-I) to 1 MiB, or the store's when that is smaller;
// the logger discards.
func Start(t testing.TB, cfg server.Config, scfg store.Config) *Server {
	t.Helper()
	if scfg.MaxItemSize == 0 {
		scfg.MaxItemSize = math.MaxUint32
	}
	if cfg.MaxItemSize == 0 {
		cfg.MaxItemSize = min(scfg.MaxItemSize, 1<<20)
	}
	// MINIKV_TEST_EVENT_LOOPS=N runs the tests' servers on N event loops
	// (make test runs the protocol packages both ways): StartOn reads it.
	return StartOn(t, cfg, store.New(scfg))
}

// StartOn is Start over a store the test built (a durable one, over a
// disk it controls), which Stop closes.
func StartOn(t testing.TB, cfg server.Config, st *store.Store) *Server {
	t.Helper()
	if cfg.MaxItemSize == 0 {
		cfg.MaxItemSize = 1 << 20
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if cfg.EventLoops == 0 {
		cfg.EventLoops, _ = strconv.Atoi(os.Getenv("MINIKV_TEST_EVENT_LOOPS"))
	}
	s := &Server{Server: server.New(cfg, st), Store: st}
	t.Cleanup(func() { s.Stop(t) })
	return s
}

// Listen serves p on a new 127.0.0.1 listener and returns its address.
func (s *Server) Listen(t testing.TB, p server.Protocol) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s.Serve(ln, p)
	return ln.Addr().String()
}

// Serve serves p on ln, a listener the test opened itself (so that it
// knows the address before the protocol is built, as a cluster's slot
// map must), until Stop.
func (s *Server) Serve(ln net.Listener, p server.Protocol) {
	done := make(chan error, 1)
	s.done = append(s.done, done)
	srv := s.Server
	go func() { done <- srv.Serve(ln, p) }()
}

// Stop shuts the server down (within 5 s), checks that every listener's
// Serve returned ErrServerClosed, and closes the store. Later calls do
// nothing.
func (s *Server) Stop(t testing.TB) {
	if s.stopped {
		return
	}
	s.stopped = true
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := s.Shutdown(ctx); err != nil {
		t.Errorf("Shutdown: %v", err)
	}
	for _, done := range s.done {
		if err := <-done; err != server.ErrServerClosed {
			t.Errorf("Serve returned %v, want ErrServerClosed", err)
		}
	}
	s.Store.Close()
}

// Client is a raw memcached text-protocol connection for transcript tests.
type Client struct {
	T    testing.TB
	Conn net.Conn
	R    *bufio.Reader
}

// Dial connects to addr; the connection closes when the test ends.
func Dial(t testing.TB, addr string) *Client {
	t.Helper()
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	return NewClient(t, nc)
}

// NewClient is a Client over nc (a TLS or in-memory connection).
func NewClient(t testing.TB, nc net.Conn) *Client {
	return &Client{T: t, Conn: nc, R: bufio.NewReader(nc)}
}

// Send writes s.
func (c *Client) Send(s string) {
	c.T.Helper()
	if _, err := io.WriteString(c.Conn, s); err != nil {
		c.T.Fatalf("write %q: %v", s, err)
	}
}

// Line reads one reply line without its CRLF.
func (c *Client) Line() string {
	c.T.Helper()
	_ = c.Conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	s, err := c.R.ReadString('\n')
	if err != nil {
		c.T.Fatalf("read: %v (got %q)", err, s)
	}
	return strings.TrimSuffix(s, "\r\n")
}

// Expect sends req and checks the reply lines that follow.
func (c *Client) Expect(req string, want ...string) {
	c.T.Helper()
	c.Send(req)
	for _, w := range want {
		if got := c.Line(); got != w {
			c.T.Fatalf("after %q: got %q, want %q", req, got, w)
		}
	}
}

// Closed reports whether the server closed the connection within d.
func (c *Client) Closed(d time.Duration) bool {
	_ = c.Conn.SetReadDeadline(time.Now().Add(d))
	_, err := c.R.ReadByte()
	return err == io.EOF
}

// ReadReply reads want bytes from nc (or until close or timeout when want
// is 0) and reports whether the server closed the connection right after.
func ReadReply(nc net.Conn, want int, d time.Duration) (string, bool) {
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

// RESPClient is a raw RESP connection for transcript tests.
type RESPClient struct {
	T    testing.TB
	Conn net.Conn
	R    *bufio.Reader
}

// DialRESP connects to addr; the connection closes when the test ends.
func DialRESP(t testing.TB, addr string) *RESPClient {
	t.Helper()
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	return &RESPClient{T: t, Conn: nc, R: bufio.NewReader(nc)}
}

// Send writes s.
func (c *RESPClient) Send(s string) {
	c.T.Helper()
	if _, err := io.WriteString(c.Conn, s); err != nil {
		c.T.Fatalf("write %q: %v", s, err)
	}
}

// Reply reads one complete reply and returns its raw bytes.
func (c *RESPClient) Reply() string {
	c.T.Helper()
	_ = c.Conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	s, err := ReadRESPReply(c.R)
	if err != nil {
		c.T.Fatalf("read reply: %v (got %q)", err, s)
	}
	return s
}

// Do sends a command as a multibulk request and returns the raw reply.
func (c *RESPClient) Do(args ...string) string {
	c.T.Helper()
	c.Send(Multibulk(args...))
	return c.Reply()
}

// Expect sends req and checks the raw replies that follow.
func (c *RESPClient) Expect(req string, want ...string) {
	c.T.Helper()
	c.Send(req)
	for _, w := range want {
		if got := c.Reply(); got != w {
			c.T.Fatalf("after %q: got %q, want %q", req, got, w)
		}
	}
}

// Closed reports whether the server closed the connection within d.
func (c *RESPClient) Closed(d time.Duration) bool {
	_ = c.Conn.SetReadDeadline(time.Now().Add(d))
	_, err := c.R.ReadByte()
	return err == io.EOF || errors.Is(err, net.ErrClosed) || IsRESPReset(err)
}

// IsRESPReset reports whether err is a connection reset.
func IsRESPReset(err error) bool {
	return err != nil && strings.Contains(err.Error(), "connection reset")
}

// Multibulk encodes args as a RESP request.
func Multibulk(args ...string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "*%d\r\n", len(args))
	for _, a := range args {
		fmt.Fprintf(&b, "$%d\r\n%s\r\n", len(a), a)
	}
	return b.String()
}

// ReadRESPReply reads one RESP2 or RESP3 reply, nested ones included, and
// returns its bytes as sent.
func ReadRESPReply(br *bufio.Reader) (string, error) {
	var out strings.Builder
	err := readRESPReplyInto(br, &out)
	return out.String(), err
}

func readRESPReplyInto(br *bufio.Reader, out *strings.Builder) error {
	line, err := br.ReadString('\n')
	out.WriteString(line)
	if err != nil {
		return err
	}
	if len(line) < 3 || !strings.HasSuffix(line, "\r\n") {
		return fmt.Errorf("malformed reply line %q", line)
	}
	body := line[1 : len(line)-2]
	switch line[0] {
	case '+', '-', ':', '_', ',', '#', '(':
		return nil
	case '$', '=', '!':
		n, err := strconv.Atoi(body)
		if err != nil {
			return err
		}
		if n < 0 {
			return nil
		}
		buf := make([]byte, n+2)
		if _, err := io.ReadFull(br, buf); err != nil {
			return err
		}
		out.Write(buf)
		return nil
	case '*', '~', '>', '%', '|':
		n, err := strconv.Atoi(body)
		if err != nil {
			return err
		}
		if line[0] == '%' || line[0] == '|' {
			n *= 2
		}
		for range n {
			if err := readRESPReplyInto(br, out); err != nil {
				return err
			}
		}
		return nil
	}
	return fmt.Errorf("unknown reply type in %q", line)
}

// RoundTrip sends req on a new connection to addr and checks that the
// reply starts with want (5 s at most, a bound for a broken server).
func RoundTrip(addr, req, want string) error {
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		return err
	}
	defer nc.Close()
	_ = nc.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := io.WriteString(nc, req); err != nil {
		return err
	}
	got := make([]byte, len(want))
	if _, err := io.ReadFull(nc, got); err != nil || string(got) != want {
		return fmt.Errorf("reply %q, %v; want %q", got, err, want)
	}
	return nil
}

// MountTmpfs mounts a tmpfs of size (mount's -o size=, "48m") on a new
// directory under t.TempDir(), for a test that fills a real filesystem
// until the kernel answers ENOSPC, and unmounts it when the test ends
// (lazily if it is still busy: cleanups run last first, so after those of
// servers started later). It skips the test unless it runs as root and can
// mount (CI runs the tests as root).
func MountTmpfs(t testing.TB, size string) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root, to mount a tmpfs that fills up (CI runs the tests as root)")
	}
	dir := filepath.Join(t.TempDir(), "tmpfs")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size="+size, "tmpfs", dir).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a tmpfs (%v: %s): this test needs mount -t tmpfs", err, strings.TrimSpace(string(out)))
	}
	t.Cleanup(func() {
		if err := exec.Command("umount", dir).Run(); err != nil {
			_ = exec.Command("umount", "-l", dir).Run()
		}
	})
	return dir
}

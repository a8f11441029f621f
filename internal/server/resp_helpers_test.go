package server

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/minikv/minikv/internal/store"
)

// respServer is a MiniKV serving both protocols on real 127.0.0.1
// listeners over one store.
type respServer struct {
	*testServer
	respAddr string
}

// startRESP starts a server with a memcached listener (ts.addr) and a RESP
// listener (respAddr); both stop when the test ends.
func startRESP(t testing.TB, cfg Config, scfg store.Config) *respServer {
	t.Helper()
	return startRESPWith(t, cfg, scfg, func(p Protocol) Protocol { return p })
}

// startRESPWith is startRESP with the RESP protocol wrapped by wrap.
func startRESPWith(t testing.TB, cfg Config, scfg store.Config, wrap func(Protocol) Protocol) *respServer {
	t.Helper()
	ts := startServer(t, cfg, scfg)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := ts.srv // ts.stop clears ts.srv, maybe before this goroutine runs
	p := wrap(newRESP(srv))
	go func() { _ = srv.serve(ln, p) }() // returns ErrServerClosed on Shutdown
	return &respServer{testServer: ts, respAddr: ln.Addr().String()}
}

// respClient is a raw RESP connection for transcript tests.
type respClient struct {
	t  testing.TB
	nc net.Conn
	br *bufio.Reader
}

func dialRESP(t testing.TB, addr string) *respClient {
	t.Helper()
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	return &respClient{t: t, nc: nc, br: bufio.NewReader(nc)}
}

func (c *respClient) send(s string) {
	c.t.Helper()
	if _, err := io.WriteString(c.nc, s); err != nil {
		c.t.Fatalf("write %q: %v", s, err)
	}
}

// reply reads one complete reply and returns its raw bytes.
func (c *respClient) reply() string {
	c.t.Helper()
	_ = c.nc.SetReadDeadline(time.Now().Add(5 * time.Second))
	s, err := readRESPReply(c.br)
	if err != nil {
		c.t.Fatalf("read reply: %v (got %q)", err, s)
	}
	return s
}

// do sends a command as a multibulk request and returns the raw reply.
func (c *respClient) do(args ...string) string {
	c.t.Helper()
	c.send(multibulk(args...))
	return c.reply()
}

// expect sends req and checks the raw replies that follow.
func (c *respClient) expect(req string, want ...string) {
	c.t.Helper()
	c.send(req)
	for _, w := range want {
		if got := c.reply(); got != w {
			c.t.Fatalf("after %q: got %q, want %q", req, got, w)
		}
	}
}

// closed reports whether the server closed the connection within d.
func (c *respClient) closed(d time.Duration) bool {
	_ = c.nc.SetReadDeadline(time.Now().Add(d))
	_, err := c.br.ReadByte()
	return err == io.EOF || errors.Is(err, net.ErrClosed) || isRESPReset(err)
}

func isRESPReset(err error) bool {
	return err != nil && strings.Contains(err.Error(), "connection reset")
}

// multibulk encodes args as a RESP request.
func multibulk(args ...string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "*%d\r\n", len(args))
	for _, a := range args {
		fmt.Fprintf(&b, "$%d\r\n%s\r\n", len(a), a)
	}
	return b.String()
}

// readRESPReply reads one RESP2 or RESP3 reply, nested ones included, and
// returns its bytes as sent.
func readRESPReply(br *bufio.Reader) (string, error) {
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

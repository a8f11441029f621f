package redis

import (
	"bufio"
	"bytes"
	"net"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/minikv/minikv/internal/hll"
	"github.com/minikv/minikv/internal/server"
	"github.com/minikv/minikv/internal/store"
)

// startRedisTB runs redis-server on a free loopback port for a fuzz
// target (startRedisServer wants a *testing.T); "" when it is not
// installed.
func startRedisTB(tb testing.TB) string {
	path, err := exec.LookPath("redis-server")
	if err != nil {
		if os.Getenv("MINIKV_REQUIRE_PEERS") == "1" {
			tb.Fatalf("redis-server not found and MINIKV_REQUIRE_PEERS=1: %v", err)
		}
		return ""
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	addr := ln.Addr().String()
	_, port, _ := net.SplitHostPort(addr)
	ln.Close()
	cmd := exec.Command(path, "--port", port, "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", tb.TempDir())
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }) // by PID
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if nc, err := net.Dial("tcp", addr); err == nil {
			nc.Close()
			return addr
		}
	}
	tb.Fatalf("redis-server did not start on %s", addr)
	return ""
}

// FuzzHLLCommands stores arbitrary bytes after a HYLL header and runs
// PFCOUNT, PFADD and PFMERGE on them: MiniKV must answer, and leave the
// same bytes, as redis-server does (when it is installed; otherwise only
// that nothing panics or desyncs). Each command starts from a fresh SET,
// since Redis keeps the byte after a value between commands and MiniKV
// does not (docs/redis.md, differences).
func FuzzHLLCommands(f *testing.F) {
	f.Add([]byte{hll.Sparse, 0x7f, 0xff}, []byte{hll.Sparse, 0x40}, "a b c")
	f.Add([]byte{hll.Sparse, 0x81, 0xe3, 0xe7, 0x7e}, []byte{hll.Dense}, "a b 69 zz69")
	f.Add([]byte{hll.Sparse, 0xff, 0x7f, 0xff}, []byte{hll.Sparse}, "")
	f.Add([]byte{hll.Dense, 0xff}, []byte{hll.Sparse, 0x3f, 0x7f, 0xbf}, "x")
	rs := startRESP(f, server.Config{}, store.Config{MaxItemSize: 1 << 20})
	mk := dialRaw(f, rs.respAddr)
	var rd *rawClient
	if addr := startRedisTB(f); addr != "" {
		rd = dialRaw(f, addr)
	}
	hdr := func(body []byte) string {
		b := []byte("HYLL")
		if len(body) > 0 {
			b = append(b, body[0], 0, 0, 0, 0, 0, 0, 0x80, 0, 0, 0, 0)
			b = append(b, body[1:]...)
			if b[4] == hll.Dense && len(b) < hll.DenseSize {
				b = append(b, make([]byte, hll.DenseSize-len(b))...)
			}
		}
		return string(b)
	}
	f.Fuzz(func(t *testing.T, body1, body2 []byte, elems string) {
		v1, v2 := hdr(body1), hdr(body2)
		add := []string{"PFADD", "fz:a"}
		for i, e := range bytes.Fields([]byte(elems)) {
			if i == 8 {
				break
			}
			add = append(add, string(e))
		}
		steps := [][][]string{
			{{"SET", "fz:a", v1}, {"PFCOUNT", "fz:a"}, {"GET", "fz:a"}},
			{{"SET", "fz:a", v1}, {"SET", "fz:b", v2}, {"PFCOUNT", "fz:a", "fz:b"}},
			{{"SET", "fz:a", v1}, {"SET", "fz:b", v2}, {"DEL", "fz:d"}, {"PFMERGE", "fz:d", "fz:a", "fz:b"}, {"GET", "fz:d"}},
			{{"SET", "fz:a", v1}, {"SET", "fz:b", v2}, {"PFMERGE", "fz:a", "fz:b"}, {"GET", "fz:a"}},
			{{"SET", "fz:a", v1}, add, {"GET", "fz:a"}},
		}
		for _, step := range steps {
			for _, args := range step {
				got := mk.do(t, args...)
				if rd == nil {
					continue
				}
				if want := rd.do(t, args...); got != want {
					t.Fatalf("%q (value %q):\nredis  %q\nminikv %q", args, v1, want, got)
				}
			}
		}
		if got := mk.do(t, "PING"); got != "+PONG\r\n" {
			t.Fatalf("out of step: %q", got)
		}
	})
}

// rawClient is a RESP connection a fuzz target can use from inside
// f.Fuzz (servertest's client calls Helper on the F it was made with).
type rawClient struct {
	nc net.Conn
	br *bufio.Reader
}

func dialRaw(tb testing.TB, addr string) *rawClient {
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { nc.Close() })
	return &rawClient{nc: nc, br: bufio.NewReader(nc)}
}

func (c *rawClient) do(t *testing.T, args ...string) string {
	_ = c.nc.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := c.nc.Write([]byte(multibulk(args...))); err != nil {
		t.Fatal(err)
	}
	r, err := readRESPReply(c.br)
	if err != nil {
		t.Fatalf("%q: %v", args, err)
	}
	return r
}

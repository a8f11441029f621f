package server_test

import (
	"bytes"
	"fmt"
	"net"
	"strings"
	"testing"

	"github.com/minikv/minikv/internal/server"
	"github.com/minikv/minikv/internal/server/servertest"
	"github.com/minikv/minikv/internal/store"
)

// The hot path end to end: a pipelined batch of requests goes over a real
// loopback connection, through the server's reader, dispatch, the store and
// the reply writer, and the client reads every reply. The client side
// allocates nothing, so the allocations the benchmarks report are the
// server's (the process-wide malloc count covers its goroutines).

const hotBatch = 16

// hotCase is one command mix: a batch of requests ending in a sentinel
// whose reply marks the end of the batch's replies.
type hotCase struct {
	proto string // "memcache" or "resp"
	op    string
	batch []byte
	end   []byte // the sentinel's reply
}

func hotCases() []hotCase {
	value := strings.Repeat("v", 32)
	mc := func(op string, one func(i int) string) hotCase {
		var b strings.Builder
		for i := range hotBatch {
			b.WriteString(one(i))
		}
		b.WriteString("mn\r\n")
		return hotCase{"memcache", op, []byte(b.String()), []byte("MN\r\n")}
	}
	rs := func(op string, one func(i int) string) hotCase {
		var b strings.Builder
		for i := range hotBatch {
			b.WriteString(one(i))
		}
		b.WriteString(servertest.Multibulk("ECHO", "end-of-batch"))
		return hotCase{"resp", op, []byte(b.String()), []byte("$12\r\nend-of-batch\r\n")}
	}
	key := func(i int) string { return fmt.Sprintf("key:%04d", i) }
	return []hotCase{
		mc("get", func(i int) string { return "get " + key(i) + "\r\n" }),
		mc("set", func(i int) string { return "set " + key(i) + " 0 0 32\r\n" + value + "\r\n" }),
		mc("delete", func(i int) string {
			if i%2 == 0 {
				return "set del:" + key(i) + " 0 0 32\r\n" + value + "\r\n"
			}
			return "delete del:" + key(i-1) + "\r\n"
		}),
		mc("incr", func(i int) string { return "incr counter 1\r\n" }),
		rs("get", func(i int) string { return servertest.Multibulk("GET", key(i)) }),
		rs("set", func(i int) string { return servertest.Multibulk("SET", key(i), value) }),
		rs("delete", func(i int) string {
			if i%2 == 0 {
				return servertest.Multibulk("SET", "del:"+key(i), value)
			}
			return servertest.Multibulk("DEL", "del:"+key(i-1))
		}),
		rs("incr", func(i int) string { return servertest.Multibulk("INCR", "rcounter") }),
	}
}

// hotConn sends batches on one connection and reads their replies into a
// fixed buffer.
type hotConn struct {
	nc  net.Conn
	buf []byte
}

func dialHot(t testing.TB, rs *testServer, hc hotCase) *hotConn {
	t.Helper()
	addr := rs.addr
	if hc.proto == "resp" {
		addr = rs.respAddr
	}
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	c := &hotConn{nc: nc, buf: make([]byte, 64<<10)}
	// Prefill the keys the gets read, and the counters.
	value := strings.Repeat("v", 32)
	for i := range hotBatch {
		k := fmt.Sprintf("key:%04d", i)
		if _, err := rs.store.Store(store.ModeSet, []byte(k), []byte(value), 0, 0, 0); err != nil {
			t.Fatal(err)
		}
	}
	for _, k := range []string{"counter", "rcounter"} {
		if _, err := rs.store.Store(store.ModeSet, []byte(k), []byte("0"), 0, 0, 0); err != nil {
			t.Fatal(err)
		}
	}
	return c
}

// round sends one batch and reads until the sentinel's reply.
func (c *hotConn) round(t testing.TB, hc hotCase) {
	if _, err := c.nc.Write(hc.batch); err != nil {
		t.Fatal(err)
	}
	n := 0
	for !bytes.HasSuffix(c.buf[:n], hc.end) {
		if n == len(c.buf) {
			t.Fatalf("%s %s: replies overflow %d bytes", hc.proto, hc.op, n)
		}
		m, err := c.nc.Read(c.buf[n:])
		if err != nil {
			t.Fatal(err)
		}
		n += m
	}
	if bytes.Contains(c.buf[:n], []byte("ERR")) {
		t.Fatalf("%s %s: error reply in %q", hc.proto, hc.op, c.buf[:n])
	}
}

// BenchmarkHotPath reports, per batch of 16 pipelined requests plus one
// sentinel, the time and allocations of get, set, delete (set+delete
// pairs) and incr on both protocols.
func BenchmarkHotPath(b *testing.B) {
	rs := startRESP(b, server.Config{}, store.Config{MemoryLimit: 64 << 20})
	for _, hc := range hotCases() {
		b.Run(hc.proto+"/"+hc.op, func(b *testing.B) {
			c := dialHot(b, rs, hc)
			c.round(b, hc)
			b.ReportAllocs()
			for b.Loop() {
				c.round(b, hc)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*hotBatch), "ns/req")
		})
	}
}

// TestHotPathZeroAllocs guards the zero-allocation hot path: get, set,
// delete and incr over both protocols, pipelined, allocate nothing per
// request once the connection is warm. (A new store segment is allocated
// once per few thousand writes, hence the small tolerance.)
func TestHotPathZeroAllocs(t *testing.T) {
	rs := startRESP(t, server.Config{}, store.Config{MemoryLimit: 64 << 20, SweepInterval: -1})
	for _, hc := range hotCases() {
		c := dialHot(t, rs, hc)
		for range 50 {
			c.round(t, hc)
		}
		allocs := testing.AllocsPerRun(200, func() { c.round(t, hc) }) / (hotBatch + 1)
		if allocs > 0.05 {
			t.Errorf("%s %s: %.3f allocs per request, want 0", hc.proto, hc.op, allocs)
		}
	}
}

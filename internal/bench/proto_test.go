package bench

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"strings"
	"sync"
	"testing"
	"testing/iotest"
	"time"
)

func TestEncode(t *testing.T) {
	tests := []struct {
		name string
		got  []byte
		want string
	}{
		{"mc get", Memcache{}.AppendGet(nil, []byte("k1")), "get k1\r\n"},
		{"mc set", Memcache{}.AppendSet(nil, []byte("k1"), []byte("abc"), 0), "set k1 0 0 3\r\nabc\r\n"},
		{"mc set ttl", Memcache{}.AppendSet(nil, []byte("k1"), []byte("abc"), 60), "set k1 0 60 3\r\nabc\r\n"},
		{"resp get", RESP{}.AppendGet(nil, []byte("k1")), "*2\r\n$3\r\nGET\r\n$2\r\nk1\r\n"},
		{"resp set", RESP{}.AppendSet(nil, []byte("k1"), []byte("abc"), 0), "*3\r\n$3\r\nSET\r\n$2\r\nk1\r\n$3\r\nabc\r\n"},
		{"resp set ttl", RESP{}.AppendSet(nil, []byte("k1"), []byte("abc"), 60), "*5\r\n$3\r\nSET\r\n$2\r\nk1\r\n$3\r\nabc\r\n$2\r\nEX\r\n$2\r\n60\r\n"},
	}
	for _, tt := range tests {
		if string(tt.got) != tt.want {
			t.Errorf("%s = %q, want %q", tt.name, tt.got, tt.want)
		}
	}
}

func TestReadReply(t *testing.T) {
	tests := []struct {
		proto   Proto
		op      Op
		in      string
		want    Outcome
		broken  bool
		trailer string // what must be left unread
	}{
		{Memcache{}, OpGet, "END\r\nX", OutMiss, false, "X"},
		{Memcache{}, OpGet, "VALUE k 0 5\r\nhe\r\no\r\nEND\r\nX", OutHit, false, "X"},
		{Memcache{}, OpGet, "VALUE k 0 3 99\r\nabc\r\nEND\r\nX", OutHit, false, "X"},
		{Memcache{}, OpGet, "VALUE k 0 3\r\nabc\r\nVALUE j 0 1\r\nx\r\nEND\r\n", OutError, true, ""},
		{Memcache{}, OpGet, "SERVER_ERROR out of memory\r\nX", OutError, false, "X"},
		{Memcache{}, OpSet, "STORED\r\nX", OutStored, false, "X"},
		{Memcache{}, OpSet, "SERVER_ERROR out of memory storing object\r\nX", OutError, false, "X"},
		{Memcache{}, OpSet, "NOT_STORED\r\nX", OutError, false, "X"},
		{Memcache{}, OpSet, "bogus\r\n", OutError, true, ""},
		{Memcache{}, OpGet, "VALUE k 0\r\n", OutError, true, ""},
		{Memcache{}, OpGet, "END", OutError, true, ""},
		{RESP{}, OpGet, "$-1\r\nX", OutMiss, false, "X"},
		{RESP{}, OpGet, "_\r\nX", OutMiss, false, "X"},
		{RESP{}, OpGet, "$5\r\nhe\r\no\r\nX", OutHit, false, "X"},
		{RESP{}, OpGet, "$0\r\n\r\nX", OutHit, false, "X"},
		{RESP{}, OpGet, "-ERR nope\r\nX", OutError, false, "X"},
		{RESP{}, OpSet, "+OK\r\nX", OutStored, false, "X"},
		{RESP{}, OpSet, "-OOM command not allowed\r\nX", OutError, false, "X"},
		{RESP{}, OpSet, ":1\r\n", OutError, true, ""},
		{RESP{}, OpGet, "$x\r\n", OutError, true, ""},
	}
	for _, tt := range tests {
		for name, wrap := range map[string]func(io.Reader) io.Reader{
			"whole": func(r io.Reader) io.Reader { return r },
			"1byte": iotest.OneByteReader,
			"half":  iotest.HalfReader,
		} {
			br := bufio.NewReaderSize(wrap(strings.NewReader(tt.in)), 64)
			got, err := tt.proto.ReadReply(br, tt.op)
			if got != tt.want || (err != nil) != tt.broken {
				t.Errorf("%s %s ReadReply(%s, %q) = %v, %v; want %v, broken=%v", name, tt.proto.Name(), tt.op, tt.in, got, err, tt.want, tt.broken)
				continue
			}
			if !tt.broken {
				rest, _ := io.ReadAll(br)
				if string(rest) != tt.trailer {
					t.Errorf("%s %s ReadReply(%s, %q) left %q, want %q", name, tt.proto.Name(), tt.op, tt.in, rest, tt.trailer)
				}
			}
		}
	}
}

// startNull serves the null server on a loopback port for the test.
func startNull(t *testing.T, valueSize int) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- ServeNull(ctx, ln, valueSize) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("ServeNull: %v", err)
		}
	})
	return ln.Addr().String()
}

// nullSession starts the null server with w's value size and connects
// conns connections to it for workload w; both end with the test.
func nullSession(t *testing.T, w *Workload, conns int) *Session {
	t.Helper()
	addr := startNull(t, w.ValueSize)
	if err := w.Init(); err != nil {
		t.Fatal(err)
	}
	s, err := Connect(context.Background(), Target{Name: "null", Addr: addr, Proto: Memcache{}}, w, conns, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

// TestRunCountsAgainstNullServer drives the in-process null server: every
// get hits, every set is stored, and -n is honoured exactly whatever the
// pipeline depth.
func TestRunCountsAgainstNullServer(t *testing.T) {
	s := nullSession(t, &Workload{Keys: 1000, Ratio: Ratio{1, 3}, ValueSize: 16}, 8)
	for _, p := range []int{1, 7, 32} {
		r := s.Run(context.Background(), Phase{Label: "mixed", Pipeline: p, Requests: 5003})
		if r.Ops != 5003 || r.Errors != 0 || r.Misses != 0 {
			t.Errorf("P=%d: ops %d errors %d misses %d, want 5003, 0, 0 (%s)", p, r.Ops, r.Errors, r.Misses, r.FirstErr)
		}
		if r.Get.Count+r.Set.Count != r.Ops || r.Hits != r.Get.Count {
			t.Errorf("P=%d: %d gets + %d sets recorded, %d hits, for %d ops", p, r.Get.Count, r.Set.Count, r.Hits, r.Ops)
		}
		if r.OpsPerSec != float64(r.Ops)/r.Wall.Seconds() {
			t.Errorf("P=%d: OpsPerSec %v is not ops/wall", p, r.OpsPerSec)
		}
	}
	// A timed phase stops by itself.
	r := s.Run(context.Background(), Phase{Label: "mixed", Pipeline: 4, Duration: 100 * time.Millisecond})
	if r.Ops == 0 || r.Wall < 100*time.Millisecond || r.Wall > 5*time.Second {
		t.Errorf("timed phase: ops %d in %v", r.Ops, r.Wall)
	}
}

// TestRunReportsBrokenServer checks that a server that dies mid-run is
// counted loudly as errors, not silently as a shorter run.
func TestRunReportsBrokenServer(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				// Answer one get, then hang up.
				br := bufio.NewReader(c)
				_, _ = br.ReadString('\n')
				_, _ = io.WriteString(c, "END\r\n")
				_ = c.Close()
			}()
		}
	}()
	w := &Workload{Keys: 10, Ratio: Ratio{0, 1}}
	if err := w.Init(); err != nil {
		t.Fatal(err)
	}
	s, err := Connect(context.Background(), Target{Name: "flaky", Addr: ln.Addr().String(), Proto: Memcache{}}, w, 2, 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	r := s.Run(context.Background(), Phase{Label: "mixed", Pipeline: 1, Requests: 100})
	if r.Errors == 0 || r.FirstErr == "" {
		t.Errorf("errors %d, first %q; want the broken connections counted", r.Errors, r.FirstErr)
	}
	if r.Misses != 2 {
		t.Errorf("misses %d, want 2 (one answered get per connection)", r.Misses)
	}
}

func TestConnectFailsCleanly(t *testing.T) {
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	addr := ln.Addr().String()
	ln.Close()
	w := &Workload{Keys: 10}
	_ = w.Init()
	_, err := Connect(context.Background(), Target{Name: "gone", Addr: addr, Proto: Memcache{}}, w, 3, time.Second)
	var op *net.OpError
	if !errors.As(err, &op) {
		t.Errorf("Connect to a closed port: %v, want a dial error", err)
	}
}

// TestClientPathDoesNotAllocate keeps the client cheap: its CPU is shared
// with the server under test, so every allocation per request is taken
// from the server's budget.
func TestClientPathDoesNotAllocate(t *testing.T) {
	for _, p := range []Proto{Memcache{}, RESP{}} {
		var reply string
		if p.Name() == "resp" {
			reply = "$5\r\nhello\r\n+OK\r\n"
		} else {
			reply = "VALUE key:1 0 5\r\nhello\r\nEND\r\nSTORED\r\n"
		}
		sr := strings.NewReader(reply)
		br := bufio.NewReaderSize(sr, 4096)
		buf := make([]byte, 0, 256)
		key, val := []byte("key:1"), []byte("hello")
		allocs := testing.AllocsPerRun(100, func() {
			buf = p.AppendGet(buf[:0], key)
			buf = p.AppendSet(buf, key, val, 60)
			sr.Reset(reply)
			br.Reset(sr)
			if out, err := p.ReadReply(br, OpGet); out != OutHit || err != nil {
				t.Fatalf("%s get: %v %v", p.Name(), out, err)
			}
			if out, err := p.ReadReply(br, OpSet); out != OutStored || err != nil {
				t.Fatalf("%s set: %v %v", p.Name(), out, err)
			}
		})
		if allocs != 0 {
			t.Errorf("%s: %v allocations per get+set, want 0", p.Name(), allocs)
		}
	}
}

// TestLiveProgress checks the progress line a terminal sees while a phase
// runs, and that a nil Live (output to a file or pipe) prints nothing.
func TestLiveProgress(t *testing.T) {
	s := nullSession(t, &Workload{Keys: 100, ValueSize: 8}, 2)
	var buf syncBuffer
	l := &Live{W: &buf, Interval: 20 * time.Millisecond, Prefix: "[run 1/1]"}
	stop := l.Start("null", s, 0, 200*time.Millisecond)
	s.Run(context.Background(), Phase{Label: "mixed", Pipeline: 4, Duration: 200 * time.Millisecond})
	stop()
	out := buf.String()
	if !strings.Contains(out, "[run 1/1] null") || !strings.Contains(out, "ops/s") || !strings.HasSuffix(out, "\r\033[K") {
		t.Errorf("progress output %q: want prefixed lines with ops/s, cleared at the end", out)
	}
	var nilLive *Live
	nilLive.Start("x", s, 0, 0)() // must not panic or print
}

type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func TestMultiGet(t *testing.T) {
	keys := [][]byte{[]byte("a"), []byte("bb"), []byte("c")}
	if got, want := string(Memcache{}.AppendMultiGet(nil, keys)), "get a bb c\r\n"; got != want {
		t.Errorf("Memcache.AppendMultiGet = %q, want %q", got, want)
	}
	if got, want := string(RESP{}.AppendMultiGet(nil, keys)), "*4\r\n$4\r\nMGET\r\n$1\r\na\r\n$2\r\nbb\r\n$1\r\nc\r\n"; got != want {
		t.Errorf("RESP.AppendMultiGet = %q, want %q", got, want)
	}
	tests := []struct {
		proto  Proto
		in     string
		hits   int
		out    Outcome
		broken bool
	}{
		{Memcache{}, "VALUE a 0 1\r\nx\r\nVALUE c 0 2\r\nyy\r\nEND\r\n", 2, OutHit, false},
		{Memcache{}, "END\r\n", 0, OutHit, false},
		{Memcache{}, "SERVER_ERROR busy\r\n", 0, OutError, false},
		{Memcache{}, "VALUE a 0 1\r\nx\r\nVALUE b 0 1\r\nx\r\nVALUE c 0 1\r\nx\r\nVALUE d 0 1\r\nx\r\nEND\r\n", 3, OutError, true},
		{RESP{}, "*3\r\n$1\r\nx\r\n$-1\r\n$2\r\nyy\r\n", 2, OutHit, false},
		{RESP{}, "*3\r\n$-1\r\n$-1\r\n$-1\r\n", 0, OutHit, false},
		{RESP{}, "-ERR wrong\r\n", 0, OutError, false},
		{RESP{}, "*2\r\n$-1\r\n$-1\r\n", 0, OutError, true},
	}
	for _, tt := range tests {
		br := bufio.NewReader(iotest.OneByteReader(strings.NewReader(tt.in)))
		hits, out, err := tt.proto.ReadMultiGet(br, 3)
		if hits != tt.hits || out != tt.out || (err != nil) != tt.broken {
			t.Errorf("%s ReadMultiGet(%q) = %d, %v, %v; want %d, %v, broken=%v", tt.proto.Name(), tt.in, hits, out, err, tt.hits, tt.out, tt.broken)
		}
	}
}

func TestRunMultiGetAgainstNullServer(t *testing.T) {
	s := nullSession(t, &Workload{Keys: 1000, Ratio: Ratio{0, 1}, ValueSize: 8, MultiGet: 5}, 2)
	r := s.Run(context.Background(), Phase{Label: "mixed", Pipeline: 3, Requests: 100})
	if r.Ops != 100 || r.Hits != 500 || r.Misses != 0 || r.Errors != 0 {
		t.Errorf("multiget 5: ops %d hits %d misses %d errors %d (%s); want 100, 500, 0, 0", r.Ops, r.Hits, r.Misses, r.Errors, r.FirstErr)
	}
}

// TestRateLimitsOfferedLoad checks the open-loop schedule never offers more
// than asked (a lower bound would assert the machine's speed).
func TestRateLimitsOfferedLoad(t *testing.T) {
	s := nullSession(t, &Workload{Keys: 100, ValueSize: 8}, 4)
	r := s.Run(context.Background(), Phase{Label: "mixed", Pipeline: 2, Duration: 300 * time.Millisecond, Rate: 4000})
	// 4000/s for 0.3 s is 1200, plus the batch each connection may start at
	// the deadline.
	if limit := int64(4000*r.Wall.Seconds()) + 4*2; r.Ops > limit || r.Errors != 0 {
		t.Errorf("rate 4000/s: %d requests in %v (limit %d), errors %d", r.Ops, r.Wall, limit, r.Errors)
	}
	if r.Ops == 0 {
		t.Errorf("rate 4000/s: no requests")
	}
}

//go:build linux

package server_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/minikv/minikv/internal/server"
	"github.com/minikv/minikv/internal/server/memcache"
	"github.com/minikv/minikv/internal/server/servertest"
	"github.com/minikv/minikv/internal/store"
)

// The event loops (Config.EventLoops) against the behaviours a goroutine
// per connection has: every test here also runs the whole protocol suites
// with MINIKV_TEST_EVENT_LOOPS=1 (make test). None asserts a speed; the
// timeouts are short for the test's sake, and the checks wait generously.

// TestLoopPipelinesAndLargeRequests sends what a loop serves itself
// (pipelines far longer than ReqsPerEvent, cut anywhere by TCP) and what
// makes a connection leave it for a goroutine (a value larger than the
// read buffer, an inline command, a reply the client does not read at
// once), on both protocols, from many connections at once.
func TestLoopPipelinesAndLargeRequests(t *testing.T) {
	ts := startRESP(t, server.Config{EventLoops: 2, ReqsPerEvent: 4}, store.Config{})
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			c := dial(t, ts.addr)
			var req, want strings.Builder
			for j := range 100 {
				fmt.Fprintf(&req, "set k%d-%d 0 0 2\r\nv%d\r\n", i, j, j%10)
				want.WriteString("STORED\r\n")
			}
			for j := range 100 {
				fmt.Fprintf(&req, "get k%d-%d\r\n", i, j)
				fmt.Fprintf(&want, "VALUE k%d-%d 0 2\r\nv%d\r\nEND\r\n", i, j, j%10)
			}
			// In pieces of 7 bytes: requests split anywhere.
			s := req.String()
			go func() {
				for len(s) > 0 {
					n := min(7, len(s))
					c.Send(s[:n])
					s = s[n:]
				}
			}()
			got, ok := readN(c.Conn, c.R, want.Len())
			if !ok || got != want.String() {
				t.Errorf("conn %d: pipelined replies differ (complete %v, %d of %d bytes)", i, ok, len(got), want.Len())
			}
		})
	}
	wg.Wait()

	// A 100 KB value: larger than the read buffer, so the connection
	// leaves the loop; everything still answers in order.
	big := strings.Repeat("x", 100<<10)
	c := dial(t, ts.addr)
	c.Expect("set big 0 0 "+fmt.Sprint(len(big))+"\r\n"+big+"\r\n", "STORED")
	c.Expect("get big\r\n", "VALUE big 0 "+fmt.Sprint(len(big)), big, "END")

	r := servertest.DialRESP(t, ts.respAddr)
	r.Expect("PING\r\n", "+PONG\r\n") // inline: leaves the loop
	r.Expect(servertest.Multibulk("SET", "rk", big), "+OK\r\n")
	r.Expect(servertest.Multibulk("GET", "rk"), fmt.Sprintf("$%d\r\n%s\r\n", len(big), big))

	// A reply the client reads only later: 64 × 100 KB of GETs is more
	// than the socket takes at once, so the rest goes out from the
	// connection's goroutine, in order.
	r2 := servertest.DialRESP(t, ts.respAddr)
	var many, wantMany strings.Builder
	for range 64 {
		many.WriteString(servertest.Multibulk("GET", "rk"))
		fmt.Fprintf(&wantMany, "$%d\r\n%s\r\n", len(big), big)
	}
	r2.Send(many.String())
	time.Sleep(50 * time.Millisecond) // not a check: lets the socket fill first
	if got, ok := readN(r2.Conn, r2.R, wantMany.Len()); !ok || got != wantMany.String() {
		t.Errorf("big pipelined replies: complete %v, %d of %d bytes", ok, len(got), wantMany.Len())
	}
	r2.Expect(servertest.Multibulk("PING"), "+PONG\r\n")
	if in, out := ts.srv.LoopConns(); in != 11 || out != 3 {
		t.Errorf("%d connections in the loops, %d left; want 11 and 3 (big value, inline, big replies)", in, out)
	}
}

// TestLoopRepliesTheSocketDoesNotTake: clients that pipeline far more
// replies than their sockets take before they read, from several
// connections at once, so that the end-of-pass sends (through io_uring,
// or write(2) with NoIOURing) come back short or refused and the rest
// must follow from the connection's goroutine, in order, byte for byte.
func TestLoopRepliesTheSocketDoesNotTake(t *testing.T) {
	for _, noRing := range []bool{false, true} {
		t.Run(fmt.Sprintf("NoIOURing=%v", noRing), func(t *testing.T) {
			ts := startRESP(t, server.Config{EventLoops: 1, ReqsPerEvent: 7, NoIOURing: noRing}, store.Config{})
			val := strings.Repeat("v", 599)
			servertest.DialRESP(t, ts.respAddr).Expect(servertest.Multibulk("SET", "k", val), "+OK\r\n")
			var wg sync.WaitGroup
			for i := range 4 {
				wg.Go(func() {
					r := servertest.DialRESP(t, ts.respAddr)
					var req, want strings.Builder
					for j := range 20000 {
						if j%3 == 0 {
							fmt.Fprintf(&req, "%s", servertest.Multibulk("ECHO", fmt.Sprint(i, "-", j)))
							fmt.Fprintf(&want, "$%d\r\n%d-%d\r\n", len(fmt.Sprint(i, "-", j)), i, j)
							continue
						}
						req.WriteString(servertest.Multibulk("GET", "k"))
						fmt.Fprintf(&want, "$%d\r\n%s\r\n", len(val), val)
					}
					r.Send(req.String())
					time.Sleep(50 * time.Millisecond) // not a check: lets the socket fill first
					if got, ok := readN(r.Conn, r.R, want.Len()); !ok || got != want.String() {
						t.Errorf("conn %d: complete %v, %d of %d bytes, first difference at %d", i, ok, len(got), want.Len(), firstDiff(got, want.String()))
					}
					r.Expect(servertest.Multibulk("PING"), "+PONG\r\n")
				})
			}
			wg.Wait()
		})
	}
}

func firstDiff(a, b string) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

// TestLoopDeadlines: the loop closes a connection idle for IdleTimeout
// and one that leaves a request unfinished for CommandTimeout, and
// counts each as its goroutine would.
func TestLoopDeadlines(t *testing.T) {
	ts := startServer(t, server.Config{EventLoops: 1, IdleTimeout: 300 * time.Millisecond, CommandTimeout: 300 * time.Millisecond}, store.Config{})
	idle := dial(t, ts.addr)
	idle.Expect("version\r\n", "VERSION "+server.Version)
	partial := dial(t, ts.addr)
	partial.Send("set k 0 0 10\r\nabc") // never finished
	if !idle.Closed(20 * time.Second) {
		t.Error("idle connection still open")
	}
	if !partial.Closed(20 * time.Second) {
		t.Error("connection with an unfinished request still open")
	}
	st := ts.srv.Stats()
	if st.Count[server.StatIdleKicks] < 1 || st.Count[server.StatCommandTimeouts] < 1 {
		t.Errorf("idle kicks %d, command timeouts %d; want one each", st.Count[server.StatIdleKicks], st.Count[server.StatCommandTimeouts])
	}
}

// TestLoopShutdownAnswersBufferedRequests: at shutdown a loop serves
// what its connections sent, flushes and closes them; nothing leaks.
func TestLoopShutdownAnswersBufferedRequests(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	st := store.New(store.Config{})
	defer st.Close()
	srv := server.New(server.Config{EventLoops: 2}, st)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln, memcache.New(srv)) }()
	var conns []net.Conn
	for i := range 20 {
		nc, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, nc)
		fmt.Fprintf(nc, "set k%d 0 0 1\r\nv\r\n", i)
		if i%2 == 0 {
			fmt.Fprintf(nc, "set half 0 0 5\r\nab") // unfinished
		}
	}
	for _, nc := range conns {
		if line, err := bufio.NewReader(nc).ReadString('\n'); err != nil || line != "STORED\r\n" {
			t.Fatalf("before shutdown: %q %v", line, err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := srv.Shutdown(ctx); err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	<-done
	for _, nc := range conns {
		_ = nc.SetReadDeadline(time.Now().Add(10 * time.Second))
		if _, err := nc.Read(make([]byte, 1)); err != io.EOF {
			t.Errorf("after shutdown: read %v, want EOF", err)
		}
		nc.Close()
	}
	if n := srv.CurrConns(); n != 0 {
		t.Errorf("%d connections after shutdown", n)
	}
}

// TestLoopLeavesForBlockingAndPubsub: commands that wait or stream move
// their connection out of the loop, and keep working there.
func TestLoopLeavesForBlockingAndPubsub(t *testing.T) {
	ts := startRESP(t, server.Config{EventLoops: 1}, store.Config{})
	sub := servertest.DialRESP(t, ts.respAddr)
	sub.Expect(servertest.Multibulk("SUBSCRIBE", "ch"), "*3\r\n$9\r\nsubscribe\r\n$2\r\nch\r\n:1\r\n")
	blocked := servertest.DialRESP(t, ts.respAddr)
	blocked.Send(servertest.Multibulk("BLPOP", "q", "0") + servertest.Multibulk("PING"))
	pub := servertest.DialRESP(t, ts.respAddr)
	pollUntil(t, "the subscriber", func() bool {
		return pub.Do("PUBSUB", "NUMSUB", "ch") == "*2\r\n$2\r\nch\r\n:1\r\n"
	})
	pub.Expect(servertest.Multibulk("PUBLISH", "ch", "hi"), ":1\r\n")
	if got, ok := readN(sub.Conn, sub.R, len("*3\r\n$7\r\nmessage\r\n$2\r\nch\r\n$2\r\nhi\r\n")); !ok || got != "*3\r\n$7\r\nmessage\r\n$2\r\nch\r\n$2\r\nhi\r\n" {
		t.Errorf("message: %q", got)
	}
	pollUntil(t, "the blocked client", func() bool {
		return strings.Contains(pub.Do("INFO", "clients"), "blocked_clients:1")
	})
	pub.Expect(servertest.Multibulk("RPUSH", "q", "job"), ":1\r\n")
	want := "*2\r\n$1\r\nq\r\n$3\r\njob\r\n+PONG\r\n"
	if got, ok := readN(blocked.Conn, blocked.R, len(want)); !ok || got != want {
		t.Errorf("BLPOP then PING: %q", got)
	}
	if in, out := ts.srv.LoopConns(); in != 3 || out != 2 {
		t.Errorf("%d connections in the loop, %d left; want 3 and 2 (subscriber, blocked)", in, out)
	}
}

// TestLoopKill: CLIENT KILL closes a connection a loop serves.
func TestLoopKill(t *testing.T) {
	ts := startRESP(t, server.Config{EventLoops: 1}, store.Config{})
	victim := servertest.DialRESP(t, ts.respAddr)
	id := strings.TrimSuffix(strings.TrimPrefix(victim.Do("CLIENT", "ID"), ":"), "\r\n")
	mc := dial(t, ts.addr)
	mc.Expect("version\r\n", "VERSION "+server.Version)
	admin := servertest.DialRESP(t, ts.respAddr)
	admin.Expect(servertest.Multibulk("CLIENT", "KILL", "ID", id), ":1\r\n")
	if !victim.Closed(10 * time.Second) {
		t.Error("killed RESP connection still open")
	}
}

// readN reads n bytes of replies through r (nc's reader), waiting at most
// 30 s, and reports whether all came.
func readN(nc net.Conn, r *bufio.Reader, n int) (string, bool) {
	_ = nc.SetReadDeadline(time.Now().Add(30 * time.Second))
	defer nc.SetReadDeadline(time.Time{})
	buf := make([]byte, n)
	got, err := io.ReadFull(r, buf)
	return string(buf[:got]), err == nil
}

// pollUntil checks cond every 10 ms until it holds, failing the test
// after 30 s: a wait for state, not a timing assertion.
func pollUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for end := time.Now().Add(30 * time.Second); time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Fatalf("gave up waiting for %s", what)
}

// TestLoopIdleTimeoutClosesTricklingClient is
// TestIdleTimeoutClosesTricklingClient on an event loop whatever the
// environment, reading and writing through io_uring where the kernel
// offers it, and with system calls.
func TestLoopIdleTimeoutClosesTricklingClient(t *testing.T) {
	for _, noRing := range []bool{false, true} {
		t.Run(fmt.Sprintf("no-io-uring=%v", noRing), func(t *testing.T) {
			t.Parallel()
			cfg := idleTestConfig()
			cfg.EventLoops, cfg.NoIOURing = 1, noRing
			ts := startRESP(t, cfg, store.Config{})
			checkIdleTimeout(t, ts.dialPort, func() uint64 { return closedByTimeout(ts.srv) })
		})
	}
}

// TestLoopCommandTimeoutAfterLeaving: a connection that leaves its loop in
// the middle of a request (a value larger than the read buffer, an inline
// command) has a read deadline on its new socket, so a client that
// trickles the rest is closed by the command timeout. (The deadline the
// connection had armed in the loop, for a socket the loop never gave a
// deadline, once stood in for it: the new socket got none.)
func TestLoopCommandTimeoutAfterLeaving(t *testing.T) {
	ts := startRESP(t, server.Config{EventLoops: 1, CommandTimeout: time.Second}, store.Config{})
	var wg sync.WaitGroup
	n := uint64(0)
	for _, tr := range tricklers {
		if !tr.leaves {
			continue
		}
		n++
		nc := ts.dialPort(t, tr.resp)
		wg.Go(func() {
			if err := trickleUntilClosed(nc, tr); err != nil {
				t.Errorf("%s: %v", tr.name, err)
			}
		})
	}
	wg.Wait()
	if !t.Failed() {
		waitFor(t, func() bool { return ts.srv.Stats().Count[server.StatCommandTimeouts] == n })
	}
}

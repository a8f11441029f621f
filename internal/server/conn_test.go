package server_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"runtime"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/minikv/minikv/internal/server"
	"github.com/minikv/minikv/internal/server/memcache"
	"github.com/minikv/minikv/internal/server/servertest"
	"github.com/minikv/minikv/internal/store"
)

func TestMaxConnections(t *testing.T) {
	ts := startServer(t, server.Config{MaxConns: 3}, store.Config{})
	var held []*servertest.Client
	for range 3 {
		c := dial(t, ts.addr)
		c.Expect("version\r\n", "VERSION "+server.Version)
		held = append(held, c)
	}
	extra := dial(t, ts.addr)
	if got := extra.Line(); got != "ERROR Too many open connections" {
		t.Fatalf("4th connection got %q", got)
	}
	if !extra.Closed(2 * time.Second) {
		t.Fatal("rejected connection left open")
	}
	held[0].Conn.Close()
	waitFor(t, func() bool { return ts.srv.CurrConns() == 2 })
	c := dial(t, ts.addr)
	c.Expect("version\r\n", "VERSION "+server.Version)
	if s := ts.srv.Stats(); s.Rejected != 1 {
		t.Errorf("rejected_connections = %d, want 1", s.Rejected)
	}
}

func TestCrossProtocolAndLongLinesClose(t *testing.T) {
	ts := startServer(t, server.Config{}, store.Config{})
	for _, in := range []string{
		"GET / HTTP/1.1\r\nHost: x\r\n\r\n",
		"POST /x HTTP/1.0\r\n",
		"\x80\x00\x00\x00",
		"set " + strings.Repeat("k", 3000) + " 0 0 1\r\n",
		strings.Repeat("a", 5000), // no newline at all
	} {
		c := dial(t, ts.addr)
		c.Send(in)
		if !c.Closed(3 * time.Second) {
			t.Errorf("%.20q...: connection left open, want a silent close", in)
		}
	}
	// A long multi-key get is legal.
	c := dial(t, ts.addr)
	keys := make([]string, 600)
	for i := range keys {
		keys[i] = fmt.Sprintf("key-%04d", i)
	}
	c.Expect("set key-0599 0 0 1\r\nx\r\n", "STORED")
	c.Expect("get "+strings.Join(keys, " ")+"\r\n", "VALUE key-0599 0 1", "x", "END")
}

// TestThousandPipelinedConnections serves 1000 connections, each pipelining
// batches of sets and gets, and checks that goroutines and file descriptors
// return to their idle counts afterwards.
func TestThousandPipelinedConnections(t *testing.T) {
	if testing.Short() {
		t.Skip("load test")
	}
	ts := startServer(t, server.Config{MaxConns: 2000}, store.Config{})
	// Warm up: one connection so lazily started runtime goroutines exist.
	warm := dial(t, ts.addr)
	warm.Expect("version\r\n", "VERSION "+server.Version)
	warm.Conn.Close()
	waitFor(t, func() bool { return ts.srv.CurrConns() == 0 })
	baseG, baseFD := runtime.NumGoroutine(), countFDs(t)

	const conns, rounds, depth = 1000, 3, 16
	clients := make([]net.Conn, conns)
	for i := range clients {
		nc, err := net.Dial("tcp", ts.addr)
		if err != nil {
			t.Fatalf("dial %d: %v", i, err)
		}
		clients[i] = nc
	}
	var wg sync.WaitGroup
	errs := make(chan error, conns)
	for i, nc := range clients {
		wg.Go(func() {
			if err := pipelineRounds(nc, i, rounds, depth); err != nil {
				errs <- fmt.Errorf("conn %d: %w", i, err)
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if n := ts.srv.CurrConns(); n != conns {
		t.Errorf("curr_connections = %d under load, want %d", n, conns)
	}
	for _, nc := range clients {
		nc.Close()
	}
	waitFor(t, func() bool { return ts.srv.CurrConns() == 0 })
	waitFor(t, func() bool { return runtime.NumGoroutine() <= baseG && countFDs(t) <= baseFD })
	if s := ts.srv.Stats(); s.Count[server.StatCmdGet] != conns*rounds*depth || s.Count[server.StatGetHits] != conns*rounds*depth {
		t.Errorf("cmd_get %d get_hits %d, want %d", s.Count[server.StatCmdGet], s.Count[server.StatGetHits], conns*rounds*depth)
	}
}

// pipelineRounds writes depth sets and depth gets in one write per round and
// checks every reply.
func pipelineRounds(nc net.Conn, id, rounds, depth int) error {
	br := bufio.NewReader(nc)
	_ = nc.SetDeadline(time.Now().Add(60 * time.Second))
	for r := range rounds {
		var b strings.Builder
		for i := range depth {
			v := fmt.Sprintf("v%d.%d.%d", id, r, i)
			fmt.Fprintf(&b, "set c%d:%d 0 0 %d\r\n%s\r\n", id, i, len(v), v)
		}
		for i := range depth {
			fmt.Fprintf(&b, "get c%d:%d\r\n", id, i)
		}
		if _, err := io.WriteString(nc, b.String()); err != nil {
			return err
		}
		for i := range depth {
			if l, err := br.ReadString('\n'); err != nil || l != "STORED\r\n" {
				return fmt.Errorf("set %d: %q %v", i, l, err)
			}
		}
		for i := range depth {
			v := fmt.Sprintf("v%d.%d.%d", id, r, i)
			want := fmt.Sprintf("VALUE c%d:%d 0 %d\r\n%s\r\nEND\r\n", id, i, len(v), v)
			got := make([]byte, len(want))
			if _, err := io.ReadFull(br, got); err != nil || string(got) != want {
				return fmt.Errorf("get %d: %q %v, want %q", i, got, err, want)
			}
		}
	}
	return nil
}

func countFDs(t testing.TB) int {
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skipf("no /proc: %v", err)
	}
	return len(ents)
}

func waitFor(t testing.TB, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not reached within 10s")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// pipeListener hands out in-memory net.Pipe connections, so a whole server
// can run inside a synctest bubble where time is virtual.
type pipeListener struct {
	conns  chan net.Conn
	closed chan struct{}
	once   sync.Once
}

func newPipeListener() *pipeListener {
	return &pipeListener{conns: make(chan net.Conn), closed: make(chan struct{})}
}

func (l *pipeListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.closed:
		return nil, net.ErrClosed
	}
}

func (l *pipeListener) Close() error   { l.once.Do(func() { close(l.closed) }); return nil }
func (l *pipeListener) Addr() net.Addr { return pipeAddr{} }

func (l *pipeListener) dial() net.Conn {
	c, s := net.Pipe()
	l.conns <- s
	return c
}

type pipeAddr struct{}

func (pipeAddr) Network() string { return "pipe" }
func (pipeAddr) String() string  { return "pipe" }

// TestIdleTimeoutCountsFromLastCompleteCommand checks that a client which
// keeps trickling bytes of an unfinished command is still cut off
// IdleTimeout after its last complete command (slowloris), while a client
// that completes commands in time stays connected.
func TestIdleTimeoutCountsFromLastCompleteCommand(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st := store.New(store.Config{})
		defer st.Close()
		srv := server.New(server.Config{IdleTimeout: 10 * time.Second}, st)
		ln := newPipeListener()
		go srv.Serve(ln, memcache.New(srv))
		defer srv.Shutdown(context.Background())

		nc := ln.dial()
		c := servertest.NewClient(t, nc)
		for range 3 { // complete commands 9s apart keep the connection
			c.Expect("get a\r\n", "END")
			time.Sleep(9 * time.Second)
		}
		c.Expect("get a\r\n", "END")
		last := time.Now()
		_ = nc.SetReadDeadline(time.Time{})
		closed := make(chan time.Duration)
		go func() {
			_, err := c.R.ReadByte()
			if !errors.Is(err, io.EOF) {
				t.Errorf("read after kick: %v, want EOF", err)
			}
			closed <- time.Since(last)
		}()
		for _, b := range []byte("get aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa") {
			if _, err := nc.Write([]byte{b}); err != nil {
				break // kicked
			}
			time.Sleep(time.Second)
		}
		if d := <-closed; d != 10*time.Second {
			t.Errorf("slow client closed %v after its last complete command, want 10s", d)
		}
		if s := srv.Stats(); s.Count[server.StatCommandTimeouts] != 1 {
			t.Errorf("command_timeouts = %d, want 1 (the client had started a command)", s.Count[server.StatCommandTimeouts])
		}

		// A connection that sends nothing at all is an idle kick.
		quiet := ln.dial()
		start := time.Now()
		if _, err := quiet.Read(make([]byte, 1)); err == nil {
			t.Error("idle connection got data")
		}
		if d := time.Since(start); d != 10*time.Second {
			t.Errorf("idle connection closed after %v, want 10s", d)
		}
		if s := srv.Stats(); s.Count[server.StatIdleKicks] != 1 {
			t.Errorf("idle_kicks = %d, want 1", s.Count[server.StatIdleKicks])
		}
	})
}

// TestCommandTimeoutWithoutIdleTimeout: with no idle timeout (memcached's
// default) an idle client may stay for ever, but one that starts a command
// and trickles it (slowloris) is cut off CommandTimeout after its first byte.
func TestCommandTimeoutWithoutIdleTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st := store.New(store.Config{})
		defer st.Close()
		srv := server.New(server.Config{CommandTimeout: 5 * time.Second}, st)
		ln := newPipeListener()
		go srv.Serve(ln, memcache.New(srv))
		defer srv.Shutdown(context.Background())

		nc := ln.dial()
		c := servertest.NewClient(t, nc)
		c.Expect("get a\r\n", "END")
		time.Sleep(time.Hour) // idle is fine
		c.Expect("get a\r\n", "END")
		_ = nc.SetReadDeadline(time.Time{})
		start := time.Now()
		for _, b := range []byte("set k 0 0 100\r\n" + strings.Repeat("x", 100)) {
			if _, err := nc.Write([]byte{b}); err != nil {
				break
			}
			time.Sleep(time.Second)
		}
		if d := time.Since(start); d < 5*time.Second || d > 6*time.Second {
			t.Errorf("trickling client cut off after %v, want 5s after its first byte", d)
		}
		if _, ok := st.Get([]byte("k")); ok {
			t.Error("half-sent set was stored")
		}
		if s := srv.Stats(); s.Count[server.StatCommandTimeouts] != 1 || s.Count[server.StatIdleKicks] != 0 {
			t.Errorf("command_timeouts %d idle_kicks %d, want 1 and 0", s.Count[server.StatCommandTimeouts], s.Count[server.StatIdleKicks])
		}
	})
}

// TestClientThatNeverReadsIsCutOff: replies pile up for a client that keeps
// sending but never reads; the write deadline closes it instead of letting
// its goroutine and buffers live for ever.
func TestClientThatNeverReadsIsCutOff(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st := store.New(store.Config{})
		defer st.Close()
		srv := server.New(server.Config{WriteTimeout: 3 * time.Second}, st)
		ln := newPipeListener()
		go srv.Serve(ln, memcache.New(srv))
		defer srv.Shutdown(context.Background())

		nc := ln.dial()
		big := strings.Repeat("v", 50000)
		go func() {
			_, _ = fmt.Fprintf(nc, "set big 0 0 %d\r\n%s\r\n", len(big), big)
			for range 100 {
				if _, err := io.WriteString(nc, "get big\r\n"); err != nil {
					return
				}
			}
		}()
		start := time.Now()
		for srv.CurrConns() > 0 || time.Since(start) == 0 {
			time.Sleep(100 * time.Millisecond)
			if time.Since(start) > time.Minute {
				t.Fatal("never-reading client still connected after a minute")
			}
		}
		if d := time.Since(start); d > 4*time.Second {
			t.Errorf("never-reading client cut off after %v, want ~3s", d)
		}
		if s := srv.Stats(); s.Count[server.StatWriteTimeouts] != 1 {
			t.Errorf("write_timeouts = %d, want 1", s.Count[server.StatWriteTimeouts])
		}
		nc.Close()
	})
}

// TestWriteDeadlineAfterSilentBatch: a batch with no reply (noreply
// commands) flushes nothing, so the clock reading meant for its flush must
// not be used by a later write. A reply larger than the write buffer,
// which goes out before its batch ends, after a silence longer than
// WriteTimeout still goes out.
func TestWriteDeadlineAfterSilentBatch(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st := store.New(store.Config{})
		defer st.Close()
		srv := server.New(server.Config{WriteTimeout: 10 * time.Second}, st)
		ln := newPipeListener()
		go srv.Serve(ln, memcache.New(srv))
		defer srv.Shutdown(context.Background())

		nc := ln.dial()
		c := servertest.NewClient(t, nc)
		big := strings.Repeat("v", 3*server.WriteBufSize)
		c.Expect(fmt.Sprintf("set big 0 0 %d\r\n%s\r\n", len(big), big), "STORED")
		time.Sleep(6 * time.Second)
		if _, err := io.WriteString(nc, "set k 0 0 1 noreply\r\nx\r\n"); err != nil {
			t.Fatal(err)
		}
		time.Sleep(30 * time.Second)
		c.Expect("get big\r\n", fmt.Sprintf("VALUE big 0 %d", len(big)), big, "END")
		if s := srv.Stats(); s.Count[server.StatWriteTimeouts] != 0 {
			t.Errorf("write_timeouts = %d, want 0", s.Count[server.StatWriteTimeouts])
		}
	})
}

// TestShutdownFinishesInFlightAndForceCloses checks graceful shutdown: idle
// connections close at once, a pipelined batch already received is answered
// in full, and a client that never reads is force-closed at the deadline.
func TestShutdownFinishesInFlightAndForceCloses(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st := store.New(store.Config{})
		defer st.Close()
		srv := server.New(server.Config{}, st)
		ln := newPipeListener()
		served := make(chan error, 1)
		go func() { served <- srv.Serve(ln, memcache.New(srv)) }()

		idle := ln.dial()
		busy := ln.dial()
		stuck := ln.dial()
		big := strings.Repeat("x", 100000)
		c := servertest.NewClient(t, stuck)
		c.Expect(fmt.Sprintf("set big 0 0 %d\r\n%s\r\n", len(big), big), "STORED")
		go func() { _, _ = io.WriteString(stuck, "get big\r\n") }() // never reads the reply

		// The busy client pipelines 50 commands; net.Pipe is synchronous, so
		// the server is mid-batch when Shutdown starts.
		var batch strings.Builder
		for i := range 50 {
			fmt.Fprintf(&batch, "set k%d 0 0 1\r\nv\r\n", i)
		}
		go func() { _, _ = io.WriteString(busy, batch.String()) }()
		br := bufio.NewReader(busy)
		if l, _ := br.ReadString('\n'); l != "STORED\r\n" {
			t.Fatalf("first reply %q", l)
		}
		synctest.Wait()

		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		start := time.Now()
		shutdownErr := make(chan error, 1)
		go func() { shutdownErr <- srv.Shutdown(ctx) }()

		n := 1
		for {
			l, err := br.ReadString('\n')
			if err != nil {
				break
			}
			if l != "STORED\r\n" {
				t.Errorf("reply %q", l)
			}
			n++
		}
		if n != 50 {
			t.Errorf("busy client got %d replies before close, want all 50", n)
		}
		if _, err := idle.Read(make([]byte, 1)); err == nil {
			t.Error("idle connection still open after shutdown")
		}
		if err := <-shutdownErr; !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("Shutdown = %v, want DeadlineExceeded (a client never read its reply)", err)
		}
		if d := time.Since(start); d != 5*time.Second {
			t.Errorf("shutdown took %v, want the 5s deadline", d)
		}
		if err := <-served; !errors.Is(err, server.ErrServerClosed) {
			t.Errorf("Serve = %v, want server.ErrServerClosed", err)
		}
		for _, k := range []string{"k0", "k49"} {
			if _, ok := st.Get([]byte(k)); !ok {
				t.Errorf("%s lost: acknowledged writes must be readable", k)
			}
		}
	})
}

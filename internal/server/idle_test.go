package server_test

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/minikv/minikv/internal/server"
	"github.com/minikv/minikv/internal/store"
)

// The idle timeout counts from the last complete command
// (docs/operations.md), on both ports and in every serving mode: a client
// that trickles the bytes of a command it never finishes is closed by it,
// not left to --command-timeout; a client that keeps completing commands
// is never closed. These tests run on real sockets and real time (the
// event loops wait in epoll, which synctest cannot stand in for); they
// assert that a connection closes at all within generous bounds, never
// how fast.

// Timings for the idle tests: a trickler sends a byte every trickleEvery
// and must be closed within idleTestLimit; the command timeout is far
// beyond that, so only the idle timeout can close it. A keep-alive client
// completes a command every keepAliveEvery, far more often than
// idleTestTimeout, for keepAliveFor.
const (
	idleTestTimeout  = 2 * time.Second
	idleTestCmdLimit = time.Minute
	idleTestLimit    = 10 * time.Second
	trickleEvery     = 200 * time.Millisecond
	keepAliveEvery   = 100 * time.Millisecond
	keepAliveFor     = 5 * time.Second
)

// idleTestConfig is the server configuration of the idle tests.
func idleTestConfig() server.Config {
	return server.Config{IdleTimeout: idleTestTimeout, CommandTimeout: idleTestCmdLimit}
}

// trickler is a client that starts a request it never finishes in time.
type trickler struct {
	name    string
	resp    bool   // on the RESP port, else on memcached's
	prefix  string // sent at once, after a complete command
	trickle string // then one byte every trickleEvery
	leaves  bool   // the request makes a connection leave its event loop
}

// pastReadBuffer is part of a value, larger than the 16 KiB read buffer:
// an event loop cannot keep such a request, and the connection leaves it
// for a goroutine.
var pastReadBuffer = strings.Repeat("v", 20000)

var tricklers = []trickler{
	{name: "memcache command line", trickle: "get " + strings.Repeat("a", 200)},
	{name: "memcache value", prefix: "set k 0 0 100\r\n", trickle: strings.Repeat("v", 100)},
	{name: "memcache value past the read buffer", prefix: "set k 0 0 40000\r\n" + pastReadBuffer, trickle: strings.Repeat("v", 100), leaves: true},
	{name: "resp multibulk", resp: true, trickle: "*2\r\n$3\r\nGET\r\n$200\r\n" + strings.Repeat("a", 200)},
	{name: "resp inline", resp: true, trickle: "GET " + strings.Repeat("a", 200), leaves: true},
	{name: "resp value past the read buffer", resp: true, prefix: "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$40000\r\n" + pastReadBuffer, trickle: strings.Repeat("v", 100), leaves: true},
}

// completeCommand is a command of the port and its whole reply.
func completeCommand(resp bool) (req, reply string) {
	if resp {
		return "*1\r\n$4\r\nPING\r\n", "+PONG\r\n"
	}
	return "version\r\n", "VERSION " + server.Version + "\r\n"
}

// checkIdleTimeout runs every trickler and a keep-alive client on each
// port at once (goroutines rather than parallel subtests, which -parallel
// would queue two at a time on two cores), over connections from dial, to
// servers configured by idleTestConfig. closedByTimeout sums their
// idle_kicks and command_timeouts: each trickler must count once (a
// connection cut off mid-command counts as a command timeout, as when a
// read deadline runs out mid-command).
func checkIdleTimeout(t *testing.T, dial func(t *testing.T, resp bool) net.Conn, closedByTimeout func() uint64) {
	var wg sync.WaitGroup
	for _, tr := range tricklers {
		nc := dial(t, tr.resp)
		wg.Go(func() {
			if err := trickleUntilClosed(nc, tr); err != nil {
				t.Errorf("%s: %v", tr.name, err)
			}
		})
	}
	for _, resp := range []bool{false, true} {
		nc := dial(t, resp)
		wg.Go(func() {
			if err := keepAlive(nc, resp); err != nil {
				t.Errorf("keep-alive (resp %v): %v", resp, err)
			}
		})
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	want := uint64(len(tricklers))
	deadline := time.Now().Add(idleTestLimit)
	for closedByTimeout() != want && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if got := closedByTimeout(); got != want {
		t.Errorf("idle_kicks + command_timeouts = %d, want %d (one per trickler)", got, want)
	}
}

// trickleUntilClosed completes a command on nc, sends tr's prefix, then
// tr's bytes one at a time, and reports an error unless the server closes
// nc within idleTestLimit.
func trickleUntilClosed(nc net.Conn, tr trickler) error {
	r := bufio.NewReader(nc)
	req, reply := completeCommand(tr.resp)
	_ = nc.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := io.WriteString(nc, req); err != nil {
		return fmt.Errorf("write %q: %w", req, err)
	}
	got := make([]byte, len(reply))
	if _, err := io.ReadFull(r, got); err != nil || string(got) != reply {
		return fmt.Errorf("reply to %q: %q, %v; want %q", req, got, err, reply)
	}
	if _, err := io.WriteString(nc, tr.prefix); err != nil {
		return fmt.Errorf("write the prefix: %w", err)
	}
	_ = nc.SetDeadline(time.Time{})
	start := time.Now()
	closed := make(chan error, 1)
	go func() {
		_ = nc.SetReadDeadline(start.Add(idleTestLimit))
		_, err := r.ReadByte()
		closed <- err
	}()
	tick := time.NewTicker(trickleEvery)
	defer tick.Stop()
	sent, broken := 0, false
	for {
		select {
		case err := <-closed:
			switch {
			case err == nil:
				return fmt.Errorf("got a reply to an unfinished request after %d bytes", sent)
			case errors.Is(err, os.ErrDeadlineExceeded):
				return fmt.Errorf("still open %v after its last complete command (%d bytes trickled)", idleTestLimit, sent)
			}
			return nil // EOF, or a reset when a byte came after the close
		case <-tick.C:
		}
		switch {
		case broken:
		case sent == len(tr.trickle):
			return errors.New("trickled the whole request without being closed")
		default:
			// A write that fails means the server has closed and answered
			// an earlier byte with a reset: the reader reports it.
			_, err := nc.Write([]byte{tr.trickle[sent]})
			broken = err != nil
			sent++
		}
	}
}

// keepAlive completes a command on nc every keepAliveEvery for
// keepAliveFor, and reports an error if a reply is missing.
func keepAlive(nc net.Conn, resp bool) error {
	r := bufio.NewReader(nc)
	req, reply := completeCommand(resp)
	got := make([]byte, len(reply))
	for end := time.Now().Add(keepAliveFor); time.Now().Before(end); time.Sleep(keepAliveEvery) {
		_ = nc.SetDeadline(time.Now().Add(5 * time.Second))
		if _, err := io.WriteString(nc, req); err != nil {
			return fmt.Errorf("write %q: %w (completing a command every %v)", req, err, keepAliveEvery)
		}
		if _, err := io.ReadFull(r, got); err != nil || string(got) != reply {
			return fmt.Errorf("reply to %q: %q, %v; want %q (completing a command every %v)", req, got, err, reply, keepAliveEvery)
		}
	}
	return nil
}

// TestIdleTimeoutClosesTricklingClient: on both ports, in the serving
// mode the environment picks (MINIKV_TEST_EVENT_LOOPS: make test-loops
// runs it on an event loop, make test-go on goroutines). loop_test.go
// runs it on loops whatever the environment, tls_test.go over TLS.
func TestIdleTimeoutClosesTricklingClient(t *testing.T) {
	ts := startRESP(t, idleTestConfig(), store.Config{})
	checkIdleTimeout(t, ts.dialPort, func() uint64 { return closedByTimeout(ts.srv) })
}

// dialPort dials ts's memcached port, or its RESP port when resp is set.
func (ts *testServer) dialPort(t *testing.T, resp bool) net.Conn {
	if resp {
		return dial(t, ts.respAddr).Conn
	}
	return dial(t, ts.addr).Conn
}

// closedByTimeout is srv's idle_kicks plus command_timeouts.
func closedByTimeout(srv *server.Server) uint64 {
	st := srv.Stats()
	return st.Count[server.StatIdleKicks] + st.Count[server.StatCommandTimeouts]
}

package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/minikv/minikv/internal/server/servertest"
)

// TestIdleTimeoutClosesTricklingClient is the idle timeout as an operator
// sets it: -o idle_timeout=2 (or --idle-timeout 2s, or CONFIG SET timeout
// 2 on the RESP port) closes a client that trickles a command it never
// finishes, on both ports and in each serving mode, because the idle time
// counts from the last complete command (docs/operations.md).
// --command-timeout is a minute, so only the idle timeout can close it
// within the 10 s the test waits.
func TestIdleTimeoutClosesTricklingClient(t *testing.T) {
	for _, tc := range []struct {
		name      string
		args      []string
		configSet bool // CONFIG SET timeout 2 after start
	}{
		{name: "-o idle_timeout, event loops", args: []string{"-o", "idle_timeout=2"}},
		{name: "-o idle_timeout, goroutines", args: []string{"-o", "idle_timeout=2", "--event-loops", "0"}},
		{name: "--idle-timeout, loops without io_uring", args: []string{"--idle-timeout", "2s", "--event-loops", "1", "--no-io-uring"}},
		{name: "CONFIG SET timeout, event loops", configSet: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mcPort, respPort := freePort(t), freePort(t)
			args := append([]string{"-p", strconv.Itoa(mcPort), "--resp-port", strconv.Itoa(respPort), "--command-timeout", "1m"}, tc.args...)
			stop := startRun(t, args, nil)
			defer stop()
			mcAddr := net.JoinHostPort("127.0.0.1", strconv.Itoa(mcPort))
			respAddr := net.JoinHostPort("127.0.0.1", strconv.Itoa(respPort))
			waitDial(t, mcAddr)
			waitDial(t, respAddr)
			if tc.configSet {
				if err := servertest.RoundTrip(respAddr, "*4\r\n$6\r\nCONFIG\r\n$3\r\nSET\r\n$7\r\ntimeout\r\n$1\r\n2\r\n", "+OK\r\n"); err != nil {
					t.Fatalf("CONFIG SET timeout 2: %v", err)
				}
			}
			var wg sync.WaitGroup
			for _, p := range []struct{ name, addr, first, reply, trickle string }{
				{"memcached port", mcAddr, "version\r\n", "VERSION ", "get " + strings.Repeat("a", 200)},
				{"RESP port", respAddr, "*1\r\n$4\r\nPING\r\n", "+PONG\r\n", "*2\r\n$3\r\nGET\r\n$200\r\n" + strings.Repeat("a", 200)},
			} {
				wg.Go(func() {
					if err := trickleClosed(p.addr, p.first, p.reply, p.trickle); err != nil {
						t.Errorf("%s: %v", p.name, err)
					}
				})
			}
			wg.Wait()
		})
	}
}

// trickleClosed completes the command first on a new connection to addr
// (its reply starts with reply), then sends trickle one byte every 200 ms,
// and reports an error unless the server closes the connection within
// 10 s.
func trickleClosed(addr, first, reply, trickle string) error {
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		return err
	}
	defer nc.Close()
	r := bufio.NewReader(nc)
	_ = nc.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := io.WriteString(nc, first); err != nil {
		return err
	}
	if l, err := r.ReadString('\n'); err != nil || !strings.HasPrefix(l, reply) {
		return fmt.Errorf("reply to %q: %q, %v", first, l, err)
	}
	_ = nc.SetDeadline(time.Time{})
	closed := make(chan error, 1)
	go func() {
		_ = nc.SetReadDeadline(time.Now().Add(10 * time.Second))
		_, err := r.ReadByte()
		closed <- err
	}()
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	for i := 0; ; i++ {
		select {
		case err := <-closed:
			switch {
			case err == nil:
				return errors.New("got a reply to an unfinished command")
			case errors.Is(err, os.ErrDeadlineExceeded):
				return fmt.Errorf("still open 10s after the last complete command (%d bytes trickled)", min(i, len(trickle)))
			}
			return nil // EOF, or a reset for a byte sent after the close
		case <-tick.C:
		}
		if i < len(trickle) {
			_, _ = nc.Write([]byte{trickle[i]}) // an error: closed, the reader reports it
		}
	}
}

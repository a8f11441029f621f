package redis

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
	"github.com/minikv/minikv/internal/server/servertest"
	"github.com/minikv/minikv/internal/store"
)

// TestTimeoutTricklingClientVersusRedis pins a deliberate difference
// (docs/redis.md, Differences from Redis): after CONFIG SET timeout 2,
// redis-server closes a client only once it has read nothing from it for
// 2 s (clientsCronHandleTimeout compares c->lastinteraction, which every
// read sets), so a client that trickles an unfinished command stays open;
// MiniKV counts the idle time from the last complete command, on this
// port as on memcached's, and closes it. Both close a silent client.
// MiniKV's command timeout is a minute: only the idle timeout closes.
func TestTimeoutTricklingClientVersusRedis(t *testing.T) {
	redisAddr := startRedisServer(t)
	rs := startRESP(t, server.Config{CommandTimeout: time.Minute}, store.Config{})
	setTimeout := mb("CONFIG", "SET", "timeout", "2")
	for _, addr := range []string{redisAddr, rs.respAddr} {
		if err := servertest.RoundTrip(addr, setTimeout, "+OK\r\n"); err != nil {
			t.Fatalf("%s: CONFIG SET timeout 2: %v", addr, err)
		}
	}
	get := mb("GET", strings.Repeat("a", 200))
	var wg sync.WaitGroup
	check := func(name string, err error) {
		if err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	for _, s := range []struct{ name, addr string }{{"redis-server", redisAddr}, {"MiniKV", rs.respAddr}} {
		wg.Go(func() { check(s.name+", silent client", silentClosed(s.addr)) })
	}
	// redis-server: still open after three timeouts of trickling, and the
	// command, finished at once, is answered.
	wg.Go(func() {
		nc, r, err := dialPinged(redisAddr)
		if err != nil {
			check("redis-server, trickler", err)
			return
		}
		defer nc.Close()
		sent := 0
		for end := time.Now().Add(6 * time.Second); time.Now().Before(end); sent++ {
			if _, err := nc.Write([]byte{get[sent]}); err != nil {
				check("redis-server, trickler", fmt.Errorf("closed after %d bytes: %w", sent, err))
				return
			}
			time.Sleep(200 * time.Millisecond)
		}
		_ = nc.SetDeadline(time.Now().Add(5 * time.Second))
		if _, err := io.WriteString(nc, get[sent:]); err != nil {
			check("redis-server, trickler", fmt.Errorf("closed after trickling: %w", err))
			return
		}
		if l, err := r.ReadString('\n'); l != "$-1\r\n" {
			check("redis-server, trickler", fmt.Errorf("GET after trickling: %q, %v; want $-1", l, err))
		}
	})
	// MiniKV: closed.
	wg.Go(func() {
		nc, r, err := dialPinged(rs.respAddr)
		if err != nil {
			check("MiniKV, trickler", err)
			return
		}
		defer nc.Close()
		closed := make(chan error, 1)
		go func() {
			_ = nc.SetReadDeadline(time.Now().Add(10 * time.Second))
			_, err := r.ReadByte()
			closed <- err
		}()
		for sent := 0; ; sent++ {
			select {
			case err := <-closed:
				if err == nil || errors.Is(err, os.ErrDeadlineExceeded) {
					check("MiniKV, trickler", fmt.Errorf("not closed within 10 s (read: %v)", err))
				}
				return
			case <-time.After(200 * time.Millisecond):
			}
			if sent < len(get) {
				_, _ = nc.Write([]byte{get[sent]}) // an error: closed, the reader reports it
			}
		}
	})
	wg.Wait()
}

// dialPinged connects to addr and completes a PING.
func dialPinged(addr string) (net.Conn, *bufio.Reader, error) {
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		return nil, nil, err
	}
	r := bufio.NewReader(nc)
	_ = nc.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := io.WriteString(nc, mb("PING")); err != nil {
		nc.Close()
		return nil, nil, err
	}
	if l, err := r.ReadString('\n'); l != "+PONG\r\n" {
		nc.Close()
		return nil, nil, fmt.Errorf("PING: %q, %v", l, err)
	}
	_ = nc.SetDeadline(time.Time{})
	return nc, r, nil
}

// silentClosed reports an error unless a connection to addr that completes
// a PING and then sends nothing is closed within 10 s.
func silentClosed(addr string) error {
	nc, r, err := dialPinged(addr)
	if err != nil {
		return err
	}
	defer nc.Close()
	_ = nc.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := r.ReadByte(); err == nil || errors.Is(err, os.ErrDeadlineExceeded) {
		return fmt.Errorf("not closed within 10 s (read: %v)", err)
	}
	return nil
}

package server

import (
	"context"
	"crypto/tls"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/minikv/minikv/internal/store"
)

// TestAuthTable is the seed's five-case table on the memcached port.
func TestAuthTable(t *testing.T) {
	open := startServer(t, Config{}, store.Config{})
	locked := startServer(t, Config{AuthToken: []byte("s3cret")}, store.Config{})
	for _, tc := range []struct {
		name   string
		addr   string
		send   string
		want   []string
		closed bool
	}{
		{"no token, any command", open.addr, "version\r\n", []string{"VERSION " + Version}, false},
		{"no token, auth", open.addr, "auth s3cret\r\n", []string{"CLIENT_ERROR auth not configured"}, true},
		{"token, auth correct", locked.addr, "auth s3cret\r\nset k 0 0 1\r\nx\r\nget k\r\n",
			[]string{"AUTHENTICATED", "STORED", "VALUE k 0 1", "x", "END"}, false},
		{"token, auth wrong", locked.addr, "auth nope\r\nversion\r\n", []string{"CLIENT_ERROR auth failed"}, true},
		{"token, anything else", locked.addr, "get k\r\n", []string{"CLIENT_ERROR auth required"}, true},
		{"token, garbage first", locked.addr, "bogus\r\n", []string{"CLIENT_ERROR auth required"}, true},
		{"token, auth without token", locked.addr, "auth\r\n", []string{"CLIENT_ERROR auth required"}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := dial(t, tc.addr)
			c.expect(tc.send, tc.want...)
			if got := c.closed(500 * time.Millisecond); got != tc.closed {
				t.Errorf("closed = %v, want %v", got, tc.closed)
			}
		})
	}
	if s := locked.srv.Stats(); s.Counters["auth_cmds"] != 2 || s.Counters["auth_errors"] != 1 {
		t.Errorf("auth_cmds %d auth_errors %d", s.Counters["auth_cmds"], s.Counters["auth_errors"])
	}
}

// TestAuthPreAuthLimits: before authenticating, only tiny values are read.
func TestAuthPreAuthLimits(t *testing.T) {
	ts := startServer(t, Config{AuthUsers: map[string]string{"app": "pw"}}, store.Config{})
	c := dial(t, ts.addr)
	big := strings.Repeat("x", preAuthMaxValue+1)
	c.expect("set k 0 0 "+itoa(len(big))+"\r\n"+big+"\r\n", "CLIENT_ERROR unauthenticated")
	c.expect("set auth 0 0 6\r\napp pw\r\n", "STORED")
	c.expect("set k 0 0 "+itoa(len(big))+"\r\n"+big+"\r\n", "STORED")
}

// TestAuthFileHandshake is memcached's -Y text-protocol authentication.
func TestAuthFileHandshake(t *testing.T) {
	ts := startServer(t, Config{AuthUsers: map[string]string{"alice": "secret", "bob": "pw2"}}, store.Config{})
	c := dial(t, ts.addr)
	c.expect("version\r\n", "CLIENT_ERROR unauthenticated")
	c.expect("get k\r\n", "CLIENT_ERROR unauthenticated")
	c.expect("set ignored 0 0 11\r\nalice wrong\r\n", "CLIENT_ERROR authentication failure")
	c.expect("set ignored 0 0 5\r\nalice\r\n", "CLIENT_ERROR bad authentication token format")
	// A short data block: the leftover "w2" line is a command of its own.
	c.expect("set ignored 0 0 3\r\nbob pw2\r\n", "CLIENT_ERROR bad command line termination",
		"CLIENT_ERROR unauthenticated")
	c.expect("set ignored 99 999 12\r\nalice secret\r\n", "STORED")
	c.expect("version\r\n", "VERSION "+Version)
	c.expect("get ignored\r\n", "END") // the handshake stores nothing
	if c.closed(200 * time.Millisecond) {
		t.Error("connection closed")
	}
}

// serveTLS starts a server with cfg behind a TLS listener on 127.0.0.1:0,
// serving the memcached protocol, or RESP when resp is set. It returns the
// server, the listener's address and a client config that trusts it.
func serveTLS(t *testing.T, cfg Config, resp bool) (*Server, string, *tls.Config) {
	t.Helper()
	cert, pool := selfSigned(t)
	st := store.New(store.Config{})
	t.Cleanup(func() { st.Close() })
	srv := New(cfg, st)
	raw, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ln := tls.NewListener(raw, &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12})
	if resp {
		go srv.ServeRESP(ln)
	} else {
		go srv.Serve(ln)
	}
	t.Cleanup(func() { srv.Shutdown(context.Background()) })
	return srv, raw.Addr().String(), &tls.Config{RootCAs: pool, ServerName: "localhost"}
}

func TestTLS(t *testing.T) {
	_, addr, clientCfg := serveTLS(t, Config{CommandTimeout: 2 * time.Second}, false)
	tc, err := tls.Dial("tcp", addr, clientCfg)
	if err != nil {
		t.Fatalf("TLS dial: %v", err)
	}
	c := &client{t: t, nc: tc, br: newBufReader(tc)}
	c.expect("set k 0 0 2\r\nhi\r\nget k\r\n", "STORED", "VALUE k 0 2", "hi", "END")
	tc.Close()

	// TLS 1.1 is refused.
	tls11 := clientCfg.Clone()
	tls11.MaxVersion = tls.VersionTLS11
	if old, err := tls.Dial("tcp", addr, tls11); err == nil {
		old.Close()
		t.Error("TLS 1.1 handshake succeeded")
	}
	// Plain text on the TLS port, and a client that never handshakes, are
	// both closed (the latter within CommandTimeout).
	for _, send := range []string{"get k\r\n", ""} {
		p := dial(t, addr)
		p.send(send)
		if !p.closed(4 * time.Second) {
			t.Errorf("plain client %q on the TLS port left open", send)
		}
	}
}

// TestTLSIdlePastCommandTimeout: a TLS connection that waits for longer
// than --command-timeout between commands is not closed (the deadline that
// runs out while it waits is replaced, and a TLS read survives a timeout),
// and its next command works.
func TestTLSIdlePastCommandTimeout(t *testing.T) {
	srv, addr, clientCfg := serveTLS(t, Config{CommandTimeout: 200 * time.Millisecond}, false)
	tc, err := tls.Dial("tcp", addr, clientCfg)
	if err != nil {
		t.Fatalf("TLS dial: %v", err)
	}
	defer tc.Close()
	c := &client{t: t, nc: tc, br: newBufReader(tc)}
	c.expect("set k 0 0 2\r\nhi\r\n", "STORED")
	time.Sleep(700 * time.Millisecond) // three and a half command timeouts
	c.expect("get k\r\n", "VALUE k 0 2", "hi", "END")
	if s := srv.Stats(); s.Counters["command_timeouts"] != 0 || s.Counters["idle_kicks"] != 0 {
		t.Errorf("command_timeouts %d idle_kicks %d, want 0 and 0", s.Counters["command_timeouts"], s.Counters["idle_kicks"])
	}
}

// TestTLSGoRedis: a TLS-enabled go-redis client (RESP3 by default) talks to
// the RESP port behind the same TLS listener the binary builds, with a
// token: AUTH in the HELLO handshake, then commands, then a wrong password.
func TestTLSGoRedis(t *testing.T) {
	_, addr, clientCfg := serveTLS(t, Config{AuthToken: []byte("tok3n")}, true)
	opts := &redis.Options{Addr: addr, Password: "tok3n", TLSConfig: clientCfg}
	rdb := redis.NewClient(opts)
	defer rdb.Close()
	ctx := t.Context()
	if err := rdb.Set(ctx, "tls-key", "v", 0).Err(); err != nil {
		t.Fatalf("SET over TLS: %v", err)
	}
	if v, err := rdb.Get(ctx, "tls-key").Result(); err != nil || v != "v" {
		t.Fatalf("GET over TLS = %q, %v", v, err)
	}
	opts.Password = "wrong"
	bad := redis.NewClient(opts)
	defer bad.Close()
	if err := bad.Ping(ctx).Err(); err == nil || !strings.Contains(err.Error(), "WRONGPASS") {
		t.Errorf("wrong password over TLS: %v, want WRONGPASS", err)
	}
}

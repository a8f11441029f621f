package server_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"fmt"
	"math/big"
	"net"
	"strings"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/minikv/minikv/internal/server"
	"github.com/minikv/minikv/internal/server/memcache"
	"github.com/minikv/minikv/internal/server/redis"
	"github.com/minikv/minikv/internal/server/servertest"
	"github.com/minikv/minikv/internal/store"
)

// serveTLS starts a server with cfg behind a TLS listener on 127.0.0.1:0,
// serving the memcached protocol, or RESP when resp is set. It returns the
// server, the listener's address and a client config that trusts it.
func serveTLS(t *testing.T, cfg server.Config, resp bool) (*server.Server, string, *tls.Config) {
	t.Helper()
	cert, pool := selfSigned(t)
	st := store.New(store.Config{})
	t.Cleanup(func() { st.Close() })
	srv := server.New(cfg, st)
	raw, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ln := tls.NewListener(raw, &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12})
	if resp {
		go srv.Serve(ln, redis.New(srv))
	} else {
		go srv.Serve(ln, memcache.New(srv))
	}
	t.Cleanup(func() { srv.Shutdown(context.Background()) })
	return srv, raw.Addr().String(), &tls.Config{RootCAs: pool, ServerName: "localhost"}
}

func TestTLS(t *testing.T) {
	_, addr, clientCfg := serveTLS(t, server.Config{CommandTimeout: 2 * time.Second}, false)
	tc, err := tls.Dial("tcp", addr, clientCfg)
	if err != nil {
		t.Fatalf("TLS dial: %v", err)
	}
	c := servertest.NewClient(t, tc)
	c.Expect("set k 0 0 2\r\nhi\r\nget k\r\n", "STORED", "VALUE k 0 2", "hi", "END")
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
		p.Send(send)
		if !p.Closed(4 * time.Second) {
			t.Errorf("plain client %q on the TLS port left open", send)
		}
	}
}

// TestTLSIdlePastCommandTimeout: a TLS connection that waits for longer
// than --command-timeout between commands is not closed (the deadline that
// runs out while it waits is replaced, and a TLS read survives a timeout),
// and its next command works.
func TestTLSIdlePastCommandTimeout(t *testing.T) {
	srv, addr, clientCfg := serveTLS(t, server.Config{CommandTimeout: 200 * time.Millisecond}, false)
	tc, err := tls.Dial("tcp", addr, clientCfg)
	if err != nil {
		t.Fatalf("TLS dial: %v", err)
	}
	defer tc.Close()
	c := servertest.NewClient(t, tc)
	c.Expect("set k 0 0 2\r\nhi\r\n", "STORED")
	time.Sleep(700 * time.Millisecond) // three and a half command timeouts
	c.Expect("get k\r\n", "VALUE k 0 2", "hi", "END")
	if s := srv.Stats(); s.Count[server.StatCommandTimeouts] != 0 || s.Count[server.StatIdleKicks] != 0 {
		t.Errorf("command_timeouts %d idle_kicks %d, want 0 and 0", s.Count[server.StatCommandTimeouts], s.Count[server.StatIdleKicks])
	}
}

// TestTLSGoRedis: a TLS-enabled go-redis client (RESP3 by default) talks to
// the RESP port behind the same TLS listener the binary builds, with a
// token: AUTH in the HELLO handshake, then commands, then a wrong password.
func TestTLSGoRedis(t *testing.T) {
	_, addr, clientCfg := serveTLS(t, server.Config{AuthToken: []byte("tok3n")}, true)
	opts := &goredis.Options{Addr: addr, Password: "tok3n", TLSConfig: clientCfg}
	rdb := goredis.NewClient(opts)
	defer rdb.Close()
	ctx := t.Context()
	if err := rdb.Set(ctx, "tls-key", "v", 0).Err(); err != nil {
		t.Fatalf("SET over TLS: %v", err)
	}
	if v, err := rdb.Get(ctx, "tls-key").Result(); err != nil || v != "v" {
		t.Fatalf("GET over TLS = %q, %v", v, err)
	}
	opts.Password = "wrong"
	bad := goredis.NewClient(opts)
	defer bad.Close()
	if err := bad.Ping(ctx).Err(); err == nil || !strings.Contains(err.Error(), "WRONGPASS") {
		t.Errorf("wrong password over TLS: %v, want WRONGPASS", err)
	}
}

// selfSigned makes a certificate for localhost/127.0.0.1 and a pool that
// trusts it.
func selfSigned(t testing.TB) (tls.Certificate, *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		Subject:      pkix.Name{CommonName: "localhost"},
		DNSNames:     []string{"localhost"},
		IPAddresses:  []net.IP{net.ParseIP("127.0.0.1")},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IsCA:         true, BasicConstraintsValid: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(leaf)
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: leaf}, pool
}

// TestTLSIdleTimeoutClosesTricklingClient is
// TestIdleTimeoutClosesTricklingClient over TLS. A TLS connection is
// served by a goroutine of its own, with event loops running or not.
func TestTLSIdleTimeoutClosesTricklingClient(t *testing.T) {
	for _, loops := range []int{0, 1} {
		t.Run(fmt.Sprintf("event-loops=%d", loops), func(t *testing.T) {
			t.Parallel()
			cfg := idleTestConfig()
			cfg.EventLoops = loops
			mc, mcAddr, mcCfg := serveTLS(t, cfg, false)
			rs, respAddr, respCfg := serveTLS(t, cfg, true)
			checkIdleTimeout(t, func(t *testing.T, resp bool) net.Conn {
				addr, cc := mcAddr, mcCfg
				if resp {
					addr, cc = respAddr, respCfg
				}
				tc, err := tls.Dial("tcp", addr, cc)
				if err != nil {
					t.Fatalf("TLS dial: %v", err)
				}
				t.Cleanup(func() { tc.Close() })
				return tc
			}, func() uint64 { return closedByTimeout(mc) + closedByTimeout(rs) })
		})
	}
}

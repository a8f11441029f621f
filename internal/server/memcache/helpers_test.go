package memcache

import (
	"testing"

	"github.com/minikv/minikv/internal/server"
	"github.com/minikv/minikv/internal/server/redis"
	"github.com/minikv/minikv/internal/server/servertest"
	"github.com/minikv/minikv/internal/store"
)

// testServer is a MiniKV serving the memcached protocol on a real
// 127.0.0.1 listener.
type testServer struct {
	srv   *server.Server
	store *store.Store
	addr  string
}

// startServer starts a server with cfg over a fresh store with a memcached
// listener, and stops both when the test ends (servertest.Start).
func startServer(t testing.TB, cfg server.Config, scfg store.Config) *testServer {
	t.Helper()
	s := servertest.Start(t, cfg, scfg)
	return &testServer{srv: s.Server, store: s.Store, addr: s.Listen(t, New(s.Server))}
}

// respServer is a MiniKV serving both protocols over one store.
type respServer struct {
	*testServer
	respAddr string
}

// startRESP starts a server with a memcached listener (addr) and a RESP
// listener (respAddr).
func startRESP(t testing.TB, cfg server.Config, scfg store.Config) *respServer {
	t.Helper()
	s := servertest.Start(t, cfg, scfg)
	ts := &testServer{srv: s.Server, store: s.Store, addr: s.Listen(t, New(s.Server))}
	return &respServer{testServer: ts, respAddr: s.Listen(t, redis.New(s.Server))}
}

func dial(t testing.TB, addr string) *servertest.Client {
	t.Helper()
	return servertest.Dial(t, addr)
}

func dialRESP(t testing.TB, addr string) *servertest.RESPClient {
	t.Helper()
	return servertest.DialRESP(t, addr)
}

func multibulk(args ...string) string { return servertest.Multibulk(args...) }

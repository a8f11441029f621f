package server_test

import (
	"testing"

	"github.com/minikv/minikv/internal/server"
	"github.com/minikv/minikv/internal/server/memcache"
	"github.com/minikv/minikv/internal/server/redis"
	"github.com/minikv/minikv/internal/server/servertest"
	"github.com/minikv/minikv/internal/store"
)

// The core's tests drive it through the real protocols: they are an
// external test package, so they may import the protocol packages that
// import the core.

// testServer is a MiniKV serving on real 127.0.0.1 listeners: memcached
// on addr, and RESP on respAddr when started with startRESP.
type testServer struct {
	srv      *server.Server
	store    *store.Store
	addr     string
	respAddr string
}

// startServer starts a server with cfg over a fresh store with a memcached
// listener, and stops both when the test ends (servertest.Start).
func startServer(t testing.TB, cfg server.Config, scfg store.Config) *testServer {
	t.Helper()
	return startServerWith(t, cfg, scfg, func(s *server.Server) server.Protocol { return memcache.New(s) })
}

// startServerWith is startServer with the protocol proto returns.
func startServerWith(t testing.TB, cfg server.Config, scfg store.Config, proto func(*server.Server) server.Protocol) *testServer {
	t.Helper()
	s := servertest.Start(t, cfg, scfg)
	return &testServer{srv: s.Server, store: s.Store, addr: s.Listen(t, proto(s.Server))}
}

// startRESP is startServer plus a RESP listener on respAddr.
func startRESP(t testing.TB, cfg server.Config, scfg store.Config) *testServer {
	t.Helper()
	s := servertest.Start(t, cfg, scfg)
	return &testServer{
		srv:      s.Server,
		store:    s.Store,
		addr:     s.Listen(t, memcache.New(s.Server)),
		respAddr: s.Listen(t, redis.New(s.Server)),
	}
}

func dial(t testing.TB, addr string) *servertest.Client {
	t.Helper()
	return servertest.Dial(t, addr)
}

package redis

import (
	"bufio"
	"testing"

	"github.com/minikv/minikv/internal/server"
	"github.com/minikv/minikv/internal/server/memcache"
	"github.com/minikv/minikv/internal/server/servertest"
	"github.com/minikv/minikv/internal/store"
)

// respServer is a MiniKV serving both protocols on real 127.0.0.1
// listeners over one store: memcached on addr (for the cross-port tests),
// RESP on respAddr.
type respServer struct {
	srv      *server.Server
	store    *store.Store
	addr     string
	respAddr string
}

// startRESP starts a server with a memcached listener (addr) and a RESP
// listener (respAddr); both stop when the test ends (servertest.Start).
func startRESP(t testing.TB, cfg server.Config, scfg store.Config) *respServer {
	t.Helper()
	return startRESPWith(t, cfg, scfg, func(p server.Protocol) server.Protocol { return p })
}

// startRESPWith is startRESP with the RESP protocol wrapped by wrap.
func startRESPWith(t testing.TB, cfg server.Config, scfg store.Config, wrap func(server.Protocol) server.Protocol) *respServer {
	t.Helper()
	s := servertest.Start(t, cfg, scfg)
	p := newClosed(t, s)
	return &respServer{
		srv:      s.Server,
		store:    s.Store,
		addr:     s.Listen(t, memcache.New(s.Server)),
		respAddr: s.Listen(t, wrap(p)),
	}
}

// newClosed is New for the test server s, the protocol closed once s
// has stopped, as cmd/minikv closes it: a replica's link to its primary
// ends then, instead of dialing the primary's port for the rest of the
// test binary's life, where a later test's server may listen and take it
// for a replica of its own.
func newClosed(t testing.TB, s *servertest.Server) *Protocol {
	p := New(s.Server)
	t.Cleanup(func() {
		s.Stop(t)
		_ = p.Close()
	})
	return p
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

func readRESPReply(br *bufio.Reader) (string, error) { return servertest.ReadRESPReply(br) }

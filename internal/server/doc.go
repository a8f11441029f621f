// Package server is MiniKV's server core: the listeners, the one
// connection loop every protocol runs on, deadlines, limits, auth, the
// per-connection counters, TLS and shutdown. It knows no wire protocol and
// no command. Each listener is served with a Protocol, whose per-connection
// Handler parses requests and runs them against the store; the protocols
// are packages of their own that import this one:
//
//	internal/server/memcache   memcached's text protocol, classic and meta commands
//	internal/server/redis      Redis's RESP2/RESP3 commands
//
// cmd/minikv wires them together:
//
//	srv := server.New(cfg, st)
//	go srv.Serve(mcListener, memcache.New(srv))
//	go srv.Serve(respListener, redis.New(srv))
//
// A connection's path through the core (conn.go):
//
//	client ──TCP (or TLS)──▶ Serve: the accept loop, one per listener
//	                         │  over Config.MaxConns: Protocol.MaxConnsReply, close
//	                         │  EMFILE and friends: back off, keep serving
//	                         ▼
//	                         Conn.serve: one goroutine per connection
//	                         │  TLS handshake within CommandTimeout; a panic
//	                         │  closes this connection only; h := Protocol.NewHandler
//	                         ▼
//	                    ┌──▶ Conn.loop
//	                    │    │  read buffer drained: flush the replies (h.Flush),
//	                    │    │    wait for the next byte (h.Wait: idle deadline,
//	                    │    │    then the command deadline), store.Prefetch(h.Keys)
//	                    │    │  every ReqsPerEvent requests: flush
//	                    │    ▼
//	                    └─── h.Serve: one request, read, run and its reply
//	                         │  buffered (the protocol package: codec → dispatch
//	                         │  → command → store → reply writer)
//	                         ▼
//	                         Conn.Write: store.Sync (durable mode: no reply
//	                         leaves before its writes are durable), write
//	                         deadline, socket
//
// Every reply of every protocol passes through Conn.Write, so no protocol
// code knows about durability, and every request byte through Conn.Read,
// so the byte counters and deadlines hold on every port.
//
// Counters are per connection (Conn.Count, one atomic add with no sharing
// between cores); Server.Stats sums the live connections and the totals of
// the closed ones, and feeds memcached's "stats", Redis's INFO and the
// admin port's /metrics alike.
package server

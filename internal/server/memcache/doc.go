// Package memcache serves memcached's text protocol, classic and meta
// commands, on the server core (internal/server) over the store. The codec
// (bytes to Request, replies to bytes) is internal/protocol/memcache,
// imported under its own name, memcache; this package holds the commands.
//
//	srv.Serve(ln, memcache.New(srv))
//
// A request's path through it:
//
//	bytes ─▶ server.Conn.Read (counts bytes, under the core's deadlines)
//	         ▼
//	         memcache.Reader.Read ──▶ memcache.Request          internal/protocol/memcache
//	         ▼
//	         conn.Serve (memcache.go)
//	         │  not authenticated: preAuthMemcache (auth.go)
//	         │  parse error: its reply; too long a line or a binary/HTTP
//	         │  request: close; quit: close
//	         ▼
//	         conn.dispatch (memcache.go): one function per command
//	         │
//	         ├─ get gets mget gat gats set add replace append prepend cas
//	         │  delete incr decr touch flush_all version verbosity   memcache.go
//	         ├─ mg ms md ma me (mn answered in dispatch)            meta.go
//	         ├─ stats [settings|items|slabs|conns|detail|reset]     stats.go
//	         └─ auth <token> (and the -Y "set" handshake)           auth.go
//	         ▼
//	         store.Store: Get, Store, Incr, Touch, Meta* ...  one shard lock per key
//	         ▼
//	         memcache.Writer: replies buffered per connection
//	         ▼  flushed by the core's loop when the read buffer is drained
//	         server.Conn.Write: in durable mode waits for store.Sync, then the socket
//
// Store errors meet the wire in one place, storeErrorLine. Counters are
// memcached's (cmd_get, get_hits, ...), bumped on the core's Conn so that
// "stats", INFO and /metrics read the same numbers.
package memcache

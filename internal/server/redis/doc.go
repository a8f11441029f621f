// Package redis serves Redis's protocol, RESP2 and RESP3, on the server
// core (internal/server) over the same store, keys and deadlines as the
// memcached port. The codec (bytes to argv, typed replies to bytes) is
// internal/protocol/resp; this package holds the command table and the
// commands.
//
//	srv.Serve(ln, redis.New(srv))
//
// A request's path through it:
//
//	bytes ─▶ flushingReader: flushes the replies so far before it waits
//	         │  for more bytes, then server.Conn.Read (counts bytes, deadlines)
//	         ▼
//	         resp.Reader.Read ──▶ argv [][]byte                 internal/protocol/resp
//	         │  multibulk or inline; a bulk over --max-item-size is read and
//	         │  dropped; a protocol error: "-ERR Protocol error: ...", close
//	         ▼
//	         conn.Serve → conn.dispatch (redis.go)
//	         │  lookup in the command table (table.go): unknown command,
//	         │  arity, NOAUTH, too-large argument answered here; in cluster
//	         │  mode (--cluster-config) keys of another node's slot get
//	         │  -MOVED and keys of several slots -CROSSSLOT (cluster.go)
//	         ▼
//	         call: the keys rewritten into the selected database's
//	         │  store keys (db.go), then the command's function, named in
//	         │  its table entry:
//	         │
//	         ├─ GET SET SETNX SETEX PSETEX GETSET GETDEL GETEX MGET
//	         │  MSET MSETNX                                       strings.go
//	         ├─ APPEND STRLEN GETRANGE SUBSTR SETRANGE INCR DECR
//	         │  INCRBY DECRBY INCRBYFLOAT (float.go: its arithmetic)   update.go
//	         ├─ DEL UNLINK EXISTS TYPE EXPIRE PEXPIRE EXPIREAT PEXPIREAT
//	         │  TTL PTTL EXPIRETIME PEXPIRETIME PERSIST KEYS SCAN
//	         │  RANDOMKEY DBSIZE FLUSHDB FLUSHALL BGREWRITEAOF       keys.go
//	         ├─ SAVE BGSAVE LASTSAVE, save points (internal/rdb)      persist.go
//	         ├─ PING ECHO HELLO AUTH QUIT SELECT CLIENT TIME         connection.go
//	         ├─ MOVE SWAPDB, FLUSHDB's walk                        db.go
//	         ├─ INFO CONFIG                                         info.go
//	         ├─ CLUSTER READONLY READWRITE ASKING                   cluster.go
//	         ├─ EVAL EVALSHA EVAL_RO EVALSHA_RO SCRIPT              script.go
//	         ├─ FUNCTION FCALL FCALL_RO (run as scripts are)        function.go
//	         └─ COMMAND [COUNT|LIST|INFO|DOCS]                      table.go
//	         ▼
//	         store.Store: Get, Store, Update (read-modify-write under the
//	         key's shard lock), Delete, Keys, ScanKeys ...
//	         ▼
//	         resp.Writer: RESP2, or RESP3 after HELLO 3; replies buffered
//	         ▼  flushed by the core's loop when the read buffer is drained
//	         server.Conn.Write: in durable mode waits for store.Sync, then the socket
//
// glob.go compiles the patterns of KEYS, SCAN MATCH and CONFIG GET. Store
// errors meet the wire in one place, conn.storeError. A batch of
// pipelined commands reads the clock once (conn.nowMilli), so deadlines set
// and read in one batch agree to the millisecond, as in Redis.
package redis

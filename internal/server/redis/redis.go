package redis

import (
	"errors"
	"log/slog"
	"math"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/minikv/minikv/internal/protocol/resp"
	"github.com/minikv/minikv/internal/script"
	"github.com/minikv/minikv/internal/script/lib"
	"github.com/minikv/minikv/internal/server"
	"github.com/minikv/minikv/internal/store"
)

// Version is the Redis version MiniKV reports (HELLO, INFO). Clients
// and their test suites gate features on it, so it names the Redis
// release whose command semantics and replies the RESP port follows, and
// no later one: 7.0.15, the release cmddata.go is generated from. Every
// command of that release is served except the ones versionGaps lists
// (TestVersionPromise); 7.2's additions wait until they all are.
const Version = "7.2.4"

// Error replies shared by many commands, in Redis's exact words.
const (
	errSyntax     = "ERR syntax error"
	errNotInt     = "ERR value is not an integer or out of range"
	errNotFloat   = "ERR value is not a valid float"
	errOverflow   = "ERR increment or decrement would overflow"
	errOOM        = "OOM command not allowed when used memory > 'maxmemory'."
	errMisconf    = "MISCONF Errors writing to the AOF file: " // + the system error, as Redis's strerror
	errWrongType  = "WRONGTYPE Operation against a key holding the wrong kind of value"
	errTooLarge   = "ERR string exceeds maximum allowed size (proto-max-bulk-len)"
	errNoPassword = "ERR AUTH <password> called without any password configured for the default user. Are you sure your configuration is correct?"
	errWrongPass  = "WRONGPASS invalid username-password pair or user is disabled."
)

// Protocol is the Redis protocol, RESP2 and RESP3, over the server's
// store. It holds what the RESP port keeps server-wide.
type Protocol struct {
	srv *server.Server
	st  *store.Store
	cfg server.Config // the server's, read once
	log *slog.Logger
	// bgsaving is set while a BGSAVE runs; persist is the rest of the
	// RDB state (persist.go).
	bgsaving atomic.Bool
	persist  persistence

	// protoMaxBulk is Redis's proto-max-bulk-len: the longest bulk string
	// a request may carry and the longest string a command may build
	// (maxString). CONFIG SET changes it; each connection's reader
	// follows it before its next request (syncBulkLimit).
	protoMaxBulk atomic.Int64

	// cluster is the slot map in cluster mode (NewCluster), else nil.
	cluster *clusterState

	pubsub   hub      // channels and patterns (pubsub.go)
	tracking tracking // client-side caching (tracking.go)

	blocked *blockedSet // clients blocked in BLPOP and the like (blocking.go)

	ops opsState // commandstats, errorstats, SLOWLOG, LATENCY, MONITOR (ops.go)

	configMu   sync.Mutex     // serialises CONFIG SET and REWRITE (config.go)
	accepted   acceptedValues // the values of the parameters MiniKV keeps without using (config_accepted.go)
	configFile string         // what CONFIG REWRITE rewrites (SetConfigFile); "": none

	scripts       *script.Engine    // the script cache and Lua states (script.go)
	functions     *script.Functions // the function libraries (function.go)
	busyThreshold atomic.Int64      // busy-reply-threshold, ms

	opsMu   sync.Mutex // protects the instantaneous_ops_per_sec sample
	opsAt   time.Time  // when the last sample was taken
	opsN    uint64     // total_commands_processed at opsAt
	opsRate uint64     // the rate computed at opsAt

	shutdown shutdownHook  // SHUTDOWN's way to stop the process (shutdown.go)
	repl     primary       // replication as a primary (replication.go)
	follow   follower      // and as a replica (replica.go)
	quit     chan struct{} // closed by Close: background goroutines end
	fo       failover      // a coordinated failover (FAILOVER, failover.go)
}

// scriptLibraries registers the libraries every Lua state has: Redis's
// cjson, cmsgpack, bit and struct. The package's tests add a wall clock to
// them (script_test.go): TIME stands still in a script, as in Redis 7.2,
// and a test script that must run for a while has no other clock.
var scriptLibraries = lib.Open

// New returns the Redis protocol for srv's listeners.
func New(srv *server.Server) *Protocol {
	p := &Protocol{srv: srv, st: srv.Store(), cfg: srv.Config(), log: srv.Logger(), opsAt: srv.Started(), blocked: newBlockedSet()}
	p.protoMaxBulk.Store(resp.MaxBulkLen)
	// cjson, cmsgpack, bit and struct in every Lua state; Run.Started
	// in ops clock ticks (awaitScript).
	p.scripts = script.New(script.Config{Now: p.ops.now, Open: scriptLibraries})
	p.functions = script.NewFunctions(p.scripts)
	p.loadFunctions() // durable mode: the libraries kept by the store
	p.busyThreshold.Store(5000)
	p.repl.init()
	p.follow.init()
	p.quit = make(chan struct{})
	p.ops.init()
	p.initPersistence()
	srv.SetKeyEventSink(p.publishKeyEvent)
	p.tracking.init()
	srv.SetTrackingSink(p.invalidate)                   // tracking.go
	srv.SetRemovalSink(p.removed)                       // blocking.go
	srv.ACL().SetChannelsHook(p.killRevokedSubscribers) // acl.go
	return p
}

// MaxConnsReply is Redis's answer to a connection over maxclients.
func (p *Protocol) MaxConnsReply() string { return "-ERR max number of clients reached\r\n" }

// NewHandler returns the RESP state of a new connection.
func (p *Protocol) NewHandler(c *server.Conn) server.Handler {
	rc := &conn{Conn: c, p: p, st: p.st}
	rc.w = resp.NewWriter(c, server.WriteBufSize)
	rc.stats = p.ops.stats.register()
	rc.w.SetErrorHook(rc.countError)
	rc.r = resp.NewReader(flushingReader{rc}, server.ReadBufSize, 0)
	rc.r.SetMaxBulkLen(p.protoMaxBulk.Load(), rc.keepBulk())
	rc.r.SetUnauthenticated(!c.Authed())
	return rc
}

// conn is the RESP state of one connection: its codec, protocol
// version and client name. It embeds the core's Conn for its counters and
// auth state.
type conn struct {
	*server.Conn
	holdPushes bool // a command runs: a subscriber made now holds its messages (subscriber.hold)
	p          *Protocol
	st         *store.Store
	r          *resp.Reader
	w          *resp.Writer
	name       string
	scratch    []byte       // values built by read-modify-write commands
	quit       bool         // close after this reply (QUIT, cross-protocol attack)
	multi      multiState   // MULTI ... EXEC (multi.go)
	watched    []watchedKey // WATCH
	sub        *subscriber  // pub/sub (pubsub.go); nil until the first (P)SUBSCRIBE
	nowMs      int64        // the batch's clock in Unix ms (nowMilli); 0: not read yet
	awaited    []byte       // the channel PUBLISH last waited for (awaitEarlier), valid in this batch if awaitOK
	awaitOK    bool
	// awaitedShard: awaited is a shard channel (SPUBLISH)
	awaitedShard bool
	user         string           // the user AUTH or HELLO named; "": default
	noEvict      bool             // CLIENT NO-EVICT on
	noTouch      bool             // CLIENT NO-TOUCH on (Redis 7.2)
	geoRes       *geoResults      // GEOSEARCH's scratch, reused (geo.go)
	num          [64]byte         // scratch for formatting a number
	readOnly     bool             // READONLY on: a cluster replica serves reads of its primary's slots (cluster.go)
	trk          *tracker         // CLIENT TRACKING on (tracking.go); nil: off
	trkState     trackState       // tracking.go
	reply        uint8            // CLIENT REPLY mode (replyOn, ...)
	muted        bool             // the writer drops what it is given (CLIENT REPLY)
	pub          clientState      // what CLIENT LIST shows to other connections (client.go)
	bres         blockResult      // what a blocking command popped at once (blocking.go)
	stash        [][]byte         // a request an event loop left for the connection's goroutine (loop.go)
	loan         *server.LoopLoan // the event loop lent to the script running (script.go); nil: none

	db       int        // the selected database (SELECT; db.go)
	keysArgv [16][]byte // Keys: a request's arguments for its command's keysOf
	keysBuf  [8][]byte  // Keys: what keysOf returns

	// Per-command bookkeeping (cmdstats.go).
	stats    *connStats   // this connection's counters
	cur      *respCommand // the command dispatch resolved, for its rejected_calls
	t0       int64        // when the next command starts (an ops.now reading); 0: read the clock
	errs     uint64       // error replies written
	prevErrs uint64       // errs when the running command started, or its last nested one ended
	waited   int64        // how long the running command was blocked (BLPOP, ...), in ops.now ticks: not its own time
	running  *respCommand // the command call runs
	argv     [][]byte     // its arguments; a copy once it waited (beforeWait)
	fed      bool         // MONITOR has shown it (when it began to wait)
	monitor  bool         // MONITOR on (monitor.go)

	script *scriptHost // the script client of EVAL (script.go); nil until the first script

	// Replication (replication.go): what a replica said of itself with
	// REPLCONF, and its link once it asked for the stream.
	replPort int
	replIP   string
	replCapa uint8
	link     *replicaLink
	master   bool // the link to this replica's primary (replica.go): its writes are the primary's

	mcFlags uint32 // on the link: memcached flags for the next SET (flags.go)
}

// nowMilli is the clock of the batch being served, in Unix milliseconds,
// read at the first command of the batch that needs it. Redis keeps
// deadlines in milliseconds, so "SET k v PX 100000" then "PTTL k" gives
// exactly 100000 when both run in the same millisecond; with one reading
// per pipelined batch, a SET and a TTL read in one batch agree exactly
// however long the batch takes to run (a loaded machine, -race), as they
// would under Redis 7.2's command time snapshot. The connection forgets
// the reading whenever it flushes or waits, so it is never older than one
// batch.
func (rc *conn) nowMilli() int64 {
	if rc.nowMs == 0 {
		rc.nowMs = time.Now().UnixMilli()
	}
	return rc.nowMs
}

// flushingReader is what the RESP reader reads from. Before it asks the
// socket for more bytes it flushes the replies written so far: when a
// request arrives in pieces (a pipeline cut by the read buffer, or a
// client that writes a command in two calls), the replies to the complete
// requests before it must not wait for the rest of it. With the flush on a
// drained buffer in the loop, a pipelined batch still gets one write.
type flushingReader struct{ rc *conn }

func (f flushingReader) Read(p []byte) (int, error) {
	f.rc.newBatch() // the bytes to come may arrive much later
	if f.rc.w.Buffered() > 0 {
		if err := f.rc.w.Flush(); err != nil {
			return 0, err
		}
	}
	return f.rc.Conn.Read(p)
}

// Buffered reports the unparsed request bytes and the unflushed replies.
func (rc *conn) Buffered() (requests, replies int) {
	requests = rc.r.Buffered()
	if rc.stash != nil {
		requests++ // the request kept when leaving the event loop (loop.go)
	}
	return requests, rc.w.Buffered()
}

// Wait blocks until the next request's first byte has arrived. A new
// batch starts: the clock is read again.
func (rc *conn) Wait() (byte, error) {
	rc.newBatch()
	return rc.r.Wait()
}

// newBatch forgets what a batch of requests read once for all of its
// commands: the clock (nowMilli), the command's start (cmdstats.go) and
// the channel PUBLISH waited for (awaitEarlier).
func (rc *conn) newBatch() { rc.nowMs, rc.t0, rc.awaitOK = 0, 0, false }

// Flush writes the buffered replies and ends the batch: the clock is read
// again.
func (rc *conn) Flush() error {
	rc.newBatch()
	return rc.w.Flush()
}

// Serve reads one request and answers it. A protocol error is answered
// and closes the connection, as in Redis.
func (rc *conn) Serve() (server.Result, error) {
	if rc.stash != nil {
		return rc.resume()
	}
	rc.syncBulkLimit()
	argv, err := rc.r.Read()
	if err != nil {
		return rc.protocolError(err)
	}
	if len(argv) == 0 {
		return server.Skipped, nil // empty inline line, "*0" or "*-1": Redis skips them
	}
	switch {
	case rc.reply != replyOn:
		rc.dispatchQuiet(argv) // CLIENT REPLY OFF or SKIP
	case len(argv[0]) >= 4 && argv[0][0]|0x20 == 'e' && argv[0][1]|0x20 == 'v' && rc.batchScripts(rc.lookup(argv[0])):
		if err := rc.dispatchScripts(argv); err != nil { // script.go
			return rc.protocolError(err)
		}
	default:
		rc.dispatch(argv)
	}
	if rc.quit {
		return server.Closing, rc.w.Flush()
	}
	if rc.stash != nil {
		return server.Detach, nil // loop.go
	}
	return server.Served, nil
}

// protocolError ends the connection after a request that could not be
// read, answering Redis's protocol error first if it was one.
func (rc *conn) protocolError(err error) (server.Result, error) {
	var pe resp.ProtocolError
	if errors.As(err, &pe) {
		rc.w.Error(pe.Reply())
		_ = rc.w.Flush()
	}
	return server.Closing, err
}

// syncBulkLimit gives the reader the current proto-max-bulk-len: a
// longer bulk is Redis's "invalid bulk length", which closes. The reader
// keeps bulks up to the largest item the store can hold; a longer one
// within proto-max-bulk-len (only when it is set above 4 GiB) is read
// and dropped, and its command refused with errTooLarge.
func (rc *conn) syncBulkLimit() {
	if n := rc.p.protoMaxBulk.Load(); n != rc.r.MaxBulkLen() {
		rc.r.SetMaxBulkLen(n, rc.keepBulk())
	}
}

// keepBulk is the longest bulk the reader keeps: the largest item the
// store can hold.
func (rc *conn) keepBulk() int {
	return int(min(int64(rc.st.MaxValueLen(0))+store.ItemOverhead, math.MaxInt))
}

// maxString is the longest string value a command may store under a key
// of keyLen bytes: proto-max-bulk-len, as Redis's checkStringLength, or
// less when the store's item size is smaller.
func (rc *conn) maxString(keyLen int) int64 {
	return min(rc.p.protoMaxBulk.Load(), int64(rc.st.MaxValueLen(keyLen)))
}

// dispatch looks the command up, checks its arity and runs it.
func (rc *conn) dispatch(argv [][]byte) {
	name := argv[0]
	cmd := rc.lookup(name)
	rc.cur = cmd // a refusal from here counts for it (rejectedCall)
	if cmd == nil {
		if isAttack(name) {
			// "POST" or "Host:": an HTTP request sent to the Redis port
			// (the cross-protocol attack Redis guards against). Close
			// without a reply, as Redis does.
			rc.p.log.Warn("possible security attack: HTTP request on the RESP port; connection closed",
				"conn_id", rc.ID(), "remote", rc.RemoteAddr().String())
			rc.quit = true
			return
		}
		rc.reject(unknownCommand(argv))
		return
	}
	if !cmd.arityOK(len(argv)) {
		rc.reject("ERR wrong number of arguments for '" + cmd.name + "' command")
		return
	}
	if len(cmd.subs) > 0 && (len(argv) > 1 || cmd.run == nil) {
		sc := cmd.subcommand(argv[1])
		rc.cur = sc
		if sc == nil {
			rc.reject("ERR unknown subcommand '" + string(cString(argv[1], 128)) + "'. Try " +
				strings.ToUpper(cmd.name) + " HELP.")
			return
		}
		if !sc.arityOK(len(argv)) {
			rc.reject("ERR wrong number of arguments for '" + sc.name + "' command")
			return
		}
		cmd = sc
	}
	// As in Redis, unknown commands and arity are reported before auth.
	if !rc.Authed() && !cmd.noAuth {
		rc.reject("NOAUTH Authentication required.")
		return
	}
	// ACL: a user without every command, key and channel has the call
	// checked (acl.go); the default user of a server without ACL rules
	// costs this one test.
	if r := rc.ACLUser().Rules(); !r.Unlimited && !rc.master && !rc.aclPermit(r, cmd, argv) {
		return
	}
	if r := rc.p.scripts.Running(); r != nil && !rc.awaitScript(r, cmd) {
		return // BUSY (script.go)
	}
	if rc.r.TooLarge() {
		// A bulk over the store's item size was read and dropped (the
		// reader keeps no more than that): no command could store it,
		// so it is refused whole, and the connection stays in step.
		rc.Count(server.StatStoreTooLarge)
		rc.reject(errTooLarge)
		return
	}
	// Cluster mode: keys this node does not own are redirected, after
	// the checks above, as in Redis's processCommand. Off, it costs one
	// nil test.
	if rc.p.cluster != nil && (cmd.firstKey > 0 || cmd.keysOf != nil) && !rc.routed(cmd, argv) {
		rc.rejected()
		return
	}
	if rc.subscribed() && rc.refusedWhileSubscribed(cmd) {
		return // RESP2 subscribed mode (pubsub.go)
	}
	if rc.monitor && cmd.stat.keyspace {
		rc.reject("ERR Replica can't interact with the keyspace") // Redis flags a monitor as a replica
		return
	}
	if cmd.write && !rc.master {
		if why := rc.p.srv.WriteRefusal(); why != "" {
			rc.reject(why) // a replica, too few replicas (replica.go)
			return
		}
	}
	if rc.p.follow.staleRefused.Load() && !cmd.stale && rc.p.staleRefused() {
		rc.reject(errMasterDown) // replica-serve-stale-data no (replica.go)
		return
	}
	if cmd.denyOOM && !rc.master && rc.st.Full() {
		// Redis's processCommand: a command that may grow memory is
		// refused, not run halfway, while the budget is spent and
		// nothing may be evicted (-M).
		rc.Count(server.StatStoreNoMemory)
		rc.reject(errOOM)
		return
	}
	if (cmd.write || cmd.name == "exec" && rc.multi.active && rc.queueWrites()) && rc.st.WriteErr() != nil {
		// Durable mode, the disk failed: a write is refused before it
		// runs, as Redis refuses one after an AOF write error
		// (docs/durability.md, "When the disk fails"); an EXEC holding
		// one is aborted whole.
		rc.refuseWrite()
		return
	}
	if rc.InLoop() && (cmd.detach && !nonBlockingRead(cmd, argv) || bigRandReply(cmd, argv) || rc.p.srv.Paused() || rc.multi.active && cmd.name == "exec" && rc.queueNeedsGoroutine()) {
		rc.stash = argv // run by the connection's own goroutine (loop.go)
		return
	}
	if rc.p.srv.Paused() {
		if !rc.waitPause(cmd) {
			return // killed or shutting down while paused (CLIENT PAUSE)
		}
		// A FAILOVER's pause ends with this server a replica: a write it
		// held is refused now, as Redis's processCommand refuses it when
		// the paused client runs again (failover.go).
		if (cmd.write || cmd.name == "exec" && rc.multi.active && rc.queueWrites()) && !rc.master {
			if why := rc.p.srv.WriteRefusal(); why != "" {
				rc.reject(why)
				return
			}
		}
	}
	if rc.multi.active && cmd.noMulti {
		rc.reject("ERR Command not allowed inside a transaction") // Redis's no_multi: SAVE, SHUTDOWN, PSYNC ...
		return
	}
	if rc.multi.active && !runsInMulti(cmd) {
		rc.enqueue(argv)
		rc.publish() // CLIENT LIST's multi=
		return
	}
	if cmd.script && rc.InLoop() && rc.loan == nil {
		// A script runs on the event loop's goroutine, which a stand-in
		// replaces if it runs long (lendScriptLoop, script.go).
		if !rc.lendScriptLoop() {
			rc.stash = argv // the loop has a stand-in: this one detaches (loop.go)
			return
		}
		defer rc.returnScriptLoop()
	}
	// Messages to this connection that its command causes (PUBLISH to
	// itself, keyspace events, in EXEC or a script too) follow the
	// command's reply, as in Redis 7.2: the subscriber holds them while
	// the command runs, unless it may block (then they flow meanwhile,
	// as to a blocked Redis client).
	hold := !cmd.blocking
	if hold {
		rc.holdPushes = true
		if rc.sub != nil {
			rc.sub.hold(true)
		}
	} else if rc.sub != nil && rc.p.srv.KeyEventsOn(^server.EventClass(0)) {
		_ = rc.w.Flush() // keyspace events it causes follow the replies before it
	}
	rc.call(cmd, argv) // cmdstats.go
	if hold {
		rc.holdPushes = false
		if rc.sub != nil {
			_ = rc.w.Flush() // the reply, then what was held
			rc.sub.hold(false)
		}
	}
	// CLIENT LIST's cmd (SetCommand) shows the other connections a
	// command once it has run, or was refused (rejected) or queued
	// (publish), or as it starts to wait (waitPause, beforeWait), never
	// while it is under way: Redis runs commands one at a time, and its
	// clients rely on that (its pubsub.tcl waits for cmd=unsubscribe in
	// CLIENT LIST, then expects PUBLISH to reach nobody). The connection's
	// own line shows the command running (clientInfo.line).
	rc.SetCommand(&cmd.name)
	if cmd.publishes {
		rc.publish()
	}
	if cmd.write && rc.p.blocked.n.Load() != 0 {
		// Some client is blocked: serve it if this command gave its key
		// elements (blocking.go). Nobody blocked: one load and no more.
		rc.p.wakeKeysOf(cmd, argv, rc.db)
	}
}

// lookup finds a command by its name in any case, or returns nil.
func (rc *conn) lookup(name []byte) *respCommand { return lookupCommand(name) }

// Keys appends the keys of the complete requests that just arrived, at
// the positions the command table gives, for the store to prefetch.
// Arguments past the first 16 of a request are not looked at.
func (rc *conn) Keys(keys [][]byte) [][]byte {
	if rc.r.ReadyIsAll() || rc.db != 0 {
		// One request (P=1): nothing to prefetch ahead of it. Another
		// database than 0: the store's keys are not the arguments
		// (db.go), and prefetching the arguments would miss.
		return keys
	}
	keys, _ = rc.keysIn(rc.r.Pending(), keys)
	return keys
}

// keysIn appends to keys (up to its capacity) the keys of the complete
// requests at the start of buf, and returns them with the number of
// requests it looked at.
func (rc *conn) keysIn(buf []byte, keys [][]byte) ([][]byte, int) {
	var argv [16][]byte
	reqs := 0
	for len(keys) < cap(keys) {
		n, rest, ok := resp.Next(buf, argv[:])
		if !ok {
			break
		}
		buf = rest
		reqs++
		cmd := rc.lookup(argv[0])
		if cmd == nil || cmd.firstKey <= 0 && cmd.keysOf == nil || !cmd.arityOK(n) {
			continue
		}
		if cmd.keysOf != nil {
			// A copy in the connection, so that argv (which keysOf, a
			// func value, might keep) stays on the stack for every other
			// command, and EVALSHA's keys cost no allocation.
			call := &rc.keysArgv
			m := copy(call[:], argv[:min(n, len(argv))])
			ks, _ := cmd.keysOf(call[:m], rc.keysBuf[:0])
			for _, k := range ks {
				if len(keys) < cap(keys) {
					keys = append(keys, k)
				}
			}
			clear(call[:m])
			continue
		}
		last := cmd.lastKey
		if last < 0 {
			last += n
		}
		for i := cmd.firstKey; i <= last && i < min(n, len(argv)) && len(keys) < cap(keys); i += max(cmd.step, 1) {
			keys = append(keys, argv[i])
		}
	}
	return keys, reqs
}

func isAttack(name []byte) bool {
	s := string(name)
	return equalFold(s, "post") || equalFold(s, "host:")
}

// equalFold is an ASCII-only strings.EqualFold that does not allocate.
func equalFold(s, lower string) bool {
	if len(s) != len(lower) {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != lower[i] {
			return false
		}
	}
	return true
}

// is reports whether arg is the option opt (lower case), ignoring case.
func is(arg []byte, opt string) bool { return equalFold(string(arg), opt) }

// unknownCommand is Redis's error for an unknown command (server.c
// processCommand): the name and the first arguments, quoted, each
// followed by a space, the list cut once it passes 128 bytes. The C
// string functions stop at a NUL byte, and so does this.
func unknownCommand(argv [][]byte) string {
	b := []byte("ERR unknown command '")
	b = append(b, cString(argv[0], 128)...)
	b = append(b, "', with args beginning with: "...)
	n := 0
	for _, a := range argv[1:] {
		if n >= 128 {
			break
		}
		a = cString(a, 128-n)
		b = append(b, '\'')
		b = append(b, a...)
		b = append(b, "' "...)
		n += len(a) + 3
	}
	return string(b)
}

// cString is b as C's "%.*s" prints it: up to the first NUL, at most max
// bytes.
func cString(b []byte, max int) []byte {
	for i, c := range b {
		if c == 0 {
			b = b[:i]
			break
		}
	}
	if len(b) > max {
		b = b[:max]
	}
	return b
}

// respCommand is one entry of the command table: its name, arity (as
// Redis: n exact, -n at least n), handler, and what COMMAND and COMMAND
// DOCS report about it.
type respCommand struct {
	name       string
	arity      int
	flags      []string
	firstKey   int
	lastKey    int
	step       int
	group      string
	since      string
	summary    string
	complexity string
	args       []docArg
	noAuth     bool // allowed before the connection has authenticated
	denyOOM    bool // "denyoom" in flags: refused while the store is full (-OOM)
	blocking   bool // "blocking" in flags: may wait (messages to its connection are not held meanwhile)
	randPicks  bool // SRANDMEMBER, HRANDFIELD or ZRANDMEMBER: a big negative count leaves the loop (randreply.go)
	publishes  bool // changes what CLIENT LIST shows: the connection publishes after it (client.go)
	write      bool // "write" in flags: may give a key a blocked client waits on elements
	run        func(rc *conn, argv [][]byte)
	// Scripting (script.go): refused in scripts; refused in read-only
	// scripts with the writes; served while a script is busy.
	noScript, mayReplicate, allowBusy bool
	stale                             bool // "stale" in flags: served by a replica whose link is down (replica.go)
	script                            bool // runs a script: EVAL, EVALSHA and their _RO forms (script.go)
	noMulti                           bool // "no_multi" in flags: refused inside MULTI
	// keysOf, when set, finds the keys of a command whose key positions
	// depend on its arguments (numkeys: ZUNIONSTORE, LMPOP, ...), and
	// reports false when the arguments do not say (a bad numkeys); the
	// others' keys are firstKey..lastKey by step. See keys.
	keysOf func(argv [][]byte, dst [][]byte) ([][]byte, bool)

	// A container command (CLIENT, CONFIG, COMMAND) lists its
	// subcommands; its run, if any, serves the call without one.
	subs      []*respCommand
	detach    bool   // needs the connection's own goroutine: it blocks or streams (loop.go)
	noSubHelp string // HELP's line for the call without a subcommand
	usage     string // a subcommand's usage in its container's HELP
	help      string // and what it does

	// meta is what Redis 7.0 declares for the command (cmdmeta.go); nil
	// for a command Redis 7.0 does not have.
	meta *cmdMeta
	stat cmdStat // its number and flags for the per-command bookkeeping (ops.go)
}

// keys appends the keys of argv (a call of c with a valid arity) to dst:
// what cluster routing, prefetching and COMMAND GETKEYS look at.
func (c *respCommand) keys(argv [][]byte, dst [][]byte) [][]byte {
	if c.keysOf != nil {
		dst, _ = c.keysOf(argv, dst)
		return dst
	}
	if c.firstKey <= 0 {
		return dst
	}
	last := c.lastKey
	if last < 0 {
		last += len(argv)
	}
	for i := c.firstKey; i <= last && i < len(argv); i += max(c.step, 1) {
		dst = append(dst, argv[i])
	}
	return dst
}

// numKeys is a keysOf for commands whose argument at numAt says how many
// keys follow it, after the keys at fixed (destinations, as ZUNIONSTORE's
// at 1). A numkeys that is not a number in range gives only the fixed
// keys and false; the command itself reports the error.
func numKeys(numAt int, fixed ...int) func(argv [][]byte, dst [][]byte) ([][]byte, bool) {
	return func(argv [][]byte, dst [][]byte) ([][]byte, bool) {
		for _, i := range fixed {
			if i < len(argv) {
				dst = append(dst, argv[i])
			}
		}
		if numAt >= len(argv) {
			return dst, false
		}
		n, ok := resp.ParseInt(argv[numAt])
		if !ok || n <= 0 || n > int64(len(argv)-numAt-1) {
			return dst, false
		}
		return append(dst, argv[numAt+1:numAt+1+int(n)]...), true
	}
}

func (c *respCommand) arityOK(n int) bool {
	if c.arity >= 0 {
		return n == c.arity
	}
	return n >= -c.arity
}

// storeErrorIf answers err with storeError, and writes nothing for nil:
// for the commands that reply inside a store call.
func (rc *conn) storeErrorIf(err error) {
	if err != nil {
		rc.storeError(err)
	}
}

// storeError writes the reply for a store error: the one place store
// sentinels meet the RESP wire. It also counts the failure.
func (rc *conn) storeError(err error) {
	switch {
	case errors.Is(err, store.ErrNoMemory):
		rc.Count(server.StatStoreNoMemory)
		rc.w.Error(errOOM)
	case errors.Is(err, store.ErrTooLarge):
		rc.Count(server.StatStoreTooLarge)
		rc.w.Error(errTooLarge)
	case errors.Is(err, store.ErrWrongType):
		rc.w.Error(errWrongType)
	default:
		rc.w.Error("ERR " + err.Error())
	}
}

// parseInt parses an integer argument with Redis's rules, writing
// Redis's error when it is not one.
func (rc *conn) parseInt(arg []byte) (int64, bool) {
	n, ok := resp.ParseInt(arg)
	if !ok {
		rc.w.Error(errNotInt)
	}
	return n, ok
}

// itoa formats n into the connection's scratch space.
func (rc *conn) itoa(n int64) []byte {
	rc.scratch = strconv.AppendInt(rc.scratch[:0], n, 10)
	return rc.scratch
}

// numBuf is the connection's scratch space, empty, with room for a
// number in its string form.
func (rc *conn) numBuf() []byte {
	if cap(rc.scratch) < 32 {
		rc.scratch = make([]byte, 0, 64)
	}
	return rc.scratch[:0]
}

// writeValue writes a stored string, the null reply when missing, or
// WRONGTYPE for a collection.
func (rc *conn) writeValue(it store.Item, ok bool) {
	switch {
	case !ok:
		rc.w.Null()
	case it.Kind != store.KindString:
		rc.w.Error(errWrongType)
	default:
		rc.w.Bulk(it.Value)
	}
}

// updateString is store.Update for the commands that read and change a
// string: a key holding a collection is store.ErrWrongType and fn does
// not run.
func (rc *conn) updateString(key []byte, fn func(old store.Item, found bool) store.Change) (uint64, error) {
	wrong := false
	cas, err := rc.st.Update(key, func(old store.Item, found bool) store.Change {
		if wrong = found && old.Kind != store.KindString; wrong {
			return store.Change{}
		}
		return fn(old, found)
	})
	if wrong && err == nil {
		err = store.ErrWrongType
	}
	return cas, err
}

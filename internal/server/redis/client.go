package redis

import (
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/minikv/minikv/internal/protocol/resp"
	"github.com/minikv/minikv/internal/server"
)

// CLIENT and its subcommands. CLIENT LIST shows every connection of the
// server, on either port: a RESP connection with Redis's fields, a
// memcached one with flags=m, its last memcached command as cmd and
// resp=0 (docs/redis.md). What a connection shows to others it publishes
// in clientState (atomics), after the commands that change it, so that
// listing never reads another goroutine's state.

// clientState is what CLIENT LIST shows of a RESP connection to the
// other connections. Its serving goroutine writes it (publish); any
// goroutine reads it.
type clientState struct {
	name    atomic.Pointer[string]
	user    atomic.Pointer[string]  // "default" when nil
	flags   atomic.Uint32           // clientMulti, ...
	multi   atomic.Int32            // commands queued in MULTI
	sub     atomic.Int32            // channels subscribed
	psub    atomic.Int32            // patterns subscribed
	ssub    atomic.Int32            // shard channels subscribed
	tracker atomic.Pointer[tracker] // CLIENT TRACKING's settings; nil: off (tracking.go)
	resp3   atomic.Bool
	db      atomic.Int32           // the selected database (SELECT)
	libName atomic.Pointer[string] // CLIENT SETINFO LIB-NAME
	libVer  atomic.Pointer[string] // CLIENT SETINFO LIB-VER
}

// clientState flags.
const (
	clientMulti    = 1 << iota // x: in MULTI
	clientPubsub               // P: subscribed
	clientNoEvict              // e: CLIENT NO-EVICT on
	clientMonitor              // O: MONITOR on (monitor.go)
	clientReplica              // S: a replica's link (replication.go)
	clientReadOnly             // r: READONLY on (cluster.go)
	clientMaster               // M: the link to this replica's primary (replica.go)
	clientNoTouch              // T: CLIENT NO-TOUCH on (Redis 7.2)
)

// publishingCommands are the commands after which the connection
// publishes its state (the table marks them, respCommand.publishes).
var publishingCommands = map[string]bool{
	"hello": true, "auth": true, "reset": true, "client|setname": true, "client|no-evict": true, "client|no-touch": true,
	"multi": true, "exec": true, "discard": true, "monitor": true,
	"subscribe": true, "unsubscribe": true, "psubscribe": true, "punsubscribe": true,
	"psync": true, "sync": true, "readonly": true, "readwrite": true,
}

// publish copies what CLIENT LIST shows of the connection into its
// clientState. Only the serving goroutine calls it.
//
// It also records the command for CLIENT LIST's cmd: a command whose
// reply goes out before it returns (into an Outbox: SUBSCRIBE and the
// rest) publishes first, so no client reads the reply and then sees the
// previous command listed.
func (rc *conn) publish() {
	if rc.cur != nil {
		rc.SetCommand(&rc.cur.name)
	}
	if old := rc.pub.name.Load(); old == nil && rc.name != "" || old != nil && *old != rc.name {
		name := rc.name
		rc.pub.name.Store(&name)
	}
	if old := rc.pub.user.Load(); old == nil && rc.user != "" || old != nil && *old != rc.user {
		user := rc.user
		rc.pub.user.Store(&user)
	}
	var f uint32
	if rc.multi.active {
		f |= clientMulti
	}
	rc.pub.multi.Store(int32(len(rc.multi.queue)))
	var sub, psub, ssub int
	if rc.sub != nil {
		sub, psub, ssub = len(rc.sub.channels), len(rc.sub.patterns), len(rc.sub.shards)
	}
	if sub+psub+ssub > 0 {
		f |= clientPubsub
	}
	rc.pub.sub.Store(int32(sub))
	rc.pub.psub.Store(int32(psub))
	rc.pub.ssub.Store(int32(ssub))
	if rc.noEvict {
		f |= clientNoEvict
	}
	if rc.noTouch {
		f |= clientNoTouch
	}
	if rc.monitor {
		f |= clientMonitor
	}
	if rc.link != nil {
		f |= clientReplica
	}
	if rc.readOnly {
		f |= clientReadOnly
	}
	if rc.master {
		f |= clientMaster
	}
	rc.pub.flags.Store(f)
	rc.pub.resp3.Store(rc.w.RESP3())
}

// userName is the user the connection authenticated as.
func (rc *conn) userName() string {
	if rc.user == "" {
		return "default"
	}
	return rc.user
}

// Client types, as Redis's getClientTypeByName knows them.
const (
	typeNormal = iota
	typeReplica
	typePubsub
	typeMaster
)

func clientType(name []byte) int {
	switch {
	case is(name, "normal"):
		return typeNormal
	case is(name, "slave"), is(name, "replica"):
		return typeReplica
	case is(name, "pubsub"):
		return typePubsub
	case is(name, "master"):
		return typeMaster
	}
	return -1
}

// clientInfo is one connection as CLIENT LIST and KILL see it.
type clientInfo struct {
	c           *server.Conn
	rc          *conn  // nil: a memcached connection
	addr, laddr string // read under the server's lock (an event loop may swap the socket)
}

func (ci clientInfo) typ() int {
	if ci.rc != nil && ci.rc.pub.flags.Load()&clientMaster != 0 {
		return typeMaster
	}
	if ci.rc != nil && ci.rc.pub.flags.Load()&clientReplica != 0 {
		return typeReplica
	}
	if ci.rc != nil && ci.rc.pub.flags.Load()&clientPubsub != 0 {
		return typePubsub
	}
	return typeNormal
}

func (ci clientInfo) user() string {
	if ci.rc != nil && ci.rc.pub.flags.Load()&clientMaster != 0 {
		return "(superuser)" // Redis's master client runs as no user
	}
	if ci.rc != nil {
		if u := ci.rc.pub.user.Load(); u != nil && *u != "" {
			return *u
		}
	}
	return "default"
}

// clients lists the server's connections in the order they were
// accepted, without those killed already (their goroutines may not have
// ended yet; Redis frees a killed client at once).
func (p *Protocol) clients() []clientInfo {
	var out []clientInfo
	p.srv.EachConn(func(c *server.Conn) {
		if !c.Killed() {
			out = append(out, clientInfo{c: c, addr: c.RemoteAddr().String(), laddr: c.LocalAddr().String()})
		}
	})
	for i := range out {
		out[i].rc, _ = out[i].c.Handler().(*conn)
	}
	slices.SortFunc(out, func(a, b clientInfo) int {
		return int(min(max(int64(a.c.ID())-int64(b.c.ID()), -1), 1))
	})
	return out
}

// line writes ci's line of CLIENT LIST, without its newline. self is the
// connection asking, whose own buffers and current command it can read.
func (ci clientInfo) line(b []byte, self *conn, argv [][]byte, now time.Time) []byte {
	c := ci.c
	start := len(b)
	field := func(k, v string) {
		if len(b) > start {
			b = append(b, ' ')
		}
		b = append(b, k...)
		b = append(b, '=')
		b = append(b, v...)
	}
	num := func(k string, n int64) { field(k, strconv.FormatInt(n, 10)) }
	idle := int64(now.Sub(c.LastCommand()) / time.Second)
	flags, name, multi, sub, psub, ssub, resp3, redir := "m", "", int64(-1), int64(0), int64(0), int64(0), int64(0), int64(-1)
	if rc := ci.rc; rc != nil {
		f := rc.pub.flags.Load()
		flags = ""
		if f&clientReplica != 0 {
			flags += "S"
		}
		if f&clientMaster != 0 {
			flags += "M"
		}
		if f&clientMonitor != 0 {
			flags += "O"
		}
		if f&clientPubsub != 0 {
			flags += "P"
		}
		if f&clientMulti != 0 {
			flags += "x"
			multi = int64(rc.pub.multi.Load())
		}
		if blocked(c) || c.State() == server.StatePaused {
			flags += "b" // Redis blocks a paused client too
		}
		if tr := rc.pub.tracker.Load(); tr != nil {
			flags += "t"
			if tr.broken.Load() {
				flags += "R"
			}
			if tr.bcast {
				flags += "B"
			}
			redir = int64(tr.redirect)
		}
		if f&clientReadOnly != 0 {
			flags += "r"
		}
		if f&clientNoEvict != 0 {
			flags += "e"
		}
		if f&clientNoTouch != 0 {
			flags += "T"
		}
		if flags == "" {
			flags = "N"
		}
		if n := rc.pub.name.Load(); n != nil {
			name = *n
		}
		sub, psub, ssub = int64(rc.pub.sub.Load()), int64(rc.pub.psub.Load()), int64(rc.pub.ssub.Load())
		resp3 = 2
		if rc.pub.resp3.Load() {
			resp3 = 3
		}
	}
	// The caller's buffers are its own to read; other connections'
	// belong to their goroutines, and show as empty.
	var qbuf, argvMem, multiMem int64
	if self != nil && ci.rc == self {
		idle = 0
		qbuf = int64(self.r.Buffered())
		for _, a := range argv {
			argvMem += int64(len(a))
			qbuf += int64(len(a)) + 3 + int64(len(strconv.Itoa(len(a)))) + 2
		}
		qbuf += 1 + int64(len(strconv.Itoa(len(argv)))) + 2
		for _, q := range self.multi.queue {
			for _, a := range q {
				multiMem += int64(len(a))
			}
		}
	}
	num("id", int64(c.ID()))
	field("addr", ci.addr)
	field("laddr", ci.laddr)
	num("fd", int64(c.Fd()))
	field("name", name)
	num("age", int64(now.Sub(c.Created())/time.Second))
	num("idle", idle)
	field("flags", flags)
	db := int64(0) // a memcached connection serves database 0
	if ci.rc != nil {
		db = int64(ci.rc.pub.db.Load())
	}
	num("db", db)
	num("sub", sub)
	num("psub", psub)
	num("ssub", ssub)
	num("multi", multi)
	num("qbuf", qbuf)
	num("qbuf-free", max(server.ReadBufSize-qbuf, 0))
	num("argv-mem", argvMem)
	num("multi-mem", multiMem)
	num("rbs", server.ReadBufSize)
	num("rbp", server.ReadBufSize)
	num("obl", 0)
	num("oll", 0)
	num("omem", 0)
	num("tot-mem", server.ReadBufSize+server.WriteBufSize+argvMem+multiMem)
	field("events", "r")
	cmd := c.Command()
	if self != nil && ci.rc == self && self.cur != nil {
		cmd = self.cur.name // the caller's: this CLIENT LIST or INFO, as Redis shows it
	}
	field("cmd", cmd)
	field("user", ci.user())
	num("redir", redir)
	num("resp", resp3)
	// Redis 7.2's fields: what CLIENT SETINFO set.
	libName, libVer := "", ""
	if ci.rc != nil {
		if v := ci.rc.pub.libName.Load(); v != nil {
			libName = *v
		}
		if v := ci.rc.pub.libVer.Load(); v != nil {
			libVer = *v
		}
	}
	field("lib-name", libName)
	field("lib-ver", libVer)
	return b
}

// blocked reports whether c waits in a blocking command (blocking.go).
func blocked(c *server.Conn) bool {
	_, on := c.Blocked()
	return on
}

// cmdClientList is CLIENT LIST [TYPE type] [ID id ...], as Redis 7.0
// parses it: one TYPE, or any number of IDs (integers; each listed when
// it names a connection, in the order given).
func cmdClientList(rc *conn, argv [][]byte) {
	all := rc.p.clients()
	var pick []clientInfo
	switch {
	case len(argv) == 2:
		pick = all
	case len(argv) == 4 && is(argv[2], "type"):
		t := clientType(argv[3])
		if t < 0 {
			rc.w.Error("ERR Unknown client type '" + string(cString(argv[3], len(argv[3]))) + "'")
			return
		}
		for _, ci := range all {
			if ci.typ() == t {
				pick = append(pick, ci)
			}
		}
	case len(argv) > 3 && is(argv[2], "id"):
		for _, a := range argv[3:] {
			id, ok := resp.ParseInt(a)
			if !ok {
				rc.w.Error("ERR Invalid client ID")
				return
			}
			for _, ci := range all {
				if int64(ci.c.ID()) == id {
					pick = append(pick, ci)
				}
			}
		}
	default:
		rc.w.Error(errSyntax)
		return
	}
	now := time.Now()
	var b []byte
	for _, ci := range pick {
		b = ci.line(b, rc, argv, now)
		b = append(b, '\n')
	}
	rc.w.Verbatim("txt", b)
}

// cmdClientInfo is CLIENT INFO: the caller's line.
func cmdClientInfo(rc *conn, argv [][]byte) {
	ci := clientInfo{c: rc.Conn, rc: rc, addr: rc.RemoteAddr().String(), laddr: rc.LocalAddr().String()}
	b := ci.line(nil, rc, argv, time.Now())
	rc.w.Verbatim("txt", append(b, '\n'))
}

// cmdClientKill is CLIENT KILL addr:port (+OK or an error) and CLIENT
// KILL filter value ... (the number killed), as Redis 7.0 parses them,
// with Redis 7.4's MAXAGE filter besides.
// Another connection, of either port, is closed at once (server.Conn.Kill);
// the caller itself after its reply, as QUIT.
func cmdClientKill(rc *conn, argv [][]byte) {
	var addr, laddr, user []byte
	typ, id, maxAge, skipme := -1, int64(0), int64(0), true
	switch {
	case len(argv) == 3:
		addr, skipme = argv[2], false // the old form can kill the caller
	default:
		for i := 2; i < len(argv); i += 2 {
			if i+1 >= len(argv) {
				rc.w.Error(errSyntax)
				return
			}
			v := argv[i+1]
			switch o := argv[i]; {
			case is(o, "id"):
				n, ok := resp.ParseInt(v)
				if !ok || n < 1 {
					rc.w.Error("ERR client-id should be greater than 0")
					return
				}
				id = n
			case is(o, "maxage"): // Redis 7.4's
				n, ok := resp.ParseInt(v)
				if !ok {
					rc.w.Error("ERR maxage is not an integer or out of range")
					return
				}
				if n <= 0 {
					rc.w.Error("ERR maxage should be greater than 0")
					return
				}
				maxAge = n
			case is(o, "type"):
				if typ = clientType(v); typ < 0 {
					rc.w.Error("ERR Unknown client type '" + string(cString(v, len(v))) + "'")
					return
				}
			case is(o, "addr"):
				addr = v
			case is(o, "laddr"):
				laddr = v
			case is(o, "user"):
				if !rc.p.knownUser(v) {
					rc.w.Error("ERR No such user '" + string(cString(v, len(v))) + "'")
					return
				}
				user = v
			case is(o, "skipme"):
				switch {
				case is(v, "yes"):
					skipme = true
				case is(v, "no"):
					skipme = false
				default:
					rc.w.Error(errSyntax)
					return
				}
			default:
				rc.w.Error(errSyntax)
				return
			}
		}
	}
	killed := int64(0)
	now := time.Now()
	for _, ci := range rc.p.clients() {
		c := ci.c
		switch {
		case maxAge != 0 && int64(now.Sub(c.Created())/time.Second) <= maxAge:
			continue // MAXAGE kills the connections older than it
		case addr != nil && ci.addr != string(addr),
			laddr != nil && ci.laddr != string(laddr),
			typ >= 0 && ci.typ() != typ,
			id != 0 && int64(c.ID()) != id,
			user != nil && ci.user() != string(user),
			ci.rc == rc && skipme:
			continue
		}
		if ci.rc == rc {
			rc.quit = true // after the reply
		} else {
			c.Kill()
		}
		killed++
	}
	if len(argv) == 3 {
		if killed == 0 {
			rc.w.Error("ERR No such client")
		} else {
			rc.w.OK()
		}
		return
	}
	rc.w.Int(killed)
}

// knownUser reports whether name is a user CLIENT KILL USER may name:
// "default", or one of the -Y file's users.
func (p *Protocol) knownUser(name []byte) bool {
	return p.srv.ACL().Get(string(name)) != nil
}

// cmdClientPause is CLIENT PAUSE timeout [WRITE|ALL]: until timeout
// milliseconds from now, every command of every client waits (ALL, the
// default), or only the commands that may write (WRITE: Redis's write and
// may-replicate commands, and EXEC of a transaction holding one), on both
// ports (docs/redis.md says which memcached commands count as writes).
func cmdClientPause(rc *conn, argv [][]byte) {
	if len(argv) > 4 {
		rc.w.Error("ERR unknown subcommand or wrong number of arguments for '" + string(cString(argv[1], 128)) +
			"'. Try CLIENT HELP.")
		return
	}
	all := true
	if len(argv) == 4 {
		switch {
		case is(argv[3], "write"):
			all = false
		case is(argv[3], "all"):
		default:
			rc.w.Error("ERR CLIENT PAUSE mode must be WRITE or ALL")
			return
		}
	}
	ms, ok := resp.ParseInt(argv[2])
	if !ok {
		rc.w.Error("ERR timeout is not an integer or out of range")
		return
	}
	if ms < 0 {
		rc.w.Error("ERR timeout is negative")
		return
	}
	now := time.Now()
	end := now.Add(time.Duration(min(ms, math.MaxInt64/int64(time.Millisecond))) * time.Millisecond)
	if end.Before(now) {
		end = time.Unix(1<<40, 0) // past Go's range of durations: practically forever
	}
	rc.p.srv.Pause(end, all)
	rc.w.OK()
}

// cmdClientUnpause is CLIENT UNPAUSE.
func cmdClientUnpause(rc *conn, _ [][]byte) {
	rc.p.srv.Unpause()
	rc.w.OK()
}

// pauseCovers reports whether a pause of writes holds cmd back: Redis's
// write and may-replicate commands, and EXEC when a queued command is one.
func (rc *conn) pauseCovers(cmd *respCommand) bool {
	if cmd.name == "exec" {
		for _, q := range rc.multi.queue {
			if c := rc.lookup(q[0]); c != nil && c.pauseCovers() {
				return true
			}
		}
		return false
	}
	return cmd.pauseCovers()
}

func (c *respCommand) pauseCovers() bool {
	switch c.name {
	case "publish", "spublish", "pfcount", "eval", "evalsha", "fcall":
		return true // may_replicate in Redis
	}
	return c.write
}

// waitPause holds cmd back while a client pause covers it, and reports
// false when the connection must close instead (killed, shutting down).
func (rc *conn) waitPause(cmd *respCommand) bool {
	rc.SetCommand(&cmd.name) // listed while it waits, as Redis lists a postponed client's
	if rc.Unpaused(rc.pauseCovers(cmd)) {
		return true
	}
	rc.quit = true
	return false
}

// cmdClientNoTouch is CLIENT NO-TOUCH on|off (Redis 7.2): while on, the
// connection's commands other than TOUCH leave the access state of the
// keys they read as it was (OBJECT IDLETIME, OBJECT FREQ, the eviction
// walk's marks); the flag shows as T in CLIENT LIST.
func cmdClientNoTouch(rc *conn, argv [][]byte) { rc.setOnOff(&rc.noTouch, argv[2]) }

// cmdClientNoEvict is CLIENT NO-EVICT on|off: accepted and shown as flag
// e. (Redis's client eviction, maxmemory-clients, does not exist in
// MiniKV, whose connections' buffers are fixed.)
func cmdClientNoEvict(rc *conn, argv [][]byte) { rc.setOnOff(&rc.noEvict, argv[2]) }

// setOnOff sets *flag from an ON|OFF argument and answers OK, or answers
// Redis's syntax error and leaves it.
func (rc *conn) setOnOff(flag *bool, arg []byte) {
	switch {
	case is(arg, "on"):
		*flag = true
	case is(arg, "off"):
		*flag = false
	default:
		rc.w.Error(errSyntax)
		return
	}
	rc.w.OK()
}

// Reply modes (CLIENT REPLY).
const (
	replyOn       uint8 = iota
	replyOff            // no replies until CLIENT REPLY ON
	replySkipNext       // CLIENT REPLY SKIP ran: the next command's reply goes
	replySkip           // the reply of the command running goes
)

// cmdClientReply is CLIENT REPLY ON|OFF|SKIP. OFF and SKIP answer
// nothing, ON answers OK, as in Redis.
func cmdClientReply(rc *conn, argv [][]byte) {
	switch {
	case is(argv[2], "on"):
		rc.reply = replyOn
		rc.unmute()
		rc.SetMonitorMuted(false)
		rc.w.OK()
	case is(argv[2], "off"):
		rc.reply = replyOff
		rc.SetMonitorMuted(true) // a monitor gets no lines either, as in Redis
	case is(argv[2], "skip"):
		if rc.reply != replyOff {
			rc.reply = replySkipNext
		}
	default:
		rc.w.Error(errSyntax)
	}
}

// dispatchQuiet runs a command while the reply mode is not ON: what it
// writes is dropped when the mode says so. CLIENT REPLY SKIP leaves
// replySkipNext, which becomes replySkip as the next command starts and
// ON once that command is done, unless it changed the mode itself.
func (rc *conn) dispatchQuiet(argv [][]byte) {
	if rc.reply == replySkipNext {
		rc.reply = replySkip
	}
	skipping := rc.reply == replySkip
	if rc.reply == replyOff || skipping {
		rc.mute()
	}
	rc.dispatch(argv)
	rc.unmute()
	if skipping && rc.reply == replySkip {
		rc.reply = replyOn
	}
}

// mute sends what is buffered and points the writer at nothing.
func (rc *conn) mute() {
	if rc.muted {
		return
	}
	_ = rc.w.Flush()
	resp3 := rc.w.RESP3()
	rc.w.Reset(io.Discard)
	rc.w.SetRESP3(resp3)
	rc.muted = true
}

// unmute points the writer at the connection again.
func (rc *conn) unmute() {
	if !rc.muted {
		return
	}
	resp3 := rc.w.RESP3()
	rc.w.Reset(rc.Conn)
	rc.w.SetRESP3(resp3)
	rc.muted = false
}

// resetClient is what RESET undoes of CLIENT: reply mode, NO-EVICT.
func (rc *conn) resetClient() {
	// Redis's RESET clears CLIENT REPLY OFF and a pending SKIP, but not
	// the skip of the command running: after CLIENT REPLY SKIP, RESET's
	// own +RESET is dropped (dispatchQuiet ends that skip).
	if rc.reply != replySkip {
		rc.reply = replyOn
		rc.unmute()
	}
	rc.SetMonitorMuted(false)
	rc.noEvict = false
	rc.noTouch = false
	rc.readOnly = false // Redis's RESET clears READONLY too
	rc.user = ""
	rc.SetACLUser(nil) // the default user
}

// CLIENT's other subcommands.

func cmdClientID(rc *conn, _ [][]byte) { rc.w.Int(int64(rc.ID())) }

func cmdClientSetName(rc *conn, argv [][]byte) {
	if msg := validateClientName(argv[2]); msg != "" {
		rc.w.Error(msg)
		return
	}
	rc.name = string(argv[2])
	rc.w.OK()
}

func cmdClientGetName(rc *conn, _ [][]byte) {
	if rc.name == "" {
		rc.w.Null()
		return
	}
	rc.w.BulkString(rc.name)
}

// cmdClientSetInfo is CLIENT SETINFO LIB-NAME|LIB-VER value (Redis 7.2):
// the value, printable ASCII without spaces (or empty), is kept for
// CLIENT LIST and CLIENT INFO.
func cmdClientSetInfo(rc *conn, argv [][]byte) {
	var dst *atomic.Pointer[string]
	switch {
	case is(argv[2], "lib-name"):
		dst = &rc.pub.libName
	case is(argv[2], "lib-ver"):
		dst = &rc.pub.libVer
	default:
		rc.w.Error("ERR Unrecognized option '" + string(cString(argv[2], len(argv[2]))) + "'")
		return
	}
	for _, b := range argv[3] {
		if b < '!' || b > '~' {
			rc.w.Error("ERR " + string(cString(argv[2], len(argv[2]))) + " cannot contain spaces, newlines or special characters.")
			return
		}
	}
	v := string(argv[3])
	dst.Store(&v)
	rc.w.OK()
}

// clientHelp is CLIENT HELP's text, Redis 7.0's for the subcommands
// MiniKV has.
var clientHelp = []string{
	"CLIENT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
	"CACHING (YES|NO)",
	"    Enable/disable tracking of the keys for next command in OPTIN/OPTOUT modes.",
	"GETREDIR",
	"    Return the client ID we are redirecting to when tracking is enabled.",
	"GETNAME",
	"    Return the name of the current connection.",
	"ID",
	"    Return the ID of the current connection.",
	"INFO",
	"    Return information about the current client connection.",
	"KILL <ip:port>",
	"    Kill connection made from <ip:port>.",
	"KILL <option> <value> [<option> <value> [...]]",
	"    Kill connections. Options are:",
	"    * ADDR (<ip:port>|<unixsocket>:0)",
	"      Kill connections made from the specified address",
	"    * LADDR (<ip:port>|<unixsocket>:0)",
	"      Kill connections made to specified local address",
	"    * TYPE (NORMAL|MASTER|REPLICA|PUBSUB)",
	"      Kill connections by type.",
	"    * USER <username>",
	"      Kill connections authenticated by <username>.",
	"    * SKIPME (YES|NO)",
	"      Skip killing current connection (default: yes).",
	"LIST [options ...]",
	"    Return information about client connections. Options:",
	"    * TYPE (NORMAL|MASTER|REPLICA|PUBSUB)",
	"      Return clients of specified type.",
	"UNPAUSE",
	"    Stop the current client pause, resuming traffic.",
	"PAUSE <timeout> [WRITE|ALL]",
	"    Suspend all, or just write, clients for <timeout> milliseconds.",
	"REPLY (ON|OFF|SKIP)",
	"    Control the replies sent to the current connection.",
	"SETNAME <name>",
	"    Assign the name <name> to the current connection.",
	"SETINFO <option> <value>",
	"    Set client meta attr. Options are LIB-NAME and LIB-VER.",
	"UNBLOCK <clientid> [TIMEOUT|ERROR]",
	"    Unblock the specified blocked client.",
	"TRACKING (ON|OFF) [REDIRECT <id>] [BCAST] [PREFIX <prefix> [...]]",
	"         [OPTIN] [OPTOUT] [NOLOOP]",
	"    Control server assisted client side caching.",
	"TRACKINGINFO",
	"    Report tracking status for the current connection.",
	"NO-EVICT (ON|OFF)",
	"    Protect current client connection from eviction.",
	"NO-TOUCH (ON|OFF)",
	"    Will not touch LRU/LFU stats when this mode is on.",
	"HELP",
	"    Print this help.",
}

func cmdClientHelp(rc *conn, _ [][]byte) {
	lines := clientHelp
	if respCommands["client"].subcommand([]byte("unblock")) == nil {
		lines = slices.DeleteFunc(slices.Clone(lines), func(l string) bool {
			return strings.HasPrefix(l, "UNBLOCK") || l == "    Unblock the specified blocked client."
		})
	}
	rc.w.Array(len(lines))
	for _, l := range lines {
		rc.w.Simple(l)
	}
}

package redis

import (
	"bytes"
	"slices"
	"strings"
	"time"

	"github.com/minikv/minikv/internal/cluster"
	"github.com/minikv/minikv/internal/protocol/resp"
	"github.com/minikv/minikv/internal/script"
	"github.com/minikv/minikv/internal/server"
	"github.com/minikv/minikv/internal/store"
)

// Scripting (Redis's eval.c and script.c): EVAL, EVALSHA, their _RO
// forms and SCRIPT. The Lua side is package script; this file is the
// server side: the checks before a script runs, the script's client
// (scriptHost), which runs redis.call through the command table with
// Redis's refusals, and BUSY.
//
// A script runs as EXEC does: inside store.Exclusive, every shard held,
// so no client of either port sees it halfway, with rc.st swapped for
// the exclusive view while its commands run. Each redis.call runs the
// command's usual code (rc.call, so commandstats and SLOWLOG see it) with
// the connection's writer swapped for one that writes into a buffer: the
// raw reply is what the script receives, parsed into Lua values.
//
// While a script runs, other RESP clients wait in dispatch (before they
// touch the store) until it ends or busy-reply-threshold passes; past it
// they are answered BUSY, except the commands Redis lets through
// (allow_busy: SCRIPT KILL, AUTH, ...). In an event loop a script runs on
// the loop's goroutine, lent to it (server.LoopLoan); once it has run
// for busy-reply-threshold, a stand-in goroutine serves the loop's other
// connections, so they get BUSY and SCRIPT KILL gets through, as Redis
// serves its clients from inside a long script.

// Redis's replies for scripts.
const (
	errNoScript      = "NOSCRIPT No matching script. Please use EVAL."
	errScriptUnknown = "-ERR Unknown Redis command called from script\r\n"
	errScriptArgs    = "-ERR Wrong number of args calling Redis command from script\r\n"
	errScriptDenied  = "-ERR This Redis command is not allowed from script\r\n"
	errScriptWrite   = "-ERR Write commands are not allowed from read-only scripts.\r\n"
)

func scriptCommands() []respCommand {
	evalArgs := func(first string) []docArg {
		return []docArg{str(first), integ("numkeys"), opt(keys("key")), {name: "arg", typ: "string", optional: true, multiple: true}}
	}
	ev := func(name, first, since, summary string, run func(*conn, [][]byte)) respCommand {
		return respCommand{name: name, arity: -3, group: "scripting", since: since, complexity: "Depends on the script that is executed.",
			summary: summary, args: evalArgs(first), keysOf: numKeys(2), run: run}
	}
	return append([]respCommand{
		ev("eval", "script", "2.6.0", "Executes a server-side Lua script.", cmdEval),
		ev("evalsha", "sha1", "2.6.0", "Executes a server-side Lua script by SHA1 digest.", cmdEvalSHA),
		ev("eval_ro", "script", "7.0.0", "Executes a read-only server-side Lua script.", cmdEvalRO),
		ev("evalsha_ro", "sha1", "7.0.0", "Executes a read-only server-side Lua script by SHA1 digest.", cmdEvalSHARO),
		{name: "script", arity: -2, group: "scripting", since: "2.6.0", complexity: "Depends on subcommand.",
			summary: "A container for Lua scripts management commands.", subs: []*respCommand{
				sub("script|exists", -3, "2.6.0", "Determines whether server-side Lua scripts exist in the script cache.",
					"EXISTS <sha1> [<sha1> ...]", "Return information about the existence of the scripts in the script cache.",
					cmdScriptExists, docArg{name: "sha1", typ: "string", multiple: true}),
				sub("script|flush", -2, "2.6.0", "Removes all server-side Lua scripts from the script cache.",
					"FLUSH [ASYNC|SYNC]", "Flush the Lua scripts cache. Very dangerous on replicas.\n"+
						"When called without the optional mode argument, the behavior is determined by the\n"+
						"lazyfree-lazy-user-flush configuration directive. Valid modes are:\n"+
						"* ASYNC: Asynchronously flush the scripts cache.\n* SYNC: Synchronously flush the scripts cache.",
					cmdScriptFlush, oneOf("flush-type", true, token("ASYNC"), token("SYNC"))),
				sub("script|kill", 2, "2.6.0", "Terminates a server-side Lua script during execution.",
					"KILL", "Kill the currently executing Lua script.", cmdScriptKill),
				sub("script|load", 3, "2.6.0", "Loads a server-side Lua script to the script cache.",
					"LOAD <script>", "Load a script into the scripts cache without executing it.", cmdScriptLoad, str("script")),
				sub("script|help", 2, "5.0.0", "Returns helpful text about the different subcommands.", "HELP",
					"Print this help.", cmdScriptHelp),
			}},
	}, functionCommands()...) // function.go
}

// cmdScriptHelp is SCRIPT HELP, Redis's text, which also lists SCRIPT
// DEBUG (the Lua debugger MiniKV does not have).
func cmdScriptHelp(rc *conn, _ [][]byte) {
	lines := []string{"SCRIPT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
		"DEBUG (YES|SYNC|NO)", "    Set the debug mode for subsequent scripts executed."}
	for _, sc := range respCommands["script"].subs {
		if sc.name == "script|help" {
			continue
		}
		lines = append(lines, sc.usage)
		for _, h := range strings.Split(sc.help, "\n") {
			lines = append(lines, "    "+h)
		}
	}
	lines = append(lines, "HELP", "    Print this help.")
	rc.w.Array(len(lines))
	for _, l := range lines {
		rc.w.Simple(l)
	}
}

// Script flags of a "#!lua flags=..." shebang (Redis 7.0).
const (
	flagCompat = 1 << iota // no shebang: a script of Redis before 7.0
	flagNoWrites
	flagAllowOOM
	flagAllowStale
	flagNoCluster
	flagCrossSlot
)

var shebangFlags = map[string]int{"no-writes": flagNoWrites, "allow-oom": flagAllowOOM,
	"allow-stale": flagAllowStale, "no-cluster": flagNoCluster, "allow-cross-slot-keys": flagCrossSlot}

// shebang reads a script's "#!lua flags=..." line: its flags, the length
// of the line (Lua compiles what follows it), or Redis's error.
func shebang(body []byte) (flags, skip int, errMsg string) {
	if !bytes.HasPrefix(body, []byte("#!")) {
		return flagCompat, 0, ""
	}
	end := bytes.IndexByte(body, '\n')
	if end < 0 {
		return 0, 0, "ERR Invalid script shebang"
	}
	// Redis splits the line as arguments (sdssplitargs) and the flags
	// on every comma.
	parts := strings.Fields(string(body[:end]))
	if len(parts) == 0 || parts[0] != "#!lua" {
		return 0, 0, "ERR Unexpected engine in script shebang: " + parts[0]
	}
	for _, p := range parts[1:] {
		list, ok := strings.CutPrefix(p, "flags=")
		if !ok {
			return 0, 0, "ERR Unknown lua shebang option: " + p
		}
		if list == "" {
			continue
		}
		for _, f := range strings.Split(list, ",") {
			bit, ok := shebangFlags[f]
			if !ok {
				return 0, 0, "ERR Unexpected flag in script shebang: " + f
			}
			flags |= bit
		}
	}
	return flags, end, ""
}

func cmdEval(rc *conn, argv [][]byte)      { rc.eval(argv, false, false) }
func cmdEvalSHA(rc *conn, argv [][]byte)   { rc.eval(argv, true, false) }
func cmdEvalRO(rc *conn, argv [][]byte)    { rc.eval(argv, false, true) }
func cmdEvalSHARO(rc *conn, argv [][]byte) { rc.eval(argv, true, true) }

// eval is evalGenericCommand: numkeys, the script (compiled and cached
// for EVAL, looked up for EVALSHA), the checks its flags call for, then
// the run.
func (rc *conn) eval(argv [][]byte, bySHA, ro bool) {
	if bySHA && len(argv[1]) != 40 {
		rc.w.Error(errNoScript) // evalShaCommand's check, before numkeys
		return
	}
	numkeys, ok := rc.parseInt(argv[2])
	if !ok {
		return
	}
	if numkeys > int64(len(argv)-3) {
		rc.w.Error("ERR Number of keys can't be greater than number of args")
		return
	}
	if numkeys < 0 {
		rc.w.Error("ERR Number of keys can't be negative")
		return
	}
	eng := rc.p.scripts
	var s *script.Script
	if bySHA {
		if s = eng.LookupCached(&rc.scriptHost().last, argv[1]); s == nil {
			rc.w.Error(errNoScript)
			return
		}
	} else {
		var err error
		if s, err = rc.loadScript(argv[1]); err != nil {
			rc.w.Error(err.Error())
			return
		}
	}
	flags, _, _ := shebang(s.Body)
	if !rc.scriptMayRun(flags, ro) {
		return
	}
	keys := argv[3 : 3+numkeys]
	args := argv[3+numkeys:]
	rc.runScript(s, nil, argv, keys, args, ro || flags&flagNoWrites != 0, flags)
}

// scriptMayRun is scriptPrepareForRun's checks of a script's flags (a
// shebang script's or a function's), writing Redis's refusal when it may
// not run.
func (rc *conn) scriptMayRun(flags int, ro bool) bool {
	if flags&flagCompat != 0 {
		return true
	}
	if flags&flagNoCluster != 0 && rc.p.cluster != nil {
		rc.w.Error("ERR Can not run script on cluster, 'no-cluster' flag is set.")
		return false
	}
	if flags&flagNoWrites == 0 {
		if ro {
			rc.w.Error("ERR Can not execute a script with write flag using *_ro command.")
			return false
		}
		if rc.st.WriteErr() != nil {
			rc.refuseWrite()
			return false
		}
		if flags&flagAllowOOM == 0 && rc.st.Full() {
			rc.Count(server.StatStoreNoMemory)
			rc.w.Error(errOOM)
			return false
		}
	}
	return true
}

// loadScript compiles and caches a script body, after its shebang.
func (rc *conn) loadScript(body []byte) (*script.Script, error) {
	_, skip, msg := shebang(body)
	if msg != "" {
		return nil, scriptError(msg)
	}
	return rc.p.scripts.Load(body, skip)
}

type scriptError string

func (e scriptError) Error() string { return string(e) }

// runScript runs s, or with s nil the function f (FCALL, function.go,
// argv its command), holding the store exclusively (unless EXEC holds it
// already: EVAL inside MULTI) and writes its reply.
func (rc *conn) runScript(s *script.Script, f *script.Function, argv, keys, args [][]byte, ro bool, flags int) {
	h := rc.scriptHost()
	h.ro, h.flags, h.wrote = ro, flags, false
	nested := rc.st != rc.p.st // inside EXEC or a batch of scripts: the store is held already
	errs := rc.errs
	run := func(v *store.Store) error {
		base, now := rc.st, rc.nowMs
		if flags&flagAllowOOM != 0 {
			v = v.AllowOOM()
		}
		rc.st, rc.nowMs = v, v.Now() // time stands still in a script (store.Store.Now)
		db := rc.db                  // a SELECT in the script is the script's own, as in Redis 7.0
		defer func() {
			rc.st, rc.nowMs, rc.db = base, now, db
			rc.pub.db.Store(int32(db))
		}()
		opt := script.Options{RESP3: rc.w.RESP3(), ReadOnly: ro}
		var after time.Duration
		var rs script.Rescuer
		if rc.loan != nil { // on an event loop, lent to the script (loop.go)
			after, rs = rc.rescueAfter(), rc.loan
		}
		var r *script.Run
		if f != nil {
			r = rc.p.functions.BeginFunction(f, copyArgv(argv), after, rs)
			h.run = r
			h.out = r.Call(h.out[:0], f, keys, args, h, opt)
		} else {
			r = rc.p.scripts.BeginRescued(after, rs)
			h.run = r
			h.out = r.Exec(h.out[:0], s, keys, args, h, opt)
		}
		h.run = nil
		r.End()
		return nil
	}
	if nested {
		_ = run(rc.st)
	} else {
		rc.HoldWrites() // until the changes are durable (server.Conn.HoldWrites)
		_ = rc.st.Exclusive(run)
		rc.ReleaseWrites()
	}
	out := h.out
	rc.w.Raw(out)
	if len(out) > 0 && out[0] == '-' && rc.errs == errs {
		// The script's own error (an error of a command it called was
		// counted when that command replied, as in Redis).
		if i := bytes.IndexByte(out, '\r'); i > 0 {
			rc.countError(string(out[1:i]))
		}
	}
	if cap(h.out) > 64<<10 {
		h.out = nil // a large reply is not kept for the next script
	}
	if !nested {
		rc.wakeScriptWrites()
	}
}

// wakeScriptWrites serves the blocked clients the scripts that just ran
// pushed to (blocking.go), once the store is no longer held: whoever
// took it exclusively (runScript, EXEC, a batch of scripts) calls it after.
func (rc *conn) wakeScriptWrites() {
	h := rc.script
	if h == nil || len(h.woken) == 0 {
		return
	}
	for _, w := range h.woken {
		rc.p.wakeKeysOf(w.cmd, w.argv, w.db)
	}
	h.woken = nil
}

// scriptBatch bounds the pipelined scripts run under one hold of the
// store (dispatchScripts): the other clients wait for all of them.
const scriptBatch = 16

// batchScripts reports whether the script command just read, cmd, and the
// scripts pipelined behind it may run under one hold of the store: the
// connection is in the plain state (no MULTI, subscription, MONITOR,
// CLIENT REPLY, pause) and the next request names a script command. In
// durable mode the replies wait for the batch's end (server.Conn.HoldWrites).
func (rc *conn) batchScripts(cmd *respCommand) bool {
	return cmd != nil && cmd.script && rc.reply == replyOn && rc.Authed() && !rc.multi.active && rc.sub == nil &&
		!rc.monitor && rc.st == rc.p.st && !rc.p.srv.Paused() && rc.nextNamesScript()
}

// nextIsScript reports whether the read buffer starts with a complete
// request of a script command. Ready keeps the request it parsed for the
// Read that follows, so it is parsed once; it must not be called while
// the arguments of the last request are in use.
func (rc *conn) nextIsScript() bool {
	return rc.nextNamesScript() && rc.r.Ready() == resp.FrameComplete
}

// nextNamesScript reports whether the request at the start of the read
// buffer, complete or not, names a script command: "*<n>\r\n$<len>\r\n"
// and the name, which is all it reads.
func (rc *conn) nextNamesScript() bool {
	b := rc.r.Pending()
	if len(b) < 8 || b[0] != '*' {
		return false
	}
	i := bytes.IndexByte(b[:min(len(b), 16)], '\n')
	if i < 0 || i+1 >= len(b) || b[i+1] != '$' {
		return false
	}
	b = b[i+2:]
	j := bytes.IndexByte(b[:min(len(b), 4)], '\r')
	if j <= 0 {
		return false
	}
	n, ok := resp.ParseInt(b[:j])
	if !ok || n <= 0 || int64(len(b)) < int64(j)+2+n {
		return false
	}
	c := rc.lookup(b[j+2 : j+2+int(n)])
	return c != nil && c.script
}

// dispatchScripts runs the script request argv and the script requests
// pipelined right behind it (up to scriptBatch) under one hold of the
// store, as EXEC runs its queue: each is still atomic, and the shards
// are locked and unlocked once instead of once per script (13 % of the
// server's CPU at redis-benchmark -P 16 EVALSHA, docs/benchmarks.md).
// Each request goes through dispatch as usual. It returns a protocol
// error of a later request, which Serve answers as its own.
func (rc *conn) dispatchScripts(argv [][]byte) (perr error) {
	if rc.InLoop() {
		// The loop is lent for the whole batch and returned after the
		// store is released: a stand-in may be waiting on a shard lock.
		if !rc.lendScriptLoop() {
			rc.dispatch(argv) // detaches
			return nil
		}
		defer rc.returnScriptLoop()
	}
	base := rc.st
	rc.HoldWrites() // until the changes are durable (server.Conn.HoldWrites)
	_ = base.Exclusive(func(v *store.Store) error {
		rc.st = v
		defer func() { rc.st = base }()
		rc.dispatch(argv)
		// A script that pushed to a key a client blocks on ends the
		// batch: Redis serves that client before the next command runs.
		for n := 1; n < scriptBatch && rc.stash == nil && !rc.quit && (rc.script == nil || len(rc.script.woken) == 0) && rc.nextIsScript(); n++ {
			next, err := rc.r.Read()
			if err != nil {
				perr = err
				return nil
			}
			rc.dispatch(next)
		}
		return nil
	})
	rc.ReleaseWrites()
	rc.wakeScriptWrites()
	return perr
}

// lendScriptLoop lends the connection's event loop to the script about
// to run (server.LoopLoan): a script usually ends in microseconds, and
// leaving the loop for a goroutine cost its client more than the script
// (docs/benchmarks.md, issue 38). It reports false when the loop cannot
// be lent (a stand-in serves it while another script runs long).
func (rc *conn) lendScriptLoop() bool {
	rc.loan = rc.LendLoop()
	return rc.loan != nil
}

func (rc *conn) returnScriptLoop() {
	rc.loan.Return()
	rc.loan = nil
}

// rescueAfter is how long a script runs on an event loop before a
// stand-in serves the loop's other clients: busy-reply-threshold, when
// Redis starts answering them BUSY. With no threshold (0) they would wait
// for the script anyway, but SCRIPT KILL must get through: a tenth of a
// second.
func (rc *conn) rescueAfter() time.Duration {
	if ms := rc.p.busyThreshold.Load(); ms > 0 {
		return time.Duration(ms) * time.Millisecond
	}
	return 100 * time.Millisecond
}

// scriptHost is a connection's script client: what redis.call runs
// commands as.
type scriptHost struct {
	rc    *conn
	run   *script.Run
	ro    bool // EVAL_RO, EVALSHA_RO or flags=no-writes
	flags int
	wrote bool // a write command ran (SCRIPT KILL refuses; OOM is checked before the first only)
	buf   bytes.Buffer
	w     *resp.Writer
	out   []byte             // the script's reply, reused
	last  script.LookupCache // EVALSHA's last script
	woken []wokenWrite
}

// wokenWrite is a write of a script that may serve blocked clients once
// the script is over.
type wokenWrite struct {
	cmd  *respCommand
	argv [][]byte
	db   int // the database it ran in
}

func (rc *conn) scriptHost() *scriptHost {
	if rc.script == nil {
		h := &scriptHost{rc: rc}
		h.w = resp.NewWriter(&h.buf, 4096)
		h.w.SetErrorHook(rc.countError)
		rc.script = h
	}
	return rc.script
}

// Call is redis.call: the command looked up and checked as Redis's
// scriptCall does, run as the connection's command with its reply
// captured.
func (h *scriptHost) Call(argv [][]byte, resp3 bool) []byte {
	rc := h.rc
	cmd := rc.lookup(argv[0])
	if cmd != nil && len(cmd.subs) > 0 && (len(argv) > 1 || cmd.run == nil) {
		if len(argv) < 2 {
			return []byte(errScriptArgs)
		}
		cmd = cmd.subcommand(argv[1])
	}
	if cmd == nil || cmd.run == nil {
		return []byte(errScriptUnknown)
	}
	if !cmd.arityOK(len(argv)) {
		return []byte(errScriptArgs)
	}
	if cmd.noScript {
		return []byte(errScriptDenied)
	}
	if msg := rc.scriptACL(cmd, argv); msg != nil {
		return msg // acl.go
	}
	if cmd.write || cmd.mayReplicate {
		if h.ro {
			return []byte(errScriptWrite)
		}
		if why := rc.p.srv.WriteRefusal(); cmd.write && !rc.master && why != "" {
			return []byte("-" + why + "\r\n") // a replica, too few replicas (replica.go)
		}
		if err := rc.st.WriteErr(); err != nil && cmd.write {
			rc.Count(server.StatDiskRefused)
			return []byte("-" + errMisconf + store.DiskErrText(err) + "\r\n")
		}
	}
	if cmd.denyOOM && !h.wrote && h.flags&flagAllowOOM == 0 && rc.st.Full() {
		rc.Count(server.StatStoreNoMemory)
		return []byte("-" + errOOM + "\r\n")
	}
	if rc.p.cluster != nil && (cmd.firstKey > 0 || cmd.keysOf != nil) {
		if msg := rc.scriptKeysHere(cmd, argv); msg != "" {
			return []byte(msg)
		}
	}
	if cmd.write {
		h.wrote = true
		h.run.NoteWrite()
		if rc.p.blocked.n.Load() != 0 {
			h.woken = append(h.woken, wokenWrite{cmd: cmd, argv: copyArgv(argv), db: rc.db})
		}
	}
	h.buf.Reset()
	h.w.SetRESP3(resp3)
	w := rc.w
	rc.w = h.w
	rc.call(cmd, argv) // cmdstats.go
	rc.w = w
	_ = h.w.Flush()
	return h.buf.Bytes()
}

// Log is redis.log: the server's log at the level Redis's maps to.
func (h *scriptHost) Log(level int, msg string) {
	log := h.rc.p.log
	switch level {
	case script.LogDebug:
		log.Debug(msg, "source", "script")
	case script.LogVerbose, script.LogNotice:
		log.Info(msg, "source", "script")
	default:
		log.Warn(msg, "source", "script")
	}
}

// Known reports whether a command of that name exists
// (redis.acl_check_cmd).
func (h *scriptHost) Known(name string) bool { return lookupCommand([]byte(name)) != nil }

// scriptKeysHere is Redis's check that a script's command touches only
// keys of this node's slots, in one slot.
func (rc *conn) scriptKeysHere(cmd *respCommand, argv [][]byte) string {
	var buf [8][]byte
	slot := -1
	for _, k := range cmd.keys(argv, buf[:0]) {
		s := cluster.KeySlot(k)
		if slot >= 0 && s != slot {
			return "-ERR Script attempted to access a non local key in a cluster node\r\n"
		}
		slot = s
	}
	// Not ownsSlot: that writes MOVED to the client, besides the
	// script's own reply. The caller's READONLY counts, as in Redis.
	if cs := rc.p.cluster; !rc.master && !cs.serves(slot, cmd.write, rc.readOnly) {
		return "-ERR Script attempted to access a non local key in a cluster node\r\n"
	}
	return ""
}

func copyArgv(argv [][]byte) [][]byte {
	cp := make([][]byte, len(argv))
	for i, a := range argv {
		cp[i] = bytes.Clone(a)
	}
	return cp
}

func cmdScriptLoad(rc *conn, argv [][]byte) {
	s, err := rc.loadScript(argv[2])
	if err != nil {
		rc.w.Error(err.Error())
		return
	}
	rc.w.BulkString(s.SHA)
}

func cmdScriptExists(rc *conn, argv [][]byte) {
	rc.w.Array(len(argv) - 2)
	for _, sha := range argv[2:] {
		rc.w.Int(int64(b2i(rc.p.scripts.Exists(sha))))
	}
}

func cmdScriptFlush(rc *conn, argv [][]byte) {
	if len(argv) > 3 || len(argv) == 3 && !is(argv[2], "sync") && !is(argv[2], "async") {
		rc.w.Error("ERR SCRIPT FLUSH only support SYNC|ASYNC option")
		return
	}
	rc.p.scripts.Flush()
	rc.w.OK()
}

func cmdScriptKill(rc *conn, _ [][]byte) { rc.killScript(false) }

// killScript is SCRIPT KILL, or with function set FUNCTION KILL. Redis
// reads no command while a script runs until it has run past
// busy-reply-threshold, so a kill sent earlier finds the script ended
// (NOTBUSY) unless it runs past the threshold: a script that has not is
// waited for, as Redis's client waits (with no threshold, none is).
func (rc *conn) killScript(function bool) {
	if r := rc.p.scripts.Running(); r != nil && rc.p.busyThreshold.Load() > 0 {
		rc.waitBusy(r)
	}
	if err := rc.p.scripts.Kill(function); err != nil {
		rc.w.Error(err.Error())
		return
	}
	rc.w.OK()
}

// awaitScript is dispatch's step while another connection's script
// runs: wait until it ends, or answer BUSY once it has run longer than
// busy-reply-threshold. It reports whether the command may go on.
func (rc *conn) awaitScript(r *script.Run, cmd *respCommand) bool {
	if cmd.allowBusy || rc.waitBusy(r) {
		return true
	}
	rc.reject(r.BusyError().Error()) // SCRIPT KILL or FUNCTION KILL
	return false
}

// waitBusy waits until the script run r ends (true) or has run longer
// than busy-reply-threshold (false); with no threshold, until it ends.
func (rc *conn) waitBusy(r *script.Run) bool {
	threshold := time.Duration(rc.p.busyThreshold.Load()) * time.Millisecond
	wait := threshold - time.Duration(rc.p.ops.clock.ns(rc.p.ops.now()-r.Started))
	if threshold > 0 && wait > 0 {
		t := time.NewTimer(wait)
		defer t.Stop()
		select {
		case <-r.Done():
			return true
		case <-t.C:
		}
	} else if threshold <= 0 {
		<-r.Done() // no threshold: wait as long as it runs
		return true
	}
	select {
	case <-r.Done():
		return true
	default:
		return false
	}
}

// scriptConfigParams are busy-reply-threshold and its older name,
// lua-time-limit: one setting under two names, as in Redis 7.0.
func scriptConfigParams() []*configParam {
	get := func(rc *conn) string { return itoa64(rc.p.busyThreshold.Load()) }
	set := intConfig(0, 1<<62, func(p *Protocol, v int64) string {
		p.busyThreshold.Store(v)
		return ""
	})
	return []*configParam{
		{name: "busy-reply-threshold", get: get, set: set, def: "5000"},
		{name: "lua-time-limit", get: get, set: set, def: "5000", noRewrite: true},
	}
}

// scriptInfo writes INFO memory's scripting fields, as Redis 7.0 prints
// them.
func (p *Protocol) scriptInfo(field func(k string, v any)) {
	st := p.scripts.Stats()
	fst := p.functions.Stats() // function.go
	// The functions' Lua state: what Redis reports for one without
	// libraries, and their code on top.
	vmFunctions := 32768 + 1024 + fst.Bytes - 200
	functionsMem := fst.Bytes
	field("used_memory_lua", st.LuaBytes)
	field("used_memory_vm_eval", st.LuaBytes)
	field("used_memory_lua_human", humanBytes(st.LuaBytes))
	field("used_memory_scripts_eval", st.ScriptBytes)
	field("number_of_cached_scripts", st.Scripts)
	field("number_of_functions", fst.Names)
	field("number_of_libraries", fst.Libraries)
	field("used_memory_vm_functions", vmFunctions)
	field("used_memory_vm_total", st.LuaBytes+vmFunctions)
	field("used_memory_vm_total_human", humanBytes(st.LuaBytes+vmFunctions))
	field("used_memory_functions", functionsMem)
	field("used_memory_scripts", st.ScriptBytes+functionsMem)
	field("used_memory_scripts_human", humanBytes(st.ScriptBytes+functionsMem))
}

// isScriptCommand reports whether c runs a script: in an event loop,
// the loop is lent to it (lendScriptLoop).
func isScriptCommand(c *respCommand) bool {
	return slices.Contains([]string{"eval", "evalsha", "eval_ro", "evalsha_ro", "fcall", "fcall_ro"}, c.name)
}

// setScriptFlags sets what scripts need of c's Redis flags.
func setScriptFlags(c *respCommand) {
	c.script = isScriptCommand(c)
	c.noScript = slices.Contains(c.flags, "noscript")
	c.stale = slices.Contains(c.flags, "stale")
	c.noMulti = slices.Contains(c.flags, "no_multi")
	// Redis's MAY_REPLICATE flag, which COMMAND INFO does not print:
	// the commands a client pause holds back besides the writes.
	c.mayReplicate = !c.write && c.pauseCovers()
	c.allowBusy = slices.Contains(c.flags, "allow_busy")
}

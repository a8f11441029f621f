package redis

import (
	"strings"

	"github.com/minikv/minikv/internal/server"
	"github.com/minikv/minikv/internal/store"
)

// Transactions (Redis's multi.c): MULTI queues commands, EXEC runs them as
// one step, DISCARD drops them, WATCH makes EXEC fail if a watched key
// changed.
//
// EXEC runs the queue inside store.Exclusive, with every shard held, so
// no client on either port sees part of a transaction, and the queued
// commands run their usual code on the Exclusive view (rc.st is swapped
// for the call). A watched key is remembered by its CAS token and
// deadline (or its absence): every write on either port issues a new
// token, and EXPIRE, PERSIST and a touch change the deadline, so a write,
// an expiry, an eviction, FLUSHALL or a restart (tokens only grow) between
// WATCH and EXEC makes EXEC answer a null array. (Redis also counts an
// EXPIRE that sets the same deadline again; MiniKV does not see it.)

func multiCommands() []respCommand {
	f := []string{"noscript", "loading", "stale", "fast", "allow_busy"}
	return []respCommand{
		{name: "multi", arity: 1, flags: f, group: "transactions", since: "1.2.0", complexity: "O(1)",
			summary: "Starts a transaction.", run: cmdMulti},
		{name: "exec", arity: 1, flags: []string{"noscript", "loading", "stale", "skip_slowlog"}, group: "transactions", since: "1.2.0",
			complexity: "Depends on commands in the transaction", summary: "Executes all commands in a transaction.", run: cmdExec},
		{name: "discard", arity: 1, flags: f, group: "transactions", since: "2.0.0", complexity: "O(N), when N is the number of queued commands",
			summary: "Discards a transaction.", run: cmdDiscard},
		{name: "watch", arity: -2, flags: f, firstKey: 1, lastKey: -1, step: 1, group: "transactions", since: "2.2.0",
			complexity: "O(1) for every key.", summary: "Monitors changes to keys to determine the execution of a transaction.",
			args: []docArg{keys("key")}, run: cmdWatch},
		{name: "unwatch", arity: 1, flags: f, group: "transactions", since: "2.2.0", complexity: "O(1)",
			summary: "Forgets about watched keys of a transaction.", run: cmdUnwatch},
	}
}

// multiState is a connection's transaction: whether MULTI is open, the
// commands queued (copies: argv aliases the read buffer), and whether a
// command was refused while queuing (EXEC then aborts).
type multiState struct {
	active  bool
	aborted bool
	queue   [][][]byte
}

// watchedKey is a key WATCH saw, as it was then.
type watchedKey struct {
	key      []byte
	cas      uint64
	deadline int64
	exists   bool
}

// runsInMulti reports whether cmd runs at once between MULTI and EXEC
// rather than being queued.
func runsInMulti(cmd *respCommand) bool {
	switch cmd.name {
	case "exec", "discard", "multi", "watch", "quit", "reset":
		return true
	}
	return false
}

// reject answers a command refused before it ran (unknown, arity, auth,
// too large, another node's key); inside MULTI it also dooms the EXEC.
//
// A refused EXEC is Redis's execCommandAbort, in MULTI or not: the
// transaction and the watched keys are dropped, and the reason is given
// after EXECABORT (without its ERR code, as Redis prints it).
func (rc *conn) reject(msg string) {
	if rc.cur != nil && rc.cur.name == "exec" {
		rc.multi, rc.watched = multiState{}, nil
		rc.w.Error("EXECABORT Transaction discarded because of: " + strings.TrimPrefix(msg, "ERR "))
		rc.rejectedCall()
		rc.publish() // CLIENT LIST's flag x and multi=
		return
	}
	rc.w.Error(msg)
	rc.rejected()
}

// queueWrites reports whether a command queued in the transaction
// writes (Redis's EXEC takes the write flag of its queue).
func (rc *conn) queueWrites() bool {
	for _, argv := range rc.multi.queue {
		c := rc.lookup(argv[0])
		if c != nil && len(c.subs) > 0 && len(argv) > 1 {
			if sc := c.subcommand(argv[1]); sc != nil {
				c = sc
			}
		}
		if c != nil && c.write {
			return true
		}
	}
	return false
}

// refuseWrite answers a write while the disk is failed: Redis's MISCONF
// with the system error. It is counted, with the other refusals.
func (rc *conn) refuseWrite() {
	rc.Count(server.StatDiskRefused)
	rc.reject(errMisconf + store.DiskErrText(rc.st.WriteErr()))
}

// rejected dooms the open transaction, if any, after a refusal, and
// counts the refused command's rejected_calls.
func (rc *conn) rejected() {
	if rc.cur != nil {
		rc.SetCommand(&rc.cur.name) // CLIENT LIST's cmd (dispatch)
	} else {
		rc.SetCommand(nil) // an unknown command or subcommand: cmd=NULL, as Redis lists it
	}
	rc.rejectedCall()
	if rc.multi.active {
		rc.multi.aborted = true
	}
}

// enqueue copies argv into the transaction's queue and answers QUEUED.
func (rc *conn) enqueue(argv [][]byte) {
	n := 0
	for _, a := range argv {
		n += len(a)
	}
	buf := make([]byte, 0, n)
	cp := make([][]byte, len(argv))
	for i, a := range argv {
		buf = append(buf, a...)
		cp[i] = buf[len(buf)-len(a) : len(buf) : len(buf)]
	}
	rc.multi.queue = append(rc.multi.queue, cp)
	rc.w.Simple("QUEUED")
}

func cmdMulti(rc *conn, _ [][]byte) {
	if rc.multi.active {
		rc.w.Error("ERR MULTI calls can not be nested")
		return
	}
	rc.multi = multiState{active: true}
	rc.w.OK()
}

func cmdDiscard(rc *conn, _ [][]byte) {
	if !rc.multi.active {
		rc.w.Error("ERR DISCARD without MULTI")
		return
	}
	rc.multi = multiState{}
	rc.watched = nil
	rc.w.OK()
}

func cmdWatch(rc *conn, argv [][]byte) {
	if rc.multi.active {
		rc.w.Error("ERR WATCH inside MULTI is not allowed")
		return
	}
	for _, k := range argv[1:] {
		it, ok := rc.st.Peek(k)
		rc.watched = append(rc.watched, watchedKey{key: append([]byte(nil), k...), cas: it.CAS, deadline: it.Deadline, exists: ok})
	}
	rc.w.OK()
}

func cmdUnwatch(rc *conn, _ [][]byte) {
	rc.watched = nil
	rc.w.OK()
}

// cmdExec is EXEC: the queued commands' replies in one array, or a null
// array when a watched key changed, or EXECABORT when one was refused.
func cmdExec(rc *conn, _ [][]byte) {
	if !rc.multi.active {
		rc.w.Error("ERR EXEC without MULTI")
		return
	}
	m, watched := rc.multi, rc.watched
	rc.multi, rc.watched = multiState{}, nil
	if m.aborted {
		rc.w.Error("EXECABORT Transaction discarded because of previous errors.")
		return
	}
	base := rc.st
	dbs := make([]int, len(m.queue))
	rc.HoldWrites() // the replies leave once the changes are durable (server.Conn.HoldWrites)
	defer rc.ReleaseWrites()
	_ = base.Exclusive(func(v *store.Store) error {
		for _, w := range watched {
			it, ok := v.Peek(w.key)
			if ok != w.exists || ok && (it.CAS != w.cas || it.Deadline != w.deadline) {
				rc.w.NullArray()
				return nil
			}
		}
		rc.st, rc.nowMs = v, v.Now() // deadlines from the instant the store's clock stands at
		defer func() { rc.st, rc.nowMs = base, 0 }()
		rc.w.Array(len(m.queue))
		for i, argv := range m.queue {
			dbs[i] = rc.db // a queued SELECT changes it for what follows
			rc.runQueued(argv)
		}
		return nil
	})
	rc.wakeScriptWrites() // the pushes of EVALs in the queue, now that the store is free
	if rc.p.blocked.n.Load() != 0 {
		// The transaction's pushes serve blocked clients now that it is
		// over, as in Redis (blocking.go).
		for i, argv := range m.queue {
			if cmd := rc.queuedCommand(argv); cmd.write {
				rc.p.wakeKeysOf(cmd, argv, dbs[i])
			}
		}
	}
}

// runQueued runs a command that passed dispatch's checks when it was
// queued.
func (rc *conn) runQueued(argv [][]byte) {
	cmd := rc.queuedCommand(argv)
	if r := rc.ACLUser().Rules(); !r.Unlimited && !rc.master && !rc.aclRecheck(r, cmd, argv) {
		return // the rules changed since it was queued (acl.go)
	}
	rc.call(cmd, argv) // cmdstats.go
}

// queuedCommand is the table entry of a queued command.
func (rc *conn) queuedCommand(argv [][]byte) *respCommand {
	cmd := rc.lookup(argv[0])
	if len(cmd.subs) > 0 && (len(argv) > 1 || cmd.run == nil) {
		cmd = cmd.subcommand(argv[1])
	}
	return cmd
}

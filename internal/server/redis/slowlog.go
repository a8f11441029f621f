package redis

import (
	"strconv"
	"sync"
	"time"

	"github.com/minikv/minikv/internal/protocol/resp"
)

// SLOWLOG (Redis 7.0's slowlog.c): commands that ran for at least
// slowlog-log-slower-than microseconds (-1: none, 0: all), newest first,
// at most slowlog-max-len of them. An entry keeps the command's arguments
// as Redis does: at most 32 (the last one saying how many more there
// were), each cut at 128 bytes, AUTH and HELLO passwords redacted. The
// duration is conn.call's: the command and the parsing of its request.

const (
	slowlogMaxArgc   = 32  // SLOWLOG_ENTRY_MAX_ARGC
	slowlogMaxString = 128 // SLOWLOG_ENTRY_MAX_STRING
)

func slowlogCommand() respCommand {
	return respCommand{name: "slowlog", arity: -2, group: "server", since: "2.2.12", complexity: "Depends on subcommand.",
		summary: "A container for slow log commands.", subs: []*respCommand{
			sub("slowlog|get", -2, "2.2.12", "Returns the slow log's entries.", "GET [<count>]",
				"Return top <count> entries from the slowlog (default: 10, -1 mean all).\nEntries are made of:\n"+
					"id, timestamp, time in microseconds, arguments array, client IP and port,\nclient name",
				cmdSlowlogGet, opt(integ("count"))),
			sub("slowlog|len", 2, "2.2.12", "Returns the number of entries in the slow log.", "LEN",
				"Return the length of the slowlog.", cmdSlowlogLen),
			sub("slowlog|reset", 2, "2.2.12", "Clears all entries from the slow log.", "RESET",
				"Reset the slowlog.", cmdSlowlogReset),
			helpSub("slowlog"),
		}}
}

// slowlog is the log, newest entry first.
type slowlog struct {
	mu      sync.Mutex // protects the fields below
	entries []slowlogEntry
	nextID  int64
}

type slowlogEntry struct {
	id       int64
	time     int64 // Unix seconds
	duration int64 // µs
	argv     [][]byte
	peer     string
	name     string
}

// push logs a command of rc that ran for d ns. As in Redis, every
// command logged takes an id, even when slowlog-max-len keeps none.
func (l *slowlog) push(rc *conn, argv [][]byte, d int64) {
	maxLen := int(rc.p.ops.settings.Load().slowlogMaxLen)
	l.mu.Lock()
	defer l.mu.Unlock()
	id := l.nextID
	l.nextID++
	if maxLen == 0 {
		l.entries = l.entries[:0]
		return
	}
	e := slowlogEntry{id: id, time: time.Now().Unix(), duration: d / 1000, argv: slowlogArgs(argv),
		peer: rc.RemoteAddr().String(), name: rc.name}
	if len(l.entries) >= maxLen {
		l.entries = l.entries[:maxLen-1]
	}
	l.entries = append(l.entries, slowlogEntry{})
	copy(l.entries[1:], l.entries)
	l.entries[0] = e
}

// slowlogArgs copies argv as a slowlog entry keeps it.
func slowlogArgs(argv [][]byte) [][]byte {
	argv = redactedArgs(argv)
	n := min(len(argv), slowlogMaxArgc)
	out := make([][]byte, n)
	for i := range n {
		a := argv[i]
		switch {
		case n != len(argv) && i == n-1:
			out[i] = []byte("... (" + strconv.Itoa(len(argv)-n+1) + " more arguments)")
		case len(a) > slowlogMaxString:
			out[i] = append(append([]byte(nil), a[:slowlogMaxString]...), "... ("+strconv.Itoa(len(a)-slowlogMaxString)+" more bytes)"...)
		default:
			out[i] = append([]byte(nil), a...)
		}
	}
	return out
}

// redactedArgs is argv with the arguments Redis hides from SLOWLOG and
// MONITOR replaced by "(redacted)": AUTH's username and password, and
// HELLO's after AUTH, as far as those commands read them before an error.
func redactedArgs(argv [][]byte) [][]byte {
	var hide []int
	switch {
	case is(argv[0], "auth") && len(argv) <= 3:
		for i := 1; i < len(argv); i++ {
			hide = append(hide, i)
		}
	case is(argv[0], "hello") && len(argv) >= 2:
		if v, ok := resp.ParseInt(argv[1]); !ok || v < 2 || v > 3 {
			return argv // HELLO stops at its protocol version
		}
		for j := 2; j < len(argv); j++ {
			more := len(argv) - 1 - j
			switch {
			case is(argv[j], "auth") && more >= 2:
				hide = append(hide, j+1, j+2)
				j += 2
			case is(argv[j], "setname") && more >= 1:
				j++
			default:
				j = len(argv) // a syntax error ends the scan
			}
		}
	}
	if len(hide) == 0 {
		return argv
	}
	out := append([][]byte(nil), argv...)
	for _, i := range hide {
		out[i] = []byte("(redacted)")
	}
	return out
}

func (l *slowlog) len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.entries)
}

// cmdSlowlogGet is SLOWLOG GET [count]: the newest count entries
// (default 10, -1 all).
func cmdSlowlogGet(rc *conn, argv [][]byte) {
	if len(argv) > 3 {
		rc.w.Error("ERR unknown subcommand or wrong number of arguments for '" + string(argv[1]) + "'. Try SLOWLOG HELP.")
		return
	}
	count := int64(10)
	if len(argv) == 3 {
		n, ok := resp.ParseInt(argv[2])
		if !ok || n < -1 {
			rc.w.Error("ERR count should be greater than or equal to -1")
			return
		}
		count = n
	}
	l := &rc.p.ops.slowlog
	l.mu.Lock()
	entries := l.entries
	if count >= 0 && int64(len(entries)) > count {
		entries = entries[:count]
	}
	entries = append([]slowlogEntry(nil), entries...) // entries are never changed, only dropped
	l.mu.Unlock()
	rc.w.Array(len(entries))
	for _, e := range entries {
		rc.w.Array(6)
		rc.w.Int(e.id)
		rc.w.Int(e.time)
		rc.w.Int(e.duration)
		rc.w.Array(len(e.argv))
		for _, a := range e.argv {
			rc.w.Bulk(a)
		}
		rc.w.BulkString(e.peer)
		rc.w.BulkString(e.name)
	}
}

func cmdSlowlogLen(rc *conn, _ [][]byte) { rc.w.Int(int64(rc.p.ops.slowlog.len())) }

func cmdSlowlogReset(rc *conn, _ [][]byte) {
	l := &rc.p.ops.slowlog
	l.mu.Lock()
	l.entries = nil
	l.mu.Unlock()
	rc.w.OK()
}

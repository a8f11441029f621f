package redis

import "github.com/minikv/minikv/internal/store"

// OBJECT ENCODING|FREQ|IDLETIME|REFCOUNT|HELP: what the store says about a
// key's value (store.Object), with Redis 7.0's replies. A missing key is
// a null reply, as in Redis 7.
//
//   - ENCODING names MiniKV's real representation with Redis's names:
//     strings "int", "embstr" or "raw" by what Redis would hold for the
//     same bytes (MiniKV keeps every string as bytes); a compact
//     collection "listpack" (or "intset"), a big one "hashtable",
//     "quicklist" or "skiplist".
//   - FREQ is the key's LFU counter, decayed to now, under
//     maxmemory-policy allkeys-lfu (the store's LFU mode, store/lfu.go),
//     and Redis's error under any other policy.
//   - IDLETIME is the seconds since the record's last access, and Redis's
//     error under allkeys-lfu (the access time then holds the counter).
//   - REFCOUNT is 1: MiniKV shares no values between keys. (Redis answers
//     2147483647 for the integers 0-9999 it shares when maxmemory is 0.)

func objectCommands() []respCommand {
	sub := func(name, since, summary, usage string, help []string, run func(*conn, [][]byte)) *respCommand {
		return &respCommand{name: name, arity: 3, flags: []string{"readonly"}, firstKey: 2, lastKey: 2, step: 1, group: "keyspace",
			since: since, complexity: "O(1)", summary: summary, usage: usage, help: help[0], args: []docArg{key("key")}, run: run}
	}
	return []respCommand{
		{name: "object", arity: -2, group: "generic", since: "2.2.3", complexity: "Depends on subcommand.",
			summary: "A container for object introspection commands.",
			subs: []*respCommand{
				sub("object|encoding", "2.2.3", "Returns the internal encoding of a Redis object.", "ENCODING <key>",
					objectHelp[1:3], cmdObjectEncoding),
				sub("object|freq", "4.0.0", "Returns the logarithmic access frequency counter of a Redis object.", "FREQ <key>",
					objectHelp[4:6], cmdObjectFreq),
				sub("object|idletime", "2.2.3", "Returns the time since the last access to a Redis object.", "IDLETIME <key>",
					objectHelp[7:9], cmdObjectIdleTime),
				sub("object|refcount", "2.2.3", "Returns the reference count of a value of a key.", "REFCOUNT <key>",
					objectHelp[10:12], cmdObjectRefCount),
				{name: "object|help", arity: 2, flags: []string{"loading", "stale"}, group: "keyspace", since: "6.2.0", complexity: "O(1)",
					summary: "Returns helpful text about the different subcommands.", usage: "HELP", help: "Print this help.", run: cmdObjectHelp},
			}},
	}
}

// objectHelp is OBJECT HELP's reply, line for line as Redis 7.0 gives it.
var objectHelp = []string{
	"OBJECT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
	"ENCODING <key>",
	"    Return the kind of internal representation used in order to store the value",
	"    associated with a <key>.",
	"FREQ <key>",
	"    Return the access frequency index of the <key>. The returned integer is",
	"    proportional to the logarithm of the recent access frequency of the key.",
	"IDLETIME <key>",
	"    Return the idle time of the <key>, that is the approximated number of",
	"    seconds elapsed since the last access to the key.",
	"REFCOUNT <key>",
	"    Return the number of references of the value associated with the specified",
	"    <key>.",
	"HELP",
	"    Print this help.",
}

func cmdObjectHelp(rc *conn, _ [][]byte) {
	rc.w.Array(len(objectHelp))
	for _, l := range objectHelp {
		rc.w.Simple(l)
	}
}

// object looks the key up for an OBJECT subcommand; a missing key has
// been answered with a null.
func (rc *conn) object(key []byte) (store.ObjectInfo, bool) {
	oi, ok := rc.st.Object(key)
	if !ok {
		rc.w.Null()
	}
	return oi, ok
}

func cmdObjectEncoding(rc *conn, argv [][]byte) {
	if oi, ok := rc.object(argv[2]); ok {
		rc.w.BulkString(oi.Encoding)
	}
}

// errNoLFU is Redis's answer to OBJECT FREQ without an LFU
// maxmemory-policy; errLFU its answer to OBJECT IDLETIME with one.
const (
	errNoLFU = "ERR An LFU maxmemory policy is not selected, access frequency not tracked. " +
		"Please note that when switching between policies at runtime LRU and LFU data will take some time to adjust."
	errLFU = "ERR An LFU maxmemory policy is selected, idle time not tracked. " +
		"Please note that when switching between policies at runtime LRU and LFU data will take some time to adjust."
)

func cmdObjectFreq(rc *conn, argv [][]byte) {
	if oi, ok := rc.object(argv[2]); ok {
		if !rc.st.LFU() {
			rc.w.Error(errNoLFU)
			return
		}
		rc.w.Int(int64(oi.Freq))
	}
}

func cmdObjectIdleTime(rc *conn, argv [][]byte) {
	if oi, ok := rc.object(argv[2]); ok {
		if rc.st.LFU() {
			rc.w.Error(errLFU)
			return
		}
		rc.w.Int(oi.Idle)
	}
}

func cmdObjectRefCount(rc *conn, argv [][]byte) {
	if _, ok := rc.object(argv[2]); ok {
		rc.w.Int(1)
	}
}

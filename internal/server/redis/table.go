package redis

import (
	"slices"
	"strings"
)

// The RESP command table: name, arity, key positions and the
// documentation COMMAND and COMMAND DOCS report (redis-cli builds its
// interactive help and hints from COMMAND DOCS). Arity and key positions
// are Redis 7.2's.

// docArg is one argument in COMMAND DOCS: Redis's argument map (name,
// type, token, flags optional/multiple, nested arguments for oneof and
// block).
type docArg struct {
	name     string
	typ      string // key, string, integer, double, pattern, unix-time, pure-token, oneof, block
	token    string
	optional bool
	multiple bool
	sub      []docArg
}

func key(name string) docArg   { return docArg{name: name, typ: "key"} }
func keys(name string) docArg  { return docArg{name: name, typ: "key", multiple: true} }
func str(name string) docArg   { return docArg{name: name, typ: "string"} }
func integ(name string) docArg { return docArg{name: name, typ: "integer"} }
func token(t string) docArg {
	return docArg{name: strings.ToLower(t), typ: "pure-token", token: t}
}
func opt(a docArg) docArg { a.optional = true; return a }
func oneOf(name string, optional bool, alts ...docArg) docArg {
	return docArg{name: name, typ: "oneof", optional: optional, sub: alts}
}
func tokArg(t, name, typ string) docArg { return docArg{name: name, typ: typ, token: t} }

var expireArgs = []docArg{
	oneOf("expiration", true,
		tokArg("EX", "seconds", "integer"), tokArg("PX", "milliseconds", "integer"),
		tokArg("EXAT", "unix-time-seconds", "unix-time"), tokArg("PXAT", "unix-time-milliseconds", "unix-time")),
}

var expireCondition = opt(oneOf("condition", true, token("NX"), token("XX"), token("GT"), token("LT")))

// respCommands maps lower-case names to commands. It is built once by
// init (COMMAND's handler reads it, which a plain initializer would make
// an initialization cycle) and never changed after.
var respCommands map[string]*respCommand

func init() {
	w, r, f := []string{"write"}, []string{"readonly", "fast"}, []string{"fast"}
	table := []respCommand{
		// Strings.
		{name: "get", arity: 2, flags: r, firstKey: 1, lastKey: 1, step: 1, group: "string", since: "1.0.0", complexity: "O(1)",
			summary: "Returns the string value of a key.", args: []docArg{key("key")}, run: cmdGet},
		{name: "set", arity: -3, flags: w, firstKey: 1, lastKey: 1, step: 1, group: "string", since: "1.0.0", complexity: "O(1)",
			summary: "Sets the string value of a key, ignoring its type. The key is created if it doesn't exist.",
			args: []docArg{key("key"), str("value"), oneOf("condition", true, token("NX"), token("XX")), opt(token("GET")),
				oneOf("expiration", true, tokArg("EX", "seconds", "integer"), tokArg("PX", "milliseconds", "integer"),
					tokArg("EXAT", "unix-time-seconds", "unix-time"), tokArg("PXAT", "unix-time-milliseconds", "unix-time"), token("KEEPTTL"))},
			run: cmdSet},
		{name: "setnx", arity: 3, flags: w, firstKey: 1, lastKey: 1, step: 1, group: "string", since: "1.0.0", complexity: "O(1)",
			summary: "Set the string value of a key only when the key doesn't exist.", args: []docArg{key("key"), str("value")}, run: cmdSetNX},
		{name: "setex", arity: 4, flags: w, firstKey: 1, lastKey: 1, step: 1, group: "string", since: "2.0.0", complexity: "O(1)",
			summary: "Sets the string value and expiration time of a key. Creates the key if it doesn't exist.",
			args:    []docArg{key("key"), integ("seconds"), str("value")}, run: cmdSetEX},
		{name: "psetex", arity: 4, flags: w, firstKey: 1, lastKey: 1, step: 1, group: "string", since: "2.6.0", complexity: "O(1)",
			summary: "Sets both string value and expiration time in milliseconds of a key. The key is created if it doesn't exist.",
			args:    []docArg{key("key"), integ("milliseconds"), str("value")}, run: cmdPSetEX},
		{name: "getset", arity: 3, flags: w, firstKey: 1, lastKey: 1, step: 1, group: "string", since: "1.0.0", complexity: "O(1)",
			summary: "Returns the previous string value of a key after setting it to a new value.", args: []docArg{key("key"), str("value")}, run: cmdGetSet},
		{name: "getdel", arity: 2, flags: w, firstKey: 1, lastKey: 1, step: 1, group: "string", since: "6.2.0", complexity: "O(1)",
			summary: "Returns the string value of a key after deleting the key.", args: []docArg{key("key")}, run: cmdGetDel},
		{name: "getex", arity: -2, flags: w, firstKey: 1, lastKey: 1, step: 1, group: "string", since: "6.2.0", complexity: "O(1)",
			summary: "Returns the string value of a key after setting its expiration time.",
			args: []docArg{key("key"), oneOf("expiration", true, tokArg("EX", "seconds", "integer"), tokArg("PX", "milliseconds", "integer"),
				tokArg("EXAT", "unix-time-seconds", "unix-time"), tokArg("PXAT", "unix-time-milliseconds", "unix-time"), token("PERSIST"))},
			run: cmdGetEX},
		{name: "mget", arity: -2, flags: r, firstKey: 1, lastKey: -1, step: 1, group: "string", since: "1.0.0", complexity: "O(N) where N is the number of keys to retrieve.",
			summary: "Atomically returns the string values of one or more keys.", args: []docArg{keys("key")}, run: cmdMGet},
		{name: "mset", arity: -3, flags: w, firstKey: 1, lastKey: -1, step: 2, group: "string", since: "1.0.1", complexity: "O(N) where N is the number of keys to set.",
			summary: "Atomically creates or modifies the string values of one or more keys.",
			args:    []docArg{{name: "data", typ: "block", multiple: true, sub: []docArg{key("key"), str("value")}}}, run: cmdMSet},
		{name: "msetnx", arity: -3, flags: w, firstKey: 1, lastKey: -1, step: 2, group: "string", since: "1.0.1", complexity: "O(N) where N is the number of keys to set.",
			summary: "Atomically modifies the string values of one or more keys only when all keys don't exist.",
			args:    []docArg{{name: "data", typ: "block", multiple: true, sub: []docArg{key("key"), str("value")}}}, run: cmdMSetNX},
		{name: "append", arity: 3, flags: w, firstKey: 1, lastKey: 1, step: 1, group: "string", since: "2.0.0", complexity: "O(1).",
			summary: "Appends a string to the value of a key. Creates the key if it doesn't exist.", args: []docArg{key("key"), str("value")}, run: cmdAppend},
		{name: "strlen", arity: 2, flags: r, firstKey: 1, lastKey: 1, step: 1, group: "string", since: "2.2.0", complexity: "O(1)",
			summary: "Returns the length of a string value.", args: []docArg{key("key")}, run: cmdStrlen},
		{name: "getrange", arity: 4, flags: []string{"readonly"}, firstKey: 1, lastKey: 1, step: 1, group: "string", since: "2.4.0", complexity: "O(N) where N is the length of the returned string.",
			summary: "Returns a substring of the string stored at a key.", args: []docArg{key("key"), integ("start"), integ("end")}, run: cmdGetRange},
		// SUBSTR is GETRANGE's name before Redis 2.0, still served by 7.0.
		{name: "substr", arity: 4, flags: []string{"readonly"}, firstKey: 1, lastKey: 1, step: 1, group: "string", since: "1.0.0", complexity: "O(N) where N is the length of the returned string.",
			summary: "Returns a substring from a string value.", args: []docArg{key("key"), integ("start"), integ("end")}, run: cmdGetRange},
		{name: "setrange", arity: 4, flags: w, firstKey: 1, lastKey: 1, step: 1, group: "string", since: "2.2.0", complexity: "O(1), not counting the time taken to copy the new string in place.",
			summary: "Overwrites a part of a string value with another by an offset. Creates the key if it doesn't exist.",
			args:    []docArg{key("key"), integ("offset"), str("value")}, run: cmdSetRange},
		{name: "incr", arity: 2, flags: w, firstKey: 1, lastKey: 1, step: 1, group: "string", since: "1.0.0", complexity: "O(1)",
			summary: "Increments the integer value of a key by one. Uses 0 as initial value if the key doesn't exist.", args: []docArg{key("key")}, run: cmdIncr},
		{name: "decr", arity: 2, flags: w, firstKey: 1, lastKey: 1, step: 1, group: "string", since: "1.0.0", complexity: "O(1)",
			summary: "Decrements the integer value of a key by one. Uses 0 as initial value if the key doesn't exist.", args: []docArg{key("key")}, run: cmdDecr},
		{name: "incrby", arity: 3, flags: w, firstKey: 1, lastKey: 1, step: 1, group: "string", since: "1.0.0", complexity: "O(1)",
			summary: "Increments the integer value of a key by a number. Uses 0 as initial value if the key doesn't exist.",
			args:    []docArg{key("key"), integ("increment")}, run: cmdIncrBy},
		{name: "decrby", arity: 3, flags: w, firstKey: 1, lastKey: 1, step: 1, group: "string", since: "1.0.0", complexity: "O(1)",
			summary: "Decrements a number from the integer value of a key. Uses 0 as initial value if the key doesn't exist.",
			args:    []docArg{key("key"), integ("decrement")}, run: cmdDecrBy},
		{name: "incrbyfloat", arity: 3, flags: w, firstKey: 1, lastKey: 1, step: 1, group: "string", since: "2.6.0", complexity: "O(1)",
			summary: "Increment the floating point value of a key by a number. Uses 0 as initial value if the key doesn't exist.",
			args:    []docArg{key("key"), {name: "increment", typ: "double"}}, run: cmdIncrByFloat},

		// Keyspace.
		{name: "del", arity: -2, flags: w, firstKey: 1, lastKey: -1, step: 1, group: "generic", since: "1.0.0", complexity: "O(N) where N is the number of keys that will be removed.",
			summary: "Deletes one or more keys.", args: []docArg{keys("key")}, run: cmdDel},
		{name: "unlink", arity: -2, flags: append(w, "fast"), firstKey: 1, lastKey: -1, step: 1, group: "generic", since: "4.0.0", complexity: "O(1) for each key removed regardless of its size.",
			summary: "Asynchronously deletes one or more keys.", args: []docArg{keys("key")}, run: cmdDel},
		{name: "exists", arity: -2, flags: r, firstKey: 1, lastKey: -1, step: 1, group: "generic", since: "1.0.0", complexity: "O(N) where N is the number of keys to check.",
			summary: "Determines whether one or more keys exist.", args: []docArg{keys("key")}, run: cmdExists},
		{name: "type", arity: 2, flags: r, firstKey: 1, lastKey: 1, step: 1, group: "generic", since: "1.0.0", complexity: "O(1)",
			summary: "Determines the type of value stored at a key.", args: []docArg{key("key")}, run: cmdType},
		{name: "expire", arity: -3, flags: append(w, "fast"), firstKey: 1, lastKey: 1, step: 1, group: "generic", since: "1.0.0", complexity: "O(1)",
			summary: "Sets the expiration time of a key in seconds.", args: []docArg{key("key"), integ("seconds"), expireCondition}, run: cmdExpire},
		{name: "pexpire", arity: -3, flags: append(w, "fast"), firstKey: 1, lastKey: 1, step: 1, group: "generic", since: "2.6.0", complexity: "O(1)",
			summary: "Sets the expiration time of a key in milliseconds.", args: []docArg{key("key"), integ("milliseconds"), expireCondition}, run: cmdPExpire},
		{name: "expireat", arity: -3, flags: append(w, "fast"), firstKey: 1, lastKey: 1, step: 1, group: "generic", since: "1.2.0", complexity: "O(1)",
			summary: "Sets the expiration time of a key to a Unix timestamp.",
			args:    []docArg{key("key"), {name: "unix-time-seconds", typ: "unix-time"}, expireCondition}, run: cmdExpireAt},
		{name: "pexpireat", arity: -3, flags: append(w, "fast"), firstKey: 1, lastKey: 1, step: 1, group: "generic", since: "2.6.0", complexity: "O(1)",
			summary: "Sets the expiration time of a key to a Unix milliseconds timestamp.",
			args:    []docArg{key("key"), {name: "unix-time-milliseconds", typ: "unix-time"}, expireCondition}, run: cmdPExpireAt},
		{name: "ttl", arity: 2, flags: r, firstKey: 1, lastKey: 1, step: 1, group: "generic", since: "1.0.0", complexity: "O(1)",
			summary: "Returns the expiration time in seconds of a key.", args: []docArg{key("key")}, run: cmdTTL},
		{name: "pttl", arity: 2, flags: r, firstKey: 1, lastKey: 1, step: 1, group: "generic", since: "2.6.0", complexity: "O(1)",
			summary: "Returns the expiration time in milliseconds of a key.", args: []docArg{key("key")}, run: cmdPTTL},
		{name: "expiretime", arity: 2, flags: r, firstKey: 1, lastKey: 1, step: 1, group: "generic", since: "7.0.0", complexity: "O(1)",
			summary: "Returns the expiration time of a key as a Unix timestamp.", args: []docArg{key("key")}, run: cmdExpireTime},
		{name: "pexpiretime", arity: 2, flags: r, firstKey: 1, lastKey: 1, step: 1, group: "generic", since: "7.0.0", complexity: "O(1)",
			summary: "Returns the expiration time of a key as a Unix milliseconds timestamp.", args: []docArg{key("key")}, run: cmdPExpireTime},
		{name: "persist", arity: 2, flags: append(w, "fast"), firstKey: 1, lastKey: 1, step: 1, group: "generic", since: "2.2.0", complexity: "O(1)",
			summary: "Removes the expiration time of a key.", args: []docArg{key("key")}, run: cmdPersist},
		{name: "keys", arity: 2, flags: []string{"readonly"}, group: "generic", since: "1.0.0", complexity: "O(N) with N being the number of keys in the database, under the assumption that the key names in the database and the given pattern have limited length.",
			summary: "Returns all key names that match a pattern.", args: []docArg{{name: "pattern", typ: "pattern"}}, run: cmdKeys},
		{name: "scan", arity: -2, flags: []string{"readonly"}, group: "generic", since: "2.8.0", complexity: "O(1) for every call. O(N) for a complete iteration, including enough command calls for the cursor to return back to 0. N is the number of elements inside the collection.",
			summary: "Iterates over the key names in the database.",
			args:    []docArg{integ("cursor"), opt(tokArg("MATCH", "pattern", "pattern")), opt(tokArg("COUNT", "count", "integer")), opt(tokArg("TYPE", "type", "string"))},
			run:     cmdScan},
		{name: "randomkey", arity: 1, flags: []string{"readonly"}, group: "generic", since: "1.0.0", complexity: "O(1)",
			summary: "Returns a random key name from the database.", run: cmdRandomKey},
		{name: "dbsize", arity: 1, flags: r, group: "server", since: "1.0.0", complexity: "O(1)",
			summary: "Returns the number of keys in the database.", run: cmdDBSize},
		{name: "flushdb", arity: -1, flags: w, group: "server", since: "1.0.0", complexity: "O(N) where N is the total number of keys in all databases",
			summary: "Remove all keys from the current database.", args: []docArg{oneOf("flush-type", true, token("ASYNC"), token("SYNC"))}, run: cmdFlushDB},
		{name: "save", arity: 1, flags: []string{"admin", "noscript", "no_async_loading", "no_multi"}, group: "server", since: "1.0.0", complexity: "O(N) where N is the total number of keys in all databases",
			summary: "Synchronously saves the database(s) to disk.", run: cmdSave},
		{name: "bgsave", arity: -1, flags: []string{"admin", "noscript", "no_async_loading"}, group: "server", since: "1.0.0", complexity: "O(N) where N is the total number of keys in all databases",
			summary: "Asynchronously saves the database(s) to disk.", args: []docArg{opt(token("SCHEDULE"))}, run: cmdBGSave},
		{name: "bgrewriteaof", arity: 1, flags: []string{"admin", "noscript", "no_async_loading"}, group: "server", since: "1.0.0", complexity: "O(1)",
			summary: "Asynchronously rewrites the append-only file to disk.", run: cmdBGRewriteAOF},
		{name: "lastsave", arity: 1, flags: []string{"random", "loading", "stale", "fast"}, group: "server", since: "1.0.0", complexity: "O(1)",
			summary: "Returns the Unix timestamp of the last successful save to disk.", run: cmdLastSave},
		{name: "flushall", arity: -1, flags: w, group: "server", since: "1.0.0", complexity: "O(N) where N is the total number of keys in all databases",
			summary: "Removes all keys from all databases.", args: []docArg{oneOf("flush-type", true, token("ASYNC"), token("SYNC"))}, run: cmdFlushAll},

		// Connection and server.
		{name: "ping", arity: -1, flags: f, group: "connection", since: "1.0.0", complexity: "O(1)",
			summary: "Returns the server's liveliness response.", args: []docArg{opt(str("message"))}, run: cmdPing},
		{name: "echo", arity: 2, flags: f, group: "connection", since: "1.0.0", complexity: "O(1)",
			summary: "Returns the given string.", args: []docArg{str("message")}, run: cmdEcho},
		{name: "hello", arity: -1, flags: []string{"noscript", "loading", "stale", "fast", "no_auth"}, group: "connection", since: "6.0.0", complexity: "O(1)",
			summary: "Handshakes with the Redis server.",
			args: []docArg{{name: "arguments", typ: "block", optional: true, sub: []docArg{integ("protover"),
				{name: "auth", typ: "block", token: "AUTH", optional: true, sub: []docArg{str("username"), str("password")}},
				opt(tokArg("SETNAME", "clientname", "string"))}}},
			noAuth: true, run: cmdHello},
		{name: "auth", arity: -2, flags: []string{"noscript", "loading", "stale", "fast", "no_auth"}, group: "connection", since: "1.0.0", complexity: "O(N) where N is the number of passwords defined for the user",
			summary: "Authenticates the connection.", args: []docArg{opt(str("username")), str("password")}, noAuth: true, run: cmdAuth},
		{name: "quit", arity: -1, flags: []string{"fast", "no_auth"}, group: "connection", since: "1.0.0", complexity: "O(1)",
			summary: "Closes the connection.", noAuth: true, run: cmdQuit},
		{name: "select", arity: 2, flags: []string{"loading", "stale", "fast"}, group: "connection", since: "1.0.0", complexity: "O(1)",
			summary: "Changes the selected database.", args: []docArg{integ("index")}, run: cmdSelect},
		{name: "client", arity: -2, group: "connection", since: "2.4.0", complexity: "Depends on subcommand.",
			summary: "A container for client connection commands.", subs: []*respCommand{
				sub("client|getname", 2, "2.6.9", "Returns the name of the connection.", "GETNAME",
					"Return the name of the current connection.", cmdClientGetName),
				sub("client|id", 2, "5.0.0", "Returns the unique client ID of the connection.", "ID",
					"Return the ID of the current connection.", cmdClientID),
				sub("client|info", 2, "6.2.0", "Returns information about the connection.", "INFO",
					"Return information about the current client connection.", cmdClientInfo),
				sub("client|kill", -3, "2.4.0", "Terminates open connections.", "KILL <option> <value> [<option> <value> [...]]",
					"Kill connections (of either port).", cmdClientKill,
					oneOf("filter", false, str("old-format"), docArg{name: "new-format", typ: "oneof", multiple: true, sub: []docArg{
						tokArg("ID", "client-id", "integer"),
						{name: "client-type", typ: "oneof", token: "TYPE", sub: []docArg{token("NORMAL"), token("MASTER"), token("SLAVE"), token("REPLICA"), token("PUBSUB")}},
						tokArg("USER", "username", "string"), tokArg("ADDR", "ip:port", "string"), tokArg("LADDR", "ip:port", "string"),
						{name: "skipme", typ: "oneof", token: "SKIPME", sub: []docArg{token("YES"), token("NO")}}}})),
				sub("client|list", -2, "2.4.0", "Lists open connections.", "LIST [options ...]",
					"Return information about client connections (of either port).", cmdClientList,
					opt(docArg{name: "client-type", typ: "oneof", token: "TYPE", sub: []docArg{token("NORMAL"), token("MASTER"), token("REPLICA"), token("PUBSUB")}}),
					docArg{name: "client-id", typ: "integer", token: "ID", optional: true, multiple: true}),
				sub("client|unpause", 2, "6.2.0", "Resumes processing commands from paused clients.", "UNPAUSE",
					"Stop the current client pause, resuming traffic.", cmdClientUnpause),
				sub("client|pause", -3, "3.0.0", "Suspends commands processing.", "PAUSE <timeout> [WRITE|ALL]",
					"Suspend all, or just write, clients for <timeout> milliseconds.", cmdClientPause,
					integ("timeout"), oneOf("mode", true, token("WRITE"), token("ALL"))),
				sub("client|reply", 3, "3.2.0", "Instructs the server whether to reply to commands.", "REPLY (ON|OFF|SKIP)",
					"Control the replies sent to the current connection.", cmdClientReply,
					oneOf("action", false, token("ON"), token("OFF"), token("SKIP"))),
				sub("client|setinfo", 4, "7.2.0", "Sets information specific to the client or connection.", "SETINFO <option> <value>",
					"Set client meta attr. Options are LIB-NAME and LIB-VER.", cmdClientSetInfo,
					oneOf("attr", false, tokArg("LIB-NAME", "libname", "string"), tokArg("LIB-VER", "libver", "string"))),
				sub("client|unblock", -3, "5.0.0", "Unblocks a client blocked by a blocking command from a different connection.",
					"UNBLOCK <clientid> [TIMEOUT|ERROR]", "Unblock the specified blocked client.", cmdClientUnblock,
					integ("client-id"), oneOf("unblock-type", true, token("TIMEOUT"), token("ERROR"))),
				sub("client|setname", 3, "2.6.9", "Sets the connection name.", "SETNAME <name>",
					"Assign the name <name> to the current connection.", cmdClientSetName, str("connection-name")),
				sub("client|no-evict", 3, "7.0.0", "Sets the client eviction mode of the connection.", "NO-EVICT (ON|OFF)",
					"Protect current client connection from eviction.", cmdClientNoEvict,
					oneOf("enabled", false, token("ON"), token("OFF"))),
				sub("client|no-touch", 3, "7.2.0", "Controls whether commands sent by the client affect the LRU/LFU of accessed keys.", "NO-TOUCH (ON|OFF)",
					"Will not touch LRU/LFU stats when this mode is on.", cmdClientNoTouch,
					oneOf("enabled", false, token("ON"), token("OFF"))),
				sub("client|help", 2, "5.0.0", "Returns helpful text about the different subcommands.", "HELP",
					"Print this help.", cmdClientHelp),
			}},
		{name: "info", arity: -1, flags: []string{"loading", "stale"}, group: "server", since: "1.0.0", complexity: "O(1)",
			summary: "Returns information and statistics about the server.", args: []docArg{{name: "section", typ: "string", optional: true, multiple: true}}, run: cmdInfo},
		{name: "config", arity: -2, group: "server", since: "2.0.0", complexity: "Depends on subcommand.",
			summary: "A container for server configuration commands.", subs: []*respCommand{
				sub("config|get", -3, "2.0.0", "Returns the effective values of configuration parameters.", "GET <pattern>",
					"Return parameters matching the glob-like <pattern> and their values.", cmdConfigGet,
					docArg{name: "parameter", typ: "string", multiple: true}),
				sub("config|set", -4, "2.0.0", "Sets configuration parameters in-flight.", "SET <directive> <value>",
					"Set the configuration <directive> to <value>.", cmdConfigSet,
					docArg{name: "data", typ: "block", multiple: true, sub: []docArg{str("parameter"), str("value")}}),
				sub("config|resetstat", 2, "2.0.0", "Resets the server's statistics.", "RESETSTAT",
					"Reset statistics reported by the INFO command.", cmdConfigResetStat),
				sub("config|rewrite", 2, "2.8.0", "Persists the effective configuration to file.", "REWRITE",
					"Rewrite the configuration file.", cmdConfigRewrite),
				helpSub("config"),
			}},
		aclCommand(),     // acl.go
		commandCommand(), // command.go
		slowlogCommand(), // slowlog.go
		latencyCommand(), // latency.go
		monitorCommand(), // monitor.go
		{name: "time", arity: 1, flags: []string{"loading", "stale", "fast"}, group: "server", since: "2.6.0", complexity: "O(1)",
			summary: "Returns the server time.", run: cmdTime},
	}
	table = append(table, hashCommands()...)
	table = append(table, setCommands()...)
	table = append(table, listCommands()...)     // list.go
	table = append(table, blockingCommands()...) // blocking.go
	table = append(table, bitmapCommands()...)
	table = append(table, hllCommands()...)
	table = append(table, lcsCommands()...)
	table = append(table, zsetCommands()...)
	table = append(table, geoCommands()...)    // geo.go
	table = append(table, streamCommands()...) // stream.go
	table = append(table, keyspaceCommands()...)
	table = append(table, multiCommands()...)
	table = append(table, pubsubCommands()...)      // pubsub.go
	table = append(table, objectCommands()...)      // object.go
	table = append(table, memoryCommands()...)      // memory.go
	table = append(table, lolwutCommands()...)      // lolwut.go
	table = append(table, dumpCommands()...)        // dump.go
	table = append(table, sortCommands()...)        // sort.go
	table = append(table, clusterCommands()...)     // cluster.go
	table = append(table, scriptCommands()...)      // script.go
	table = append(table, replicationCommands()...) // replication.go
	table = append(table, failoverCommands()...)    // failover.go
	for i := range table {
		if table[i].name == "client" {
			table[i].subs = append(table[i].subs, trackingCommands()...) // tracking.go
		}
	}
	finishCommands(table) // Redis 7.0's flags, key specs and docs; command numbers (ops.go)
	respCommands = make(map[string]*respCommand, len(table))
	for i := range table {
		c := &table[i]
		c.denyOOM = slices.Contains(c.flags, "denyoom")
		c.blocking = slices.Contains(c.flags, "blocking")
		c.randPicks = isRandPicks(c.name)
		c.write = slices.Contains(c.flags, "write")
		c.detach = needsGoroutine(c)
		setScriptFlags(c)
		respCommands[c.name] = c
		c.publishes = publishingCommands[c.name]
		for _, sc := range c.subs {
			sc.publishes = publishingCommands[sc.name]
			sc.group, sc.noAuth = c.group, c.noAuth
			sc.denyOOM = slices.Contains(sc.flags, "denyoom")
			sc.blocking = slices.Contains(sc.flags, "blocking")
			sc.detach = needsGoroutine(sc)
			setScriptFlags(sc)
		}
	}
	buildLookup() // lookup.go
}

// sub is a subcommand's table entry: full name ("client|setname"), arity
// (counting the container's name, as Redis does), docs, and the usage and
// help lines its container's HELP prints.
func sub(name string, arity int, since, summary, usage, help string, run func(*conn, [][]byte), args ...docArg) *respCommand {
	return &respCommand{name: name, arity: arity, since: since, summary: summary, complexity: "O(1)",
		usage: usage, help: help, args: args, run: run}
}

// oneKey returns the table-entry builder of a group's commands on one
// key, their first argument: most data-type commands.
func oneKey(group string) func(name string, arity int, flags []string, since, complexity, summary string, args []docArg, run func(*conn, [][]byte)) respCommand {
	return func(name string, arity int, flags []string, since, complexity, summary string, args []docArg, run func(*conn, [][]byte)) respCommand {
		return respCommand{name: name, arity: arity, flags: flags, firstKey: 1, lastKey: 1, step: 1, group: group,
			since: since, complexity: complexity, summary: summary, args: args, run: run}
	}
}

// helpSub is the HELP subcommand of container.
func helpSub(container string) *respCommand {
	return sub(container+"|help", 2, "5.0.0", "Returns helpful text about the different subcommands.", "HELP",
		"Print this help.", cmdHelp)
}

// subcommand finds the subcommand of c named name, in any case, or nil.
func (c *respCommand) subcommand(name []byte) *respCommand {
	for _, sc := range c.subs {
		if short := sc.name[len(c.name)+1:]; len(short) == len(name) && is(name, short) {
			return sc
		}
	}
	return nil
}

// cmdHelp is the HELP subcommand of every container command: its lines
// come from the table (each subcommand's usage and help text, in table
// order).
func cmdHelp(rc *conn, argv [][]byte) {
	c := respCommands[strings.ToLower(string(argv[0]))]
	lines := []string{strings.ToUpper(c.name) + " <subcommand> [<arg> [value] [opt] ...]. Subcommands are:"}
	if c.noSubHelp != "" {
		lines = append(lines, "(no subcommand)", "    "+c.noSubHelp)
	}
	for _, sc := range c.subs {
		if sc.usage == "" {
			continue // an old name HELP does not list (CLUSTER SLAVES)
		}
		lines = append(lines, sc.usage)
		for _, h := range strings.Split(sc.help, "\n") {
			lines = append(lines, "    "+h)
		}
	}
	rc.w.Array(len(lines))
	for _, l := range lines {
		rc.w.Simple(l)
	}
}

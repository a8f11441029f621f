package redis

// Differential sessions of scripting and functions (issue 38): EVAL,
// EVALSHA and their _RO forms, SCRIPT, FUNCTION and FCALL, the Lua <-> RESP
// conversions both ways, the errors redis.call raises, the sandbox, the
// shebang flags and the libraries Redis 7.2 loads (cjson, cmsgpack, bit,
// struct). Each session goes to redis-server 7.2.4 and to MiniKV, over
// RESP2 and again after HELLO 3, and the reply streams must be equal byte
// for byte (runRESPSession and sameRESPReplies of differential_test.go).
//
// The guard. Until scripting is merged MiniKV answers EVAL as an unknown
// command, so TestScriptDifferential first sends EVAL "return 1" 0 and
// skips ("scripting (issue 38) not merged yet") on that error; with
// MINIKV_SCRIPT_DIFF=1 in the environment it runs and fails instead, which
// is how the scripting branch runs it while the work is in progress:
//
//	MINIKV_SCRIPT_DIFF=1 go test -race -run 'TestScriptDifferential' ./internal/server/redis/
//
// TestScriptSessionsDeterministic needs no MiniKV: it runs every session
// on two fresh redis-servers (on the second, the global ones in reverse
// order) and requires the same bytes, so a session whose replies depend
// on time, on a hash seed or on what ran before it fails here before it
// can fail against MiniKV. With MINIKV_SCRIPT_DIFF_SHOW=1 and -v it logs Redis's replies.
//
// Left out because Redis's own output is not deterministic, or depends on
// what Lua 5.1's hash order happens to be: Lua tables of more than one
// string key returned as a RESP3 map or set, or encoded by cjson.encode
// or cmsgpack.pack (the order is lua_next's); FUNCTION LIST of more than
// one library or of a library with more than one function (dict order
// under a random seed); tostring of a table or function (an address);
// math.random without math.randomseed in the same script (one sequence
// for the whole server, so it depends on what ran before); TIME;
// collectgarbage('count'); used_memory_* and the
// running_script of FUNCTION STATS while a script runs; SCRIPT KILL and
// FUNCTION KILL of a running script, and the BUSY errors (timing). The
// script debugger (SCRIPT DEBUG YES) is left out as well: it is an
// interactive protocol of its own. And error({}) (a table without err):
// it crashes redis-server 7.2.4, as 7.0.15 (fixed later,
// redis/redis#14163); the sessions raise tables with err only, and
// pcall(error, {}).
//
// Sessions that touch server-wide state (SCRIPT FLUSH, the function
// libraries, maxmemory) are marked global and run one at a time after the
// others; the rest run in parallel and use keys with their own prefix.

import (
	"bufio"
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/minikv/minikv/internal/protocol/resp"
	"github.com/minikv/minikv/internal/server"
	"github.com/minikv/minikv/internal/store"
)

// scriptSession is one conversation: in builds its requests for a key
// prefix p (the RESP2 and RESP3 runs use different ones).
type scriptSession struct {
	name   string
	in     func(p string) string
	global bool
	hello3 bool // runs once, after HELLO 3
}

// ev is EVAL of src with n keys, then the keys and arguments.
func ev(src string, n int, rest ...string) string {
	return mb(append([]string{"EVAL", src, strconv.Itoa(n)}, rest...)...)
}

// ev0 is EVAL of src with no keys and no arguments.
func ev0(src string) string { return ev(src, 0) }

// scriptSHA is the SHA1 of a script in hex, as EVALSHA names it.
func scriptSHA(src string) string {
	h := sha1.Sum([]byte(src))
	return hex.EncodeToString(h[:])
}

// functionDumpPayload is FUNCTION DUMP's payload of one library: the
// RDB_OPCODE_FUNCTION2 opcode (245) and the code, sealed as DUMP seals a
// key. FUNCTION DUMP's reply is compared too, so a wrong layout here
// shows there first.
func functionDumpPayload(code string) string {
	return string(rdbSeal(rdbAppendString([]byte{245}, []byte(code))))
}

// Scripts used in several places, so EVALSHA can name them.
const (
	scriptGetKey  = "return redis.call('get', KEYS[1])"
	scriptSetKey  = "return redis.call('set', KEYS[1], ARGV[1])"
	scriptReadArg = "return {KEYS[1], ARGV[1], #KEYS, #ARGV}"
)

// lib1 is a library of one function; libFlags registers one function with
// flags and a description through the table form.
const (
	lib1     = "#!lua name=lib1\nredis.register_function('f1', function(keys, args) return redis.call('set', keys[1], args[1]) end)"
	lib1v2   = "#!lua name=lib1\nredis.register_function('f1', function(keys, args) return 'v2' end)"
	libFlags = "#!lua name=libflags\nredis.register_function{function_name='ro', callback=function(keys, args) return redis.call('get', keys[1]) end, " +
		"flags={'no-writes', 'allow-stale'}, description='reads a key'}"
	libMulti = "#!lua name=libmulti\nlocal function helper(x) return x * 2 end\n" +
		"redis.register_function('double', function(keys, args) return helper(tonumber(args[1])) end)\n" +
		"redis.register_function{function_name='wr', callback=function(keys, args) return redis.call('incr', keys[1]) end}\n" +
		"redis.register_function{function_name='rd', callback=function(keys, args) return redis.call('get', keys[1]) end, flags={'no-writes'}}\n" +
		"redis.register_function('fail', function(keys, args) return redis.call('nope') end)\n" +
		"redis.register_function('raise', function(keys, args) error('boom') end)\n" +
		"redis.register_function('args', function(keys, args) return {#keys, #args, keys[1], args[1]} end)"
)

var scriptSessions = []scriptSession{
	// EVAL and its arguments.
	{name: "eval basics", in: func(p string) string {
		return ev0("return 1") + ev0("return 'hello'") + ev(scriptReadArg, 1, p+"k", "v", "w") +
			ev("return KEYS", 2, p+"a", p+"b", "x") + ev("return ARGV", 0, "a", "", "c") + ev("return #KEYS + #ARGV", 1, p+"a", "x", "y") +
			ev0("local x = 1") + ev0("return") + ev0("") + ev0("return nil") + mb("eval", "return 2", "0") + mb("EvAl", "return ARGV[1]", "0", "x") +
			ev("return KEYS[1] .. ARGV[1]", 1, p+"a", "\x00\xff") + ev0("return ARGV[1]") + ev0("return KEYS[3]") +
			ev("return type(KEYS[1]) .. type(ARGV[1])", 1, "1", "2") + ev0("return type(KEYS) .. type(ARGV)")
	}},
	{name: "eval arity and numkeys", in: func(p string) string {
		return mb("EVAL") + mb("EVAL", "return 1") + mb("EVAL", "return 1", "-1") + mb("EVAL", "return 1", "abc") +
			mb("EVAL", "return 1", "1") + mb("EVAL", "return 1", "2", p+"a") + mb("EVAL", "return 1", "1.5", p+"a") +
			mb("EVAL", "return 1", "9223372036854775808", p+"a") + mb("EVAL", "return 1", " 1", p+"a") + mb("EVAL", "return 1", "") +
			mb("EVAL", "return #KEYS", "+1", p+"a") + mb("EVAL", "return #KEYS", "01", p+"a") + mb("EVAL", "return #KEYS", "1", p+"a") +
			mb("EVAL_RO", "return 1", "-1") + mb("EVAL_RO") + mb("EVALSHA") + mb("EVALSHA", scriptSHA("return 1")) +
			mb("EVALSHA", scriptSHA("return 1"), "x") + mb("EVALSHA_RO", "x", "2", "k") + mb("EVALSHA", "nosuchsha", "-5")
	}},
	{name: "evalsha and noscript", in: func(p string) string {
		return ev(scriptGetKey, 1, p+"k") + mb("EVALSHA", scriptSHA(scriptGetKey), "1", p+"k") + mb("SET", p+"k", "v") +
			mb("EVALSHA", scriptSHA(scriptGetKey), "1", p+"k") + mb("EVALSHA", strings.ToUpper(scriptSHA(scriptGetKey)), "1", p+"k") +
			mb("EVALSHA", scriptSHA("return 'never loaded "+p+"'"), "0") + mb("EVALSHA", "abc", "0") + mb("EVALSHA", scriptSHA(scriptGetKey)+"0", "1", p+"k") +
			mb("EVALSHA", "", "0") + mb("EVALSHA_RO", scriptSHA(scriptGetKey), "1", p+"k") +
			mb("EVALSHA_RO", scriptSHA("return 'never loaded ro "+p+"'"), "0") + ev(scriptSetKey, 1, p+"k", "w") +
			mb("EVALSHA_RO", scriptSHA(scriptSetKey), "1", p+"k", "z") + mb("EVALSHA", scriptSHA(scriptSetKey), "1", p+"k", "z") + mb("GET", p+"k")
	}},
	{name: "script load exists", in: func(p string) string {
		src := "return 'loaded " + p + "'"
		return mb("SCRIPT", "EXISTS", scriptSHA(src)) + mb("SCRIPT", "LOAD", src) + mb("SCRIPT", "EXISTS", scriptSHA(src)) +
			mb("SCRIPT", "EXISTS", scriptSHA(src), scriptSHA(src+" "), strings.ToUpper(scriptSHA(src)), "x") + mb("EVALSHA", scriptSHA(src), "0") +
			mb("SCRIPT", "LOAD", src) + mb("script", "load", "#!lua flags=no-writes\n"+src) + mb("EVALSHA_RO", scriptSHA("#!lua flags=no-writes\n"+src), "0") +
			mb("SCRIPT", "LOAD", "return +") + mb("SCRIPT", "LOAD", "#!lua flags=nope\nreturn 1") + mb("SCRIPT", "LOAD", "") +
			mb("SCRIPT") + mb("SCRIPT", "LOAD") + mb("SCRIPT", "LOAD", "a", "b") + mb("SCRIPT", "EXISTS") + mb("SCRIPT", "FOO") +
			mb("SCRIPT", "KILL") + mb("SCRIPT", "KILL", "x") +
			mb("SCRIPT", "HELP") + mb("SCRIPT", "FLUSH", "FOO") + mb("SCRIPT", "FLUSH", "SYNC", "ASYNC")
	}},
	{name: "script debug", in: func(p string) string {
		return mb("SCRIPT", "DEBUG") + mb("SCRIPT", "DEBUG", "NO") + mb("SCRIPT", "DEBUG", "maybe") + mb("SCRIPT", "DEBUG", "no", "x")
	}},
	{name: "script flush", global: true, in: func(p string) string {
		src := "return 'flushed " + p + "'"
		return mb("SCRIPT", "LOAD", src) + mb("SCRIPT", "EXISTS", scriptSHA(src)) + mb("SCRIPT", "FLUSH") + mb("SCRIPT", "EXISTS", scriptSHA(src)) +
			mb("EVALSHA", scriptSHA(src), "0") + ev0(src) + mb("SCRIPT", "EXISTS", scriptSHA(src)) + mb("SCRIPT", "FLUSH", "SYNC") +
			mb("SCRIPT", "EXISTS", scriptSHA(src)) + mb("SCRIPT", "LOAD", src) + mb("SCRIPT", "FLUSH", "async") + mb("EVALSHA", scriptSHA(src), "0") +
			mb("SCRIPT", "FLUSH", "ASYNC", "x")
	}},
	{name: "scripts in multi", in: func(p string) string {
		return mb("MULTI") + ev(scriptSetKey, 1, p+"m", "1") + mb("EVALSHA", scriptSHA("return 'absent "+p+"'"), "0") + ev0("return {1, {2}}") +
			ev0("return redis.call('nope')") + mb("EVAL_RO", scriptGetKey, "1", p+"m") + mb("EXEC") +
			mb("MULTI") + mb("EVAL", "return 1", "x") + mb("EXEC") + mb("GET", p+"m")
	}},

	{name: "scripts and watch", in: func(p string) string {
		return mb("SET", p+"w", "v") + mb("WATCH", p+"w") + ev(scriptSetKey, 1, p+"w", "changed") + mb("MULTI") + mb("GET", p+"w") + mb("EXEC") +
			mb("WATCH", p+"w") + mb("EVAL_RO", scriptGetKey, "1", p+"w") + mb("MULTI") + mb("GET", p+"w") + mb("EXEC") +
			mb("WATCH", p+"w") + ev("return redis.call('set', KEYS[1], 'x', 'NX')", 1, p+"w") + mb("MULTI") + mb("GET", p+"w") + mb("EXEC") +
			mb("WATCH", p+"w") + mb("MULTI") + ev("return redis.call('incr', KEYS[1])", 1, p+"w") + mb("EXEC")
	}},
	// Time stands still inside a script: a key that expires 1 ms after
	// it is set is there for each of 3000 calls that follow, and TIME
	// answers the same at the end as at the start (Redis 7.2 freezes TIME
	// in a script too, so no loop can wait for the clock; whether 1 ms
	// passed in the loop does not change a reply).
	{name: "time frozen in a script", in: func(p string) string {
		const loop = "local t = redis.call('time')\nlocal seen = 0\n" +
			"for i = 1, 3000 do seen = seen + redis.call('exists', KEYS[1]) end\n" +
			"local u = redis.call('time')\nlocal same = tostring(t[1] == u[1] and t[2] == u[2])\n"
		return ev("redis.call('set', KEYS[1], 'v', 'px', 1)\n"+loop+
			"return {redis.call('get', KEYS[1]), seen, same}", 1, p+"t") +
			ev("redis.call('set', KEYS[1], 'v', 'px', 1)\n"+loop+"return {redis.call('pexpire', KEYS[1], 1), same}", 1, p+"u")
	}},

	// Lua -> RESP.
	{name: "lua numbers to resp", in: func(p string) string {
		return ev0("return 3.99") + ev0("return -3.99") + ev0("return 0.5") + ev0("return -0.5") + ev0("return -0") +
			ev0("return 2^53") + ev0("return 2^53 + 1") + ev0("return -2^63") + ev0("return 9007199254740993") + ev0("return 1e18") +
			ev0("return {1.9, -1.9, 100, -100, 0}") + ev0("return 123456789012") + ev0("return 0x10") + ev0("return 1e-300")
	}},
	// Past long long: C's conversion of an out-of-range double, as Redis
	// does it on x86-64.
	{name: "lua huge numbers to resp", in: func(p string) string {
		return ev0("return 1e20") + ev0("return -1e20") + ev0("return 2^63") + ev0("return math.huge") + ev0("return -math.huge") + ev0("return 0/0")
	}},
	{name: "lua number formatting", in: func(p string) string {
		return ev0("return tostring(3.5)") + ev0("return tostring(0.1)") + ev0("return tostring(1/3)") + ev0("return tostring(1e15)") +
			ev0("return tostring(1e16)") + ev0("return tostring(2^53)") + ev0("return tostring(-0.0)") + ev0("return tostring(1e300*10)") +
			ev0("return tostring(-1e300*10)") + ev0("return 1.5 .. ''") + ev0("return 10 .. ''") + ev0("return tostring(123456789012345678)") +
			ev0("return string.format('%d %5.2f %s %x %q', 42, 3.14159, 'x', 255, 'a\\nb')") + ev0("return tostring(tonumber('0x1F'))") +
			ev0("return tostring(tonumber('  12  '))") + ev0("return tostring(tonumber('1e2'))") + ev0("return tostring(tonumber('abc'))") +
			ev0("return tostring(tonumber('10', 2))") + ev0("return tostring(7 % 3) .. tostring(-7 % 3) .. tostring(7.5 % 2)") +
			ev0("return tostring(math.floor(-3.5)) .. ' ' .. tostring(math.ceil(-3.5)) .. ' ' .. tostring(math.fmod(7, 3))") +
			ev0("return tostring(math.max(1, 5, 3)) .. tostring(math.min(2, -1)) .. tostring(math.abs(-4)) .. tostring(math.sqrt(16))")
	}},
	{name: "lua types to resp", in: func(p string) string {
		return ev0("return true") + ev0("return false") + ev0("return nil") + ev0("return {}") + ev0("return {1, nil, 3}") +
			ev0("return {1, {2, {3, {}}}, 'x'}") + ev0("return {'a', true, false, 'b'}") + ev0("return {ok='fine'}") + ev0("return {err='bad thing'}") +
			ev0("return {err='ERR bad'}") + ev0("return {ok='x', 1, 2}") + ev0("return {err='e', ok='o'}") + ev0("return {1, {ok='nested'}, {err='nested err'}}") +
			ev0("return {err=1}") + ev0("return {ok=2}") + ev0("return {ok={}}") + ev0("return 'a\\0b\\255\\r\\n'") +
			ev0("return {[1]='one', [2]='two', [4]='four'}") + ev0("return {nil, 2}") + ev0("return {x=1}") + ev0("return print") +
			ev0("return function() end") + ev0("return coroutine.create(function() end)") + ev0("return {function() end, 2}") +
			ev0("return string.rep('x', 1000)") + ev0("return ''") + ev0("return {''}") + ev0("return {double=1.5}") +
			ev0("return {map={a=1}}") + ev0("return {set={a=true}}") + ev0("return {big_number='123'}")
	}},
	{name: "status and error replies", in: func(p string) string {
		return ev0("return redis.status_reply('FINE')") + ev0("return redis.error_reply('MYERR custom')") + ev0("return redis.error_reply('no code')") +
			ev0("return redis.error_reply('ERR x')") + ev0("return redis.error_reply('a\\r\\nb')") + ev0("return {err='x\\ny'}") + ev0("return {ok='a\\r\\nb'}") +
			ev0("return redis.status_reply('a\\nb')") + ev0("return redis.error_reply('')") + ev0("return redis.error_reply('-ERR dash')") +
			ev0("return redis.status_reply()") + ev0("return redis.error_reply()") + ev0("return redis.status_reply(1)") + ev0("return redis.error_reply({})") +
			ev0("local t = redis.status_reply('S'); return {type(t), t.ok}") + ev0("local t = redis.error_reply('E x'); return {type(t), t.err}") +
			ev0("return {redis.status_reply('in array'), redis.error_reply('ERR in array')}")
	}},
	{name: "lua errors", in: func(p string) string {
		return ev0("error('boom')") + ev0("error('boom', 0)") + ev0("error({err='MYERR table error'})") + ev0("error({err='no code'})") +
			ev0("error()") + ev0("error(42)") + ev0("error(redis.error_reply('ERR via error_reply'))") +
			ev0("local x = 1\nlocal y = 2\nerror('on line three')") + ev0("local function f()\n  error('deep')\nend\nf()") +
			ev0("return pcall(error, 'caught')") + ev0("local ok, e = pcall(error, 'caught'); return {tostring(ok), e}") +
			ev0("local ok, e = pcall(error, {err='T'}); return e.err") + ev0("assert(false)") + ev0("assert(false, 'assert msg')") +
			ev0("assert(nil, {err='ERR assert table'})") +
			ev0("local ok, e = pcall(error, {}); return {tostring(ok), type(e)}")
	}},
	// Lua 5.1's own messages, which gopher-lua words differently: kept in
	// a session of their own.
	{name: "lua runtime and compile errors", in: func(p string) string {
		return ev0("return 1 +") + ev0("return x y") + ev0("local t = {} return t.a.b") + ev0("local t = nil; return t[1]") + ev0("return 1 + {}") +
			ev0("return #nil") + ev0("local s = 'a' .. {}") + ev0("return nope()") + ev0("return ('x')()") + ev0("return string.rep()") +
			ev0("return 1 < 'x'") + ev0("for i = 1, 'x' do end") + ev0("return (1)[2]") + ev0("local a = {}; a = a + 1") + ev0("return math.floor('x')") +
			ev0("break") + ev0("return 'unfinished") + ev0("goto x") + ev0("return tostring()") + mb("SCRIPT", "LOAD", "x = = 1")
	}},

	// RESP -> Lua through redis.call and redis.pcall.
	{name: "resp to lua", in: func(p string) string {
		return mb("SET", p+"s", "v") + mb("RPUSH", p+"l", "a", "b", "c") + mb("ZADD", p+"z", "1.5", "m", "2", "n") +
			ev("local r = redis.call('incr', KEYS[1]); return {type(r), r}", 1, p+"i") +
			ev("local r = redis.call('get', KEYS[1]); return {type(r), r}", 1, p+"s") +
			ev("local r = redis.call('get', KEYS[1]); return {type(r), tostring(r)}", 1, p+"nope") +
			ev("local r = redis.call('set', KEYS[1], 'w'); return {type(r), r.ok}", 1, p+"s") +
			ev("local r = redis.call('ping'); return r", 0) + ev("return redis.call('ping')", 0) +
			ev("local r = redis.call('lrange', KEYS[1], 0, -1); return {type(r), #r, r[1], r[3]}", 1, p+"l") +
			ev("return redis.call('lrange', KEYS[1], 0, -1)", 1, p+"l") + ev("return redis.call('lrange', KEYS[1], 5, 6)", 1, p+"l") +
			ev("local r = redis.call('lrange', KEYS[1], 5, 6); return {type(r), #r}", 1, p+"l") +
			ev("return redis.call('zrange', KEYS[1], 0, -1, 'withscores')", 1, p+"z") +
			ev("local r = redis.pcall('incr', KEYS[1]); return {type(r), r.err}", 1, p+"s") +
			ev("return redis.pcall('incr', KEYS[1])", 1, p+"s") + ev("return redis.pcall('nope')", 0) +
			ev("local r = redis.pcall('nope'); return r.err", 0) + ev("return redis.call('mget', KEYS[1], KEYS[2], KEYS[3])", 3, p+"s", p+"nope", p+"i") +
			ev("local r = redis.call('mget', KEYS[1], KEYS[2], KEYS[3]); return {type(r[2]), tostring(r[2]), r[3]}", 3, p+"s", p+"nope", p+"i") +
			ev("return redis.call('zscore', KEYS[1], 'm')", 1, p+"z") + ev("return redis.call('incrbyfloat', KEYS[1], '0.25')", 1, p+"f") +
			ev("return redis.call('type', KEYS[1])", 1, p+"l") + ev("return redis.call('exists', KEYS[1], KEYS[2])", 2, p+"s", p+"l") +
			ev("return redis.call('echo', '')", 0) + ev("return redis.call('hgetall', KEYS[1])", 1, p+"nope") +
			ev("return redis.call('smembers', KEYS[1])", 1, p+"nope") + ev("return redis.call('zscore', KEYS[1], 'nope')", 1, p+"z") +
			mb("HSET", p+"h", "f1", "v1", "f2", "v2") + ev("return redis.call('hgetall', KEYS[1])", 1, p+"h") +
			ev("return redis.call('zmpop', 1, KEYS[1], 'min')", 1, p+"z") + ev("local r = redis.call('zmpop', 1, KEYS[1], 'min'); return {r[1], r[2][1][1], r[2][1][2]}", 1, p+"z") +
			ev("return redis.call('zmpop', 1, KEYS[1], 'min')", 1, p+"z") + ev("return redis.call('hscan', KEYS[1], 0, 'match', 'f1')", 1, p+"h") +
			ev("return redis.call('lpos', KEYS[1], 'b', 'count', 0)", 1, p+"l") + ev("return redis.call('smismember', KEYS[1], 'a', 'b')", 1, p+"nope")
	}},
	{name: "many keys and args", in: func(p string) string {
		args := []string{"EVAL", "return {#KEYS, #ARGV, KEYS[1], KEYS[100], ARGV[1], ARGV[50]}", "100"}
		for i := range 100 {
			args = append(args, p+strconv.Itoa(i))
		}
		for i := range 50 {
			args = append(args, "arg"+strconv.Itoa(i))
		}
		return mb(args...) + ev("local t = {} for i = 1, 200 do t[i] = i end return t", 0) +
			ev("return string.rep('ab', 50000)", 0) + ev("local t = {} for i = 1, 60 do t = {t} end return t", 0)
	}},
	{name: "redis.call arguments", in: func(p string) string {
		return ev("return redis.call('set', KEYS[1], 5)", 1, p+"a") + mb("GET", p+"a") + ev("return redis.call('set', KEYS[1], 1.5)", 1, p+"a") +
			mb("GET", p+"a") + ev("return redis.call('set', KEYS[1], 1e20)", 1, p+"a") + mb("GET", p+"a") +
			ev("return redis.call('set', KEYS[1], -0.1)", 1, p+"a") + mb("GET", p+"a") + ev("return redis.call('set', KEYS[1], 2^53)", 1, p+"a") +
			mb("GET", p+"a") + ev("return redis.call('set', KEYS[1], 1/3)", 1, p+"a") + mb("GET", p+"a") +
			ev("return redis.call('set', KEYS[1], true)", 1, p+"a") + ev("return redis.call('set', KEYS[1], nil)", 1, p+"a") +
			ev("return redis.call('set', KEYS[1], {})", 1, p+"a") + ev0("return redis.call()") + ev0("return redis.pcall()") +
			ev0("return redis.call(1)") + ev0("return redis.call({})") + ev("return redis.call('SET', KEYS[1], 'upper')", 1, p+"a") +
			ev("return redis.call('get', KEYS[1], nil, 'x')", 1, p+"a") + ev("return redis.call('set', KEYS[1], 'a\\0b')", 1, p+"b") +
			mb("GET", p+"b") + ev("return redis.pcall('set', KEYS[1], true)", 1, p+"a") + ev0("return redis.pcall({})")
	}},
	{name: "redis.call errors", in: func(p string) string {
		return mb("SET", p+"s", "v") + ev("return redis.call('lpush', KEYS[1], 'x')", 1, p+"s") + ev0("return redis.call('nosuchcommand')") +
			ev0("return redis.call('get')") + ev0("return redis.call('get', 'a', 'b')") + ev0("return redis.call('blpop', 'x', 0)") +
			ev0("return redis.call('brpop', 'x', 0)") + ev0("return redis.call('multi')") + ev0("return redis.call('exec')") +
			ev0("return redis.call('subscribe', 'x')") + ev0("return redis.call('psubscribe', 'x')") + ev0("return redis.call('eval', 'return 1', 0)") +
			ev0("return redis.call('evalsha', 'x', 0)") + ev0("return redis.call('script', 'load', 'return 1')") +
			ev0("return redis.call('fcall', 'x', 0)") + ev0("return redis.call('watch', 'x')") + ev0("return redis.call('client', 'pause', 1)") +
			ev0("return redis.call('function', 'flush')") + ev0("return redis.call('quit')") + ev0("return redis.call('hello', '3')") +
			ev0("return redis.call('auth', 'x')") + ev0("return redis.call('reset')") + ev0("return redis.call('blmove', 'a', 'b', 'left', 'left', 0)") +
			ev0("return redis.pcall('blpop', 'x', 0)") + ev0("return redis.pcall('get')") + ev("return redis.pcall('lpush', KEYS[1], 'x')", 1, p+"s") +
			ev("local r = redis.pcall('lpush', KEYS[1], 'x'); return {r.err}", 1, p+"s") +
			ev("local x = 1\nlocal y = redis.call('incr', KEYS[1])\nreturn y", 1, p+"s") +
			ev("local ok, e = pcall(redis.call, 'incr', KEYS[1]); return {tostring(ok), type(e), e.err}", 1, p+"s") +
			ev("return redis.call('incrby', KEYS[1], 'x')", 1, p+"n") + ev("return redis.call('set', KEYS[1], 'v', 'ex', 0)", 1, p+"n") +
			ev0("return redis.call('select', 0)") + ev0("return redis.call('ping', 'a', 'b')") +
			ev0("return redis.call('config', 'nope')") + ev0("return redis.call('client', 'nope')") +
			ev0("return redis.call('object', 'nope')")
	}},
	{name: "eval_ro and writes", in: func(p string) string {
		return mb("SET", p+"k", "v") + mb("EVAL_RO", scriptGetKey, "1", p+"k") + mb("EVAL_RO", scriptSetKey, "1", p+"k", "w") +
			mb("EVAL_RO", "return redis.pcall('set', KEYS[1], 'w')", "1", p+"k") + mb("EVAL_RO", "return redis.call('del', KEYS[1])", "1", p+"k") +
			mb("EVAL_RO", "return redis.call('incr', KEYS[1])", "1", p+"i") + mb("GET", p+"k") + mb("EXISTS", p+"i") +
			mb("EVAL_RO", "return redis.call('ping')", "0") + mb("EVAL_RO", "return redis.call('publish', 'ch', 'm')", "0") +
			mb("EVAL_RO", "return redis.call('expire', KEYS[1], 10)", "1", p+"k") + mb("EVAL_RO", "#!lua\nreturn redis.call('get', KEYS[1])", "1", p+"k") +
			mb("EVAL_RO", "#!lua flags=no-writes\nreturn redis.call('get', KEYS[1])", "1", p+"k") +
			mb("EVAL_RO", "#!lua flags=no-writes\nreturn redis.call('set', KEYS[1], 'x')", "1", p+"k") +
			mb("eval_ro", "return redis.call('type', KEYS[1])", "1", p+"k")
	}},
	{name: "write after a failed write", in: func(p string) string {
		return ev("redis.call('set', KEYS[1], 'a')\nreturn redis.call('lpush', KEYS[1], 'x')", 1, p+"k") + mb("GET", p+"k") +
			ev("redis.call('set', KEYS[1], 'b')\nerror('after write')", 1, p+"k") + mb("GET", p+"k") +
			ev("redis.pcall('lpush', KEYS[1], 'x')\nreturn redis.call('append', KEYS[1], 'c')", 1, p+"k") + mb("GET", p+"k")
	}},

	// RESP3 inside scripts: redis.setresp(3) and what each reply type
	// becomes in Lua and back.
	{name: "setresp 3 conversions", in: func(p string) string {
		r3 := "redis.setresp(3)\n"
		return mb("HSET", p+"h", "f1", "v1", "f2", "v2") + mb("HSET", p+"h1", "only", "1") + mb("SADD", p+"s", "member") +
			mb("ZADD", p+"z", "1.5", "m", "-2", "n") + mb("SET", p+"str", "v") + mb("RPUSH", p+"l", "a") +
			ev(r3+"local r = redis.call('hgetall', KEYS[1]); return {type(r), type(r.map), r.map.f1, r.map.f2}", 1, p+"h") +
			ev(r3+"return redis.call('hgetall', KEYS[1])", 1, p+"h1") + ev(r3+"return redis.call('hgetall', KEYS[1])", 1, p+"nope") +
			ev(r3+"local r = redis.call('smembers', KEYS[1]); return {type(r.set), tostring(r.set.member)}", 1, p+"s") +
			ev(r3+"return redis.call('smembers', KEYS[1])", 1, p+"s") + ev(r3+"return redis.call('smembers', KEYS[1])", 1, p+"nope") +
			ev(r3+"local r = redis.call('zscore', KEYS[1], 'm'); return {type(r), type(r.double), tostring(r.double)}", 1, p+"z") +
			ev(r3+"return redis.call('zscore', KEYS[1], 'm')", 1, p+"z") + ev(r3+"return redis.call('zscore', KEYS[1], 'n')", 1, p+"z") +
			ev(r3+"return redis.call('zrange', KEYS[1], 0, -1, 'withscores')", 1, p+"z") +
			ev(r3+"return redis.call('zincrby', KEYS[1], 0.25, 'm')", 1, p+"z") + ev(r3+"return redis.call('incrbyfloat', KEYS[1], 1.5)", 1, p+"f") +
			ev(r3+"local r = redis.call('get', KEYS[1]); return {type(r), tostring(r)}", 1, p+"nope") +
			ev(r3+"return redis.call('get', KEYS[1])", 1, p+"nope") + ev(r3+"return redis.call('get', KEYS[1])", 1, p+"str") +
			ev(r3+"local r = redis.call('set', KEYS[1], 'v'); return r.ok", 1, p+"str") + ev(r3+"return redis.call('set', KEYS[1], 'v')", 1, p+"str") +
			ev(r3+"return redis.call('incr', KEYS[1])", 1, p+"i") + ev(r3+"return redis.call('lrange', KEYS[1], 0, -1)", 1, p+"l") +
			ev(r3+"return redis.pcall('incr', KEYS[1])", 1, p+"str") + ev(r3+"return redis.call('zscore', KEYS[1], 'x')", 1, p+"z") +
			ev(r3+"return redis.call('hrandfield', KEYS[1], 1, 'withvalues')", 1, p+"h1") +
			ev(r3+"return redis.call('mget', KEYS[1], KEYS[2])", 2, p+"str", p+"nope")
	}},
	{name: "setresp 3 replies", in: func(p string) string {
		r3 := "redis.setresp(3)\n"
		return ev0(r3+"return true") + ev0(r3+"return false") + ev0(r3+"return {true, false}") + ev0(r3+"return nil") +
			ev0(r3+"return {double=2.5}") + ev0(r3+"return {double=3}") + ev0(r3+"return {double=-0.1}") + ev0(r3+"return {double='x'}") +
			ev0(r3+"return {map={k='v'}}") + ev0(r3+"return {map={}}") + ev0(r3+"return {set={m=true}}") + ev0(r3+"return {set={}}") +
			ev0(r3+"return {big_number='1234567890123456789012345678901234567890'}") + ev0(r3+"return {map={k={1, 2}}}") +
			ev0(r3+"return {1, {map={a={set={b=true}}}}}") + ev0(r3+"return {double=1/0}") + ev0(r3+"return {double=-1/0}") +
			ev0("redis.setresp(2)\nreturn {double=2.5}") + ev0("redis.setresp(2)\nreturn true") + ev0("redis.setresp(2)\nreturn false") +
			ev0(r3+"redis.setresp(2)\nreturn false")
	}},
	{name: "setresp errors", in: func(p string) string {
		return ev0("redis.setresp()") + ev0("redis.setresp(4)") + ev0("redis.setresp(1)") + ev0("redis.setresp('3'); return 1") +
			ev0("redis.setresp('x')") + ev0("redis.setresp(2, 3)") + ev0("redis.setresp(3.5)") + ev0("return redis.setresp(3)")
	}},

	// The environment.
	{name: "sandbox globals", in: func(p string) string {
		return ev0("a = 1") + ev0("return undefinedvar") + ev0("_G.x = 1") + ev0("rawset(_G, 'x', 1)") + ev0("return rawget(_G, 'nothere')") +
			ev0("setmetatable(_G, nil)") + ev0("return type(getmetatable(_G))") + ev0("redis = nil") + ev0("redis.call = nil") +
			ev0("redis.newfield = 1") + ev0("string.rep = nil") + ev0("string.x = 1") + ev0("math.pi = 3") + ev0("table.insert = nil") +
			ev0("cjson.encode = nil") + ev0("local t = {}; t.x = 1; return t.x") + ev0("local KEYS = 1; return KEYS") + ev0("KEYS = 1") +
			ev0("KEYS[1] = 'x'; return KEYS[1]") + ev0("ARGV[5] = 'y'; return #ARGV") + ev0("function f() end") +
			ev0("local function f() return 7 end; return f()") + ev0("return _G == getfenv(0)") + ev0("local mt = getmetatable(_G); mt.__index = nil") +
			ev0("return _VERSION") + ev0("return type(_G)")
	}},
	{name: "sandbox libraries", in: func(p string) string {
		ty := func(names ...string) string {
			var b strings.Builder
			for _, n := range names {
				b.WriteString(ev0("return type(" + n + ")"))
			}
			return b.String()
		}
		return ty("os", "io", "loadfile", "dofile", "require", "module", "package", "print", "debug", "newproxy", "gcinfo",
			"collectgarbage", "loadstring", "load", "pcall", "xpcall", "unpack", "select", "next", "ipairs", "pairs", "rawequal",
			"setfenv", "getfenv", "coroutine", "string", "table", "math", "bit", "cjson", "cmsgpack", "struct", "redis",
			"math.random", "math.randomseed", "string.dump", "table.getn", "table.foreach", "math.mod", "string.gfind",
			"redis.call", "redis.pcall", "redis.breakpoint", "redis.debug", "redis.set_repl", "redis.replicate_commands",
			"redis.acl_check_cmd", "redis.register_function", "redis.setresp", "redis.log", "redis.sha1hex", "cjson.null", "__redis__err__handler") +
			ev0("return os.time()") + ev0("return io.write('x')") + ev0("return print('x')") + ev0("dofile('/etc/passwd')") +
			ev0("loadfile('/etc/passwd')") + ev0("return require('os')")
	}},
	{name: "loadstring and friends", in: func(p string) string {
		return ev0("return loadstring('return 1 + 1')()") + ev0("local f, e = loadstring('return +'); return {tostring(f), type(e)}") +
			ev0("return loadstring(string.dump(function() return 1 end))") + ev0("local f = loadstring('x = 1'); return pcall(f)") +
			ev0("return select('#', 1, 2, 3)") + ev0("return select(2, 'a', 'b', 'c')") + ev0("return unpack({1, 2, 3})") +
			ev0("return {unpack({1, 2, 3})}") + ev0("return table.concat({1, 'a', 2}, '-')") + ev0("local t = {3, 1, 2}; table.sort(t); return t") +
			ev0("local t = {}; table.insert(t, 'a'); table.insert(t, 1, 'b'); return t") + ev0("return table.getn({1, 2})") +
			ev0("return {string.byte('AB', 1, 2)}") + ev0("return string.char(72, 105)") + ev0("return {string.find('hello', 'l+')}") +
			ev0("return string.gsub('hello world', 'o', '0')") + ev0("return {string.match('key:123', '(%a+):(%d+)')}") +
			ev0("return string.upper('abc') .. string.lower('DEF') .. string.reverse('xyz') .. string.len('four')") +
			ev0("return string.sub('hello', 2, -2)") + ev0("local n = 0; for w in string.gmatch('a b c', '%a') do n = n + 1 end; return n") +
			ev0("return xpcall(function() error('x') end, function(e) return 'handled' end)") +
			ev0("local co = coroutine.wrap(function() coroutine.yield(1) end); return co()") +
			ev0("local t = setmetatable({}, {__index = function(t, k) return k .. '!' end}); return t.hey") +
			ev0("local t = {}; for k, v in ipairs({'a', 'b'}) do t[#t + 1] = k .. v end; return t") + ev0("return math.pi > 3") +
			ev0("return tostring(next({}))") + ev0("return rawequal('a', 'a')") + ev0("return #'abc'")
	}},
	// Redis's own generator (redisLrand48), one sequence for the whole
	// server: each script seeds it first, so what other scripts drew
	// before does not matter.
	{name: "math.random after randomseed", in: func(p string) string {
		return ev0("math.randomseed(42); return tostring(math.random())") +
			ev0("math.randomseed(42); return {math.random(1000), math.random(1000), math.random(5, 10), math.random(-3, -1)}") +
			ev0("math.randomseed(0); return tostring(math.random())") + ev0("math.randomseed(7); local t = {} for i = 1, 5 do t[i] = math.random(100) end return t") +
			ev0("math.randomseed(1); return math.random(0)") + ev0("math.randomseed(1); return math.random(3, 1)") + ev0("math.randomseed(1); return math.random(1, 2, 3)") +
			ev0("math.randomseed(-5); return tostring(math.random())") + ev0("math.randomseed(2^40); return tostring(math.random())") +
			ev0("math.randomseed(1.5); return tostring(math.random())") + ev0("return math.randomseed()") + ev0("return math.randomseed('x')")
	}},
	{name: "redis helpers", in: func(p string) string {
		return ev0("return redis.sha1hex('')") + ev0("return redis.sha1hex('abc')") + ev0("return redis.sha1hex(123)") + ev0("return redis.sha1hex()") +
			ev0("return redis.sha1hex('a', 'b')") + ev0("return redis.sha1hex({})") + ev0("return redis.REDIS_VERSION") + ev0("return redis.REDIS_VERSION_NUM") +
			ev0("return redis.log(redis.LOG_WARNING, 'script log line')") + ev0("return {redis.LOG_DEBUG, redis.LOG_VERBOSE, redis.LOG_NOTICE, redis.LOG_WARNING}") +
			ev0("return redis.log(redis.LOG_DEBUG, 'a', 'b', 1)") + ev0("return redis.log()") + ev0("return redis.log(1)") + ev0("return redis.log(99, 'x')") +
			ev0("return redis.log('x', 'y')") + ev0("return redis.replicate_commands()") + ev0("return redis.set_repl(redis.REPL_ALL)") +
			ev0("return {redis.REPL_NONE, redis.REPL_AOF, redis.REPL_SLAVE, redis.REPL_REPLICA, redis.REPL_ALL}") + ev0("return redis.set_repl(99)") +
			ev0("return redis.set_repl()") + ev0("return redis.acl_check_cmd('get', 'x')") + ev0("return redis.acl_check_cmd('nosuchcommand')") +
			ev0("return redis.acl_check_cmd()") + ev0("return redis.breakpoint()") + ev0("return redis.debug('x')") +
			ev0("return redis.register_function('f', function() end)")
	}},
	{name: "shebang flags", in: func(p string) string {
		return ev("#!lua\nreturn redis.call('set', KEYS[1], 'x')", 1, p+"k") + ev("#!lua flags=no-writes\nreturn redis.call('set', KEYS[1], 'x')", 1, p+"k") +
			ev("#!lua flags=no-writes\nreturn redis.call('get', KEYS[1])", 1, p+"k") + ev("#!lua flags=allow-oom\nreturn redis.call('incr', KEYS[1])", 1, p+"i") +
			ev("#!lua flags=allow-stale\nreturn 1", 0) + ev("#!lua flags=no-cluster\nreturn 2", 0) + ev("#!lua flags=allow-cross-slot-keys\nreturn 3", 0) +
			ev("#!lua flags=no-writes,allow-oom,allow-stale,no-cluster,allow-cross-slot-keys\nreturn 4", 0) + ev("#!lua flags=\nreturn 5", 0) +
			ev("#!lua flags=bogus\nreturn 6", 0) + ev("#!lua flags=no-writes,bogus\nreturn 7", 0) + ev("#!lua flags=no-writes,\nreturn 8", 0) +
			ev("#!lua flags=NO-WRITES\nreturn 9", 0) + ev("#!luax\nreturn 10", 0) + ev("#!js\nreturn 11", 0) + ev("#!lua name=x\nreturn 12", 0) +
			ev("#! lua\nreturn 13", 0) + ev("#!lua  flags=no-writes\nreturn 14", 0) + ev("#!lua flags=no-writes flags=allow-oom\nreturn 15", 0) +
			ev("#!lua", 0) + ev("#!lua\n", 0) + ev("#!lua\nerror('line two')", 0) + ev("#!lua\n\nreturn redis.call('nope')", 0) +
			ev(" #!lua\nreturn 16", 0) + ev("#!lua flags=no-writes\r\nreturn 17", 0) + ev("#!\nreturn 18", 0) +
			ev("#!lua flags=no-writes\nreturn redis.pcall('set', KEYS[1], 'x')", 1, p+"k") + mb("GET", p+"k")
	}},
	// A script with a shebang must declare its keys in cluster mode only;
	// here a shebang script may touch undeclared keys as any script can.
	{name: "shebang and undeclared keys", in: func(p string) string {
		return ev("#!lua\nreturn redis.call('set', ARGV[1], 'v')", 0, p+"u") + ev("return redis.call('get', ARGV[1])", 0, p+"u") +
			ev("#!lua flags=no-writes\nreturn redis.call('get', ARGV[1])", 0, p+"u")
	}},

	// The libraries.
	{name: "cjson", in: func(p string) string {
		return ev0("return cjson.encode({1, 2, 3})") + ev0("return cjson.encode('str')") + ev0("return cjson.encode(1.5)") + ev0("return cjson.encode({a=1})") +
			ev0("return cjson.encode(true)") + ev0("return cjson.encode(nil)") + ev0("return cjson.encode({})") + ev0("return cjson.encode({{}, {1, {2}}})") +
			ev0("return cjson.encode({[1]=1, [3]=3})") + ev0("return cjson.encode({[20]=1})") + ev0("return cjson.encode(function() end)") +
			ev0("return cjson.encode('\"\\\\/\\n\\r\\t\\0\\1\\127\\200')") + ev0("return cjson.encode(0.1)") + ev0("return cjson.encode(1/3)") +
			ev0("return cjson.encode(1e100)") + ev0("return cjson.encode(-0)") + ev0("return cjson.encode(100)") + ev0("return cjson.encode(2^53)") +
			ev0("return cjson.encode(math.huge)") + ev0("return cjson.encode(0/0)") + ev0("return cjson.encode(cjson.null)") +
			ev0("return cjson.encode({a={b={c={}}}})") + ev0("return cjson.encode({1, 'two', false, cjson.null})") + ev0("return cjson.encode()") +
			ev0("return cjson.encode({[true]=1})") + ev0("return cjson.encode({['1']=1})") + ev0("return cjson.encode({[1.5]=1})") +
			ev0("local t = {}; t[1] = t; return cjson.encode(t)") + ev0("return cjson.encode({{a='b'}})")
	}},
	{name: "cjson decode", in: func(p string) string {
		return ev0("return cjson.decode('[1,2,3]')") + ev0("local t = cjson.decode('{\"a\":[1,2,{\"b\":null}]}'); return {t.a[1], t.a[2], type(t.a[3].b)}") +
			ev0("return cjson.decode('\"str\"')") + ev0("return cjson.decode('1e2')") + ev0("return cjson.decode('-0.5')") + ev0("return tostring(cjson.decode('0.1'))") +
			ev0("return cjson.decode('true')") + ev0("return cjson.decode('false')") + ev0("return cjson.decode('null') == cjson.null") +
			ev0("return cjson.decode('x')") + ev0("return cjson.decode('')") + ev0("return cjson.decode('[1,2')") + ev0("return cjson.decode('{\"a\" 1}')") +
			ev0("return cjson.decode('\"\\\\u00e9\\\\u20ac\"')") + ev0("return cjson.decode('\"\\\\ud83d\\\\ude00\"')") + ev0("return cjson.decode('\"\\\\x\"')") +
			ev0("return cjson.decode('[1] x')") + ev0("return tostring(cjson.decode('12345678901234567890'))") + ev0("return cjson.decode()") +
			ev0("return cjson.decode(5)") + ev0("return cjson.encode(cjson.decode('{\"k\":[true,false,null,1.25,\"s\"]}'))") +
			ev0("return cjson.decode('  [ ]  ')") + ev0("return cjson.decode('{}')") + ev0("return cjson.decode('NaN')") + ev0("return cjson.decode('[Infinity]')") +
			ev0("return cjson.decode('0x10')") + ev0("return cjson.decode('\"a\\tb\"')") + ev0("return cjson.decode('[' .. string.rep('[', 1100) .. string.rep(']', 1101))") +
			ev0("return cjson.encode(cjson.decode('[1e400]'))") + ev0("return cjson.decode('{\"a\":1,\"a\":2}').a")
	}},
	{name: "cjson settings", in: func(p string) string {
		return ev0("return {cjson.encode_keep_buffer()}") + ev0("return {cjson.encode_max_depth()}") + ev0("return {cjson.decode_max_depth()}") +
			ev0("return {cjson.encode_number_precision()}") + ev0("return type(cjson.new)") + ev0("return cjson.encode_invalid_numbers()") +
			ev0("return {cjson.encode_sparse_array()}") + ev0("return {cjson.decode_invalid_numbers()}")
	}},
	{name: "cmsgpack", in: func(p string) string {
		return ev0("return cmsgpack.pack(1, 2)") + ev0("return cmsgpack.pack({1, 2, 3})") + ev0("return cmsgpack.pack('abc')") + ev0("return cmsgpack.pack(1.5)") +
			ev0("return cmsgpack.pack(-1)") + ev0("return cmsgpack.pack(-33)") + ev0("return cmsgpack.pack(200)") + ev0("return cmsgpack.pack(70000)") +
			ev0("return cmsgpack.pack(2^40)") + ev0("return cmsgpack.pack(-2^40)") + ev0("return cmsgpack.pack(true, false)") + ev0("return cmsgpack.pack(nil)") +
			ev0("return cmsgpack.pack({a=1})") + ev0("return cmsgpack.pack({})") + ev0("return cmsgpack.pack(string.rep('x', 40))") +
			ev0("return cmsgpack.pack(string.rep('x', 300))") + ev0("return cmsgpack.pack(0.1)") + ev0("return cmsgpack.pack({1, {2, {3}}})") +
			ev0("return cmsgpack.pack()") + ev0("return cmsgpack.pack(function() end)") +
			ev0("return cmsgpack.unpack(cmsgpack.pack({1, 2, 3}))") + ev0("return {cmsgpack.unpack(cmsgpack.pack(1, 'two', 3))}") +
			ev0("local t = cmsgpack.unpack(cmsgpack.pack({k='v'})); return t.k") + ev0("return tostring(cmsgpack.unpack(cmsgpack.pack(1.5)))") +
			ev0("return cmsgpack.unpack(cmsgpack.pack(-2^40))") + ev0("return cmsgpack.unpack('')") + ev0("return cmsgpack.unpack('\\193')") +
			ev0("return cmsgpack.unpack('\\146\\1')") + ev0("return {cmsgpack.unpack_one(cmsgpack.pack(7, 8))}") +
			ev0("return {cmsgpack.unpack_limit(cmsgpack.pack(1, 2, 3), 2)}") + ev0("return cmsgpack.unpack('\\203\\63\\248\\0\\0\\0\\0\\0\\0') == 1.5") +
			ev0("return {cmsgpack.unpack('\\192\\194\\195')}") + ev0("return cmsgpack.unpack()") + ev0("return cmsgpack.pack(1e300)") +
			ev0("return cmsgpack.pack(4294967296)") + ev0("return cmsgpack.pack(-2147483649)") + ev0("return cmsgpack.pack(string.rep('y', 70000)):sub(1, 8)")
	}},
	{name: "bit", in: func(p string) string {
		return ev0("return bit.band(0xff, 0x0f)") + ev0("return bit.bor(1, 2, 4)") + ev0("return bit.bxor(5, 3)") + ev0("return bit.bnot(0)") +
			ev0("return bit.lshift(1, 31)") + ev0("return bit.rshift(-1, 28)") + ev0("return bit.arshift(-256, 4)") + ev0("return bit.rol(0x12345678, 8)") +
			ev0("return bit.ror(0x12345678, 8)") + ev0("return bit.tobit(2^32 + 5)") + ev0("return bit.tohex(65535, 4)") + ev0("return bit.tohex(-1)") +
			ev0("return bit.tohex(255, -4)") + ev0("return bit.bswap(0x12345678)") + ev0("return bit.band()") + ev0("return bit.band('x')") +
			ev0("return bit.lshift(1, 40)") + ev0("return bit.tobit(1.5)") + ev0("return bit.tohex(1)") + ev0("return bit.band('12', 10)")
	}},
	{name: "struct", in: func(p string) string {
		return ev0("return struct.pack('>I2', 258)") + ev0("return {struct.unpack('>I2', '\\1\\2')}") + ev0("return struct.size('i4')") +
			ev0("return struct.pack('<d', 1.5)") + ev0("return struct.pack('s', 'abc')") + ev0("return struct.pack('c3', 'abcdef')") +
			ev0("return {struct.unpack('<i4', struct.pack('<i4', -2))}") + ev0("return struct.pack('>b B h H l L', -1, 255, -2, 65535, -3, 7)") +
			ev0("return struct.size('>!4 b i8 d')") + ev0("return struct.pack('x?', 1)") + ev0("return struct.unpack('>I4', 'ab')") +
			ev0("return struct.pack('i17', 1)") + ev0("return {struct.unpack('c0', 'abc')}") + ev0("return {struct.unpack('bc0', '\\3abcd')}") +
			ev0("return struct.size('s')") + ev0("return struct.pack()") + ev0("return tostring(struct.unpack('<f', struct.pack('<f', 0.5)))") +
			ev0("return {struct.unpack('>I2', '\\0\\1\\0\\2', 3)}") + ev0("return struct.pack('<i8', 2^53)")
	}},

	// The functions engine. Libraries are server-wide: these sessions are
	// global, and each starts from FUNCTION FLUSH.
	{name: "function load and fcall", global: true, in: func(p string) string {
		return mb("FUNCTION", "FLUSH") + mb("FUNCTION", "LOAD", lib1) + mb("FCALL", "f1", "1", p+"k", "v") + mb("GET", p+"k") +
			mb("FCALL_RO", "f1", "1", p+"k", "v") + mb("FUNCTION", "LOAD", lib1) + mb("FUNCTION", "LOAD", "REPLACE", lib1v2) +
			mb("FCALL", "f1", "0") + mb("fcall", "F1", "0") + mb("FCALL", "nosuch", "0") + mb("FCALL_RO", "nosuch", "0") + mb("FCALL") + mb("FCALL", "f1") +
			mb("FCALL", "f1", "-1") + mb("FCALL", "f1", "x") + mb("FCALL", "f1", "3", "a") + mb("FUNCTION", "LOAD", libFlags) +
			mb("SET", p+"r", "read me") + mb("FCALL_RO", "ro", "1", p+"r") + mb("FCALL", "ro", "1", p+"r") + mb("FUNCTION", "LOAD", libMulti) +
			mb("FCALL", "double", "0", "21") + mb("FCALL", "wr", "1", p+"n") + mb("FCALL_RO", "wr", "1", p+"n") + mb("FCALL_RO", "rd", "1", p+"n") +
			mb("FCALL", "fail", "0") + mb("FCALL", "raise", "0") + mb("FCALL", "args", "2", p+"a", p+"b", "x", "y") + mb("FCALL", "helper", "0") +
			mb("FUNCTION", "STATS") + mb("FUNCTION", "DELETE", "lib1") + mb("FCALL", "f1", "0") + mb("FUNCTION", "DELETE", "lib1") +
			mb("FUNCTION", "DELETE") + mb("FUNCTION", "STATS") + mb("FUNCTION", "FLUSH", "ASYNC") + mb("FUNCTION", "STATS") + mb("FCALL", "double", "0", "1")
	}},
	{name: "function list", global: true, in: func(p string) string {
		return mb("FUNCTION", "FLUSH") + mb("FUNCTION", "LIST") + mb("FUNCTION", "LOAD", lib1) + mb("FUNCTION", "LIST") +
			mb("FUNCTION", "LIST", "WITHCODE") + mb("FUNCTION", "LIST", "LIBRARYNAME", "lib*") + mb("FUNCTION", "LIST", "LIBRARYNAME", "nomatch") +
			mb("FUNCTION", "LIST", "withcode", "libraryname", "lib1") + mb("FUNCTION", "LIST", "LIBRARYNAME") + mb("FUNCTION", "LIST", "FOO") +
			mb("FUNCTION", "LIST", "WITHCODE", "WITHCODE") + mb("FUNCTION", "LIST", "LIBRARYNAME", "a", "LIBRARYNAME", "b") +
			mb("FUNCTION", "LOAD", libFlags) + mb("FUNCTION", "LIST", "LIBRARYNAME", "libflags") + mb("FUNCTION", "LIST", "LIBRARYNAME", "libflags", "WITHCODE") +
			mb("FUNCTION", "FLUSH", "SYNC") + mb("FUNCTION", "LIST")
	}},
	// Flags are listed in Redis's order, not in the order given.
	{name: "function flags", global: true, in: func(p string) string {
		lib := "#!lua name=allflags\nredis.register_function{function_name='fl', callback=function(keys, args) return 1 end, " +
			"flags={'allow-cross-slot-keys', 'no-cluster', 'allow-stale', 'allow-oom', 'no-writes'}, description=''}"
		return mb("FUNCTION", "FLUSH") + mb("FUNCTION", "LOAD", lib) + mb("FUNCTION", "LIST") + mb("FCALL_RO", "fl", "0") + mb("FCALL", "FL", "0") +
			mb("FUNCTION", "DELETE", "ALLFLAGS") + mb("FUNCTION", "DELETE", "allflags") + mb("FUNCTION", "LOAD", "#!lua name=CaseLib\n"+
			"redis.register_function('CaseFn', function() return 'case' end)") + mb("FCALL", "casefn", "0") + mb("FUNCTION", "LIST", "LIBRARYNAME", "case*") +
			mb("FUNCTION", "LIST", "LIBRARYNAME", "Case*") + mb("FUNCTION", "LOAD", "#!lua name=caselib\nredis.register_function('other', function() return 1 end)") +
			mb("FUNCTION", "DELETE", "CaseLib") + mb("FUNCTION", "FLUSH")
	}},
	{name: "function list after hello 3", global: true, hello3: true, in: func(p string) string {
		return mb("FUNCTION", "FLUSH") + mb("FUNCTION", "LOAD", libFlags) + mb("FUNCTION", "LIST", "WITHCODE") + mb("FUNCTION", "STATS") +
			mb("FUNCTION", "FLUSH")
	}},
	{name: "function load errors", global: true, in: func(p string) string {
		load := func(code string) string { return mb("FUNCTION", "LOAD", code) }
		return mb("FUNCTION", "FLUSH") + load("return 1") + load("#!lua\nreturn 1") + load("#!lua name=\nreturn 1") + load("#!lua name=lib-1\nreturn 1") +
			load("#!lua name=lib 1\nreturn 1") + load("#!js name=x1\nreturn 1") + load("#!lua name=x foo=bar\nreturn 1") + load("#!lua name=x2\nreturn 1") +
			load("#!lua name=x3\nreturn +") + load("#!lua name=x4\nerror('at load')") + load("#!lua name=x5\nredis.register_function('f')") +
			load("#!lua name=x6\nredis.register_function('f', 1)") + load("#!lua name=x7\nredis.register_function('bad-name', function() end)") +
			load("#!lua name=x8\nredis.register_function('', function() end)") +
			load("#!lua name=x9\nredis.register_function('f', function() end)\nredis.register_function('f', function() end)") +
			load("#!lua name=x10\nredis.register_function{function_name='f', callback=function() end, flags={'bogus'}}") +
			load("#!lua name=x11\nredis.register_function{function_name='f', callback=function() end, flags='no-writes'}") +
			load("#!lua name=x12\nredis.register_function{function_name='f', callback=function() end, description=1}") +
			mb("FUNCTION", "LIST", "LIBRARYNAME", "x12") + load("#!lua name=x13\nredis.register_function{function_name='f', callback=function() end, nope=1}") +
			load("#!lua name=x14\nredis.register_function{function_name='f'}") + load("#!lua name=x15\nredis.register_function{callback=function() end}") +
			load("#!lua name=x16\nredis.register_function()") + load("#!lua name=x17\nredis.register_function('a', function() end, 'extra')") +
			load("#!lua name=x18\nredis.call('set', 'k', 'v')") + load("#!lua name=x19\nreturn redis.pcall('ping')") + load("#!lua name=x20\nredis.setresp(3)") +
			load("#!lua name=x21\nredis.log(redis.LOG_NOTICE, 'loading')\nredis.register_function('ok1', function() return 1 end)") +
			load("#!lua name=x21\nredis.register_function('ok2', function() return 1 end)") +
			load("#!lua name=y\nredis.register_function('ok1', function() return 1 end)") +
			load("#!lua name=z\nlocal r = redis.REDIS_VERSION\nredis.register_function('ver', function() return r end)") + mb("FCALL", "ver", "0") +
			load("#!lua name=w\nx = 1\nredis.register_function('w', function() return 1 end)") +
			load("#!lua name=v\nredis.register_function('v', function() return os.time() end)") + mb("FCALL", "v", "0") +
			mb("FUNCTION", "LOAD") + mb("FUNCTION", "LOAD", "REPLACE") + mb("FUNCTION", "LOAD", "FOO", "#!lua name=q\nreturn 1") + mb("FUNCTION") +
			mb("FUNCTION", "FOO") + mb("FUNCTION", "KILL") + mb("FUNCTION", "HELP") + mb("FUNCTION", "STATS", "x") + mb("FUNCTION", "FLUSH", "FOO") +
			mb("FUNCTION", "FLUSH")
	}},
	{name: "function runtime", global: true, in: func(p string) string {
		lib := "#!lua name=rt\n" +
			"redis.register_function('resp3', function(keys, args) redis.setresp(3) return redis.call('hgetall', keys[1]) end)\n" +
			"redis.register_function('glob', function(keys, args) newglobal = 1 end)\n" +
			"redis.register_function('reg', function(keys, args) return type(redis.register_function) end)\n" +
			"redis.register_function('ret', function(keys, args) return {1, 'two', {ok='three'}, false, 1.5} end)\n" +
			"redis.register_function('e', function(keys, args) return redis.call('lpush', keys[1], 'x') end)\n" +
			"redis.register_function('pe', function(keys, args) return redis.pcall('lpush', keys[1], 'x') end)\n" +
			"redis.register_function{function_name='nw', callback=function(keys, args) return redis.call('set', keys[1], 'x') end, flags={'no-writes'}}\n" +
			"redis.register_function('evalin', function(keys, args) return redis.call('eval', 'return 1', 0) end)\n" +
			"redis.register_function('fcallin', function(keys, args) return redis.call('fcall', 'ret', 0) end)\n" +
			"redis.register_function('vars', function(keys, args) return {type(KEYS), type(ARGV)} end)"
		return mb("FUNCTION", "FLUSH") + mb("FUNCTION", "LOAD", lib) + mb("HSET", p+"h", "f", "v") + mb("SET", p+"s", "v") +
			mb("FCALL", "resp3", "1", p+"h") + mb("FCALL", "glob", "0") + mb("FCALL", "reg", "0") + mb("FCALL", "ret", "0") + mb("FCALL", "e", "1", p+"s") +
			mb("FCALL", "pe", "1", p+"s") + mb("FCALL", "nw", "1", p+"s") + mb("FCALL_RO", "nw", "1", p+"s") + mb("FCALL", "evalin", "0") +
			mb("FCALL", "fcallin", "0") + mb("FCALL", "vars", "0") + mb("MULTI") + mb("FCALL", "ret", "0") + mb("FCALL", "nosuch", "0") + mb("EXEC") +
			mb("FUNCTION", "FLUSH")
	}},
	// Calling register_function at run time: Lua's error names the nil
	// field, gopher-lua's does not (docs/redis.md, Scripting).
	{name: "function register at run time", global: true, in: func(p string) string {
		lib := "#!lua name=late\nredis.register_function('reg', function(keys, args) redis.register_function('late', function() end) end)"
		return mb("FUNCTION", "FLUSH") + mb("FUNCTION", "LOAD", lib) + mb("FCALL", "reg", "0") + mb("FUNCTION", "FLUSH")
	}},
	{name: "function dump restore", global: true, in: func(p string) string {
		payload := functionDumpPayload(lib1)
		// Not restored over both of its libraries with APPEND: which of the
		// two Redis names in the error depends on its dict order.
		two := string(rdbSeal(append(rdbAppendString([]byte{245}, []byte(lib1)), rdbAppendString([]byte{245}, []byte(libFlags))...)))
		preGA := string(rdbSeal(rdbAppendString([]byte{246}, []byte("lib1"))))
		return mb("FUNCTION", "FLUSH") + mb("FUNCTION", "DUMP") + mb("FUNCTION", "LOAD", lib1) + mb("FUNCTION", "DUMP") + mb("FUNCTION", "FLUSH") +
			mb("FUNCTION", "RESTORE", payload) + mb("FUNCTION", "LIST") + mb("FCALL", "f1", "1", p+"k", "restored") + mb("GET", p+"k") +
			mb("FUNCTION", "RESTORE", payload) + mb("FUNCTION", "RESTORE", payload, "APPEND") + mb("FUNCTION", "RESTORE", payload, "REPLACE") +
			mb("FUNCTION", "RESTORE", payload, "FLUSH") + mb("FUNCTION", "RESTORE", payload, "FOO") + mb("FUNCTION", "LIST", "LIBRARYNAME", "lib1") +
			mb("FUNCTION", "RESTORE", "garbage") + mb("FUNCTION", "RESTORE", "") + mb("FUNCTION", "RESTORE", payload[:len(payload)-1]+"x") +
			mb("FUNCTION", "RESTORE", functionDumpPayload("#!lua name=lib1\nreturn +")) + mb("FUNCTION", "RESTORE", payload, "REPLACE", "x") +
			mb("FUNCTION", "RESTORE") + mb("FUNCTION", "DUMP", "x") + mb("FUNCTION", "FLUSH") +
			mb("FUNCTION", "RESTORE", functionDumpPayload(libFlags)) + mb("FUNCTION", "LIST") + mb("FUNCTION", "FLUSH") +
			mb("FUNCTION", "RESTORE", two) + mb("FUNCTION", "STATS") + mb("FCALL", "f1", "1", p+"k2", "two") + mb("FCALL_RO", "ro", "1", p+"k2") +
			mb("FUNCTION", "DELETE", "libflags") + mb("FUNCTION", "RESTORE", two, "APPEND") + mb("FUNCTION", "STATS") +
			mb("FUNCTION", "RESTORE", two, "REPLACE") + mb("FUNCTION", "RESTORE", payload, "FLUSH") + mb("FUNCTION", "STATS") +
			mb("FUNCTION", "RESTORE", preGA) + mb("FUNCTION", "RESTORE", string(rdbSeal([]byte{245}))) + mb("FUNCTION", "RESTORE", string(rdbSeal(nil))) +
			mb("FUNCTION", "STATS") + mb("FUNCTION", "FLUSH")
	}},
	// FUNCTION RESTORE's policies and payload errors, LIST's patterns
	// (matched without case), the metadata line and names. Not a library
	// of two functions whose names differ only in case: redis-server
	// 7.2.4 (as 7.0.15) loads it, FCALL finds either (dict order), and FUNCTION
	// DELETE of it crashes the server.
	{name: "function restore policies and patterns", global: true, in: func(p string) string {
		other := "#!lua name=other\nredis.register_function('f1', function() return 'other' end)"
		dup := string(rdbSeal(append(rdbAppendString([]byte{245}, []byte(other)), rdbAppendString([]byte{245}, []byte(other))...)))
		preGA := string(rdbSeal(rdbAppendString(rdbAppendLen(rdbAppendString(rdbAppendString([]byte{246}, []byte("old")), []byte("LUA")), 0),
			[]byte("redis.register_function('oldf', function() return 'pre-GA' end)"))))
		notFunc := string(rdbSeal(rdbAppendString([]byte{0}, []byte("k"))))
		list := func(pattern string) string { return mb("FUNCTION", "LIST", "LIBRARYNAME", pattern) }
		return mb("FUNCTION", "FLUSH") + mb("FUNCTION", "LOAD", lib1) + mb("FUNCTION", "RESTORE", functionDumpPayload(other)) +
			mb("FUNCTION", "RESTORE", functionDumpPayload(other), "replace") + mb("FUNCTION", "RESTORE", dup, "FLUSH") +
			mb("FCALL", "f1", "1", p+"k", "v") + mb("FUNCTION", "RESTORE", preGA) + mb("FCALL", "oldf", "0") + mb("FUNCTION", "DELETE", "old") +
			mb("FUNCTION", "RESTORE", notFunc) + mb("FUNCTION", "RESTORE", string(rdbSeal([]byte{245, 0x80, 0, 0, 0, 9}))) +
			list("?ib1") + list("[a-l]ib*") + list("*1") + list("LIB1") + list("lib\\1") + list("") + list("*") + list("x*") +
			mb("FUNCTION", "LOAD", "REPLACE", "REPLACE", "#!LUA name=lib1\nredis.register_function('F_2', function() return 2 end)") +
			mb("FCALL", "f_2", "0") + mb("FCALL", "f1", "0") + mb("FUNCTION", "LOAD", "#!lua NAME=n2\nredis.register_function(123, function() return 3 end)") +
			mb("FCALL", "123", "0") + mb("FUNCTION", "LOAD", "#!lua name=a name=b\nreturn 1") + mb("FUNCTION", "LOAD", "#!lua") +
			mb("FUNCTION", "LOAD", "#!lua name=n4\nredis.register_function{function_name='d', callback=function() end, flags={1}}") +
			mb("FUNCTION", "LOAD", "#!lua name=n5\nredis.register_function{function_name='d', callback=function() end, description=2.5, flags={'NO-WRITES'}}") +
			list("n5") + mb("FCALL_RO", "d", "0") + mb("FCALL", "123", "01") + mb("FCALL", "123", "+0") + mb("FCALL", "123", " 0") +
			mb("FUNCTION", "LOAD", "#!lua name=n6\nredis.register_function{function_name='e', callback=function() end, [true]=1}") +
			mb("FUNCTION", "FLUSH")
	}},
	// The script flags against a full memory: a script without flags runs
	// and its write is refused inside; one with a shebang is refused
	// before it runs unless allow-oom. The last global session: it leaves
	// maxmemory at 0 (no limit) on both.
	{name: "scripts when out of memory", global: true, in: func(p string) string {
		return mb("SET", p+"k", "v") + mb("CONFIG", "SET", "maxmemory-policy", "noeviction") + mb("CONFIG", "SET", "maxmemory", "1") +
			ev("return redis.call('set', KEYS[1], 'x')", 1, p+"k") + ev("return redis.pcall('set', KEYS[1], 'x')", 1, p+"k") +
			ev("return redis.call('get', KEYS[1])", 1, p+"k") + ev("#!lua\nreturn redis.call('get', KEYS[1])", 1, p+"k") +
			ev("#!lua flags=no-writes\nreturn redis.call('get', KEYS[1])", 1, p+"k") +
			ev("#!lua flags=allow-oom\nreturn redis.call('set', KEYS[1], 'x')", 1, p+"k") +
			ev("#!lua flags=allow-oom\nreturn redis.call('get', KEYS[1])", 1, p+"k") + mb("EVAL_RO", "return redis.call('get', KEYS[1])", "1", p+"k") +
			mb("FUNCTION", "FLUSH") + mb("CONFIG", "SET", "maxmemory", "0") + mb("FUNCTION", "LOAD", libMulti) + mb("CONFIG", "SET", "maxmemory", "1") +
			mb("FCALL", "wr", "1", p+"n") + mb("FCALL", "rd", "1", p+"k") + mb("FCALL_RO", "rd", "1", p+"k") + mb("FUNCTION", "LOAD", lib1) +
			mb("CONFIG", "SET", "maxmemory", "0") + mb("FUNCTION", "FLUSH") + mb("GET", p+"k")
	}},
}

func init() {
	// A Lua error whose message holds a newline: Redis 7.2.4 writes it
	// into the error line raw, so a lone LF breaks the line (the reply is
	// malformed RESP) and a CRLF ends the reply early and injects what
	// follows as another reply. MiniKV turns CR and LF into spaces, as
	// Redis 7.0 did and later Redis does again (docs/redis.md,
	// Scripting).
	respDiffOnlySessions = append(respDiffOnlySessions, respSession{name: "script error with a newline",
		in: ev0("error('with newline\\nin it')") + ev0("error('crlf\\r\\n+INJECTED')") + ev0("error({err='ERR table\\nerror'})")})
	respKnownDiffs["script error with a newline"] = struct {
		difference string
		minikv     string
		closed     bool
	}{"a script's error with CR or LF in it has them as spaces",
		"-ERR user_script:1: with newline in it script: 6a5c02627023ceb9f271cb892d70ef776dd2a9ad, on @user_script:1.\r\n" +
			"-ERR user_script:1: crlf  +INJECTED script: 02423659e89d1483d3f3f9e807dc519d7206844d, on @user_script:1.\r\n" +
			"-ERR table error script: d95496bc96f837db9b0b7578c5adf8aae260dade, on @user_script:1.\r\n$7\r\n__end__\r\n", false}
}

// scriptRESPSessions is every script session over RESP2 and again after
// HELLO 3 (its reply skipped: it carries ids), each with its own key
// prefix; the hello3 ones run only after HELLO 3.
func scriptRESPSessions() (parallel, global []respSession) {
	for i, s := range scriptSessions {
		resp3 := respSession{name: s.name + " resp3", skip: 1, in: mb("HELLO", "3") + s.in(fmt.Sprintf("sc%d.3:", i))}
		runs := []respSession{{name: s.name, in: s.in(fmt.Sprintf("sc%d.2:", i))}, resp3}
		if s.hello3 {
			runs = runs[1:]
		}
		if s.global {
			global = append(global, runs...)
		} else {
			parallel = append(parallel, runs...)
		}
	}
	return parallel, global
}

// requireScripting skips the test when the MiniKV at addr answers EVAL as
// an unknown command, unless MINIKV_SCRIPT_DIFF=1 asks for the run anyway.
func requireScripting(t *testing.T, addr string) {
	t.Helper()
	if os.Getenv("MINIKV_SCRIPT_DIFF") == "1" {
		return
	}
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	if _, err := io.WriteString(nc, ev0("return 1")); err != nil {
		t.Fatal(err)
	}
	_ = nc.SetReadDeadline(time.Now().Add(diffRESPWait))
	reply, err := readRESPReply(bufio.NewReader(nc))
	if err != nil {
		t.Fatalf("EVAL probe: %v", err)
	}
	if strings.HasPrefix(reply, "-ERR unknown command") {
		t.Skip("scripting (issue 38) not merged yet: MiniKV answers EVAL with " + strings.TrimSpace(reply) + "; MINIKV_SCRIPT_DIFF=1 runs it anyway")
	}
}

// TestScriptDifferential compares the script sessions with redis-server:
// the parallel ones together, then the global ones one at a time.
// scriptSessionsPending are the sessions MiniKV does not pass yet, each
// with why: functions are the rest of issue 38, and the others meet a
// difference listed in docs/redis.md ("Scripting"). They are skipped with
// their reason (MINIKV_SCRIPT_DIFF=1 runs them), so what passes stays
// checked; a session leaves this list when MiniKV passes it.
var scriptSessionsPending = map[string]string{
	"function register at run time":  "gopher-lua words calling a nil field its own way (docs/redis.md, Scripting)",
	"script debug":                   "SCRIPT DEBUG is not served (no Lua debugger; docs/redis.md, Scripting)",
	"loadstring and friends":         "gopher-lua has no string.dump (docs/redis.md, Scripting)",
	"lua number formatting":          "gopher-lua formats %q and numbers in .. with its own precision (docs/redis.md, Scripting)",
	"lua runtime and compile errors": "gopher-lua words some runtime and compile errors its own way (docs/redis.md, Scripting)",
	"redis helpers":                  "gopher-lua words calling a nil field its own way (docs/redis.md, Scripting)",
	"sandbox globals":                "gopher-lua's # of a table with holes differs (docs/redis.md, Scripting)",
}

func TestScriptDifferential(t *testing.T) {
	rs := startRESP(t, server.Config{}, store.Config{})
	requireScripting(t, rs.respAddr)
	redisAddr := startRedisServer(t)
	parallel, global := scriptRESPSessions()
	compare := func(t *testing.T, s respSession) {
		if why, ok := scriptSessionsPending[strings.TrimSuffix(s.name, " resp3")]; ok && os.Getenv("MINIKV_SCRIPT_DIFF") != "1" {
			t.Skip(why)
		}
		want := runRESPSession(redisAddr, s)
		got := runRESPSession(rs.respAddr, s)
		if want.err != nil || got.err != nil {
			t.Fatalf("redis: %v; minikv: %v", want.err, got.err)
		}
		if !sameRESPReplies(s, got, want) || got.closed != want.closed {
			t.Errorf("session %q differs%s\nredis  (closed %v): %.6000q\nminikv (closed %v): %.6000q",
				s.name, firstReplyDiff(s, got, want, "minikv"), want.closed, want.out, got.closed, got.out)
		}
	}
	t.Run("parallel", func(t *testing.T) {
		for _, s := range parallel {
			t.Run(s.name, func(t *testing.T) {
				t.Parallel()
				compare(t, s)
			})
		}
	})
	for _, s := range global {
		t.Run(s.name, func(t *testing.T) { compare(t, s) })
	}
}

// firstReplyDiff names the first reply that differs and its request, so a
// long session's failure points at one script; other names the server
// that sent got.
func firstReplyDiff(s respSession, got, want respDiffResult, other string) string {
	reqs := sessionRequests(s.in)
	for i := range min(len(got.replies), len(want.replies)) {
		if got.replies[i] != want.replies[i] {
			req := ""
			if j := i + s.skip; j < len(reqs) {
				req = reqs[j]
			}
			return fmt.Sprintf(" at reply %d, request %.500q:\nredis: %.1000q\n%s: %.1000q", i, req, want.replies[i], other, got.replies[i])
		}
	}
	if len(got.replies) != len(want.replies) {
		return fmt.Sprintf(": redis sent %d replies, %s %d", len(want.replies), other, len(got.replies))
	}
	return ""
}

// TestScriptSessionsDeterministic runs every script session on two fresh
// redis-servers (on the second, the global ones in reverse order), and
// requires the same bytes: a session that fails here compares nothing
// about MiniKV.
func TestScriptSessionsDeterministic(t *testing.T) {
	a, b := startRedisServer(t), startRedisServer(t)
	parallel, global := scriptRESPSessions()
	results := func(addr string, reverse bool) map[string]respDiffResult {
		out := make(map[string]respDiffResult)
		done := make(chan struct{})
		type named struct {
			name string
			res  respDiffResult
		}
		ch := make(chan named)
		for _, s := range parallel {
			go func() { ch <- named{s.name, runRESPSession(addr, s)} }()
		}
		go func() {
			for range parallel {
				n := <-ch
				out[n.name] = n.res
			}
			close(done)
		}()
		<-done
		for i := range global {
			s := global[i]
			if reverse {
				s = global[len(global)-1-i]
			}
			out[s.name] = runRESPSession(addr, s)
		}
		return out
	}
	ra, rb := results(a, false), results(b, true)
	for _, s := range append(parallel, global...) {
		x, y := ra[s.name], rb[s.name]
		if x.err != nil || y.err != nil {
			t.Errorf("%s: %v; %v", s.name, x.err, y.err)
			continue
		}
		if !sameRESPReplies(s, x, y) || x.closed != y.closed {
			t.Errorf("session %q is not deterministic on redis-server%s", s.name, firstReplyDiff(s, y, x, "2nd redis"))
		}
		if n := len(sessionRequests(s.in)) - s.skip + 1; len(x.replies) != n {
			t.Errorf("session %q: %d replies for %d requests (and the end marker)", s.name, len(x.replies), n-1)
		}
		if testing.Verbose() && os.Getenv("MINIKV_SCRIPT_DIFF_SHOW") == "1" {
			reqs := sessionRequests(s.in)
			for i, r := range x.replies {
				req := "__end__"
				if j := i + s.skip; j < len(reqs) {
					req = reqs[j]
				}
				t.Logf("%s #%d %.300q\n    -> %.600q", s.name, i, req, r)
			}
		}
	}
}

// sessionRequests is each request of in, its arguments quoted and joined
// by spaces, for failure messages.
func sessionRequests(in string) []string {
	r := resp.NewReader(strings.NewReader(in), 1<<20, 1<<20)
	var out []string
	for {
		argv, err := r.Read()
		if err != nil {
			return out
		}
		args := make([]string, len(argv))
		for i, a := range argv {
			args[i] = strconv.Quote(string(a))
		}
		out = append(out, strings.Join(args, " "))
	}
}

package redis

import "fmt"

// Scripting sessions compared with redis-server (TestRESPDifferential),
// each in RESP2 and after HELLO 3, with its own key prefix in place of
// {p}. Only deterministic replies: no math.random, no client ids.
func init() {
	for i, s := range coreScriptSessions {
		respSessions = append(respSessions,
			respSession{name: "scripts " + s.name, in: setPrefixed(s.in, fmt.Sprintf("scr%d.2:", i))},
			respSession{name: "scripts " + s.name + " resp3", skip: 1, in: mb("HELLO", "3") + setPrefixed(s.in, fmt.Sprintf("scr%d.3:", i))})
	}
}

var coreScriptSessions = []respSession{
	{name: "lua to resp", in: mb("EVAL", "return {1,2,3,'ciao',{1,2}}", "0") + mb("EVAL", "return 3.99", "0") +
		mb("EVAL", "return -3.99", "0") + mb("EVAL", "return {1,2,nil,3}", "0") + mb("EVAL", "return true", "0") +
		mb("EVAL", "return false", "0") + mb("EVAL", "return nil", "0") + mb("EVAL", "return {err='boom'}", "0") +
		mb("EVAL", "return {ok='fine'}", "0") + mb("EVAL", "return redis.error_reply('My Error')", "0") +
		mb("EVAL", "return redis.error_reply('-X y')", "0") + mb("EVAL", "return redis.status_reply('FINE')", "0") +
		mb("EVAL", "return {ok='a\\r\\nb'}", "0") + mb("EVAL", "return {err='x\\n'}", "0") + mb("EVAL", "return 3.5e20", "0") +
		mb("EVAL", "return {double=3.5}", "0") + mb("EVAL", "return {double=0.1}", "0") + mb("EVAL", "return {big_number='123'}", "0") +
		mb("EVAL", "return {verbatim_string={format='txt',string='hi'}}", "0") + mb("EVAL", "return {map={a=1}}", "0") +
		mb("EVAL", "return {set={a=true}}", "0") + mb("EVAL", "return {1, {2, {3, {4}}}, 'x', {ok='y'}}", "0") +
		mb("EVAL", "return 'x' .. 1", "0") + mb("EVAL", "return #KEYS + #ARGV", "2", "a", "b", "c")},
	{name: "lua to resp after setresp 3", in: mb("EVAL", "redis.setresp(3) return true", "0") +
		mb("EVAL", "redis.setresp(3) return false", "0") + mb("EVAL", "redis.setresp(3) return {true, false, nil}", "0")},
	{name: "resp to lua", in: mb("SET", "{p}s", "v") + mb("HSET", "{p}h", "a", "1") + mb("RPUSH", "{p}l", "x", "y") +
		mb("EVAL", "return redis.call('get', KEYS[1])", "1", "{p}s") +
		mb("EVAL", "return redis.call('get', KEYS[1])", "1", "{p}nope") +
		mb("EVAL", "return type(redis.call('get', KEYS[1]))", "1", "{p}nope") +
		mb("EVAL", "return redis.call('set', KEYS[1], 'w')", "1", "{p}s") +
		mb("EVAL", "return redis.call('set', KEYS[1], 'w')['ok']", "1", "{p}s") +
		mb("EVAL", "return redis.call('hgetall', KEYS[1])", "1", "{p}h") +
		mb("EVAL", "return redis.call('lrange', KEYS[1], 0, -1)", "1", "{p}l") +
		mb("EVAL", "return redis.call('incr', KEYS[1])", "1", "{p}n") +
		mb("EVAL", "return redis.pcall('incr', KEYS[1])", "1", "{p}s") +
		mb("EVAL", "return redis.pcall('incr', KEYS[1])['err']", "1", "{p}s") +
		mb("EVAL", "return redis.call('exists', KEYS[1], KEYS[2])", "2", "{p}s", "{p}nope") +
		mb("EVAL", "return redis.call('set', KEYS[1], 0.1)", "1", "{p}f") + mb("GET", "{p}f") +
		mb("EVAL", "return redis.call('set', KEYS[1], 1e20)", "1", "{p}f") + mb("GET", "{p}f") +
		mb("EVAL", "return redis.call('get', 1.5)", "0")},
	{name: "resp3 to lua", in: mb("HSET", "{p}h3", "a", "1") + mb("SADD", "{p}s3", "m") + mb("ZADD", "{p}z3", "1.5", "m") +
		mb("EVAL", "redis.setresp(3) return redis.call('hgetall', KEYS[1])", "1", "{p}h3") +
		mb("EVAL", "redis.setresp(3) return redis.call('hgetall', KEYS[1]).map.a", "1", "{p}h3") +
		mb("EVAL", "redis.setresp(3) return redis.call('smembers', KEYS[1])", "1", "{p}s3") +
		mb("EVAL", "redis.setresp(3) return redis.call('zscore', KEYS[1], 'm')", "1", "{p}z3") +
		mb("EVAL", "redis.setresp(3) return redis.call('zscore', KEYS[1], 'm').double", "1", "{p}z3") +
		mb("EVAL", "redis.setresp(3) return type(redis.call('get', KEYS[1]))", "1", "{p}nope") +
		mb("EVAL", "redis.setresp(3) return redis.call('exists', KEYS[1])", "1", "{p}h3")},
	{name: "errors", in: mb("SET", "{p}s", "v") +
		mb("EVAL", "return x", "0") + mb("EVAL", "x = 1", "0") + mb("EVAL", "redis.call = 1", "0") +
		mb("EVAL", "print('x')", "0") + mb("EVAL", "return os.time()", "0") +
		mb("EVAL", "return redis.call('incr', KEYS[1])", "1", "{p}s") +
		mb("EVAL", "return redis.call('nosuch')", "0") + mb("EVAL", "return redis.call()", "0") +
		mb("EVAL", "return redis.call('get')", "0") + mb("EVAL", "return redis.call('blpop', 'x', 0)", "0") +
		mb("EVAL", "return redis.call('multi')", "0") + mb("EVAL", "return redis.call('eval', 'return 1', 0)", "0") +
		mb("EVAL", "return redis.call('get', {})", "0") + mb("EVAL", "return redis.pcall('get', {})", "0") +
		mb("EVAL", "\nerror('boom')", "0") + mb("EVAL", "error({err='XX boom'})", "0") +
		mb("EVAL", "return redis.setresp(4)", "0") +
		mb("EVAL", "local ok, e = pcall(function() redis.call('nosuch') end) return e", "0") +
		mb("EVAL", "return redis.log(9, 'x')", "0") + mb("EVAL", "return redis.log(1)", "0") +
		mb("EVAL", "return redis.sha1hex()", "0") + mb("EVAL", "return redis.set_repl(99)", "0") +
		mb("EVAL", "local function f(n) return f(n+1)+1 end return f(1)", "0") +
		mb("EVAL", "return 'a'..", "0") + mb("EVAL", "x = = 1", "0")},
	{name: "numkeys", in: mb("EVAL", "return 1", "2", "a") + mb("EVAL", "return 1", "-1") + mb("EVAL", "return 1", "x") +
		mb("EVAL", "return 1") + mb("EVALSHA", "return 1") + mb("EVAL", "return {KEYS[1], ARGV[1], #KEYS, #ARGV}", "1", "k", "a", "b")},
	{name: "evalsha and script cache", in: mb("SCRIPT", "LOAD", "return 'hello'") +
		mb("EVALSHA", "1b936e3fe509bcbc9cd0664897bbe8fd0cac101b", "0") + mb("EVALSHA", "1B936E3FE509BCBC9CD0664897BBE8FD0CAC101B", "0") +
		mb("EVALSHA_RO", "1b936e3fe509bcbc9cd0664897bbe8fd0cac101b", "0") +
		mb("EVALSHA", "0000000000000000000000000000000000000000", "0") + mb("EVALSHA", "short", "0") +
		mb("SCRIPT", "EXISTS", "1b936e3fe509bcbc9cd0664897bbe8fd0cac101b", "ffffffffffffffffffffffffffffffffffffffff") +
		mb("SCRIPT", "LOAD", "return 'a'..") + mb("SCRIPT", "LOAD") + mb("SCRIPT", "EXISTS") + mb("SCRIPT", "FLUSH", "FOO") +
		mb("SCRIPT", "FLUSH", "SYNC", "x") + mb("SCRIPT", "HELP") + mb("SCRIPT", "NOSUCH") + mb("SCRIPT") + mb("SCRIPT", "KILL")},
	{name: "read-only scripts", in: mb("EVAL_RO", "return redis.call('set', KEYS[1], 'v')", "1", "{p}k") +
		mb("EVAL_RO", "return redis.call('get', KEYS[1])", "1", "{p}k") +
		mb("EVAL_RO", "return redis.pcall('del', KEYS[1])", "1", "{p}k") +
		mb("EVAL", "#!lua flags=no-writes\nreturn redis.call('set', KEYS[1], 'v')", "1", "{p}k") +
		mb("EVAL", "#!lua flags=no-writes\nreturn redis.call('get', KEYS[1])", "1", "{p}k") +
		mb("EVAL_RO", "#!lua\nreturn 1", "0") + mb("EVAL_RO", "#!lua flags=no-writes\nreturn 1", "0") +
		mb("EVAL", "#!lua\nreturn redis.call('set', KEYS[1], 'v')", "1", "{p}k")},
	{name: "shebang", in: mb("EVAL", "#!lua", "0") + mb("EVAL", "#!python\nreturn 1", "0") +
		mb("EVAL", "#! lua\nreturn 1", "0") + mb("EVAL", "#!lua flags=foo\nreturn 1", "0") +
		mb("EVAL", "#!lua flags=no-writes,,allow-oom\nreturn 1", "0") + mb("EVAL", "#!lua  flags=no-writes\nreturn 1", "0") +
		mb("EVAL", "#!lua x=y\nreturn 1", "0") + mb("EVAL", "#!lua flags=\nreturn 1", "0") +
		mb("EVAL", "#!lua\nreturn x", "0") + mb("EVAL", "#!lua\n\nerror('on line 3')", "0")},
	{name: "sandbox", in: mb("EVAL", "return type(loadstring)", "0") + mb("EVAL", "return type(debug)", "0") +
		mb("EVAL", "return type(os)", "0") + mb("EVAL", "return type(io)", "0") + mb("EVAL", "return type(dofile)", "0") +
		mb("EVAL", "return type(coroutine)", "0") + mb("EVAL", "return _VERSION", "0") +
		mb("EVAL", "return redis.REDIS_VERSION", "0") + mb("EVAL", "return redis.REDIS_VERSION_NUM", "0") +
		mb("EVAL", "string.x = 1", "0") + mb("EVAL", "return string.format('%d-%s', 7, 'x')", "0") +
		mb("EVAL", "return ('abc'):upper()", "0") + mb("EVAL", "return table.concat({'a','b'}, ',')", "0") +
		mb("EVAL", "return math.floor(3.7)", "0") + mb("EVAL", "return tostring(nil)", "0") +
		mb("EVAL", "return redis.sha1hex('')", "0") + mb("EVAL", "return redis.replicate_commands()", "0") +
		mb("EVAL", "return redis.breakpoint()", "0") + mb("EVAL", "return redis.debug('x')", "0") +
		mb("EVAL", "return redis.set_repl(redis.REPL_ALL)", "0") + mb("EVAL", "return redis.log(redis.LOG_DEBUG, 'x')", "0") +
		mb("EVAL", "return pcall(function() error('x') end)", "0") + mb("EVAL", "return select('#', pcall(error, 'x'))", "0")},
	{name: "eval in multi", in: mb("MULTI") + mb("EVAL", "return redis.call('incr', KEYS[1])", "1", "{p}m") +
		mb("EVAL", "return redis.call('incr', KEYS[1])", "1", "{p}m") + mb("EXEC") + mb("GET", "{p}m")},
}

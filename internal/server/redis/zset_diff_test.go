package redis

import (
	"strconv"
	"strings"
	"testing"

	"github.com/minikv/minikv/internal/server"
	"github.com/minikv/minikv/internal/store"
)

// zsetSessions are the sorted set sessions of the RESP differential test:
// every command, option and error, in RESP2 and (the "resp3" ones, whose
// first reply is HELLO's) RESP3, on small and big sets, where Redis's
// order is fully defined.
var zsetSessions = []respSession{
	{name: "zadd", in: mb("ZADD", "za:a", "1", "one", "2", "two", "3", "three") + mb("ZADD", "za:a", "1", "one") + mb("ZADD", "za:a", "5", "one") +
		mb("ZRANGE", "za:a", "0", "-1", "WITHSCORES") + mb("ZADD", "za:a", "NX", "9", "one", "4", "four") + mb("ZADD", "za:a", "XX", "9", "one", "10", "ten") +
		mb("ZADD", "za:a", "XX", "CH", "8", "one", "10", "ten") + mb("ZADD", "za:a", "CH", "8", "one", "7", "two", "0", "zero") +
		mb("ZADD", "za:a", "GT", "CH", "1", "one", "100", "two") + mb("ZADD", "za:a", "LT", "CH", "1", "one", "200", "two") +
		mb("ZADD", "za:a", "GT", "XX", "CH", "300", "two", "1", "new") + mb("ZADD", "za:a", "LT", "5", "newlt") + mb("ZADD", "za:a", "gt", "5", "newgt") +
		mb("ZRANGE", "za:a", "0", "-1", "WITHSCORES") + mb("ZADD", "za:a", "INCR", "2.5", "one") + mb("ZADD", "za:a", "INCR", "NX", "1", "one") +
		mb("ZADD", "za:a", "INCR", "XX", "1", "nope") + mb("ZADD", "za:a", "INCR", "GT", "-1", "one") + mb("ZADD", "za:a", "INCR", "LT", "-1", "one") +
		mb("ZADD", "za:a", "INCR", "NX", "1", "brandnew") + mb("ZADD", "za:x", "XX", "1", "a") + mb("EXISTS", "za:x") + mb("ZADD", "za:x", "XX", "INCR", "1", "a") +
		mb("ZADD", "za:a", "0.1", "f1", "3.0", "f2", "1e300", "f3", "-inf", "f4", "+inf", "f5", "-0", "f6", "1e17", "f7", "5e-324", "f8", "0x10", "f9", "1.5e-7", "f10") +
		mb("ZRANGE", "za:a", "0", "-1", "WITHSCORES") + mb("ZSCORE", "za:a", "f6") + mb("ZSCAN", "za:a", "0") + mb("TYPE", "za:a") + mb("OBJECT", "ENCODING", "za:a")},
	{name: "zadd errors", in: mb("ZADD", "ze:a", "1") + mb("ZADD", "ze:a", "1", "a", "2") + mb("ZADD", "ze:a", "NX") + mb("ZADD", "ze:a", "NX", "XX", "1", "a") +
		mb("ZADD", "ze:a", "GT", "LT", "1", "a") + mb("ZADD", "ze:a", "NX", "GT", "1", "a") + mb("ZADD", "ze:a", "NX", "LT", "1", "a") +
		mb("ZADD", "ze:a", "INCR", "1", "a", "2", "b") + mb("ZADD", "ze:a", "x", "a") + mb("ZADD", "ze:a", "nan", "a") + mb("ZADD", "ze:a", " 1", "a") +
		mb("ZADD", "ze:a", "1 ", "a") + mb("ZADD", "ze:a", "", "a") + mb("ZADD", "ze:a", "1e400", "a") + mb("ZADD", "ze:a", "1e-400", "a") +
		mb("ZADD", "ze:a", "1", "a", "x", "b") + mb("EXISTS", "ze:a") + mb("ZADD", "ze:a", "inf", "a") + mb("ZADD", "ze:a", "INCR", "-inf", "a") +
		mb("ZINCRBY", "ze:a", "-inf", "a") + mb("ZSCORE", "ze:a", "a") + mb("ZADD", "ze:a", "INCR", "inf", "a") + mb("ZADD", "ze:a", "FOO", "1", "a") +
		mb("ZINCRBY", "ze:a", "x", "a") + mb("ZINCRBY", "ze:a", "1") + mb("ZADD", "ze:a") + mb("ZADD", "ze:a", "1", "a", "NX", "b") + mb("ZADD", "ze:a", "0x", "a") +
		mb("ZADD", "ze:a", "0x1p3", "h") + mb("ZADD", "ze:a", "0x1.8", "h2") + mb("ZADD", "ze:a", "Infinity", "h3") + mb("ZADD", "ze:a", ".5", "h4") +
		mb("ZADD", "ze:a", "5.", "h5") + mb("ZADD", "ze:a", "1e", "h6") + mb("ZADD", "ze:a", "1_0", "h7") + mb("ZRANGE", "ze:a", "0", "-1", "WITHSCORES")},
	{name: "zincrby zrem zcard zscore", in: mb("ZINCRBY", "zi:a", "1.5", "m") + mb("ZINCRBY", "zi:a", "0.1", "m") + mb("ZINCRBY", "zi:a", "-10", "n") +
		mb("ZCARD", "zi:a") + mb("ZCARD", "zi:nope") + mb("ZSCORE", "zi:a", "m") + mb("ZSCORE", "zi:a", "x") + mb("ZSCORE", "zi:nope", "x") +
		mb("ZMSCORE", "zi:a", "m", "x", "n") + mb("ZMSCORE", "zi:nope", "a", "b") + mb("ZREM", "zi:a", "m", "m", "x") + mb("ZREM", "zi:nope", "a") +
		mb("ZREM", "zi:a", "n") + mb("EXISTS", "zi:a") + mb("ZREM", "zi:a") + mb("ZMSCORE", "zi:a") + mb("ZCARD", "zi:a", "x")},
	{name: "zrank zcount zlexcount", in: mb("ZADD", "zr:a", "1", "a", "2", "b", "2", "c", "3", "d", "5", "e") + mb("ZRANK", "zr:a", "a") +
		mb("ZRANK", "zr:a", "c") + mb("ZREVRANK", "zr:a", "c") + mb("ZRANK", "zr:a", "x") + mb("ZREVRANK", "zr:nope", "x") +
		mb("ZCOUNT", "zr:a", "-inf", "+inf") + mb("ZCOUNT", "zr:a", "(1", "3") + mb("ZCOUNT", "zr:a", "2", "(3") + mb("ZCOUNT", "zr:a", "(2", "(2") +
		mb("ZCOUNT", "zr:a", "3", "1") + mb("ZCOUNT", "zr:a", "x", "1") + mb("ZCOUNT", "zr:a", "1", "((2") + mb("ZCOUNT", "zr:a", "", "2") +
		mb("ZCOUNT", "zr:a", "(", "2") + mb("ZCOUNT", "zr:a", " 1", "2") + mb("ZCOUNT", "zr:a", "1 ", "2") + mb("ZCOUNT", "zr:a", "1", "1e400") +
		mb("ZCOUNT", "zr:a", "nan", "1") + mb("ZCOUNT", "zr:a", "-1e400", "inf") + mb("ZCOUNT", "zr:nope", "1", "2") + mb("ZCOUNT", "zr:nope", "x", "2") +
		mb("ZADD", "zr:l", "0", "a", "0", "b", "0", "c", "0", "d", "0", "e") + mb("ZLEXCOUNT", "zr:l", "-", "+") + mb("ZLEXCOUNT", "zr:l", "[b", "(d") +
		mb("ZLEXCOUNT", "zr:l", "(b", "[d") + mb("ZLEXCOUNT", "zr:l", "+", "-") + mb("ZLEXCOUNT", "zr:l", "b", "d") + mb("ZLEXCOUNT", "zr:l", "[b", "+x") +
		mb("ZLEXCOUNT", "zr:l", "", "+") + mb("ZLEXCOUNT", "zr:l", "[", "(") + mb("ZLEXCOUNT", "zr:nope", "-", "+") + mb("ZLEXCOUNT", "zr:nope", "x", "+")},
	{name: "zrange", in: mb("ZADD", "zg:a", "1", "a", "2", "b", "2", "c", "3", "d", "5", "e", "5", "f") + mb("ZRANGE", "zg:a", "0", "-1") +
		mb("ZRANGE", "zg:a", "1", "3", "WITHSCORES") + mb("ZRANGE", "zg:a", "-2", "-1") + mb("ZRANGE", "zg:a", "4", "2") + mb("ZRANGE", "zg:a", "-100", "100") +
		mb("ZRANGE", "zg:a", "10", "20") + mb("ZRANGE", "zg:a", "0", "1", "REV") + mb("ZRANGE", "zg:a", "0", "-1", "REV", "WITHSCORES") +
		mb("ZRANGE", "zg:a", "2", "5", "BYSCORE") + mb("ZRANGE", "zg:a", "(2", "+inf", "BYSCORE", "WITHSCORES") + mb("ZRANGE", "zg:a", "5", "2", "BYSCORE", "REV") +
		mb("ZRANGE", "zg:a", "-inf", "+inf", "BYSCORE", "LIMIT", "1", "2") + mb("ZRANGE", "zg:a", "-inf", "+inf", "BYSCORE", "LIMIT", "1", "-1") +
		mb("ZRANGE", "zg:a", "-inf", "+inf", "BYSCORE", "LIMIT", "-1", "2") + mb("ZRANGE", "zg:a", "-inf", "+inf", "BYSCORE", "LIMIT", "10", "2") +
		mb("ZRANGE", "zg:a", "+inf", "-inf", "BYSCORE", "REV", "LIMIT", "1", "3", "WITHSCORES") + mb("ZRANGE", "zg:a", "0", "1", "LIMIT", "0", "1") +
		mb("ZRANGE", "zg:a", "0", "1", "LIMIT", "0", "-1") + mb("ZRANGE", "zg:a", "[a", "[c", "BYLEX") + mb("ZRANGE", "zg:a", "-", "+", "BYLEX", "WITHSCORES") +
		mb("ZRANGE", "zg:a", "0", "1", "BYSCORE", "BYLEX") + mb("ZRANGE", "zg:a", "0", "1", "REV", "REV") + mb("ZRANGE", "zg:a", "0", "1", "FOO") +
		mb("ZRANGE", "zg:a", "x", "1") + mb("ZRANGE", "zg:a", "x", "1", "BYSCORE") + mb("ZRANGE", "zg:a", "x", "1", "BYLEX") + mb("ZRANGE", "zg:a", "0", "1", "LIMIT", "0") +
		mb("ZRANGE", "zg:a", "0", "1", "LIMIT", "x", "1") + mb("ZRANGE", "zg:nope", "0", "-1") + mb("ZRANGE", "zg:nope", "x", "1") +
		mb("ZRANGE", "zg:a", "0", "-1", "withscores", "withscores") + mb("ZRANGE", "zg:a", "5", "5", "BYSCORE", "LIMIT", "1", "1")},
	{name: "zrange older forms", in: mb("ZADD", "zo:a", "1", "a", "2", "b", "2", "c", "3", "d", "5", "e") + mb("ZREVRANGE", "zo:a", "0", "2") +
		mb("ZREVRANGE", "zo:a", "0", "-1", "WITHSCORES") + mb("ZREVRANGE", "zo:a", "0", "1", "REV") + mb("ZREVRANGE", "zo:a", "0", "1", "BYSCORE") +
		mb("ZRANGEBYSCORE", "zo:a", "2", "3") + mb("ZRANGEBYSCORE", "zo:a", "-inf", "inf", "WITHSCORES", "LIMIT", "1", "2") +
		mb("ZRANGEBYSCORE", "zo:a", "(1", "(5") + mb("ZRANGEBYSCORE", "zo:a", "1", "2", "BYSCORE") + mb("ZRANGEBYSCORE", "zo:a", "1", "2", "REV") +
		mb("ZREVRANGEBYSCORE", "zo:a", "3", "2") + mb("ZREVRANGEBYSCORE", "zo:a", "+inf", "-inf", "WITHSCORES", "LIMIT", "0", "2") +
		mb("ZREVRANGEBYSCORE", "zo:a", "2", "3") + mb("ZADD", "zo:l", "0", "a", "0", "b", "0", "c", "0", "d") + mb("ZRANGEBYLEX", "zo:l", "-", "+") +
		mb("ZRANGEBYLEX", "zo:l", "[b", "(d") + mb("ZRANGEBYLEX", "zo:l", "-", "+", "LIMIT", "1", "2") + mb("ZRANGEBYLEX", "zo:l", "-", "+", "WITHSCORES") +
		mb("ZREVRANGEBYLEX", "zo:l", "+", "-") + mb("ZREVRANGEBYLEX", "zo:l", "(d", "[b") + mb("ZREVRANGEBYLEX", "zo:l", "+", "-", "LIMIT", "1", "1") +
		mb("ZRANGEBYLEX", "zo:l", "a", "b") + mb("ZRANGEBYSCORE", "zo:a", "a", "b") + mb("ZREVRANGE", "zo:a", "0", "1", "LIMIT", "0", "1")},
	{name: "zremrange", in: mb("ZADD", "zm:a", "1", "a", "2", "b", "3", "c", "4", "d", "5", "e", "6", "f") + mb("ZREMRANGEBYRANK", "zm:a", "0", "0") +
		mb("ZREMRANGEBYRANK", "zm:a", "-1", "-1") + mb("ZREMRANGEBYRANK", "zm:a", "5", "10") + mb("ZRANGE", "zm:a", "0", "-1") +
		mb("ZREMRANGEBYSCORE", "zm:a", "(2", "3") + mb("ZREMRANGEBYSCORE", "zm:a", "x", "3") + mb("ZREMRANGEBYRANK", "zm:a", "x", "3") +
		mb("ZRANGE", "zm:a", "0", "-1", "WITHSCORES") + mb("ZREMRANGEBYSCORE", "zm:a", "-inf", "+inf") + mb("EXISTS", "zm:a") +
		mb("ZADD", "zm:l", "0", "a", "0", "b", "0", "c", "0", "d") + mb("ZREMRANGEBYLEX", "zm:l", "(a", "[c") + mb("ZREMRANGEBYLEX", "zm:l", "x", "[c") +
		mb("ZRANGE", "zm:l", "0", "-1") + mb("ZREMRANGEBYLEX", "zm:l", "-", "+") + mb("EXISTS", "zm:l") + mb("ZREMRANGEBYRANK", "zm:nope", "0", "-1") +
		mb("ZREMRANGEBYSCORE", "zm:nope", "0", "1") + mb("ZREMRANGEBYLEX", "zm:nope", "-", "+") + mb("ZREMRANGEBYRANK", "zm:nope", "0")},
	{name: "zpop", in: mb("ZADD", "zp:a", "1", "a", "2", "b", "3", "c", "4", "d", "5", "e") + mb("ZPOPMIN", "zp:a") + mb("ZPOPMAX", "zp:a") +
		mb("ZPOPMIN", "zp:a", "2") + mb("ZPOPMAX", "zp:a", "0") + mb("ZPOPMAX", "zp:a", "10") + mb("EXISTS", "zp:a") + mb("ZPOPMIN", "zp:nope") +
		mb("ZPOPMIN", "zp:nope", "2") + mb("ZPOPMIN", "zp:nope", "0") + mb("ZPOPMIN", "zp:a", "-1") + mb("ZPOPMIN", "zp:a", "x") + mb("ZPOPMIN", "zp:a", "1", "2") +
		mb("ZADD", "zp:b", "1", "a") + mb("ZPOPMIN", "zp:b", "-1") + mb("ZPOPMIN", "zp:b", "x") + mb("ZPOPMAX", "zp:b", "1")},
	{name: "zrandmember zscan", in: mb("ZADD", "zx:a", "1", "a", "2.5", "b", "3", "c") + mb("ZRANDMEMBER", "zx:a", "3") + mb("ZRANDMEMBER", "zx:a", "10", "WITHSCORES") +
		mb("ZRANDMEMBER", "zx:a", "0") + mb("ZRANDMEMBER", "zx:nope") + mb("ZRANDMEMBER", "zx:nope", "3") + mb("ZRANDMEMBER", "zx:a", "1", "FOO") +
		mb("ZRANDMEMBER", "zx:a", "x") + mb("ZRANDMEMBER", "zx:a", "x", "FOO") + mb("ZRANDMEMBER", "zx:a", "-9223372036854775808") +
		mb("ZRANDMEMBER", "zx:a", "-9223372036854775807", "WITHSCORES") + mb("ZRANDMEMBER", "zx:a", "1", "WITHSCORES", "x") +
		mb("ZADD", "zx:one", "7", "only") + mb("ZRANDMEMBER", "zx:one") + mb("ZRANDMEMBER", "zx:one", "-3", "WITHSCORES") + mb("ZRANDMEMBER", "zx:one", "1") +
		mb("ZSCAN", "zx:a", "0") + mb("ZSCAN", "zx:a", "0", "MATCH", "[ab]", "COUNT", "1") + mb("ZSCAN", "zx:nope", "0") + mb("ZSCAN", "zx:a", "x") +
		mb("ZSCAN", "zx:a", "0", "COUNT", "0")},
	{name: "zset wrong type", in: mb("SET", "zw:s", "v") + mb("HSET", "zw:h", "f", "v") + mb("ZADD", "zw:s", "1", "a") + mb("ZADD", "zw:s", "x", "a") +
		mb("ZINCRBY", "zw:s", "1", "a") + mb("ZREM", "zw:s", "a") + mb("ZCARD", "zw:h") + mb("ZCOUNT", "zw:s", "0", "1") + mb("ZCOUNT", "zw:s", "x", "1") +
		mb("ZLEXCOUNT", "zw:s", "-", "+") + mb("ZSCORE", "zw:s", "a") + mb("ZMSCORE", "zw:s", "a") + mb("ZRANK", "zw:s", "a") + mb("ZRANGE", "zw:s", "0", "1") +
		mb("ZRANGE", "zw:s", "0", "1", "FOO") + mb("ZRANGEBYSCORE", "zw:s", "0", "1") + mb("ZREMRANGEBYRANK", "zw:s", "0", "1") + mb("ZPOPMIN", "zw:s") +
		mb("ZRANDMEMBER", "zw:s") + mb("ZRANDMEMBER", "zw:s", "1") + mb("ZSCAN", "zw:s", "0") + mb("ZADD", "zw:z", "1", "a") + mb("GET", "zw:z") +
		mb("HGET", "zw:z", "a") + mb("TYPE", "zw:z") + mb("ZADD", "zw:s", "XX", "1", "a")},
	{name: "zset resp3", skip: 1, in: mb("HELLO", "3") + mb("ZADD", "z3:a", "1", "a", "2.5", "b", "-0", "c") + mb("ZSCORE", "z3:a", "b") + mb("ZSCORE", "z3:a", "x") +
		mb("ZMSCORE", "z3:a", "a", "x") + mb("ZRANGE", "z3:a", "0", "-1", "WITHSCORES") + mb("ZRANGE", "z3:a", "0", "-1") +
		mb("ZRANGEBYSCORE", "z3:a", "-inf", "inf", "WITHSCORES") + mb("ZREVRANGE", "z3:a", "0", "-1", "WITHSCORES") + mb("ZINCRBY", "z3:a", "1", "a") +
		mb("ZADD", "z3:a", "INCR", "1", "a") + mb("ZADD", "z3:a", "NX", "INCR", "1", "a") + mb("ZRANDMEMBER", "z3:a", "5", "WITHSCORES") +
		mb("ZRANDMEMBER", "z3:nope") + mb("ZSCAN", "z3:a", "0") + mb("ZPOPMIN", "z3:a") + mb("ZPOPMIN", "z3:a", "1") + mb("ZPOPMAX", "z3:a", "5") +
		mb("ZPOPMIN", "z3:nope") + mb("ZPOPMIN", "z3:nope", "1") + mb("ZRANK", "z3:a", "x") + mb("ZADD", "z3:one", "1", "m") + mb("ZRANDMEMBER", "z3:one", "-2", "WITHSCORES")},
	{name: "zunion zinter zdiff", in: mb("ZADD", "{zu}a", "1", "a", "2", "b", "3", "c") + mb("ZADD", "{zu}b", "10", "b", "20", "c", "30", "d") +
		mb("SADD", "{zu}s", "a", "d", "e") + mb("ZUNION", "2", "{zu}a", "{zu}b") + mb("ZUNION", "2", "{zu}a", "{zu}b", "WITHSCORES") +
		mb("ZUNION", "3", "{zu}a", "{zu}b", "{zu}s", "WEIGHTS", "2", "0.5", "-1", "WITHSCORES") + mb("ZUNION", "2", "{zu}a", "{zu}b", "AGGREGATE", "MIN", "WITHSCORES") +
		mb("ZUNION", "2", "{zu}a", "{zu}b", "AGGREGATE", "max", "WITHSCORES", "WEIGHTS", "1", "-1") + mb("ZINTER", "2", "{zu}a", "{zu}b", "WITHSCORES") +
		mb("ZINTER", "2", "{zu}a", "{zu}nope") + mb("ZINTER", "3", "{zu}a", "{zu}b", "{zu}a", "WITHSCORES") + mb("ZINTER", "2", "{zu}s", "{zu}b", "WITHSCORES") +
		mb("ZDIFF", "2", "{zu}a", "{zu}b", "WITHSCORES") + mb("ZDIFF", "1", "{zu}a") + mb("ZDIFF", "2", "{zu}nope", "{zu}a") + mb("ZDIFF", "2", "{zu}a", "{zu}s") +
		mb("ZINTERCARD", "2", "{zu}a", "{zu}b") + mb("ZINTERCARD", "2", "{zu}a", "{zu}b", "LIMIT", "1") + mb("ZINTERCARD", "2", "{zu}a", "{zu}b", "LIMIT", "0") +
		mb("ZADD", "{zu}inf", "inf", "a", "-inf", "b") + mb("ZADD", "{zu}ninf", "-inf", "a", "inf", "b") + mb("ZUNION", "2", "{zu}inf", "{zu}ninf", "WITHSCORES") +
		mb("ZINTER", "2", "{zu}inf", "{zu}ninf", "WITHSCORES") + mb("ZUNION", "1", "{zu}inf", "WEIGHTS", "0", "WITHSCORES") +
		mb("ZADD", "{zu}f", "0.1", "x", "0.2", "y") + mb("ZADD", "{zu}g", "0.2", "x", "0.3", "y", "0.7", "z") + mb("ZADD", "{zu}h", "0.3", "x") +
		mb("ZUNION", "3", "{zu}g", "{zu}f", "{zu}h", "WITHSCORES") + mb("ZINTER", "3", "{zu}g", "{zu}h", "{zu}f", "WITHSCORES", "WEIGHTS", "3", "0.1", "7")},
	{name: "zset store ops", in: mb("ZADD", "{zs}a", "1", "a", "2", "b", "3", "c") + mb("ZADD", "{zs}b", "10", "b", "20", "c", "30", "d") +
		mb("SET", "{zs}dst", "string") + mb("ZUNIONSTORE", "{zs}dst", "2", "{zs}a", "{zs}b") + mb("TYPE", "{zs}dst") + mb("ZRANGE", "{zs}dst", "0", "-1", "WITHSCORES") +
		mb("ZINTERSTORE", "{zs}dst", "2", "{zs}a", "{zs}b", "WEIGHTS", "1", "2", "AGGREGATE", "MAX") + mb("ZRANGE", "{zs}dst", "0", "-1", "WITHSCORES") +
		mb("ZDIFFSTORE", "{zs}dst", "2", "{zs}a", "{zs}b") + mb("ZRANGE", "{zs}dst", "0", "-1", "WITHSCORES") + mb("ZINTERSTORE", "{zs}dst", "2", "{zs}a", "{zs}nope") +
		mb("EXISTS", "{zs}dst") + mb("ZUNIONSTORE", "{zs}a", "2", "{zs}a", "{zs}b") + mb("ZRANGE", "{zs}a", "0", "-1", "WITHSCORES") +
		mb("ZUNIONSTORE", "{zs}dst", "1", "{zs}b", "WITHSCORES") + mb("ZDIFFSTORE", "{zs}dst", "1", "{zs}b", "WEIGHTS", "1") + mb("OBJECT", "ENCODING", "{zs}a") +
		mb("ZRANGESTORE", "{zs}r", "{zs}b", "0", "1") + mb("ZRANGE", "{zs}r", "0", "-1", "WITHSCORES") + mb("ZRANGESTORE", "{zs}r", "{zs}b", "(10", "+inf", "BYSCORE", "REV", "LIMIT", "0", "1") +
		mb("ZRANGE", "{zs}r", "0", "-1", "WITHSCORES") + mb("ZRANGESTORE", "{zs}r", "{zs}b", "[c", "+", "BYLEX") + mb("ZRANGESTORE", "{zs}r", "{zs}b", "5", "1") +
		mb("EXISTS", "{zs}r") + mb("ZRANGESTORE", "{zs}r", "{zs}nope", "0", "-1") + mb("ZRANGESTORE", "{zs}r", "{zs}b", "0", "-1", "WITHSCORES") +
		mb("ZRANGESTORE", "{zs}r", "{zs}b", "0", "-1", "LIMIT", "0", "1") + mb("ZRANGESTORE", "{zs}r", "{zs}b", "x", "1") + mb("ZRANGESTORE", "{zs}r", "{zs}b")},
	{name: "zset multi-key errors", in: mb("SET", "{ze}s", "v") + mb("ZADD", "{ze}a", "1", "a") + mb("ZUNION", "0", "{ze}a") + mb("ZUNION", "x", "{ze}a") +
		mb("ZUNION", "-1", "{ze}a") + mb("ZUNION", "3", "{ze}a") + mb("ZUNIONSTORE", "{ze}d", "0", "{ze}a") + mb("ZINTERCARD", "0", "{ze}a") +
		mb("ZINTERCARD", "2", "{ze}a") + mb("ZINTERCARD", "1", "{ze}a", "LIMIT", "-1") + mb("ZINTERCARD", "1", "{ze}a", "LIMIT") + mb("ZINTERCARD", "1", "{ze}a", "WITHSCORES") +
		mb("ZUNION", "1", "{ze}a", "WEIGHTS", "x") + mb("ZUNION", "1", "{ze}a", "WEIGHTS") + mb("ZUNION", "2", "{ze}a", "{ze}a", "WEIGHTS", "1") +
		mb("ZUNION", "1", "{ze}a", "AGGREGATE", "foo") + mb("ZUNION", "1", "{ze}a", "AGGREGATE") + mb("ZDIFF", "1", "{ze}a", "AGGREGATE", "SUM") +
		mb("ZUNION", "2", "{ze}a", "{ze}s") + mb("ZUNION", "2", "{ze}s", "{ze}a", "FOO") + mb("ZINTERSTORE", "{ze}d", "2", "{ze}a", "{ze}s") +
		mb("ZINTERCARD", "2", "{ze}s", "{ze}a", "LIMIT", "-5") + mb("ZUNION", "1", "{ze}a", "WITHSCORES", "WITHSCORES") + mb("ZRANGESTORE", "{ze}d", "{ze}s", "0", "1") +
		mb("ZMPOP", "0", "{ze}a", "MIN") + mb("ZMPOP", "x", "{ze}a", "MIN") + mb("ZMPOP", "1", "{ze}a", "FOO") + mb("ZMPOP", "1", "{ze}a", "MIN", "COUNT", "0") +
		mb("ZMPOP", "1", "{ze}a", "MIN", "COUNT", "x") + mb("ZMPOP", "1", "{ze}a", "MIN", "COUNT", "1", "COUNT", "1") + mb("ZMPOP", "2", "{ze}a", "MIN") +
		mb("ZMPOP", "5", "{ze}a", "MIN") + mb("ZMPOP", "1", "{ze}s", "MIN") + mb("ZMPOP", "2", "{ze}nope", "{ze}s", "MAX") + mb("ZMPOP", "1", "{ze}a", "MIN", "COUNT")},
	{name: "zmpop", in: mb("ZADD", "{zp}a", "1", "a", "2", "b", "3", "c") + mb("ZADD", "{zp}b", "5", "x") + mb("ZMPOP", "2", "{zp}nope", "{zp}a", "MIN") +
		mb("ZMPOP", "2", "{zp}a", "{zp}b", "MAX", "COUNT", "10") + mb("ZMPOP", "2", "{zp}a", "{zp}b", "min", "count", "2") + mb("ZMPOP", "1", "{zp}a", "MIN") +
		mb("EXISTS", "{zp}a", "{zp}b") + mb("ZMPOP", "2", "{zp}a", "{zp}a", "MIN")},
	{name: "zset multi-key resp3", skip: 1, in: mb("HELLO", "3") + mb("ZADD", "{z3}a", "1", "a", "2", "b") + mb("ZADD", "{z3}b", "3", "b") +
		mb("ZUNION", "2", "{z3}a", "{z3}b", "WITHSCORES") + mb("ZINTER", "2", "{z3}a", "{z3}b") + mb("ZDIFF", "2", "{z3}a", "{z3}b", "WITHSCORES") +
		mb("ZINTERCARD", "2", "{z3}a", "{z3}b") + mb("ZMPOP", "1", "{z3}a", "MIN") + mb("ZMPOP", "1", "{z3}nope", "MIN") + mb("ZMPOP", "2", "{z3}a", "{z3}b", "MAX", "COUNT", "5")},
	{name: "zset multi exec watch ttl", in: "MULTI\r\nZADD {zt}a 1 x 2 y\r\nZINCRBY {zt}a 5 x\r\nZRANGE {zt}a 0 -1 WITHSCORES\r\n" +
		"ZUNIONSTORE {zt}b 1 {zt}a WEIGHTS 2\r\nZPOPMIN {zt}b\r\nZADD {zt}a x y\r\nEXEC\r\n" +
		"WATCH {zt}a\r\nZADD {zt}a 3 z\r\nMULTI\r\nZCARD {zt}a\r\nEXEC\r\nWATCH {zt}a\r\nZADD {zt}a 3 z\r\nMULTI\r\nZCARD {zt}a\r\nEXEC\r\n" +
		"EXPIRE {zt}a 100\r\nZADD {zt}a 4 w\r\nTTL {zt}a\r\nZREM {zt}a x y z w\r\nTTL {zt}a\r\nEXISTS {zt}a\r\n" +
		"ZADD {zt}c 1 a\r\nRENAME {zt}c {zt}d\r\nZRANGE {zt}d 0 -1 WITHSCORES\r\nCOPY {zt}d {zt}e\r\nZADD {zt}e 2 b\r\nZCARD {zt}d\r\nTYPE {zt}e\r\n"},
	{name: "zset config encoding", in: mb("CONFIG", "SET", "zset-max-listpack-entries", "4", "zset-max-listpack-value", "8") +
		mb("CONFIG", "GET", "zset-max-ziplist-entries") + mb("CONFIG", "GET", "zset-max-listpack-value") + mb("ZADD", "zc:a", "1", "a", "2", "b", "3", "c", "4", "d") +
		mb("OBJECT", "ENCODING", "zc:a") + mb("ZADD", "zc:a", "-0", "e") + mb("OBJECT", "ENCODING", "zc:a") + mb("ZSCORE", "zc:a", "e") +
		mb("ZADD", "zc:b", "1", "123456789") + mb("OBJECT", "ENCODING", "zc:b") + mb("ZADD", "zc:c", "-0", "m", "1", "n") +
		mb("ZUNIONSTORE", "zc:u", "2", "zc:a", "zc:c") + mb("OBJECT", "ENCODING", "zc:u") + mb("ZRANGE", "zc:u", "0", "-1", "WITHSCORES") +
		mb("ZRANGESTORE", "zc:r", "zc:u", "0", "-1") + mb("OBJECT", "ENCODING", "zc:r") + mb("ZRANGE", "zc:r", "0", "-1", "WITHSCORES") +
		mb("ZRANGESTORE", "zc:s", "zc:u", "-inf", "+inf", "BYSCORE") + mb("OBJECT", "ENCODING", "zc:s") + mb("ZRANGE", "zc:s", "0", "-1", "WITHSCORES") +
		mb("CONFIG", "SET", "zset-max-listpack-entries", "128", "zset-max-listpack-value", "64")},
	{name: "zset big", in: zsetBigSession("zb:a", 300)},
	{name: "zset big resp3", skip: 1, in: mb("HELLO", "3") + zsetBigSession("zb3:a", 200)},
	{name: "zset long member", in: mb("ZADD", "zl:a", "1", strings.Repeat("m", 65)) + mb("OBJECT", "ENCODING", "zl:a") + mb("ZADD", "zl:b", "1", "a") +
		mb("ZADD", "zl:b", "2", strings.Repeat("n", 64)) + mb("OBJECT", "ENCODING", "zl:b") + mb("ZADD", "zl:b", "3", strings.Repeat("n", 65)) +
		mb("OBJECT", "ENCODING", "zl:b") + mb("ZRANGE", "zl:b", "0", "-1", "WITHSCORES") + mb("ZADD", "zl:b", "-0", "neg") + mb("ZSCORE", "zl:b", "neg") +
		mb("ZSCAN", "zl:b", "0", "MATCH", "neg") + mb("ZADD", "zl:b", "1e17", "e17", "0.1", "tenth") + mb("ZSCAN", "zl:b", "0", "MATCH", "e17") + mb("ZSCAN", "zl:b", "0", "MATCH", "tenth")},
}

// zsetBigSession fills key past the listpack limit and reads it back with
// every range command.
func zsetBigSession(key string, n int) string {
	var b strings.Builder
	args := []string{"ZADD", key}
	for i := range n {
		args = append(args, strconv.Itoa((i*37)%101)+"."+strconv.Itoa(i%7), "m"+strconv.Itoa(i))
	}
	b.WriteString(mb(args...))
	b.WriteString(mb("OBJECT", "ENCODING", key) + mb("ZCARD", key) + mb("ZRANGE", key, "0", "-1", "WITHSCORES") + mb("ZRANGE", key, "-50", "-40", "REV") +
		mb("ZRANK", key, "m17") + mb("ZREVRANK", key, "m17") + mb("ZSCORE", key, "m17") + mb("ZCOUNT", key, "(10", "50") +
		mb("ZRANGEBYSCORE", key, "10", "(20", "WITHSCORES") + mb("ZREVRANGEBYSCORE", key, "90", "80", "LIMIT", "2", "5") +
		mb("ZRANGE", key, "30", "20", "BYSCORE", "REV", "LIMIT", "1", "100", "WITHSCORES") + mb("ZREM", key, "m1", "m2", "m3", "nope") +
		mb("ZINCRBY", key, "1000", "m5") + mb("ZRANGE", key, "-3", "-1", "WITHSCORES") + mb("ZREMRANGEBYRANK", key, "10", "19") +
		mb("ZREMRANGEBYSCORE", key, "50", "(60") + mb("ZPOPMIN", key, "3") + mb("ZPOPMAX", key, "3") + mb("ZCARD", key) +
		mb("ZRANGE", key, "0", "-1") + mb("ZMSCORE", key, "m100", "m101", "nope") + mb("ZADD", key, "GT", "CH", "0", "m100", "99", "m101") +
		mb("ZRANDMEMBER", key, "1000", "WITHSCORES") + mb("ZSCAN", key, "0", "MATCH", "nomatch*", "COUNT", "100000"))
	lex := key + ":lex"
	args = []string{"ZADD", lex}
	for i := range n {
		args = append(args, "0", "w"+strconv.Itoa((i*53)%n))
	}
	b.WriteString(mb(args...))
	b.WriteString(mb("ZRANGEBYLEX", lex, "[w1", "(w2") + mb("ZREVRANGEBYLEX", lex, "(w5", "[w3", "LIMIT", "3", "7") + mb("ZLEXCOUNT", lex, "(w10", "+") +
		mb("ZREMRANGEBYLEX", lex, "[w4", "(w5") + mb("ZLEXCOUNT", lex, "-", "+") + mb("ZRANGE", lex, "0", "-1") +
		mb("ZUNIONSTORE", key+":u", "2", key, lex, "WEIGHTS", "0.5", "3") + mb("ZRANGE", key+":u", "0", "-1", "WITHSCORES") + mb("OBJECT", "ENCODING", key+":u") +
		mb("ZINTER", "2", key, key, "WITHSCORES") + mb("ZDIFF", "2", key, key+":u") + mb("ZRANGESTORE", key+":r", key, "10", "60", "BYSCORE") +
		mb("ZRANGE", key+":r", "0", "-1", "WITHSCORES") + mb("ZMPOP", "2", key+":nope", key, "MAX", "COUNT", "7"))
	return b.String()
}

func TestZSetDifferential(t *testing.T) {
	redisAddr := startRedisServer(t)
	rs := startRESP(t, server.Config{}, store.Config{MaxItemSize: 1 << 20})
	for _, s := range zsetSessions {
		t.Run(s.name, func(t *testing.T) {
			// One at a time: the big sessions under -race on a busy
			// machine must not approach the harness's silence timeout.
			if strings.Contains(s.in, "SADD") && respCommands["sadd"] == nil {
				t.Skip("plain sets as inputs: no SADD in this tree yet")
			}
			want := runRESPSession(redisAddr, s)
			got := runRESPSession(rs.respAddr, s)
			if want.err != nil || got.err != nil {
				t.Fatalf("redis: %v; minikv: %v", want.err, got.err)
			}
			if !sameRESPReplies(s, got, want) || got.closed != want.closed {
				for i := range min(len(got.replies), len(want.replies)) {
					if got.replies[i] != want.replies[i] {
						t.Errorf("reply %d (command %d): redis %q, minikv %q", i, i+s.skip, clip(want.replies[i]), clip(got.replies[i]))
						break
					}
				}
				t.Errorf("session %q differs (%d vs %d replies)", s.name, len(want.replies), len(got.replies))
			}
		})
	}
}

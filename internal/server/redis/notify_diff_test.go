package redis

// Keyspace notifications against a real redis-server 7.2: for each
// session, a RESP2 and a RESP3 subscriber on PSUBSCRIBE __key*__:* watch
// a writer run the session's commands with notify-keyspace-events set,
// and the messages they read must be Redis's, byte for byte and in order.
// Notifications are server-wide, so each test has servers of its own and
// runs its sessions one after the other; each session starts with
// FLUSHALL, which publishes nothing.

import (
	"bufio"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/minikv/minikv/internal/server"
	"github.com/minikv/minikv/internal/store"
)

// notifySession is one writer's commands, run with flags as
// notify-keyspace-events ("KEA" when empty).
type notifySession struct {
	name  string
	flags string
	in    string
}

var notifySessions = []notifySession{
	{name: "strings", in: mb("SET", "k", "v") + mb("SET", "k", "v2") + mb("SET", "k", "v", "NX") + mb("SET", "k", "v", "XX") +
		mb("SET", "x", "v", "XX") + mb("SET", "k", "v", "GET") + mb("SET", "k", "w", "EX", "100") + mb("SET", "k", "w", "PX", "100000", "GET") +
		mb("SET", "k", "w", "KEEPTTL") + mb("SET", "e", "v", "PXAT", "1") + mb("GET", "e") + mb("SETNX", "n", "1") + mb("SETNX", "n", "2") +
		mb("SETEX", "se", "100", "v") + mb("PSETEX", "pse", "100000", "v") + mb("GETSET", "gs", "1") + mb("GETSET", "gs", "2") +
		mb("GETDEL", "gs") + mb("GETDEL", "gs") + mb("APPEND", "a", "x") + mb("APPEND", "a", "y") + mb("SETRANGE", "r", "2", "x") +
		mb("SETRANGE", "r", "0", "") + mb("SETRANGE", "nr", "0", "") + mb("INCR", "i") + mb("DECR", "i") + mb("INCRBY", "i", "5") +
		mb("DECRBY", "i", "2") + mb("INCR", "a") + mb("INCRBYFLOAT", "f", "1.5") + mb("INCRBYFLOAT", "a", "1") +
		mb("MSET", "m1", "1", "m2", "2", "m1", "3") + mb("MSETNX", "m3", "1", "m4", "2") + mb("MSETNX", "m4", "1", "m5", "2") +
		mb("MSETNX", "m6", "1", "m6", "2") + mb("GET", "nope") + mb("STRLEN", "k") + mb("GETRANGE", "k", "0", "1")},
	{name: "getex", in: mb("SET", "k", "v") + mb("GETEX", "k") + mb("GETEX", "k", "EX", "100") + mb("GETEX", "k", "PERSIST") +
		mb("GETEX", "k", "PERSIST") + mb("GETEX", "k", "PX", "100000") + mb("GETEX", "k", "EXAT", "4102444800") +
		mb("GETEX", "k", "PXAT", "4102444800000") + mb("GETEX", "k", "EXAT", "1") + mb("GET", "k") + mb("GETEX", "nope", "EX", "10") +
		mb("HSET", "h", "f", "v") + mb("GETEX", "h", "EX", "10") + mb("GETEX", "h", "PERSIST") + mb("SET", "k2", "v") +
		mb("GETEX", "k2", "PXAT", "1")},
	{name: "keyspace", in: mb("SET", "a", "1") + mb("SET", "b", "2") + mb("DEL", "a", "b", "c") + mb("SET", "a", "1") + mb("UNLINK", "a", "z") +
		mb("SET", "k", "v") + mb("EXPIRE", "k", "100") + mb("EXPIRE", "k", "50", "NX") + mb("EXPIRE", "k", "200", "GT") +
		mb("PEXPIRE", "k", "100000") + mb("EXPIREAT", "k", "4102444800") + mb("PEXPIREAT", "k", "4102444800000") + mb("PERSIST", "k") +
		mb("PERSIST", "k") + mb("PERSIST", "nope") + mb("EXPIRE", "nope", "10") + mb("EXPIRE", "k", "-1") + mb("EXISTS", "k") +
		mb("SET", "k", "v") + mb("PEXPIREAT", "k", "1") + mb("SET", "k", "v") + mb("EXPIRE", "k", "0") + mb("TOUCH", "k") +
		mb("SET", "s", "v", "EX", "100") + mb("RENAME", "s", "d") + mb("RENAME", "d", "d") + mb("RENAME", "nope", "x") +
		mb("SET", "o", "v") + mb("RENAME", "d", "o") + mb("RENAMENX", "o", "p") + mb("SET", "q", "v") + mb("RENAMENX", "p", "q") +
		mb("COPY", "p", "c") + mb("COPY", "p", "c") + mb("COPY", "p", "c", "REPLACE") + mb("COPY", "nope", "c") +
		mb("HSET", "h", "f", "v") + mb("RENAME", "h", "h2") + mb("COPY", "h2", "h3") + mb("TYPE", "h3") + mb("FLUSHALL") + mb("SET", "x", "1")},
	{name: "hashes", in: mb("HSET", "h", "a", "1", "b", "2") + mb("HSET", "h", "a", "1") + mb("HMSET", "h", "c", "3") + mb("HSETNX", "h", "a", "9") +
		mb("HSETNX", "h", "d", "4") + mb("HINCRBY", "h", "n", "5") + mb("HINCRBY", "h", "a", "x") + mb("HINCRBYFLOAT", "h", "fl", "1.5") +
		mb("HINCRBYFLOAT", "h", "b", "0.5") + mb("HDEL", "h", "zz") + mb("HDEL", "h", "a", "b", "zz") + mb("HGET", "h", "c") +
		mb("HDEL", "h", "c", "d", "n", "fl") + mb("EXISTS", "h") + mb("HSET", "s", "f", "v") + mb("SET", "str", "v") +
		mb("HSET", "str", "f", "v") + mb("HDEL", "nope", "f")},
	{name: "lists", in: mb("LPUSH", "l", "a", "b") + mb("RPUSH", "l", "c") + mb("LPUSHX", "l", "z") + mb("RPUSHX", "l", "y") +
		mb("LPUSHX", "nope", "a") + mb("RPUSHX", "nope", "a") + mb("LINSERT", "l", "BEFORE", "c", "x") + mb("LINSERT", "l", "AFTER", "nope", "x") +
		mb("LINSERT", "nope", "AFTER", "a", "x") + mb("LSET", "l", "0", "q") + mb("LSET", "l", "100", "q") + mb("LPOP", "l") + mb("RPOP", "l") +
		mb("LPOP", "l", "2") + mb("LPOP", "l", "0") + mb("LPOP", "nope") + mb("LREM", "l", "0", "nope") + mb("RPUSH", "l", "a", "a", "b") +
		mb("LREM", "l", "1", "a") + mb("LTRIM", "l", "0", "-1") + mb("LTRIM", "nope", "0", "1") + mb("LTRIM", "l", "5", "10") +
		mb("RPUSH", "l", "a", "b") + mb("RPOP", "l", "5") + mb("RPUSH", "l", "a") + mb("LPOP", "l") + mb("RPUSH", "l", "a", "b") +
		mb("LREM", "l", "0", "a") + mb("LREM", "l", "0", "b") + mb("LLEN", "l")},
	{name: "list moves", in: mb("RPUSH", "s", "a", "b", "c") + mb("LMOVE", "s", "d", "LEFT", "RIGHT") + mb("RPOPLPUSH", "s", "d") +
		mb("LMOVE", "s", "s", "LEFT", "RIGHT") + mb("LMOVE", "nope", "d", "LEFT", "LEFT") + mb("LMOVE", "s", "d", "RIGHT", "LEFT") +
		mb("EXISTS", "s") + mb("LMPOP", "2", "nope", "d", "LEFT") + mb("LMPOP", "1", "d", "RIGHT", "COUNT", "5") + mb("LMPOP", "1", "d", "LEFT") +
		mb("SET", "str", "v") + mb("RPUSH", "t", "x") + mb("LMOVE", "t", "str", "LEFT", "LEFT") + mb("RPOPLPUSH", "t", "t")},
	{name: "sets", in: mb("SADD", "s", "a", "b", "c") + mb("SADD", "s", "a") + mb("SREM", "s", "zz") + mb("SREM", "s", "a") +
		mb("SPOP", "s") + mb("SADD", "s", "x", "y") + mb("SPOP", "s", "0") + mb("SPOP", "s", "1") + mb("SPOP", "s", "10") + mb("EXISTS", "s") +
		mb("SPOP", "nope") + mb("SPOP", "nope", "2") + mb("SADD", "s", "1") + mb("SPOP", "s") + mb("SADD", "s", "a", "b") + mb("SREM", "s", "a", "b") +
		mb("SADD", "m", "a", "b") + mb("SMOVE", "m", "n", "a") + mb("SMOVE", "m", "n", "zz") + mb("SMOVE", "m", "m", "b") +
		mb("SMOVE", "m", "n", "b") + mb("SADD", "n", "c") + mb("SADD", "o", "c") + mb("SMOVE", "n", "o", "c") + mb("SMOVE", "nope", "o", "c") +
		mb("SISMEMBER", "o", "c") + mb("SMEMBERS", "nope")},
	{name: "set stores", in: mb("SADD", "a", "1", "2", "3") + mb("SADD", "b", "2", "3", "4") + mb("SINTERSTORE", "d", "a", "b") +
		mb("SINTERSTORE", "d", "a", "b") + mb("SUNIONSTORE", "d", "a", "b") + mb("SDIFFSTORE", "d", "a", "b") + mb("SDIFFSTORE", "d", "a", "a") +
		mb("SDIFFSTORE", "d", "a", "a") + mb("SINTERSTORE", "d", "a", "nope") + mb("SET", "d", "str") + mb("SINTERSTORE", "d", "a", "nope") +
		mb("SUNIONSTORE", "e", "nope", "nope2") + mb("SUNIONSTORE", "e", "a") + mb("SINTERSTORE", "a", "a", "b") + mb("SINTERCARD", "1", "a") +
		mb("SINTER", "a", "b") + mb("SUNION", "a", "b") + mb("SDIFF", "a", "b")},
	{name: "sorted sets", in: mb("ZADD", "z", "1", "a", "2", "b") + mb("ZADD", "z", "1", "a") + mb("ZADD", "z", "5", "a") +
		mb("ZADD", "z", "NX", "9", "a") + mb("ZADD", "z", "XX", "9", "c") + mb("ZADD", "nope", "XX", "1", "a") + mb("ZADD", "z", "CH", "GT", "1", "b") +
		mb("ZADD", "z", "INCR", "2", "a") + mb("ZADD", "z", "NX", "INCR", "2", "a") + mb("ZINCRBY", "z", "1", "c") + mb("ZINCRBY", "z", "0", "c") +
		mb("ZADD", "z", "inf", "i") + mb("ZADD", "z", "INCR", "-inf", "i") + mb("ZREM", "z", "nope") + mb("ZREM", "z", "a", "nope") +
		mb("ZADD", "z", "1", "m1", "2", "m2", "3", "m3", "4", "m4") + mb("ZREMRANGEBYRANK", "z", "0", "0") + mb("ZREMRANGEBYRANK", "z", "100", "200") +
		mb("ZREMRANGEBYSCORE", "z", "2", "3") + mb("ZREMRANGEBYSCORE", "z", "100", "200") + mb("ZADD", "lex", "0", "a", "0", "b", "0", "c") +
		mb("ZREMRANGEBYLEX", "lex", "[a", "[b") + mb("ZREMRANGEBYLEX", "lex", "[x", "[y") + mb("ZREMRANGEBYLEX", "lex", "-", "+") +
		mb("ZPOPMIN", "z") + mb("ZPOPMAX", "z") + mb("ZPOPMIN", "z", "0") + mb("ZPOPMAX", "nope") + mb("ZPOPMIN", "z", "100") +
		mb("ZADD", "y", "1", "a", "2", "b") + mb("ZMPOP", "2", "nope", "y", "MIN") + mb("ZMPOP", "1", "y", "MAX", "COUNT", "9") +
		mb("ZMPOP", "1", "y", "MAX") + mb("ZADD", "y", "1", "a") + mb("ZREMRANGEBYRANK", "y", "0", "-1") + mb("ZSCORE", "y", "a")},
	{name: "sorted set stores", in: mb("ZADD", "a", "1", "x", "2", "y") + mb("ZADD", "b", "3", "y", "4", "z") + mb("ZUNIONSTORE", "d", "2", "a", "b") +
		mb("ZINTERSTORE", "d", "2", "a", "b") + mb("ZDIFFSTORE", "d", "2", "a", "b") + mb("ZDIFFSTORE", "d", "2", "a", "a") +
		mb("ZDIFFSTORE", "d", "2", "a", "a") + mb("ZINTERSTORE", "e", "2", "a", "nope") + mb("ZRANGESTORE", "r", "a", "0", "-1") +
		mb("ZRANGESTORE", "r", "a", "5", "10") + mb("ZRANGESTORE", "r", "nope", "0", "-1") + mb("ZRANGESTORE", "r", "b", "0", "0") +
		mb("ZRANGESTORE", "r", "nope", "0", "-1") + mb("ZUNIONSTORE", "d", "1", "a", "WEIGHTS", "x") + mb("ZUNION", "2", "a", "b") +
		mb("ZINTERCARD", "2", "a", "b")},
	// Writes that change nothing fire no event, as in Redis.
	{name: "bitfield without change", in: mb("SET", "b", "\x80") + mb("BITFIELD", "b", "SET", "u8", "0", "128") + mb("BITFIELD", "b", "INCRBY", "i8", "0", "0") +
		mb("BITFIELD", "b", "OVERFLOW", "FAIL", "INCRBY", "u8", "0", "200") + mb("BITFIELD", "b", "SET", "u1", "1", "1", "SET", "u1", "1", "0") +
		mb("BITFIELD", "b", "SET", "u8", "0", "1") + mb("BITFIELD", "b", "SET", "u8", "16", "0") + mb("SETBIT", "b", "7", "1") + mb("SETBIT", "b", "7", "1") +
		mb("BITFIELD", "nb", "OVERFLOW", "FAIL", "INCRBY", "u2", "0", "9") + mb("SETRANGE", "b", "0", "\x01")},
	{name: "bitmaps and hll", in: mb("SETBIT", "b", "7", "1") + mb("SETBIT", "b", "7", "1") + mb("SETBIT", "b", "7", "0") + mb("SETBIT", "b", "100", "0") +
		mb("SETBIT", "b", "100", "0") + mb("SETBIT", "n", "0", "0") + mb("GETBIT", "b", "7") + mb("BITCOUNT", "b") +
		mb("BITFIELD", "bf", "SET", "u8", "0", "255") + mb("BITFIELD", "bf", "GET", "u8", "0") + mb("BITFIELD", "bf", "INCRBY", "u8", "0", "1") +
		mb("BITFIELD", "bf", "OVERFLOW", "FAIL", "INCRBY", "u8", "0", "1000") + mb("BITFIELD", "bf2", "OVERFLOW", "FAIL", "INCRBY", "u2", "0", "9") +
		mb("BITFIELD_RO", "bf", "GET", "u8", "0") + mb("BITFIELD", "nope", "GET", "u8", "0") +
		mb("SET", "s1", "ab") + mb("SET", "s2", "cd") + mb("BITOP", "AND", "d", "s1", "s2") + mb("BITOP", "OR", "d", "s1", "nope") +
		mb("BITOP", "NOT", "d", "nope") + mb("BITOP", "NOT", "d", "nope") + mb("BITOP", "XOR", "d2", "nope", "nope2") +
		mb("PFADD", "h", "a", "b") + mb("PFADD", "h", "a") + mb("PFADD", "h") + mb("PFADD", "h2") + mb("PFADD", "h2") + mb("PFCOUNT", "h") +
		mb("PFMERGE", "h3", "h", "h2") + mb("PFMERGE", "h3") + mb("PFMERGE", "h4") + mb("PFADD", "s1", "x") + mb("PFCOUNT", "h", "h2")},
	{name: "sort store and restore", in: mb("RPUSH", "l", "3", "1", "2") + mb("SORT", "l", "STORE", "d") + mb("SORT", "l", "STORE", "d") +
		mb("SORT", "nope", "STORE", "d") + mb("SORT", "nope", "STORE", "d") + mb("SORT", "l") + mb("SORT", "l", "LIMIT", "5", "5", "STORE", "e") +
		mb("SET", "s", "v") + mb("DUMP", "nope") + mb("RESTORE", "r", "0", dumpV) +
		mb("RESTORE", "r", "0", dumpV) +
		mb("RESTORE", "r", "0", dumpV, "REPLACE") +
		mb("RESTORE", "r", "100000", dumpV, "REPLACE") +
		mb("RESTORE", "r", "1", dumpV, "REPLACE", "ABSTTL") +
		mb("RESTORE", "r2", "1", dumpV, "ABSTTL") + mb("RESTORE", "r", "0", "bad")},
	{name: "transaction", in: mb("MULTI") + mb("SET", "a", "1") + mb("INCR", "a") + mb("LPUSH", "l", "x") + mb("DEL", "a", "l") +
		mb("EXEC") + mb("MULTI") + mb("SET", "b", "1") + mb("DISCARD")},

	// Flag classes: only the events of the classes set, on the channels
	// set.
	{name: "keyspace channel only", flags: "K$", in: mb("SET", "k", "v") + mb("DEL", "k") + mb("HSET", "h", "f", "v")},
	{name: "keyevent channel only", flags: "Eg", in: mb("SET", "k", "v") + mb("DEL", "k") + mb("EXPIRE", "nope", "1")},
	{name: "classes", flags: "KElhz", in: mb("SET", "k", "v") + mb("LPUSH", "l", "a") + mb("SADD", "s", "a") + mb("HSET", "h", "f", "v") +
		mb("ZADD", "z", "1", "a") + mb("DEL", "l", "s", "h", "z") + mb("SET", "e", "v", "PXAT", "1") + mb("GET", "e")},
	{name: "no channel", flags: "A", in: mb("SET", "k", "v") + mb("DEL", "k")},
	{name: "expired only", flags: "Ex", in: mb("SET", "k", "v", "PXAT", "1") + mb("GET", "k") + mb("SET", "j", "v")},
	{name: "new", flags: "KEn", in: mb("SET", "k", "v") + mb("SET", "k", "v2") + mb("DEL", "k") + mb("LPUSH", "l", "a") +
		mb("LPUSH", "l", "b") + mb("HSET", "h", "f", "v") + mb("SADD", "s", "a") + mb("ZADD", "z", "1", "a") + mb("INCR", "i") +
		mb("APPEND", "ap", "x") + mb("SETRANGE", "sr", "1", "x") + mb("SETBIT", "sb", "1", "1") + mb("PFADD", "pf", "a") +
		mb("RENAME", "k2", "x") + mb("SET", "k2", "v") + mb("RENAME", "k2", "r") + mb("SET", "r2", "v") + mb("RENAME", "r", "r2") +
		mb("COPY", "r2", "c") + mb("COPY", "r2", "c", "REPLACE") + mb("SADD", "t", "a") + mb("SINTERSTORE", "st", "s", "t") +
		mb("SINTERSTORE", "st", "s", "t") + mb("SET", "p", "v", "PXAT", "1") + mb("GET", "p") + mb("SET", "ex", "v", "EX", "100") +
		mb("MSET", "m1", "a", "m2", "b") + mb("GETSET", "gs", "v") + mb("SETNX", "nx", "v") + mb("HINCRBY", "hi", "f", "1") +
		mb("RPUSH", "src", "a") + mb("LMOVE", "src", "dst", "LEFT", "LEFT") + mb("SADD", "ms", "a") + mb("SMOVE", "ms", "md", "a") +
		mb("ZADD", "za", "1", "a") + mb("ZUNIONSTORE", "zu", "1", "za") + mb("ZRANGESTORE", "zr", "za", "0", "-1") +
		mb("RPUSH", "sl", "1") + mb("SORT", "sl", "STORE", "so") + mb("BITOP", "OR", "bo", "k2", "sb") +
		mb("BITFIELD", "bf", "SET", "u8", "0", "1") + mb("PFMERGE", "pm", "pf") + mb("INCRBYFLOAT", "fl", "1") +
		mb("RESTORE", "re", "0", dumpV) +
		mb("RESTORE", "re", "0", dumpV, "REPLACE")},
	{name: "blocking pops at once", flags: "KEAn", in: mb("RPUSH", "l", "a", "b", "c") + mb("BLPOP", "l", "0") + mb("BRPOP", "nope", "l", "0") +
		mb("BLMOVE", "l", "d", "LEFT", "RIGHT", "0") + mb("RPUSH", "l", "x") + mb("BRPOPLPUSH", "l", "l", "0") + mb("BLMPOP", "0", "2", "nope", "l", "LEFT", "COUNT", "5") +
		mb("BLMPOP", "0", "1", "d", "RIGHT") + mb("ZADD", "z", "1", "a", "2", "b", "3", "c") + mb("BZPOPMIN", "z", "0") + mb("BZPOPMAX", "z", "0") +
		mb("BZMPOP", "0", "1", "z", "MIN", "COUNT", "3") + mb("SET", "s", "v") + mb("RPUSH", "l", "a") + mb("BLMOVE", "l", "s", "LEFT", "LEFT", "0") +
		mb("MULTI") + mb("BLPOP", "l", "0") + mb("BLPOP", "l", "0") + mb("EXEC")},
	{name: "new among the others", flags: "KEAn", in: mb("SET", "k", "v") + mb("SET", "k", "v2", "EX", "100") + mb("SET", "e", "v", "PXAT", "1") +
		mb("GET", "e") + mb("MSETNX", "m", "1", "m2", "2", "m", "3") + mb("RPUSH", "s", "a", "b") + mb("LMOVE", "s", "d", "LEFT", "LEFT") +
		mb("LMOVE", "s", "d2", "LEFT", "LEFT") + mb("SADD", "ss", "a") + mb("SMOVE", "ss", "sd", "a") + mb("SADD", "ss", "b") +
		mb("SMOVE", "ss", "sd", "b") + mb("RENAME", "k", "r") + mb("SET", "r2", "v") + mb("RENAME", "r", "r2") + mb("HSET", "h", "f", "v") +
		mb("HDEL", "h", "f") + mb("ZADD", "z", "1", "a") + mb("ZUNIONSTORE", "z2", "1", "z") + mb("ZUNIONSTORE", "z2", "1", "z") +
		mb("BITOP", "NOT", "bn", "r2") + mb("BITOP", "NOT", "bn", "r2") + mb("RESTORE", "re", "0", dumpV) + mb("RESTORE", "re", "0", dumpV, "REPLACE") +
		mb("SORT", "d", "STORE", "so", "ALPHA") + mb("SORT", "d", "STORE", "so", "ALPHA") + mb("GETEX", "r2", "EXAT", "1") + mb("MULTI") +
		mb("SET", "t", "1") + mb("LPUSH", "tl", "a") + mb("EXEC")},
	{name: "keymiss", flags: "KEm", in: mb("GET", "a") + mb("MGET", "a", "b") + mb("SET", "k", "v") + mb("GET", "k") + mb("SET", "a", "v", "GET") +
		mb("GETSET", "b", "v") + mb("GETDEL", "c") + mb("GETEX", "c") + mb("GETEX", "c", "EX", "10") + mb("EXISTS", "c", "k") + mb("TYPE", "c") +
		mb("TTL", "c") + mb("PTTL", "c") + mb("EXPIRETIME", "c") + mb("STRLEN", "c") + mb("GETRANGE", "c", "0", "1") + mb("APPEND", "c", "x") +
		mb("INCR", "d") + mb("HGET", "h", "f") + mb("HGETALL", "h") + mb("HLEN", "h") + mb("HSET", "h", "f", "v") + mb("HGET", "h", "g") +
		mb("LRANGE", "l", "0", "-1") + mb("LLEN", "l") + mb("LINDEX", "l", "0") + mb("LPOS", "l", "a") + mb("LPOP", "l") + mb("LPUSH", "l", "a") +
		mb("SMEMBERS", "s") + mb("SCARD", "s") + mb("SISMEMBER", "s", "a") + mb("SINTER", "s", "s2") + mb("SUNIONSTORE", "d1", "s", "s2") +
		mb("SINTERCARD", "1", "s") + mb("SRANDMEMBER", "s") + mb("SPOP", "s") + mb("SMOVE", "s", "s2", "a") +
		mb("ZSCORE", "z", "a") + mb("ZRANGE", "z", "0", "-1") + mb("ZCARD", "z") + mb("ZUNIONSTORE", "d2", "2", "z", "z2") + mb("ZUNION", "1", "z") +
		mb("ZRANGESTORE", "d3", "z", "0", "-1") + mb("ZPOPMIN", "z") + mb("ZRANDMEMBER", "z") +
		mb("BITCOUNT", "b1") + mb("GETBIT", "b1", "0") + mb("BITPOS", "b1", "1") + mb("BITOP", "OR", "d4", "b1", "b2") + mb("BITFIELD_RO", "b1", "GET", "u8", "0") +
		mb("BITFIELD", "b1", "GET", "u8", "0") + mb("PFCOUNT", "p1") + mb("PFCOUNT", "p1", "p2") + mb("PFMERGE", "d5", "p1") +
		mb("DUMP", "x") + mb("OBJECT", "ENCODING", "x") + mb("TOUCH", "x", "k") + mb("COPY", "x", "y") + mb("RENAME", "x", "y") +
		mb("LMOVE", "x", "y", "LEFT", "LEFT") + mb("SORT", "x") + mb("RPUSH", "sl", "1", "2") + mb("SORT", "sl", "BY", "w_*", "GET", "o_*") +
		mb("LCS", "x", "k") + mb("RANDOMKEY") + mb("SCAN", "0") + mb("KEYS", "zz*") + mb("DEL", "x") + mb("SETRANGE", "x", "0", "") +
		mb("HSCAN", "x", "0") + mb("SSCAN", "x", "0") + mb("ZSCAN", "x", "0") + mb("HRANDFIELD", "x") + mb("HEXISTS", "x", "f") +
		mb("HMGET", "x", "f") + mb("HKEYS", "x") + mb("HVALS", "x") + mb("HSTRLEN", "x", "f") + mb("SMISMEMBER", "x", "a") + mb("SDIFF", "x") +
		mb("ZCOUNT", "x", "0", "1") + mb("ZRANK", "x", "a") + mb("ZMSCORE", "x", "a") + mb("ZLEXCOUNT", "x", "-", "+") + mb("ZINTERCARD", "1", "x") +
		mb("ZRANGEBYSCORE", "x", "0", "1") + mb("ZREVRANGE", "x", "0", "1")},
	{name: "keymiss after expiry", flags: "KExmn", in: mb("SET", "e", "v", "PXAT", "1") + mb("GET", "e") + mb("SET", "f", "v", "GET") +
		mb("SET", "f", "w", "GET") + mb("GETDEL", "f") + mb("GETDEL", "f")},
}

// dumpV is Redis 7.0's DUMP of the string "v".
const dumpV = "\x00\x01v\n\x00\x91\x08\xce\xb2\x198\x8a\xce"

func TestKeyspaceNotificationsDifferential(t *testing.T) {
	redisAddr := startRedisServer(t)
	rs := startRESP(t, server.Config{}, store.Config{})
	for _, s := range notifySessions {
		t.Run(s.name, func(t *testing.T) {
			want := runNotifySession(t, redisAddr, s)
			got := runNotifySession(t, rs.respAddr, s)
			for i, kind := range []string{"RESP2 subscriber", "RESP3 subscriber"} {
				if strings.Join(got[i], "") != strings.Join(want[i], "") {
					t.Errorf("%s: %s differs\nredis:  %s\nminikv: %s", s.name, kind, shortEvents(want[i]), shortEvents(got[i]))
				}
			}
		})
	}
}

// shortEvents lists messages as "key:event" for an error message, or
// quoted whole when they are not keyspace notifications.
func shortEvents(msgs []string) string {
	var b strings.Builder
	for _, m := range msgs {
		parts := strings.Split(m, "\r\n")
		// pmessage: header, $n, "pmessage", $n, pattern, $n, channel, $n, message
		if len(parts) >= 9 && strings.HasPrefix(parts[6], "__keyspace@0__:") {
			fmt.Fprintf(&b, "%s:%s ", strings.TrimPrefix(parts[6], "__keyspace@0__:"), parts[8])
		} else if len(parts) >= 9 && strings.HasPrefix(parts[6], "__keyevent@0__:") {
			fmt.Fprintf(&b, "[%s:%s] ", parts[8], strings.TrimPrefix(parts[6], "__keyevent@0__:"))
		} else {
			fmt.Fprintf(&b, "%q ", m)
		}
	}
	return b.String()
}

// runNotifySession runs s against addr and returns what a RESP2 and a
// RESP3 subscriber received, one message each: everything published
// before the writer's final PUBLISH, which they wait for.
func runNotifySession(t *testing.T, addr string, s notifySession) [2][]string {
	t.Helper()
	dialc := func() (net.Conn, *bufio.Reader) {
		nc, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { nc.Close() })
		_ = nc.SetDeadline(time.Now().Add(20 * time.Second)) // a hang guard
		return nc, bufio.NewReader(nc)
	}
	send := func(nc net.Conn, in string) {
		if _, err := nc.Write([]byte(in)); err != nil {
			t.Fatal(err)
		}
	}
	read := func(br *bufio.Reader) string {
		r, err := readRESPReply(br)
		if err != nil {
			t.Fatalf("read: %v", err)
		}
		return r
	}
	flags := s.flags
	if flags == "" {
		flags = "KEA"
	}
	w, wr := dialc()
	send(w, mb("FLUSHALL")+mb("CONFIG", "SET", "notify-keyspace-events", ""))
	read(wr)
	read(wr)
	var subs [2]*bufio.Reader
	for i := range subs {
		nc, br := dialc()
		if i == 1 {
			send(nc, mb("HELLO", "3"))
			read(br)
		}
		send(nc, mb("PSUBSCRIBE", "__key*__:*")+mb("SUBSCRIBE", "kn:end"))
		read(br)
		read(br)
		subs[i] = br
	}
	send(w, mb("CONFIG", "SET", "notify-keyspace-events", flags)+s.in+
		mb("CONFIG", "SET", "notify-keyspace-events", "")+mb("PUBLISH", "kn:end", "x")+mb("ECHO", "__end__"))
	for read(wr) != "$7\r\n__end__\r\n" {
	}
	var out [2][]string
	for i, br := range subs {
		for {
			m := read(br)
			if strings.Contains(m, "kn:end") {
				break
			}
			out[i] = append(out[i], m)
		}
	}
	return out
}

// TestKeyspaceNotificationsBlockedServed: a client blocked in BLPOP,
// BLMOVE, BZPOPMAX or BLMPOP and served by another client's push
// publishes its pop's events after the push's, as Redis's blocked.c does.
func TestKeyspaceNotificationsBlockedServed(t *testing.T) {
	redisAddr := startRedisServer(t)
	rs := startRESP(t, server.Config{}, store.Config{})
	want := runBlockedServed(t, redisAddr)
	got := runBlockedServed(t, rs.respAddr)
	if len(want) < 20 {
		t.Fatalf("redis published only %s", shortEvents(want))
	}
	if strings.Join(got, "") != strings.Join(want, "") {
		t.Errorf("blocked clients served: events differ\nredis:  %s\nminikv: %s", shortEvents(want), shortEvents(got))
	}
}

func runBlockedServed(t *testing.T, addr string) []string {
	t.Helper()
	w := dialRESP(t, addr)
	w.Expect(mb("FLUSHALL"), "+OK\r\n")
	w.Expect(mb("CONFIG", "SET", "notify-keyspace-events", "KEAn"), "+OK\r\n")
	sub := dialRESP(t, addr)
	sub.Send(mb("PSUBSCRIBE", "__key*__:*") + mb("SUBSCRIBE", "kn:end"))
	sub.Reply()
	sub.Reply()
	for _, sc := range []struct{ block, push []string }{
		{[]string{"BLPOP", "bl", "0"}, []string{"RPUSH", "bl", "a", "b"}},
		{[]string{"BLMOVE", "bs", "bd", "LEFT", "RIGHT", "0"}, []string{"LPUSH", "bs", "x"}},
		{[]string{"BZPOPMAX", "bz", "0"}, []string{"ZADD", "bz", "1", "a"}},
		{[]string{"BLMPOP", "0", "1", "bm", "RIGHT", "COUNT", "2"}, []string{"RPUSH", "bm", "1", "2", "3"}},
	} {
		b := dialRESP(t, addr)
		b.Send(mb(sc.block...))
		for !strings.Contains(w.Do("INFO", "clients"), "blocked_clients:1\r\n") {
			time.Sleep(time.Millisecond) // until the client is blocked
		}
		w.Do(sc.push...)
		b.Reply()
	}
	w.Expect(mb("PUBLISH", "kn:end", "x"), ":1\r\n")
	var out []string
	for {
		m := sub.Reply()
		if strings.Contains(m, "kn:end") {
			return out
		}
		out = append(out, m)
	}
}

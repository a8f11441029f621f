package redis

import (
	"net"
	"strings"
	"testing"

	"github.com/minikv/minikv/internal/server"
	"github.com/minikv/minikv/internal/store"
)

// reads repeats one read command n times.
func reads(n int, args ...string) string {
	return strings.Repeat(mb(args...), n)
}

// lfuSessions run against a redis-server started with maxmemory-policy
// allkeys-lfu and lfu-log-factor 0, where every use raises a key's
// counter by exactly one, and a MiniKV set the same way. lfu-decay-time
// is 0 while they run (each sets it), so that a minute's boundary crossed
// between two commands decays nothing. maxmemory is set, so Redis shares
// no integer objects (whose counter all keys holding them would share).
var lfuSessions = []respSession{
	{name: "lfu strings", in: mb("CONFIG", "SET", "lfu-decay-time", "0") +
		mb("SET", "lf:s", "v") + mb("OBJECT", "FREQ", "lf:s") + reads(3, "GET", "lf:s") + mb("OBJECT", "FREQ", "lf:s") +
		mb("SET", "lf:s", "w") + mb("OBJECT", "FREQ", "lf:s") + mb("APPEND", "lf:s", "x") + mb("OBJECT", "FREQ", "lf:s") +
		mb("STRLEN", "lf:s") + mb("GETRANGE", "lf:s", "0", "1") + mb("OBJECT", "FREQ", "lf:s") +
		mb("INCR", "lf:n") + mb("OBJECT", "FREQ", "lf:n") + mb("INCRBY", "lf:n", "5") + mb("OBJECT", "FREQ", "lf:n") +
		mb("EXISTS", "lf:s") + mb("TYPE", "lf:s") + mb("TTL", "lf:s") + mb("OBJECT", "FREQ", "lf:s") +
		mb("OBJECT", "IDLETIME", "lf:s") + mb("OBJECT", "FREQ", "lf:nosuch") + mb("OBJECT", "IDLETIME", "lf:nosuch") +
		mb("DEL", "lf:s", "lf:n")},
	{name: "lfu saturates at 255", in: mb("CONFIG", "SET", "lfu-decay-time", "0") +
		mb("SET", "lf:hot", "v") + reads(240, "GET", "lf:hot") + mb("OBJECT", "FREQ", "lf:hot") +
		reads(30, "GET", "lf:hot") + mb("OBJECT", "FREQ", "lf:hot") + mb("DEL", "lf:hot")},
	{name: "lfu lists", in: mb("CONFIG", "SET", "lfu-decay-time", "0") +
		mb("RPUSH", "lf:l", "a", "b", "c") + mb("OBJECT", "FREQ", "lf:l") + reads(4, "LRANGE", "lf:l", "0", "-1") +
		mb("LINDEX", "lf:l", "1") + mb("LLEN", "lf:l") + mb("OBJECT", "FREQ", "lf:l") + mb("RPUSH", "lf:l", "d") +
		mb("LPOP", "lf:l") + mb("OBJECT", "FREQ", "lf:l") + mb("DEL", "lf:l")},
	{name: "lfu hashes", in: mb("CONFIG", "SET", "lfu-decay-time", "0") +
		mb("HSET", "lf:h", "f", "1", "g", "2") + mb("OBJECT", "FREQ", "lf:h") + reads(5, "HGET", "lf:h", "f") +
		mb("HGETALL", "lf:h") + mb("HLEN", "lf:h") + mb("OBJECT", "FREQ", "lf:h") + mb("HSET", "lf:h", "f", "3") +
		mb("HINCRBY", "lf:h", "g", "1") + mb("OBJECT", "FREQ", "lf:h") + mb("DEL", "lf:h")},
	{name: "lfu sets", in: mb("CONFIG", "SET", "lfu-decay-time", "0") +
		mb("SADD", "lf:set", "a", "b") + mb("OBJECT", "FREQ", "lf:set") + reads(6, "SISMEMBER", "lf:set", "a") +
		mb("SMISMEMBER", "lf:set", "a", "z") + mb("SCARD", "lf:set") + mb("OBJECT", "FREQ", "lf:set") + mb("SADD", "lf:set", "c") +
		mb("SREM", "lf:set", "a") + mb("OBJECT", "FREQ", "lf:set") + mb("DEL", "lf:set")},
	{name: "lfu sorted sets", in: mb("CONFIG", "SET", "lfu-decay-time", "0") +
		mb("ZADD", "lf:z", "1", "a", "2", "b") + mb("OBJECT", "FREQ", "lf:z") + reads(7, "ZSCORE", "lf:z", "a") +
		mb("ZRANGE", "lf:z", "0", "-1") + mb("ZCARD", "lf:z") + mb("OBJECT", "FREQ", "lf:z") + mb("ZINCRBY", "lf:z", "1", "a") +
		mb("OBJECT", "FREQ", "lf:z") + mb("DEL", "lf:z")},
	{name: "lfu streams", in: mb("CONFIG", "SET", "lfu-decay-time", "0") +
		mb("XADD", "lf:x", "1-1", "f", "v") + mb("OBJECT", "FREQ", "lf:x") + reads(3, "XRANGE", "lf:x", "-", "+") +
		mb("XLEN", "lf:x") + mb("OBJECT", "FREQ", "lf:x") + mb("XADD", "lf:x", "2-1", "f", "v") + mb("OBJECT", "FREQ", "lf:x") +
		mb("DEL", "lf:x")},
	{name: "lfu rename copy touch", in: mb("CONFIG", "SET", "lfu-decay-time", "0") +
		mb("SET", "lf:a", "v") + reads(3, "GET", "lf:a") + mb("RENAME", "lf:a", "lf:b") + mb("OBJECT", "FREQ", "lf:b") +
		mb("COPY", "lf:b", "lf:c") + mb("OBJECT", "FREQ", "lf:c") + mb("TOUCH", "lf:c", "lf:b") + mb("OBJECT", "FREQ", "lf:c") +
		mb("DEL", "lf:b", "lf:c") +
		// Redis 7.2's dbAdd gives a renamed or moved value a new counter.
		mb("SET", "lf:m", "v") + reads(2, "GET", "lf:m") + mb("RENAMENX", "lf:m", "lf:n") + mb("OBJECT", "FREQ", "lf:n") +
		reads(2, "GET", "lf:n") + mb("RENAME", "lf:n", "lf:n") + mb("OBJECT", "FREQ", "lf:n") + mb("MOVE", "lf:n", "9") +
		mb("SELECT", "9") + mb("OBJECT", "FREQ", "lf:n") + mb("SELECT", "0") + mb("SET", "lf:n", "w") + mb("SET", "lf:o", "x") +
		mb("RENAMENX", "lf:n", "lf:o") + mb("MOVE", "lf:n", "9") + mb("OBJECT", "FREQ", "lf:n") + mb("OBJECT", "FREQ", "lf:o") +
		mb("SELECT", "9") + mb("OBJECT", "FREQ", "lf:n") + mb("DEL", "lf:n") + mb("SELECT", "0") + mb("DEL", "lf:n", "lf:o")},
	{name: "lfu more string commands", in: mb("CONFIG", "SET", "lfu-decay-time", "0") +
		mb("SET", "lm:s", "hello") + mb("SETRANGE", "lm:s", "1", "a") + mb("OBJECT", "FREQ", "lm:s") +
		mb("GETBIT", "lm:s", "3") + mb("OBJECT", "FREQ", "lm:s") + mb("SETBIT", "lm:s", "3", "1") + mb("OBJECT", "FREQ", "lm:s") +
		mb("BITCOUNT", "lm:s") + mb("OBJECT", "FREQ", "lm:s") + mb("GETEX", "lm:s") + mb("OBJECT", "FREQ", "lm:s") +
		mb("EXPIRE", "lm:s", "1000") + mb("OBJECT", "FREQ", "lm:s") + mb("PERSIST", "lm:s") + mb("OBJECT", "FREQ", "lm:s") +
		mb("DUMP", "lm:s") + mb("OBJECT", "FREQ", "lm:s") + mb("OBJECT", "ENCODING", "lm:p") + mb("MEMORY", "USAGE", "lm:p") +
		mb("OBJECT", "FREQ", "lm:s") + mb("MGET", "lm:s", "lm:s") + mb("OBJECT", "FREQ", "lm:s") +
		mb("GETSET", "lm:s", "x") + mb("OBJECT", "FREQ", "lm:s") + mb("SETNX", "lm:s", "y") + mb("OBJECT", "FREQ", "lm:s") +
		mb("SET", "lm:s", "z", "NX") + mb("OBJECT", "FREQ", "lm:s") + mb("SET", "lm:s", "z", "XX") + mb("OBJECT", "FREQ", "lm:s") +
		mb("SET", "lm:s", "q", "GET") + mb("OBJECT", "FREQ", "lm:s") + mb("MSET", "lm:s", "r") + mb("OBJECT", "FREQ", "lm:s") +
		mb("PFADD", "lm:p", "a") + mb("PFCOUNT", "lm:p") + mb("OBJECT", "FREQ", "lm:p") + mb("DEL", "lm:s", "lm:p")},
	{name: "lfu more collection commands", in: mb("CONFIG", "SET", "lfu-decay-time", "0") +
		mb("RPUSH", "lm:l", "a", "b") + mb("LPOS", "lm:l", "b") + mb("LSET", "lm:l", "0", "c") + mb("OBJECT", "FREQ", "lm:l") +
		mb("HSET", "lm:h", "f", "v") + mb("HEXISTS", "lm:h", "f") + mb("HKEYS", "lm:h") + mb("HDEL", "lm:h", "nope") + mb("OBJECT", "FREQ", "lm:h") +
		mb("SADD", "lm:t", "a") + mb("SRANDMEMBER", "lm:t") + mb("SINTER", "lm:t") + mb("OBJECT", "FREQ", "lm:t") +
		mb("ZADD", "lm:z", "1", "a") + mb("ZRANK", "lm:z", "a") + mb("ZRANGEBYSCORE", "lm:z", "0", "5") + mb("OBJECT", "FREQ", "lm:z") +
		mb("SORT", "lm:l", "ALPHA") + mb("OBJECT", "FREQ", "lm:l") + mb("LMOVE", "lm:l", "lm:l2", "LEFT", "LEFT") +
		mb("OBJECT", "FREQ", "lm:l") + mb("OBJECT", "FREQ", "lm:l2") + mb("SUNIONSTORE", "lm:t2", "lm:t") + mb("OBJECT", "FREQ", "lm:t2") +
		mb("OBJECT", "FREQ", "lm:t") + mb("XADD", "lm:x", "1-1", "f", "v") + mb("XREVRANGE", "lm:x", "+", "-") + mb("XINFO", "STREAM", "lm:x") +
		mb("OBJECT", "FREQ", "lm:x") + mb("DEL", "lm:l", "lm:l2", "lm:h", "lm:t", "lm:t2", "lm:z", "lm:x")},
	{name: "lfu config values", in: mb("CONFIG", "GET", "maxmemory-policy") + mb("CONFIG", "GET", "lfu-log-factor") + mb("CONFIG", "GET", "lfu-decay-time") +
		mb("CONFIG", "SET", "lfu-log-factor", "abc") + mb("CONFIG", "SET", "lfu-log-factor", "-1") +
		mb("CONFIG", "SET", "lfu-log-factor", "2147483648") + mb("CONFIG", "SET", "lfu-decay-time", "-1") +
		mb("CONFIG", "SET", "lfu-decay-time", "1.5") + mb("CONFIG", "SET", "lfu-log-factor", "7", "lfu-decay-time", "3") +
		mb("CONFIG", "GET", "lfu-log-factor") + mb("CONFIG", "GET", "lfu-decay-time") + mb("CONFIG", "SET", "lfu-log-factor", "0", "lfu-decay-time", "1") +
		mb("CONFIG", "SET", "maxmemory-policy", "bogus") + mb("CONFIG", "GET", "maxmemory-policy")},
	{name: "lfu policy switches", in: mb("CONFIG", "SET", "lfu-decay-time", "0") + mb("SET", "lf:p", "v") +
		mb("CONFIG", "SET", "maxmemory-policy", "allkeys-lru") + mb("CONFIG", "GET", "maxmemory-policy") +
		mb("OBJECT", "FREQ", "lf:p") + mb("CONFIG", "SET", "maxmemory-policy", "noeviction") + mb("OBJECT", "FREQ", "lf:p") +
		mb("CONFIG", "SET", "maxmemory-policy", "ALLKEYS-LFU") + mb("CONFIG", "GET", "maxmemory-policy") +
		mb("SET", "lf:p", "w") + mb("OBJECT", "FREQ", "lf:p") + mb("OBJECT", "IDLETIME", "lf:p") + mb("DEL", "lf:p")},
}

func TestLFUDifferential(t *testing.T) {
	redisAddr := startRedisServer(t, "--maxmemory", "1gb", "--maxmemory-policy", "allkeys-lfu", "--lfu-log-factor", "0")
	rs := startRESP(t, server.Config{}, store.Config{})
	c := dialRESP(t, rs.respAddr)
	c.Expect(mb("CONFIG", "SET", "maxmemory", "1gb", "maxmemory-policy", "allkeys-lfu", "lfu-log-factor", "0"), "+OK\r\n")
	sessions := lfuSessions
	// RESTORE with FREQ: a payload of Redis's own DUMP.
	rc := dialRESP(t, redisAddr)
	rc.Expect(mb("SET", "lf:src", "payload"), "+OK\r\n")
	dump := rc.Do("DUMP", "lf:src")
	payload, ok := strings.CutPrefix(dump, "$")
	if !ok {
		t.Fatalf("DUMP: %q", dump)
	}
	_, payload, _ = strings.Cut(payload, "\r\n")
	payload = strings.TrimSuffix(payload, "\r\n")
	rc.Expect(mb("DEL", "lf:src"), ":1\r\n")
	sessions = append(sessions, respSession{name: "lfu restore freq", in: mb("CONFIG", "SET", "lfu-decay-time", "0") +
		mb("RESTORE", "lf:r", "0", payload, "FREQ", "100") + mb("OBJECT", "FREQ", "lf:r") +
		mb("RESTORE", "lf:r", "0", payload, "REPLACE", "FREQ", "256") + mb("RESTORE", "lf:r", "0", payload, "REPLACE", "FREQ", "-1") +
		mb("RESTORE", "lf:r", "0", payload, "REPLACE", "FREQ", "x") + mb("OBJECT", "FREQ", "lf:r") +
		mb("RESTORE", "lf:r", "0", payload, "REPLACE", "FREQ", "255") + mb("OBJECT", "FREQ", "lf:r") + mb("GET", "lf:r") +
		mb("OBJECT", "FREQ", "lf:r") + mb("RESTORE", "lf:r", "0", payload, "REPLACE", "IDLETIME", "1000") + mb("OBJECT", "FREQ", "lf:r") +
		mb("RESTORE", "lf:r", "0", payload, "REPLACE") + mb("OBJECT", "FREQ", "lf:r") +
		mb("RESTORE", "lf:r2", "0", payload, "FREQ", "0") + mb("OBJECT", "FREQ", "lf:r2") + mb("DEL", "lf:r", "lf:r2")})
	runSerialSessions(t, redisAddr, rs.respAddr, sessions)
}

// TestLFUFreqReachesRedisReplica: the full sync's RDB carries a MiniKV
// primary's LFU counters (RDB_OPCODE_FREQ) under allkeys-lfu, as Redis's
// does: a redis-server replica, itself under allkeys-lfu, answers OBJECT
// FREQ with the primary's counters. lfu-log-factor 0 and lfu-decay-time 0
// on both make the counters exact.
func TestLFUFreqReachesRedisReplica(t *testing.T) {
	rs := startRESP(t, server.Config{}, store.Config{})
	_, port, _ := net.SplitHostPort(rs.respAddr)
	c := dialRESP(t, rs.respAddr)
	c.Expect(mb("CONFIG", "SET", "maxmemory-policy", "allkeys-lfu", "lfu-log-factor", "0", "lfu-decay-time", "0"), "+OK\r\n")
	want := map[string]string{"lr:s": ":17\r\n", "lr:l": ":8\r\n", "lr:h": ":5\r\n"}
	c.Expect(mb("SET", "lr:s", "v"), "+OK\r\n")
	c.Expect(mb("RPUSH", "lr:l", "a"), ":1\r\n")
	c.Expect(mb("HSET", "lr:h", "f", "v"), ":1\r\n")
	for range 12 {
		c.Expect(mb("GET", "lr:s"), "$1\r\nv\r\n")
	}
	for range 3 {
		c.Expect(mb("LLEN", "lr:l"), ":1\r\n")
	}
	for k, w := range want {
		c.Expect(mb("OBJECT", "FREQ", k), w)
	}
	replica := startRedisServer(t, "--maxmemory", "1gb", "--maxmemory-policy", "allkeys-lfu",
		"--lfu-log-factor", "0", "--lfu-decay-time", "0", "--replicaof", "127.0.0.1", port)
	waitFor(t, "the replica's link", func() bool { return infoField(t, replica, "replication", "master_link_status") == "up" })
	rc := dialRESP(t, replica)
	for k, w := range want {
		if got := rc.Do("OBJECT", "FREQ", k); got != w {
			t.Errorf("redis-server replica: OBJECT FREQ %s = %q, want %q", k, got, w)
		}
	}
}

package redis

import (
	"strconv"
	"strings"
	"testing"

	"github.com/minikv/minikv/internal/server"
	"github.com/minikv/minikv/internal/store"
)

// configSessions change server-wide settings, so they run one after the
// other against a redis-server and a MiniKV of their own (the sessions of
// TestRESPDifferential run in parallel on shared servers). Each leaves
// the settings as it found them.
var configSessions = []respSession{
	{name: "config set syntax", in: mb("CONFIG", "SET", "timeout", "1", "maxmemory") + mb("CONFIG", "SET", "timeout") +
		mb("CONFIG", "SET") + mb("CONFIG", "SET", "nosuch", "1") + mb("CONFIG", "SET", "timeout", "5", "nosuch", "1") +
		mb("CONFIG", "GET", "timeout")},
	{name: "config set immutable", in: mb("CONFIG", "SET", "databases", "3") + mb("CONFIG", "SET", "io-threads", "2") +
		mb("CONFIG", "SET", "hash-max-listpack-entries", "7", "cluster-enabled", "yes") + mb("CONFIG", "GET", "hash-max-listpack-entries")},
	{name: "config set duplicate", in: mb("CONFIG", "SET", "timeout", "1", "timeout", "2") +
		mb("CONFIG", "SET", "Timeout", "1", "TIMEOUT", "2") + mb("CONFIG", "SET", "hash-max-listpack-entries", "9", "hash-max-ziplist-entries", "10") +
		mb("CONFIG", "GET", "hash-max-listpack-entries") + mb("CONFIG", "SET", "hash-max-listpack-entries", "512") + mb("CONFIG", "GET", "timeout")},
	{name: "config set integers", in: mb("CONFIG", "SET", "hash-max-listpack-entries", "+5") + mb("CONFIG", "SET", "hash-max-listpack-entries", "05") +
		mb("CONFIG", "SET", "hash-max-listpack-entries", "-0") + mb("CONFIG", "SET", "hash-max-listpack-entries", "") +
		mb("CONFIG", "SET", "hash-max-listpack-entries", "5.0") + mb("CONFIG", "SET", "list-max-listpack-size", "2147483648") +
		mb("CONFIG", "SET", "list-max-listpack-size", "-2147483649") + mb("CONFIG", "GET", "hash-max-listpack-entries")},
	{name: "config set all or nothing", in: mb("CONFIG", "SET", "hash-max-listpack-entries", "3", "zset-max-listpack-entries", "x") +
		mb("CONFIG", "GET", "hash-max-listpack-entries") + mb("CONFIG", "GET", "zset-max-listpack-entries") +
		mb("CONFIG", "SET", "hash-max-listpack-entries", "3", "zset-max-listpack-entries", "4") +
		mb("CONFIG", "GET", "hash-max-listpack-entries") + mb("CONFIG", "GET", "zset-max-listpack-entries") +
		mb("CONFIG", "SET", "hash-max-listpack-entries", "512", "zset-max-listpack-entries", "128")},
	{name: "config set case", in: mb("CONFIG", "SET", "HASH-MAX-LISTPACK-VALUE", "32") + mb("CONFIG", "GET", "HASH-max-listpack-VALUE") +
		mb("CONFIG", "SET", "hash-max-listpack-value", "64") + mb("CONFIG", "GET", "hash-max-listpack-value")},
	{name: "config set maxmemory", in: mb("CONFIG", "SET", "maxmemory", "abc") + mb("CONFIG", "SET", "maxmemory", "-1") +
		mb("CONFIG", "SET", "maxmemory", "1tb") + mb("CONFIG", "SET", "maxmemory", "10mb") + mb("CONFIG", "GET", "maxmemory") +
		mb("CONFIG", "SET", "maxmemory", "5k") + mb("CONFIG", "GET", "maxmemory") + mb("CONFIG", "SET", "maxmemory", "1GB") +
		mb("CONFIG", "GET", "maxmemory") + mb("CONFIG", "SET", "maxmemory", "10mb", "timeout", "abc") + mb("CONFIG", "GET", "maxmemory") +
		mb("CONFIG", "SET", "maxmemory", "64mb")},
	{name: "config set maxmemory-policy", in: mb("CONFIG", "SET", "maxmemory-policy", "foo") +
		mb("CONFIG", "SET", "maxmemory-policy", "NoEviction") + mb("CONFIG", "GET", "maxmemory-policy") +
		mb("CONFIG", "SET", "maxmemory-policy", "allkeys-lru") + mb("CONFIG", "GET", "maxmemory-policy")},
	{name: "config set timeout", in: mb("CONFIG", "SET", "timeout", "-1") + mb("CONFIG", "SET", "timeout", "1.5") +
		mb("CONFIG", "SET", "timeout", "2147483648") + mb("CONFIG", "SET", "timeout", "300") + mb("CONFIG", "GET", "timeout") +
		mb("CONFIG", "SET", "timeout", "0") + mb("CONFIG", "GET", "timeout")},
	{name: "config set maxclients", in: mb("CONFIG", "SET", "maxclients", "0") + mb("CONFIG", "SET", "maxclients", "abc") +
		mb("CONFIG", "SET", "maxclients", "4294967296") + mb("CONFIG", "SET", "maxclients", "50") + mb("CONFIG", "GET", "maxclients") +
		mb("CONFIG", "SET", "maxclients", "1000") + mb("CONFIG", "GET", "maxclients")},
	{name: "config set several", in: mb("CONFIG", "SET", "timeout", "7", "maxclients", "77", "maxmemory", "7mb") +
		mb("CONFIG", "GET", "timeout") + mb("CONFIG", "GET", "maxclients") + mb("CONFIG", "GET", "maxmemory") +
		mb("CONFIG", "SET", "timeout", "8", "maxclients", "0") + mb("CONFIG", "GET", "timeout") + mb("CONFIG", "GET", "maxclients") +
		mb("CONFIG", "SET", "timeout", "0", "maxclients", "1000", "maxmemory", "64mb")},
	{name: "config rewrite without a file", in: mb("CONFIG", "REWRITE") + mb("CONFIG", "REWRITE", "x")},
	{name: "config help", in: mb("CONFIG", "HELP") + mb("config", "help")},
	{name: "maxmemory 0 after a limit, all or nothing", in: mb("CONFIG", "SET", "timeout", "70", "maxmemory", "100") +
		mb("CONFIG", "SET", "timeout", "0", "maxmemory", "bogus") + mb("CONFIG", "GET", "timeout") + mb("CONFIG", "GET", "maxmemory") +
		mb("CONFIG", "SET", "timeout", "0", "maxmemory", "0") + mb("CONFIG", "GET", "timeout") + mb("CONFIG", "GET", "maxmemory") +
		mb("SET", "mm:big", strings.Repeat("b", 3*mib)) + mb("STRLEN", "mm:big") + mb("DEL", "mm:big") +
		mb("CONFIG", "SET", "maxmemory", "64mb")},
	{name: "proto-max-bulk-len values", in: mb("CONFIG", "GET", "proto-max-bulk-len") +
		mb("CONFIG", "SET", "proto-max-bulk-len", "1000") + mb("CONFIG", "SET", "proto-max-bulk-len", "1048575") +
		mb("CONFIG", "SET", "proto-max-bulk-len", "-1") + mb("CONFIG", "SET", "proto-max-bulk-len", "abc") +
		mb("CONFIG", "SET", "proto-max-bulk-len", "9223372036854775808") +
		mb("CONFIG", "SET", "proto-max-bulk-len", "1gb") + mb("CONFIG", "GET", "proto-max-bulk-len") +
		mb("CONFIG", "SET", "proto-max-bulk-len", "1mb") + mb("CONFIG", "GET", "proto-max-bulk-len") +
		mb("CONFIG", "SET", "proto-max-bulk-len", "512mb")},
	{name: "strings within proto-max-bulk-len", in: mb("CONFIG", "SET", "proto-max-bulk-len", "1mb") +
		mb("SET", "pb:a", strings.Repeat("x", mib)) + mb("APPEND", "pb:a", "y") +
		mb("SETRANGE", "pb:a", strconv.Itoa(mib), "z") + mb("SETRANGE", "pb:a", strconv.Itoa(mib-1), "z") + mb("STRLEN", "pb:a") +
		mb("SETBIT", "pb:b", strconv.Itoa(8*mib), "1") + mb("SETBIT", "pb:b", strconv.Itoa(8*mib-1), "1") +
		mb("GETBIT", "pb:b", strconv.Itoa(8*mib)) + mb("BITFIELD", "pb:b", "SET", "u8", strconv.Itoa(8*mib), "1") +
		mb("STRLEN", "pb:b") + mb("DEL", "pb:a", "pb:b") + mb("CONFIG", "SET", "proto-max-bulk-len", "512mb")},
	{name: "values and elements over 1 MiB", in: mb("SET", "bv:s", strings.Repeat("s", 5*mib)) + mb("APPEND", "bv:s", "t") +
		mb("STRLEN", "bv:s") + mb("GETRANGE", "bv:s", "-3", "-1") + mb("SETRANGE", "bv:r", strconv.Itoa(3*mib), "r") + mb("STRLEN", "bv:r") +
		mb("LPUSH", "bv:l", strings.Repeat("l", 5*mib)) + mb("RPUSH", "bv:l", "small") + mb("LINDEX", "bv:l", "1") +
		mb("HSET", "bv:h", "f", strings.Repeat("h", 5*mib)) + mb("HSTRLEN", "bv:h", "f") +
		mb("HSET", "bv:h2", strings.Repeat("k", 5*mib), "v") + mb("HLEN", "bv:h2") +
		mb("SADD", "bv:set", strings.Repeat("m", 5*mib)) + mb("SCARD", "bv:set") +
		mb("ZADD", "bv:z", "1", strings.Repeat("z", 5*mib)) + mb("ZCARD", "bv:z") +
		mb("DEL", "bv:s", "bv:r", "bv:l", "bv:h", "bv:h2", "bv:set", "bv:z")},
	// Last: the connection closes before the limit can be put back.
	{name: "a bulk over proto-max-bulk-len closes", in: mb("CONFIG", "SET", "proto-max-bulk-len", "1mb") +
		"*3\r\n$3\r\nSET\r\n$4\r\npb:c\r\n$1048577\r\n"},
}

// mib is a MiB, for the sessions' sizes.
const mib = 1 << 20

func TestConfigDifferential(t *testing.T) {
	redisAddr := startRedisServer(t, "--maxmemory", "64mb", "--maxmemory-policy", "allkeys-lru", "--maxclients", "1000")
	rs := startRESP(t, server.Config{MaxConns: 1000}, store.Config{})
	runSerialSessions(t, redisAddr, rs.respAddr, configSessions)
}

// runSerialSessions runs sessions one at a time against both servers and
// compares the replies byte for byte.
func runSerialSessions(t *testing.T, redisAddr, minikvAddr string, sessions []respSession) {
	t.Helper()
	for _, s := range sessions {
		t.Run(s.name, func(t *testing.T) {
			want := runRESPSession(redisAddr, s)
			got := runRESPSession(minikvAddr, s)
			if want.err != nil || got.err != nil {
				t.Fatalf("redis: %v; minikv: %v", want.err, got.err)
			}
			if !sameRESPReplies(s, got, want) || got.closed != want.closed {
				t.Errorf("session %q differs\nredis  (closed %v): %.4000q\nminikv (closed %v): %.4000q",
					s.name, want.closed, want.out, got.closed, got.out)
			}
		})
	}
}

package redis

// Differential tests of the stream commands against redis-server 7.2.4:
// raw sessions with explicit IDs (a "*" ID only where the reply does not
// show the clock), each run over RESP2 and over RESP3 (HELLO 3) on keys
// of its own, and every reply compared byte for byte.
//
// Three fields cannot be byte-equal and are masked (streamMask):
//
//   - the idle time of each entry of XPENDING's extended form
//     (milliseconds since the last delivery, read at a different instant
//     on each server);
//   - XINFO STREAM's radix-tree-keys and radix-tree-nodes: the layout of
//     Redis's radix tree of listpacks, not a property of the stream;
//   - the ID XADD "*" makes (the clock).
//
// XINFO CONSUMERS and XINFO STREAM FULL carry times (idle and inactive,
// seen-time and active-time, delivery times) all through: they are kept
// out of these byte sessions and compared parsed by go-redis in
// TestStreamXInfoParsed, with the clock and radix tree fields zeroed, and
// byte for byte, the times masked only when plausible, in
// stream72_test.go (Redis 7.2's consumer times, and the consumers it
// makes where 7.0 did not).
//
// Rerun with -args -stream.log to see redis-server's replies, command by
// command.

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/minikv/minikv/internal/protocol/resp"
	"github.com/minikv/minikv/internal/server"
	"github.com/minikv/minikv/internal/server/servertest"
	"github.com/minikv/minikv/internal/store"
)

var (
	streamLog          = flag.Bool("stream.log", false, "log redis-server's replies in the stream differential tests")
	streamAgainstRedis = flag.Bool("stream.self", false, "run the stream differential tests against a second redis-server instead of MiniKV (checks the tests)")
)

// streamPeer is the server the stream tests hold against redis-server:
// MiniKV, or with -stream.self a second redis-server, to check that a test
// compares only what does not depend on the clock or on the server.
func streamPeer(t *testing.T) string {
	t.Helper()
	if *streamAgainstRedis {
		return startRedisServer(t)
	}
	return startRESP(t, server.Config{}, store.Config{MaxItemSize: 1 << 20}).respAddr
}

// streamSession is a session over keys of its own: in gets the prefix,
// different in the RESP2 and the RESP3 run, so both start from nothing.
type streamSession struct {
	name string
	in   func(k func(string) string) string
}

// xaddN is XADD key ms-1 ... ms-n with one field each, ms from 1.
func xaddN(key string, n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		b.WriteString(mb("XADD", key, strconv.Itoa(i)+"-1", "f", "v"+strconv.Itoa(i)))
	}
	return b.String()
}

var streamSessions = []streamSession{
	{"xadd", func(k func(string) string) string {
		return mb("XADD", k("s"), "1-1", "a", "1") + mb("XADD", k("s"), "1-2", "a", "2", "b", "3") + mb("XADD", k("s"), "2", "c", "") +
			mb("XADD", k("s"), "2-0", "x", "y") + mb("XADD", k("s"), "1-5", "x", "y") + mb("XADD", k("s"), "2-1", "dup", "1", "dup", "2") +
			mb("XADD", k("s"), "2-*", "x", "y") + mb("XADD", k("s"), "2-*", "x", "y") + mb("XADD", k("s"), "3-*", "x", "y") +
			mb("XADD", k("s"), "18446744073709551615-18446744073709551614", "big", "1") + mb("XADD", k("s"), "18446744073709551615-*", "last", "1") +
			mb("XADD", k("s"), "18446744073709551615-*", "over", "1") + mb("XADD", k("s"), "*", "over", "1") +
			mb("XRANGE", k("s"), "-", "+") + mb("XLEN", k("s")) + mb("TYPE", k("s")) + mb("OBJECT", "ENCODING", k("s")) +
			mb("XADD", k("z"), "0-0", "a", "1") + mb("XADD", k("z"), "0", "a", "1") + mb("XADD", k("z"), "0-*", "a", "1") + mb("XADD", k("z"), "0-*", "a", "1") +
			mb("XADD", k("z"), "0-1", "a", "1") + mb("XLEN", k("z"))
	}},
	{"xadd errors", func(k func(string) string) string {
		return mb("XADD", k("e"), "1-1", "a") + mb("XADD", k("e"), "1-1", "a", "1", "b") + mb("XADD", k("e"), "1-1") + mb("XADD", k("e")) +
			mb("XADD", k("e"), "x", "a", "1") + mb("XADD", k("e"), "1-x", "a", "1") + mb("XADD", k("e"), "-1", "a", "1") + mb("XADD", k("e"), "1-", "a", "1") +
			mb("XADD", k("e"), "-", "a", "1") + mb("XADD", k("e"), "+", "a", "1") + mb("XADD", k("e"), "1--1", "a", "1") + mb("XADD", k("e"), " 1", "a", "1") +
			mb("XADD", k("e"), "18446744073709551616", "a", "1") + mb("XADD", k("e"), "1-18446744073709551616", "a", "1") + mb("XADD", k("e"), "*-1", "a", "1") +
			mb("XADD", k("e"), "1.5", "a", "1") + mb("XADD", k("e"), "", "a", "1") + mb("EXISTS", k("e")) +
			mb("XADD", k("e"), "5-5", "a", "1") + mb("XADD", k("e"), "5-5", "a", "1") + mb("XADD", k("e"), "5-4", "a", "1") + mb("XADD", k("e"), "4", "a", "1") +
			mb("XADD", k("e"), "5", "a", "1") + mb("XADD", k("e"), "MAXLEN", "1", "LIMIT", "10", "6-1", "a", "1") +
			mb("XADD", k("e"), "MAXLEN", "=", "1", "LIMIT", "10", "6-1", "a", "1") + mb("XADD", k("e"), "MAXLEN", "-1", "6-1", "a", "1") +
			mb("XADD", k("e"), "MAXLEN", "x", "6-1", "a", "1") + mb("XADD", k("e"), "MAXLEN", "~", "1", "LIMIT", "-1", "6-1", "a", "1") +
			mb("XADD", k("e"), "MINID", "x", "6-1", "a", "1") + mb("XADD", k("e"), "MAXLEN", "1", "MINID", "1", "6-1", "a", "1") +
			mb("XADD", k("e"), "MAXLEN") + mb("XADD", k("e"), "NOMKSTREAM") + mb("XADD", k("e"), "FOO", "6-1", "a", "1") +
			mb("XADD", k("e"), "6-1", "a", "1", "NOMKSTREAM") + mb("XLEN", k("e")) + mb("XRANGE", k("e"), "-", "+") +
			mb("SET", k("str"), "v") + mb("XADD", k("str"), "1-1", "a", "1") + mb("XADD", k("str"), "1-1", "a") + mb("XADD", k("str"), "x", "a", "1") +
			mb("XADD", k("str"), "NOMKSTREAM", "1-1", "a", "1")
	}},
	{"xadd nomkstream and trimming", func(k func(string) string) string {
		return mb("XADD", k("n"), "NOMKSTREAM", "1-1", "a", "1") + mb("EXISTS", k("n")) + mb("XADD", k("n"), "NOMKSTREAM", "*", "a", "1") +
			mb("EXISTS", k("n")) + mb("XADD", k("n"), "1-1", "a", "1") + mb("XADD", k("n"), "NOMKSTREAM", "2-1", "a", "2") +
			xaddN(k("t"), 10) + mb("XADD", k("t"), "MAXLEN", "5", "11-1", "f", "v") + mb("XLEN", k("t")) + mb("XRANGE", k("t"), "-", "+") +
			mb("XADD", k("t"), "MAXLEN", "=", "3", "12-1", "f", "v") + mb("XRANGE", k("t"), "-", "+") +
			mb("XADD", k("t"), "MINID", "11", "13-1", "f", "v") + mb("XRANGE", k("t"), "-", "+") +
			mb("XADD", k("t"), "MINID", "=", "12-1", "14-1", "f", "v") + mb("XRANGE", k("t"), "-", "+") +
			mb("XADD", k("t"), "MAXLEN", "0", "15-1", "f", "v") + mb("XLEN", k("t")) + mb("XRANGE", k("t"), "-", "+") +
			mb("XADD", k("t"), "MINID", "100", "16-1", "f", "v") + mb("XLEN", k("t")) + mb("EXISTS", k("t")) +
			// ~ trims whole nodes only: with 100 entries a node (the default
			// stream-node-max-entries), MAXLEN ~ 10 of 30 trims nothing,
			// and of 250 drops the first node(s) only.
			xaddN(k("a"), 30) + mb("XADD", k("a"), "MAXLEN", "~", "10", "31-1", "f", "v") + mb("XLEN", k("a")) +
			xaddN(k("b"), 250) + mb("XADD", k("b"), "MAXLEN", "~", "10", "251-1", "f", "v") + mb("XLEN", k("b")) +
			mb("XADD", k("b"), "MAXLEN", "~", "10", "LIMIT", "0", "252-1", "f", "v") + mb("XLEN", k("b")) +
			xaddN(k("c"), 250) + mb("XADD", k("c"), "MAXLEN", "~", "10", "LIMIT", "100", "251-1", "f", "v") + mb("XLEN", k("c")) +
			mb("XADD", k("c"), "MAXLEN", "~", "10", "LIMIT", "99", "252-1", "f", "v") + mb("XLEN", k("c")) +
			mb("XADD", k("c"), "MINID", "~", "200", "253-1", "f", "v") + mb("XLEN", k("c")) + mb("XRANGE", k("c"), "-", "+", "COUNT", "1") +
			mb("XADD", k("c"), "MINID", "~", "240", "LIMIT", "1000", "254-1", "f", "v") + mb("XLEN", k("c")) +
			mb("XADD", k("c"), "NOMKSTREAM", "MAXLEN", "1", "255-1", "f", "v") + mb("XLEN", k("c")) + mb("XRANGE", k("c"), "-", "+")
	}},
	{"xrange xrevrange", func(k func(string) string) string {
		s := k("s")
		return xaddN(s, 8) + mb("XADD", s, "5-2", "g", "w") + mb("XADD", s, "5-3", "h", "x") +
			mb("XRANGE", s, "-", "+") + mb("XREVRANGE", s, "+", "-") + mb("XRANGE", s, "-", "+", "COUNT", "3") + mb("XREVRANGE", s, "+", "-", "COUNT", "3") +
			mb("XRANGE", s, "5", "5") + mb("XRANGE", s, "5-2", "5") + mb("XRANGE", s, "4", "6-0") + mb("XREVRANGE", s, "5", "3") +
			mb("XRANGE", s, "(5-1", "+") + mb("XRANGE", s, "(5-1", "(6-1") + mb("XREVRANGE", s, "(7-1", "(5-2") + mb("XRANGE", s, "(5", "+", "COUNT", "2") +
			mb("XRANGE", s, "(0", "(2") + mb("XRANGE", s, "5-3", "5-2") + mb("XREVRANGE", s, "-", "+") + mb("XRANGE", s, "+", "-") +
			mb("XRANGE", s, "-", "+", "COUNT", "0") + mb("XRANGE", s, "-", "+", "COUNT", "-1") + mb("XREVRANGE", s, "+", "-", "COUNT", "0") +
			mb("XRANGE", s, "-", "+", "COUNT", "x") + mb("XRANGE", s, "-", "+", "COUNT") + mb("XRANGE", s, "-", "+", "FOO", "1") +
			mb("XRANGE", s, "x", "+") + mb("XRANGE", s, "-", "1-x") + mb("XRANGE", s, "(-", "+") + mb("XRANGE", s, "-", "(+") +
			mb("XRANGE", s, "(18446744073709551615-18446744073709551615", "+") + mb("XREVRANGE", s, "+", "(0-0") + mb("XRANGE", s, "(0-0", "1-1") +
			mb("XRANGE", s, "18446744073709551615", "+") + mb("XRANGE", s, "0", "0") + mb("XRANGE", k("nope"), "-", "+") +
			mb("XREVRANGE", k("nope"), "+", "-", "COUNT", "1") + mb("XRANGE", s, "-", "+", "COUNT", "2", "COUNT", "4") + mb("XRANGE", s) +
			mb("XREVRANGE", s, "+") + mb("SET", k("str"), "v") + mb("XRANGE", k("str"), "-", "+") + mb("XREVRANGE", k("str"), "+", "-")
	}},
	{"xdel xtrim", func(k func(string) string) string {
		s := k("s")
		return xaddN(s, 10) + mb("XDEL", s, "3-1") + mb("XDEL", s, "3-1", "4-1", "99-1", "4-1") + mb("XDEL", s, "x") + mb("XDEL", s, "5-1", "x") +
			mb("XDEL", k("nope"), "1-1") + mb("XDEL", s) + mb("XLEN", s) + mb("XRANGE", s, "-", "+") + mb("XADD", s, "4-1", "a", "1") +
			mb("XDEL", s, "1-1", "2-1", "5-1", "6-1", "7-1", "8-1", "9-1", "10-1") + mb("XLEN", s) + mb("EXISTS", s) + mb("XRANGE", s, "-", "+") +
			mb("XADD", s, "11-1", "a", "1") + mb("XRANGE", s, "-", "+") +
			xaddN(k("t"), 20) + mb("XTRIM", k("t"), "MAXLEN", "15") + mb("XTRIM", k("t"), "MAXLEN", "=", "12") + mb("XTRIM", k("t"), "MAXLEN", "20") +
			mb("XTRIM", k("t"), "MINID", "10") + mb("XTRIM", k("t"), "MINID", "=", "12-1") + mb("XTRIM", k("t"), "MINID", "(12") +
			mb("XTRIM", k("t"), "MINID", "~", "15") + mb("XTRIM", k("t"), "MAXLEN", "~", "2") + mb("XTRIM", k("t"), "MAXLEN", "~", "2", "LIMIT", "5") +
			mb("XTRIM", k("t"), "MAXLEN", "2", "LIMIT", "5") + mb("XTRIM", k("t"), "MAXLEN", "x") + mb("XTRIM", k("t"), "MAXLEN", "-1") +
			mb("XTRIM", k("t"), "MINID", "x") + mb("XTRIM", k("t"), "FOO", "1") + mb("XTRIM", k("t"), "MAXLEN") + mb("XTRIM", k("t")) +
			mb("XTRIM", k("t"), "MAXLEN", "1", "MINID", "1") + mb("XTRIM", k("t"), "MAXLEN", "1", "FOO") + mb("XLEN", k("t")) + mb("XRANGE", k("t"), "-", "+") +
			mb("XTRIM", k("t"), "MAXLEN", "0") + mb("EXISTS", k("t")) + mb("XTRIM", k("nope"), "MAXLEN", "0") + mb("EXISTS", k("nope")) +
			xaddN(k("u"), 250) + mb("XTRIM", k("u"), "MAXLEN", "~", "10") + mb("XTRIM", k("u"), "MAXLEN", "~", "0", "LIMIT", "1") +
			mb("XTRIM", k("u"), "MINID", "~", "260") + mb("XLEN", k("u")) + mb("XTRIM", k("u"), "MINID", "260") + mb("XLEN", k("u")) +
			mb("SET", k("str"), "v") + mb("XTRIM", k("str"), "MAXLEN", "1") + mb("XDEL", k("str"), "1-1")
	}},
	{"xread", func(k func(string) string) string {
		a, b := k("a"), k("b")
		return xaddN(a, 4) + mb("XADD", b, "2-5", "b", "1") + mb("XADD", b, "9-1", "b", "2") +
			mb("XREAD", "STREAMS", a, "0") + mb("XREAD", "COUNT", "2", "STREAMS", a, "0") + mb("XREAD", "COUNT", "2", "STREAMS", a, "2-1") +
			mb("XREAD", "STREAMS", a, b, "0", "0") + mb("XREAD", "COUNT", "1", "STREAMS", a, b, "3", "3") + mb("XREAD", "STREAMS", a, b, "4-1", "9-1") +
			mb("XREAD", "STREAMS", a, k("nope"), b, "0", "0", "5") + mb("XREAD", "STREAMS", a, "$") + mb("XREAD", "STREAMS", a, b, "$", "0") +
			mb("XREAD", "STREAMS", k("nope"), "$") + mb("XREAD", "STREAMS", k("nope"), "0") + mb("XREAD", "STREAMS", a, a, "1", "3") +
			mb("XREAD", "COUNT", "0", "STREAMS", a, "0") + mb("XREAD", "COUNT", "-5", "STREAMS", a, "0") + mb("XREAD", "count", "1", "streams", a, "0-0") +
			mb("XREAD", "STREAMS", a, "18446744073709551615-18446744073709551615") + mb("XREAD", "STREAMS", a, ">") +
			mb("XREAD", "STREAMS", a) + mb("XREAD", "STREAMS", a, b, "0") + mb("XREAD", "STREAMS") + mb("XREAD", "COUNT", "x", "STREAMS", a, "0") +
			mb("XREAD", "STREAMS", a, "x") + mb("XREAD", "STREAMS", a, "(1") + mb("XREAD", "FOO", "STREAMS", a, "0") + mb("XREAD", a, "0") +
			mb("XREAD", "COUNT", "1", "COUNT", "2", "STREAMS", a, "0") + mb("XREAD", "BLOCK", "x", "STREAMS", a, "0") +
			mb("XREAD", "BLOCK", "-1", "STREAMS", a, "0") + mb("XREAD", "BLOCK", "9223372036854775807", "STREAMS", a, "0") +
			mb("XREAD", "BLOCK", "9223372036854775808", "STREAMS", a, "0") + mb("XREAD", "BLOCK", "9000000000000000000", "STREAMS", a, "0") + mb("XREAD", "BLOCK", "0", "STREAMS", a, "0") + mb("XREAD", "BLOCK", "10", "COUNT", "1", "STREAMS", a, "3") +
			mb("XREAD", "BLOCK", "10", "STREAMS", a, "$") + mb("XREAD", "BLOCK", "10", "STREAMS", k("nope"), "0") +
			mb("XREAD", "COUNT") + mb("XREAD", "STREAMS", a, "0", "COUNT", "1") + mb("XREAD", "NOACK", "STREAMS", a, "0") +
			mb("SET", k("str"), "v") + mb("XREAD", "STREAMS", k("str"), "0") + mb("XREAD", "STREAMS", a, k("str"), "0", "0") + mb("XREAD", "STREAMS", k("str"), "$")
	}},
	{"xgroup", func(k func(string) string) string {
		s := k("s")
		return mb("XGROUP", "CREATE", s, "g", "$") + mb("XGROUP", "CREATE", s, "g", "$", "MKSTREAM") + mb("XLEN", s) + mb("TYPE", s) +
			mb("XGROUP", "CREATE", s, "g", "$") + mb("XGROUP", "CREATE", s, "g2", "0", "MKSTREAM") + xaddN(s, 5) +
			mb("XGROUP", "CREATE", s, "g3", "3-1", "ENTRIESREAD", "3") + mb("XGROUP", "CREATE", s, "g4", "$", "ENTRIESREAD", "5") +
			mb("XGROUP", "CREATE", s, "g5", "0", "ENTRIESREAD", "-1") + mb("XGROUP", "CREATE", s, "g6", "0", "ENTRIESREAD", "-2") +
			mb("XGROUP", "CREATE", s, "g7", "0", "ENTRIESREAD", "x") + mb("XGROUP", "CREATE", s, "g8", "9") + mb("XGROUP", "CREATE", s, "g9", "x") +
			mb("XGROUP", "CREATE", s, "g10", "0", "FOO") + mb("XGROUP", "CREATE", s, "g11") + mb("XGROUP", "CREATE", s) +
			mb("XGROUP", "CREATE", s, "g12", "0", "ENTRIESREAD") + mb("XGROUP", "CREATE", s, "g13", "0", "MKSTREAM", "ENTRIESREAD", "0") +
			mb("XINFO", "GROUPS", s) +
			mb("XGROUP", "CREATECONSUMER", s, "g", "c1") + mb("XGROUP", "CREATECONSUMER", s, "g", "c1") + mb("XGROUP", "CREATECONSUMER", s, "nogroup", "c1") +
			mb("XGROUP", "CREATECONSUMER", k("nope"), "g", "c1") + mb("XGROUP", "CREATECONSUMER", s, "g") + mb("XGROUP", "CREATECONSUMER", s, "g", "c2") +
			mb("XREADGROUP", "GROUP", "g", "c1", "COUNT", "2", "STREAMS", s, ">") +
			mb("XGROUP", "DELCONSUMER", s, "g", "c1") + mb("XGROUP", "DELCONSUMER", s, "g", "c1") + mb("XGROUP", "DELCONSUMER", s, "g", "c2") +
			mb("XGROUP", "DELCONSUMER", s, "nogroup", "c1") + mb("XGROUP", "DELCONSUMER", k("nope"), "g", "c") + mb("XPENDING", s, "g") +
			mb("XGROUP", "SETID", s, "g", "2-1") + mb("XINFO", "GROUPS", s) + mb("XGROUP", "SETID", s, "g", "$", "ENTRIESREAD", "4") +
			mb("XGROUP", "SETID", s, "g", "0", "ENTRIESREAD", "0") + mb("XINFO", "GROUPS", s) + mb("XGROUP", "SETID", s, "g", "x") +
			mb("XGROUP", "SETID", s, "nogroup", "0") + mb("XGROUP", "SETID", k("nope"), "g", "0") + mb("XGROUP", "SETID", s, "g", "0", "FOO") +
			mb("XGROUP", "SETID", s, "g", "0", "ENTRIESREAD", "-3") + mb("XGROUP", "SETID", s, "g") + mb("XGROUP", "SETID", s, "g", "99-1") +
			mb("XINFO", "GROUPS", s) +
			mb("XGROUP", "DESTROY", s, "g") + mb("XGROUP", "DESTROY", s, "g") + mb("XGROUP", "DESTROY", k("nope"), "g") + mb("XGROUP", "DESTROY", s) +
			mb("XINFO", "GROUPS", s) + mb("XGROUP", "HELP") + mb("XGROUP", "FOO") + mb("XGROUP") + mb("xgroup", "create", k("s2"), "g", "0") +
			mb("SET", k("str"), "v") + mb("XGROUP", "CREATE", k("str"), "g", "0") + mb("XGROUP", "CREATE", k("str"), "g", "0", "MKSTREAM") +
			mb("XGROUP", "SETID", k("str"), "g", "0") + mb("XGROUP", "DESTROY", k("str"), "g") + mb("XGROUP", "CREATECONSUMER", k("str"), "g", "c") +
			mb("XGROUP", "DELCONSUMER", k("str"), "g", "c")
	}},
	{"xreadgroup xack", func(k func(string) string) string {
		s, t := k("s"), k("t")
		return xaddN(s, 6) + mb("XADD", t, "3-3", "t", "1") + mb("XGROUP", "CREATE", s, "g", "0") + mb("XGROUP", "CREATE", t, "g", "0") +
			mb("XREADGROUP", "GROUP", "g", "alice", "COUNT", "2", "STREAMS", s, ">") + mb("XREADGROUP", "GROUP", "g", "bob", "COUNT", "1", "STREAMS", s, ">") +
			mb("XREADGROUP", "GROUP", "g", "alice", "STREAMS", s, "0") + mb("XREADGROUP", "GROUP", "g", "alice", "STREAMS", s, "1-1") +
			mb("XREADGROUP", "GROUP", "g", "alice", "COUNT", "1", "STREAMS", s, "0") + mb("XREADGROUP", "GROUP", "g", "carol", "STREAMS", s, "0") +
			mb("XREADGROUP", "GROUP", "g", "bob", "STREAMS", s, t, ">", ">") + mb("XREADGROUP", "GROUP", "g", "bob", "STREAMS", s, ">") +
			mb("XPENDING", s, "g") + mb("XPENDING", t, "g") +
			mb("XDEL", s, "2-1") + mb("XREADGROUP", "GROUP", "g", "alice", "STREAMS", s, "0") +
			mb("XACK", s, "g", "1-1") + mb("XACK", s, "g", "1-1", "2-1", "99-1", "2-1") + mb("XACK", s, "g", "x") + mb("XACK", s, "nogroup", "3-1") +
			mb("XACK", k("nope"), "g", "3-1") + mb("XACK", s, "g") + mb("XPENDING", s, "g") + mb("XREADGROUP", "GROUP", "g", "alice", "STREAMS", s, "0") +
			mb("XADD", s, "7-1", "f", "v7") + mb("XADD", s, "8-1", "f", "v8") +
			mb("XREADGROUP", "GROUP", "g", "dave", "NOACK", "COUNT", "1", "STREAMS", s, ">") + mb("XPENDING", s, "g") +
			mb("XREADGROUP", "GROUP", "g", "dave", "STREAMS", s, "0") + mb("XREADGROUP", "GROUP", "g", "dave", "NOACK", "STREAMS", s, ">") +
			mb("XREADGROUP", "GROUP", "g", "dave", "STREAMS", s, ">") + mb("XPENDING", s, "g") + mb("XINFO", "GROUPS", s) +
			mb("XREADGROUP", "GROUP", "nogroup", "c", "STREAMS", s, ">") + mb("XREADGROUP", "GROUP", "g", "c", "STREAMS", k("nope"), ">") +
			mb("XREADGROUP", "GROUP", "g", "c", "STREAMS", s, k("nope"), ">", ">") + mb("XREADGROUP", "GROUP", "g", "c", "STREAMS", s, "$") +
			mb("XREADGROUP", "GROUP", "g", "c", "STREAMS", s, "x") + mb("XREADGROUP", "GROUP", "g", "STREAMS", s, ">") +
			mb("XREADGROUP", "STREAMS", s, ">") + mb("XREADGROUP", "GROUP", "g", "c", "STREAMS", s) + mb("XREADGROUP", "GROUP", "g", "c", "COUNT", "x", "STREAMS", s, ">") +
			mb("XREADGROUP", "GROUP", "g", "c", "FOO", "STREAMS", s, ">") + mb("XREADGROUP", "GROUP", "g", "c", "STREAMS", s, s, ">", ">") +
			mb("XREADGROUP", "GROUP", "g", "c", "BLOCK", "10", "STREAMS", s, ">") + mb("XREADGROUP", "GROUP", "g", "c", "COUNT", "0", "STREAMS", s, "0") +
			mb("XREADGROUP", "GROUP", "g", "c", "BLOCK", "10", "STREAMS", s, "0") + mb("xreadgroup", "group", "g", "eve", "count", "-1", "streams", s, "0") +
			mb("SET", k("str"), "v") + mb("XREADGROUP", "GROUP", "g", "c", "STREAMS", k("str"), ">") + mb("XACK", k("str"), "g", "1-1") +
			mb("XREADGROUP", "GROUP", "g", "c", "STREAMS", s, t, ">") + mb("xreadgroup", "group", "g", "c", "streams", s, t, "0")
	}},
	{"xpending", func(k func(string) string) string {
		s := k("s")
		return xaddN(s, 6) + mb("XPENDING", s, "g") + mb("XGROUP", "CREATE", s, "g", "0") + mb("XPENDING", s, "g") +
			mb("XPENDING", s, "g", "-", "+", "10") +
			mb("XREADGROUP", "GROUP", "g", "a", "COUNT", "3", "STREAMS", s, ">") + mb("XREADGROUP", "GROUP", "g", "b", "STREAMS", s, ">") +
			mb("XREADGROUP", "GROUP", "g", "a", "STREAMS", s, "0") + mb("XPENDING", s, "g") +
			mb("XPENDING", s, "g", "-", "+", "10") + mb("XPENDING", s, "g", "-", "+", "2") + mb("XPENDING", s, "g", "(2-1", "(5", "10") +
			mb("XPENDING", s, "g", "-", "+", "10", "b") + mb("XPENDING", s, "g", "-", "+", "10", "nobody") + mb("XPENDING", s, "g", "-", "+", "0") +
			mb("XPENDING", s, "g", "-", "+", "-1") + mb("XPENDING", s, "g", "IDLE", "99999999", "-", "+", "10") +
			mb("XPENDING", s, "g", "IDLE", "99999999", "-", "+", "10", "a") + mb("XPENDING", s, "g", "IDLE", "0", "-", "+", "1", "a") +
			mb("XPENDING", s, "g", "IDLE", "-1", "-", "+", "1") + mb("XPENDING", s, "g", "IDLE", "x", "-", "+", "1") +
			mb("XPENDING", s, "g", "IDLE", "0") + mb("XPENDING", s, "g", "IDLE", "0", "-", "+") + mb("XPENDING", s, "g", "-", "+") +
			mb("XPENDING", s, "g", "-") + mb("XPENDING", s, "g", "x", "+", "1") + mb("XPENDING", s, "g", "-", "+", "x") +
			mb("XPENDING", s, "g", "-", "+", "1", "a", "extra") + mb("XPENDING", s, "nogroup") + mb("XPENDING", s, "nogroup", "-", "+", "1") +
			mb("XPENDING", k("nope"), "g") + mb("XPENDING", k("nope"), "g", "-", "+", "1") + mb("XPENDING", s) +
			mb("XACK", s, "g", "1-1", "2-1", "3-1", "4-1", "5-1", "6-1") + mb("XPENDING", s, "g") + mb("XPENDING", s, "g", "-", "+", "10") +
			mb("SET", k("str"), "v") + mb("XPENDING", k("str"), "g")
	}},
	{"xclaim", func(k func(string) string) string {
		s := k("s")
		return xaddN(s, 6) + mb("XGROUP", "CREATE", s, "g", "0") + mb("XREADGROUP", "GROUP", "g", "a", "COUNT", "4", "STREAMS", s, ">") +
			mb("XCLAIM", s, "g", "b", "0", "1-1") + mb("XCLAIM", s, "g", "b", "0", "2-1", "3-1", "99-1", "6-1") + mb("XPENDING", s, "g") +
			mb("XCLAIM", s, "g", "b", "99999999", "4-1") + mb("XCLAIM", s, "g", "c", "0", "4-1", "JUSTID") + mb("XPENDING", s, "g") +
			mb("XPENDING", s, "g", "-", "+", "10") + mb("XCLAIM", s, "g", "c", "0", "1-1", "RETRYCOUNT", "7") + mb("XPENDING", s, "g", "-", "+", "10") +
			mb("XCLAIM", s, "g", "c", "0", "6-1", "FORCE") + mb("XCLAIM", s, "g", "c", "0", "5-1", "FORCE", "JUSTID") + mb("XPENDING", s, "g", "-", "+", "10") +
			mb("XCLAIM", s, "g", "c", "0", "99-1", "FORCE", "JUSTID") + mb("XCLAIM", s, "g", "a", "0", "1-1", "IDLE", "500", "JUSTID") +
			mb("XCLAIM", s, "g", "a", "0", "2-1", "TIME", "1000", "JUSTID") + mb("XPENDING", s, "g", "IDLE", "99999999", "-", "+", "10") +
			mb("XCLAIM", s, "g", "a", "0", "3-1", "JUSTID", "LASTID", "5-1") + mb("XINFO", "GROUPS", s) +
			mb("XCLAIM", s, "g", "a", "0", "3-1", "JUSTID", "LASTID", "1-1") + mb("XINFO", "GROUPS", s) +
			mb("XDEL", s, "3-1") + mb("XCLAIM", s, "g", "b", "0", "3-1") + mb("XPENDING", s, "g", "-", "+", "10") +
			mb("XCLAIM", s, "g", "b", "0", "1-1", "RETRYCOUNT", "x") + mb("XCLAIM", s, "g", "b", "0", "1-1", "IDLE", "x") +
			mb("XCLAIM", s, "g", "b", "0", "1-1", "TIME", "x") + mb("XCLAIM", s, "g", "b", "0", "1-1", "LASTID", "x") +
			mb("XCLAIM", s, "g", "b", "0", "1-1", "FOO") + mb("XCLAIM", s, "g", "b", "x", "1-1") + mb("XCLAIM", s, "g", "b", "-1", "1-1") +
			mb("XCLAIM", s, "g", "b", "0", "x") + mb("XCLAIM", s, "g", "b", "0") + mb("XCLAIM", s, "nogroup", "b", "0", "1-1") +
			mb("XCLAIM", k("nope"), "g", "b", "0", "1-1") + mb("XCLAIM", s, "g", "b", "0", "1-1", "RETRYCOUNT", "-1") +
			mb("XCLAIM", s, "g", "b", "0", "1-1", "IDLE", "-5", "JUSTID") + mb("XCLAIM", s, "g", "b", "0", "1-1", "IDLE") +
			mb("SET", k("str"), "v") + mb("XCLAIM", k("str"), "g", "b", "0", "1-1")
	}},
	{"xautoclaim", func(k func(string) string) string {
		s := k("s")
		return xaddN(s, 8) + mb("XGROUP", "CREATE", s, "g", "0") + mb("XREADGROUP", "GROUP", "g", "a", "STREAMS", s, ">") +
			mb("XAUTOCLAIM", s, "g", "b", "0", "0", "COUNT", "2") + mb("XAUTOCLAIM", s, "g", "b", "0", "3-1", "COUNT", "2", "JUSTID") +
			mb("XDEL", s, "5-1", "6-1") + mb("XAUTOCLAIM", s, "g", "c", "0", "(4", "COUNT", "3") + mb("XPENDING", s, "g") +
			mb("XAUTOCLAIM", s, "g", "c", "0", "0") + mb("XAUTOCLAIM", s, "g", "c", "0", "-", "JUSTID") + mb("XAUTOCLAIM", s, "g", "c", "99999999", "0") +
			mb("XPENDING", s, "g", "-", "+", "10") + mb("XAUTOCLAIM", s, "g", "c", "0", "100-1") +
			mb("XAUTOCLAIM", s, "g", "c", "0", "0", "COUNT", "0") + mb("XAUTOCLAIM", s, "g", "c", "0", "0", "COUNT", "-1") +
			mb("XAUTOCLAIM", s, "g", "c", "0", "0", "COUNT", "x") + mb("XAUTOCLAIM", s, "g", "c", "0", "0", "COUNT", "1000000000") +
			mb("XAUTOCLAIM", s, "g", "c", "0", "0", "FOO") + mb("XAUTOCLAIM", s, "g", "c", "x", "0") + mb("XAUTOCLAIM", s, "g", "c", "0", "x") +
			mb("XAUTOCLAIM", s, "g", "c", "0") + mb("XAUTOCLAIM", s, "nogroup", "c", "0", "0") + mb("XAUTOCLAIM", k("nope"), "g", "c", "0", "0") +
			mb("XAUTOCLAIM", s, "g", "c", "-1", "0") + mb("XAUTOCLAIM", s, "g", "c", "0", "(18446744073709551615-18446744073709551615") +
			mb("SET", k("str"), "v") + mb("XAUTOCLAIM", k("str"), "g", "c", "0", "0")
	}},
	{"xsetid", func(k func(string) string) string {
		s := k("s")
		return xaddN(s, 3) + mb("XSETID", s, "5-1") + mb("XADD", s, "5-1", "a", "1") + mb("XADD", s, "5-*", "a", "1") + mb("XSETID", s, "4-1") +
			mb("XSETID", s, "5-2") + mb("XSETID", s, "2-1") + mb("XSETID", s, "9-9", "ENTRIESADDED", "10", "MAXDELETEDID", "7-1") +
			mb("XINFO", "GROUPS", s) + mb("XSETID", s, "10-1", "ENTRIESADDED", "2") + mb("XSETID", s, "10-1", "ENTRIESADDED", "-1") +
			mb("XSETID", s, "10-1", "MAXDELETEDID", "11-1") + mb("XSETID", s, "10-1", "ENTRIESADDED", "x") + mb("XSETID", s, "10-1", "MAXDELETEDID", "x") +
			mb("XSETID", s, "10-1", "FOO") + mb("XSETID", s, "x") + mb("XSETID", s) + mb("XSETID", s, "10-1", "ENTRIESADDED") +
			mb("XSETID", k("nope"), "1-1") + mb("EXISTS", k("nope")) + mb("XADD", k("e"), "MAXLEN", "0", "5-1", "a", "1") + mb("XSETID", k("e"), "1-1") +
			mb("XSETID", k("e"), "5-1") + mb("XSETID", k("e"), "6-1") + mb("XADD", k("e"), "6-1", "a", "1") + mb("XADD", k("e"), "6-2", "a", "1") +
			mb("XRANGE", s, "-", "+") + mb("SET", k("str"), "v") + mb("XSETID", k("str"), "1-1") +
			// Redis 7.2 refuses an ID below the stream's own
			// max_deleted_entry_id, before the top item and entries_added
			// checks; MAXDELETEDID may still move it back.
			mb("XADD", k("d"), "5-1", "a", "1") + mb("XADD", k("d"), "7-1", "a", "1") + mb("XDEL", k("d"), "7-1") +
			mb("XSETID", k("d"), "4-0") + mb("XSETID", k("d"), "6-0") + mb("XSETID", k("d"), "4-0", "ENTRIESADDED", "0") +
			mb("XSETID", k("d"), "6-0", "ENTRIESADDED", "0") + mb("XSETID", k("d"), "8-0", "ENTRIESADDED", "0") +
			mb("XSETID", k("d"), "5-0", "MAXDELETEDID", "5-1") + mb("XSETID", k("d"), "7-1", "ENTRIESADDED", "5", "MAXDELETEDID", "2-0") +
			mb("XINFO", "STREAM", k("d")) + mb("XSETID", k("d"), "6-0") + mb("XDEL", k("d"), "5-1") + mb("XSETID", k("d"), "5-1") +
			mb("XSETID", k("d"), "6-0", "ENTRIESADDED", "0") + mb("XINFO", "STREAM", k("d")) +
			mb("XADD", k("f"), "5-1", "a", "1") + mb("XSETID", k("f"), "4-0", "ENTRIESADDED", "0")
	}},
	{"xinfo groups and help", func(k func(string) string) string {
		s := k("s")
		return xaddN(s, 5) + mb("XINFO", "GROUPS", s) + mb("XGROUP", "CREATE", s, "g1", "0") + mb("XGROUP", "CREATE", s, "g2", "$") +
			mb("XGROUP", "CREATE", s, "g3", "2-1") + mb("XINFO", "GROUPS", s) + mb("XREADGROUP", "GROUP", "g1", "c", "COUNT", "2", "STREAMS", s, ">") +
			mb("XINFO", "GROUPS", s) + mb("XDEL", s, "4-1") + mb("XINFO", "GROUPS", s) + mb("XADD", s, "6-1", "f", "v") + mb("XINFO", "GROUPS", s) +
			mb("XREADGROUP", "GROUP", "g3", "c", "STREAMS", s, ">") + mb("XINFO", "GROUPS", s) + mb("XTRIM", s, "MAXLEN", "1") + mb("XINFO", "GROUPS", s) +
			mb("XINFO", "GROUPS", k("nope")) + mb("XINFO", "CONSUMERS", s, "nogroup") + mb("XINFO", "CONSUMERS", k("nope"), "g") + mb("XINFO", "STREAM", k("nope")) +
			mb("XINFO", "STREAM", s, "FOO") + mb("XINFO", "STREAM", s, "FULL", "COUNT", "x") + mb("XINFO", "HELP") + mb("XINFO") + mb("XINFO", "FOO") +
			mb("XINFO", "GROUPS") + mb("XINFO", "CONSUMERS", s) + mb("SET", k("str"), "v") + mb("XINFO", "GROUPS", k("str")) + mb("XINFO", "STREAM", k("str")) +
			mb("XINFO", "CONSUMERS", k("str"), "g")
	}},
	{"stream keyspace", func(k func(string) string) string {
		s := k("s")
		return xaddN(s, 3) + mb("XGROUP", "CREATE", s, "g", "0") + mb("XREADGROUP", "GROUP", "g", "c", "COUNT", "1", "STREAMS", s, ">") +
			mb("TYPE", s) + mb("OBJECT", "ENCODING", s) + mb("EXISTS", s, s) + mb("SCAN", "0", "MATCH", k("*"), "COUNT", "1000", "TYPE", "stream") +
			mb("SCAN", "0", "MATCH", k("*"), "COUNT", "1000", "TYPE", "STREAM") + mb("COPY", s, k("c")) + mb("COPY", s, k("c")) +
			mb("XRANGE", k("c"), "-", "+") + mb("XPENDING", k("c"), "g") + mb("XINFO", "GROUPS", k("c")) + mb("XADD", k("c"), "9-1", "a", "1") +
			mb("XLEN", s) + mb("XLEN", k("c")) + mb("XREADGROUP", "GROUP", "g", "c", "STREAMS", k("c"), ">") + mb("XPENDING", s, "g") +
			mb("RENAME", k("c"), k("r")) + mb("XLEN", k("r")) + mb("EXISTS", k("c")) + mb("XPENDING", k("r"), "g") + mb("TYPE", k("r")) +
			mb("SET", k("str"), "v") + mb("COPY", s, k("str")) + mb("COPY", s, k("str"), "REPLACE") + mb("TYPE", k("str")) + mb("XLEN", k("str")) +
			mb("EXPIRE", s, "1000") + mb("PERSIST", s) + mb("DEL", s, k("r"), k("str")) + mb("EXISTS", s) + mb("XLEN", s) +
			mb("XADD", k("e"), "1-1", "a", "1") + mb("XDEL", k("e"), "1-1") + mb("EXISTS", k("e")) + mb("TYPE", k("e")) + mb("XLEN", k("e")) +
			mb("XADD", k("e"), "1-1", "a", "1") + mb("XADD", k("e"), "2-1", "a", "1") + mb("TOUCH", k("e")) + mb("UNLINK", k("e"))
	}},
	{"stream wrong type", func(k func(string) string) string {
		s, str, l := k("s"), k("str"), k("l")
		return mb("XADD", s, "1-1", "a", "1") + mb("SET", str, "v") + mb("RPUSH", l, "x") +
			mb("XLEN", str) + mb("XLEN", l) + mb("XRANGE", l, "-", "+") + mb("XREVRANGE", str, "+", "-") + mb("XDEL", l, "1-1") +
			mb("XADD", l, "1-1", "a", "1") + mb("XTRIM", l, "MAXLEN", "0") + mb("XREAD", "STREAMS", l, "0") + mb("XGROUP", "CREATE", l, "g", "0") +
			mb("XSETID", l, "1-1") + mb("XINFO", "STREAM", l) + mb("XINFO", "STREAM", l, "FULL") +
			mb("GET", s) + mb("SET", s, "v", "GET") + mb("APPEND", s, "x") + mb("INCR", s) + mb("STRLEN", s) + mb("GETRANGE", s, "0", "1") +
			mb("SETRANGE", s, "0", "x") + mb("GETDEL", s) + mb("GETEX", s) + mb("SETBIT", s, "0", "1") + mb("BITCOUNT", s) +
			mb("LPUSH", s, "x") + mb("RPOP", s) + mb("LRANGE", s, "0", "-1") + mb("LLEN", s) + mb("LMOVE", s, l, "LEFT", "LEFT") + mb("LMOVE", l, s, "LEFT", "LEFT") +
			mb("HSET", s, "f", "v") + mb("HGETALL", s) + mb("SADD", s, "m") + mb("SMEMBERS", s) + mb("ZADD", s, "1", "m") + mb("ZRANGE", s, "0", "-1") +
			mb("PFADD", s, "a") + mb("PFCOUNT", s) + mb("GEOADD", s, "1", "1", "m") + mb("SORT", s) + mb("BITOP", "OR", k("d"), s) +
			mb("MGET", s, str) + mb("XLEN", s) + mb("LLEN", l)
	}},
	{"stream multi", func(k func(string) string) string {
		s := k("s")
		return mb("XGROUP", "CREATE", s, "g", "$", "MKSTREAM") + mb("MULTI") + mb("XADD", s, "1-1", "a", "1") + mb("XADD", s, "2-1", "b", "2") +
			mb("XREADGROUP", "GROUP", "g", "c", "COUNT", "1", "STREAMS", s, ">") + mb("XREADGROUP", "GROUP", "g", "c", "BLOCK", "0", "STREAMS", s, ">") +
			mb("XREADGROUP", "GROUP", "g", "c", "BLOCK", "0", "STREAMS", s, ">") + mb("XREAD", "BLOCK", "0", "STREAMS", s, "$") +
			mb("XACK", s, "g", "1-1") + mb("XPENDING", s, "g") + mb("XLEN", s) + mb("EXEC") +
			mb("MULTI") + mb("XADD", s, "1-1", "a", "1") + mb("XADD", s, "3-1", "c", "3") + mb("EXEC") +
			mb("MULTI") + mb("XADD", s, "4-1", "a") + mb("EXEC") + mb("XLEN", s) +
			mb("WATCH", s) + mb("XADD", s, "5-1", "w", "1") + mb("MULTI") + mb("XLEN", s) + mb("EXEC") +
			mb("WATCH", s) + mb("XREADGROUP", "GROUP", "g", "c", "STREAMS", s, ">") + mb("MULTI") + mb("XLEN", s) + mb("EXEC") +
			mb("WATCH", s) + mb("XRANGE", s, "-", "+") + mb("MULTI") + mb("XLEN", s) + mb("EXEC")
	}},
	{"xadd clock ids", func(k func(string) string) string {
		s := k("s")
		return mb("XADD", s, "*", "a", "1") + mb("XADD", s, "*", "b", "2") + mb("XLEN", s) + mb("XADD", s, "1-1", "a", "1") +
			mb("XADD", s, "MAXLEN", "1", "*", "c", "3") + mb("XLEN", s) + mb("XADD", s, "NOMKSTREAM", "MINID", "=", "1", "*", "d", "4") +
			mb("XLEN", s) + mb("XADD", k("n"), "NOMKSTREAM", "*", "a", "1") + mb("EXISTS", k("n")) +
			mb("XGROUP", "CREATE", s, "g", "0") + mb("XINFO", "GROUPS", s)
	}},
	{"xinfo stream", func(k func(string) string) string {
		s := k("s")
		return xaddN(s, 5) + mb("XINFO", "STREAM", s) + mb("XDEL", s, "1-1") + mb("XINFO", "STREAM", s) + mb("XDEL", s, "3-1") +
			mb("XINFO", "STREAM", s) + mb("XGROUP", "CREATE", s, "g", "0") + mb("XGROUP", "CREATE", s, "h", "$") + mb("XINFO", "STREAM", s) +
			mb("XTRIM", s, "MAXLEN", "0") + mb("XINFO", "STREAM", s) + mb("XSETID", s, "9-9", "ENTRIESADDED", "20", "MAXDELETEDID", "8-1") +
			mb("XINFO", "STREAM", s) + mb("XADD", s, "10-1", "a", "1", "b", "2") + mb("XINFO", "STREAM", s) +
			mb("XGROUP", "CREATE", k("e"), "g", "$", "MKSTREAM") + mb("XINFO", "STREAM", k("e")) +
			xaddN(k("big"), 250) + mb("XINFO", "STREAM", k("big")) + mb("XTRIM", k("big"), "MAXLEN", "~", "100") + mb("XINFO", "STREAM", k("big")) +
			mb("xinfo", "stream", k("big"))
	}},
	{"stream getkeys", func(k func(string) string) string {
		return mb("COMMAND", "GETKEYS", "XADD", "s", "*", "a", "1") + mb("COMMAND", "GETKEYS", "XREAD", "COUNT", "1", "STREAMS", "a", "b", "0", "0") +
			mb("COMMAND", "GETKEYS", "XREADGROUP", "GROUP", "g", "c", "STREAMS", "a", ">") + mb("COMMAND", "GETKEYS", "XGROUP", "CREATE", "s", "g", "0") +
			mb("COMMAND", "GETKEYS", "XINFO", "STREAM", "s") + mb("COMMAND", "GETKEYS", "XREAD", "STREAMS", "a") +
			mb("COMMAND", "GETKEYS", "XAUTOCLAIM", "s", "g", "c", "0", "0") + mb("COMMAND", "GETKEYS", "XSETID", "s", "1-1") +
			mb("COMMAND", "INFO", "xadd", "xread", "xreadgroup", "xsetid") + mb("COMMAND", "DOCS", "xtrim")
	}},
}

// streamDiffSessions are the stream sessions as respSessions: each in
// RESP2 and in RESP3, each run on keys of its own.
func streamDiffSessions() []respSession {
	var out []respSession
	for i, s := range streamSessions {
		for _, r3 := range []bool{false, true} {
			p := "x" + strconv.Itoa(i)
			rs := respSession{name: s.name}
			if r3 {
				p += "r3"
				rs = respSession{name: s.name + " resp3", skip: 1, in: mb("HELLO", "3")}
			}
			rs.in += s.in(func(k string) string { return p + ":" + k })
			out = append(out, rs)
		}
	}
	return out
}

// streamMask rewrites the fields of one reply to argv (command name
// lower-cased) that cannot be equal on two servers, so that their replies
// compare:
//
//   - XPENDING's extended form: each entry's idle time (the clock) becomes 0;
//   - XADD with a "*" ID: the ID (the clock) becomes "<id>" when it is one;
//   - XINFO STREAM (not FULL): radix-tree-keys and radix-tree-nodes (the
//     layout of Redis's radix tree, not a property of the stream) become 0.
func streamMask(argv []string, reply string) string {
	if len(argv) == 0 || strings.HasPrefix(reply, "-") {
		return reply
	}
	switch {
	case argv[0] == "xadd" && slices.Contains(argv, "*") && strings.HasPrefix(reply, "$"):
		if id := strings.Split(reply, "\r\n"); len(id) == 3 && streamIDPattern.MatchString(id[1]) {
			return "$<id>\r\n"
		}
		return reply
	case argv[0] == "xpending" && len(argv) >= 5:
		n, err := parseRESPNode(bufio.NewReader(strings.NewReader(reply)))
		if err != nil {
			return reply
		}
		for _, e := range n.kids {
			if len(e.kids) == 4 && strings.HasPrefix(e.kids[2].head, ":") {
				e.kids[2].head = ":0\r\n"
			}
		}
		return n.String()
	case argv[0] == "xinfo" && len(argv) == 3 && strings.EqualFold(argv[1], "stream"):
		n, err := parseRESPNode(bufio.NewReader(strings.NewReader(reply)))
		if err != nil {
			return reply
		}
		for i := 0; i+1 < len(n.kids); i += 2 {
			switch n.kids[i].head {
			case "$15\r\nradix-tree-keys\r\n", "$16\r\nradix-tree-nodes\r\n":
				n.kids[i+1].head = ":0\r\n"
			}
		}
		return n.String()
	}
	return reply
}

var streamIDPattern = regexp.MustCompile(`^[0-9]+-[0-9]+$`)

// respNode is one parsed RESP reply: its header line (with the payload of
// a bulk string) and its elements.
type respNode struct {
	head string
	kids []*respNode
}

func (n *respNode) String() string {
	var b strings.Builder
	n.write(&b)
	return b.String()
}

func (n *respNode) write(b *strings.Builder) {
	b.WriteString(n.head)
	for _, k := range n.kids {
		k.write(b)
	}
}

// parseRESPNode reads one RESP2 or RESP3 reply into a tree.
func parseRESPNode(br *bufio.Reader) (*respNode, error) {
	line, err := br.ReadString('\n')
	if err != nil {
		return nil, err
	}
	n := &respNode{head: line}
	if len(line) < 3 {
		return nil, fmt.Errorf("short line %q", line)
	}
	count, _ := strconv.Atoi(strings.TrimSpace(line[1:]))
	switch line[0] {
	case '$', '=', '!':
		if count >= 0 {
			buf := make([]byte, count+2)
			if _, err := io.ReadFull(br, buf); err != nil {
				return nil, err
			}
			n.head += string(buf)
		}
	case '*', '~', '>':
		for range max(count, 0) {
			k, err := parseRESPNode(br)
			if err != nil {
				return nil, err
			}
			n.kids = append(n.kids, k)
		}
	case '%', '|':
		for range 2 * max(count, 0) {
			k, err := parseRESPNode(br)
			if err != nil {
				return nil, err
			}
			n.kids = append(n.kids, k)
		}
	}
	return n, nil
}

// sessionArgv lists a session's requests, lower-casing each command name.
func sessionArgv(in string) [][]string {
	r := resp.NewReader(strings.NewReader(in), 4096, 1<<20)
	var out [][]string
	for {
		argv, err := r.Read()
		if err != nil {
			return out
		}
		a := make([]string, len(argv))
		for i, x := range argv {
			a[i] = string(x)
		}
		if len(a) > 0 {
			a[0] = strings.ToLower(a[0])
		}
		out = append(out, a)
	}
}

// compareStreamSession runs s on both servers and reports the first reply
// that differs after masking.
func compareStreamSession(t *testing.T, redisAddr, minikvAddr string, s respSession) {
	t.Helper()
	compareStreamSessionMasked(t, redisAddr, minikvAddr, s, streamMask)
}

// compareStreamSessionMasked is compareStreamSession with mask in place
// of streamMask.
func compareStreamSessionMasked(t *testing.T, redisAddr, minikvAddr string, s respSession, streamMask func([]string, string) string) {
	t.Helper()
	want := runRESPSession(redisAddr, s)
	got := runRESPSession(minikvAddr, s)
	if want.err != nil || got.err != nil {
		t.Fatalf("redis: %v; minikv: %v", want.err, got.err)
	}
	cmds := sessionArgv(s.in)
	cmdOf := func(i int) []string {
		if j := i + s.skip; j < len(cmds) {
			return cmds[j]
		}
		return nil
	}
	if *streamLog {
		for i, r := range want.replies {
			t.Logf("%d %s -> %.600q", i, randLine(cmdOf(i)), r)
		}
	}
	if len(want.replies) < len(cmds)-s.skip {
		t.Fatalf("redis-server answered %d of %d commands: the session itself is broken", len(want.replies), len(cmds)-s.skip)
	}
	for i := range min(len(got.replies), len(want.replies)) {
		if g, w := streamMask(cmdOf(i), got.replies[i]), streamMask(cmdOf(i), want.replies[i]); g != w {
			t.Fatalf("reply %d to %s: redis %q, minikv %q", i, randLine(cmdOf(i)), clip(w), clip(g))
		}
	}
	if len(got.replies) != len(want.replies) || got.closed != want.closed {
		t.Fatalf("redis sent %d replies (closed %v), minikv %d (closed %v)", len(want.replies), want.closed, len(got.replies), got.closed)
	}
}

func TestStreamDifferential(t *testing.T) {
	redisAddr := startRedisServer(t)
	peer := streamPeer(t)
	for _, s := range streamDiffSessions() {
		t.Run(s.name, func(t *testing.T) { compareStreamSession(t, redisAddr, peer, s) })
	}
}

// TestStreamMask checks the masks themselves: each hides only its field.
func TestStreamMask(t *testing.T) {
	for _, c := range []struct {
		argv        []string
		reply, want string
	}{
		{[]string{"xadd", "s", "*", "a", "1"}, "$15\r\n1796346407598-0\r\n", "$<id>\r\n"},
		{[]string{"xadd", "s", "*", "a", "1"}, "$-1\r\n", "$-1\r\n"},
		{[]string{"xadd", "s", "1-*", "a", "1"}, "$3\r\n1-1\r\n", "$3\r\n1-1\r\n"},
		{[]string{"xpending", "s", "g", "-", "+", "9"}, "*1\r\n*4\r\n$3\r\n1-1\r\n$1\r\na\r\n:123\r\n:2\r\n",
			"*1\r\n*4\r\n$3\r\n1-1\r\n$1\r\na\r\n:0\r\n:2\r\n"},
		{[]string{"xpending", "s", "g"}, "*4\r\n:1\r\n$3\r\n3-3\r\n$3\r\n3-3\r\n*1\r\n*2\r\n$3\r\nbob\r\n$1\r\n1\r\n",
			"*4\r\n:1\r\n$3\r\n3-3\r\n$3\r\n3-3\r\n*1\r\n*2\r\n$3\r\nbob\r\n$1\r\n1\r\n"},
		{[]string{"xinfo", "STREAM", "s"}, "%3\r\n$6\r\nlength\r\n:5\r\n$15\r\nradix-tree-keys\r\n:1\r\n$16\r\nradix-tree-nodes\r\n:2\r\n",
			"%3\r\n$6\r\nlength\r\n:5\r\n$15\r\nradix-tree-keys\r\n:0\r\n$16\r\nradix-tree-nodes\r\n:0\r\n"},
	} {
		if got := streamMask(c.argv, c.reply); got != c.want {
			t.Errorf("streamMask(%q, %q) = %q, want %q", c.argv, c.reply, got, c.want)
		}
	}
}

// streamNotifySessions are the stream commands' keyspace events, run as
// notify_diff_test.go runs its sessions: xadd (and xtrim when XADD trims),
// xdel, xtrim, xsetid, xgroup-create, xgroup-createconsumer (explicit, and
// made by XREADGROUP, XCLAIM and XAUTOCLAIM), xgroup-delconsumer,
// xgroup-destroy, xgroup-setid; writes that change nothing or fail publish
// nothing; the t class alone, the new-key and key-miss events.
var streamNotifySessions = []notifySession{
	{name: "streams", in: mb("XADD", "s", "1-1", "a", "1") + mb("XADD", "s", "2-1", "a", "2") + mb("XADD", "s", "MAXLEN", "1", "3-1", "a", "3") +
		mb("XADD", "s", "MAXLEN", "5", "4-1", "a", "4") + mb("XADD", "s", "MINID", "4", "5-1", "a", "5") + mb("XADD", "s", "1-1", "a", "1") +
		mb("XADD", "s", "6-1", "a") + mb("XADD", "n", "NOMKSTREAM", "1-1", "a", "1") + mb("XADD", "s", "NOMKSTREAM", "7-1", "a", "7") +
		mb("XDEL", "s", "4-1") + mb("XDEL", "s", "4-1") + mb("XDEL", "s", "99-1") + mb("XDEL", "nope", "1-1") +
		mb("XTRIM", "s", "MAXLEN", "10") + mb("XTRIM", "s", "MAXLEN", "2") + mb("XTRIM", "s", "MINID", "7") + mb("XTRIM", "nope", "MAXLEN", "0") +
		mb("XTRIM", "s", "MAXLEN", "~", "0") +
		mb("XSETID", "s", "8-1") + mb("XSETID", "s", "1-1") + mb("XSETID", "s", "9-1", "ENTRIESADDED", "100", "MAXDELETEDID", "8-5") +
		mb("XGROUP", "CREATE", "s", "g", "0") + mb("XGROUP", "CREATE", "s", "g", "0") + mb("XGROUP", "CREATE", "m", "g", "$", "MKSTREAM") +
		mb("XGROUP", "CREATE", "nope", "g", "0") + mb("XGROUP", "CREATECONSUMER", "s", "g", "c1") + mb("XGROUP", "CREATECONSUMER", "s", "g", "c1") +
		// c2, c4, c5 and c6 are made by the reads and claims below
		// (Redis 7.2 makes a consumer even when nothing is read or
		// claimed; 7.0 did not).
		mb("XREADGROUP", "GROUP", "g", "c2", "STREAMS", "s", ">") + mb("XREADGROUP", "GROUP", "g", "c2", "STREAMS", "s", ">") +
		mb("XREADGROUP", "GROUP", "g", "c3", "STREAMS", "s", "0") + mb("XCLAIM", "s", "g", "c4", "0", "7-1") +
		mb("XCLAIM", "s", "g", "c5", "99999999", "7-1") + mb("XAUTOCLAIM", "s", "g", "c6", "0", "0") + mb("XACK", "s", "g", "7-1") +
		mb("XGROUP", "DELCONSUMER", "s", "g", "c1") + mb("XGROUP", "DELCONSUMER", "s", "g", "nobody") +
		mb("XGROUP", "SETID", "s", "g", "0") + mb("XGROUP", "SETID", "s", "g", "$", "ENTRIESREAD", "3") + mb("XGROUP", "SETID", "s", "nogroup", "0") +
		mb("XGROUP", "DESTROY", "s", "g") + mb("XGROUP", "DESTROY", "s", "g") + mb("XLEN", "s") + mb("XRANGE", "s", "-", "+") +
		mb("XREAD", "STREAMS", "s", "0") + mb("XINFO", "STREAM", "s") + mb("XPENDING", "m", "g") +
		mb("RENAME", "s", "r") + mb("COPY", "r", "c") + mb("EXPIRE", "c", "100") + mb("DEL", "r", "c", "m") +
		mb("XADD", "e", "MAXLEN", "0", "1-1", "a", "1") + mb("XTRIM", "e", "MAXLEN", "0") + mb("EXISTS", "e")},
	{name: "streams in multi", in: mb("MULTI") + mb("XADD", "s", "1-1", "a", "1") + mb("XGROUP", "CREATE", "s", "g", "0") +
		mb("XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", ">") + mb("XADD", "s", "MAXLEN", "0", "2-1", "a", "1") + mb("EXEC")},
	{name: "stream class only", flags: "Kt", in: mb("XADD", "s", "1-1", "a", "1") + mb("SET", "k", "v") + mb("XGROUP", "CREATE", "s", "g", "0") +
		mb("XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", ">") + mb("XDEL", "s", "1-1") + mb("DEL", "s", "k")},
	{name: "stream generic only", flags: "Eg", in: mb("XADD", "s", "1-1", "a", "1") + mb("EXPIRE", "s", "100") + mb("XTRIM", "s", "MAXLEN", "0") +
		mb("RENAME", "s", "t") + mb("DEL", "t")},
	{name: "stream new keys", flags: "KEn", in: mb("XADD", "s", "1-1", "a", "1") + mb("XADD", "s", "2-1", "a", "1") +
		mb("XADD", "n", "NOMKSTREAM", "1-1", "a", "1") + mb("XGROUP", "CREATE", "m", "g", "$", "MKSTREAM") + mb("XGROUP", "CREATE", "m", "h", "$", "MKSTREAM") +
		mb("XADD", "z", "MAXLEN", "0", "1-1", "a", "1") + mb("COPY", "s", "c") + mb("XGROUP", "CREATE", "nope", "g", "$")},
	{name: "stream key misses", flags: "KEm", in: mb("XLEN", "a") + mb("XRANGE", "a", "-", "+") + mb("XREVRANGE", "a", "+", "-") +
		mb("XREAD", "STREAMS", "a", "b", "0", "0") + mb("XREAD", "STREAMS", "a", "$") + mb("XINFO", "STREAM", "a") + mb("XINFO", "GROUPS", "a") +
		mb("XPENDING", "a", "g") + mb("XREADGROUP", "GROUP", "g", "c", "STREAMS", "a", ">") + mb("XACK", "a", "g", "1-1") +
		mb("XCLAIM", "a", "g", "c", "0", "1-1") + mb("XAUTOCLAIM", "a", "g", "c", "0", "0") + mb("XDEL", "a", "1-1") + mb("XTRIM", "a", "MAXLEN", "0") +
		mb("XSETID", "a", "1-1") + mb("XGROUP", "CREATE", "a", "g", "0") + mb("XADD", "a", "NOMKSTREAM", "1-1", "f", "v") +
		mb("XADD", "s", "1-1", "f", "v") + mb("XLEN", "s") + mb("XRANGE", "s", "-", "+") + mb("XREAD", "STREAMS", "s", "a", "0", "0")},
}

func TestStreamNotificationsDifferential(t *testing.T) {
	redisAddr := startRedisServer(t)
	peer := streamPeer(t)
	for _, s := range streamNotifySessions {
		t.Run(s.name, func(t *testing.T) {
			want := runNotifySession(t, redisAddr, s)
			if len(want[0]) == 0 && s.flags != "Eg" {
				t.Fatalf("redis-server published nothing: the session is broken")
			}
			if *streamLog {
				t.Logf("redis: %s", shortEvents(want[0]))
			}
			got := runNotifySession(t, peer, s)
			for i, kind := range []string{"RESP2 subscriber", "RESP3 subscriber"} {
				if strings.Join(got[i], "") != strings.Join(want[i], "") {
					t.Errorf("%s: %s differs\nredis:  %s\nminikv: %s", s.name, kind, shortEvents(want[i]), shortEvents(got[i]))
				}
			}
		})
	}
}

// TestStreamXInfoParsed compares XINFO STREAM [FULL [COUNT n]], XINFO
// GROUPS and XINFO CONSUMERS as go-redis parses them, over RESP2 and
// RESP3, after the same commands on both servers. Masked (zeroed before
// the comparison, checked only to be plausible): radix-tree-keys and
// radix-tree-nodes (Redis's radix tree layout), and every time: the
// consumers' idle and inactive, seen-time and active-time, and the
// pending entries' delivery times; inactive and active-time are checked
// on both servers to be -1 for the consumer never active and recent for
// the others.
func TestStreamXInfoParsed(t *testing.T) {
	redisAddr := startRedisServer(t)
	peer := streamPeer(t)
	ctx := context.Background()
	setup := [][]any{
		{"XADD", "s", "1-1", "a", "1"}, {"XADD", "s", "2-1", "b", "2", "c", "3"}, {"XADD", "s", "3-1", "d", ""},
		{"XADD", "s", "4-1", "e", "5"}, {"XADD", "s", "5-1", "f", "6"}, {"XDEL", "s", "2-1"},
		{"XGROUP", "CREATE", "s", "g1", "0"}, {"XGROUP", "CREATE", "s", "g2", "$"}, {"XGROUP", "CREATECONSUMER", "s", "g2", "idle"},
		{"XREADGROUP", "GROUP", "g1", "alice", "COUNT", "2", "STREAMS", "s", ">"},
		{"XREADGROUP", "GROUP", "g1", "bob", "STREAMS", "s", ">"}, {"XCLAIM", "s", "g1", "carol", "0", "4-1", "RETRYCOUNT", "5"},
		{"XACK", "s", "g1", "1-1"},
	}
	for i := range 250 {
		setup = append(setup, []any{"XADD", "big", fmt.Sprintf("%d-1", i+1), "f", strings.Repeat("v", i%40)})
	}
	setup = append(setup, []any{"XGROUP", "CREATE", "big", "g", "0"}, []any{"XREADGROUP", "GROUP", "g", "c", "COUNT", "120", "STREAMS", "big", ">"},
		[]any{"XGROUP", "CREATE", "empty", "g", "$", "MKSTREAM"})
	type views struct {
		Stream   []*goredis.XInfoStream
		Full     []*goredis.XInfoStreamFull
		Groups   [][]goredis.XInfoGroup
		Consumer [][]goredis.XInfoConsumer
	}
	collect := func(addr string, protocol int) views {
		rdb := goredis.NewClient(&goredis.Options{Addr: addr, Protocol: protocol, MaxRetries: -1})
		defer rdb.Close()
		var v views
		for _, key := range []string{"s", "big", "empty"} {
			st, err := rdb.XInfoStream(ctx, key).Result()
			if err != nil {
				t.Fatalf("%s: XINFO STREAM %s: %v", addr, key, err)
			}
			if st.Length > 0 && st.RadixTreeKeys < 1 {
				t.Errorf("%s: XINFO STREAM %s: radix-tree-keys %d with %d entries", addr, key, st.RadixTreeKeys, st.Length)
			}
			st.RadixTreeKeys, st.RadixTreeNodes = 0, 0
			v.Stream = append(v.Stream, st)
			for _, count := range []int{0, 1, 2, 100} {
				full, err := rdb.XInfoStreamFull(ctx, key, count).Result()
				if err != nil {
					t.Fatalf("%s: XINFO STREAM %s FULL COUNT %d: %v", addr, key, count, err)
				}
				full.RadixTreeKeys, full.RadixTreeNodes = 0, 0
				for gi := range full.Groups {
					g := &full.Groups[gi]
					for pi := range g.Pending {
						plausibleTime(t, addr, g.Pending[pi].DeliveryTime)
						g.Pending[pi].DeliveryTime = time.Time{}
					}
					for ci := range g.Consumers {
						c := &g.Consumers[ci]
						plausibleTime(t, addr, c.SeenTime)
						never := c.Name == "idle" // XGROUP CREATECONSUMER made, nothing read since
						if never != c.ActiveTime.Equal(time.UnixMilli(-1)) {
							t.Errorf("%s: XINFO STREAM FULL: %s active-time %v", addr, c.Name, c.ActiveTime)
						} else if !never {
							plausibleTime(t, addr, c.ActiveTime)
						}
						c.SeenTime, c.ActiveTime = time.Time{}, time.Time{}
						for pi := range c.Pending {
							plausibleTime(t, addr, c.Pending[pi].DeliveryTime)
							c.Pending[pi].DeliveryTime = time.Time{}
						}
					}
				}
				v.Full = append(v.Full, full)
			}
			groups, err := rdb.XInfoGroups(ctx, key).Result()
			if err != nil {
				t.Fatalf("%s: XINFO GROUPS %s: %v", addr, key, err)
			}
			v.Groups = append(v.Groups, groups)
			for _, g := range groups {
				cs, err := rdb.XInfoConsumers(ctx, key, g.Name).Result()
				if err != nil {
					t.Fatalf("%s: XINFO CONSUMERS %s %s: %v", addr, key, g.Name, err)
				}
				for i := range cs {
					if cs[i].Idle < 0 || cs[i].Idle > time.Hour {
						t.Errorf("%s: XINFO CONSUMERS %s %s: %s idle %v", addr, key, g.Name, cs[i].Name, cs[i].Idle)
					}
					// inactive: -1 for the consumer never active.
					if never := cs[i].Name == "idle"; never != (cs[i].Inactive == -time.Millisecond) ||
						!never && (cs[i].Inactive < 0 || cs[i].Inactive > time.Hour) {
						t.Errorf("%s: XINFO CONSUMERS %s %s: %s inactive %v", addr, key, g.Name, cs[i].Name, cs[i].Inactive)
					}
					cs[i].Idle, cs[i].Inactive = 0, 0
				}
				v.Consumer = append(v.Consumer, cs)
			}
		}
		return v
	}
	for _, protocol := range []int{2, 3} {
		t.Run(fmt.Sprintf("resp%d", protocol), func(t *testing.T) {
			var got [2]views
			for i, addr := range []string{redisAddr, peer} {
				rdb := goredis.NewClient(&goredis.Options{Addr: addr, Protocol: protocol, MaxRetries: -1})
				if err := rdb.FlushAll(ctx).Err(); err != nil {
					t.Fatalf("%s: FLUSHALL: %v", addr, err)
				}
				for _, args := range setup {
					if err := rdb.Do(ctx, args...).Err(); err != nil {
						t.Fatalf("%s: %v: %v", addr, args, err)
					}
				}
				rdb.Close()
				got[i] = collect(addr, protocol)
			}
			if *streamLog {
				t.Logf("redis-server: %+v", got[0])
			}
			if len(got[0].Full) != 12 || got[0].Full[0].Length != 4 || len(got[0].Full[0].Groups) != 2 || len(got[0].Consumer) < 3 {
				t.Fatalf("redis-server's XINFO is not what the setup makes: %+v", got[0])
			}
			for i := range got[0].Stream {
				if w, g := fmt.Sprintf("%+v", got[0].Stream[i]), fmt.Sprintf("%+v", got[1].Stream[i]); w != g {
					t.Errorf("XINFO STREAM #%d:\nredis  %s\nminikv %s", i, w, g)
				}
			}
			for i := range got[0].Full {
				if w, g := fmt.Sprintf("%+v", got[0].Full[i]), fmt.Sprintf("%+v", got[1].Full[i]); w != g {
					t.Errorf("XINFO STREAM FULL #%d:\nredis  %s\nminikv %s", i, w, g)
				}
			}
			if w, g := fmt.Sprintf("%+v", got[0].Groups), fmt.Sprintf("%+v", got[1].Groups); w != g {
				t.Errorf("XINFO GROUPS:\nredis  %s\nminikv %s", w, g)
			}
			if w, g := fmt.Sprintf("%+v", got[0].Consumer), fmt.Sprintf("%+v", got[1].Consumer); w != g {
				t.Errorf("XINFO CONSUMERS:\nredis  %s\nminikv %s", w, g)
			}
		})
	}
}

// plausibleTime fails the test for a delivery or seen time that is not
// within a day of now: a time field must still be a time.
func plausibleTime(t *testing.T, addr string, at time.Time) {
	t.Helper()
	if d := time.Since(at); d < -24*time.Hour || d > 24*time.Hour {
		t.Errorf("%s: time field %v is not near now", addr, at)
	}
}

// TestStreamDumpRestoreAcross moves streams both ways with DUMP and
// RESTORE: redis-server's payloads restored in MiniKV and MiniKV's in
// redis-server, and the stream reads the same on both sides after, and
// goes on the same (XADD, XREADGROUP, XACK). The streams: entries with
// the same fields and with other fields (the listpacks' master entry
// flags), integers and long values, deleted entries, over 100 entries
// (several listpacks), XSETID's counters, consumer groups with pending
// entries, consumers without, and an empty stream with a group.
func TestStreamDumpRestoreAcross(t *testing.T) {
	redisAddr := startRedisServer(t)
	peer := streamPeer(t)
	setup := func(c *servertest.RESPClient) {
		c.Expect(mb("FLUSHALL"), "+OK\r\n")
		for i := 1; i <= 8; i++ {
			c.Do("XADD", "s1", fmt.Sprintf("%d-%d", i, i%3), "name", "v"+strconv.Itoa(i), "n", strconv.Itoa(i*1000-3))
		}
		c.Do("XADD", "s1", "9-0", "other", strings.Repeat("long ", 40), "n", "-9223372036854775808", "x", "")
		c.Do("XDEL", "s1", "2-2", "5-2")
		c.Do("XGROUP", "CREATE", "s1", "g1", "0")
		c.Do("XGROUP", "CREATE", "s1", "g2", "4-1", "ENTRIESREAD", "3")
		c.Do("XREADGROUP", "GROUP", "g1", "alice", "COUNT", "3", "STREAMS", "s1", ">")
		c.Do("XREADGROUP", "GROUP", "g1", "bob", "COUNT", "2", "STREAMS", "s1", ">")
		c.Do("XCLAIM", "s1", "g1", "carol", "0", "3-0", "RETRYCOUNT", "4", "JUSTID")
		c.Do("XACK", "s1", "g1", "1-1")
		c.Do("XGROUP", "CREATECONSUMER", "s1", "g2", "idle")
		for i := 1; i <= 260; i++ {
			c.Do("XADD", "s2", fmt.Sprintf("%d-0", i), "f", strconv.Itoa(i))
		}
		c.Do("XTRIM", "s2", "MAXLEN", "~", "150")
		c.Do("XDEL", "s2", "200-0")
		c.Do("XSETID", "s2", "999-9", "ENTRIESADDED", "300", "MAXDELETEDID", "500-0")
		c.Do("XGROUP", "CREATE", "s2", "g", "0")
		c.Do("XREADGROUP", "GROUP", "g", "c", "COUNT", "120", "STREAMS", "s2", ">")
		c.Do("XGROUP", "CREATE", "s3", "g", "$", "MKSTREAM")
		c.Do("XADD", "s4", "5-5", "a", "1")
		c.Do("XDEL", "s4", "5-5")
	}
	keys := []string{"s1", "s2", "s3", "s4"}
	reads := func(k string) [][]string {
		return [][]string{{"XRANGE", k, "-", "+"}, {"XINFO", "STREAM", k}, {"XINFO", "GROUPS", k}, {"XPENDING", k, "g1"},
			{"XPENDING", k, "g1", "-", "+", "100"}, {"XPENDING", k, "g", "-", "+", "100", "c"}, {"XPENDING", k, "g2"}, {"TYPE", k},
			{"XLEN", k}}
	}
	then := [][]string{{"XADD", "s1", "10-0", "name", "v10", "n", "1"}, {"XREADGROUP", "GROUP", "g1", "dave", "STREAMS", "s1", ">"},
		{"XREADGROUP", "GROUP", "g2", "idle", "STREAMS", "s1", ">"}, {"XACK", "s1", "g1", "3-0", "4-1"}, {"XPENDING", "s1", "g1"},
		{"XINFO", "GROUPS", "s1"}, {"XADD", "s2", "999-9", "f", "x"}, {"XADD", "s2", "1000-0", "f", "x"}, {"XINFO", "STREAM", "s2"},
		{"XREADGROUP", "GROUP", "g", "c", "COUNT", "2", "STREAMS", "s2", ">"}, {"XADD", "s3", "1-1", "a", "b"},
		{"XREADGROUP", "GROUP", "g", "c", "STREAMS", "s3", ">"}, {"XADD", "s4", "5-5", "a", "1"}, {"XADD", "s4", "5-6", "a", "1"}}
	compare := func(t *testing.T, a, b *servertest.RESPClient, args []string) {
		t.Helper()
		lower := append([]string{strings.ToLower(args[0])}, args[1:]...)
		if ra, rb := streamMask(lower, a.Do(args...)), streamMask(lower, b.Do(args...)); ra != rb {
			t.Errorf("%s: source %q, restored %q", randLine(args), clip(ra), clip(rb))
		}
	}
	for _, dir := range []struct{ name, from, to string }{{"redis to peer", redisAddr, peer}, {"peer to redis", peer, redisAddr}} {
		t.Run(dir.name, func(t *testing.T) {
			src, dst := dialRESP(t, dir.from), dialRESP(t, dir.to)
			setup(src)
			dst.Expect(mb("FLUSHALL"), "+OK\r\n")
			for _, k := range keys {
				payload := src.Do("DUMP", k)
				if !strings.HasPrefix(payload, "$") || payload == "$-1\r\n" {
					t.Fatalf("DUMP %s on %s = %q", k, dir.from, clip(payload))
				}
				body := payload[strings.Index(payload, "\r\n")+2 : len(payload)-2]
				if got := dst.Do("RESTORE", k, "0", body); got != "+OK\r\n" {
					t.Fatalf("RESTORE %s on %s of %s's payload = %q", k, dir.to, dir.from, got)
				}
			}
			for _, k := range keys {
				for _, args := range reads(k) {
					compare(t, src, dst, args)
				}
			}
			for _, args := range then {
				compare(t, src, dst, args)
			}
		})
	}
}

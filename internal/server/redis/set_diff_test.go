package redis

// Differential tests of the set commands against redis-server 7.0: fixed
// sessions, each in RESP2 and (after HELLO 3) RESP3, and a random command
// sequence compared reply by reply.
//
// Redis 7.0 keeps a small set of strings in a hashtable, whose order is
// unspecified, where MiniKV (as Redis 7.2) keeps a listpack in insertion
// order; intsets are in numeric order in both. So the sessions whose
// replies are byte-identical use intsets, sets of one string and
// counts that give whole sets; the others (setUnorderedSessions) compare
// each reply with the elements of its arrays and sets sorted.

import (
	"bufio"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/minikv/minikv/internal/protocol/resp"
	"github.com/minikv/minikv/internal/server"
	"github.com/minikv/minikv/internal/server/servertest"
	"github.com/minikv/minikv/internal/store"
)

func init() { respSessions = append(respSessions, bothRESP(setSessions)...) }

// bothRESP gives each session as it is and after HELLO 3, each with its
// own key prefix in place of {p} (sessions run in parallel).
func bothRESP(sessions []respSession) []respSession {
	var out []respSession
	for i, s := range sessions {
		out = append(out,
			respSession{name: "sets " + s.name, in: setPrefixed(s.in, fmt.Sprintf("set%d.2:", i))},
			respSession{name: "sets " + s.name + " resp3", skip: 1, in: mb("HELLO", "3") + setPrefixed(s.in, fmt.Sprintf("set%d.3:", i))})
	}
	return out
}

// setPrefixed is the requests of in, with {p} replaced by prefix.
func setPrefixed(in, prefix string) string {
	r := resp.NewReader(strings.NewReader(in), 1<<20, 1<<20)
	var b strings.Builder
	for {
		argv, err := r.Read()
		if err != nil {
			return b.String()
		}
		args := make([]string, len(argv))
		for i, a := range argv {
			args[i] = strings.ReplaceAll(string(a), "{p}", prefix)
		}
		b.WriteString(mb(args...))
	}
}

var setSessions = []respSession{
	{name: "sadd srem", in: mb("SADD", "{p}a", "3", "1", "2", "1") + mb("SADD", "{p}a", "2", "-5") + mb("SMEMBERS", "{p}a") +
		mb("SADD", "{p}a", "70000", "-9223372036854775808", "9223372036854775807") + mb("SMEMBERS", "{p}a") + mb("SCARD", "{p}a") +
		mb("SREM", "{p}a", "1", "nope", "1", "70000") + mb("SMEMBERS", "{p}a") + mb("SCARD", "{p}a") + mb("SCARD", "{p}nope") +
		mb("SREM", "{p}nope", "x") + mb("SADD", "{p}s", "only") + mb("SMEMBERS", "{p}s") + mb("SREM", "{p}s", "only", "more") +
		mb("EXISTS", "{p}s") + mb("TYPE", "{p}a") + mb("SMEMBERS", "{p}nope") + mb("SADD", "{p}z", "0", "-0", "00", "+1", "1") + mb("SCARD", "{p}z")},
	{name: "sismember smismember", in: mb("SADD", "{p}a", "1", "2", "x") + mb("SISMEMBER", "{p}a", "1") + mb("SISMEMBER", "{p}a", "x") +
		mb("SISMEMBER", "{p}a", "01") + mb("SISMEMBER", "{p}nope", "1") + mb("SMISMEMBER", "{p}a", "1", "3", "x", "1") +
		mb("SMISMEMBER", "{p}nope", "1", "2") + mb("SADD", "{p}i", "5") + mb("SISMEMBER", "{p}i", "x") + mb("SISMEMBER", "{p}i", "5") +
		mb("SISMEMBER", "{p}i", "5.0")},
	{name: "spop srandmember", in: mb("SADD", "{p}a", "3", "1", "2") + mb("SPOP", "{p}a", "3") + mb("EXISTS", "{p}a") +
		mb("SADD", "{p}a", "3", "1", "2") + mb("SPOP", "{p}a", "10") + mb("SPOP", "{p}a", "0") + mb("SPOP", "{p}nope", "0") +
		mb("SPOP", "{p}nope", "2") + mb("SPOP", "{p}nope") + mb("SRANDMEMBER", "{p}nope") + mb("SRANDMEMBER", "{p}nope", "5") +
		mb("SRANDMEMBER", "{p}nope", "-5") + mb("SADD", "{p}b", "10", "-20", "30") + mb("SRANDMEMBER", "{p}b", "3") +
		mb("SRANDMEMBER", "{p}b", "100") + mb("SRANDMEMBER", "{p}b", "0") + mb("SCARD", "{p}b") + mb("SADD", "{p}one", "solo") +
		mb("SRANDMEMBER", "{p}one") + mb("SRANDMEMBER", "{p}one", "-3") + mb("SRANDMEMBER", "{p}one", "1") + mb("SRANDMEMBER", "{p}one", "5") +
		mb("SPOP", "{p}one", "1") + mb("EXISTS", "{p}one") + mb("SADD", "{p}one", "solo") + mb("SPOP", "{p}one") + mb("SPOP", "{p}one") +
		mb("SADD", "{p}c", "1", "2", "3", "4") + mb("SPOP", "{p}c", "4") + mb("EXISTS", "{p}c")},
	{name: "smove", in: mb("SADD", "{p}a", "1", "2") + mb("SMOVE", "{p}a", "{p}b", "1") + mb("SMEMBERS", "{p}a") + mb("SMEMBERS", "{p}b") +
		mb("SMOVE", "{p}a", "{p}b", "9") + mb("SMOVE", "{p}a", "{p}b", "2") + mb("EXISTS", "{p}a") + mb("SMEMBERS", "{p}b") +
		mb("SMOVE", "{p}b", "{p}b", "2") + mb("SMOVE", "{p}b", "{p}b", "7") + mb("SMOVE", "{p}nope", "{p}b", "1") +
		mb("SET", "{p}str", "v") + mb("SMOVE", "{p}nope", "{p}str", "1") + mb("SMOVE", "{p}b", "{p}str", "1") + mb("SMOVE", "{p}str", "{p}b", "1") +
		mb("SMOVE", "{p}str", "{p}str", "1") + mb("SADD", "{p}x", "m") + mb("SMOVE", "{p}x", "{p}b", "m") + mb("SCARD", "{p}b") +
		mb("SISMEMBER", "{p}b", "m") + mb("SMOVE", "{p}b", "{p}c", "1")},
	{name: "sinter sunion sdiff", in: mb("SADD", "{p}a", "1", "2", "3", "4", "5") + mb("SADD", "{p}b", "4", "5", "6", "3") + mb("SADD", "{p}c", "5", "3", "9") +
		mb("SINTER", "{p}a", "{p}b", "{p}c") + mb("SINTER", "{p}a", "{p}b") + mb("SINTER", "{p}a") + mb("SINTER", "{p}a", "{p}nope") +
		mb("SINTER", "{p}a", "{p}a") + mb("SUNION", "{p}a", "{p}b", "{p}c") + mb("SUNION", "{p}nope", "{p}c") + mb("SUNION", "{p}nope") +
		mb("SDIFF", "{p}a", "{p}b") + mb("SDIFF", "{p}a", "{p}b", "{p}c") + mb("SDIFF", "{p}b", "{p}a") + mb("SDIFF", "{p}a", "{p}a") +
		mb("SDIFF", "{p}nope", "{p}a") + mb("SDIFF", "{p}a", "{p}nope") + mb("SINTERCARD", "2", "{p}a", "{p}b") +
		mb("SINTERCARD", "2", "{p}a", "{p}b", "LIMIT", "1") + mb("SINTERCARD", "2", "{p}a", "{p}b", "limit", "0") +
		mb("SINTERCARD", "3", "{p}a", "{p}b", "{p}c", "LIMIT", "100") + mb("SINTERCARD", "1", "{p}nope") +
		mb("SINTERCARD", "2", "{p}a", "{p}nope", "LIMIT", "5") + mb("SINTERCARD", "1", "{p}a", "LIMIT", "2", "LIMIT", "3") +
		mb("SADD", "{p}s", "x", "1") + mb("SINTER", "{p}s", "{p}a") + mb("SDIFF", "{p}s", "{p}a") + mb("SINTER", "{p}a", "{p}s")},
	{name: "store", in: mb("SADD", "{p}a", "1", "2", "3") + mb("SADD", "{p}b", "3", "4") +
		mb("SINTERSTORE", "{p}d", "{p}a", "{p}b") + mb("SMEMBERS", "{p}d") + mb("SUNIONSTORE", "{p}d", "{p}a", "{p}b") + mb("SMEMBERS", "{p}d") +
		mb("SDIFFSTORE", "{p}d", "{p}a", "{p}b") + mb("SMEMBERS", "{p}d") + mb("SDIFFSTORE", "{p}d", "{p}a", "{p}a") + mb("EXISTS", "{p}d") +
		mb("SET", "{p}str", "v") + mb("SUNIONSTORE", "{p}str", "{p}a") + mb("TYPE", "{p}str") + mb("SET", "{p}str2", "v") +
		mb("SINTERSTORE", "{p}str2", "{p}nope") + mb("EXISTS", "{p}str2") + mb("SUNIONSTORE", "{p}a", "{p}a", "{p}b") + mb("SMEMBERS", "{p}a") +
		mb("SDIFFSTORE", "{p}a", "{p}a", "{p}b") + mb("SMEMBERS", "{p}a") + mb("SINTERSTORE", "{p}b", "{p}b", "{p}a") + mb("EXISTS", "{p}b") +
		mb("SADD", "{p}t", "1") + mb("EXPIRE", "{p}t", "100") + mb("SUNIONSTORE", "{p}t", "{p}a") + mb("TTL", "{p}t") +
		mb("SUNIONSTORE", "{p}d", "{p}nope") + mb("SINTERSTORE", "{p}d", "{p}str", "{p}nope") + mb("SDIFFSTORE", "{p}d", "{p}nope", "{p}str")},
	{name: "sscan", in: mb("SADD", "{p}a", "1", "12", "-3", "100") + mb("SSCAN", "{p}a", "0") + mb("SSCAN", "{p}a", "0", "MATCH", "1*") +
		mb("SSCAN", "{p}a", "0", "COUNT", "1") + mb("SSCAN", "{p}a", "0", "COUNT", "1", "MATCH", "*0*") + mb("SSCAN", "{p}nope", "0") +
		mb("SSCAN", "{p}nope", "0", "COUNT", "0") + mb("SSCAN", "{p}a", "0", "COUNT", "0") + mb("SSCAN", "{p}a", "0", "COUNT", "x") +
		mb("SSCAN", "{p}a", "0", "FOO", "1") + mb("SSCAN", "{p}a", "0", "MATCH") + mb("SSCAN", "{p}a", "abc") + mb("SSCAN", "{p}nope", "-1") +
		mb("SADD", "{p}o", "one") + mb("SSCAN", "{p}o", "0", "MATCH", "o*") + mb("SSCAN", "{p}o", "0", "MATCH", "x*")},
	{name: "errors", in: mb("SET", "{p}str", "v") + mb("SADD", "{p}str", "1") + mb("SREM", "{p}str", "1") + mb("SISMEMBER", "{p}str", "1") +
		mb("SMISMEMBER", "{p}str", "1") + mb("SMEMBERS", "{p}str") + mb("SCARD", "{p}str") + mb("SPOP", "{p}str") + mb("SPOP", "{p}str", "1") +
		mb("SPOP", "{p}str", "0") + mb("SRANDMEMBER", "{p}str") + mb("SRANDMEMBER", "{p}str", "2") + mb("SSCAN", "{p}str", "0") +
		mb("SINTER", "{p}str") + mb("SINTER", "{p}nope", "{p}str") + mb("SUNION", "{p}nope", "{p}str") + mb("SDIFF", "{p}nope", "{p}str") +
		mb("SINTERCARD", "1", "{p}str") + mb("SINTERSTORE", "{p}d", "{p}str") + mb("SUNIONSTORE", "{p}d", "{p}str") +
		mb("SDIFFSTORE", "{p}d", "{p}nope", "{p}str") + mb("HSET", "{p}h", "f", "v") + mb("SADD", "{p}h", "x") +
		mb("SADD", "{p}k") + mb("SREM", "{p}k") + mb("SISMEMBER", "{p}k") + mb("SMISMEMBER", "{p}k") + mb("SMEMBERS") + mb("SCARD", "{p}k", "x") +
		mb("SPOP") + mb("SRANDMEMBER") + mb("SMOVE", "{p}a", "{p}b") + mb("SINTER") + mb("SINTERCARD", "1") + mb("SINTERSTORE", "{p}d") +
		mb("SUNION") + mb("SUNIONSTORE", "{p}d") + mb("SDIFF") + mb("SDIFFSTORE", "{p}d") + mb("SSCAN", "{p}k") +
		mb("SADD", "{p}a", "1") + mb("SPOP", "{p}a", "abc") + mb("SPOP", "{p}a", "-1") + mb("SPOP", "{p}a", "1", "2") +
		mb("SRANDMEMBER", "{p}a", "abc") + mb("SRANDMEMBER", "{p}a", "-9223372036854775808") + mb("SRANDMEMBER", "{p}a", "1", "2") +
		mb("SRANDMEMBER", "{p}a", "1.5") + mb("SPOP", "{p}str", "abc") + mb("SINTERCARD", "abc", "{p}a") + mb("SINTERCARD", "0", "{p}a") +
		mb("SINTERCARD", "-1", "{p}a") + mb("SINTERCARD", "2", "{p}a") + mb("SINTERCARD", "1", "{p}a", "LIMIT", "-1") +
		mb("SINTERCARD", "1", "{p}a", "LIMIT", "abc") + mb("SINTERCARD", "1", "{p}a", "LIMIT") + mb("SINTERCARD", "1", "{p}a", "FOO") +
		mb("SINTERCARD", "1", "{p}nope", "LIMIT", "-1") + mb("SINTERCARD", "1", "{p}str", "LIMIT", "-1") + mb("SCARD", "{p}a")},
	{name: "conversions", in: mb(append([]string{"SADD", "{p}big"}, setNumbers(0, 600)...)...) + mb("SCARD", "{p}big") +
		mb(append([]string{"SADD", "{p}i"}, setNumbers(0, 512)...)...) + mb("SADD", "{p}i", "-1") + mb("SCARD", "{p}i") +
		mb("SISMEMBER", "{p}i", "-1") + mb("SISMEMBER", "{p}i", "511") + mb("SISMEMBER", "{p}i", "512") +
		mb("SADD", "{p}m", "1", "2") + mb("SADD", "{p}m", "x") + mb("SREM", "{p}m", "x") + mb("SISMEMBER", "{p}m", "1") +
		mb("SINTERCARD", "2", "{p}big", "{p}i") + mb("SINTERCARD", "2", "{p}big", "{p}i", "LIMIT", "7") + mb("SDIFFSTORE", "{p}d", "{p}big", "{p}i") +
		mb("SMEMBERS", "{p}d") + mb("SINTERSTORE", "{p}e", "{p}big", "{p}m") + mb("SMEMBERS", "{p}e") + mb("SCARD", "{p}big") +
		mb("SREM", "{p}big", "5", "6", "7") + mb("SCARD", "{p}big") + mb("SMISMEMBER", "{p}big", "5", "8", "599", "600") +
		mb("OBJECT", "ENCODING", "{p}big") + mb("SADD", "{p}n", "-1", "2") + mb("OBJECT", "ENCODING", "{p}n") +
		mb("SINTERSTORE", "{p}n2", "{p}n", "{p}n") + mb("OBJECT", "ENCODING", "{p}n2")},
	{name: "copy rename", in: mb(append([]string{"SADD", "{p}big"}, setNumbers(0, 600)...)...) + mb("COPY", "{p}big", "{p}big2") +
		mb("SCARD", "{p}big2") + mb("SREM", "{p}big2", "0") + mb("SISMEMBER", "{p}big", "0") + mb("SISMEMBER", "{p}big2", "599") +
		mb("SADD", "{p}i", "3", "-1") + mb("RENAME", "{p}i", "{p}j") + mb("SMEMBERS", "{p}j") + mb("TYPE", "{p}j") +
		mb("COPY", "{p}j", "{p}big", "REPLACE") + mb("SMEMBERS", "{p}big") + mb("SADD", "{p}l", "a") + mb("COPY", "{p}l", "{p}l2") +
		mb("SMEMBERS", "{p}l2") + mb("OBJECT", "ENCODING", "{p}big2") + mb("OBJECT", "ENCODING", "{p}j")},
	{name: "multi exec", in: mb("MULTI") + mb("SADD", "{p}a", "1", "2", "3") + mb("SADD", "{p}b", "3") + mb("SMOVE", "{p}a", "{p}b", "1") +
		mb("SINTERSTORE", "{p}c", "{p}a", "{p}b") + mb("SUNION", "{p}a", "{p}b") + mb("SPOP", "{p}c", "5") + mb("SCARD", "{p}c") + mb("EXEC") +
		mb("WATCH", "{p}a") + mb("SREM", "{p}a", "2") + mb("MULTI") + mb("SMEMBERS", "{p}a") + mb("EXEC")},
	{name: "config", in: mb("CONFIG", "GET", "set-max-intset-entries") + mb("CONFIG", "SET", "set-max-intset-entries", "-1") +
		mb("CONFIG", "SET", "set-max-intset-entries", "x") + mb("CONFIG", "SET", "set-max-intset-entries", "512") +
		mb("CONFIG", "GET", "set-max-intset-entries")},
}

// setNumbers is the decimal numbers from lo to hi-1.
func setNumbers(lo, hi int) []string {
	var out []string
	for i := lo; i < hi; i++ {
		out = append(out, strconv.Itoa(i))
	}
	return out
}

// setUnorderedSessions are compared with the elements of every array or
// set reply sorted (an SSCAN reply's inner array): their sets of strings
// are hashtables in Redis 7.0.
var setUnorderedSessions = []respSession{
	{name: "strings", in: mb("SADD", "{p}a", "x", "y", "z", "1") + mb("SADD", "{p}b", "y", "z", "w") + mb("SMEMBERS", "{p}a") +
		mb("SINTER", "{p}a", "{p}b") + mb("SUNION", "{p}a", "{p}b") + mb("SDIFF", "{p}a", "{p}b") + mb("SSCAN", "{p}a", "0") +
		mb("SSCAN", "{p}a", "0", "MATCH", "[xy]") + mb("SRANDMEMBER", "{p}a", "4") + mb("SRANDMEMBER", "{p}a", "40") +
		mb("SINTERSTORE", "{p}d", "{p}a", "{p}b") + mb("SMEMBERS", "{p}d") + mb("SUNIONSTORE", "{p}d", "{p}a", "{p}b") + mb("SMEMBERS", "{p}d") +
		mb("SMOVE", "{p}a", "{p}b", "x") + mb("SMEMBERS", "{p}b") + mb("SPOP", "{p}b", "10") + mb("EXISTS", "{p}b") +
		mb("SADD", "{p}l", strings.Repeat("l", 100), "1") + mb("SMEMBERS", "{p}l") + mb("SCARD", "{p}l")},
	{name: "big", in: mb(append([]string{"SADD", "{p}a"}, setWords("m", 0, 300)...)...) + mb(append([]string{"SADD", "{p}b"}, setWords("m", 200, 400)...)...) +
		mb("SCARD", "{p}a") + mb("SINTER", "{p}a", "{p}b") + mb("SDIFF", "{p}a", "{p}b") + mb("SUNIONSTORE", "{p}u", "{p}a", "{p}b") +
		mb("SSCAN", "{p}a", "0", "COUNT", "1000") + mb("SMEMBERS", "{p}b") + mb("SINTERCARD", "2", "{p}a", "{p}b") +
		mb("SMISMEMBER", "{p}a", "m1", "m299", "m300") + mb("SPOP", "{p}b", "300") + mb("EXISTS", "{p}b")},
}

func setWords(prefix string, lo, hi int) []string {
	var out []string
	for i := lo; i < hi; i++ {
		out = append(out, prefix+strconv.Itoa(i))
	}
	return out
}

// sortedAggregates returns reply with the elements of every array or
// set whose elements are all bulk strings sorted, recursively.
func sortedAggregates(reply string) string {
	br := bufio.NewReader(strings.NewReader(reply))
	out, err := sortedAggregate(br)
	if err != nil {
		return reply
	}
	return out
}

func sortedAggregate(br *bufio.Reader) (string, error) {
	line, err := br.ReadString('\n')
	if err != nil || len(line) < 3 {
		return "", fmt.Errorf("bad reply line %q: %v", line, err)
	}
	switch line[0] {
	case '$':
		n, err := strconv.Atoi(strings.TrimSpace(line[1:]))
		if err != nil || n < 0 {
			return line, nil
		}
		data := make([]byte, n+2)
		if _, err := io.ReadFull(br, data); err != nil {
			return "", err
		}
		return line + string(data), nil
	case '*', '~', '%':
		n, err := strconv.Atoi(strings.TrimSpace(line[1:]))
		if err != nil || n < 0 {
			return line, nil
		}
		if line[0] == '%' {
			n *= 2
		}
		elems := make([]string, n)
		allBulk := line[0] != '%'
		for i := range elems {
			if elems[i], err = sortedAggregate(br); err != nil {
				return "", err
			}
			allBulk = allBulk && elems[i][0] == '$'
		}
		if allBulk {
			slices.Sort(elems)
		}
		return line + strings.Join(elems, ""), nil
	default:
		return line, nil
	}
}

// TestSetDifferentialUnordered runs setUnorderedSessions, RESP2 and RESP3,
// comparing every reply with its elements sorted.
func TestSetDifferentialUnordered(t *testing.T) {
	redisAddr := startRedisServer(t)
	rs := startRESP(t, server.Config{}, store.Config{MaxItemSize: 1 << 20})
	for _, s := range bothRESP(setUnorderedSessions) {
		t.Run(s.name, func(t *testing.T) {
			t.Parallel()
			want := runRESPSession(redisAddr, s)
			got := runRESPSession(rs.respAddr, s)
			if want.err != nil || got.err != nil {
				t.Fatalf("redis: %v; minikv: %v", want.err, got.err)
			}
			if len(got.replies) != len(want.replies) || got.closed != want.closed {
				t.Fatalf("%d replies (closed %v), redis %d (closed %v)\nredis:  %q\nminikv: %q",
					len(got.replies), got.closed, len(want.replies), want.closed, want.out, got.out)
			}
			cmds := respCommandNames(s.in)[s.skip:]
			for i := range got.replies {
				if g, w := sortedAggregates(got.replies[i]), sortedAggregates(want.replies[i]); g != w {
					t.Errorf("reply %d (%s) differs\nredis:  %q\nminikv: %q", i, cmds[i], w, g)
				}
			}
		})
	}
}

// setRandGen draws random set commands over a few keys, one of them a
// string (WRONGTYPE), with members that take the sets through every
// encoding: small integers, wide integers, short strings, a few long
// ones, and now and then a batch of hundreds.
type setRandGen struct{ r *rand.Rand }

var setRandKeys = []string{"k0", "k1", "k2", "k3", "str"}

func (g setRandGen) key() string {
	if g.r.IntN(12) == 0 {
		return "str"
	}
	return setRandKeys[g.r.IntN(4)]
}

func (g setRandGen) keys() []string {
	out := []string{g.key()}
	for g.r.IntN(2) == 0 && len(out) < 4 {
		out = append(out, g.key())
	}
	return out
}

func (g setRandGen) member() string {
	switch r := g.r.IntN(40); {
	case r < 20:
		return strconv.Itoa(g.r.IntN(40) - 10)
	case r < 24:
		return strconv.FormatInt(g.r.Int64()>>uint(g.r.IntN(63))*int64(1-2*g.r.IntN(2)), 10)
	case r < 38:
		return "m" + strconv.Itoa(g.r.IntN(30))
	case r < 39:
		return strings.Repeat("L", 60+g.r.IntN(10)) // about set-max-listpack-value
	default:
		return []string{"01", "-0", "+1", "1.0", ""}[g.r.IntN(5)]
	}
}

func (g setRandGen) members(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = g.member()
	}
	return out
}

func (g setRandGen) count() string {
	return strconv.Itoa([]int{0, 1, 2, 3, 5, 10, 50, 1000, -1, -3, -20}[g.r.IntN(11)])
}

func (g setRandGen) next() []string {
	switch g.r.IntN(24) {
	case 0, 1, 2, 3:
		return append([]string{"SADD", g.key()}, g.members(1+g.r.IntN(4))...)
	case 4:
		// A batch: past set-max-intset-entries or the listpack limits.
		n := []int{100, 130, 300, 520}[g.r.IntN(4)]
		args := []string{"SADD", g.key()}
		base := g.r.IntN(1000)
		for i := range n {
			if g.r.IntN(3) == 0 {
				args = append(args, "b"+strconv.Itoa(base+i))
			} else {
				args = append(args, strconv.Itoa(base+i))
			}
		}
		return args
	case 5, 6:
		return append([]string{"SREM", g.key()}, g.members(1+g.r.IntN(3))...)
	case 7:
		return []string{"SISMEMBER", g.key(), g.member()}
	case 8:
		return append([]string{"SMISMEMBER", g.key()}, g.members(1+g.r.IntN(3))...)
	case 9:
		return []string{"SMEMBERS", g.key()}
	case 10:
		return []string{"SCARD", g.key()}
	case 11:
		if g.r.IntN(2) == 0 {
			return []string{"SPOP", g.key()}
		}
		return []string{"SPOP", g.key(), g.count()}
	case 12:
		if g.r.IntN(3) == 0 {
			return []string{"SRANDMEMBER", g.key()}
		}
		return []string{"SRANDMEMBER", g.key(), g.count()}
	case 13:
		return []string{"SMOVE", g.key(), g.key(), g.member()}
	case 14:
		return append([]string{"SINTER"}, g.keys()...)
	case 15:
		ks := g.keys()
		args := append([]string{"SINTERCARD", strconv.Itoa(len(ks))}, ks...)
		if g.r.IntN(2) == 0 {
			args = append(args, "LIMIT", strconv.Itoa(g.r.IntN(5)))
		}
		return args
	case 16:
		return append([]string{"SUNION"}, g.keys()...)
	case 17:
		return append([]string{"SDIFF"}, g.keys()...)
	case 18:
		return append([]string{"SINTERSTORE", g.key()}, g.keys()...)
	case 19:
		return append([]string{"SUNIONSTORE", g.key()}, g.keys()...)
	case 20:
		return append([]string{"SDIFFSTORE", g.key()}, g.keys()...)
	case 21:
		return []string{"SSCAN", g.key(), "0", "COUNT", "100000", "MATCH", []string{"*", "m*", "1*", "*[0-4]"}[g.r.IntN(4)]}
	case 22:
		if g.r.IntN(4) == 0 {
			return []string{"SET", "str", "v"}
		}
		return []string{"DEL", g.key()}
	default:
		return []string{"TYPE", g.key()}
	}
}

// setReplyElems returns the bulk elements of an array or set reply.
func setReplyElems(reply string) ([]string, bool) {
	br := bufio.NewReader(strings.NewReader(reply))
	line, err := br.ReadString('\n')
	if err != nil || line[0] != '*' && line[0] != '~' {
		return nil, false
	}
	n, _ := strconv.Atoi(strings.TrimSpace(line[1:]))
	out := make([]string, 0, n)
	for range n {
		e, err := sortedAggregate(br)
		if err != nil || e[0] != '$' {
			return nil, false
		}
		_, body, _ := strings.Cut(e, "\r\n")
		out = append(out, strings.TrimSuffix(body, "\r\n"))
	}
	return out, true
}

// TestSetRandomDifferential sends seeded random set commands to
// redis-server and MiniKV (even seeds RESP2, odd ones RESP3) and compares
// every reply: exactly, or with the elements sorted where Redis's order
// is unspecified; -soak runs 200 new seeds. SPOP and SRANDMEMBER are random on both sides: their
// replies are checked against the members the set held (read from Redis
// first), and after an SPOP Redis is made to hold what MiniKV kept.
func TestSetRandomDifferential(t *testing.T) {
	redisAddr := startRedisServer(t)
	rs := startRESP(t, server.Config{}, store.Config{MaxItemSize: 1 << 20})
	// -soak: 200 new seeds each run (the first is logged to rerun one).
	n, base := uint64(8), uint64(0)
	if *randSoak {
		n, base = 200, uint64(time.Now().UnixNano())
		t.Logf("seeds %d to %d", base, base+n-1)
	}
	for seed := base; seed < base+n; seed++ {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			redis, minikv := servertest.DialRESP(t, redisAddr), servertest.DialRESP(t, rs.respAddr)
			do := func(c *servertest.RESPClient, args ...string) string {
				c.Send(multibulk(args...))
				return c.Reply()
			}
			resp3 := seed%2 == 1
			if resp3 {
				do(redis, "HELLO", "3")
				do(minikv, "HELLO", "3")
			}
			if r, m := do(redis, "FLUSHALL"), do(minikv, "FLUSHALL"); r != m {
				t.Fatalf("FLUSHALL: %q %q", r, m)
			}
			g := setRandGen{rand.New(rand.NewPCG(seed, 15))}
			fails := 0
			for i := range 600 {
				args := g.next()
				name := strings.ToUpper(args[0])
				var before []string
				if name == "SPOP" || name == "SRANDMEMBER" {
					before, _ = setReplyElems(do(redis, "SMEMBERS", args[1]))
				}
				r, m := do(redis, args...), do(minikv, args...)
				if name == "SPOP" || name == "SRANDMEMBER" {
					if msg := setCheckRandom(args, before, r, m); msg != "" {
						t.Errorf("command %d %.200q: %s\nredis:  %.300q\nminikv: %.300q", i, args, msg, r, m)
						fails++
					}
					if name == "SPOP" {
						// Redis keeps what MiniKV kept.
						rp, _ := setReplyElems(r)
						mp, _ := setReplyElems(m)
						if len(args) == 2 && r[0] == '$' {
							rp, mp = []string{setBulk(r)}, []string{setBulk(m)}
						}
						if len(rp) > 0 {
							do(redis, append([]string{"SADD", args[1]}, rp...)...)
							do(redis, append([]string{"SREM", args[1]}, mp...)...)
						}
					}
				} else if r != m && sortedAggregates(r) != sortedAggregates(m) {
					t.Errorf("command %d %.200q differs\nredis:  %.300q\nminikv: %.300q", i, args, r, m)
					fails++
				}
				if fails > 5 {
					t.Fatal("too many differences")
				}
			}
			// The end state: every key the same.
			for _, k := range setRandKeys {
				r, m := do(redis, "SMEMBERS", k), do(minikv, "SMEMBERS", k)
				if sortedAggregates(r) != sortedAggregates(m) {
					t.Errorf("final SMEMBERS %s differs\nredis:  %.300q\nminikv: %.300q", k, r, m)
				}
			}
		})
	}
}

func setBulk(reply string) string {
	_, body, _ := strings.Cut(reply, "\r\n")
	return strings.TrimSuffix(body, "\r\n")
}

// setCheckRandom checks an SPOP or SRANDMEMBER reply of each server
// against the members the set held before: the same shape, members of
// the set, distinct where Redis promises it, as many as it promises.
func setCheckRandom(args, before []string, r, m string) string {
	if r[0] == '-' || m[0] == '-' {
		if r != m {
			return "errors differ"
		}
		return ""
	}
	in := map[string]bool{}
	for _, b := range before {
		in[b] = true
	}
	if len(args) == 2 {
		if (r[0] == '$' && r != "$-1\r\n") != (m[0] == '$' && m != "$-1\r\n") || r[0] != m[0] {
			return "null or not differs"
		}
		if r[0] == '$' && r != "$-1\r\n" && !in[setBulk(m)] {
			return "not a member"
		}
		return ""
	}
	if r[0] != m[0] {
		return "reply types differ"
	}
	re, ok1 := setReplyElems(r)
	me, ok2 := setReplyElems(m)
	if !ok1 || !ok2 || len(re) != len(me) {
		return "lengths differ"
	}
	count, _ := strconv.Atoi(args[2])
	want := len(before)
	if count >= 0 {
		want = min(count, want)
	} else if want > 0 {
		want = -count
	}
	if len(me) != want {
		return fmt.Sprintf("%d members, want %d", len(me), want)
	}
	seen := map[string]bool{}
	for _, e := range me {
		if !in[e] || count >= 0 && seen[e] {
			return fmt.Sprintf("%q not a member or given twice", e)
		}
		seen[e] = true
	}
	return ""
}

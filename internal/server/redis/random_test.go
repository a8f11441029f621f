package redis

// Random differential test of the string and keyspace commands: seeded
// random command sequences go to a real redis-server (7.0.15) and to an
// in-process MiniKV over raw sockets, as RESP2 multibulk requests, and
// every reply must be the same bytes, except:
//
//   - TTL, PTTL, EXPIRETIME and PEXPIRETIME, compared within randTTLSlack:
//     the two servers read their clocks at slightly different instants;
//   - KEYS and SCAN, whose elements are compared sorted, and RANDOMKEY,
//     of which only "null or not" is compared;
//   - the documented differences in randKnownDiffs.
//
// Time. Every relative expiry the generator makes is invalid, zero or
// negative (the key is deleted) or at least randMinTTL seconds away, in
// whole seconds and never the same twice in a seed: no key expires during
// a run, and a GT/LT comparison of two deadlines never depends on which
// millisecond either server read its clock. Absolute expiries are in the
// past or after 2033, up to LLONG_MAX milliseconds. Redis keeps a key
// stored with a past deadline (SET ... PXAT 1) until a lookup or its
// expiry cycle removes it, so DBSIZE is sent after an EXISTS of every key
// and SCAN never asks for TYPE none (see exec and scan).
//
// Each seed starts with FLUSHALL on both servers. After a divergence both
// are flushed again and the seed goes on, so one broken command does not
// hide the others. At the end each command class that diverged is
// reported: its first divergences shrunk to minimal sequences, the full
// sequence of the first, and the seed to rerun it with:
//
//	go test -count=1 -run TestRESPRandomDifferential ./internal/server/ -args -seed N
//
// A sequence depends only on the seed and the flags -rand.exclude and
// -rand.emptykey, never on the replies, so a seed replays
// the same way in a short or a -soak run. The flags (after -args):
//
//	-soak             200 seeds (make soak) instead of 20; new seeds each run
//	-seed N           only seed N
//	-rand.seeds N     the number of seeds; -rand.cmds N commands per seed (500)
//	-rand.exclude C,… classes not generated, e.g. INCRBYFLOAT; MSETNX-DUP is
//	                  MSETNX with a key given twice
//	-rand.emptykey=false  no empty key
//	-rand.shrink=false    report without shrinking
//	-rand.stats       log the kinds of Redis's replies per class (coverage)

import (
	"bufio"
	"flag"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/minikv/minikv/internal/server"
	"github.com/minikv/minikv/internal/server/servertest"
	"github.com/minikv/minikv/internal/store"
)

var (
	// randSoak makes the long run of make soak: randSoakSeeds seeds.
	randSoak    = flag.Bool("soak", false, "run the long version of TestRESPRandomDifferential (make soak)")
	randSeed    = flag.Uint64("seed", 0, "TestRESPRandomDifferential: run only this seed")
	randSeeds   = flag.Int("rand.seeds", 0, "TestRESPRandomDifferential: number of seeds (default 20, 200 with -soak)")
	randCmds    = flag.Int("rand.cmds", 500, "TestRESPRandomDifferential: commands per seed")
	randExclude = flag.String("rand.exclude", "",
		"TestRESPRandomDifferential: comma-separated command classes not generated (MSETNX-DUP: MSETNX with a key given twice)")
	randShrink   = flag.Bool("rand.shrink", true, "TestRESPRandomDifferential: shrink each reported divergence to a minimal sequence")
	randStats    = flag.Bool("rand.stats", false, "TestRESPRandomDifferential: log how often each class got each kind of reply")
	randEmptyKey = flag.Bool("rand.emptykey", true, "TestRESPRandomDifferential: use the empty key too")
)

const (
	randShortSeeds = 20
	randSoakSeeds  = 200
	randMinTTL     = 100_000 // seconds: the shortest relative expiry that succeeds
	randShrinkCost = 40_000  // commands replayed at most while shrinking one divergence

	// randShrinkPerClass is how many divergences of one class are shrunk
	// to look for different causes.
	randShrinkPerClass = 8
)

// randTTLSlack is how far apart the two servers' answers to the
// time-dependent commands may be.
var randTTLSlack = map[string]int64{"ttl": 2, "expiretime": 2, "pttl": 2000, "pexpiretime": 2000}

// randKnownDiffs are the documented differences (docs/redis.md, "Differences
// from Redis") the generator can reach, each with the replies it accepts.
var randKnownDiffs = []struct {
	difference string
	match      func(args []string, redis, minikv string) bool
}{
	{
		// SETRANGE past 512 MB: both refuse, naming their own limit.
		"bulk length limit is max-item-size, not 512 MB",
		func(args []string, redis, minikv string) bool {
			return strings.EqualFold(args[0], "setrange") &&
				redis == "-ERR string exceeds maximum allowed size (proto-max-bulk-len)\r\n" &&
				minikv == "-"+errTooLarge+"\r\n"
		},
	},
}

// randKeys is the key space: few keys, so commands meet each other's
// state, with an empty and a binary one.
var randKeys = []string{"a", "b", "k:1", "k:2", "bin\x00\xff", ""}

var randDBSizePrelude = append([]string{"EXISTS"}, randKeys...)

// randEdgeValues are values at the edges of Redis's integer and float
// parsing.
var randEdgeValues = []string{
	"", "0", "-0", "+0", "+1", " 1", "1 ", "\t1", "1\n", "007", "-007", "00", "1.5", "-1.5", "1e3", "1E3", "3.0e2",
	"0x10", "0x1p3", "1_000", "inf", "-inf", "+inf", "Infinity", "nan", "-nan", "1.", ".5", "0.0", "10.50",
	"1e309", "-1e309", "4.9e-324", "1e-400", "9223372036854775807", "9223372036854775806", "9223372036854775808",
	"-9223372036854775808", "-9223372036854775807", "-9223372036854775809", "18446744073709551616",
	"99999999999999999999", "\x00", "\r\n", "abc", "12abc", "\xff\xfe",
}

// randEdgeInts are integer arguments (INCRBY, GETRANGE, SETRANGE
// offsets): none of them lies between 1 MiB and 512 MB, where Redis
// would grow a SETRANGE string that MiniKV's item size refuses.
var randEdgeInts = []string{
	"0", "-0", "+0", "+1", " 1", "1 ", "007", "-1", "", "x", "1.5", "1e3", "0x10",
	"9223372036854775807", "9223372036854775806", "9223372036854775808",
	"-9223372036854775808", "-9223372036854775807", "-9223372036854775809",
	"2147483647", "2147483648", "4294967296", "-4294967296",
}

// randHugeOffsets are SETRANGE offsets past Redis's 512 MB limit.
var randHugeOffsets = []string{"536870912", "536870913", "1099511627776", "9223372036854775807", "9223372036854775806"}

// Expiry arguments: relative ones that are invalid, zero or negative, or
// so large that both servers refuse them; absolute ones in the past, in
// the future up to LLONG_MAX milliseconds (past 2262, where deadlines in
// int64 nanoseconds would end), or refused.
var (
	randBadRelSec = []string{"0", "-0", "-1", "-100", "+0", "9223372036854775807", "-9223372036854775808",
		"9223372036854775", "9223372036854776", "9223372036854775808", "x", "", "1.5", " 100000", "100000 ", "1e5"}
	randBadRelMs = []string{"0", "-0", "-1", "-100", "+0", "9223372036854775807", "9223372036854775806",
		"-9223372036854775808", "9223372036854775808", "x", "", "1.5", " 100000000", "1e8"}
	randAbsSec = []string{"1", "0", "-1", "1000000000", "-9223372036854775808", "2000000000", "4102444800", "9000000000",
		"9223372036854775807", "9223372036854776", "33177117420", "99999999999", "9223372036854775", "x", "", "1.5"}
	randAbsMs = []string{"1", "0", "-1", "-0", "1000000000000", "-9223372036854775808", "2000000000000", "4102444800123",
		"9000000000000", "33177117420000", "33177117420600", "9223372036854775807", "9223372036854775806", "x", "", "1.5"}
)

var randFloats = []string{
	"0.1", "-0.1", "0.2", "1.5", "-1.5", "3", "-0", "+0", "0.0", ".5", "5.", "1e3", "-1e3", "5.0e3", "1e-20", "1e308",
	"-1e308", "1e309", "1.7976931348623157e308", "4.9e-324", "2.5e-310", "inf", "-inf", "nan", "0x10", "0x1p-2",
	" 1", "1 ", "", "abc", "1e", "9223372036854775807", "17976931348623157e292", "10.50", "1.10",
	"1e4932", "1e4933", "-1e4933", "1e-4950", "1e-4951", "1e-5000", // long double's range, where strtold says ERANGE
}

var randPatterns = []string{
	"*", "*", "?", "a", "k:*", "k:?", "*1", "[ab]", "[^a]*", "[a-k]*", "[k-a]*", "\\*", "*\\x*", "", "b*", "*\x00*",
	"[", "[a", "k:[12]", "[!a]*", "**", "?*?", "a\\", "[]", "[]]", "k\\:1", "K:*", "bin*", "*[\xff]",
}

// randCmd is one generated command and its class: the upper-case command
// name, or a variant the flags can exclude (MSETNX-DUP).
type randCmd struct {
	args  []string
	class string
}

// randGen makes the command sequence of one seed.
type randGen struct {
	r       *rand.Rand
	exclude map[string]bool
	usedTTL map[int64]bool // relative expiries already used, in seconds
	keySet  []string       // randKeys, without "" under -rand.emptykey=false
	kinds   []randKind
	total   int
}

type randKind struct {
	class  string
	weight int
	gen    func(g *randGen) []string
}

func newRandGen(seed uint64, exclude map[string]bool) *randGen {
	g := &randGen{r: rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15)), exclude: exclude, usedTTL: map[int64]bool{}, keySet: randKeys}
	if !*randEmptyKey {
		g.keySet = randKeys[:len(randKeys)-1]
	}
	for _, k := range randKinds {
		if !exclude[k.class] {
			g.kinds = append(g.kinds, k)
			g.total += k.weight
		}
	}
	return g
}

func (g *randGen) chance(p float64) bool { return g.r.Float64() < p }

func (g *randGen) pick(list []string) string { return list[g.r.IntN(len(list))] }

func (g *randGen) key() string { return g.pick(g.keySet) }

// keys returns 1 to n keys, a key possibly given more than once.
func (g *randGen) keys(n int) []string {
	out := make([]string, 1+g.r.IntN(n))
	for i := range out {
		out[i] = g.key()
	}
	return out
}

func (g *randGen) letters(n int, alphabet string) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = alphabet[g.r.IntN(len(alphabet))]
	}
	return string(b)
}

func (g *randGen) value() string {
	switch n := g.r.IntN(100); {
	case n < 30:
		return strconv.Itoa(g.r.IntN(201) - 100)
	case n < 55:
		return g.pick(randEdgeValues)
	case n < 75:
		return g.letters(1+g.r.IntN(8), "abcxyz 01")
	case n < 80:
		unit := g.letters(1+g.r.IntN(3), "abcdefgh")
		return strings.Repeat(unit, 30+g.r.IntN(700))
	case n < 87:
		return g.letters(1+g.r.IntN(16), "\x00\x01\r\n\t \xff\x80abc\"'\\")
	case n < 93:
		return strconv.FormatFloat((g.r.Float64()-0.5)*2000, 'f', g.r.IntN(5), 64)
	default:
		return g.pick(randFloats)
	}
}

func (g *randGen) intArg() string {
	switch n := g.r.IntN(100); {
	case n < 55:
		return strconv.Itoa(g.r.IntN(41) - 20)
	case n < 85:
		return g.pick(randEdgeInts)
	default:
		return g.value()
	}
}

// relative returns an expiry in seconds (or ms) from now: 20% of the time
// one that fails or deletes the key, else a new whole number of seconds
// of at least randMinTTL.
func (g *randGen) relative(ms bool) string {
	if g.chance(0.2) {
		if ms {
			return g.pick(randBadRelMs)
		}
		return g.pick(randBadRelSec)
	}
	s := randMinTTL + g.r.Int64N(10_000_000)
	for g.usedTTL[s] {
		s = randMinTTL + g.r.Int64N(10_000_000)
	}
	g.usedTTL[s] = true
	if ms {
		return strconv.FormatInt(s*1000, 10)
	}
	return strconv.FormatInt(s, 10)
}

func (g *randGen) absolute(ms bool) string {
	if ms {
		return g.pick(randAbsMs)
	}
	return g.pick(randAbsSec)
}

// word returns an option or command name in random case, as clients may
// send them.
func (g *randGen) word(w string) string {
	switch n := g.r.IntN(10); {
	case n < 7:
		return w
	case n < 9:
		return strings.ToLower(w)
	}
	b := []byte(w)
	for i := range b {
		if g.chance(0.5) {
			b[i] ^= 0x20 // only letters reach here
		}
	}
	return string(b)
}

// expiry returns one expiry option of SET (withKeep) or GETEX.
func (g *randGen) expiry(withKeep bool) []string {
	switch g.r.IntN(5) {
	case 0:
		return []string{g.word("EX"), g.relative(false)}
	case 1:
		return []string{g.word("PX"), g.relative(true)}
	case 2:
		return []string{g.word("EXAT"), g.absolute(false)}
	case 3:
		return []string{g.word("PXAT"), g.absolute(true)}
	}
	if withKeep {
		return []string{g.word("KEEPTTL")}
	}
	return []string{g.word("PERSIST")}
}

// junk returns an option that is unknown, repeated, conflicting or
// missing its argument. An "EX" without argument is only ever last.
func (g *randGen) junk() []string {
	return [][]string{{"FOO"}, {"NX"}, {"XX"}, {"GET"}, {"KEEPTTL"}, {"PERSIST"}, {"EX", g.relative(false)},
		{"PXAT", g.absolute(true)}, {"EXATX", "1"}, {""}}[g.r.IntN(10)]
}

// options joins option groups in random order, sometimes with junk.
func (g *randGen) options(groups [][]string) []string {
	if g.chance(0.06) {
		groups = append(groups, g.junk())
	}
	g.r.Shuffle(len(groups), func(i, j int) { groups[i], groups[j] = groups[j], groups[i] })
	var out []string
	for _, gr := range groups {
		out = append(out, gr...)
	}
	if g.chance(0.02) {
		out = append(out, g.word("EX")) // missing its argument
	}
	return out
}

func (g *randGen) setOptions() []string {
	var groups [][]string
	switch n := g.r.IntN(10); {
	case n < 2:
		groups = append(groups, []string{g.word("NX")})
	case n < 4:
		groups = append(groups, []string{g.word("XX")})
	}
	if g.chance(0.25) {
		groups = append(groups, []string{g.word("GET")})
	}
	if g.chance(0.5) {
		groups = append(groups, g.expiry(true))
	}
	return g.options(groups)
}

func (g *randGen) getexOptions() []string {
	var groups [][]string
	if g.chance(0.6) {
		groups = append(groups, g.expiry(false))
	}
	return g.options(groups)
}

func (g *randGen) expireConds() []string {
	conds := []string{"NX", "XX", "GT", "LT"}
	switch n := g.r.IntN(100); {
	case n < 45:
		return nil
	case n < 88:
		return []string{g.word(g.pick(conds))}
	case n < 95:
		return []string{g.word(g.pick(conds)), g.word(g.pick(conds))}
	}
	return []string{g.pick([]string{"FOO", "", "nxx", "PERSIST"})}
}

// pairs returns key value pairs; with distinct, no key twice.
func (g *randGen) pairs(distinct bool) []string {
	n := 1 + g.r.IntN(4)
	ks := slices.Clone(g.keySet)
	g.r.Shuffle(len(ks), func(i, j int) { ks[i], ks[j] = ks[j], ks[i] })
	var out []string
	for i := range n {
		k := ks[i]
		if !distinct {
			k = g.key()
		}
		out = append(out, k, g.value())
	}
	return out
}

// pattern returns a glob: a listed one, or random glob syntax over the
// letters of the keys.
func (g *randGen) pattern() string {
	if g.chance(0.5) {
		return g.pick(randPatterns)
	}
	return g.letters(g.r.IntN(7), "**??[[]]^-\\abk:12\x00")
}

func (g *randGen) scan() []string {
	out := []string{g.pick([]string{"0", "0", "0", "", "00", "+0", "-0", "x", " 0", "1x"})}
	var groups [][]string
	if g.chance(0.5) {
		groups = append(groups, []string{g.word("MATCH"), g.pattern()})
	}
	if g.chance(0.5) {
		groups = append(groups, []string{g.word("COUNT"), g.pick([]string{"10", "100", "1000", "0", "-1", "x", ""})})
	}
	if g.chance(0.3) {
		// Not TYPE none: Redis 7.0 checks the type (none, the key being
		// deleted as it is looked up) before expiry, so it returns keys
		// stored with a past deadline (SET ... EXAT 1) that its expiry
		// cycle has not yet removed.
		groups = append(groups, []string{g.word("TYPE"), g.pick([]string{"string", "STRING", "hash", "x"})})
	}
	if g.chance(0.05) {
		groups = append(groups, []string{g.pick([]string{"FOO", "MATCH", "COUNT"})})
	}
	g.r.Shuffle(len(groups), func(i, j int) { groups[i], groups[j] = groups[j], groups[i] })
	for _, gr := range groups {
		out = append(out, gr...)
	}
	return out
}

func randOne(g *randGen) []string { return []string{g.key()} }

func randKeyValue(g *randGen) []string { return []string{g.key(), g.value()} }

// randKinds are the command classes with their weights.
var randKinds = []randKind{
	{"GET", 8, randOne},
	{"SET", 12, func(g *randGen) []string { return append([]string{g.key(), g.value()}, g.setOptions()...) }},
	{"SETNX", 2, randKeyValue},
	{"SETEX", 2, func(g *randGen) []string { return []string{g.key(), g.relative(false), g.value()} }},
	{"PSETEX", 2, func(g *randGen) []string { return []string{g.key(), g.relative(true), g.value()} }},
	{"GETSET", 2, randKeyValue},
	{"GETDEL", 2, randOne},
	{"GETEX", 4, func(g *randGen) []string { return append([]string{g.key()}, g.getexOptions()...) }},
	{"MGET", 3, func(g *randGen) []string { return g.keys(5) }},
	{"MSET", 3, func(g *randGen) []string { return g.pairs(false) }},
	{"MSETNX", 3, func(g *randGen) []string { return g.pairs(g.exclude["MSETNX-DUP"] || g.chance(0.5)) }},
	{"APPEND", 4, randKeyValue},
	{"STRLEN", 2, randOne},
	{"GETRANGE", 4, func(g *randGen) []string { return []string{g.key(), g.intArg(), g.intArg()} }},
	{"SUBSTR", 2, func(g *randGen) []string { return []string{g.key(), g.intArg(), g.intArg()} }},
	{"SETRANGE", 4, func(g *randGen) []string {
		var off string
		switch n := g.r.IntN(100); {
		case n < 60:
			off = strconv.Itoa(g.r.IntN(40))
		case n < 63:
			off = strconv.Itoa(100 + g.r.IntN(100_000))
		case n < 80:
			off = g.pick(randHugeOffsets)
		default:
			off = g.pick(randEdgeInts)
		}
		return []string{g.key(), off, g.value()}
	}},
	{"INCR", 4, randOne},
	{"DECR", 3, randOne},
	{"INCRBY", 4, func(g *randGen) []string { return []string{g.key(), g.intArg()} }},
	{"DECRBY", 3, func(g *randGen) []string { return []string{g.key(), g.intArg()} }},
	{"INCRBYFLOAT", 4, func(g *randGen) []string {
		if g.chance(0.7) {
			return []string{g.key(), g.pick(randFloats)}
		}
		return []string{g.key(), g.value()}
	}},
	{"DEL", 3, func(g *randGen) []string { return g.keys(4) }},
	{"UNLINK", 1, func(g *randGen) []string { return g.keys(4) }},
	{"EXISTS", 3, func(g *randGen) []string { return g.keys(4) }},
	{"TYPE", 1, randOne},
	{"EXPIRE", 4, func(g *randGen) []string { return append([]string{g.key(), g.relative(false)}, g.expireConds()...) }},
	{"PEXPIRE", 3, func(g *randGen) []string { return append([]string{g.key(), g.relative(true)}, g.expireConds()...) }},
	{"EXPIREAT", 3, func(g *randGen) []string { return append([]string{g.key(), g.absolute(false)}, g.expireConds()...) }},
	{"PEXPIREAT", 3, func(g *randGen) []string { return append([]string{g.key(), g.absolute(true)}, g.expireConds()...) }},
	{"TTL", 4, randOne},
	{"PTTL", 3, randOne},
	{"EXPIRETIME", 2, randOne},
	{"PEXPIRETIME", 2, randOne},
	{"PERSIST", 3, randOne},
	{"KEYS", 3, func(g *randGen) []string { return []string{g.pattern()} }},
	{"SCAN", 2, (*randGen).scan},
	{"DBSIZE", 2, func(*randGen) []string { return nil }},
	{"RANDOMKEY", 1, func(*randGen) []string { return nil }},
	{"RENAME", 1, func(g *randGen) []string { return g.keys(2) }},
	{"RENAMENX", 1, func(g *randGen) []string { return g.keys(2) }},
	{"COPY", 1, func(g *randGen) []string { return append(g.keys(2), g.options([][]string{{"REPLACE"}})...) }},
	// Hashes, on the same keys as the strings: WRONGTYPE both ways.
	{"HSET", 6, func(g *randGen) []string { return append([]string{g.key()}, g.fieldValues(1+g.r.IntN(3))...) }},
	{"HSETNX", 2, func(g *randGen) []string { return []string{g.key(), g.field(), g.value()} }},
	{"HGET", 4, func(g *randGen) []string { return []string{g.key(), g.field()} }},
	{"HMGET", 2, func(g *randGen) []string { return []string{g.key(), g.field(), g.field()} }},
	{"HDEL", 3, func(g *randGen) []string { return []string{g.key(), g.field(), g.field()} }},
	{"HEXISTS", 1, func(g *randGen) []string { return []string{g.key(), g.field()} }},
	{"HLEN", 1, randOne},
	{"HSTRLEN", 1, func(g *randGen) []string { return []string{g.key(), g.field()} }},
	{"HKEYS", 1, randOne},
	{"HVALS", 1, randOne},
	{"HGETALL", 2, randOne},
	{"HINCRBY", 3, func(g *randGen) []string { return []string{g.key(), g.field(), g.intArg()} }},
	{"HINCRBYFLOAT", 2, func(g *randGen) []string { return []string{g.key(), g.field(), g.pick(randFloats)} }},
	{"HRANDFIELD", 1, func(g *randGen) []string {
		return append([]string{g.key()}, g.options([][]string{{g.pick([]string{"1", "3", "10", "-2", "-5", "0", "x"})}, {"WITHVALUES"}})...)
	}},
	{"HSCAN", 1, func(g *randGen) []string {
		return append([]string{g.key(), "0"}, g.options([][]string{{"MATCH", g.pick([]string{"f*", "*", "?"})}, {"COUNT", "100"}})...)
	}},
}

// randFields are the hash fields: few, so commands meet each other's.
var randFields = []string{"f1", "f2", "f3", "10", "", "bin\x00\xff"}

func (g *randGen) field() string { return g.pick(randFields) }

func (g *randGen) fieldValues(n int) []string {
	var out []string
	for range n {
		out = append(out, g.field(), g.value())
	}
	return out
}

// next returns the next command. 3% of them get a wrong arity: the last
// argument dropped, or one added that can never be an expiry that
// succeeds.
func (g *randGen) next() randCmd {
	n := g.r.IntN(g.total)
	k := g.kinds[0]
	for _, k = range g.kinds {
		if n < k.weight {
			break
		}
		n -= k.weight
	}
	args := append([]string{g.word(k.class)}, k.gen(g)...)
	class := k.class
	if class == "MSETNX" && randDupKey(args[1:], 2) {
		class = "MSETNX-DUP"
	}
	if g.chance(0.03) {
		if len(args) > 1 && g.chance(0.5) {
			args = args[:len(args)-1]
		} else {
			args = append(args, g.pick([]string{"x", "", "0"}))
		}
	}
	return randCmd{args: args, class: class}
}

func randDupKey(args []string, step int) bool {
	seen := map[string]bool{}
	for i := 0; i < len(args); i += step {
		if seen[args[i]] {
			return true
		}
		seen[args[i]] = true
	}
	return false
}

// randCompare reports whether Redis's and MiniKV's replies to args are
// the same for this test, and the documented difference that made them
// so, if any.
func randCompare(args []string, redis, minikv string) (same bool, known string) {
	if redis == minikv {
		return true, ""
	}
	for _, d := range randKnownDiffs {
		if d.match(args, redis, minikv) {
			return true, d.difference
		}
	}
	name := strings.ToLower(args[0])
	if slack, ok := randTTLSlack[name]; ok {
		r, rok := randInt(redis)
		m, mok := randInt(minikv)
		return rok && mok && r >= 0 && m >= 0 && max(r-m, m-r) <= slack, ""
	}
	switch name {
	case "keys":
		return sortedReply(redis, false) == sortedReply(minikv, false), ""
	case "scan":
		return sortedReply(redis, true) == sortedReply(minikv, true), ""
	case "randomkey": // a key, any key
		return redis[0] == '$' && minikv[0] == '$' && (redis == "$-1\r\n") == (minikv == "$-1\r\n"), ""
	case "hkeys", "hvals", "hgetall":
		// A hash past its listpack limits is a table, whose order is
		// each server's own (the sessions pin the listpack order).
		return sortedReply(redis, false) == sortedReply(minikv, false), ""
	case "hscan":
		return sortedReply(redis, true) == sortedReply(minikv, true), ""
	case "hrandfield": // random picks: the same kind and number of them
		return randShape(redis) == randShape(minikv), ""
	}
	return false, ""
}

// randShape is a reply's type and, for an array, its length.
func randShape(reply string) string {
	if reply[0] == '*' {
		return reply[:strings.IndexByte(reply, '\n')]
	}
	if reply[0] == '$' && reply != "$-1\r\n" {
		return "$"
	}
	return reply
}

func randInt(reply string) (int64, bool) {
	if len(reply) < 4 || reply[0] != ':' {
		return 0, false
	}
	n, err := strconv.ParseInt(reply[1:len(reply)-2], 10, 64)
	return n, err == nil
}

// sortedReply returns an array reply with its elements sorted (for
// SCAN, withCursor, the array after the cursor), or the reply itself when
// it is not one.
func sortedReply(reply string, withCursor bool) string {
	br := bufio.NewReader(strings.NewReader(reply))
	var head string
	if withCursor {
		line, err := br.ReadString('\n')
		cursor, err2 := readRESPReply(br)
		if err != nil || err2 != nil || line != "*2\r\n" {
			return reply
		}
		head = line + cursor
	}
	line, err := br.ReadString('\n')
	if err != nil || line[0] != '*' {
		return reply
	}
	elems := []string{}
	for {
		e, err := readRESPReply(br)
		if err != nil {
			break
		}
		elems = append(elems, e)
	}
	slices.Sort(elems)
	return head + line + strings.Join(elems, "")
}

// randPair is a connection to each server.
type randPair struct{ redis, minikv *servertest.RESPClient }

// exec sends args to both servers and returns their replies. A DBSIZE is
// preceded by an EXISTS of every key (randDBSizePrelude): Redis counts
// keys stored with a deadline already past (SET ... PXAT 1) until its
// expiry cycle, 100 ms later, or a lookup removes them, so without the
// lookups its count would depend on timing.
func (p randPair) exec(args []string) (redis, minikv string) {
	req := multibulk(args...)
	dbsize := strings.EqualFold(args[0], "dbsize")
	if dbsize {
		req = multibulk(randDBSizePrelude...) + req
	}
	p.redis.Send(req)
	p.minikv.Send(req)
	if dbsize {
		p.redis.Reply()
		p.minikv.Reply()
	}
	return p.redis.Reply(), p.minikv.Reply()
}

func (p randPair) flush(t *testing.T) {
	t.Helper()
	if r, m := p.exec([]string{"FLUSHALL"}); r != "+OK\r\n" || m != "+OK\r\n" {
		t.Fatalf("FLUSHALL: redis %q, minikv %q", r, m)
	}
}

// replay runs seq after a FLUSHALL and returns the index of its first
// divergence (-1 if none) and the two replies there.
func (p randPair) replay(t *testing.T, seq []randCmd) (int, string, string) {
	p.flush(t)
	for i, c := range seq {
		r, m := p.exec(c.args)
		if same, _ := randCompare(c.args, r, m); !same {
			return i, r, m
		}
	}
	return -1, "", ""
}

// randDivergence is a command whose replies differ, with the commands
// sent since the last FLUSHALL (it is the last of them).
type randDivergence struct {
	seed          uint64
	index         int // in the seed's sequence
	seq           []randCmd
	redis, minikv string
}

// shrink removes chunks of the commands before the diverging one while
// the shorter sequence still diverges at its last command (delta
// debugging, halving the chunk size down to one command).
func (p randPair) shrink(t *testing.T, d randDivergence) (seq []randCmd, redis, minikv string, complete bool) {
	last := d.seq[len(d.seq)-1]
	prefix := d.seq[:len(d.seq)-1]
	redis, minikv = d.redis, d.minikv
	cost := 0
	for chunk := max(len(prefix)/2, 1); ; chunk /= 2 {
		for i := 0; i < len(prefix); {
			if cost > randShrinkCost {
				return append(prefix, last), redis, minikv, false
			}
			cand := append(slices.Clone(prefix[:i]), prefix[min(i+chunk, len(prefix)):]...)
			cand = append(cand, last)
			cost += len(cand)
			if at, r, m := p.replay(t, cand); at == len(cand)-1 {
				prefix, redis, minikv = cand[:len(cand)-1], r, m
			} else {
				i += chunk
			}
		}
		if chunk == 1 {
			return append(prefix, last), redis, minikv, true
		}
	}
}

func TestRESPRandomDifferential(t *testing.T) {
	redisAddr := startRedisServer(t)
	rs := startRESP(t, server.Config{}, store.Config{MaxItemSize: 1 << 20})
	p := randPair{redis: dialRESP(t, redisAddr), minikv: dialRESP(t, rs.respAddr)}

	exclude := map[string]bool{}
	for _, c := range strings.Split(*randExclude, ",") {
		if c = strings.ToUpper(strings.TrimSpace(c)); c != "" {
			exclude[c] = true
		}
	}
	var seeds []uint64
	switch n := *randSeeds; {
	case *randSeed != 0:
		seeds = []uint64{*randSeed}
	case *randSoak:
		if n == 0 {
			n = randSoakSeeds
		}
		base := uint64(time.Now().UnixNano()) % 1_000_000_000 * 1000 // new seeds every run, still short to type
		for i := range n {
			seeds = append(seeds, base+uint64(i)+1)
		}
	default:
		if n == 0 {
			n = randShortSeeds
		}
		for i := range n {
			seeds = append(seeds, uint64(i)+1)
		}
	}

	// The flags a sequence depends on besides the seed, for the rerun line.
	var genFlags string
	if *randExclude != "" {
		genFlags += fmt.Sprintf(" -rand.exclude=%q", *randExclude)
	}
	if !*randEmptyKey {
		genFlags += " -rand.emptykey=false"
	}

	byClass := map[string][]randDivergence{}
	stats := map[string]int{}
	known := map[string]int{}
	sent := 0
	start := time.Now()
	for _, seed := range seeds {
		g := newRandGen(seed, exclude)
		p.flush(t)
		var seq []randCmd
		for i := range *randCmds {
			c := g.next()
			seq = append(seq, c)
			r, m := p.exec(c.args)
			sent++
			if *randStats {
				stats[c.class+" "+randReplyKind(r)]++
			}
			same, k := randCompare(c.args, r, m)
			if k != "" {
				known[k]++
			}
			if same {
				continue
			}
			byClass[c.class] = append(byClass[c.class], randDivergence{seed: seed, index: i, seq: seq, redis: r, minikv: m})
			p.flush(t) // go on from an empty keyspace: the states may differ now
			seq = nil
		}
	}
	t.Logf("%d seeds (%d..%d), %d commands in %v; flags:%s",
		len(seeds), seeds[0], seeds[len(seeds)-1], sent, time.Since(start).Round(time.Millisecond), genFlags)
	for k, n := range known {
		t.Logf("documented difference %q seen %d times", k, n)
	}

	if *randStats {
		lines := make([]string, 0, len(stats))
		for k, n := range stats {
			lines = append(lines, fmt.Sprintf("%-40s %6d", k, n))
		}
		slices.Sort(lines)
		t.Logf("replies from Redis by class and kind:\n%s", strings.Join(lines, "\n"))
	}

	classes := make([]string, 0, len(byClass))
	for c := range byClass {
		classes = append(classes, c)
	}
	slices.Sort(classes)
	for _, class := range classes {
		ds := byClass[class]
		t.Errorf("%s: %d divergences in %d seeds", class, len(ds), len(seeds))
		// Report the first divergence of the class and, among the next
		// few, those that shrink to something else (another cause behind
		// the same command).
		reported := map[string]bool{}
		for i, d := range ds {
			if i == randShrinkPerClass || i > 0 && !*randShrink {
				break
			}
			var b strings.Builder
			if *randShrink {
				seq, r, m, complete := p.shrink(t, d)
				sig := randSignature(seq, r, m)
				if reported[sig] {
					continue
				}
				reported[sig] = true
				note := ""
				if !complete {
					note = ", shrinking stopped early"
				}
				fmt.Fprintf(&b, "minimal sequence after FLUSHALL (%d commands%s):\n", len(seq), note)
				writeRandSeq(&b, seq, false)
				fmt.Fprintf(&b, "  redis:  %s\n  minikv: %s\n", randShow(r), randShow(m))
			}
			fmt.Fprintf(&b, "%s diverges at seed %d, command %d; rerun with\n", class, d.seed, d.index)
			fmt.Fprintf(&b, "  go test -count=1 -run TestRESPRandomDifferential ./internal/server/ -args -seed %d%s\n", d.seed, genFlags)
			fmt.Fprintf(&b, "  redis:  %s\n  minikv: %s\n", randShow(d.redis), randShow(d.minikv))
			if i == 0 {
				fmt.Fprintf(&b, "full sequence since the last FLUSHALL:\n")
				writeRandSeq(&b, d.seq, true)
			}
			t.Error(b.String())
		}
		if len(ds) > 1 {
			var b strings.Builder
			fmt.Fprintf(&b, "%s: also at", class)
			for _, o := range ds[1:min(len(ds), 21)] {
				fmt.Fprintf(&b, " seed %d cmd %d;", o.seed, o.index)
			}
			t.Log(b.String())
		}
	}
}

// randShow quotes a reply for a failure message, cut after 200 bytes.
func randShow(reply string) string {
	if len(reply) > 200 {
		return fmt.Sprintf("%q...(%d bytes)", reply[:200], len(reply))
	}
	return strconv.Quote(reply)
}

// randReplyKind classifies a reply for -rand.stats: its type, and for
// errors the message without the variable parts.
func randReplyKind(reply string) string {
	switch reply[0] {
	case '-':
		msg := strings.TrimSuffix(reply[1:], "\r\n")
		if i := strings.IndexAny(msg, "'"); i >= 0 {
			msg = msg[:i]
		}
		return "error " + msg
	case '$':
		if reply == "$-1\r\n" {
			return "null"
		}
		if reply == "$0\r\n\r\n" {
			return "empty bulk"
		}
		return "bulk"
	case ':':
		switch n, _ := randInt(reply); {
		case n > 0:
			return "int >0"
		case n < -2:
			return "int <-2"
		default:
			return "int " + strconv.FormatInt(n, 10)
		}
	case '*':
		if reply == "*0\r\n" {
			return "empty array"
		}
		return "array"
	}
	return strings.TrimSuffix(reply, "\r\n")
}

// randSignature tells apart divergences with different causes, roughly:
// the same last command after a minimal sequence of the same length, with
// replies of the same kinds, is taken for the same cause.
func randSignature(seq []randCmd, redis, minikv string) string {
	args := slices.Clone(seq[len(seq)-1].args)
	for i, a := range args {
		if i > 0 && slices.Contains(randKeys, a) {
			args[i] = "<key>"
		}
	}
	return fmt.Sprintf("%d %q %s / %s", len(seq), strings.ToLower(strings.Join(args, " ")),
		randReplyKind(redis), randReplyKind(minikv))
}

func writeRandSeq(b *strings.Builder, seq []randCmd, numbered bool) {
	for i, c := range seq {
		if numbered {
			fmt.Fprintf(b, "%5d  ", i)
		} else {
			b.WriteString("  ")
		}
		if strings.EqualFold(c.args[0], "dbsize") {
			b.WriteString(randLine(randDBSizePrelude) + "; ")
		}
		b.WriteString(randLine(c.args))
		b.WriteByte('\n')
	}
}

// randLine renders a command as redis-cli would take it: arguments
// quoted when they need it, with \xHH for other bytes. Arguments over 64
// bytes are cut, with their length.
func randLine(args []string) string {
	parts := make([]string, len(args))
	for i, a := range args {
		parts[i] = randQuote(a)
	}
	return strings.Join(parts, " ")
}

func randQuote(a string) string {
	suffix := ""
	if len(a) > 64 {
		suffix = fmt.Sprintf("...(%d bytes)", len(a))
		a = a[:40]
	}
	plain := a != "" && suffix == ""
	for i := 0; i < len(a) && plain; i++ {
		plain = a[i] > ' ' && a[i] < 0x7f && a[i] != '"' && a[i] != '\'' && a[i] != '\\'
	}
	if plain {
		return a
	}
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(a); i++ {
		switch c := a[i]; {
		case c == '"' || c == '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		case c == '\n':
			b.WriteString(`\n`)
		case c == '\r':
			b.WriteString(`\r`)
		case c == '\t':
			b.WriteString(`\t`)
		case c < ' ' || c >= 0x7f:
			fmt.Fprintf(&b, `\x%02x`, c)
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte('"')
	return b.String() + suffix
}

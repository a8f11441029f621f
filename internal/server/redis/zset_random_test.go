package redis

// Random differential test of the sorted set commands: seeded random
// command sequences over a few keys and a pool of members large enough
// for big (skiplist) sets go to redis-server 7.0.15 and to MiniKV, and
// every reply must be the same bytes. A sorted set's order is fully
// defined, so nothing is normalised; the generator leaves out what Redis
// answers at random or in table order (ZRANDMEMBER, ZSCAN) and sends the lex
// commands only to keys whose scores are all 0, where Redis defines them.
//
//	go test -count=1 -run TestZSetRandomDifferential ./internal/server/redis -args -zset.seed N

import (
	"flag"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/minikv/minikv/internal/server"
	"github.com/minikv/minikv/internal/store"
)

var (
	zrandSeed  = flag.Uint64("zset.seed", 0, "run only this seed of TestZSetRandomDifferential")
	zrandSeeds = flag.Int("zset.seeds", 6, "seeds of TestZSetRandomDifferential")
	zrandCmds  = flag.Int("zset.cmds", 1500, "commands per seed of TestZSetRandomDifferential")
)

type zgen struct {
	r       *rand.Rand
	members int
}

var zrandKeys = []string{"{z}a", "{z}b", "{z}c", "{z}d"}
var zrandLexKeys = []string{"{z}lex1", "{z}lex2"}

func (g *zgen) key() string {
	if g.r.IntN(20) == 0 {
		return "{z}nope"
	}
	return zrandKeys[g.r.IntN(len(zrandKeys))]
}

func (g *zgen) member() string {
	if g.r.IntN(30) == 0 {
		return strings.Repeat("long", 17) + strconv.Itoa(g.r.IntN(4)) // past zset-max-listpack-value
	}
	return "m" + strconv.Itoa(g.r.IntN(g.members))
}

func (g *zgen) score() string {
	switch g.r.IntN(12) {
	case 0:
		return []string{"inf", "-inf", "+inf", "0", "-0", "1e300", "-1e300", "0.1", "1e17", "3.0", "x", "nan"}[g.r.IntN(12)]
	case 1, 2:
		return strconv.FormatFloat(g.r.NormFloat64()*1000, 'g', -1, 64)
	case 3:
		return strconv.FormatFloat(g.r.Float64(), 'g', 17, 64)
	default:
		return strconv.Itoa(g.r.IntN(50) - 10)
	}
}

func (g *zgen) rangeItem() string {
	s := g.score()
	if s == "x" || s == "nan" {
		s = "5"
	}
	if g.r.IntN(3) == 0 {
		return "(" + s
	}
	return s
}

func (g *zgen) lexItem() string {
	switch g.r.IntN(8) {
	case 0:
		return "-"
	case 1:
		return "+"
	}
	p := "["
	if g.r.IntN(2) == 0 {
		p = "("
	}
	m := g.member()
	return p + m[:min(len(m), 1+g.r.IntN(3))]
}

func (g *zgen) rank() string { return strconv.Itoa(g.r.IntN(400) - 200) }

func (g *zgen) limit(args []string) []string {
	if g.r.IntN(2) == 0 {
		return args
	}
	return append(args, "LIMIT", strconv.Itoa(g.r.IntN(30)-2), strconv.Itoa(g.r.IntN(40)-5))
}

func (g *zgen) maybe(args []string, opt string) []string {
	if g.r.IntN(2) == 0 {
		return append(args, opt)
	}
	return args
}

func (g *zgen) srcKeys() []string {
	n := 1 + g.r.IntN(3)
	out := []string{strconv.Itoa(n)}
	for range n {
		out = append(out, g.key())
	}
	return out
}

func (g *zgen) next() []string {
	k := g.key()
	switch g.r.IntN(30) {
	case 0, 1, 2, 3, 4, 5:
		args := []string{"ZADD", k}
		for _, o := range []string{"NX", "XX", "GT", "LT", "CH", "INCR"} {
			if g.r.IntN(8) == 0 {
				args = append(args, o)
			}
		}
		for range 1 + g.r.IntN(40) {
			args = append(args, g.score(), g.member())
		}
		return args
	case 6:
		return []string{"ZINCRBY", k, g.score(), g.member()}
	case 7:
		return []string{"ZREM", k, g.member(), g.member(), g.member()}
	case 8:
		return []string{"ZCARD", k}
	case 9:
		return []string{"ZSCORE", k, g.member()}
	case 10:
		return []string{"ZMSCORE", k, g.member(), g.member()}
	case 11:
		return []string{[]string{"ZRANK", "ZREVRANK"}[g.r.IntN(2)], k, g.member()}
	case 12:
		return []string{"ZCOUNT", k, g.rangeItem(), g.rangeItem()}
	case 13:
		return g.maybe([]string{"ZRANGE", k, g.rank(), g.rank()}, "WITHSCORES")
	case 14:
		args := []string{"ZRANGE", k, g.rangeItem(), g.rangeItem(), "BYSCORE"}
		args = g.maybe(args, "REV")
		return g.limit(g.maybe(args, "WITHSCORES"))
	case 15:
		cmd := []string{"ZRANGEBYSCORE", "ZREVRANGEBYSCORE"}[g.r.IntN(2)]
		return g.limit(g.maybe([]string{cmd, k, g.rangeItem(), g.rangeItem()}, "WITHSCORES"))
	case 16:
		return g.maybe([]string{"ZREVRANGE", k, g.rank(), g.rank()}, "WITHSCORES")
	case 17:
		return []string{"ZREMRANGEBYRANK", k, g.rank(), g.rank()}
	case 18:
		return []string{"ZREMRANGEBYSCORE", k, g.rangeItem(), g.rangeItem()}
	case 19:
		args := []string{[]string{"ZPOPMIN", "ZPOPMAX"}[g.r.IntN(2)], k}
		if g.r.IntN(2) == 0 {
			args = append(args, strconv.Itoa(g.r.IntN(12)-1))
		}
		return args
	case 20:
		lk := zrandLexKeys[g.r.IntN(len(zrandLexKeys))]
		args := []string{"ZADD", lk}
		for range 1 + g.r.IntN(30) {
			args = append(args, "0", g.member())
		}
		return args
	case 21:
		lk := zrandLexKeys[g.r.IntN(len(zrandLexKeys))]
		switch g.r.IntN(4) {
		case 0:
			return []string{"ZLEXCOUNT", lk, g.lexItem(), g.lexItem()}
		case 1:
			return []string{"ZREMRANGEBYLEX", lk, g.lexItem(), g.lexItem()}
		case 2:
			return g.limit([]string{"ZRANGE", lk, g.lexItem(), g.lexItem(), "BYLEX"})
		default:
			return g.limit([]string{[]string{"ZRANGEBYLEX", "ZREVRANGEBYLEX"}[g.r.IntN(2)], lk, g.lexItem(), g.lexItem()})
		}
	case 22, 23:
		cmd := []string{"ZUNION", "ZINTER", "ZDIFF", "ZUNIONSTORE", "ZINTERSTORE", "ZDIFFSTORE"}[g.r.IntN(6)]
		args := []string{cmd}
		if strings.HasSuffix(cmd, "STORE") {
			args = append(args, g.key())
		}
		src := g.srcKeys()
		args = append(args, src...)
		if cmd != "ZDIFF" && cmd != "ZDIFFSTORE" {
			if g.r.IntN(2) == 0 {
				args = append(args, "WEIGHTS")
				for range src[1:] {
					args = append(args, []string{"1", "2", "-1", "0.5", "0", "inf"}[g.r.IntN(6)])
				}
			}
			if g.r.IntN(2) == 0 {
				args = append(args, "AGGREGATE", []string{"SUM", "MIN", "MAX"}[g.r.IntN(3)])
			}
		}
		if !strings.HasSuffix(cmd, "STORE") {
			args = g.maybe(args, "WITHSCORES")
		}
		return args
	case 24:
		return g.limit(append([]string{"ZINTERCARD"}, g.srcKeys()...))
	case 25:
		args := []string{"ZRANGESTORE", g.key(), k}
		switch g.r.IntN(3) {
		case 0:
			args = append(args, g.rank(), g.rank())
		case 1:
			args = g.limit(append(args, g.rangeItem(), g.rangeItem(), "BYSCORE"))
		default:
			args = append(args, g.rank(), g.rank(), "REV")
		}
		return args
	case 26:
		args := append([]string{"ZMPOP"}, g.srcKeys()...)
		args = append(args, []string{"MIN", "MAX"}[g.r.IntN(2)])
		if g.r.IntN(2) == 0 {
			args = append(args, "COUNT", strconv.Itoa(1+g.r.IntN(10)))
		}
		return args
	case 27:
		return []string{"ZRANGE", k, "0", "-1", "WITHSCORES"}
	default:
		return []string{"ZRANGE", zrandLexKeys[g.r.IntN(len(zrandLexKeys))], g.rank(), g.rank()}
	}
}

func TestZSetRandomDifferential(t *testing.T) {
	redisAddr := startRedisServer(t)
	rs := startRESP(t, server.Config{}, store.Config{MaxItemSize: 1 << 20})
	p := randPair{redis: dialRESP(t, redisAddr), minikv: dialRESP(t, rs.respAddr)}
	seeds := []uint64{}
	if *zrandSeed != 0 {
		seeds = append(seeds, *zrandSeed)
	} else {
		for i := range *zrandSeeds {
			seeds = append(seeds, uint64(i+1))
		}
	}
	for _, seed := range seeds {
		p.flush(t)
		g := &zgen{r: rand.New(rand.NewPCG(seed, 0x25e7)), members: []int{60, 300, 1000}[seed%3]}
		var hist []string
		for i := range *zrandCmds {
			args := g.next()
			hist = append(hist, randLine(args))
			r, m := p.exec(args)
			if r != m {
				d := 0
				for d < min(len(r), len(m)) && r[d] == m[d] {
					d++
				}
				from := max(0, len(hist)-15)
				t.Errorf("first difference at byte %d: redis %q, minikv %q", d, r[max(0, d-80):min(len(r), d+40)], m[max(0, d-80):min(len(m), d+40)])
				t.Fatalf("seed %d command %d: %s\nredis  %q\nminikv %q\nlast commands:\n%s", seed, i, randLine(args),
					clip(r), clip(m), strings.Join(hist[from:], "\n"))
			}
		}
		// The end state, key by key.
		for _, k := range append(append([]string{}, zrandKeys...), zrandLexKeys...) {
			if r, m := p.exec([]string{"ZRANGE", k, "0", "-1", "WITHSCORES"}); r != m {
				t.Fatalf("seed %d: final %s differs", seed, k)
			}
		}
	}
}

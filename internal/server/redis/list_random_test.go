package redis

// Random differential test of the list commands: seeded random sequences
// of list commands (with wrong arguments now and then, and a string key
// for WRONGTYPE) go to redis-server 7.0 and to MiniKV, and every reply
// must be the same bytes: a list's order is defined, so nothing is
// normalised. Bulk pushes of up to a few hundred elements, some of them
// long, take lists well past the listpack limit, so the quicklist's node
// splits, merges and range deletes are compared too. A divergence is
// shrunk to a minimal sequence (randPair.shrink) and reported with its
// seed:
//
//	go test -count=1 -run TestRESPListRandomDifferential ./internal/server/redis/ -args -seed N

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/minikv/minikv/internal/server"
	"github.com/minikv/minikv/internal/store"
)

// listRandKeys are the keys: three lists and a string.
var listRandKeys = []string{"l1", "l2", "l3", "str"}

// listRandElems are the short elements, so that LREM, LPOS and LINSERT
// find what the pushes put in.
var listRandElems = []string{"a", "b", "c", "1", "2", "-3", "10", "", "x y", "0", "01", "9223372036854775807", "bin\x00\xff"}

type listGen struct{ g *randGen }

func (lg listGen) key() string {
	if lg.g.chance(0.04) {
		return "str"
	}
	return lg.g.pick(listRandKeys[:3])
}

func (lg listGen) elem() string {
	g := lg.g
	switch n := g.r.IntN(100); {
	case n < 80:
		return g.pick(listRandElems)
	case n < 95:
		return g.letters(5+g.r.IntN(120), "abcdef")
	default:
		return strings.Repeat(g.letters(1, "xyz"), 1000+g.r.IntN(9000))
	}
}

func (lg listGen) elems(max int) []string {
	n := 1 + lg.g.r.IntN(max)
	out := make([]string, n)
	for i := range out {
		out[i] = lg.elem()
	}
	return out
}

// index is a list index: mostly within a few hundred of either end,
// sometimes an edge or a non-number.
func (lg listGen) index() string {
	g := lg.g
	switch n := g.r.IntN(100); {
	case n < 50:
		return strconv.Itoa(g.r.IntN(21) - 10)
	case n < 90:
		return strconv.Itoa(g.r.IntN(1200) - 600)
	}
	return g.pick(randEdgeInts)
}

// lsetIndex is an index for LSET: index's, but never an integer outside
// 32 bits, which Redis 7.2.4 cuts to its low 32 bits and so overwrites an
// element the index does not name (docs/redis.md, difference "LSET with
// an index past 32 bits is refused"; pinned by the session "lset index
// past int").
func (lg listGen) lsetIndex() string {
	for {
		s := lg.index()
		if v, err := strconv.ParseInt(s, 10, 64); err != nil || v == int64(int32(v)) {
			return s
		}
	}
}

func (lg listGen) side() string {
	return lg.g.word(lg.g.pick([]string{"LEFT", "RIGHT", "LEFT", "RIGHT", "UP"}))
}

func (lg listGen) count() string {
	g := lg.g
	if g.chance(0.9) {
		return strconv.Itoa(g.r.IntN(30))
	}
	return g.pick([]string{"-1", "x", "0", "1000000", "9223372036854775807"})
}

// listRandKinds are the list command classes with their weights.
var listRandKinds = []struct {
	class  string
	weight int
	gen    func(lg listGen) []string
}{
	{"LPUSH", 8, func(lg listGen) []string { return append([]string{lg.key()}, lg.elems(4)...) }},
	{"RPUSH", 8, func(lg listGen) []string { return append([]string{lg.key()}, lg.elems(4)...) }},
	{"RPUSH-BULK", 4, func(lg listGen) []string { return append([]string{lg.key()}, lg.elems(300)...) }},
	{"LPUSHX", 2, func(lg listGen) []string { return append([]string{lg.key()}, lg.elems(3)...) }},
	{"RPUSHX", 2, func(lg listGen) []string { return append([]string{lg.key()}, lg.elems(3)...) }},
	{"LPOP", 4, func(lg listGen) []string { return lg.optCount() }},
	{"RPOP", 4, func(lg listGen) []string { return lg.optCount() }},
	{"LLEN", 3, func(lg listGen) []string { return []string{lg.key()} }},
	{"LINDEX", 5, func(lg listGen) []string { return []string{lg.key(), lg.index()} }},
	{"LSET", 4, func(lg listGen) []string { return []string{lg.key(), lg.lsetIndex(), lg.elem()} }},
	{"LRANGE", 6, func(lg listGen) []string { return []string{lg.key(), lg.index(), lg.index()} }},
	{"LTRIM", 2, func(lg listGen) []string { return []string{lg.key(), lg.index(), lg.index()} }},
	{"LREM", 4, func(lg listGen) []string {
		return []string{lg.key(), lg.g.pick([]string{"0", "1", "2", "-1", "-2", "5", "-5", "x"}), lg.elem()}
	}},
	{"LINSERT", 4, func(lg listGen) []string {
		return []string{lg.key(), lg.g.word(lg.g.pick([]string{"BEFORE", "AFTER", "BEFORE", "AFTER", "NEAR"})), lg.elem(), lg.elem()}
	}},
	{"LPOS", 5, func(lg listGen) []string {
		g := lg.g
		args := []string{lg.key(), lg.elem()}
		var groups [][]string
		if g.chance(0.4) {
			groups = append(groups, []string{g.word("RANK"), g.pick([]string{"1", "2", "3", "-1", "-2", "-4", "0", "x"})})
		}
		if g.chance(0.4) {
			groups = append(groups, []string{g.word("COUNT"), g.pick([]string{"0", "1", "2", "5", "-1"})})
		}
		if g.chance(0.3) {
			groups = append(groups, []string{g.word("MAXLEN"), g.pick([]string{"0", "1", "3", "10", "100", "-1"})})
		}
		if g.chance(0.03) {
			groups = append(groups, []string{"FOO"})
		}
		g.r.Shuffle(len(groups), func(i, j int) { groups[i], groups[j] = groups[j], groups[i] })
		for _, gr := range groups {
			args = append(args, gr...)
		}
		return args
	}},
	{"LMOVE", 4, func(lg listGen) []string { return []string{lg.key(), lg.key(), lg.side(), lg.side()} }},
	{"RPOPLPUSH", 2, func(lg listGen) []string { return []string{lg.key(), lg.key()} }},
	{"LMPOP", 3, func(lg listGen) []string {
		g := lg.g
		n := 1 + g.r.IntN(3)
		args := []string{strconv.Itoa(n)}
		if g.chance(0.03) {
			args[0] = g.pick([]string{"0", "-1", "x", "9"})
		}
		for range n {
			args = append(args, lg.key())
		}
		args = append(args, lg.side())
		if g.chance(0.5) {
			args = append(args, g.word("COUNT"), g.pick([]string{"1", "2", "5", "50", "0", "-1"}))
		}
		return args
	}},
	{"DEL", 1, func(lg listGen) []string { return []string{lg.key()} }},
	{"TYPE", 1, func(lg listGen) []string { return []string{lg.key()} }},
	{"SET", 1, func(lg listGen) []string { return []string{"str", lg.elem()} }},
}

func (lg listGen) optCount() []string {
	if lg.g.chance(0.5) {
		return []string{lg.key()}
	}
	return []string{lg.key(), lg.count()}
}

// next returns the next command; 2% get one argument fewer or more.
func (lg listGen) next(total int) randCmd {
	g := lg.g
	n := g.r.IntN(total)
	k := listRandKinds[0]
	for _, k = range listRandKinds {
		if n < k.weight {
			break
		}
		n -= k.weight
	}
	name := strings.TrimSuffix(k.class, "-BULK")
	args := append([]string{g.word(name)}, k.gen(lg)...)
	if g.chance(0.02) {
		if len(args) > 1 && g.chance(0.5) {
			args = args[:len(args)-1]
		} else {
			args = append(args, "x")
		}
	}
	return randCmd{args: args, class: k.class}
}

func TestRESPListRandomDifferential(t *testing.T) {
	redisAddr := startRedisServer(t)
	rs := startRESP(t, server.Config{}, store.Config{MaxItemSize: 1 << 20})
	runListRandom(t, redisAddr, rs.respAddr)
}

// runListRandom runs TestRESPListRandomDifferential's seeds against the
// two servers.
func runListRandom(t *testing.T, redisAddr, minikvAddr string) {
	p := randPair{redis: dialRESP(t, redisAddr), minikv: dialRESP(t, minikvAddr)}

	seeds := []uint64{}
	switch {
	case *randSeed != 0:
		seeds = append(seeds, *randSeed)
	default:
		n := *randSeeds
		if n == 0 {
			n = 12
			if *randSoak {
				n = randSoakSeeds
			}
		}
		for i := range n {
			seeds = append(seeds, uint64(i)+1)
		}
	}
	total := 0
	for _, k := range listRandKinds {
		total += k.weight
	}
	cmds := *randCmds
	failures, big := 0, 0
	for _, seed := range seeds {
		lg := listGen{g: newRandGen(seed, nil)}
		p.flush(t)
		var seq []randCmd
		for i := range cmds {
			c := lg.next(total)
			seq = append(seq, c)
			r, m := p.exec(c.args)
			if r == m {
				continue
			}
			failures++
			var b strings.Builder
			fmt.Fprintf(&b, "%s diverges at seed %d, command %d; rerun with\n", c.class, seed, i)
			fmt.Fprintf(&b, "  go test -count=1 -run TestRESPListRandomDifferential ./internal/server/redis/ -args -seed %d\n", seed)
			fmt.Fprintf(&b, "  redis:  %s\n  minikv: %s\n", randShow(r), randShow(m))
			if *randShrink {
				mseq, mr, mm, complete := p.shrink(t, randDivergence{seed: seed, index: i, seq: seq, redis: r, minikv: m})
				note := ""
				if !complete {
					note = ", shrinking stopped early"
				}
				fmt.Fprintf(&b, "minimal sequence after FLUSHALL (%d commands%s):\n", len(mseq), note)
				writeRandSeq(&b, mseq, false)
				fmt.Fprintf(&b, "  redis:  %s\n  minikv: %s\n", randShow(mr), randShow(mm))
			}
			t.Error(b.String())
			if failures >= 3 {
				t.FailNow()
			}
			p.flush(t)
			seq = nil
		}
		// Coverage: how many of the lists ended the seed big.
		for _, k := range listRandKeys[:3] {
			p.minikv.Send(multibulk("OBJECT", "ENCODING", k))
			if p.minikv.Reply() == "$9\r\nquicklist\r\n" {
				big++
			}
		}
	}
	t.Logf("%d seeds, %d commands each; %d lists ended as quicklists", len(seeds), cmds, big)
	if big == 0 && len(seeds) > 3 {
		t.Error("no list grew past the listpack limit: the quicklist went untested")
	}
}

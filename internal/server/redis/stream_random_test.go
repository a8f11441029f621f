package redis

// Random differential test of the streams and their consumer groups: a
// seeded random sequence of XADD (explicit increasing IDs, now and then a
// stale one, "ms-*", and exact MAXLEN/MINID trimming), XDEL, XTRIM,
// XRANGE, XREVRANGE, XLEN, XGROUP CREATE/SETID/DESTROY/CREATECONSUMER/
// DELCONSUMER, XREADGROUP (new entries and history), XACK, XPENDING
// (summary and extended), XCLAIM and XAUTOCLAIM (min-idle-time 0, JUSTID),
// XINFO GROUPS and DEL goes to redis-server 7.2.4, which is the model,
// and to MiniKV; every reply must be the same bytes, except XPENDING's
// idle times (streamMask). Each seed is logged; rerun one with
//
//	go test -count=1 -run TestStreamRandomDifferential ./internal/server/redis -args -stream.seed N

import (
	"flag"
	"math/rand/v2"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

var (
	streamRandSeed  = flag.Uint64("stream.seed", 0, "run only this seed of TestStreamRandomDifferential")
	streamRandSeeds = flag.Int("stream.seeds", 4, "seeds of TestStreamRandomDifferential")
	streamRandCmds  = flag.Int("stream.cmds", 1500, "commands per seed of TestStreamRandomDifferential")
)

var streamRandKeys = []string{"{x}a", "{x}b"}

// streamGen makes the commands. It follows the IDs redis-server handed
// out (note) so that most XADDs are valid and most IDs named exist.
type streamGen struct {
	r         *rand.Rand
	top       map[string][2]uint64 // the last ID XADD made, per key
	ids       map[string][]string  // every ID XADD made, per key
	delivered map[string][]string  // IDs XREADGROUP gave, per "key group"
}

// busyGroup is a group of key that XREADGROUP served, most of the time.
func (g *streamGen) busyGroup(key string) string {
	if g.r.IntN(4) != 0 {
		for _, i := range g.r.Perm(3) {
			if grp := []string{"g1", "g2", "g3"}[i]; len(g.delivered[key+" "+grp]) > 0 {
				return grp
			}
		}
	}
	return g.group()
}

// pendingID is an ID XREADGROUP gave the group of key, most of the time
// (XACK and XCLAIM then find it pending), else any ID of key.
func (g *streamGen) pendingID(key, group string) string {
	if d := g.delivered[key+" "+group]; len(d) > 0 && g.r.IntN(10) < 7 {
		return d[max(0, len(d)-1-g.r.IntN(8))]
	}
	return g.id(key)
}

func (g *streamGen) key() string { return streamRandKeys[g.r.IntN(len(streamRandKeys))] }

func (g *streamGen) group() string { return []string{"g1", "g2", "g3"}[g.r.IntN(3)] }

func (g *streamGen) consumer() string { return []string{"alice", "bob", "carol", "dave"}[g.r.IntN(4)] }

// id is an ID of key: mostly one XADD made (maybe deleted or trimmed
// since), most often a recent one, else one near them, now and then
// incomplete.
func (g *streamGen) id(key string) string {
	ids := g.ids[key]
	switch n := g.r.IntN(10); {
	case len(ids) > 0 && n < 6: // a recent one: most likely still there and pending
		return ids[max(0, len(ids)-1-g.r.IntN(12))]
	case len(ids) > 0 && n < 8:
		return ids[g.r.IntN(len(ids))]
	}
	top := g.top[key]
	ms := uint64(g.r.IntN(int(top[0]) + 3))
	if g.r.IntN(3) == 0 {
		return strconv.FormatUint(ms, 10)
	}
	return strconv.FormatUint(ms, 10) + "-" + strconv.Itoa(g.r.IntN(4))
}

// bound is a range bound: "-", "+", an ID, or an exclusive one.
func (g *streamGen) bound(key string, low bool) string {
	switch g.r.IntN(6) {
	case 0:
		if low {
			return "-"
		}
		return "+"
	case 1:
		return "(" + g.id(key)
	default:
		return g.id(key)
	}
}

func (g *streamGen) nextID(key string) string {
	top := g.top[key]
	switch n := g.r.IntN(20); {
	case n == 0: // stale: equal to or below the top
		return strconv.FormatUint(top[0], 10) + "-" + strconv.FormatUint(top[1], 10)
	case n < 3:
		return strconv.FormatUint(top[0], 10) + "-*"
	case n < 8:
		return strconv.FormatUint(top[0], 10) + "-" + strconv.FormatUint(top[1]+1+uint64(g.r.IntN(3)), 10)
	default:
		return strconv.FormatUint(top[0]+1+uint64(g.r.IntN(3)), 10) + "-" + strconv.Itoa(g.r.IntN(3))
	}
}

var streamRandIDs = regexp.MustCompile(`\$[0-9]+\r\n([0-9]+-[0-9]+)\r\n`)

// note records the ID a successful XADD returned and the IDs XREADGROUP
// delivered.
func (g *streamGen) note(args []string, reply string) {
	if strings.EqualFold(args[0], "XGROUP") && strings.EqualFold(args[1], "DESTROY") {
		delete(g.delivered, args[2]+" "+args[3])
	}
	if strings.EqualFold(args[0], "XREADGROUP") && strings.HasPrefix(reply, "*1") {
		k := args[len(args)-2] + " " + args[2]
		for _, m := range streamRandIDs.FindAllStringSubmatch(reply, -1) {
			g.delivered[k] = append(g.delivered[k], m[1])
		}
		return
	}
	if !strings.EqualFold(args[0], "XADD") || !strings.HasPrefix(reply, "$") || reply == "$-1\r\n" {
		return
	}
	id := strings.Split(reply, "\r\n")[1]
	ms, seq, _ := strings.Cut(id, "-")
	a, _ := strconv.ParseUint(ms, 10, 64)
	b, _ := strconv.ParseUint(seq, 10, 64)
	g.top[args[1]] = [2]uint64{a, b}
	g.ids[args[1]] = append(g.ids[args[1]], id)
}

func (g *streamGen) next() []string {
	k := g.key()
	count := func() []string {
		if g.r.IntN(2) == 0 {
			return []string{"COUNT", strconv.Itoa(g.r.IntN(6))}
		}
		return nil
	}
	switch n := g.r.IntN(100); {
	case n < 28:
		args := []string{"XADD", k}
		switch g.r.IntN(12) {
		case 0:
			args = append(args, "MAXLEN", strconv.Itoa(g.r.IntN(12)))
		case 1:
			args = append(args, "MAXLEN", "=", strconv.Itoa(g.r.IntN(12)))
		case 2:
			args = append(args, "MINID", g.id(k))
		case 3:
			args = append(args, "NOMKSTREAM")
		}
		args = append(args, g.nextID(k))
		for i := range 1 + g.r.IntN(3) {
			args = append(args, "f"+strconv.Itoa(i), strconv.Itoa(g.r.IntN(1000)))
		}
		return args
	case n < 32:
		args := []string{"XDEL", k}
		for range 1 + g.r.IntN(3) {
			args = append(args, g.id(k))
		}
		return args
	case n < 35:
		if g.r.IntN(2) == 0 {
			return []string{"XTRIM", k, "MAXLEN", strconv.Itoa(g.r.IntN(15))}
		}
		return []string{"XTRIM", k, "MINID", g.id(k)}
	case n < 42:
		return append([]string{"XRANGE", k, g.bound(k, true), g.bound(k, false)}, count()...)
	case n < 47:
		return append([]string{"XREVRANGE", k, g.bound(k, false), g.bound(k, true)}, count()...)
	case n < 50:
		return []string{"XLEN", k}
	case n < 54:
		args := []string{"XGROUP", "CREATE", k, g.group(), []string{"0", "$", g.id(k)}[g.r.IntN(3)]}
		if g.r.IntN(3) == 0 {
			args = append(args, "MKSTREAM")
		}
		return args
	case n < 56:
		return []string{"XGROUP", "SETID", k, g.group(), []string{"0", "$", g.id(k)}[g.r.IntN(3)]}
	case n < 57:
		if g.r.IntN(3) == 0 {
			return []string{"XGROUP", "DESTROY", k, g.group()}
		}
		return []string{"XGROUP", "CREATE", k, g.group(), "$", "MKSTREAM"}
	case n < 58:
		return []string{"XGROUP", []string{"CREATECONSUMER", "DELCONSUMER"}[g.r.IntN(2)], k, g.group(), g.consumer()}
	case n < 70:
		args := append([]string{"XREADGROUP", "GROUP", g.group(), g.consumer()}, count()...)
		if g.r.IntN(6) == 0 {
			args = append(args, "NOACK")
		}
		id := ">"
		if g.r.IntN(3) == 0 {
			id = []string{"0", g.id(k)}[g.r.IntN(2)]
		}
		return append(args, "STREAMS", k, id)
	case n < 78:
		grp := g.busyGroup(k)
		args := []string{"XACK", k, grp}
		for range 1 + g.r.IntN(3) {
			args = append(args, g.pendingID(k, grp))
		}
		return args
	case n < 84:
		if g.r.IntN(3) == 0 {
			return []string{"XPENDING", k, g.group()}
		}
		args := []string{"XPENDING", k, g.group(), g.bound(k, true), g.bound(k, false), strconv.Itoa(g.r.IntN(8))}
		if g.r.IntN(3) == 0 {
			args = append(args, g.consumer())
		}
		return args
	case n < 90:
		grp := g.busyGroup(k)
		args := []string{"XCLAIM", k, grp, g.consumer(), "0"}
		for range 1 + g.r.IntN(3) {
			args = append(args, g.pendingID(k, grp))
		}
		args = append(args, "JUSTID")
		if g.r.IntN(4) == 0 {
			args = append(args, "RETRYCOUNT", strconv.Itoa(g.r.IntN(5)))
		}
		return args
	case n < 94:
		return append([]string{"XAUTOCLAIM", k, g.group(), g.consumer(), "0", g.bound(k, true), "COUNT", strconv.Itoa(1 + g.r.IntN(5))},
			[]string{"JUSTID"}[:g.r.IntN(2)]...)
	case n < 97:
		return []string{"XINFO", "GROUPS", k}
	case n < 98:
		return []string{"XREAD", "COUNT", strconv.Itoa(1 + g.r.IntN(5)), "STREAMS", k, g.id(k)}
	default:
		if g.r.IntN(8) == 0 {
			return []string{"DEL", k}
		}
		return []string{"XLEN", k}
	}
}

// TestStreamRandomDifferential holds MiniKV to redis-server 7.2.4 on the
// random sequences, consumer counts and all (Redis 7.2, as MiniKV, makes
// a consumer on every XREADGROUP, XCLAIM and XAUTOCLAIM).
func TestStreamRandomDifferential(t *testing.T) {
	runStreamRandom(t, startRedisServer(t), streamMask)
}

// runStreamRandom runs the seeds' random sequences on the reference
// server at refAddr and on MiniKV, comparing each reply after mask.
func runStreamRandom(t *testing.T, refAddr string, mask func(argv []string, reply string) string) {
	p := randPair{redis: dialRESP(t, refAddr), minikv: dialRESP(t, streamPeer(t))}
	var seeds []uint64
	if *streamRandSeed != 0 {
		seeds = append(seeds, *streamRandSeed)
	} else {
		for i := range *streamRandSeeds {
			seeds = append(seeds, uint64(i+1))
		}
	}
	for _, seed := range seeds {
		t.Logf("seed %d", seed)
		p.flush(t)
		g := &streamGen{r: rand.New(rand.NewPCG(seed, 0x57e)), top: map[string][2]uint64{}, ids: map[string][]string{},
			delivered: map[string][]string{}}
		var hist []string
		replies := map[byte]int{}
		outcomes := map[string]int{} // with -stream.log
		check := func(i int, args []string) string {
			hist = append(hist, randLine(args))
			r, m := p.exec(args)
			lower := append([]string{strings.ToLower(args[0])}, args[1:]...)
			if mask(lower, r) != mask(lower, m) {
				from := max(0, len(hist)-15)
				t.Fatalf("seed %d command %d: %s\nredis  %q\nminikv %q\nlast commands:\n%s", seed, i, randLine(args), clip(r), clip(m),
					strings.Join(hist[from:], "\n"))
			}
			replies[r[0]]++
			if *streamLog {
				what := strings.ToLower(args[0])
				if strings.HasPrefix(r, "-") {
					what += " " + strings.TrimSpace(r)
				} else if len(r) < 8 {
					what += " " + strings.TrimSpace(r)
				}
				outcomes[what]++
			}
			return r
		}
		for i := range *streamRandCmds {
			args := g.next()
			g.note(args, check(i, args))
			if strings.EqualFold(args[0], "DEL") {
				delete(g.top, args[1])
				delete(g.ids, args[1])
				for _, grp := range []string{"g1", "g2", "g3"} {
					delete(g.delivered, args[1]+" "+grp)
				}
			}
		}
		for _, k := range streamRandKeys {
			check(-1, []string{"XRANGE", k, "-", "+"})
			check(-1, []string{"XINFO", "GROUPS", k})
			for _, grp := range []string{"g1", "g2", "g3"} {
				check(-1, []string{"XPENDING", k, grp, "-", "+", "1000"})
			}
		}
		// A sequence of errors alone compares nothing much: the seed must
		// have made entries, groups and pending entries.
		if replies['*'] < *streamRandCmds/10 || replies['$'] < *streamRandCmds/10 || replies['-'] > *streamRandCmds/2 {
			t.Errorf("seed %d: redis-server's replies by type %s: the generator makes too few valid commands", seed, replyTypes(replies))
		}
		t.Logf("seed %d: replies by type %s", seed, replyTypes(replies))
		for what, n := range outcomes {
			t.Logf("%5d %s", n, what)
		}
	}
}

// replyTypes shows counts of replies by their first byte.
func replyTypes(n map[byte]int) string {
	var b strings.Builder
	for _, c := range []byte("+-:$*_%") {
		if n[c] > 0 {
			b.WriteString(string(c) + strconv.Itoa(n[c]) + " ")
		}
	}
	return b.String()
}

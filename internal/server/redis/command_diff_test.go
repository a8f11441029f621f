package redis

import (
	"bufio"
	"math/rand/v2"
	"net"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/minikv/minikv/internal/server"
	"github.com/minikv/minikv/internal/store"
)

// COMMAND against redis-server: COMMAND INFO and COMMAND DOCS of every
// command MiniKV serves are Redis's (subcommand lists aside: MiniKV lists
// the ones it serves); COMMAND LIST's filters pick the same commands
// among those MiniKV serves; COMMAND GETKEYS and GETKEYSANDFLAGS give
// Redis's keys and flags for calls of every command, built from its
// COMMAND DOCS arguments (required ones only, and every optional one,
// with each choice's first and last alternative).

func init() {
	respSessions = append(respSessions, inRESP2And3([]respSession{
		{name: "command help and errors", in: mb("COMMAND", "HELP") + mb("COMMAND", "GETKEYSANDFLAGS") + mb("COMMAND", "GETKEYSANDFLAGS", "get") +
			mb("COMMAND", "GETKEYSANDFLAGS", "foo", "a") + mb("COMMAND", "GETKEYSANDFLAGS", "ping", "a") + mb("COMMAND", "GETKEYSANDFLAGS", "get", "a", "b") +
			mb("COMMAND", "GETKEYSANDFLAGS", "client", "foo") + mb("COMMAND", "GETKEYSANDFLAGS", "zunionstore", "d", "x", "a") +
			mb("COMMAND", "GETKEYSANDFLAGS", "zunionstore", "d", "2abc", "a", "b") + mb("COMMAND", "GETKEYS", "zunionstore", "d", "-1", "a") +
			mb("COMMAND", "GETKEYSANDFLAGS", "set", "k", "v", "GET") + mb("COMMAND", "GETKEYSANDFLAGS", "set", "k", "v", "EX", "1") +
			mb("COMMAND", "GETKEYSANDFLAGS", "sort", "k", "LIMIT", "0", "1", "STORE", "d", "BY", "x", "STORE", "e") +
			mb("COMMAND", "GETKEYSANDFLAGS", "bitfield", "k", "GET", "u8", "0", "OVERFLOW", "WRAP") +
			mb("COMMAND", "GETKEYSANDFLAGS", "bitfield", "k", "GET", "u8") + mb("COMMAND", "GETKEYSANDFLAGS", "bitfield", "k", "INCRBY", "u8", "0", "1") +
			mb("COMMAND", "GETKEYSANDFLAGS", "lmpop", "2", "a", "b", "LEFT") + mb("COMMAND", "GETKEYSANDFLAGS", "lmpop", "3", "a", "b", "LEFT") +
			mb("COMMAND", "GETKEYSANDFLAGS", "mset", "a", "1", "b", "2") + mb("COMMAND", "GETKEYSANDFLAGS", "lmove", "a", "b", "LEFT", "RIGHT") +
			mb("COMMAND", "INFO", "get", "nosuch", "client|list", "client|nosuch", "get|x", "client|list|x") +
			mb("COMMAND", "DOCS", "nosuch", "config|get") + mb("COMMAND", "LIST", "FILTERBY") + mb("COMMAND", "LIST", "FILTERBY", "foo", "x") +
			mb("COMMAND", "LIST", "FILTERBY", "aclcat") + mb("COMMAND", "LIST", "FILTERBY", "module", "x") + mb("COMMAND", "LIST", "x") +
			mb("COMMAND", "LIST", "FILTERBY", "aclcat", "nosuchcat") + mb("COMMAND", "LIST", "FILTERBY", "pattern", "nosuch*") +
			mb("COMMAND", "LIST", "FILTERBY", "aclcat", "hyperloglog", "FILTERBY", "pattern", "pfc*")},
	})...)
}

// inRESP2And3 is sessions as given, then each again after HELLO 3.
func inRESP2And3(sessions []respSession) []respSession {
	var out []respSession
	for _, s := range sessions {
		out = append(out, s, respSession{name: s.name + " resp3", skip: 1, in: mb("HELLO", "3") + s.in})
	}
	return out
}

// servedCommands lists every command and subcommand MiniKV serves.
func servedCommands() []*respCommand {
	var out []*respCommand
	for _, c := range sortedCommands() {
		out = append(out, c)
		out = append(out, c.subs...)
	}
	return out
}

// TestCommandTableMatchesRedis checks the table against Redis's metadata:
// every command Redis 7.2 has carries it, and its arity and legacy key
// range (which cluster routing and prefetching read) are Redis's.
func TestCommandTableMatchesRedis(t *testing.T) {
	for _, c := range servedCommands() {
		if c.meta == nil {
			if c.name != "client|setinfo" {
				t.Errorf("%s: no Redis 7.2 metadata (a command Redis 7.2 lacks must be listed here)", c.name)
			}
			continue
		}
		info := c.meta.info.elems
		if int(info[1].num) != c.arity {
			t.Errorf("%s: arity %d, Redis %d", c.name, c.arity, info[1].num)
		}
		if c.keysOf == nil && (int(info[3].num) != c.firstKey || int(info[4].num) != c.lastKey || int(info[5].num) != c.step) {
			t.Errorf("%s: keys %d %d %d, Redis %d %d %d", c.name, c.firstKey, c.lastKey, c.step, info[3].num, info[4].num, info[5].num)
		}
	}
}

// cmdConn is a RESP connection for the COMMAND comparisons.
type cmdConn struct {
	nc net.Conn
	br *bufio.Reader
}

func dialCmd(t *testing.T, addr string, resp3 bool) *cmdConn {
	t.Helper()
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	c := &cmdConn{nc, bufio.NewReader(nc)}
	if resp3 {
		c.do(t, "HELLO", "3")
	}
	return c
}

func (c *cmdConn) do(t *testing.T, args ...string) string {
	t.Helper()
	_ = c.nc.SetDeadline(time.Now().Add(20 * time.Second))
	if _, err := c.nc.Write([]byte(multibulk(args...))); err != nil {
		t.Fatal(err)
	}
	r, err := readRESPReply(c.br)
	if err != nil {
		t.Fatalf("%q: %v", args, err)
	}
	return r
}

func TestCommandInfoDocsDifferential(t *testing.T) {
	redisAddr := startRedisServer(t)
	rs := startRESP(t, server.Config{}, store.Config{})
	for _, resp3 := range []bool{false, true} {
		r, m := dialCmd(t, redisAddr, resp3), dialCmd(t, rs.respAddr, resp3)
		for _, c := range servedCommands() {
			if c.meta == nil {
				continue
			}
			for _, sub := range []string{"INFO", "DOCS"} {
				want, got := r.do(t, "COMMAND", sub, c.name), m.do(t, "COMMAND", sub, c.name)
				if len(c.subs) > 0 || c.name == "command" {
					want, got = dropSubcommands(t, want, sub), dropSubcommands(t, got, sub)
				}
				if got != want {
					t.Errorf("RESP3 %v: COMMAND %s %s\nminikv %q\nredis  %q", resp3, sub, c.name, got, want)
				}
			}
		}
	}
}

// dropSubcommands removes the subcommand list from a COMMAND INFO or
// DOCS reply of one container command (parsed as RESP3, which a RESP2
// reply also is).
func dropSubcommands(t *testing.T, reply, sub string) string {
	v, _ := parseRV(reply) // a RESP2 map is a flat array: the same pairs
	if sub == "INFO" {
		v.elems[0].elems[9].elems = nil
		return encodeRV(v)
	}
	d := &v.elems[1]
	for i := 0; i+1 < len(d.elems); i += 2 {
		if d.elems[i].str == "subcommands" {
			d.elems = append(d.elems[:i:i], d.elems[i+2:]...)
			break
		}
	}
	return encodeRV(v)
}

func TestCommandListDifferential(t *testing.T) {
	redisAddr := startRedisServer(t)
	rs := startRESP(t, server.Config{}, store.Config{})
	r, m := dialCmd(t, redisAddr, false), dialCmd(t, rs.respAddr, false)
	served := make(map[string]bool) // by Redis 7.2's name
	var extra []string              // served, not in Redis 7.2
	for _, c := range servedCommands() {
		if c.meta != nil {
			served[c.name] = true
		} else {
			extra = append(extra, c.name)
		}
	}
	names := func(reply string) []string {
		v, _ := parseRV(reply)
		out := v.strs()
		slices.Sort(out)
		return out
	}
	filters := [][]string{nil,
		{"FILTERBY", "PATTERN", "*"}, {"FILTERBY", "PATTERN", "z*"}, {"FILTERBY", "PATTERN", "CLIENT|*"}, {"FILTERBY", "PATTERN", "?et"},
		{"FILTERBY", "MODULE", "foo"}}
	for _, cat := range []string{"keyspace", "read", "write", "set", "sortedset", "list", "hash", "string", "bitmap", "hyperloglog",
		"pubsub", "admin", "fast", "slow", "blocking", "dangerous", "connection", "transaction", "scripting", "geo", "stream", "FAST"} {
		filters = append(filters, []string{"FILTERBY", "ACLCAT", cat})
	}
	for _, f := range filters {
		args := append([]string{"COMMAND", "LIST"}, f...)
		var want []string
		for _, n := range names(r.do(t, args...)) {
			if served[n] {
				want = append(want, n)
			}
		}
		var got []string
		for _, n := range names(m.do(t, args...)) {
			switch {
			case served[n]:
				got = append(got, n)
			case !slices.Contains(extra, n):
				t.Errorf("%v: %q is not served", f, n)
			}
		}
		if !slices.Equal(got, want) {
			t.Errorf("%v:\nminikv %q\nredis  %q", f, got, want)
		}
	}
}

// TestCommandGetKeysDifferential compares COMMAND GETKEYS and
// GETKEYSANDFLAGS for calls of every command MiniKV serves.
func TestCommandGetKeysDifferential(t *testing.T) {
	redisAddr := startRedisServer(t)
	rs := startRESP(t, server.Config{}, store.Config{})
	r, m := dialCmd(t, redisAddr, true), dialCmd(t, rs.respAddr, true)
	n := 0
	for _, c := range servedCommands() {
		if c.meta == nil || len(c.subs) > 0 {
			continue
		}
		for _, call := range sampleCalls(c) {
			for _, sub := range []string{"GETKEYS", "GETKEYSANDFLAGS"} {
				args := append([]string{"COMMAND", sub}, call...)
				want, got := r.do(t, args...), m.do(t, args...)
				if got != want {
					t.Errorf("%q\nminikv %q\nredis  %q", args, got, want)
				}
				n++
			}
		}
	}
	t.Logf("%d calls compared", n)
}

// sampleCalls builds calls of c from its COMMAND DOCS arguments: the
// required arguments only, and every argument, each with the first and
// with the last alternative of every choice, and again with every
// optional block given twice where it may repeat.
func sampleCalls(c *respCommand) [][]string {
	name := strings.Split(c.name, "|")
	args, _ := c.meta.docMap().field("arguments")
	var calls [][]string
	for _, g := range []argGen{{}, {all: true}, {all: true, last: true}, {all: true, twice: true}, {all: true, last: true, twice: true}} {
		g.call = append([]string(nil), name...)
		g.args(args.elems)
		if !slices.ContainsFunc(calls, func(c []string) bool { return slices.Equal(c, g.call) }) {
			calls = append(calls, g.call)
		}
	}
	return calls
}

type argGen struct {
	all, last, twice bool
	call             []string
	keys             int
}

func (g *argGen) args(args []rv) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		typ, _ := a.field("type")
		nm, _ := a.field("name")
		flags, _ := a.field("flags")
		fl := flags.strs()
		if slices.Contains(fl, "optional") && !g.all {
			continue
		}
		reps := 1
		if slices.Contains(fl, "multiple") && g.twice {
			reps = 2
		}
		if typ.str == "integer" && strings.Contains(nm.str, "numkeys") && i+1 < len(args) {
			// numkeys: the number of keys the next argument gives.
			nf, _ := args[i+1].field("flags")
			n := 1
			if slices.Contains(nf.strs(), "multiple") && g.twice {
				n = 2
			}
			g.call = append(g.call, strconv.Itoa(n))
			continue
		}
		for range reps {
			g.arg(a)
		}
	}
}

func (g *argGen) arg(a rv) {
	typ, _ := a.field("type")
	tok, ok := a.field("token")
	if ok {
		g.call = append(g.call, tok.str)
	}
	sub, _ := a.field("arguments")
	switch typ.str {
	case "pure-token":
	case "key":
		g.keys++
		g.call = append(g.call, "key"+strconv.Itoa(g.keys))
	case "integer", "unix-time":
		g.call = append(g.call, "1")
	case "double":
		g.call = append(g.call, "1.5")
	case "pattern":
		g.call = append(g.call, "pat*")
	case "oneof":
		alt := sub.elems[0]
		if g.last {
			alt = sub.elems[len(sub.elems)-1]
		}
		g.arg(alt)
	case "block":
		g.args(sub.elems)
	default:
		g.call = append(g.call, "val")
	}
}

// TestGetKeysNeverPanics runs COMMAND GETKEYSANDFLAGS on random calls of
// every command MiniKV serves: whatever the arguments, it answers.
func TestGetKeysNeverPanics(t *testing.T) {
	rs := startRESP(t, server.Config{}, store.Config{})
	rc := dispatchConn(New(rs.srv))
	words := []string{"0", "1", "2", "-1", "3", "100", "2147483648", "-2147483649", "x", "", "STORE", "GET", "BY",
		"LIMIT", "KEYS", "STREAMS", "WEIGHTS", "AUTH", "SET", "INCRBY", "OVERFLOW", "u8", "#1", "numkeys"}
	rng := rand.New(rand.NewPCG(1, 2))
	for _, c := range servedCommands() {
		for range 200 {
			call := [][]byte{[]byte("COMMAND"), []byte("GETKEYSANDFLAGS")}
			call = append(call, []byte(strings.Split(c.name, "|")[0]))
			if strings.Contains(c.name, "|") {
				call = append(call, []byte(strings.Split(c.name, "|")[1]))
			}
			for range rng.IntN(10) {
				call = append(call, []byte(words[rng.IntN(len(words))]))
			}
			rc.dispatch(call)
		}
	}
}

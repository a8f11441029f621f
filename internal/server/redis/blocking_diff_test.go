package redis

import (
	"bufio"
	"fmt"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/minikv/minikv/internal/server"
	"github.com/minikv/minikv/internal/store"
)

// blockingSessions are the blocking commands' single-connection sessions
// of the RESP differential test: what they answer without waiting (a key
// with elements, a wrong type, bad arguments, a short timeout, inside
// MULTI), in RESP2 and RESP3. The waiting itself is compared by
// TestBlockingScenariosDifferential, with several connections.
var blockingSessions = []respSession{
	{name: "blocking served at once", in: blockingServedAtOnce("bl1")},
	{name: "blocking served at once resp3", skip: 1, in: mb("HELLO", "3") + blockingServedAtOnce("bl3")},
	{name: "blocking wrong type", in: mb("SET", "blw:s", "v") + mb("RPUSH", "blw:l", "a", "b") + mb("ZADD", "blw:z", "1", "m") +
		mb("BLPOP", "blw:s", "0") + mb("BLPOP", "blw:nope", "blw:s", "0") + mb("BLPOP", "blw:s", "blw:l", "0") + mb("BLPOP", "blw:l", "blw:s", "0") +
		mb("BRPOP", "blw:z", "0") + mb("BZPOPMIN", "blw:l", "0") + mb("BZPOPMAX", "blw:nope", "blw:s", "0") + mb("BZPOPMIN", "blw:z", "blw:s", "0") +
		mb("BLMOVE", "blw:s", "blw:d", "LEFT", "RIGHT", "0") + mb("BLMOVE", "blw:l", "blw:s", "LEFT", "RIGHT", "0") + mb("LRANGE", "blw:l", "0", "-1") +
		mb("BRPOPLPUSH", "blw:l", "blw:z", "0") + mb("BRPOPLPUSH", "blw:z", "blw:l", "0") + mb("BLMPOP", "0", "2", "blw:nope", "blw:s", "LEFT") +
		mb("BLMPOP", "0", "2", "blw:z", "blw:l", "LEFT") + mb("BZMPOP", "0", "1", "blw:l", "MIN") + mb("BZMPOP", "0", "2", "blw:nope", "blw:s", "MAX") +
		mb("LRANGE", "blw:l", "0", "-1") + mb("GET", "blw:s")},
	{name: "blocking timeouts", in: blockingTimeouts("blt")},
	{name: "blocking timeouts resp3", skip: 1, in: mb("HELLO", "3") + blockingTimeouts("blt3")},
	{name: "blocking bad timeouts", in: badTimeouts("BLPOP", "blb:k") + badTimeouts("BZPOPMAX", "blb:k") +
		mb("BLMOVE", "blb:k", "blb:d", "UP", "RIGHT", "x") + mb("BLMOVE", "blb:k", "blb:d", "LEFT", "DOWN", "0") + mb("BLMOVE", "blb:k", "blb:d", "LEFT", "RIGHT", "-1") +
		mb("BLMOVE", "blb:k", "blb:d", "LEFT", "RIGHT", "x") + mb("BRPOPLPUSH", "blb:k", "blb:d", "nan") + mb("BRPOPLPUSH", "blb:k", "blb:d", "-inf") +
		mb("BLMPOP", "x", "0", "blb:k", "LEFT") + mb("BLMPOP", "x", "1", "blb:k", "LEFT") + mb("BLMPOP", "-1", "1", "blb:k", "LEFT") +
		mb("BLMPOP", "x", "1", "blb:k", "LEFT", "COUNT", "0") + mb("BLMPOP", "x", "1", "blb:k", "UP") + mb("BLMPOP", "0", "5", "blb:k", "LEFT") +
		mb("BLMPOP", "0", "1", "blb:k", "LEFT", "COUNT", "1", "COUNT", "2") + mb("BLMPOP", "0", "1", "blb:k", "LEFT", "FOO") +
		mb("BLMPOP", "0", "-1", "blb:k", "LEFT") + mb("BZMPOP", "x", "1", "blb:k", "MIN") + mb("BZMPOP", "0", "1", "blb:k", "MIN", "COUNT", "-1") +
		mb("BZMPOP", "0", "1", "blb:k", "MINX") + mb("BZMPOP", "inf", "1", "blb:k", "MAX") + mb("BZMPOP", "0", "1", "blb:k", "LEFT")},
	{name: "blocking arity", in: mb("BLPOP", "k") + mb("BRPOP") + mb("BLMOVE", "a", "b", "LEFT", "RIGHT") + mb("BLMOVE", "a", "b", "LEFT", "RIGHT", "0", "x") +
		mb("BRPOPLPUSH", "a", "b") + mb("BLMPOP", "0", "1", "a") + mb("BZPOPMIN", "z") + mb("BZPOPMAX") + mb("BZMPOP", "0", "1", "z") +
		mb("CLIENT", "UNBLOCK") + mb("CLIENT", "UNBLOCK", "1", "TIMEOUT", "x")},
	{name: "blocking in multi", in: blockingInMulti("blm")},
	{name: "blocking in multi resp3", skip: 1, in: mb("HELLO", "3") + blockingInMulti("blm3")},
	{name: "blocking getkeys", in: mb("COMMAND", "GETKEYS", "BLPOP", "a", "b", "0") + mb("COMMAND", "GETKEYS", "BLMPOP", "0", "2", "a", "b", "LEFT") +
		mb("COMMAND", "GETKEYS", "BZMPOP", "1", "1", "z", "MIN") + mb("COMMAND", "GETKEYS", "BLMOVE", "a", "b", "LEFT", "RIGHT", "0") +
		mb("COMMAND", "GETKEYS", "BRPOPLPUSH", "a", "b", "0") + mb("COMMAND", "GETKEYS", "BZPOPMAX", "a", "b", "c", "0") +
		mb("COMMAND", "GETKEYS", "BLMPOP", "0", "0", "a", "LEFT")},
	{name: "client unblock", in: mb("CLIENT", "UNBLOCK", "999999") + mb("CLIENT", "UNBLOCK", "999999", "ERROR") + mb("CLIENT", "UNBLOCK", "999999", "timeout") +
		mb("CLIENT", "UNBLOCK", "999999", "FOO") + mb("CLIENT", "UNBLOCK", "abc") + mb("CLIENT", "UNBLOCK", "abc", "FOO") + mb("CLIENT", "UNBLOCK", "-5") +
		mb("CLIENT", "UNBLOCK", "0", "error") + mb("CLIENT", "UNBLOCK", "99999999999999999999")},
}

func init() { respSessions = append(respSessions, blockingSessions...) }

// blockingServedAtOnce is every blocking command on keys with elements,
// with the prefix p.
func blockingServedAtOnce(p string) string {
	k := func(s string) string { return p + ":" + s }
	return mb("RPUSH", k("a"), "1", "2", "3", "4", "5", "6") + mb("BLPOP", k("nope"), k("a"), "0") + mb("BRPOP", k("a"), "0") +
		mb("BLPOP", k("a"), k("b"), "1") + mb("BLPOP", k("a"), k("a"), "0.5") + mb("BLMOVE", k("a"), k("d"), "LEFT", "RIGHT", "0") +
		mb("BLMOVE", k("a"), k("a"), "RIGHT", "LEFT", "0") + mb("BRPOPLPUSH", k("a"), k("d"), "0") + mb("LRANGE", k("d"), "0", "-1") +
		mb("BLMPOP", "0", "2", k("nope"), k("a"), "LEFT", "COUNT", "5") + mb("EXISTS", k("a")) +
		mb("BLMPOP", "0.01", "1", k("d"), "RIGHT") + mb("ZADD", k("z"), "1", "a", "2", "b", "3", "c", "4.5", "d", "-1", "e") +
		mb("BZPOPMIN", k("nope"), k("z"), "0") + mb("BZPOPMAX", k("z"), "0") + mb("BZMPOP", "0", "2", k("nope"), k("z"), "MAX", "COUNT", "2") +
		mb("BZMPOP", "0", "1", k("z"), "MIN", "COUNT", "10") + mb("EXISTS", k("z"))
}

// blockingTimeouts is every blocking command timing out on empty keys:
// the null array for each, BLMOVE's included.
func blockingTimeouts(p string) string {
	k := func(s string) string { return p + ":" + s }
	return mb("BLPOP", k("a"), "0.01") + mb("BRPOP", k("a"), k("b"), "0.02") + mb("BLMOVE", k("a"), k("d"), "LEFT", "RIGHT", "0.01") +
		mb("BRPOPLPUSH", k("a"), k("d"), "0.001") + mb("BLMPOP", "0.01", "2", k("a"), k("b"), "LEFT") + mb("BZPOPMIN", k("a"), "0.0001") +
		mb("BZPOPMAX", k("a"), "1e-300") + mb("BZMPOP", "0.01", "1", k("a"), "MIN", "COUNT", "3") + mb("BLPOP", k("a"), "0x0.01p0") +
		mb("EXISTS", k("d"))
}

// badTimeouts is cmd on key with timeouts Redis refuses.
func badTimeouts(cmd, key string) string {
	var b strings.Builder
	for _, t := range []string{"abc", "-1", "nan", "-nan", "inf", "infinity", "-inf", "1e16", "9223372036854776", "1e400", " 1", "1 ", "",
		"1e", "0x", "1_0", "-0.0010001", "-5e-1", "+-1"} {
		b.WriteString(mb(cmd, key, t))
	}
	return b.String()
}

// blockingInMulti runs every blocking command inside MULTI: on empty keys
// they answer at once, as their non-blocking twins (BLMOVE a null bulk,
// the others a null array).
func blockingInMulti(p string) string {
	k := func(s string) string { return p + ":" + s }
	return mb("SET", k("s"), "v") + mb("MULTI") + mb("BLPOP", k("a"), "0") + mb("BRPOP", k("a"), "1") + mb("BLMOVE", k("a"), k("d"), "LEFT", "RIGHT", "0") +
		mb("BRPOPLPUSH", k("a"), k("d"), "0") + mb("BLMPOP", "0", "1", k("a"), "LEFT") + mb("BZPOPMIN", k("a"), "0") + mb("BZPOPMAX", k("a"), "0") +
		mb("BZMPOP", "0", "1", k("a"), "MIN") + mb("BLPOP", k("s"), "0") + mb("RPUSH", k("a"), "x", "y") + mb("BLPOP", k("a"), "0") +
		mb("BLMOVE", k("a"), k("d"), "LEFT", "RIGHT", "0") + mb("BLPOP", k("a"), "0") + mb("ZADD", k("z"), "1", "m") + mb("BZPOPMAX", k("z"), "0") +
		mb("EXEC") + mb("LRANGE", k("d"), "0", "-1") +
		mb("MULTI") + mb("BLPOP", k("a"), "x") + mb("EXEC")
}

// A blocking scenario is a script over several connections, run against
// redis-server and MiniKV alike; every reply must be the same. Its steps:
//
//	"N CMD args..."  send a command on connection N (dialled on first use)
//	"N ?"            read one reply on connection N
//	"N skip"         read one reply and leave it out (HELLO's)
//	"N ID"           ask connection N its CLIENT ID, kept for "%N" below
//	"wait B"         poll INFO clients until blocked_clients is B
//	"N close"        close connection N
//	"N pipe A | B"   send commands A and B in one write
//
// An argument "%N" is replaced by connection N's id. Waiting for the
// blocked count makes the order of events certain without sleeping.
type blockingScenario struct {
	name  string
	steps []string
}

var blockingScenarios = []blockingScenario{
	{"push wakes the longest waiter first", []string{
		"1 BLPOP s1:k 0", "wait 1", "2 BLPOP s1:k s1:other 0", "wait 2", "3 BRPOP s1:other s1:k 0", "wait 3",
		"4 LPUSH s1:k a b", "4 ?", "1 ?", "2 ?", "wait 1", "4 RPUSH s1:k c d e", "4 ?", "3 ?", "4 LRANGE s1:k 0 -1", "4 ?"}},
	{"a push to the second key", []string{
		"1 BLPOP s2:a s2:b 0", "wait 1", "2 RPUSH s2:b x", "2 ?", "1 ?", "2 EXISTS s2:b", "2 ?"}},
	{"the same key twice", []string{
		"1 BLPOP s3:k s3:k 0", "wait 1", "2 RPUSH s3:k x y", "2 ?", "1 ?", "2 LRANGE s3:k 0 -1", "2 ?"}},
	{"blmove chain", []string{
		"1 BLMOVE s4:a s4:b LEFT RIGHT 0", "wait 1", "2 BLPOP s4:b 0", "wait 2", "3 RPUSH s4:a 1 2 3", "3 ?", "1 ?", "2 ?",
		"3 LRANGE s4:a 0 -1", "3 ?", "3 LRANGE s4:b 0 -1", "3 ?"}},
	{"blmove rotates its own key", []string{
		"1 BLMOVE s5:k s5:k LEFT RIGHT 0", "wait 1", "2 RPUSH s5:k a", "2 ?", "1 ?", "2 LRANGE s5:k 0 -1", "2 ?"}},
	{"blmove to a key of another type", []string{
		"1 BLMOVE s6:src s6:dst LEFT RIGHT 0", "wait 1", "2 SET s6:dst x", "2 ?", "2 RPUSH s6:src a b", "2 ?", "1 ?",
		"2 LRANGE s6:src 0 -1", "2 ?", "2 GET s6:dst", "2 ?"}},
	{"brpoplpush", []string{
		"1 BRPOPLPUSH s7:src s7:dst 0", "wait 1", "2 RPUSH s7:src a b", "2 ?", "1 ?", "2 LRANGE s7:dst 0 -1", "2 ?", "2 LRANGE s7:src 0 -1", "2 ?"}},
	{"blmpop count", []string{
		"1 BLMPOP 0 2 s8:a s8:b RIGHT COUNT 2", "wait 1", "2 BLMPOP 0 1 s8:b LEFT COUNT 5", "wait 2", "3 RPUSH s8:b 1 2 3 4", "3 ?", "1 ?", "2 ?",
		"3 EXISTS s8:b", "3 ?"}},
	{"push inside exec wakes at its end", []string{
		"1 BLPOP s9:k 0", "wait 1", "2 MULTI", "2 ?", "2 LPUSH s9:k x", "2 ?", "2 LPOP s9:k", "2 ?", "2 EXEC", "2 ?", "wait 1",
		"2 MULTI", "2 ?", "2 RPUSH s9:k y", "2 ?", "2 RPUSH s9:k z", "2 ?", "2 LLEN s9:k", "2 ?", "2 EXEC", "2 ?", "1 ?", "2 LRANGE s9:k 0 -1", "2 ?"}},
	{"sorted sets", []string{
		"1 BZPOPMIN s10:z 0", "wait 1", "2 BZMPOP 0 1 s10:z MAX COUNT 2", "wait 2", "3 BZPOPMAX s10:z 0", "wait 3",
		"4 ZADD s10:z 1 a 2 b 3 c 4 d", "4 ?", "1 ?", "2 ?", "3 ?", "4 ZINCRBY s10:z 1.5 e", "4 ?", "4 ZCARD s10:z", "4 ?"}},
	{"zincrby zunionstore zrangestore wake", []string{
		"1 BZPOPMIN s11:a 0", "wait 1", "2 ZINCRBY s11:a 2.5 m", "2 ?", "1 ?",
		"1 BZPOPMAX s11:u 0", "wait 1", "2 ZADD s11:src 1 x 2 y", "2 ?", "2 ZUNIONSTORE s11:u 1 s11:src", "2 ?", "1 ?",
		"1 BZMPOP 0 1 s11:r MIN COUNT 5", "wait 1", "2 ZRANGESTORE s11:r s11:src 0 -1", "2 ?", "1 ?",
		"1 BZPOPMIN s11:i 0", "wait 1", "2 ZINTERSTORE s11:i 2 s11:src s11:src", "2 ?", "1 ?",
		"1 BZPOPMIN s11:d 0", "wait 1", "2 ZDIFFSTORE s11:d 1 s11:src", "2 ?", "1 ?"}},
	{"sort store rename copy lmove wake", []string{
		"1 BLPOP s12:sorted 0", "wait 1", "2 RPUSH s12:src 3 1 2", "2 ?", "2 SORT s12:src STORE s12:sorted", "2 ?", "1 ?",
		"1 BLPOP s12:rn 0", "wait 1", "2 RENAME s12:src s12:rn", "2 ?", "1 ?",
		"1 BLPOP s12:cp 0", "wait 1", "2 RPUSH s12:src2 q r", "2 ?", "2 COPY s12:src2 s12:cp", "2 ?", "1 ?",
		"1 BRPOP s12:mv 0", "wait 1", "2 LMOVE s12:src2 s12:mv LEFT LEFT", "2 ?", "1 ?",
		"1 BRPOP s12:rp 0", "wait 1", "2 RPOPLPUSH s12:src2 s12:rp", "2 ?", "1 ?",
		"1 BZPOPMIN s12:zr 0", "wait 1", "2 ZADD s12:zsrc 5 five", "2 ?", "2 RENAMENX s12:zsrc s12:zr", "2 ?", "1 ?"}},
	{"a key of another type keeps its waiters", []string{
		"1 BLPOP s13:k 0", "wait 1", "2 SET s13:k s", "2 ?", "2 HSET s13:h f v", "2 ?", "wait 1", "2 DEL s13:k", "2 ?", "2 LPUSHX s13:k x", "2 ?",
		"2 LINSERT s13:k BEFORE a b", "2 ?", "wait 1", "2 RPUSH s13:k v", "2 ?", "1 ?"}},
	{"resp3 waiters", []string{
		"1 HELLO 3", "1 skip", "1 BZPOPMIN s14:z 0", "wait 1", "2 ZADD s14:z 1.5 m", "2 ?", "1 ?",
		"1 BZMPOP 0 1 s14:z MIN", "wait 1", "2 ZADD s14:z 2 n", "2 ?", "1 ?", "1 BLPOP s14:l 0", "wait 1", "2 RPUSH s14:l v", "2 ?", "1 ?",
		"1 BLMOVE s14:l s14:d LEFT RIGHT 0", "wait 1", "2 RPUSH s14:l w", "2 ?", "1 ?"}},
	{"client unblock", []string{
		"1 ID", "1 BLPOP s15:k 0", "wait 1", "2 CLIENT UNBLOCK %1", "2 ?", "1 ?",
		"1 BLMOVE s15:k s15:d LEFT RIGHT 0", "wait 1", "2 CLIENT UNBLOCK %1 ERROR", "2 ?", "1 ?",
		"1 BZPOPMIN s15:k -0.0009", "wait 1", "2 CLIENT UNBLOCK %1 TIMEOUT", "2 ?", "1 ?", "2 CLIENT UNBLOCK %1", "2 ?",
		"1 HELLO 3", "1 skip", "1 BLMPOP 0 1 s15:k LEFT", "wait 1", "2 CLIENT UNBLOCK %1 TIMEOUT", "2 ?", "1 ?",
		"1 BRPOPLPUSH s15:k s15:d 0", "wait 1", "2 CLIENT UNBLOCK %1", "2 ?", "1 ?", "1 PING", "1 ?"}},
	{"pipelined commands wait for the blocked one", []string{
		"2 SET s16:x 1", "2 ?", "1 pipe BLPOP s16:k 0 | PING | GET s16:x | LPOP s16:k", "wait 1", "2 RPUSH s16:k a b", "2 ?",
		"1 ?", "1 ?", "1 ?", "1 ?"}},
	{"replies before the blocked command leave at once", []string{
		"1 pipe SET s17:x 1 | GET s17:x | BLPOP s17:k 0", "1 ?", "1 ?", "wait 1", "2 RPUSH s17:k a", "2 ?", "1 ?"}},
	{"a waiter that disconnects loses nothing", []string{
		"1 BLPOP s18:k 0", "wait 1", "1 close", "wait 0", "2 RPUSH s18:k a", "2 ?", "2 LRANGE s18:k 0 -1", "2 ?"}},
	{"the timeout of one key among waiters", []string{
		"1 BLPOP s19:k 0.05", "1 ?", "2 BLPOP s19:k 0", "wait 1", "3 RPUSH s19:k a", "3 ?", "2 ?"}},
}

// TestBlockingScenariosDifferential runs the blocking scenarios against
// redis-server and MiniKV, one after the other (the blocked count is the
// server's), and compares every reply.
func TestBlockingScenariosDifferential(t *testing.T) {
	redisAddr := startRedisServer(t)
	rs := startRESP(t, server.Config{}, store.Config{})
	for _, sc := range blockingScenarios {
		t.Run(sc.name, func(t *testing.T) {
			want, err := runBlockingScenario(redisAddr, sc)
			if err != nil {
				t.Fatalf("redis: %v", err)
			}
			got, err := runBlockingScenario(rs.respAddr, sc)
			if err != nil {
				t.Fatalf("minikv: %v", err)
			}
			if strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Errorf("replies differ\nredis:\n%s\nminikv:\n%s", strings.Join(want, "\n"), strings.Join(got, "\n"))
			}
		})
	}
}

// runBlockingScenario runs sc against addr and returns the replies, each
// prefixed by its connection's number.
func runBlockingScenario(addr string, sc blockingScenario) ([]string, error) {
	type client struct {
		nc net.Conn
		br *bufio.Reader
		id string
	}
	conns := map[string]*client{}
	defer func() {
		for _, c := range conns {
			c.nc.Close()
		}
	}()
	get := func(n string) (*client, error) {
		if c := conns[n]; c != nil {
			return c, nil
		}
		nc, err := net.Dial("tcp", addr)
		if err != nil {
			return nil, err
		}
		c := &client{nc: nc, br: bufio.NewReader(nc)}
		conns[n] = c
		return c, nil
	}
	// The hang guard only: a reply or a blocked count that never comes.
	const guard = 20 * time.Second
	read := func(c *client) (string, error) {
		_ = c.nc.SetReadDeadline(time.Now().Add(guard))
		return readRESPReply(c.br)
	}
	args := func(s string) []string {
		f := strings.Fields(s)
		for i, a := range f {
			if strings.HasPrefix(a, "%") {
				if c := conns[a[1:]]; c != nil {
					f[i] = c.id
				}
			}
		}
		return f
	}
	var out []string
	for _, step := range sc.steps {
		n, rest, _ := strings.Cut(step, " ")
		if n == "wait" {
			want, _ := strconv.Atoi(rest)
			ctl, err := get("ctl")
			if err != nil {
				return nil, err
			}
			for deadline := time.Now().Add(guard); ; {
				if _, err := fmt.Fprint(ctl.nc, multibulk("INFO", "clients")); err != nil {
					return nil, err
				}
				r, err := read(ctl)
				if err != nil {
					return nil, err
				}
				if strings.Contains(r, "blocked_clients:"+strconv.Itoa(want)+"\r\n") {
					break
				}
				if time.Now().After(deadline) {
					return nil, fmt.Errorf("step %q: blocked clients never %d: %q", step, want, r)
				}
				time.Sleep(2 * time.Millisecond)
			}
			continue
		}
		c, err := get(n)
		if err != nil {
			return nil, err
		}
		switch {
		case rest == "?", rest == "skip":
			r, err := read(c)
			if err != nil {
				return nil, fmt.Errorf("step %q: %w", step, err)
			}
			if rest == "?" {
				out = append(out, n+" "+r)
			}
		case rest == "ID":
			fmt.Fprint(c.nc, multibulk("CLIENT", "ID"))
			r, err := read(c)
			if err != nil {
				return nil, err
			}
			c.id = strings.TrimSpace(strings.TrimPrefix(r, ":"))
		case rest == "close":
			c.nc.Close()
			delete(conns, n)
		case strings.HasPrefix(rest, "pipe "):
			var b strings.Builder
			for _, cmd := range strings.Split(strings.TrimPrefix(rest, "pipe "), "|") {
				b.WriteString(multibulk(args(cmd)...))
			}
			if _, err := fmt.Fprint(c.nc, b.String()); err != nil {
				return nil, err
			}
		default:
			if _, err := fmt.Fprint(c.nc, multibulk(args(rest)...)); err != nil {
				return nil, err
			}
		}
	}
	return out, nil
}

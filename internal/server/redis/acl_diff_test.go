package redis

// ACL against a real redis-server 7.0: the sessions run one after the
// other on one pair of servers (ACL LIST and USERS show every user, so
// sessions cannot share the servers in parallel), each deleting the users
// it made, and the replies must be equal byte for byte, in RESP2 and
// RESP3. What cannot be compared byte for byte (GENPASS's random bytes,
// ACL CAT <category>'s order, which is Redis's hash table's) is checked
// in acl_test.go.

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/minikv/minikv/internal/server"
	"github.com/minikv/minikv/internal/store"
)

var aclSessions = []respSession{
	{name: "acl basics", in: mb("ACL", "CAT") + mb("ACL", "WHOAMI") + mb("ACL", "USERS") + mb("ACL", "LIST") +
		mb("ACL", "GETUSER", "default") + mb("ACL", "GETUSER", "nosuch") + mb("ACL", "HELP") + mb("acl", "foo") + mb("ACL") +
		mb("ACL", "CAT", "a", "b") + mb("ACL", "CAT", "nosuch") + mb("ACL", "GENPASS", "0") + mb("ACL", "GENPASS", "x") +
		mb("ACL", "GENPASS", "4097") + mb("ACL", "GENPASS", "-1") + mb("ACL", "GENPASS", "1", "2") + mb("ACL", "LOG", "x") +
		mb("ACL", "LOG", "1", "2") + mb("ACL", "LOG", "RESET") + mb("ACL", "LOG") + mb("ACL", "LOG", "-5") + mb("ACL", "LOAD") +
		mb("ACL", "SAVE") + mb("ACL", "DELUSER", "default") + mb("ACL", "DELUSER", "nosuch", "default") +
		mb("ACL", "DELUSER", "nosuch") + mb("ACL", "GETUSER") + mb("ACL", "SETUSER") + mb("ACL", "DRYRUN", "default") +
		mb("ACL", "WHOAMI", "x") + mb("ACL", "LIST", "x") + mb("ACL", "USERS", "x") + mb("ACL", "HELP", "x")},
	{name: "setuser rules", in: mb("ACL", "SETUSER", "u1", ">p", "~a*", "%R~b*", "%W~c*", "%RW~d*", "&ch", "+get", "+set", "-get", "+@hash") +
		mb("ACL", "LIST") + mb("ACL", "GETUSER", "u1") + mb("ACL", "SETUSER", "u2", "+@all", "-@hash", "-get") + mb("ACL", "GETUSER", "u2") +
		mb("ACL", "SETUSER", "u3", "on", "+config|get", "+select|0", "+select|1", "+select|0") + mb("ACL", "LIST") +
		mb("ACL", "SETUSER", "u1", "reset") + mb("ACL", "GETUSER", "u1") + mb("ACL", "USERS") +
		mb("ACL", "SETUSER", "u4", "allkeys", "allchannels", "allcommands", "nopass", "on") + mb("ACL", "GETUSER", "u4") +
		mb("ACL", "SETUSER", "u4", "resetkeys", "resetchannels", "nocommands", "resetpass", "off") + mb("ACL", "LIST") +
		mb("ACL", "SETUSER", "u5", "+@read", "+@write", "-@dangerous", "+keys") + mb("ACL", "GETUSER", "u5") +
		mb("ACL", "SETUSER", "u6", "+@all", "-@slow") + mb("ACL", "GETUSER", "u6") +
		mb("ACL", "SETUSER", "u7", "+@string", "+@list", "-lpush") + mb("ACL", "GETUSER", "u7") +
		mb("ACL", "SETUSER", "u8", "+config", "-config|set") + mb("ACL", "GETUSER", "u8") +
		mb("ACL", "SETUSER", "u9", "+acl") + mb("ACL", "GETUSER", "u9") +
		mb("ACL", "DELUSER", "u1", "u2", "u3", "u4", "u5", "u6", "u7", "u8", "u9", "u10")},
	{name: "setuser errors", in: mb("ACL", "SETUSER", "e1", "%RX~a") + mb("ACL", "SETUSER", "e1", "+nocmd") +
		mb("ACL", "SETUSER", "e1", "%R") + mb("ACL", "SETUSER", "e1", "%W") +
		mb("ACL", "SETUSER", "e1", "%RR~a") + mb("ACL", "SETUSER", "e1", "%wr~a") + mb("ACL", "GETUSER", "e1") +
		mb("ACL", "SETUSER", "e2", "(~a", "b") + mb("ACL", "SETUSER", "a b") + mb("ACL", "SETUSER", "a\x00b") +
		mb("ACL", "SETUSER", "e2", "+select|0", "+config|nosuch") + mb("ACL", "SETUSER", "e2", "+config|get|x") +
		mb("ACL", "SETUSER", "e2", "-select|0") + mb("ACL", "SETUSER", "e2", "+@") + mb("ACL", "SETUSER", "e2", "+") +
		mb("ACL", "SETUSER", "e2", "-") + mb("ACL", "SETUSER", "e2", "-@") + mb("ACL", "SETUSER", "e2", "+@nosuch") +
		mb("ACL", "SETUSER", "e2", "<x") + mb("ACL", "SETUSER", "e2", "!"+strings.Repeat("a", 64)) +
		mb("ACL", "SETUSER", "e2", "#abc") + mb("ACL", "SETUSER", "e2", "#"+strings.Repeat("A", 64)) +
		mb("ACL", "SETUSER", "e2", "~*", "~a") + mb("ACL", "SETUSER", "e2", "&*", "&a") + mb("ACL", "SETUSER", "e2", "~a b") +
		mb("ACL", "SETUSER", "e2", "&a\tb") + mb("ACL", "SETUSER", "e2", "bogus") + mb("ACL", "SETUSER", "e2", "+config|get|") +
		mb("ACL", "SETUSER", "e2", "+get|") + mb("ACL", "SETUSER", "e2", "+get|x|y") + mb("ACL", "SETUSER", "e2", "") +
		mb("ACL", "SETUSER", "e2", "bad\r\nline") + mb("ACL", "SETUSER", "e2", "+get", "nope", "+set") + mb("ACL", "USERS") +
		mb("ACL", "SETUSER", "e3", "ON", "NoPass", "AllKeys", "+GET", "+@STRING", "~A", "&B") + mb("ACL", "LIST") +
		mb("ACL", "DELUSER", "e1", "e2", "e3")},
	{name: "passwords", in: mb("ACL", "SETUSER", "p1", ">a", ">b", ">a", "#"+strings.Repeat("0", 64)) + mb("ACL", "GETUSER", "p1") +
		mb("ACL", "SETUSER", "p1", "<a", "!"+strings.Repeat("0", 64)) + mb("ACL", "LIST") + mb("ACL", "SETUSER", "p1", "nopass") +
		mb("ACL", "GETUSER", "p1") + mb("ACL", "SETUSER", "p1", ">c", "resetpass") + mb("ACL", "GETUSER", "p1") +
		mb("ACL", "SETUSER", "p1", "skip-sanitize-payload") + mb("ACL", "LIST") + mb("ACL", "SETUSER", "p1", "sanitize-payload") +
		mb("ACL", "GETUSER", "p1") + mb("ACL", "DELUSER", "p1", "p1")},
	{name: "selectors", in: mb("ACL", "SETUSER", "s1", "on", "+get", "(~a*", "+set)", "(+@hash", "%R~h*", "&c)") + mb("ACL", "LIST") +
		mb("ACL", "GETUSER", "s1") + mb("ACL", "SETUSER", "s1", "clearselectors") + mb("ACL", "GETUSER", "s1") +
		mb("ACL", "SETUSER", "s1", "(nosuch)") + mb("ACL", "SETUSER", "s1", "()") + mb("ACL", "LIST") +
		mb("ACL", "SETUSER", "s1", "(\"~a b\")") + mb("ACL", "SETUSER", "s1", "reset") + mb("ACL", "LIST") +
		mb("ACL", "DELUSER", "s1")},
	{name: "dryrun", in: mb("ACL", "SETUSER", "d1", "~a*", "%R~r*", "%W~w*", "&ch*", "+get", "+set", "+publish", "+subscribe", "+psubscribe",
		"+mset", "+copy", "+select|0", "+config|get", "+client") +
		mb("ACL", "DRYRUN", "d1", "get", "a1") + mb("ACL", "DRYRUN", "d1", "get", "b1") + mb("ACL", "DRYRUN", "d1", "get", "r1") +
		mb("ACL", "DRYRUN", "d1", "set", "r1", "v") + mb("ACL", "DRYRUN", "d1", "set", "w1", "v") + mb("ACL", "DRYRUN", "d1", "get", "w1") +
		mb("ACL", "DRYRUN", "d1", "del", "a1") + mb("ACL", "DRYRUN", "d1", "mset", "a1", "v", "b", "v") +
		mb("ACL", "DRYRUN", "d1", "copy", "r1", "w1") + mb("ACL", "DRYRUN", "d1", "copy", "w1", "r1") +
		mb("ACL", "DRYRUN", "d1", "publish", "ch1", "m") + mb("ACL", "DRYRUN", "d1", "publish", "x", "m") +
		mb("ACL", "DRYRUN", "d1", "subscribe", "ch1", "x", "ch2") + mb("ACL", "DRYRUN", "d1", "psubscribe", "ch*") +
		mb("ACL", "DRYRUN", "d1", "psubscribe", "ch1*") + mb("ACL", "DRYRUN", "d1", "select", "0") +
		mb("ACL", "DRYRUN", "d1", "select", "1") + mb("ACL", "DRYRUN", "d1", "config", "get", "x") +
		mb("ACL", "DRYRUN", "d1", "config", "set", "x", "y") + mb("ACL", "DRYRUN", "d1", "config", "nosuch") +
		mb("ACL", "DRYRUN", "d1", "client", "list") + mb("ACL", "DRYRUN", "d1", "nosuch") + mb("ACL", "DRYRUN", "nosuch", "get") +
		mb("ACL", "DRYRUN", "d1", "auth", "x") + mb("ACL", "DRYRUN", "d1", "get") + mb("ACL", "DRYRUN", "default", "get", "x") +
		mb("ACL", "DELUSER", "d1")},
	{name: "enforcement", in: mb("ACL", "SETUSER", "n1", "on", ">pw", "~a*", "%R~r*", "%W~w*", "&ch*", "+get", "+set", "+publish",
		"+psubscribe", "+multi", "+exec", "+discard", "+del", "+eval", "+ping", "+copy", "+mget", "+acl|whoami", "+select|0", "+config|get") +
		mb("SET", "r1", "v") + mb("AUTH", "n1", "pw") + mb("ACL", "WHOAMI") + mb("GET", "a1") + mb("GET", "b1") + mb("SET", "r1", "v") +
		mb("GET", "r1") + mb("SET", "w1", "v") + mb("GET", "w1") + mb("SET", "w1", "v", "GET") + mb("DEL", "a1", "b1") + mb("MGET", "a1", "r1", "w1") +
		mb("COPY", "r1", "w2") + mb("COPY", "w1", "r2") + mb("FLUSHALL") + mb("CONFIG", "GET", "appendonly") + mb("CONFIG", "SET", "x", "y") +
		mb("ACL", "USERS") + mb("SELECT", "0") + mb("SELECT", "1") + mb("PUBLISH", "ch1", "m") + mb("PUBLISH", "x", "m") +
		mb("PSUBSCRIBE", "x*") + mb("PSUBSCRIBE", "ch*", "y") + mb("NOSUCH") + mb("GET") + mb("PING") +
		mb("MULTI") + mb("GET", "a1") + mb("GET", "b1") + mb("EXEC") + mb("MULTI") + mb("FLUSHALL") + mb("DISCARD") +
		mb("EVAL", "return redis.call('get', 'a1')", "0") + mb("EVAL", "return redis.call('get', 'b1')", "0") +
		mb("EVAL", "return redis.pcall('flushall')", "0") + mb("EVAL", "return redis.pcall('publish', 'x', 'm')", "0") +
		mb("EVAL", "return {redis.acl_check_cmd('get', 'a1'), redis.acl_check_cmd('get', 'b1'), redis.acl_check_cmd('flushall'), "+
			"redis.acl_check_cmd('config', 'get', 'x'), redis.acl_check_cmd('config', 'set', 'x', 'y'), redis.acl_check_cmd('publish', 'ch1', 'm')}", "0") +
		mb("EVAL", "return redis.acl_check_cmd('nosuch')", "0") + mb("EVAL", "return redis.acl_check_cmd('config', 'nosuch')", "0") +
		mb("AUTH", "n1", "wrong") + mb("ACL", "WHOAMI") + mb("AUTH", "nosuch", "x") + mb("AUTH", "x") + mb("AUTH", "default", "any") +
		mb("ACL", "WHOAMI") + mb("DEL", "r1", "w1") + mb("ACL", "DELUSER", "n1")},
	{name: "auth states", in: mb("ACL", "SETUSER", "n2", ">pw", "+@all", "~*") + mb("AUTH", "n2", "pw") + mb("ACL", "SETUSER", "n2", "on") +
		mb("AUTH", "n2", "pw") + mb("ACL", "WHOAMI") + mb("ACL", "SETUSER", "n2", "-get") + mb("GET", "x") + mb("ACL", "SETUSER", "n2", "off") +
		mb("GET", "x") + mb("SET", "x", "1") + mb("DEL", "x") + mb("RESET") + mb("ACL", "WHOAMI") + mb("AUTH", "n2", "pw") +
		mb("ACL", "SETUSER", "n3", "on", "nopass", "+@all", "~*") + mb("AUTH", "n3", "whatever") + mb("ACL", "WHOAMI") +
		mb("ACL", "DELUSER", "n2") + mb("ACL", "DELUSER", "n3") + mb("PING")},
	{name: "rules changed before exec", in: mb("ACL", "SETUSER", "x1", "on", "nopass", "~*", "&*", "+@all") + mb("AUTH", "x1", "p") +
		mb("MULTI") + mb("ACL", "SETUSER", "x1", "-get", "resetkeys", "~k1", "resetchannels") + mb("GET", "k1") + mb("SET", "k2", "v") +
		mb("SET", "k1", "v") + mb("PUBLISH", "c", "m") + mb("EXEC") + mb("AUTH", "default", "x") + mb("GET", "k1") + mb("DEL", "k1") +
		mb("ACL", "DELUSER", "x1")},
}

// normalizeACLRules sorts the single-command rules of every command
// description in a reply ("-@all +@set -sadd +get" keeps "-@all +@set"
// and sorts the rest): Redis emits them in its command hash table's
// order, which changes from run to run; MiniKV's is by name.
func normalizeACLRules(reply string) string {
	lines := strings.Split(reply, "\r\n")
	for i, l := range lines {
		toks := strings.Split(l, " ")
		start := -1
		for j, t := range toks {
			if t == "+@all" || t == "-@all" {
				start = j
			}
		}
		if start < 0 {
			continue
		}
		end := len(toks)
		if strings.HasSuffix(toks[end-1], ")") {
			continue // a selector: compared as sent
		}
		var cats, singles []string
		for _, t := range toks[start:end] {
			if strings.HasPrefix(t[1:], "@") {
				cats = append(cats, t)
			} else {
				singles = append(singles, t)
			}
		}
		slices.Sort(singles)
		lines[i] = strings.Join(append(append(toks[:start:start], cats...), singles...), " ")
	}
	return strings.Join(lines, "\r\n")
}

func TestACLDifferential(t *testing.T) {
	redisAddr := startRedisServer(t)
	rs := startRESP(t, server.Config{}, store.Config{})
	for _, resp3 := range []bool{false, true} {
		for _, s := range aclSessions {
			name := s.name
			if resp3 {
				s.in, s.skip, name = mb("HELLO", "3")+s.in, 1, "resp3/"+name
			}
			t.Run(name, func(t *testing.T) {
				want := runRESPSessionStepwise(redisAddr, s)
				got := runRESPSessionStepwise(rs.respAddr, s)
				if want.err != nil || got.err != nil {
					t.Fatalf("redis: %v; minikv: %v", want.err, got.err)
				}
				got.out, want.out = []byte(normalizeACLRules(string(got.out))), []byte(normalizeACLRules(string(want.out)))
				for i := range got.replies {
					got.replies[i] = normalizeACLRules(got.replies[i])
				}
				for i := range want.replies {
					want.replies[i] = normalizeACLRules(want.replies[i])
				}
				if !sameRESPReplies(s, got, want) || got.closed != want.closed {
					for i := range min(len(got.replies), len(want.replies)) {
						if got.replies[i] != want.replies[i] {
							t.Errorf("reply %d: redis %q, minikv %q", i, want.replies[i], got.replies[i])
							break
						}
					}
					t.Errorf("session %q differs\nredis  (closed %v): %.3000q\nminikv (closed %v): %.3000q",
						s.name, want.closed, want.out, got.closed, got.out)
				}
			})
		}
	}
}

// TestACLCatGenpassDifferential compares what the byte-for-byte sessions
// cannot: ACL CAT <category> as a set (Redis lists it in its hash table's
// order), and GENPASS's length for each size (its bytes are random).
func TestACLCatGenpassDifferential(t *testing.T) {
	redisAddr := startRedisServer(t)
	rs := startRESP(t, server.Config{}, store.Config{})
	r, m := dialCmd(t, redisAddr, false), dialCmd(t, rs.respAddr, false)
	sorted := func(reply string) []string {
		lines := strings.Split(strings.TrimSuffix(reply, "\r\n"), "\r\n")
		var names []string
		for _, l := range lines[1:] {
			if !strings.HasPrefix(l, "$") {
				names = append(names, l)
			}
		}
		slices.Sort(names)
		return names
	}
	for _, cat := range []string{"keyspace", "read", "write", "set", "sortedset", "list", "hash", "string", "bitmap",
		"hyperloglog", "geo", "stream", "pubsub", "admin", "fast", "slow", "blocking", "dangerous", "connection",
		"transaction", "scripting", "READ"} {
		want, got := r.do(t, "ACL", "CAT", cat), m.do(t, "ACL", "CAT", cat)
		if !slices.Equal(sorted(want), sorted(got)) || strings.SplitN(want, "\r\n", 2)[0] != strings.SplitN(got, "\r\n", 2)[0] {
			t.Errorf("ACL CAT %s: redis %q\nminikv %q", cat, sorted(want), sorted(got))
		}
	}
	for _, bits := range []string{"1", "3", "4", "5", "255", "256", "4096"} {
		want, got := r.do(t, "ACL", "GENPASS", bits), m.do(t, "ACL", "GENPASS", bits)
		wl, gl := strings.SplitN(want, "\r\n", 2)[0], strings.SplitN(got, "\r\n", 2)[0]
		if wl != gl || strings.Trim(strings.SplitN(got, "\r\n", 3)[1], "0123456789abcdef") != "" {
			t.Errorf("ACL GENPASS %s: redis %q, minikv %q", bits, want, got)
		}
	}
	if a, b := m.do(t, "ACL", "GENPASS"), m.do(t, "ACL", "GENPASS"); a == b || len(a) != len("$64\r\n")+64+2 {
		t.Errorf("ACL GENPASS twice: %q %q", a, b)
	}
}

// TestACLLogDifferential compares ACL LOG's entries, and INFO stats'
// acl_access_denied_* counts, after the same denials on both servers: every field but age-seconds and client-info
// (ids and addresses differ), which must still name the user and
// command, and Redis 7.2's timestamp-created and timestamp-last-updated,
// checked for sense rather than compared.
func TestACLLogDifferential(t *testing.T) {
	redisAddr := startRedisServer(t)
	rs := startRESP(t, server.Config{}, store.Config{})
	run := func(addr string, v72 bool) []string {
		admin, c := dialCmd(t, addr, false), dialCmd(t, addr, false)
		admin.do(t, "ACL", "LOG", "RESET")
		admin.do(t, "ACL", "SETUSER", "lg", "on", ">pw", "~a*", "&ch", "+get", "+publish", "+multi", "+exec", "+eval", "+hello")
		c.do(t, "AUTH", "lg", "nope")
		c.do(t, "AUTH", "nosuch", "nope")
		c.do(t, "HELLO", "2", "AUTH", "lg", "nope")
		c.do(t, "AUTH", "lg", "pw")
		for range 3 {
			c.do(t, "GET", "b1")
		}
		c.do(t, "SET", "a1", "v")
		c.do(t, "PUBLISH", "x", "m")
		c.do(t, "MULTI")
		c.do(t, "GET", "zz")
		c.do(t, "EXEC")
		c.do(t, "EVAL", "return redis.pcall('get', 'q')", "0")
		c.do(t, "CONFIG", "GET", "x")
		log := admin.do(t, "ACL", "LOG")
		// INFO stats counts every denial, folded in the log or not.
		var denied []string
		for _, l := range strings.Split(admin.do(t, "INFO", "stats"), "\r\n") {
			if strings.HasPrefix(l, "acl_access_denied_") {
				denied = append(denied, l)
			}
		}
		if n := admin.do(t, "ACL", "LOG", "2"); !strings.HasPrefix(n, "*2\r\n") {
			t.Errorf("ACL LOG 2: %q", n)
		}
		admin.do(t, "ACL", "DELUSER", "lg")
		lines := strings.Split(log, "\r\n")
		var out []string
		var created int64
		now := time.Now().UnixMilli()
		for i := 0; i < len(lines); i++ {
			if i+1 < len(lines) && strings.HasPrefix(lines[i], "$") &&
				slices.Contains([]string{"entry-id", "timestamp-created", "timestamp-last-updated"}, lines[i+1]) {
				continue // the keys' lengths, left out with them
			}
			switch lines[i] {
			case "age-seconds":
				i += 2
				if !strings.HasPrefix(lines[i-1], "$") && !strings.HasPrefix(lines[i-1], ",") {
					t.Errorf("age-seconds: %q", lines[i-1])
				}
			case "client-info":
				if ci := lines[i+2]; !strings.Contains(ci, "user=") || !strings.Contains(ci, " cmd=") {
					t.Errorf("client-info %q", ci)
				}
				i += 2
			case "*14", "*20": // an entry's map, 7 or 10 pairs
				out = append(out, "entry")
			case "entry-id":
				out = append(out, lines[i], lines[i+1]) // compared: both servers count from 0
				i++
			case "timestamp-created", "timestamp-last-updated":
				ms, err := strconv.ParseInt(strings.TrimPrefix(lines[i+1], ":"), 10, 64)
				if err != nil || ms > now || ms < now-60000 {
					t.Errorf("%s: %s: %q, not a time in the last minute (now %d)", addr, lines[i], lines[i+1], now)
				}
				if lines[i] == "timestamp-created" {
					created = ms
				} else if ms < created {
					t.Errorf("%s: timestamp-last-updated %d before timestamp-created %d", addr, ms, created)
				}
				out = append(out, lines[i])
				i++
			default:
				out = append(out, lines[i])
			}
		}
		out = append(out, denied...)
		if v72 != slices.Contains(out, "entry-id") {
			t.Errorf("%s: Redis 7.2's entry-id in ACL LOG: %v, want %v", addr, !v72, v72)
		}
		return out
	}
	got := run(rs.respAddr, true)
	if want := run(redisAddr, true); !slices.Equal(want, got) {
		t.Errorf("ACL LOG:\nredis  %q\nminikv %q", want, got)
	}
}

// TestACLDelUserClosesConnections checks that ACL DELUSER closes the
// connections of the user it removes (the caller's after its reply),
// and that a disabled user's connection keeps working, as in Redis.
func TestACLDelUserClosesConnections(t *testing.T) {
	rs := startRESP(t, server.Config{}, store.Config{})
	admin := dialCmd(t, rs.respAddr, false)
	admin.do(t, "ACL", "SETUSER", "k1", "on", "nopass", "+@all", "~*")
	c1, c2 := dialCmd(t, rs.respAddr, false), dialCmd(t, rs.respAddr, false)
	c1.do(t, "AUTH", "k1", "x")
	c2.do(t, "AUTH", "k1", "x")
	if r := c2.do(t, "ACL", "SETUSER", "k1", "off"); r != "+OK\r\n" {
		t.Fatalf("SETUSER off: %q", r)
	}
	if r := c1.do(t, "PING"); r != "+PONG\r\n" {
		t.Fatalf("an off user's connection: %q", r)
	}
	if r := c2.do(t, "ACL", "DELUSER", "k1"); r != ":1\r\n" {
		t.Fatalf("DELUSER: %q", r)
	}
	for _, c := range []*cmdConn{c1, c2} {
		_ = c.nc.SetReadDeadline(time.Now().Add(10 * time.Second))
		if _, err := c.nc.Write([]byte(mb("PING"))); err == nil {
			if r, err := readRESPReply(c.br); err == nil {
				t.Errorf("connection of a deleted user still served: %q", r)
			}
		}
	}
	if r := admin.do(t, "PING"); r != "+PONG\r\n" {
		t.Errorf("admin: %q", r)
	}
}

// TestACLFileDifferential runs ACL LOAD and ACL SAVE on both servers
// over the same file: the errors of a bad file, what a good one loads,
// what SAVE writes, and the ACL CONFIG parameters.
func TestACLFileDifferential(t *testing.T) {
	path := filepath.Join(t.TempDir(), "users.acl")
	write := func(s string) {
		if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	good := "user default on nopass ~* &* +@all\nuser f1 on #" + strings.Repeat("a", 64) + " ~k* &c -@all +get\n\n  user f2 off resetchannels -@all +@hash (~x* +set)\n"
	write(good)
	redisAddr := startRedisServer(t, "--aclfile", path)
	rs := startRESP(t, server.Config{ACLFile: path}, store.Config{})
	if msg := rs.srv.ACL().LoadFile(path, nil); msg != "" {
		t.Fatal(msg)
	}
	r, m := dialCmd(t, redisAddr, false), dialCmd(t, rs.respAddr, false)
	same := func(args ...string) {
		t.Helper()
		if want, got := r.do(t, args...), m.do(t, args...); want != got {
			t.Errorf("%q: redis %q, minikv %q", args, want, got)
		}
	}
	same("ACL", "LIST")
	same("CONFIG", "GET", "aclfile")
	same("CONFIG", "SET", "aclfile", "/x")
	same("CONFIG", "GET", "acllog-max-len")
	same("CONFIG", "SET", "acllog-max-len", "-1")
	same("CONFIG", "SET", "acl-pubsub-default", "x")
	same("CONFIG", "GET", "acl-pubsub-default")
	for _, bad := range []string{
		"user x on\nbogus line\nuser y +nosuch\nuser z ~a b\nuser x\n",
		"user\n",
		"user a (~x +get\n",
		"user b %RX~a >p\n",
		"# comment\n",
	} {
		write(bad)
		same("ACL", "LOAD")
		same("ACL", "LIST")
	}
	write(good + "user f3 on nopass ~* +@all\n")
	same("ACL", "LOAD")
	same("ACL", "LIST")
	same("ACL", "SETUSER", "f4", "on", ">pw", "%R~r*", "&ch", "+@read", "-@all", "+get")
	same("ACL", "SAVE")
	saved, _ := os.ReadFile(path)
	m.do(t, "ACL", "SAVE")
	mine, _ := os.ReadFile(path)
	if string(saved) != string(mine) {
		t.Errorf("ACL SAVE: redis wrote %q, minikv %q", saved, mine)
	}
	same("CONFIG", "SET", "acl-pubsub-default", "allchannels")
	same("ACL", "SETUSER", "f5")
	same("ACL", "GETUSER", "f5")
	same("CONFIG", "SET", "acl-pubsub-default", "resetchannels")
	same("CONFIG", "SET", "requirepass", "sekret")
	same("CONFIG", "GET", "requirepass")
	same("ACL", "GETUSER", "default")
	r2, m2 := dialCmd(t, redisAddr, false), dialCmd(t, rs.respAddr, false)
	if want, got := r2.do(t, "GET", "x"), m2.do(t, "GET", "x"); want != got {
		t.Errorf("after requirepass: redis %q, minikv %q", want, got)
	}
	if want, got := r2.do(t, "AUTH", "sekret"), m2.do(t, "AUTH", "sekret"); want != got {
		t.Errorf("AUTH: redis %q, minikv %q", want, got)
	}
	same("CONFIG", "SET", "requirepass", "")
	same("ACL", "GETUSER", "default")
	write("")
	same("ACL", "LOAD")
	same("ACL", "LIST")
}

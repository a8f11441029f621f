package redis

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/minikv/minikv/internal/server"
	"github.com/minikv/minikv/internal/store"
)

// Differential sessions across databases (db.go). They change every
// database, so they run one after the other on servers of their own,
// each after a FLUSHALL, once over RESP2 and once after HELLO 3.
var dbSessions = []respSession{
	{name: "select", in: mb("SET", "a", "0") + mb("SELECT", "3") + mb("GET", "a") + mb("SET", "a", "3") + mb("GET", "a") +
		mb("DBSIZE") + mb("SELECT", "0") + mb("GET", "a") + mb("DBSIZE") + mb("SELECT", "16") + mb("SELECT", "-1") +
		mb("SELECT", "15") + mb("GET", "a") + mb("SELECT", "x") + mb("SELECT", "3") + mb("EXISTS", "a") + mb("DEL", "a") +
		mb("SELECT", "0") + mb("EXISTS", "a") + mb("CONFIG", "GET", "databases") +
		mb("SELECT", "3") + mb("SET", "r", "3") + mb("RESET") + mb("GET", "r")},
	{name: "move", in: mb("SET", "k", "v", "EXAT", "4102444800") + mb("MOVE", "k", "1") + mb("MOVE", "k", "1") + mb("EXISTS", "k") +
		mb("SELECT", "1") + mb("GET", "k") + mb("EXPIRETIME", "k") + mb("MOVE", "k", "1") + mb("MOVE", "k", "16") +
		mb("MOVE", "k", "-1") + mb("MOVE", "k", "x") + mb("MOVE", "k", "99999999999") + mb("SELECT", "0") + mb("SET", "k", "other") +
		mb("SELECT", "1") + mb("MOVE", "k", "0") + mb("GET", "k") + mb("MOVE", "nope", "0") + mb("RPUSH", "l", "a", "b") +
		mb("MOVE", "l", "2") + mb("SELECT", "2") + mb("LRANGE", "l", "0", "-1") + mb("MOVE") + mb("MOVE", "k")},
	{name: "swapdb", in: mb("SET", "a", "0") + mb("SET", "only0", "x") + mb("SELECT", "1") + mb("SET", "a", "1") +
		mb("RPUSH", "l", "x") + mb("SWAPDB", "0", "1") + mb("GET", "a") + mb("GET", "only0") + mb("LRANGE", "l", "0", "-1") +
		mb("SELECT", "0") + mb("GET", "a") + mb("LRANGE", "l", "0", "-1") + mb("DBSIZE") + mb("SWAPDB", "0", "0") +
		mb("SWAPDB", "0", "16") + mb("SWAPDB", "x", "1") + mb("SWAPDB", "1", "y") + mb("SWAPDB", "-1", "0") + mb("SWAPDB", "99999999999", "0") + mb("SWAPDB", "0", "99999999999") +
		mb("SWAPDB", "0", "5") + mb("DBSIZE") + mb("SELECT", "5") + mb("DBSIZE") + mb("GET", "a") + mb("SWAPDB", "0")},
	{name: "copy db", in: mb("SET", "s", "v") + mb("COPY", "s", "s", "DB", "0") + mb("COPY", "s", "s", "DB", "2") +
		mb("COPY", "s", "s", "DB", "2") + mb("SET", "s", "w") + mb("COPY", "s", "s", "DB", "2", "REPLACE") + mb("SELECT", "2") +
		mb("GET", "s") + mb("COPY", "s", "t", "DB", "99") + mb("COPY", "s", "t", "DB", "x") + mb("COPY", "s", "t", "DB", "-1") + mb("COPY", "s", "t", "DB", "99999999999") +
		mb("HSET", "h", "f", "v") + mb("COPY", "h", "h2", "DB", "0") + mb("SELECT", "0") + mb("HGETALL", "h2") +
		mb("COPY", "s", "t") + mb("GET", "t")},
	{name: "flushdb", in: mb("SET", "a", "1") + mb("SELECT", "1") + mb("SET", "b", "1") + mb("SET", "c", "1") +
		mb("FLUSHDB") + mb("DBSIZE") + mb("GET", "b") + mb("SELECT", "0") + mb("DBSIZE") + mb("GET", "a") +
		mb("FLUSHDB", "ASYNC") + mb("DBSIZE") + mb("FLUSHDB", "x") + mb("SET", "a", "1") + mb("SELECT", "7") + mb("SET", "z", "1") +
		mb("FLUSHALL") + mb("DBSIZE") + mb("SELECT", "0") + mb("DBSIZE")},
	{name: "scan keys randomkey", in: mb("SET", "k0", "0") + mb("SELECT", "4") + mb("SET", "k4", "4") + mb("HSET", "h4", "f", "v") +
		mb("KEYS", "k*") + mb("SCAN", "0", "COUNT", "1000", "MATCH", "k*") + mb("SCAN", "0", "COUNT", "1000", "TYPE", "hash") +
		mb("SELECT", "0") + mb("KEYS", "*") + mb("SCAN", "0", "COUNT", "1000") + mb("RANDOMKEY") +
		mb("SELECT", "9") + mb("RANDOMKEY") + mb("KEYS", "*") + mb("SCAN", "0", "COUNT", "1000") + mb("DBSIZE")},
	{name: "info keyspace", in: mb("SET", "a", "1") + mb("SET", "b", "1") + mb("SELECT", "5") + mb("SET", "c", "1") +
		mb("SELECT", "12") + mb("RPUSH", "l", "x") + mb("INFO", "keyspace")},
	{name: "multi select", in: mb("MULTI") + mb("SELECT", "2") + mb("SET", "x", "1") + mb("GET", "x") + mb("EXEC") +
		mb("GET", "x") + mb("SELECT", "0") + mb("GET", "x") + mb("MULTI") + mb("SELECT", "99") + mb("EXEC")},
	{name: "watch per db", in: mb("WATCH", "k") + mb("SELECT", "1") + mb("SET", "k", "1") + mb("MULTI") + mb("GET", "k") + mb("EXEC") +
		mb("SELECT", "0") + mb("WATCH", "k") + mb("SELECT", "1") + mb("MULTI") + mb("SET", "k", "2") + mb("EXEC") +
		mb("WATCH", "k") + mb("SET", "k", "3") + mb("MULTI") + mb("GET", "k") + mb("EXEC")},
	{name: "blocking and mpop", in: mb("SELECT", "3") + mb("RPUSH", "q", "a") + mb("BLPOP", "q", "1") + mb("LMPOP", "1", "q", "LEFT") +
		mb("RPUSH", "q", "b") + mb("LMPOP", "1", "q", "LEFT") + mb("ZADD", "z", "1", "m", "2", "n") + mb("BZPOPMIN", "z", "1") +
		mb("ZMPOP", "1", "z", "MIN") + mb("RPUSH", "src", "e") + mb("BLMOVE", "src", "dst", "LEFT", "RIGHT", "1") +
		mb("LRANGE", "dst", "0", "-1") + mb("SELECT", "0") + mb("EXISTS", "dst") + mb("LMPOP", "1", "q", "LEFT")},
	{name: "sort by db", in: mb("SELECT", "2") + mb("RPUSH", "l", "1", "2") + mb("SET", "w_1", "9") + mb("SET", "w_2", "1") +
		mb("HSET", "h_1", "f", "one") + mb("SORT", "l", "BY", "w_*", "GET", "#", "GET", "w_*", "GET", "h_*->f") +
		mb("SELECT", "0") + mb("SORT", "l", "BY", "w_*")},
	{name: "script select", in: mb("SELECT", "1") + mb("SET", "k", "one") + mb("SELECT", "0") + mb("SET", "k", "zero") +
		mb("EVAL", "redis.call('SELECT', 1); return redis.call('GET', KEYS[1])", "1", "k") + mb("GET", "k") +
		mb("EVAL", "redis.call('SET', KEYS[1], 'x'); return redis.call('DBSIZE')", "1", "sk") + mb("SELECT", "1") + mb("EXISTS", "sk")},
	{name: "multi-key commands", in: mb("SET", "a", "0") + mb("SELECT", "2") + mb("SET", "a", "foobar") + mb("SET", "b", "foobaz") +
		mb("BITOP", "AND", "d", "a", "b") + mb("GET", "d") + mb("PFADD", "p", "x", "y") + mb("PFCOUNT", "p") +
		mb("SADD", "s1", "a", "b") + mb("SADD", "s2", "b", "c") + mb("SINTERCARD", "2", "s1", "s2") +
		mb("SINTERSTORE", "s3", "s1", "s2") + mb("SMOVE", "s1", "s4", "a") + mb("LCS", "a", "b") + mb("EXISTS", "a", "b", "d", "zz") +
		mb("GEOADD", "g", "13.36", "38.11", "pal") + mb("GEOSEARCHSTORE", "g2", "g", "FROMLONLAT", "13", "38", "BYRADIUS", "200", "km") +
		mb("ZUNIONSTORE", "zu", "2", "g", "g2") + mb("ZRANGE", "zu", "0", "-1") + mb("RPUSH", "l", "1", "2") + mb("LMOVE", "l", "l2", "LEFT", "RIGHT") +
		mb("OBJECT", "ENCODING", "a") + mb("RENAME", "a", "a2") + mb("GET", "a2") + mb("MSET", "m1", "1", "m2", "2") + mb("MGET", "m1", "m2", "a") +
		mb("SELECT", "0") + mb("GET", "a") + mb("EXISTS", "d", "p", "s3", "g2", "zu", "l2", "m1", "a2") + mb("DBSIZE")},
	{name: "ff keys", in: mb("SET", "\xffk", "0") + mb("SET", "\xff\x01k", "01") + mb("SELECT", "1") + mb("SET", "k", "1") +
		mb("DBSIZE") + mb("KEYS", "*") + mb("SELECT", "0") + mb("DBSIZE") + mb("GET", "\xffk") + mb("GET", "\xff\x01k") +
		mb("SCAN", "0", "MATCH", "\xff\x01*", "COUNT", "1000") + mb("MOVE", "\xffk", "1") + mb("SELECT", "1") + mb("GET", "\xffk") + mb("DBSIZE")},
}

func TestDatabasesDifferential(t *testing.T) {
	redisAddr := startRedisServer(t)
	rs := startRESP(t, server.Config{}, store.Config{})
	for _, resp3 := range []bool{false, true} {
		for _, s := range dbSessions {
			name := s.name
			if resp3 {
				s = respSession{name: s.name + " resp3", in: mb("HELLO", "3") + s.in, skip: 1}
				name = s.name
			}
			s.in = mb("FLUSHALL") + s.in
			s.skip++
			want := runRESPSession(redisAddr, s)
			got := runRESPSession(rs.respAddr, s)
			if want.err != nil || got.err != nil {
				t.Fatalf("%s: redis: %v; minikv: %v", name, want.err, got.err)
			}
			if !sameRESPReplies(s, got, want) || got.closed != want.closed {
				t.Errorf("session %q differs\nredis  (closed %v): %.4000q\nminikv (closed %v): %.4000q",
					name, want.closed, want.out, got.closed, got.out)
			}
		}
	}
}

// TestDatabasesNotificationsDifferential compares the keyspace events of
// writes in several databases: channel names carry the db number.
func TestDatabasesNotificationsDifferential(t *testing.T) {
	redisAddr := startRedisServer(t)
	rs := startRESP(t, server.Config{}, store.Config{})
	in := mb("SET", "a", "1") + mb("SELECT", "3") + mb("SET", "a", "3") + mb("RPUSH", "l", "x") + mb("MOVE", "a", "0") +
		mb("MOVE", "l", "4") + mb("SELECT", "4") + mb("COPY", "l", "l2", "DB", "6") + mb("SELECT", "6") + mb("DEL", "l2") +
		mb("EXPIRE", "a", "100") + mb("SELECT", "0") + mb("EXPIRE", "a", "100") + mb("RENAME", "a", "b")
	events := func(addr string) string {
		cfg := mustDial(t, addr)
		defer cfg.Close()
		fmt.Fprint(cfg, mb("CONFIG", "SET", "notify-keyspace-events", "KEA")+mb("FLUSHALL"))
		br := bufio.NewReader(cfg)
		for range 2 {
			if _, err := readRESPReply(br); err != nil {
				t.Fatal(err)
			}
		}
		sub := mustDial(t, addr)
		defer sub.Close()
		fmt.Fprint(sub, mb("PSUBSCRIBE", "__key*@*__:*")+mb("SUBSCRIBE", "done"))
		sr := bufio.NewReader(sub)
		for range 2 {
			if _, err := readRESPReply(sr); err != nil {
				t.Fatal(err)
			}
		}
		fmt.Fprint(cfg, in+mb("PUBLISH", "done", "x"))
		var out strings.Builder
		for {
			_ = sub.SetReadDeadline(time.Now().Add(10 * time.Second))
			r, err := readRESPReply(sr)
			if err != nil {
				t.Fatalf("%s: %v after %q", addr, err, out.String())
			}
			if strings.Contains(r, "$4\r\ndone\r\n") {
				return out.String()
			}
			out.WriteString(r)
		}
	}
	want, got := events(redisAddr), events(rs.respAddr)
	if want != got {
		t.Errorf("keyspace events differ\nredis:  %q\nminikv: %q", want, got)
	}
	if !strings.Contains(got, "__keyspace@4__:l") {
		t.Errorf("no event of database 4 in %q", got)
	}
}

func mustDial(t *testing.T, addr string) net.Conn {
	t.Helper()
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	_ = nc.SetDeadline(time.Now().Add(30 * time.Second))
	return nc
}

var _ = io.EOF
var _ = bytes.Equal

// TestDatabasesMemcachedPort: the memcached port serves database 0,
// including keys that begin with the store's database mark (0xFF), which
// it gives back as sent.
func TestDatabasesMemcachedPort(t *testing.T) {
	rs := startRESP(t, server.Config{}, store.Config{})
	mc := dial(t, rs.addr)
	c := dialRESP(t, rs.respAddr)
	mc.Send("set mk 0 0 2\r\nm0\r\n")
	if got := mc.Line(); got != "STORED" {
		t.Fatalf("set = %q", got)
	}
	mc.Send("ms /wFr 2 b\r\nff\r\n") // base64 of "\xff\x01k"
	if got := mc.Line(); got != "HD" {
		t.Fatalf("ms of a 0xFF key = %q", got)
	}
	c.Expect(mb("GET", "mk"), "$2\r\nm0\r\n")
	c.Expect(mb("GET", "\xff\x01k"), "$2\r\nff\r\n")
	c.Expect(mb("SELECT", "1"), "+OK\r\n")
	c.Expect(mb("GET", "mk"), "$-1\r\n")
	c.Expect(mb("GET", "k"), "$-1\r\n") // not database 1's "k"
	c.Expect(mb("SET", "k", "db1"), "+OK\r\n")
	c.Expect(mb("SET", "mk", "db1"), "+OK\r\n")
	mc.Send("get mk k\r\n")
	for _, want := range []string{"VALUE mk 0 2", "m0", "END"} {
		if got := mc.Line(); got != want {
			t.Fatalf("get: %q, want %q", got, want)
		}
	}
	mc.Send("mg /wFr b k v\r\n")
	if got := mc.Line(); got != "VA 2 k/wFr b" {
		t.Fatalf("mg = %q", got)
	}
	if got := mc.Line(); got != "ff" {
		t.Fatalf("mg value = %q", got)
	}
	c.Expect(mb("DBSIZE"), ":2\r\n")
	c.Expect(mb("SELECT", "0"), "+OK\r\n")
	c.Expect(mb("DBSIZE"), ":2\r\n")
}

// TestDatabasesBlockingAndMonitor: a client blocked on a key of database
// 3 is served by a push to that key in database 3, not by one to the
// same name in database 0; MONITOR shows each command's database.
func TestDatabasesBlockingAndMonitor(t *testing.T) {
	rs := startRESP(t, server.Config{}, store.Config{})
	mon := dialRESP(t, rs.respAddr)
	mon.Expect(mb("MONITOR"), "+OK\r\n")
	a, b := dialRESP(t, rs.respAddr), dialRESP(t, rs.respAddr)
	a.Expect(mb("SELECT", "3"), "+OK\r\n")
	a.Send(mb("BLPOP", "q", "0"))
	waitFor(t, "the BLPOP to block", func() bool { return strings.Contains(b.Do("CLIENT", "LIST"), "cmd=blpop") })
	b.Expect(mb("RPUSH", "q", "zero"), ":1\r\n") // database 0's q
	b.Expect(mb("SELECT", "3"), "+OK\r\n")
	b.Expect(mb("RPUSH", "q", "three"), ":1\r\n")
	if got := a.Reply(); got != "*2\r\n$1\r\nq\r\n$5\r\nthree\r\n" {
		t.Fatalf("BLPOP in database 3 = %q", got)
	}
	b.Expect(mb("SELECT", "0"), "+OK\r\n")
	b.Expect(mb("LRANGE", "q", "0", "-1"), "*1\r\n$4\r\nzero\r\n")
	seen := map[string]bool{}
	for len(seen) < 3 {
		line := mon.Reply()
		switch {
		case strings.Contains(line, ` [0 `) && strings.Contains(line, `"RPUSH" "q" "zero"`):
			seen["rpush 0"] = true
		case strings.Contains(line, ` [3 `) && strings.Contains(line, `"RPUSH" "q" "three"`):
			seen["rpush 3"] = true
		case strings.Contains(line, ` [3 `) && strings.Contains(line, `"SELECT" "3"`):
			seen["select 3"] = true
		case strings.Contains(line, `"RPUSH"`):
			t.Fatalf("MONITOR line with the wrong database: %q", line)
		}
	}
}

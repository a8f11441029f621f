package redis

import (
	"bufio"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/bradfitz/gomemcache/memcache"

	"github.com/minikv/minikv/internal/server"
	"github.com/minikv/minikv/internal/server/servertest"
	"github.com/minikv/minikv/internal/store"
)

// trackStep is one command of a tracking scenario: conn names the
// connection, args the command ("$RID" stands for connection r's ID).
type trackStep struct {
	conn string
	args []string
}

// runTracking plays steps on addr, each connection opened on first use
// (names starting with "3" speak RESP3: HELLO 3 first, its reply not
// kept), and returns what each connection read. After every step each
// connection sends PING and reads up to its reply: every message a step
// caused is queued before that reply, in Redis and in MiniKV, so the
// transcripts do not depend on timing.
func runTracking(t *testing.T, addr string, steps []trackStep) map[string]string {
	t.Helper()
	type tconn struct {
		nc    net.Conn
		br    *bufio.Reader
		out   strings.Builder
		sub   bool // RESP2 in subscribed mode: PING answers an array
		multi bool // in MULTI: a PING would be queued
	}
	conns := map[string]*tconn{}
	var order []string
	do := func(c *tconn, args ...string) string {
		_ = c.nc.SetDeadline(time.Now().Add(10 * time.Second))
		if _, err := c.nc.Write([]byte(multibulk(args...))); err != nil {
			t.Fatal(err)
		}
		r, err := servertest.ReadRESPReply(c.br)
		if err != nil {
			t.Fatalf("%v: %v", args, err)
		}
		return r
	}
	open := func(name string) *tconn {
		if c := conns[name]; c != nil {
			return c
		}
		nc, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { nc.Close() })
		c := &tconn{nc: nc, br: bufio.NewReader(nc)}
		if strings.HasPrefix(name, "3") {
			do(c, "HELLO", "3")
		}
		conns[name] = c
		order = append(order, name)
		return c
	}
	rid := ""
	for _, s := range steps {
		c := open(s.conn)
		args := make([]string, len(s.args))
		for i, a := range s.args {
			if a == "$RID" {
				if rid == "" {
					r := do(open("r"), "CLIENT", "ID")
					rid = strings.TrimSpace(r[1:])
				}
				a = rid
			}
			args[i] = a
		}
		if len(args) == 1 && args[0] == "CLOSE" {
			c.nc.Close()
			delete(conns, s.conn)
			continue
		}
		c.out.WriteString(do(c, args...))
		if strings.EqualFold(args[0], "subscribe") && !strings.HasPrefix(s.conn, "3") {
			c.sub = true
		}
		switch strings.ToLower(args[0]) {
		case "multi":
			c.multi = true
		case "exec", "discard":
			c.multi = false
		}
		for _, name := range order {
			bc := conns[name]
			if bc == nil || bc.multi {
				continue
			}
			want := "+PONG\r\n"
			if bc.sub {
				want = "*2\r\n$4\r\npong\r\n$0\r\n\r\n"
			}
			for r := do(bc, "PING"); r != want; {
				bc.out.WriteString(r)
				var err error
				if r, err = servertest.ReadRESPReply(bc.br); err != nil {
					t.Fatalf("%s after %v: %v (read so far %q)", name, args, err, bc.out.String())
				}
			}
		}
	}
	got := map[string]string{}
	for name, c := range conns {
		got[name] = c.out.String()
	}
	return got
}

func st(conn string, args ...string) trackStep { return trackStep{conn, args} }

// trackingScenarios are compared with redis-server 7.0 byte for byte.
var trackingScenarios = map[string][]trackStep{
	"default mode": {
		st("3b", "CLIENT", "TRACKING", "on"), st("3b", "GET", "t1:a"), st("3b", "MGET", "t1:a", "t1:b"), st("c", "SET", "t1:a", "x"),
		st("c", "SET", "t1:a", "y"), st("3b", "GET", "t1:a"), st("3b", "SET", "t1:a", "own"), st("3b", "GET", "t1:b"),
		st("c", "DEL", "t1:b"), st("3b", "HGETALL", "t1:h"), st("c", "HSET", "t1:h", "f", "v"), st("3b", "LRANGE", "t1:l", "0", "-1"),
		st("c", "EVAL", "redis.call('rpush', KEYS[1], 'x') return 1", "1", "t1:l"), st("3b", "GET", "t1:m"),
		st("c", "MULTI"), st("c", "SET", "t1:m", "1"), st("c", "INCR", "t1:m"), st("c", "EXEC"), st("3b", "GET", "t1:e"),
		st("c", "SET", "t1:e", "v"), st("3b", "GET", "t1:e"), st("c", "EXPIRE", "t1:e", "100"), st("3b", "TTL", "t1:e"),
		st("c", "PERSIST", "t1:e"), st("3b", "CLIENT", "TRACKINGINFO"), st("3b", "CLIENT", "GETREDIR"), st("3b", "GET", "t1:z"),
		st("3b", "CLIENT", "TRACKING", "off"), st("c", "SET", "t1:z", "1"), st("3b", "CLIENT", "TRACKINGINFO"),
	},
	"own writes, multi and flush": {
		st("3b", "CLIENT", "TRACKING", "on"), st("3b", "GET", "t2:a"), st("3b", "MULTI"), st("3b", "SET", "t2:a", "1"),
		st("3b", "GET", "t2:a"), st("3b", "EXEC"), st("3b", "GET", "t2:a"), st("3b", "EVAL", "return redis.call('set', KEYS[1], 'z')", "1", "t2:a"),
		st("3b", "GET", "t2:a"), st("3b", "FLUSHALL"), st("3b", "GET", "t2:a"), st("c", "FLUSHALL"), st("c", "SET", "t2:a", "1"),
		st("3b", "CLIENT", "TRACKING", "on", "NOLOOP"), st("3b", "GET", "t2:n"), st("3b", "SET", "t2:n", "v"), st("c", "SET", "t2:n", "w"),
		st("3b", "GET", "t2:n"), st("c", "SET", "t2:n", "w2"),
	},
	"optin and optout": {
		st("3b", "CLIENT", "TRACKING", "on", "OPTIN"), st("3b", "GET", "t3:a"), st("3b", "CLIENT", "CACHING", "yes"), st("3b", "GET", "t3:b"),
		st("3b", "GET", "t3:c"), st("c", "MSET", "t3:a", "1", "t3:b", "2", "t3:c", "3"), st("3b", "CLIENT", "CACHING", "yes"),
		st("3b", "CLIENT", "TRACKINGINFO"), st("3b", "MULTI"), st("3b", "GET", "t3:d"), st("3b", "EXEC"), st("c", "SET", "t3:d", "1"),
		st("3b", "CLIENT", "TRACKING", "off"), st("3b", "CLIENT", "TRACKING", "on", "OPTOUT"), st("3b", "GET", "t3:e"),
		st("3b", "CLIENT", "CACHING", "no"), st("3b", "GET", "t3:f"), st("c", "MSET", "t3:e", "1", "t3:f", "2"),
		st("3b", "CLIENT", "TRACKING", "on", "OPTIN"), st("3b", "CLIENT", "CACHING", "maybe"),
	},
	"bcast": {
		st("3b", "CLIENT", "TRACKING", "on", "BCAST", "PREFIX", "t4:u:", "PREFIX", "t4:s:"), st("c", "SET", "t4:u:1", "a"),
		st("c", "MSET", "t4:u:2", "a", "t4:u:3", "b", "t4:x", "c", "t4:s:1", "d"), st("c", "DEL", "t4:u:2"), st("3b", "CLIENT", "TRACKINGINFO"),
		st("3d", "CLIENT", "TRACKING", "on", "BCAST", "NOLOOP"), st("3d", "SET", "t4:own", "1"), st("c", "SET", "t4:other", "1"),
		st("3b", "CLIENT", "TRACKING", "on", "BCAST", "PREFIX", "t4:u"), st("3b", "CLIENT", "TRACKING", "on", "BCAST", "PREFIX", "t4:v:"),
		st("c", "SET", "t4:v:1", "x"), st("3b", "CLIENT", "TRACKING", "off"), st("c", "SET", "t4:u:1", "z"),
	},
	"redirect": {
		st("r", "SUBSCRIBE", "__redis__:invalidate"), st("a", "CLIENT", "TRACKING", "on", "REDIRECT", "$RID"), st("a", "GET", "t5:a"),
		st("c", "SET", "t5:a", "1"), st("a", "CLIENT", "GETREDIR"), st("a", "CLIENT", "TRACKINGINFO"), st("a", "GET", "t5:b"), st("c", "FLUSHALL"),
		st("3e", "CLIENT", "TRACKING", "on", "REDIRECT", "$RID"), st("3e", "GET", "t5:c"), st("c", "SET", "t5:c", "1"),
		st("3e", "GET", "t5:d"), st("r", "CLOSE"), st("c", "SET", "t5:d", "1"), st("3e", "CLIENT", "TRACKINGINFO"),
	},
}

// TestTrackingDifferential plays each scenario on redis-server 7.0 and on
// MiniKV: every connection reads the same bytes (replies, invalidation
// pushes, redirected messages, in the same order).
func TestTrackingDifferential(t *testing.T) {
	redisAddr := startRedisServer(t)
	rs := startRESP(t, server.Config{}, store.Config{})
	for name, steps := range trackingScenarios {
		t.Run(name, func(t *testing.T) {
			want, got := runTracking(t, redisAddr, steps), runTracking(t, rs.respAddr, steps)
			for conn, w := range want {
				if got[conn] != w {
					t.Errorf("connection %s differs\nredis:  %q\nminikv: %q", conn, w, got[conn])
				}
			}
		})
	}
}

// TestTrackingOtherSources: writes on the memcached port, expiry and
// FLUSHALL there invalidate what a RESP3 client tracks; CLIENT LIST and
// INFO show tracking; tracking-table-max-keys drops keys with their
// invalidation.
func TestTrackingOtherSources(t *testing.T) {
	rs := startRESP(t, server.Config{}, store.Config{})
	b := dialRESP(t, rs.respAddr)
	b.Do("HELLO", "3")
	b.Expect(multibulk("CLIENT", "TRACKING", "on"), "+OK\r\n")
	mc := memcache.New(rs.addr)
	b.Expect(multibulk("GET", "mk"), "_\r\n")
	if err := mc.Set(&memcache.Item{Key: "mk", Value: []byte("v")}); err != nil {
		t.Fatal(err)
	}
	b.Expect(multibulk("PING"), ">2\r\n$10\r\ninvalidate\r\n*1\r\n$2\r\nmk\r\n", "+PONG\r\n")
	b.Expect(multibulk("SET", "ex", "v", "PX", "30"), "+OK\r\n")
	b.Expect(multibulk("GET", "ex"), "$1\r\nv\r\n")
	// The key expires; a lookup from the memcached port finds it gone.
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		if _, err := mc.Get("ex"); err == memcache.ErrCacheMiss {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("ex never expired")
		}
	}
	b.Expect(multibulk("PING"), ">2\r\n$10\r\ninvalidate\r\n*1\r\n$2\r\nex\r\n", "+PONG\r\n")
	if list := b.Do("CLIENT", "LIST"); !strings.Contains(list, " flags=t ") || !strings.Contains(list, " redir=0 ") {
		t.Errorf("CLIENT LIST of a tracking client: %q", list)
	}
	b.Expect(multibulk("GET", "a"), "_\r\n")
	if info := b.Do("INFO", "everything"); !strings.Contains(info, "tracking_clients:1\r\n") || !strings.Contains(info, "tracking_total_keys:1\r\n") {
		t.Errorf("INFO tracking figures:\n%s", info)
	}
	if err := mc.FlushAll(); err != nil {
		t.Fatal(err)
	}
	b.Expect(multibulk("PING"), ">2\r\n$10\r\ninvalidate\r\n_\r\n", "+PONG\r\n")

	b.Expect(multibulk("CONFIG", "SET", "tracking-table-max-keys", "2"), "+OK\r\n")
	b.Expect(multibulk("MGET", "x1", "x2", "x3"), "*3\r\n_\r\n_\r\n_\r\n")
	got := b.Reply() // one of the three dropped, with its invalidation
	if !strings.HasPrefix(got, ">2\r\n$10\r\ninvalidate\r\n*1\r\n$2\r\nx") {
		t.Errorf("past tracking-table-max-keys: %q", got)
	}
	b.Expect(multibulk("CONFIG", "GET", "tracking-table-max-keys"), "%1\r\n$23\r\ntracking-table-max-keys\r\n$1\r\n2\r\n")
}

// TestTrackingPipelined: a RESP3 client on an event loop tracks 50 keys
// read in one pipeline, another client overwrites them in one pipeline,
// and every invalidation arrives, none lost between replies.
func TestTrackingPipelined(t *testing.T) {
	rs := startRESP(t, server.Config{EventLoops: 1}, store.Config{})
	b := dialRESP(t, rs.respAddr)
	b.Do("HELLO", "3")
	b.Expect(multibulk("CLIENT", "TRACKING", "on"), "+OK\r\n")
	var req strings.Builder
	for i := range 50 {
		req.WriteString(multibulk("GET", "p"+string(rune('a'+i%26))+string(rune('a'+i/26))))
	}
	b.Send(req.String())
	for range 50 {
		b.Reply()
	}
	w := dialRESP(t, rs.respAddr)
	var set strings.Builder
	for i := range 50 {
		set.WriteString(multibulk("SET", "p"+string(rune('a'+i%26))+string(rune('a'+i/26)), "v"))
	}
	w.Send(set.String())
	for range 50 {
		w.Reply()
	}
	seen := map[string]bool{}
	b.Send(multibulk("PING"))
	for {
		r := b.Reply()
		if r == "+PONG\r\n" {
			break
		}
		seen[r] = true
	}
	if len(seen) != 50 {
		t.Errorf("%d invalidations for 50 tracked keys written", len(seen))
	}
}

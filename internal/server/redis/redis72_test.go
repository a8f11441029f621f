package redis

import (
	"math"
	"math/rand/v2"
	"net"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/minikv/minikv/internal/dtoa"
	"github.com/minikv/minikv/lsm/vfs"

	"github.com/minikv/minikv/internal/server"
	"github.com/minikv/minikv/internal/server/servertest"
	"github.com/minikv/minikv/internal/store"
)

// Redis 7.2's additions to 7.0 (ZRANK ... WITHSCORE, WAITAOF, CLIENT
// SETINFO, CLIENT NO-TOUCH, CLUSTER MYSHARDID), compared byte for byte
// with redis-server 7.2.4.

var redis72Sessions = inRESP2And3([]respSession{
	// Scores print in Redis 7.2's shortest form (dtoa.AppendDouble72).
	{name: "zrank withscore", in: mb("ZADD", "r72:z", "1.5", "a", "2", "b", "0.25", "c") +
		mb("ZRANK", "r72:z", "a", "WITHSCORE") + mb("ZREVRANK", "r72:z", "a", "WITHSCORE") + mb("ZRANK", "r72:z", "c", "withscore") +
		mb("ZREVRANK", "r72:z", "b", "WITHSCORE") + mb("ZRANK", "r72:z", "nope", "WITHSCORE") + mb("ZREVRANK", "r72:z", "nope", "WITHSCORE") +
		mb("ZRANK", "r72:none", "a", "WITHSCORE") + mb("ZRANK", "r72:none", "a") + mb("ZRANK", "r72:z", "a", "WITHSCORES") +
		mb("ZRANK", "r72:z", "a", "WITHSCORE", "x") + mb("ZREVRANK", "r72:z", "a", "x", "y") + mb("ZRANK", "r72:z") +
		mb("SET", "r72:s", "x") + mb("ZRANK", "r72:s", "a", "WITHSCORE") + mb("ZRANK", "r72:s", "a", "bad") +
		mb("ZADD", "r72:inf", "inf", "i", "-inf", "j") + mb("ZRANK", "r72:inf", "i", "WITHSCORE") + mb("ZREVRANK", "r72:inf", "j", "WITHSCORE") +
		mb("ZRANK", "r72:z", "a")},
	// A server without an AOF (cache mode) and without replicas: every
	// count is 0, numlocal is refused, a timeout returns the counts.
	{name: "waitaof", in: mb("WAITAOF", "0", "0", "0") + mb("WAITAOF", "0", "1", "10") + mb("WAITAOF", "1", "0", "0") +
		mb("WAITAOF", "2", "0", "0") + mb("WAITAOF", "-1", "0", "0") + mb("WAITAOF", "0", "-1", "0") + mb("WAITAOF", "0", "0", "-5") +
		mb("WAITAOF", "a", "0", "0") + mb("WAITAOF", "0", "b", "0") + mb("WAITAOF", "0", "0", "c") + mb("WAITAOF", "0", "0") +
		mb("WAIT", "0", "abc") + mb("WAIT", "0", "-1") + mb("WAIT", "x", "0") +
		mb("EVAL", "return redis.call('waitaof', 0, 1, 0)", "0") + mb("EVAL", "return redis.pcall('waitaof', 1, 0, 0)", "0") +
		mb("MULTI") + mb("WAITAOF", "0", "1", "0") + mb("WAITAOF", "1", "0", "0") + mb("EXEC")},
	{name: "client no-touch", in: mb("CLIENT", "NO-TOUCH", "ON") + mb("CLIENT", "NO-TOUCH", "maybe") + mb("CLIENT", "NO-TOUCH") +
		mb("CLIENT", "NO-TOUCH", "on", "x") + mb("SET", "r72:t", "v") + mb("GET", "r72:t") + mb("TOUCH", "r72:t") +
		mb("CLIENT", "NO-TOUCH", "off") + mb("GET", "r72:t")},
	{name: "client setinfo", in: mb("CLIENT", "SETINFO", "LIB-NAME", "x") + mb("CLIENT", "SETINFO", "lib-ver", "1.0") +
		mb("CLIENT", "SETINFO", "LIB-NAME", "a b") + mb("CLIENT", "SETINFO", "Lib-Ver", "a\nb") +
		mb("CLIENT", "SETINFO", "lib-name", "\xc3\xa9") + mb("CLIENT", "SETINFO", "lib-name", "a~!") + mb("CLIENT", "SETINFO", "other", "x") +
		mb("CLIENT", "SETINFO", "LIB-NAME") + mb("CLIENT", "SETINFO", "LIB-NAME", "") + mb("CLIENT", "SETINFO", "LIB-NAME", "x", "y")},
})

func TestRedis72Differential(t *testing.T) {
	peer := startRedisServer(t)
	rs := startRESP(t, server.Config{}, store.Config{})
	// One session at a time: a session and its RESP3 twin write the same
	// keys, so run side by side their counts (ZADD's) depend on which
	// went first on each server.
	for _, s := range redis72Sessions {
		t.Run(s.name, func(t *testing.T) {
			want := runRESPSession(peer, s)
			got := runRESPSession(rs.respAddr, s)
			if want.err != nil || got.err != nil {
				t.Fatalf("redis: %v; minikv: %v", want.err, got.err)
			}
			if !sameRESPReplies(s, got, want) || got.closed != want.closed {
				t.Errorf("session %q differs\nredis  (closed %v): %.4000q\nminikv (closed %v): %.4000q",
					s.name, want.closed, want.out, got.closed, got.out)
			}
		})
	}
}

// TestWaitAOF: WAITAOF's local count is 1 on a durable server, and a
// replica counts once its REPLCONF ACK carries a FACK at or past the
// primary's offset: redis-server 7.2 with an AOF and a durable MiniKV
// replica send one; redis-server 7.0.15 and a cache-mode MiniKV replica
// never do, and WAITAOF returns at its timeout without them (while WAIT
// counts them).
func TestWaitAOF(t *testing.T) {
	_, _, primary := startDurableOnMem(t, vfs.NewMem())
	c := dialRESP(t, primary)
	if got := c.Do("CONFIG", "GET", "appendonly"); got != "*2\r\n$10\r\nappendonly\r\n$3\r\nyes\r\n" {
		t.Errorf("CONFIG GET appendonly on a durable server = %q", got)
	}
	c.Do("SET", "a", "1")
	if got := c.Do("WAITAOF", "1", "0", "0"); got != "*2\r\n:1\r\n:0\r\n" {
		t.Errorf("WAITAOF 1 0 0 = %q, want [1 0]", got)
	}
	_, port, _ := net.SplitHostPort(primary)

	// Replicas that send no FACK.
	startRedisServer(t, "--replicaof", "127.0.0.1", port)
	waitFor(t, "redis-server's link", func() bool { return c.Do("WAIT", "1", "100") == ":1\r\n" })
	c.Do("SET", "a", "2")
	if got := c.Do("WAITAOF", "1", "1", "50"); got != "*2\r\n:1\r\n:0\r\n" {
		t.Errorf("WAITAOF 1 1 50 with a replica without an AOF = %q, want [1 0]", got)
	}

	// redis-server 7.2 with an AOF: Redis 7.2's FACK.
	startRedisServer(t, "--replicaof", "127.0.0.1", port, "--appendonly", "yes")
	waitFor(t, "redis-server's link", func() bool { return c.Do("WAIT", "2", "100") == ":2\r\n" })
	c.Do("SET", "a", "3")
	if got := c.Do("WAITAOF", "1", "1", "60000"); got != "*2\r\n:1\r\n:1\r\n" {
		t.Errorf("WAITAOF 1 1 with redis-server's AOF = %q, want [1 1]", got)
	}

	// A durable MiniKV replica.
	_, _, replica := startDurableOnMem(t, vfs.NewMem())
	r := dialRESP(t, replica)
	if got := r.Do("REPLICAOF", "127.0.0.1", port); got != "+OK\r\n" {
		t.Fatalf("REPLICAOF = %q", got)
	}
	waitFor(t, "the MiniKV replica's link", func() bool { return c.Do("WAIT", "3", "100") == ":3\r\n" })
	c.Do("SET", "a", "4")
	if got := c.Do("WAITAOF", "0", "2", "60000"); got != "*2\r\n:1\r\n:2\r\n" {
		t.Errorf("WAITAOF 0 2 with redis-server and a durable MiniKV replica = %q, want [1 2]", got)
	}
	if got := r.Do("WAITAOF", "0", "0", "0"); !strings.HasPrefix(got, "-ERR WAITAOF cannot be used with replica instances.") {
		t.Errorf("WAITAOF on a replica = %q", got)
	}
}

// TestClientNoTouch: in CLIENT NO-TOUCH mode reads leave a key's idle
// time as it was (at least the second slept), and the connection shows
// flag T (after e, as Redis orders them) until NO-TOUCH OFF or RESET.
func TestClientNoTouch(t *testing.T) {
	peer := startRedisServer(t)
	rs := startRESP(t, server.Config{}, store.Config{})
	flags := func(c *servertest.RESPClient) string {
		t.Helper()
		info := c.Do("CLIENT", "INFO")
		i := strings.Index(info, " flags=")
		if i < 0 {
			t.Fatalf("CLIENT INFO = %q", info)
		}
		f, _, _ := strings.Cut(info[i+len(" flags="):], " ")
		return f
	}
	for _, addr := range []string{peer, rs.respAddr} {
		c := dialRESP(t, addr)
		c.Do("CLIENT", "NO-TOUCH", "ON")
		c.Do("CLIENT", "NO-EVICT", "ON")
		if f := flags(c); f != "eT" {
			t.Errorf("%s: flags %q in NO-TOUCH and NO-EVICT mode, want eT", addr, f)
		}
		c.Do("RESET")
		if f := flags(c); f != "N" {
			t.Errorf("%s: flags %q after RESET, want N", addr, f)
		}
	}

	c := dialRESP(t, rs.respAddr)
	c.Do("SET", "nt:k", "v")
	c.Do("HSET", "nt:h", "f", "1")
	time.Sleep(1100 * time.Millisecond) // idle times of at least 1 s
	c.Do("CLIENT", "NO-TOUCH", "ON")
	c.Do("GET", "nt:k")
	c.Do("HGET", "nt:h", "f")
	c.Do("EVAL", "return redis.call('GET', KEYS[1])", "1", "nt:k")
	c.Do("MULTI")
	c.Do("HGETALL", "nt:h")
	c.Do("EXEC")
	for _, k := range []string{"nt:k", "nt:h"} {
		if got := c.Do("OBJECT", "IDLETIME", k); got == ":0\r\n" {
			t.Errorf("OBJECT IDLETIME %s = 0 after reads in NO-TOUCH mode", k)
		}
	}
	// That TOUCH still counts is checked without a clock by
	// TestClientNoTouchLFU.
}

// TestClusterMyShardID: CLUSTER MYSHARDID (Redis 7.2) is 40 hex digits,
// the same on a primary and its replica, different between shards; off
// cluster mode it is refused as the other CLUSTER subcommands are.
func TestClusterMyShardID(t *testing.T) {
	nodes, _ := startCluster(t, server.Config{}, sixNodes...)
	ids := make([]string, len(nodes))
	for i, n := range nodes {
		id := dialRESP(t, n.addr).Do("CLUSTER", "MYSHARDID")
		if len(id) != len("$40\r\n")+40+2 || strings.Trim(id[5:45], "0123456789abcdef") != "" {
			t.Fatalf("%s: CLUSTER MYSHARDID = %q", n.name, id)
		}
		ids[i] = id
	}
	for i := range 3 {
		if ids[i] != ids[i+3] {
			t.Errorf("primary %s and its replica %s: shard IDs %q and %q", nodes[i].name, nodes[i+3].name, ids[i], ids[i+3])
		}
		for j := range i {
			if ids[i] == ids[j] {
				t.Errorf("shards of %s and %s share the ID %q", nodes[i].name, nodes[j].name, ids[i])
			}
		}
	}
	peer := startRedisServer(t)
	rs := startRESP(t, server.Config{}, store.Config{})
	want := dialRESP(t, peer).Do("CLUSTER", "MYSHARDID")
	if got := dialRESP(t, rs.respAddr).Do("CLUSTER", "MYSHARDID"); got != want {
		t.Errorf("CLUSTER MYSHARDID off cluster mode = %q, redis-server %q", got, want)
	}
}

// TestClientNoTouchLFU: under allkeys-lfu with lfu-log-factor 0 (each
// use counts), reads in NO-TOUCH mode leave OBJECT FREQ as it was, TOUCH
// still counts, and so does a read once NO-TOUCH is off, byte for byte
// as redis-server 7.2 answers.
func TestClientNoTouchLFU(t *testing.T) {
	peer := startRedisServer(t, "--maxmemory-policy", "allkeys-lfu", "--lfu-log-factor", "0")
	rs := startRESP(t, server.Config{}, store.Config{})
	c := dialRESP(t, rs.respAddr)
	for _, kv := range [][2]string{{"maxmemory-policy", "allkeys-lfu"}, {"lfu-log-factor", "0"}} {
		if got := c.Do("CONFIG", "SET", kv[0], kv[1]); got != "+OK\r\n" {
			t.Fatalf("CONFIG SET %s %s = %q", kv[0], kv[1], got)
		}
	}
	s := respSession{name: "no-touch lfu", in: mb("SET", "nt:s", "v") + mb("HSET", "nt:h", "f", "1") + mb("OBJECT", "FREQ", "nt:s") +
		mb("GET", "nt:s") + mb("OBJECT", "FREQ", "nt:s") + mb("CLIENT", "NO-TOUCH", "ON") + mb("GET", "nt:s") + mb("STRLEN", "nt:s") +
		mb("HGET", "nt:h", "f") + mb("EXISTS", "nt:s") + mb("OBJECT", "FREQ", "nt:s") + mb("OBJECT", "FREQ", "nt:h") +
		mb("EVAL", "return redis.call('GET', KEYS[1])", "1", "nt:s") + mb("MULTI") + mb("HGETALL", "nt:h") + mb("EXEC") +
		mb("OBJECT", "FREQ", "nt:s") + mb("OBJECT", "FREQ", "nt:h") + mb("TOUCH", "nt:s") + mb("OBJECT", "FREQ", "nt:s") +
		mb("CLIENT", "NO-TOUCH", "OFF") + mb("GET", "nt:s") + mb("HGET", "nt:h", "f") + mb("OBJECT", "FREQ", "nt:s") + mb("OBJECT", "FREQ", "nt:h")}
	want, got := runRESPSession(peer, s), runRESPSession(rs.respAddr, s)
	if want.err != nil || got.err != nil {
		t.Fatalf("redis: %v; minikv: %v", want.err, got.err)
	}
	if string(got.out) != string(want.out) {
		t.Errorf("session differs\nredis  %q\nminikv %q", want.out, got.out)
	}
}

// TestDouble72: dtoa.AppendDouble72, Redis 7.2's way of printing a double
// (Grisu2, laid out as its fpconv_dtoa does), gives redis-server 7.2.4's
// ZSCORE digits for 200 000 doubles: random bit patterns, decimals of a
// few digits, integers around 2^53 and 2^62, powers of ten and their
// neighbours, tiny and huge magnitudes.
func TestDouble72(t *testing.T) {
	peer := startRedisServer(t)
	c := dialCmd(t, peer, true)
	r := rand.New(rand.NewPCG(72, 24))
	var ds []float64
	for e := -330; e <= 308; e++ {
		p := math.Pow(10, float64(e))
		ds = append(ds, p, math.Nextafter(p, 0), math.Nextafter(p, math.Inf(1)), -p)
	}
	ds = slices.DeleteFunc(ds, func(d float64) bool { return d == 0 }) // a score of -0 is 0 in Redis
	for len(ds) < 200000 {
		var d float64
		switch r.IntN(6) {
		case 0:
			d = math.Float64frombits(r.Uint64())
		case 1:
			d = float64(r.IntN(2000000)-1000000) / math.Pow(10, float64(r.IntN(9)))
		case 2:
			d = float64(int64(1)<<53) + float64(r.IntN(1000)-500)
		case 3:
			d = math.Ldexp(r.Float64(), r.IntN(2100)-1074)
		case 4:
			d = float64(int64(1)<<62) * (1 + float64(r.IntN(100)-50)/1e15)
		default:
			d = r.NormFloat64() * math.Pow(10, float64(r.IntN(40)-20))
		}
		if !math.IsNaN(d) && !math.IsInf(d, 0) && d != 0 {
			ds = append(ds, d)
		}
	}
	const batch = 1000
	for i := 0; i < len(ds); i += batch {
		part := ds[i:min(i+batch, len(ds))]
		var req strings.Builder
		for j, d := range part {
			req.WriteString(multibulk("ZADD", "d72", strconv.FormatFloat(d, 'g', 17, 64), strconv.Itoa(j)))
			req.WriteString(multibulk("ZSCORE", "d72", strconv.Itoa(j)))
		}
		req.WriteString(multibulk("DEL", "d72"))
		if _, err := c.nc.Write([]byte(req.String())); err != nil {
			t.Fatal(err)
		}
		for _, d := range part {
			if _, err := readRESPReply(c.br); err != nil {
				t.Fatal(err)
			}
			got, err := readRESPReply(c.br)
			if err != nil {
				t.Fatal(err)
			}
			if want := "," + string(dtoa.AppendDouble72(nil, d)) + "\r\n"; got != want {
				t.Fatalf("%v (%#x): redis %q, AppendDouble72 %q", d, math.Float64bits(d), got, want)
			}
		}
		if _, err := readRESPReply(c.br); err != nil {
			t.Fatal(err)
		}
	}
}

package redis

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/minikv/minikv/internal/server"
	"github.com/minikv/minikv/internal/server/servertest"
	"github.com/minikv/minikv/internal/store"
)

// infoField reads one field of INFO section from the server at addr.
func infoField(t *testing.T, addr, section, field string) string {
	t.Helper()
	c := dialRESP(t, addr)
	defer c.Conn.Close()
	m := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(field) + `:(.*)\r$`).FindStringSubmatch(c.Do("INFO", section))
	if m == nil {
		return ""
	}
	return m[1]
}

// sameKeys requires every key of keys to hold the same on both servers.
func sameKeys(t *testing.T, primary, replica string, keys []string) {
	t.Helper()
	conn := func(addr string) *bufio.ReadWriter {
		nc, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { nc.Close() })
		return bufio.NewReadWriter(bufio.NewReader(nc), bufio.NewWriter(nc))
	}
	p, r := conn(primary), conn(replica)
	for _, k := range keys {
		want, err := keyState(p, k)
		if err != nil {
			t.Fatal(err)
		}
		got, err := keyState(r, k)
		if err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Errorf("%s: MiniKV holds %.200q, its Redis replica %.200q", k, want, got)
		}
	}
}

// TestRedisReplicaFollowsMiniKV starts an unmodified redis-server as a
// replica of MiniKV (--replicaof): it loads MiniKV's RDB (full resync),
// then follows the stream of writes made on both of MiniKV's ports; its
// link is dropped and it continues from the backlog (PSYNC +CONTINUE);
// at each step every key must be the same on both, and both servers'
// INFO replication must say so.
func TestRedisReplicaFollowsMiniKV(t *testing.T) {
	rs := startRESP(t, server.Config{}, store.Config{})
	_, port, _ := net.SplitHostPort(rs.respAddr)
	c := dialRESP(t, rs.respAddr)
	mc := dial(t, rs.addr)
	var keys []string
	for i := range 20 {
		keys = append(keys, fmt.Sprintf("pre:%d", i))
	}
	c.Do("SET", "pre:0", "string")
	c.Do("SET", "pre:1", "expires", "EX", "1000")
	c.Do("HSET", "pre:2", "a", "1", "b", "2")
	c.Do("RPUSH", "pre:3", "x", "y", "z")
	c.Do("SADD", "pre:4", "1", "2", "3")
	c.Do("ZADD", "pre:5", "1.5", "m", "2", "n")
	for i := range 300 {
		c.Do("HSET", "pre:6", fmt.Sprint("f", i), strings.Repeat("v", i)) // a big hash
	}

	lib := func(name string) string {
		return "#!lua name=" + name + "\nredis.register_function{function_name='" + name + "_get', callback=function(keys) return redis.call('GET', keys[1]) end, flags={'no-writes'}}"
	}
	if got := c.Do("FUNCTION", "LOAD", lib("before")); got != "$6\r\nbefore\r\n" {
		t.Fatalf("FUNCTION LOAD = %q", got)
	}
	replica := startRedisServer(t, "--replicaof", "127.0.0.1", port)
	waitFor(t, "the replica's link", func() bool { return infoField(t, replica, "replication", "master_link_status") == "up" })
	if got := infoField(t, rs.respAddr, "stats", "sync_full"); got != "1" {
		t.Errorf("sync_full = %q after the replica's first sync, want 1", got)
	}

	caughtUp := func() {
		t.Helper()
		waitFor(t, "the replica to catch up", func() bool {
			off := infoField(t, rs.respAddr, "replication", "master_repl_offset")
			return off != "0" && infoField(t, replica, "replication", "slave_repl_offset") == off
		})
	}
	r := rand.New(rand.NewPCG(1, 2))
	write := func(n int) {
		for range n {
			k := fmt.Sprintf("k:%d", r.IntN(30))
			switch r.IntN(6) {
			case 0:
				c.Do("SET", k, fmt.Sprint(r.IntN(1000)))
			case 1:
				c.Do("DEL", k)
			case 2:
				c.Do("INCR", "counter")
			case 3:
				c.Do("SADD", "set", fmt.Sprint(r.IntN(100)))
			case 4:
				v := fmt.Sprint("mc", r.IntN(1000))
				mc.Send(fmt.Sprintf("set %s 3 0 %d\r\n%s\r\n", k, len(v), v))
				mc.Line()
			case 5:
				c.Send(multibulk("MULTI") + multibulk("LPUSH", "list", "a") + multibulk("HSET", "pre:2", "c", "3") + multibulk("EXEC"))
				for range 4 {
					c.Reply()
				}
			}
		}
	}
	for i := range 30 {
		keys = append(keys, fmt.Sprintf("k:%d", i))
	}
	keys = append(keys, "counter", "set", "list")
	write(500)
	c.Do("FUNCTION", "LOAD", lib("after"))
	if got := c.Do("WAIT", "1", "30000"); got != ":1\r\n" {
		t.Errorf("WAIT 1 30000 = %q, want :1 (the replica acknowledges)", got)
	}
	if got := c.Do("WAIT", "2", "50"); got != ":1\r\n" {
		t.Errorf("WAIT 2 50 = %q, want :1 once the timeout passes", got)
	}
	caughtUp()
	sameKeys(t, rs.respAddr, replica, keys)
	rr := dialRESP(t, replica)
	for _, f := range []string{"before_get", "after_get"} {
		if got, want := rr.Do("FCALL_RO", f, "1", "pre:0"), "$6\r\nstring\r\n"; got != want {
			t.Errorf("FCALL_RO %s on the Redis replica = %q, want %q (the library replicated)", f, got, want)
		}
	}
	if got := infoField(t, rs.respAddr, "replication", "connected_slaves"); got != "1" {
		t.Errorf("connected_slaves = %q, want 1", got)
	}
	if role := c.Do("ROLE"); !strings.HasPrefix(role, "*3\r\n$6\r\nmaster\r\n:") || !strings.Contains(role, "*1\r\n*3\r\n$9\r\n127.0.0.1\r\n") {
		t.Errorf("ROLE = %q", role)
	}

	// The replica drops its link and asks to continue where it was.
	rc := dialRESP(t, replica)
	rc.Do("CLIENT", "KILL", "TYPE", "master")
	write(200)
	waitFor(t, "a partial resync", func() bool { return infoField(t, rs.respAddr, "stats", "sync_partial_ok") == "1" })
	caughtUp()
	sameKeys(t, rs.respAddr, replica, keys)
	if got := infoField(t, rs.respAddr, "stats", "sync_full"); got != "1" {
		t.Errorf("sync_full = %q after the link came back, want still 1", got)
	}
	if got := c.Do("CLIENT", "LIST", "TYPE", "replica"); !strings.Contains(got, " flags=S ") || strings.Count(got, "id=") != 1 {
		t.Errorf("CLIENT LIST TYPE replica = %q, want the replica's link with flags=S", got)
	}
	if got := c.Do("CLIENT", "KILL", "TYPE", "replica"); got != ":1\r\n" {
		t.Errorf("CLIENT KILL TYPE replica = %q", got)
	}
	waitFor(t, "a second partial resync", func() bool { return infoField(t, rs.respAddr, "stats", "sync_partial_ok") == "2" })
	off, _ := strconv.Atoi(infoField(t, rs.respAddr, "replication", "master_repl_offset"))
	t.Logf("offset %d, replica: %s", off, infoField(t, replica, "replication", "slave_repl_offset"))
	if off == 0 {
		t.Error("master_repl_offset is 0 after the writes")
	}
}

// TestMiniKVFollowsRedis makes MiniKV a replica of an unmodified
// redis-server (REPLICAOF): it loads Redis's RDB, applies Redis's own
// command stream (INCR, RPUSH, HSET, EXPIRE, MULTI ...), refuses clients'
// writes on both ports while it follows, continues after a dropped link,
// and takes writes again once promoted (REPLICAOF NO ONE), with the old
// replid kept as replid2.
func TestMiniKVFollowsRedis(t *testing.T) {
	primary := startRedisServer(t, "--repl-diskless-sync-delay", "0")
	p := dialRESP(t, primary)
	p.Do("SET", "pre", "1")
	p.Do("HSET", "h", "a", "1", "b", "2")
	p.Do("SET", "ttl", "x", "EX", "1000")
	rs := startRESP(t, server.Config{}, store.Config{})
	c := dialRESP(t, rs.respAddr)
	host, port, _ := net.SplitHostPort(primary)
	if got := c.Do("REPLICAOF", host, port); got != "+OK\r\n" {
		t.Fatalf("REPLICAOF = %q", got)
	}
	waitFor(t, "the link to the primary", func() bool { return infoField(t, rs.respAddr, "replication", "master_link_status") == "up" })
	keys := []string{"pre", "h", "ttl", "post", "l", "c", "z", "s"}
	for i := range 200 {
		p.Do("INCR", "c")
		p.Do("RPUSH", "l", fmt.Sprint(i))
		p.Do("ZADD", "z", fmt.Sprint(i%7), fmt.Sprint("m", i%13))
		if i%10 == 0 {
			p.Send(multibulk("MULTI") + multibulk("SADD", "s", fmt.Sprint(i)) + multibulk("HINCRBY", "h", "a", "1") + multibulk("EXEC"))
			for range 4 {
				p.Reply()
			}
		}
	}
	p.Do("SET", "post", "2", "PX", "500000")
	p.Do("FUNCTION", "LOAD", "#!lua name=rlib\nredis.register_function{function_name='rget', callback=function(keys) return redis.call('GET', keys[1]) end, flags={'no-writes'}}")
	caughtUp := func() {
		t.Helper()
		waitFor(t, "MiniKV to catch up", func() bool {
			off := infoField(t, primary, "replication", "master_repl_offset")
			return infoField(t, rs.respAddr, "replication", "slave_repl_offset") == off
		})
	}
	caughtUp()
	sameKeys(t, primary, rs.respAddr, keys)

	if got := c.Do("FCALL_RO", "rget", "1", "pre"); got != "$1\r\n1\r\n" {
		t.Errorf("FCALL_RO of the primary's function on MiniKV = %q", got)
	}
	if got := c.Do("SET", "x", "1"); got != "-READONLY You can't write against a read only replica.\r\n" {
		t.Errorf("SET on the replica = %q", got)
	}
	mc := dial(t, rs.addr)
	mc.Send("set x 0 0 1\r\n1\r\n")
	if got := mc.Line(); got != "SERVER_ERROR READONLY You can't write against a read only replica." {
		t.Errorf("memcached set on the replica = %q", got)
	}
	if role := c.Do("ROLE"); !strings.HasPrefix(role, "*5\r\n$5\r\nslave\r\n$9\r\n127.0.0.1\r\n:"+port+"\r\n$9\r\nconnected\r\n:") {
		t.Errorf("ROLE = %q", role)
	}

	// The link drops (the primary kills it); MiniKV continues from its
	// offset.
	p.Do("CLIENT", "KILL", "TYPE", "replica")
	p.Do("INCR", "c")
	waitFor(t, "a partial resync", func() bool { return infoField(t, primary, "stats", "sync_partial_ok") == "1" })
	caughtUp()
	sameKeys(t, primary, rs.respAddr, keys)

	replid := infoField(t, rs.respAddr, "replication", "master_replid")
	if got := c.Do("REPLICAOF", "NO", "ONE"); got != "+OK\r\n" {
		t.Fatalf("REPLICAOF NO ONE = %q", got)
	}
	if got := c.Do("SET", "x", "1"); got != "+OK\r\n" {
		t.Errorf("SET after the promotion = %q", got)
	}
	if got := infoField(t, rs.respAddr, "replication", "master_replid2"); got != replid {
		t.Errorf("master_replid2 = %q after the promotion, want the primary's %q", got, replid)
	}
	if got := infoField(t, rs.respAddr, "replication", "role"); got != "master" {
		t.Errorf("role = %q after the promotion", got)
	}
}

// TestMinReplicasToWrite: with min-replicas-to-write 1 a primary without
// replicas refuses writes on both ports with Redis's NOREPLICAS words,
// as redis-server does, and takes them once a replica acknowledges.
func TestMinReplicasToWrite(t *testing.T) {
	redisAddr := startRedisServer(t)
	rc := dialRESP(t, redisAddr)
	rc.Do("CONFIG", "SET", "min-replicas-to-write", "1")
	want := rc.Do("SET", "a", "1")
	if !strings.HasPrefix(want, "-NOREPLICAS") {
		t.Fatalf("redis-server answered %q", want)
	}
	rs := startRESP(t, server.Config{}, store.Config{})
	c := dialRESP(t, rs.respAddr)
	if got := c.Do("CONFIG", "SET", "min-replicas-to-write", "1"); got != "+OK\r\n" {
		t.Fatalf("CONFIG SET = %q", got)
	}
	if got := c.Do("SET", "a", "1"); got != want {
		t.Errorf("SET with no replica = %q, redis-server %q", got, want)
	}
	if got := c.Do("GET", "a"); got != "$-1\r\n" {
		t.Errorf("GET after the refused SET = %q", got)
	}
	mc := dial(t, rs.addr)
	mc.Send("set a 0 0 1\r\n1\r\n")
	if got := mc.Line(); got != "SERVER_ERROR "+strings.TrimSuffix(want[1:], "\r\n") {
		t.Errorf("memcached set with no replica = %q", got)
	}
	if got := infoField(t, rs.respAddr, "replication", "min_slaves_good_slaves"); got != "0" {
		t.Errorf("min_slaves_good_slaves = %q, want 0", got)
	}
	_, port, _ := net.SplitHostPort(rs.respAddr)
	startRedisServer(t, "--replicaof", "127.0.0.1", port)
	waitFor(t, "writes taken with a replica", func() bool { return c.Do("SET", "a", "1") == "+OK\r\n" })
	if got := infoField(t, rs.respAddr, "replication", "min_slaves_good_slaves"); got != "1" {
		t.Errorf("min_slaves_good_slaves = %q, want 1", got)
	}
}

// TestReplicaServeStaleDataNo: a replica whose primary cannot be reached,
// with replica-serve-stale-data no, refuses GET with Redis's MASTERDOWN
// words and still answers the commands Redis flags stale (PING, INFO,
// CONFIG), as redis-server does; back to yes, it serves GET.
func TestReplicaServeStaleDataNo(t *testing.T) {
	dead := freePortAddr(t)
	host, port, _ := net.SplitHostPort(dead)
	redisAddr := startRedisServer(t)
	rs := startRESP(t, server.Config{}, store.Config{})
	for _, addr := range []string{redisAddr, rs.respAddr} {
		c := dialRESP(t, addr)
		c.Do("REPLICAOF", host, port)
		c.Do("CONFIG", "SET", "replica-serve-stale-data", "no")
	}
	r, m := dialRESP(t, redisAddr), dialRESP(t, rs.respAddr)
	for _, req := range [][]string{{"GET", "k"}, {"PING"}, {"CONFIG", "GET", "replica-serve-stale-data"}, {"SET", "k", "v"}} {
		if want, got := r.Do(req...), m.Do(req...); got != want {
			t.Errorf("%v: MiniKV %q, redis-server %q", req, got, want)
		}
	}
	m.Do("CONFIG", "SET", "replica-serve-stale-data", "yes")
	if got := m.Do("GET", "k"); got != "$-1\r\n" {
		t.Errorf("GET with replica-serve-stale-data yes = %q", got)
	}
}

// freePortAddr is a loopback address nothing listens on.
func freePortAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// TestShutdownRefusals: SHUTDOWN's syntax errors, ABORT with no shutdown
// in progress and SHUTDOWN inside MULTI answer as redis-server's do (a
// successful SHUTDOWN stops the process: cmd/minikv's tests).
func TestShutdownRefusals(t *testing.T) {
	redisAddr := startRedisServer(t)
	rs := startRESP(t, server.Config{}, store.Config{})
	r, m := dialRESP(t, redisAddr), dialRESP(t, rs.respAddr)
	for _, req := range [][]string{{"SHUTDOWN", "ABORT"}, {"SHUTDOWN", "NOSAVE", "SAVE"}, {"SHUTDOWN", "ABORT", "NOW"},
		{"SHUTDOWN", "FOO"}, {"SHUTDOWN", "save", "now", "force", "nosave"}} {
		if want, got := r.Do(req...), m.Do(req...); got != want {
			t.Errorf("%v: MiniKV %q, redis-server %q", req, got, want)
		}
	}
	in := multibulk("MULTI") + multibulk("SHUTDOWN") + multibulk("EXEC")
	r.Send(in)
	m.Send(in)
	for range 3 {
		if want, got := r.Reply(), m.Reply(); got != want {
			t.Errorf("SHUTDOWN in MULTI: MiniKV %q, redis-server %q", got, want)
		}
	}
}

// TestCopyUntilMark: a diskless snapshot's end mark is found wherever the
// reads split it, nothing after it is consumed (the stream's first
// commands may come in the same read), and a mark-like prefix inside the
// snapshot is copied.
func TestCopyUntilMark(t *testing.T) {
	mark := []byte(strings.Repeat("m", 39) + "!")
	rdbBytes := "REDIS0010" + strings.Repeat("m", 39) + "x" + strings.Repeat("data", 3000)
	after := "*1\r\n$4\r\nPING\r\n"
	for _, piece := range []int{1, 7, 40, 4096, 1 << 20} {
		a, b := net.Pipe()
		go func() {
			all := rdbBytes + string(mark) + after
			for len(all) > 0 {
				n := min(piece, len(all))
				if _, err := a.Write([]byte(all[:n])); err != nil {
					return
				}
				all = all[n:]
			}
			a.Close()
		}()
		br := bufio.NewReaderSize(b, 64<<10)
		var got bytes.Buffer
		var lastIO atomic.Int64
		if err := copyUntilMark(&got, br, mark, b, 10*time.Second, &lastIO); err != nil {
			t.Fatalf("pieces of %d: %v", piece, err)
		}
		if got.String() != rdbBytes {
			t.Errorf("pieces of %d: copied %d bytes, want the %d before the mark", piece, got.Len(), len(rdbBytes))
		}
		rest, _ := io.ReadAll(br)
		if string(rest) != after {
			t.Errorf("pieces of %d: %q left for the stream, want %q", piece, rest, after)
		}
		b.Close()
	}
}

// TestMiniKVFollowsRedisDiskSync: a redis-server primary with
// repl-diskless-sync no sends its RDB as $<length> and the file's bytes
// (the other form a replica reads, after the $EOF: marks): MiniKV loads
// every key of it, values and TTLs.
func TestMiniKVFollowsRedisDiskSync(t *testing.T) {
	primary := startRedisServer(t, "--repl-diskless-sync", "no")
	p := dialRESP(t, primary)
	var keys []string
	for i := range 2000 {
		k := fmt.Sprint("k:", i)
		keys = append(keys, k)
		switch i % 4 {
		case 0:
			p.Do("SET", k, strings.Repeat(fmt.Sprint(i), 10), "EX", "10000")
		case 1:
			p.Do("HSET", k, "a", fmt.Sprint(i), "b", "x")
		case 2:
			p.Do("RPUSH", k, "1", fmt.Sprint(i))
		default:
			p.Do("ZADD", k, fmt.Sprint(i%9), "m", "1.5", "n")
		}
	}
	rs := startRESP(t, server.Config{}, store.Config{})
	replicaOf(t, rs.respAddr, primary)
	linkUp(t, rs.respAddr)
	sameKeys(t, primary, rs.respAddr, keys)
}

// TestReplicaLinkEndsWithItsServer: once a replica's server has stopped
// and its protocol is closed, its link to the primary no longer dials the
// primary's address (before, it went on once a second for the life of the
// process, and a server that later took that port got a stray replica).
func TestReplicaLinkEndsWithItsServer(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	primary := ln.Addr().String()
	s := servertest.Start(t, server.Config{}, store.Config{})
	rp := New(s.Server)
	addr := s.Listen(t, rp)
	replicaOf(t, addr, primary)
	nc, err := ln.Accept() // the link dials the (silent) primary
	if err != nil {
		t.Fatal(err)
	}
	nc.Close()
	s.Stop(t)
	if err := rp.Close(); err != nil {
		t.Fatal(err)
	}
	// A new listener on the same port: what the old one had queued is
	// gone, and any dial from now on is the link's, after its Close.
	ln.Close()
	ln, err = net.Listen("tcp", primary)
	if err != nil {
		t.Skipf("the port was taken meanwhile: %v", err)
	}
	defer ln.Close()
	_ = ln.(*net.TCPListener).SetDeadline(time.Now().Add(2500 * time.Millisecond))
	if nc, err := ln.Accept(); err == nil {
		nc.Close()
		t.Fatal("the closed replica's link dialed its primary again")
	}
}

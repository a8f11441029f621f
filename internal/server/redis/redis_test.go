package redis

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/bradfitz/gomemcache/memcache"

	"github.com/minikv/minikv/internal/server"
	"github.com/minikv/minikv/internal/store"
)

// TestRESPTranscripts checks raw replies byte for byte: protocol errors
// (which close), inline requests, RESP3 after HELLO 3.
func TestRESPTranscripts(t *testing.T) {
	rs := startRESP(t, server.Config{}, store.Config{MaxItemSize: 1 << 20})
	tests := []struct {
		name   string
		in     string
		want   []string
		closed bool
	}{
		{"ping inline", "PING\r\n", []string{"+PONG\r\n"}, false},
		{"ping bare LF", "PING\n", []string{"+PONG\r\n"}, false},
		{"empty lines skipped", "\r\n\r\nPING\r\n", []string{"+PONG\r\n"}, false},
		{"zero counts skipped", "*0\r\n*-1\r\nPING\r\n", []string{"+PONG\r\n"}, false},
		{"case-insensitive", "pInG\r\n", []string{"+PONG\r\n"}, false},
		{"inline quoted", "SET \"a b\" 'c d'\r\nGET \"a b\"\r\n", []string{"+OK\r\n", "$3\r\nc d\r\n"}, false},
		{"inline hex escape", "ECHO \"\\x41\\n\"\r\n", []string{"$2\r\nA\n\r\n"}, false},
		{"pipeline", multibulk("SET", "p", "1") + multibulk("INCR", "p") + multibulk("GET", "p"),
			[]string{"+OK\r\n", ":2\r\n", "$1\r\n2\r\n"}, false},
		{"get missing RESP2", multibulk("GET", "nope"), []string{"$-1\r\n"}, false},
		{"unknown", "FOO a b\r\n", []string{"-ERR unknown command 'FOO', with args beginning with: 'a' 'b' \r\n"}, false},
		{"unknown no args", "FOO\r\n", []string{"-ERR unknown command 'FOO', with args beginning with: \r\n"}, false},
		{"unknown CRLF in arg", multibulk("FOO", "a\r\nb"), []string{"-ERR unknown command 'FOO', with args beginning with: 'a  b' \r\n"}, false},
		{"arity", "GET\r\n", []string{"-ERR wrong number of arguments for 'get' command\r\n"}, false},
		{"ping arity", "PING a b\r\n", []string{"-ERR wrong number of arguments for 'ping' command\r\n"}, false},
		{"syntax", "SET a b XX NX\r\n", []string{"-ERR syntax error\r\n"}, false},
		{"not int", "INCRBY a x\r\n", []string{"-ERR value is not an integer or out of range\r\n"}, false},
		{"select", "SELECT 16\r\nSELECT 0\r\nSELECT x\r\n", []string{"-ERR DB index is out of range\r\n", "+OK\r\n", "-ERR value is not an integer or out of range\r\n"}, false},
		{"auth", "AUTH pw\r\n", []string{"-" + errNoPassword + "\r\n"}, false},
		{"hello bad", "HELLO x\r\nHELLO 4\r\n", []string{"-ERR Protocol version is not an integer or out of range\r\n", "-NOPROTO unsupported protocol version\r\n"}, false},
		{"quit", "QUIT\r\nPING\r\n", []string{"+OK\r\n"}, true},
		{"invalid multibulk length", "*abc\r\n", []string{"-ERR Protocol error: invalid multibulk length\r\n"}, true},
		{"multibulk above cap", "*2147483648\r\n", []string{"-ERR Protocol error: invalid multibulk length\r\n"}, true},
		{"expected dollar", "*1\r\n:1\r\n", []string{"-ERR Protocol error: expected '$', got ':'\r\n"}, true},
		{"negative bulk", "*1\r\n$-1\r\n", []string{"-ERR Protocol error: invalid bulk length\r\n"}, true},
		{"bulk above proto-max-bulk-len", "*1\r\n$536870913\r\n", []string{"-ERR Protocol error: invalid bulk length\r\n"}, true},
		{"bulk above the store's item size", "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$1048577\r\n" + strings.Repeat("v", 1048577) + "\r\n*2\r\n$3\r\nGET\r\n$1\r\nk\r\n",
			[]string{"-ERR string exceeds maximum allowed size (proto-max-bulk-len)\r\n", "$-1\r\n"}, false},
		{"unknown command before the size check", "*2\r\n$4\r\nNOPE\r\n$1048577\r\n" + strings.Repeat("v", 1048577) + "\r\n*2\r\n$3\r\nSET\r\n$1048577\r\n" + strings.Repeat("v", 1048577) + "\r\n",
			[]string{"-ERR unknown command 'NOPE', with args beginning with: '' \r\n", "-ERR wrong number of arguments for 'set' command\r\n"}, false},
		{"bulk without CRLF", "*1\r\n$4\r\nPINGxx", []string{"-ERR Protocol error: expected CRLF\r\n"}, true},
		{"unbalanced quotes", "SET a \"b\r\n", []string{"-ERR Protocol error: unbalanced quotes in request\r\n"}, true},
		{"too big inline", strings.Repeat("a", 70000), []string{"-ERR Protocol error: too big inline request\r\n"}, true},
		{"NUL inline", "\x00PING\r\n", []string{"-ERR Protocol error: NUL byte in inline request\r\n"}, true},
		{"http post", "POST / HTTP/1.1\r\nHost: x\r\n\r\n", nil, true},
		{"http host", "Host: example.com\r\n", nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := dialRESP(t, rs.respAddr)
			c.Expect(tt.in, tt.want...)
			if got := c.Closed(time.Second); got != tt.closed {
				t.Errorf("%q: connection closed = %v, want %v", tt.in, got, tt.closed)
			}
		})
	}
}

// TestRESP3Replies checks the RESP3 encodings after HELLO 3.
func TestRESP3Replies(t *testing.T) {
	rs := startRESP(t, server.Config{}, store.Config{})
	c := dialRESP(t, rs.respAddr)
	if got := c.Do("HELLO", "3"); !strings.HasPrefix(got, "%7\r\n$6\r\nserver\r\n$5\r\nredis\r\n") || !strings.Contains(got, "$5\r\nproto\r\n:3\r\n") {
		t.Fatalf("HELLO 3 = %q", got)
	}
	c.Expect(multibulk("GET", "nope"), "_\r\n")
	c.Expect(multibulk("MGET", "nope", "nope2"), "*2\r\n_\r\n_\r\n")
	c.Expect(multibulk("CONFIG", "GET", "appendonly"), "%1\r\n$10\r\nappendonly\r\n$2\r\nno\r\n")
	c.Expect(multibulk("CLIENT", "GETNAME"), "_\r\n")
	if got := c.Do("INFO", "cluster"); got != "=34\r\ntxt:# Cluster\r\ncluster_enabled:0\r\n\r\n" {
		t.Errorf("INFO cluster in RESP3 = %q", got)
	}
	if got := c.Do("HELLO", "2"); !strings.HasPrefix(got, "*14\r\n$6\r\nserver\r\n$5\r\nredis\r\n$7\r\nversion\r\n$5\r\n7.2.4\r\n$5\r\nproto\r\n:2\r\n") {
		t.Errorf("HELLO 2 = %q", got)
	}
	c.Expect(multibulk("GET", "nope"), "$-1\r\n")
}

// TestRESPCrossPort checks that both ports share keys, values and TTLs.
func TestRESPCrossPort(t *testing.T) {
	rs := startRESP(t, server.Config{}, store.Config{})
	mc := memcache.New(rs.addr)
	rc := dialRESP(t, rs.respAddr)

	if err := mc.Set(&memcache.Item{Key: "from-mc", Value: []byte("hello"), Flags: 42, Expiration: 100}); err != nil {
		t.Fatal(err)
	}
	rc.Expect(multibulk("GET", "from-mc"), "$5\r\nhello\r\n")
	if got := rc.Do("TTL", "from-mc"); got != ":100\r\n" && got != ":99\r\n" {
		t.Errorf("TTL of a memcached key with exptime 100 = %q", got)
	}
	rc.Expect(multibulk("APPEND", "from-mc", "!"), ":6\r\n")
	it, err := mc.Get("from-mc")
	if err != nil || string(it.Value) != "hello!" || it.Flags != 42 {
		t.Errorf("after APPEND on RESP, memcached get = %+v, %v (flags kept)", it, err)
	}

	rc.Expect(multibulk("SET", "from-resp", "world", "EX", "50"), "+OK\r\n")
	it, err = mc.Get("from-resp")
	if err != nil || string(it.Value) != "world" || it.Flags != 0 {
		t.Fatalf("memcached get of a RESP key = %+v, %v (want flags 0)", it, err)
	}
	if err := mc.Touch("from-resp", 10); err != nil {
		t.Fatal(err)
	}
	if got := rc.Do("TTL", "from-resp"); got != ":10\r\n" && got != ":9\r\n" {
		t.Errorf("TTL after memcached touch 10 = %q", got)
	}
	rc.Expect(multibulk("INCR", "ctr"), ":1\r\n")
	if n, err := mc.Increment("ctr", 5); err != nil || n != 6 {
		t.Errorf("memcached incr of a RESP counter = %d, %v", n, err)
	}
	rc.Expect(multibulk("INCRBY", "ctr", "-10"), ":-4\r\n")
	if _, err := mc.Increment("ctr", 1); err == nil {
		t.Errorf("memcached incr of -4 succeeded; want a non-numeric error")
	}
	if err := mc.Delete("from-resp"); err != nil {
		t.Fatal(err)
	}
	rc.Expect(multibulk("EXISTS", "from-resp"), ":0\r\n")
	rc.Expect(multibulk("SET", "gone", "v", "PX", "1"), "+OK\r\n")
	time.Sleep(20 * time.Millisecond)
	if _, err := mc.Get("gone"); err != memcache.ErrCacheMiss {
		t.Errorf("memcached get of an expired RESP key = %v, want a miss", err)
	}
}

// TestRESPStatsAgree checks that RESP commands move the shared counters,
// so INFO and memcached's stats report the same numbers.
func TestRESPStatsAgree(t *testing.T) {
	rs := startRESP(t, server.Config{}, store.Config{})
	rc := dialRESP(t, rs.respAddr)
	rc.Do("SET", "a", "1")
	rc.Do("GET", "a")
	rc.Do("GET", "b")
	rc.Do("MGET", "a", "b", "c")
	rc.Do("DEL", "a", "zz")
	rc.Do("INCR", "n")
	rc.Do("INCR", "n")
	snap := rs.srv.Stats().Count
	want := map[server.Stat]uint64{server.StatCmdSet: 1, server.StatCmdGet: 5, server.StatGetHits: 2, server.StatGetMisses: 3,
		server.StatDeleteHits: 1, server.StatDeleteMisses: 1, server.StatIncrHits: 1, server.StatIncrMisses: 1}
	for k, v := range want {
		if snap[k] != v {
			t.Errorf("stats %s = %d, want %d", k, snap[k], v)
		}
	}
	info := rc.Do("INFO", "stats")
	for _, f := range []string{"keyspace_hits:2\r\n", "keyspace_misses:3\r\n"} {
		if !strings.Contains(info, f) {
			t.Errorf("INFO stats lacks %q:\n%s", f, info)
		}
	}
	mc := dial(t, rs.addr)
	mc.Send("stats\r\n")
	var statsText strings.Builder
	for {
		l := mc.Line()
		if l == "END" {
			break
		}
		statsText.WriteString(l + "\n")
	}
	for _, f := range []string{"STAT get_hits 2\n", "STAT get_misses 3\n", "STAT cmd_set 1\n"} {
		if !strings.Contains(statsText.String(), f) {
			t.Errorf("memcached stats lacks %q", f)
		}
	}
	rc.Do("SET", "e", "v", "EX", "100")
	if info := rc.Do("INFO", "keyspace"); !strings.Contains(info, "db0:keys=2,expires=1,avg_ttl=0\r\n") {
		t.Errorf("INFO keyspace = %q", info)
	}
}

// TestRESPFlushesBeforeBlocking checks that replies to complete requests
// are sent even when the next request has only partly arrived.
func TestRESPFlushesBeforeBlocking(t *testing.T) {
	rs := startRESP(t, server.Config{}, store.Config{})
	c := dialRESP(t, rs.respAddr)
	c.Send("PING\r\n*2\r\n$3\r\nGET\r\n$1")
	if got := c.Reply(); got != "+PONG\r\n" {
		t.Fatalf("got %q", got)
	}
	c.Expect("\r\nk\r\n", "$-1\r\n")
}

// TestRESPIdleTimeoutCountsCompleteCommands checks that a client trickling
// a command is still cut off, as on the memcached port.
func TestRESPIdleTimeoutCountsCompleteCommands(t *testing.T) {
	rs := startRESP(t, server.Config{IdleTimeout: 300 * time.Millisecond}, store.Config{})
	c := dialRESP(t, rs.respAddr)
	c.Expect("PING\r\n", "+PONG\r\n")
	start := time.Now()
	for i := 0; i < 20 && time.Since(start) < 2*time.Second; i++ {
		if _, err := c.Conn.Write([]byte("*")); err != nil {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if !c.Closed(2 * time.Second) {
		t.Fatal("a client trickling bytes was not closed by the idle timeout")
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("closed after %v, want about 300ms", d)
	}
}

// TestRESPShutdownFinishesInFlight checks graceful shutdown on the RESP
// port: a pipelined batch is answered, then the connection closes.
func TestRESPShutdownFinishesInFlight(t *testing.T) {
	rs := startRESP(t, server.Config{}, store.Config{})
	c := dialRESP(t, rs.respAddr)
	c.Expect("PING\r\n", "+PONG\r\n")
	var batch strings.Builder
	for i := range 100 {
		batch.WriteString(multibulk("SET", "k"+strconv.Itoa(i), "v"))
	}
	c.Send(batch.String())
	for range 100 {
		if got := c.Reply(); got != "+OK\r\n" {
			t.Fatalf("got %q", got)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := rs.srv.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	if !c.Closed(time.Second) {
		t.Error("idle RESP connection not closed by Shutdown")
	}
}

// TestRESPMaxConnections checks Redis's error for one client too many.
func TestRESPMaxConnections(t *testing.T) {
	rs := startRESP(t, server.Config{MaxConns: 1}, store.Config{})
	c := dialRESP(t, rs.respAddr)
	c.Expect("PING\r\n", "+PONG\r\n")
	c2 := dialRESP(t, rs.respAddr)
	if got := c2.Reply(); got != "-ERR max number of clients reached\r\n" {
		t.Errorf("extra client got %q", got)
	}
}

// TestRESPNeverPanics sends hostile inputs; the server must answer or
// close, and keep serving others.
func TestRESPNeverPanics(t *testing.T) {
	rs := startRESP(t, server.Config{}, store.Config{MaxItemSize: 4096})
	inputs := []string{
		multibulk("SET"), multibulk("SET", "k"), multibulk("GETRANGE", "k", "9223372036854775807", "-9223372036854775808"),
		multibulk("SETRANGE", "k", "9223372036854775807", "x"), multibulk("SETRANGE", "k", "4000", "x"),
		multibulk("EXPIRE", "k", "-9223372036854775808"), multibulk("PEXPIREAT", "k", "9223372036854775807"),
		multibulk("SCAN", "18446744073709551615"), multibulk("SCAN", "-1", "COUNT", "9223372036854775807"),
		multibulk("KEYS", strings.Repeat("*a", 200)+"b"), multibulk("KEYS", "[^"), multibulk("KEYS", "\\"),
		multibulk("INCRBYFLOAT", "k", "1e309"), multibulk("INCRBYFLOAT", "k", "nan"),
		multibulk("COMMAND", "INFO", "nope"), multibulk("COMMAND", "DOCS", "nope"), multibulk("CLIENT"),
		multibulk("CONFIG"), multibulk("HELLO", "3", "AUTH"), multibulk("GETEX", "k", "EX"),
		multibulk("SET", "k", "v", "EX", "9223372036854775807"), multibulk("SET", "k", "v", "PXAT", "9223372036854775807"),
		multibulk(strings.Repeat("x", 100)), multibulk(""), "*1\r\n$0\r\n\r\n",
	}
	c := dialRESP(t, rs.respAddr)
	for _, in := range inputs {
		c.Send(in)
		_ = c.Reply()
	}
	c.Expect("PING\r\n", "+PONG\r\n")
}

// TestRESPKeysLinearTime guards against exponential glob backtracking.
func TestRESPKeysLinearTime(t *testing.T) {
	g := compileGlob([]byte(strings.Repeat("*a", 50) + "*b"))
	key := []byte(strings.Repeat("a", 5000))
	start := time.Now()
	if g.match(key) {
		t.Fatal("matched")
	}
	if d := time.Since(start); d > 500*time.Millisecond {
		t.Errorf("pathological glob took %v", d)
	}
	tests := []struct {
		pat, s string
		want   bool
	}{
		{"*", "", false}, {"**", "", false}, {"", "", true}, {"", "a", false}, {"?", "", false}, {"a*b", "ab", true}, {"a*b", "axxb", true}, {"a*b", "axxbc", false},
		{"h?llo", "hello", true}, {"h[ae]llo", "hallo", true}, {"h[^e]llo", "hello", false}, {"h[a-b]llo", "hbllo", true},
		{"h[b-a]llo", "hallo", true}, {"h\\*llo", "h*llo", true}, {"h\\*llo", "hello", false}, {"*a*a*b", "aaab", true},
		{"[\\]]", "]", true}, {"[abc", "b", true}, {"user:*", "user:1", true}, {"*:*", "nocolon", false},
	}
	for _, tt := range tests {
		if got := compileGlob([]byte(tt.pat)).match([]byte(tt.s)); got != tt.want {
			t.Errorf("glob %q match %q = %v, want %v", tt.pat, tt.s, got, tt.want)
		}
	}
}

// BenchmarkRESPPipelinedGet measures the server's RESP path end to end.
func BenchmarkRESPPipelinedGet(b *testing.B) {
	rs := startRESP(b, server.Config{}, store.Config{})
	nc, err := net.Dial("tcp", rs.respAddr)
	if err != nil {
		b.Fatal(err)
	}
	defer nc.Close()
	br := bufio.NewReader(nc)
	fmt.Fprint(nc, multibulk("SET", "user:1000", strings.Repeat("v", 32)))
	if _, err := readRESPReply(br); err != nil {
		b.Fatal(err)
	}
	var batch strings.Builder
	for range 16 {
		batch.WriteString(multibulk("GET", "user:1000"))
	}
	req := []byte(batch.String())
	b.ReportAllocs()
	for b.Loop() {
		if _, err := nc.Write(req); err != nil {
			b.Fatal(err)
		}
		for range 16 {
			if _, err := readRESPReply(br); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// TestRESPDispatchZeroAllocs checks that GET, SET and INCR allocate
// nothing in the server once warm.
func TestRESPDispatchZeroAllocs(t *testing.T) {
	rs := startRESP(t, server.Config{}, store.Config{})
	rc := dispatchConn(New(rs.srv))
	cmds := [][][]byte{
		{[]byte("GET"), []byte("user:1000")},
		{[]byte("SET"), []byte("user:1000"), []byte("0123456789abcdef0123456789abcdef")},
		{[]byte("INCR"), []byte("counter")},
		{[]byte("PING")},
	}
	for _, argv := range cmds {
		for range 10 {
			rc.dispatch(argv)
		}
		allocs := testing.AllocsPerRun(1000, func() { rc.dispatch(argv) })
		// SET and INCR allocate the item the store keeps; nothing else.
		max := 0.0
		if string(argv[0]) != "GET" && string(argv[0]) != "PING" {
			max = 1
		}
		if allocs > max {
			t.Errorf("%s: %v allocs per command, want <= %v", argv[0], allocs, max)
		}
	}
}

// TestInfoCommandCounters checks INFO's total_commands_processed and
// instantaneous_ops_per_sec: every command run on either port counts
// once (a multi-key get is one command; an unknown command or an arity
// error is none), and the rate covers the time since the previous INFO
// that was at least 100 ms earlier.
func TestInfoCommandCounters(t *testing.T) {
	rs := startRESP(t, server.Config{}, store.Config{})
	rc := dialRESP(t, rs.respAddr)
	stat := func(field string) int64 {
		t.Helper()
		info := rc.Do("INFO", "stats")
		for _, line := range strings.Split(info, "\r\n") {
			if v, ok := strings.CutPrefix(line, field+":"); ok {
				n, err := strconv.ParseInt(v, 10, 64)
				if err != nil {
					t.Fatalf("%s: %v", line, err)
				}
				return n
			}
		}
		t.Fatalf("no %s in INFO stats: %q", field, info)
		return 0
	}
	// As in Redis, a command counts once done: INFO is not in its own.
	if got := stat("total_commands_processed"); got != 0 {
		t.Fatalf("total_commands_processed = %d on a fresh server in its first INFO, want 0", got)
	}
	const n = 500
	var req strings.Builder
	for i := range n {
		req.WriteString(multibulk("SET", fmt.Sprintf("k%d", i), "v"))
	}
	rc.Send(req.String())
	for range n {
		if got := rc.Reply(); got != "+OK\r\n" {
			t.Fatalf("SET: %q", got)
		}
	}
	if got := rc.Do("GET"); !strings.HasPrefix(got, "-ERR wrong number") {
		t.Fatalf("GET without a key: %q", got)
	}
	if got := rc.Do("NOSUCHCOMMAND"); !strings.HasPrefix(got, "-ERR unknown command") {
		t.Fatalf("unknown command: %q", got)
	}
	mc := dial(t, rs.addr)
	mc.Expect("get k1 k2 k3\r\nset m 0 0 1\r\nx\r\nbogus\r\n",
		"VALUE k1 0 1", "v", "VALUE k2 0 1", "v", "VALUE k3 0 1", "v", "END", "STORED", "ERROR")
	// One INFO + n SETs + get + set.
	if got, want := stat("total_commands_processed"), int64(1+n+2); got != want {
		t.Errorf("total_commands_processed = %d, want %d", got, want)
	}
	time.Sleep(150 * time.Millisecond)
	_ = stat("instantaneous_ops_per_sec") // a sample ≥ 100 ms after the first INFO
	time.Sleep(150 * time.Millisecond)
	rc.Do("PING")
	// Since the previous sample: that INFO and one PING in ≥ 150 ms.
	if got := stat("instantaneous_ops_per_sec"); got < 1 || got > 14 {
		t.Errorf("instantaneous_ops_per_sec = %d after two commands in >= 150 ms, want 1..14", got)
	}
}

// TestTTLExactWithinBatch guards the batch clock (conn.nowMilli): a
// deadline set and read back in one pipelined batch gives exactly what was
// set, as in Redis when both run in the same millisecond, even when the
// batch takes several milliseconds to run (a loaded machine, -race). A
// slow protocol makes every command take 2 ms, so a per-command clock
// would give 99994 and fail. A TTL read in a later batch, after a real
// pause, sees the time that passed: the reading never outlives its batch.
func TestTTLExactWithinBatch(t *testing.T) {
	rs := startRESPWith(t, server.Config{}, store.Config{}, func(p server.Protocol) server.Protocol { return slowProtocol{p} })
	c := dialRESP(t, rs.respAddr)
	c.Expect(multibulk("PING"), "+PONG\r\n")

	c.Send(multibulk("SET", "t:a", "v", "PX", "100000") + multibulk("PTTL", "t:a") +
		multibulk("SET", "t:b", "v", "EX", "100") + multibulk("PTTL", "t:b") + multibulk("TTL", "t:b") +
		multibulk("PEXPIRE", "t:b", "5000") + multibulk("PTTL", "t:b") +
		multibulk("GETEX", "t:a", "PX", "7000") + multibulk("PTTL", "t:a") +
		multibulk("EXPIRE", "t:a", "30") + multibulk("PTTL", "t:a"))
	want := []string{"+OK", ":100000", "+OK", ":100000", ":100", ":1", ":5000", "$1\r\nv", ":7000", ":1", ":30000"}
	for _, w := range want {
		if got := strings.TrimSuffix(c.Reply(), "\r\n"); got != w {
			t.Fatalf("reply %q, want %q (want all of %q)", got, w, want)
		}
	}

	time.Sleep(20 * time.Millisecond) // a later batch: real time has passed
	c.Send(multibulk("PTTL", "t:a"))
	got := strings.TrimSuffix(c.Reply(), "\r\n")
	n, err := strconv.Atoi(strings.TrimPrefix(got, ":"))
	if err != nil || n > 30000-20 || n < 0 {
		t.Fatalf("PTTL in a later batch, 20 ms on = %q, want at most 29980", got)
	}
}

// TestRESPValueOverMaxItemSizeKeepsOldValue: a bulk over the item size
// limit (but within Redis's 512 MB proto-max-bulk-len) is streamed
// through and dropped: the command is refused with Redis's error, the old
// value stays, the requests pipelined behind it are served in step, and
// the server allocates far less than the value's size while reading it.
func TestRESPValueOverMaxItemSizeKeepsOldValue(t *testing.T) {
	rs := startRESP(t, server.Config{MaxItemSize: 1 << 20}, store.Config{MaxItemSize: 1 << 20})
	c := dialRESP(t, rs.respAddr)
	c.Expect(multibulk("SET", "big", "old"), "+OK\r\n")
	const size = 8 << 20
	head := "*3\r\n$3\r\nSET\r\n$3\r\nbig\r\n$" + strconv.Itoa(size) + "\r\n"
	chunk := bytes.Repeat([]byte("v"), 64<<10)
	tail := "\r\n" + multibulk("MSET", "a", "1", "big", strings.Repeat("w", (1<<20)+1)) + multibulk("GET", "big") + multibulk("EXISTS", "a")
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before) // the client's strings are built above
	go func() {
		_, _ = io.WriteString(c.Conn, head)
		for range size / len(chunk) {
			if _, err := c.Conn.Write(chunk); err != nil {
				return
			}
		}
		_, _ = io.WriteString(c.Conn, tail)
	}()
	for _, want := range []string{"-" + errTooLarge + "\r\n", "-" + errTooLarge + "\r\n", "$3\r\nold\r\n", ":0\r\n"} {
		if got := c.Reply(); got != want {
			t.Fatalf("reply %q, want %q", got, want)
		}
	}
	runtime.ReadMemStats(&after)
	if grown := after.TotalAlloc - before.TotalAlloc; grown > size/2 {
		t.Errorf("reading a dropped %d-byte bulk allocated %d bytes", size, grown)
	}
	c.Send("*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$536870913\r\n")
	if got := c.Reply(); got != "-ERR Protocol error: invalid bulk length\r\n" || !c.Closed(5*time.Second) {
		t.Fatalf("bulk over proto-max-bulk-len: %q, want the protocol error and a close", got)
	}
}

// slowProtocol wraps a protocol so that every request takes 2 ms more.
type slowProtocol struct{ server.Protocol }

func (p slowProtocol) NewHandler(c *server.Conn) server.Handler {
	return slowHandler{p.Protocol.NewHandler(c)}
}

type slowHandler struct{ server.Handler }

func (h slowHandler) Serve() (server.Result, error) {
	time.Sleep(2 * time.Millisecond)
	return h.Handler.Serve()
}

package redis

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bradfitz/gomemcache/memcache"
	"github.com/minikv/minikv/internal/server"
	"github.com/minikv/minikv/internal/store"
)

// makeReplica makes the MiniKV server rs a replica of primary, announcing
// its RESP port (the servers of these tests are not started by cmd/minikv,
// which sets it), and waits for its link.
func makeReplica(t *testing.T, rs *respServer, primary string) {
	t.Helper()
	c := dialRESP(t, rs.respAddr)
	_, port, _ := net.SplitHostPort(rs.respAddr)
	if got := c.Do("CONFIG", "SET", "replica-announce-port", port); got != "+OK\r\n" {
		t.Fatalf("CONFIG SET replica-announce-port = %q", got)
	}
	host, pport, _ := net.SplitHostPort(primary)
	if got := c.Do("REPLICAOF", host, pport); got != "+OK\r\n" {
		t.Fatalf("REPLICAOF = %q", got)
	}
	waitFor(t, "the replica's link", func() bool { return infoField(t, rs.respAddr, "replication", "master_link_status") == "up" })
}

// ackedWriter writes keys prefix:0, prefix:1 ... to addr over RESP (SET)
// or memcached (set, with flags), until a write is refused or the
// connection ends, and keeps the ones acknowledged.
type ackedWriter struct {
	mu    sync.Mutex
	acked []int
	last  string // the reply that stopped it
	done  chan struct{}
}

func startWriter(t *testing.T, addr, prefix string, memcached bool) *ackedWriter {
	t.Helper()
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	w := &ackedWriter{done: make(chan struct{})}
	t.Cleanup(func() { nc.Close(); <-w.done })
	br := bufio.NewReader(nc)
	go func() {
		defer close(w.done)
		for i := 0; i < 1_000_000; i++ {
			k, v := fmt.Sprintf("%s:%d", prefix, i), fmt.Sprint("v", i)
			var reply string
			if memcached {
				if _, err := fmt.Fprintf(nc, "set %s %d 0 %d\r\n%s\r\n", k, i%7, len(v), v); err != nil {
					return
				}
				line, err := br.ReadString('\n')
				if err != nil {
					return
				}
				reply = strings.TrimRight(line, "\r\n")
				if reply != "STORED" {
					w.mu.Lock()
					w.last = reply
					w.mu.Unlock()
					return
				}
			} else {
				if _, err := nc.Write([]byte(multibulk("SET", k, v))); err != nil {
					return
				}
				reply, err = readRESPReply(br)
				if err != nil {
					return
				}
				if reply != "+OK\r\n" {
					w.mu.Lock()
					w.last = reply
					w.mu.Unlock()
					return
				}
			}
			w.mu.Lock()
			w.acked = append(w.acked, i)
			w.mu.Unlock()
		}
	}()
	return w
}

func (w *ackedWriter) count() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.acked)
}

// checkAcked requires every key w had acknowledged to hold its value on
// the server at addr.
func checkAcked(t *testing.T, w *ackedWriter, addr, prefix string) {
	t.Helper()
	c := dialRESP(t, addr)
	w.mu.Lock()
	acked := append([]int(nil), w.acked...)
	w.mu.Unlock()
	missing := 0
	for _, i := range acked {
		want := fmt.Sprint("v", i)
		if got := c.Do("GET", fmt.Sprintf("%s:%d", prefix, i)); got != "$"+strconv.Itoa(len(want))+"\r\n"+want+"\r\n" {
			if missing++; missing < 5 {
				t.Errorf("%s:%d, acknowledged before the failover, is %q on %s", prefix, i, got, addr)
			}
		}
	}
	if missing > 0 {
		t.Errorf("%d of %d acknowledged writes of %s missing", missing, len(acked), prefix)
	}
}

func role(t *testing.T, addr string) string { return infoField(t, addr, "replication", "role") }

// TestFailoverMiniKV: a MiniKV primary with two MiniKV replicas fails
// over to the one named (FAILOVER TO) while clients write on both ports:
// writes wait during the failover and are then refused as a replica's
// (READONLY), every write acknowledged before is on the new primary, the
// old primary follows it with a partial resync (PSYNC ... FAILOVER), and
// the other replica follows through the old primary under the new id.
// Then FAILOVER without TO hands the role back to the first replica that
// has caught up.
func TestFailoverMiniKV(t *testing.T) {
	p := startRESP(t, server.Config{}, store.Config{})
	r1 := startRESP(t, server.Config{}, store.Config{})
	r2 := startRESP(t, server.Config{}, store.Config{})
	c := dialRESP(t, p.respAddr)
	c.Do("SET", "before", "1")
	makeReplica(t, r1, p.respAddr)
	makeReplica(t, r2, p.respAddr)
	waitFor(t, "two replicas", func() bool { return infoField(t, p.respAddr, "replication", "connected_slaves") == "2" })
	oldID := infoField(t, p.respAddr, "replication", "master_replid")
	// Announced once it is a replica (cmd/minikv sets it to the RESP port).
	c.Do("CONFIG", "SET", "replica-announce-port", portOf(p.respAddr))

	rw := startWriter(t, p.respAddr, "resp", false)
	mw := startWriter(t, p.addr, "mc", true)
	waitFor(t, "writes", func() bool { return rw.count() > 200 && mw.count() > 200 })
	host, port, _ := net.SplitHostPort(r1.respAddr)
	if got := c.Do("FAILOVER", "TO", host, port); got != "+OK\r\n" {
		t.Fatalf("FAILOVER TO = %q", got)
	}
	waitFor(t, "the failover to end", func() bool {
		return infoField(t, p.respAddr, "replication", "master_failover_state") == "no-failover"
	})
	<-rw.done
	<-mw.done
	if !strings.HasPrefix(rw.last, "-READONLY") || !strings.HasPrefix(mw.last, "SERVER_ERROR READONLY") {
		t.Errorf("writes after the failover: RESP %q, memcached %q; want READONLY refusals", rw.last, mw.last)
	}
	if got := role(t, p.respAddr); got != "slave" {
		t.Fatalf("old primary's role = %q", got)
	}
	if got := role(t, r1.respAddr); got != "master" {
		t.Fatalf("target's role = %q", got)
	}
	if got := infoField(t, r1.respAddr, "replication", "master_replid2"); got != oldID {
		t.Errorf("target's master_replid2 = %q, want the old primary's %q", got, oldID)
	}
	checkAcked(t, rw, r1.respAddr, "resp")
	checkAcked(t, mw, r1.respAddr, "mc")
	waitFor(t, "the old primary's link to the new one", func() bool {
		return infoField(t, p.respAddr, "replication", "master_link_status") == "up"
	})
	if got := infoField(t, p.respAddr, "replication", "master_port"); got != port {
		t.Errorf("old primary follows port %q, want %s", got, port)
	}
	if got := infoField(t, r1.respAddr, "stats", "sync_full"); got != "0" {
		t.Errorf("sync_full on the new primary = %q: the old one should continue (PSYNC FAILOVER, +CONTINUE)", got)
	}

	// The new primary's writes reach both the old primary and the other
	// replica (through the old primary).
	n := dialRESP(t, r1.respAddr)
	if got := n.Do("SET", "after", "2"); got != "+OK\r\n" {
		t.Fatalf("SET on the new primary = %q", got)
	}
	for _, a := range []string{p.respAddr, r2.respAddr} {
		waitFor(t, "the write on "+a, func() bool { return dialRESP(t, a).Do("GET", "after") == "$1\r\n2\r\n" })
	}
	checkAcked(t, rw, r2.respAddr, "resp")
	checkAcked(t, mw, p.respAddr, "mc")

	// FAILOVER without TO: the old primary, caught up, takes over again.
	if got := n.Do("FAILOVER"); got != "+OK\r\n" {
		t.Fatalf("FAILOVER = %q", got)
	}
	waitFor(t, "the second failover", func() bool {
		return role(t, r1.respAddr) == "slave" && role(t, p.respAddr) == "master" &&
			infoField(t, r1.respAddr, "replication", "master_failover_state") == "no-failover"
	})
	if got := dialRESP(t, p.respAddr).Do("GET", "after"); got != "$1\r\n2\r\n" {
		t.Errorf("GET after on the primary again = %q", got)
	}
}

// fakeReplica asks addr for the stream (PSYNC) as a replica that listens
// on port and never acknowledges, so a failover to it waits.
func fakeReplica(t *testing.T, addr string, port int) net.Conn {
	t.Helper()
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	br := bufio.NewReader(nc)
	for _, cmd := range []string{multibulk("REPLCONF", "listening-port", strconv.Itoa(port)), multibulk("PSYNC", "?", "-1")} {
		if _, err := nc.Write([]byte(cmd)); err != nil {
			t.Fatal(err)
		}
		if line, err := br.ReadString('\n'); err != nil || line[0] == '-' {
			t.Fatalf("%q: %q %v", cmd, line, err)
		}
	}
	go func() { // take the snapshot and the stream, never answering
		buf := make([]byte, 64<<10)
		for {
			if _, err := br.Read(buf); err != nil {
				return
			}
		}
	}()
	return nc
}

// TestFailoverWaitsAbortsAndTimesOut: a replica that never catches up
// holds the failover in waiting-for-sync, with writes paused and
// REPLICAOF and a second FAILOVER refused; ABORT ends it and the paused
// write goes on; TIMEOUT ends it by itself; FORCE fails over when the
// timeout passes, and a target that refuses PSYNC FAILOVER aborts it,
// leaving the server a primary again.
func TestFailoverWaitsAbortsAndTimesOut(t *testing.T) {
	p := startRESP(t, server.Config{}, store.Config{})
	c := dialRESP(t, p.respAddr)
	// The fake replica's port: a listener that answers the handshake and
	// refuses PSYNC, as a server that is not its replica would.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	psyncs := make(chan string, 10)
	go func() {
		for {
			nc, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer nc.Close()
				br := bufio.NewReader(nc)
				for {
					req, err := readCommand(br)
					if err != nil {
						return
					}
					if strings.EqualFold(req[0], "psync") {
						psyncs <- strings.Join(req, " ")
						_, _ = nc.Write([]byte("-ERR no\r\n"))
						continue
					}
					_, _ = nc.Write([]byte("+OK\r\n"))
				}
			}()
		}
	}()
	port := ln.Addr().(*net.TCPAddr).Port
	fakeReplica(t, p.respAddr, port)
	waitFor(t, "the replica online", func() bool {
		return strings.Contains(infoField(t, p.respAddr, "replication", "slave0"), "state=online")
	})
	c.Do("SET", "k", "1") // the replica never acknowledges it
	state := func() string { return infoField(t, p.respAddr, "replication", "master_failover_state") }

	if got := c.Do("FAILOVER"); got != "+OK\r\n" {
		t.Fatalf("FAILOVER = %q", got)
	}
	if got := state(); got != "waiting-for-sync" {
		t.Errorf("master_failover_state = %q", got)
	}
	for req, want := range map[string]string{
		"FAILOVER":             "-ERR FAILOVER already in progress.\r\n",
		"REPLICAOF NO ONE":     "-ERR REPLICAOF not allowed while failing over.\r\n",
		"PSYNC ? -1":           "-NOMASTERLINK Can't SYNC while failing over\r\n",
		"FAILOVER TIMEOUT 100": "-ERR FAILOVER already in progress.\r\n",
	} {
		if got := c.Do(strings.Fields(req)...); got != want {
			t.Errorf("%s during a failover = %q, want %q", req, got, want)
		}
	}
	w := dialRESP(t, p.respAddr)
	w.Send(multibulk("SET", "k", "2")) // waits
	waitFor(t, "the write to wait", func() bool { return strings.Contains(c.Do("CLIENT", "LIST"), "flags=b") })
	if got := c.Do("GET", "k"); got != "$1\r\n1\r\n" {
		t.Errorf("GET during the failover = %q: the write ran", got)
	}
	if got := c.Do("FAILOVER", "ABORT"); got != "+OK\r\n" {
		t.Fatalf("FAILOVER ABORT = %q", got)
	}
	if got := w.Reply(); got != "+OK\r\n" {
		t.Errorf("the paused SET after ABORT = %q", got)
	}
	if got := state(); got != "no-failover" {
		t.Errorf("master_failover_state after ABORT = %q", got)
	}

	if got := c.Do("FAILOVER", "TIMEOUT", "50"); got != "+OK\r\n" {
		t.Fatalf("FAILOVER TIMEOUT 50 = %q", got)
	}
	waitFor(t, "the timeout", func() bool { return state() == "no-failover" })
	if got := c.Do("SET", "k", "3"); got != "+OK\r\n" {
		t.Errorf("SET after the timeout = %q", got)
	}

	if got := c.Do("FAILOVER", "TO", "127.0.0.1", strconv.Itoa(port), "FORCE", "TIMEOUT", "50"); got != "+OK\r\n" {
		t.Fatalf("FAILOVER FORCE = %q", got)
	}
	var psync string
	select {
	case psync = <-psyncs:
	case <-time.After(30 * time.Second):
	}
	if f := strings.Fields(psync); len(f) != 4 || f[3] != "FAILOVER" {
		t.Errorf("the target was sent %q, want PSYNC <replid> <offset> FAILOVER", psync)
	}
	waitFor(t, "the refused failover to abort", func() bool { return state() == "no-failover" && role(t, p.respAddr) == "master" })
	if got := c.Do("SET", "k", "4"); got != "+OK\r\n" {
		t.Errorf("SET after the aborted failover = %q", got)
	}
}

// readCommand reads one RESP array of bulk strings.
func readCommand(br *bufio.Reader) ([]string, error) {
	line, err := br.ReadString('\n')
	if err != nil {
		return nil, err
	}
	n, err := strconv.Atoi(strings.TrimSpace(line[1:]))
	if err != nil || line[0] != '*' {
		return nil, fmt.Errorf("not a command: %q", line)
	}
	out := make([]string, n)
	for i := range out {
		h, err := br.ReadString('\n')
		if err != nil {
			return nil, err
		}
		l, _ := strconv.Atoi(strings.TrimSpace(h[1:]))
		b := make([]byte, l+2)
		if _, err := io.ReadFull(br, b); err != nil {
			return nil, err
		}
		out[i] = string(b[:l])
	}
	return out, nil
}

// TestFailoverErrorsMatchRedis: FAILOVER's refusals and PSYNC FAILOVER's,
// on a primary without replicas, one with a replica, and a replica, as
// redis-server 7.0 words them.
func TestFailoverErrorsMatchRedis(t *testing.T) {
	redisP := startRedisServer(t, "--repl-diskless-sync-delay", "0")
	rp := dialRESP(t, redisP)
	mp := startRESP(t, server.Config{}, store.Config{})
	m := dialRESP(t, mp.respAddr)
	alone := [][]string{{"FAILOVER", "ABORT"}, {"FAILOVER"}, {"FAILOVER", "TIMEOUT", "0"}, {"FAILOVER", "TIMEOUT", "x"},
		{"FAILOVER", "TO", "h", "x"}, {"FAILOVER", "TO", "h", "1", "TO", "h", "2"}, {"FAILOVER", "FORCE"},
		{"FAILOVER", "ABORT", "TIMEOUT", "5"}, {"FAILOVER", "TIMEOUT", "5", "TIMEOUT", "6"}, {"FAILOVER", "TO"},
		{"FAILOVER", "abort", "x"}, {"FAILOVER", "TIMEOUT", "-1"}, {"PSYNC", "x", "1", "FAILOVER"}}
	compare := func(what string, reqs [][]string) {
		t.Helper()
		for _, req := range reqs {
			if want, got := rp.Do(req...), m.Do(req...); got != want {
				t.Errorf("%s: %v: MiniKV %q, redis-server %q", what, req, got, want)
			}
		}
	}
	compare("no replica", alone)

	startRedisServer(t, "--replicaof", "127.0.0.1", portOf(redisP))
	mr := startRESP(t, server.Config{}, store.Config{})
	makeReplica(t, mr, mp.respAddr)
	waitFor(t, "redis-server's replica", func() bool { return infoField(t, redisP, "replication", "connected_slaves") == "1" })
	compare("a replica", [][]string{{"FAILOVER", "FORCE"}, {"FAILOVER", "TO", "127.0.0.1", "1"},
		{"FAILOVER", "TO", "127.0.0.1", "1", "FORCE"}, {"FAILOVER", "TIMEOUT", "10", "FORCE"}, {"FAILOVER", "ABORT"}})

	// On a replica.
	redisR := startRedisServer(t, "--replicaof", "127.0.0.1", portOf(redisP))
	rp = dialRESP(t, redisR)
	m = dialRESP(t, mr.respAddr)
	waitFor(t, "the second replica", func() bool { return infoField(t, redisR, "replication", "master_link_status") == "up" })
	compare("on a replica", [][]string{{"FAILOVER"}, {"FAILOVER", "TO", "h", "1"}, {"FAILOVER", "ABORT"},
		{"PSYNC", "x", "1", "FAILOVER"}})
}

func portOf(addr string) string {
	_, port, _ := net.SplitHostPort(addr)
	return port
}

// TestFailoverRedisPrimaryPromotesMiniKV: FAILOVER on an unmodified
// redis-server primary hands its role to its MiniKV replica: MiniKV
// accepts PSYNC ... FAILOVER, promotes itself and answers +CONTINUE;
// Redis follows it, and every key is the same on both.
func TestFailoverRedisPrimaryPromotesMiniKV(t *testing.T) {
	primary := startRedisServer(t, "--repl-diskless-sync-delay", "0")
	rs := startRESP(t, server.Config{}, store.Config{})
	makeReplica(t, rs, primary)
	w := startWriter(t, primary, "k", false)
	waitFor(t, "writes", func() bool { return w.count() > 300 })
	p := dialRESP(t, primary)
	if got := p.Do("FAILOVER"); got != "+OK\r\n" {
		t.Fatalf("FAILOVER on redis-server = %q", got)
	}
	waitFor(t, "MiniKV promoted", func() bool { return role(t, rs.respAddr) == "master" })
	waitFor(t, "redis-server following MiniKV", func() bool {
		return infoField(t, primary, "replication", "master_link_status") == "up" &&
			infoField(t, primary, "replication", "master_failover_state") == "no-failover"
	})
	<-w.done
	if !strings.HasPrefix(w.last, "-READONLY") {
		t.Errorf("a write on redis-server after its failover = %q", w.last)
	}
	checkAcked(t, w, rs.respAddr, "k")
	if got := infoField(t, rs.respAddr, "stats", "sync_partial_ok"); got != "1" {
		t.Errorf("MiniKV's sync_partial_ok = %q, want 1 (redis-server continued)", got)
	}
	m := dialRESP(t, rs.respAddr)
	if got := m.Do("SET", "after", "1"); got != "+OK\r\n" {
		t.Fatalf("SET on MiniKV = %q", got)
	}
	waitFor(t, "the write on redis-server", func() bool { return p.Do("GET", "after") == "$1\r\n1\r\n" })
	keys := []string{"after"}
	for i := range w.count() + 1 {
		keys = append(keys, fmt.Sprint("k:", i))
	}
	sameKeys(t, rs.respAddr, primary, keys)
}

// TestFailoverMiniKVPromotesRedis: FAILOVER on a MiniKV primary hands its
// role to an unmodified redis-server replica, which promotes itself on
// MiniKV's PSYNC ... FAILOVER; MiniKV follows it with every key.
func TestFailoverMiniKVPromotesRedis(t *testing.T) {
	rs := startRESP(t, server.Config{}, store.Config{})
	logf := t.TempDir() + "/redis.log"
	replica := startRedisServer(t, "--replicaof", "127.0.0.1", portOf(rs.respAddr), "--logfile", logf)
	waitFor(t, "the Redis replica", func() bool { return infoField(t, replica, "replication", "master_link_status") == "up" })
	w := startWriter(t, rs.respAddr, "k", false)
	mw := startWriter(t, rs.addr, "mc", true)
	waitFor(t, "writes", func() bool { return w.count() > 300 && mw.count() > 300 })
	c := dialRESP(t, rs.respAddr)
	if got := c.Do("FAILOVER", "TO", "127.0.0.1", portOf(replica), "TIMEOUT", "30000"); got != "+OK\r\n" {
		t.Fatalf("FAILOVER = %q", got)
	}
	waitFor(t, "redis-server promoted", func() bool { return role(t, replica) == "master" })
	waitFor(t, "MiniKV following it", func() bool {
		return infoField(t, rs.respAddr, "replication", "master_link_status") == "up" &&
			infoField(t, rs.respAddr, "replication", "master_failover_state") == "no-failover"
	})
	<-w.done
	<-mw.done
	checkAcked(t, w, replica, "k")
	checkAcked(t, mw, replica, "mc")
	if got := infoField(t, replica, "stats", "sync_full"); got != "0" {
		t.Errorf("redis-server's sync_full = %q: MiniKV should continue", got)
	}
	r := dialRESP(t, replica)
	r.Do("SET", "after", "1")
	waitFor(t, "the write on MiniKV", func() bool { return c.Do("GET", "after") == "$1\r\n1\r\n" })
	log, _ := os.ReadFile(logf)
	if !strings.Contains(string(log), "MASTER MODE enabled (failover request") {
		t.Errorf("redis-server's log does not show the failover request:\n%s", log)
	}
}

// TestFlagsReachReplicas: memcached flags set on a MiniKV primary (by
// gomemcache and a raw connection) are read back the same from a MiniKV
// replica's memcached port, for items the replica got in its full
// resync's RDB and items it got on the stream; a redis-server replica of
// the same primary holds the same values byte for byte and logs no error.
func TestFlagsReachReplicas(t *testing.T) {
	p := startRESP(t, server.Config{}, store.Config{})
	gm := memcache.New(p.addr)
	raw := dial(t, p.addr)
	c := dialRESP(t, p.respAddr)
	set := func(phase string) map[string]uint32 {
		want := map[string]uint32{}
		for i := range 50 {
			k := fmt.Sprintf("%s:gm:%d", phase, i)
			f := uint32(i * 7919)
			if i == 49 {
				f = 1<<32 - 1
			}
			if err := gm.Set(&memcache.Item{Key: k, Value: []byte(fmt.Sprint("value ", i)), Flags: f}); err != nil {
				t.Fatal(err)
			}
			want[k] = f
			k = fmt.Sprintf("%s:raw:%d", phase, i)
			v := strings.Repeat("x", i)
			exp := 0
			if i%3 == 0 {
				exp = 1000
			}
			raw.Send(fmt.Sprintf("set %s %d %d %d\r\n%s\r\n", k, i, exp, len(v), v))
			if got := raw.Line(); got != "STORED" {
				t.Fatalf("set %s = %q", k, got)
			}
			want[k] = uint32(i)
		}
		// A flagged item that a RESP SET then replaces has no flags; an
		// append keeps them.
		k := phase + ":reset"
		raw.Send("set " + k + " 77 0 1\r\na\r\n")
		raw.Line()
		c.Do("SET", k, "b")
		want[k] = 0
		k = phase + ":append"
		raw.Send("set " + k + " 88 0 1\r\na\r\nappend " + k + " 0 0 1\r\nb\r\n")
		raw.Line()
		raw.Line()
		want[k] = 88
		return want
	}
	before := set("rdb")
	logf := t.TempDir() + "/redis.log"
	redisReplica := startRedisServer(t, "--replicaof", "127.0.0.1", portOf(p.respAddr), "--logfile", logf)
	r := startRESP(t, server.Config{}, store.Config{})
	makeReplica(t, r, p.respAddr)
	waitFor(t, "the Redis replica", func() bool {
		return infoField(t, redisReplica, "replication", "master_link_status") == "up"
	})
	after := set("stream")
	if got := c.Do("WAIT", "2", "30000"); got != ":2\r\n" {
		t.Fatalf("WAIT 2 = %q", got)
	}
	rm := memcache.New(r.addr)
	var keys []string
	for _, want := range []map[string]uint32{before, after} {
		for k, f := range want {
			keys = append(keys, k)
			pi, err := gm.Get(k)
			if err != nil {
				t.Fatalf("get %s on the primary: %v", k, err)
			}
			ri, err := rm.Get(k)
			if err != nil {
				t.Errorf("get %s on the MiniKV replica: %v", k, err)
				continue
			}
			if ri.Flags != f || pi.Flags != f || string(ri.Value) != string(pi.Value) {
				t.Errorf("%s: primary flags %d %q, replica flags %d %q, want flags %d", k, pi.Flags, pi.Value, ri.Flags, ri.Value, f)
			}
		}
	}
	sameKeys(t, p.respAddr, redisReplica, keys)
	log, err := os.ReadFile(logf)
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(log), "\n") {
		if l := strings.ToLower(line); strings.Contains(l, "error") || strings.Contains(l, "unrecognized") || strings.Contains(l, "critical") {
			t.Errorf("redis-server replica logged: %s", line)
		}
	}
	if !strings.Contains(string(log), "MASTER <-> REPLICA sync: Finished with success") {
		t.Errorf("redis-server replica's log does not show its sync:\n%s", log)
	}
}

// TestFailoverMiniKVReplicaHeldBack: a MiniKV primary's FAILOVER to a
// MiniKV replica that cannot apply the stream (its own CLIENT PAUSE
// WRITE holds its link's writes, as Redis pauses a primary's client too)
// waits, gives up at its TIMEOUT, is aborted by FAILOVER ABORT, and
// succeeds once the replica catches up.
func TestFailoverMiniKVReplicaHeldBack(t *testing.T) {
	p := startRESP(t, server.Config{}, store.Config{})
	r := startRESP(t, server.Config{}, store.Config{})
	c := dialRESP(t, p.respAddr)
	makeReplica(t, r, p.respAddr)
	rc := dialRESP(t, r.respAddr)
	if got := rc.Do("CLIENT", "PAUSE", "600000", "WRITE"); got != "+OK\r\n" {
		t.Fatalf("CLIENT PAUSE on the replica = %q", got)
	}
	c.Do("SET", "k", "1")
	state := func() string { return infoField(t, p.respAddr, "replication", "master_failover_state") }
	host, port, _ := net.SplitHostPort(r.respAddr)

	if got := c.Do("FAILOVER", "TO", host, port, "TIMEOUT", "300"); got != "+OK\r\n" {
		t.Fatalf("FAILOVER TO ... TIMEOUT 300 = %q", got)
	}
	waitFor(t, "the timeout", func() bool { return state() == "no-failover" })
	if got := role(t, p.respAddr); got != "master" {
		t.Errorf("role after the timeout = %q", got)
	}

	if got := c.Do("FAILOVER"); got != "+OK\r\n" {
		t.Fatalf("FAILOVER = %q", got)
	}
	if got := state(); got != "waiting-for-sync" {
		t.Errorf("master_failover_state = %q, want waiting-for-sync", got)
	}
	if got := c.Do("FAILOVER", "ABORT"); got != "+OK\r\n" {
		t.Fatalf("FAILOVER ABORT = %q", got)
	}
	if got := state(); got != "no-failover" {
		t.Errorf("master_failover_state after ABORT = %q", got)
	}
	if got := c.Do("SET", "k", "2"); got != "+OK\r\n" {
		t.Errorf("SET after ABORT = %q", got)
	}

	rc.Do("CLIENT", "UNPAUSE")
	if got := c.Do("FAILOVER", "TO", host, port, "TIMEOUT", "60000"); got != "+OK\r\n" {
		t.Fatalf("FAILOVER TO = %q", got)
	}
	waitFor(t, "the failover", func() bool { return role(t, r.respAddr) == "master" && state() == "no-failover" })
	if got := rc.Do("GET", "k"); got != "$1\r\n2\r\n" {
		t.Errorf("GET k on the new primary = %q", got)
	}
}

package redis

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/minikv/minikv/internal/server"
	"github.com/minikv/minikv/internal/store"
	"github.com/minikv/minikv/lsm/vfs"
)

// Chained replication (a replica of a replica), the primary's link as a
// client of its replica, repl-backlog-ttl, and resyncs after the backlog
// overflowed, against real redis-server peers where they apply.

// replKeys are the keys replWrites writes: k:<i> holds type i%6 (a
// string, a hash, a list, a set, a sorted set, a counter).
func replKeys() []string {
	var keys []string
	for i := range 36 {
		keys = append(keys, fmt.Sprintf("k:%d", i))
	}
	return keys
}

// replWriter writes replKeys' keys with commands of every type, on the
// RESP port and, for a MiniKV primary, the memcached port.
type replWriter struct {
	r    *rand.Rand
	resp *bufio.ReadWriter
	mc   *bufio.ReadWriter // nil: none
}

func newReplWriter(t *testing.T, seed uint64, respAddr, mcAddr string) *replWriter {
	t.Helper()
	conn := func(addr string) *bufio.ReadWriter {
		nc, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { nc.Close() })
		return bufio.NewReadWriter(bufio.NewReader(nc), bufio.NewWriter(nc))
	}
	w := &replWriter{r: rand.New(rand.NewPCG(seed, 11)), resp: conn(respAddr)}
	if mcAddr != "" {
		w.mc = conn(mcAddr)
	}
	return w
}

// write sends n commands (a pipeline of up to 16 at a time) and reads
// their replies; an error means the connection failed.
func (w *replWriter) write(n int) error {
	r := w.r
	for n > 0 {
		batch := min(n, 1+r.IntN(16))
		n -= batch
		replies := 0
		for range batch {
			i := r.IntN(36)
			k := fmt.Sprintf("k:%d", i)
			v := fmt.Sprintf("v%d", r.IntN(1000)) + strings.Repeat("x", r.IntN(4)*r.IntN(60))
			var cmd []string
			switch i % 6 {
			case 0:
				switch r.IntN(5) {
				case 0:
					cmd = []string{"SET", k, v, "PX", strconv.Itoa(200000 + r.IntN(100000))}
				case 1:
					cmd = []string{"APPEND", k, "+"}
				case 2:
					if w.mc != nil {
						fmt.Fprintf(w.mc, "set %s %d 0 %d\r\n%s\r\n", k, r.IntN(10), len(v), v)
						if err := w.mc.Flush(); err != nil {
							return err
						}
						if _, err := w.mc.ReadString('\n'); err != nil {
							return err
						}
						continue
					}
					cmd = []string{"SET", k, v}
				default:
					cmd = []string{"SET", k, v}
				}
			case 1:
				switch r.IntN(4) {
				case 0:
					cmd = []string{"HDEL", k, fmt.Sprint("f", r.IntN(40))}
				case 1:
					cmd = []string{"HINCRBY", k, "n", strconv.Itoa(r.IntN(9) - 4)}
				default:
					cmd = []string{"HSET", k, fmt.Sprint("f", r.IntN(40)), v}
				}
			case 2:
				switch r.IntN(4) {
				case 0:
					cmd = []string{"LPOP", k}
				case 1:
					cmd = []string{"LPUSH", k, v}
				default:
					cmd = []string{"RPUSH", k, v, fmt.Sprint(r.IntN(100))}
				}
			case 3:
				if r.IntN(3) == 0 {
					cmd = []string{"SREM", k, fmt.Sprint(r.IntN(60))}
				} else {
					cmd = []string{"SADD", k, fmt.Sprint(r.IntN(60)), v}
				}
			case 4:
				switch r.IntN(3) {
				case 0:
					cmd = []string{"ZINCRBY", k, "1.5", fmt.Sprint("m", r.IntN(30))}
				case 1:
					cmd = []string{"ZREM", k, fmt.Sprint("m", r.IntN(30))}
				default:
					cmd = []string{"ZADD", k, strconv.Itoa(r.IntN(100)), fmt.Sprint("m", r.IntN(30))}
				}
			case 5:
				cmd = []string{"INCRBY", k, strconv.Itoa(r.IntN(10))}
			}
			switch r.IntN(40) {
			case 0:
				cmd = []string{"DEL", k}
			case 1:
				cmd = []string{"EXPIRE", k, strconv.Itoa(300 + r.IntN(300))}
			case 2:
				cmd = []string{"PERSIST", k}
			case 3:
				// A transaction: on the stream as MULTI ... EXEC.
				w.resp.WriteString(multibulk("MULTI") + multibulk("INCR", "k:5") + multibulk("RPUSH", "k:2", v) +
					multibulk("HSET", "k:1", "tx", v) + multibulk("EXEC"))
				replies += 5
				continue
			}
			w.resp.WriteString(multibulk(cmd...))
			replies++
		}
		if err := w.resp.Flush(); err != nil {
			return err
		}
		for range replies {
			if _, err := readRESPReply(w.resp.Reader); err != nil {
				return err
			}
		}
	}
	return nil
}

// background writes until the returned stop is called, which returns
// the first error.
func (w *replWriter) background() (stop func() error) {
	quit := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		for {
			select {
			case <-quit:
				done <- nil
				return
			default:
			}
			if err := w.write(50); err != nil {
				done <- err
				return
			}
		}
	}()
	return func() error { close(quit); return <-done }
}

// caughtUp waits until each replica has applied the stream up to the
// primary's offset (the offsets of a chain are the primary's).
func caughtUp(t *testing.T, primary string, replicas ...string) {
	t.Helper()
	for _, r := range replicas {
		waitFor(t, "replica "+r+" to catch up", func() bool {
			off := infoField(t, primary, "replication", "master_repl_offset")
			return infoField(t, r, "replication", "master_link_status") == "up" &&
				infoField(t, r, "replication", "slave_repl_offset") == off
		})
	}
}

// replicaOf points the server at addr at primary.
func replicaOf(t *testing.T, addr, primary string) {
	t.Helper()
	host, port, _ := net.SplitHostPort(primary)
	if got := dialRESP(t, addr).Do("REPLICAOF", host, port); got != "+OK\r\n" {
		t.Fatalf("REPLICAOF %s on %s = %q", primary, addr, got)
	}
}

// testLogger is a server's log, shown when the test fails.
func testLogger(t *testing.T, name string) *slog.Logger {
	var mu sync.Mutex
	var buf bytes.Buffer
	t.Cleanup(func() {
		if t.Failed() {
			mu.Lock()
			t.Logf("%s's log:\n%s", name, buf.String())
			mu.Unlock()
		}
	})
	return slog.New(slog.NewTextHandler(lockedWriter{&mu, &buf}, nil))
}

type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (l lockedWriter) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(b)
}

// bigBacklog sets repl-backlog-size 256mb on each server, before its
// backlog is made.
func bigBacklog(t *testing.T, addrs ...string) {
	t.Helper()
	for _, a := range addrs {
		if got := dialRESP(t, a).Do("CONFIG", "SET", "repl-backlog-size", "256mb"); got != "+OK\r\n" {
			t.Fatalf("CONFIG SET repl-backlog-size on %s = %q", a, got)
		}
	}
}

// linkUp waits until each replica's link to its primary is up.
func linkUp(t *testing.T, addrs ...string) {
	t.Helper()
	for _, a := range addrs {
		waitFor(t, a+"'s link", func() bool { return infoField(t, a, "replication", "master_link_status") == "up" })
	}
}

// TestChainedReplicasFullResync: a MiniKV replica R1 of a MiniKV primary
// P serves full resyncs to replicas of its own, a MiniKV one (R2) and an
// unmodified redis-server, while P takes writes of every type on both
// ports; its snapshot stands at the offset it names, and the stream from
// there is P's. After WAIT on P and the chain caught up, every key holds
// the same type, value and TTL on all four.
func TestChainedReplicasFullResync(t *testing.T) {
	// With event loops, as cmd/minikv runs: the replicas apply their
	// streams in the loop, and R1's applier leaves it while its
	// snapshots hold the applier's lock.
	p := startRESP(t, server.Config{Logger: testLogger(t, "P"), EventLoops: 1}, store.Config{})
	r1 := startRESP(t, server.Config{Logger: testLogger(t, "R1"), EventLoops: 1}, store.Config{})
	r2 := startRESP(t, server.Config{Logger: testLogger(t, "R2"), EventLoops: 1}, store.Config{})
	// Backlogs that hold the whole test: a replica that fell behind one
	// would resync fully, which the counts below would take for a fault.
	bigBacklog(t, p.respAddr, r1.respAddr)
	w := newReplWriter(t, uint64(time.Now().UnixNano()), p.respAddr, p.addr)
	if err := w.write(500); err != nil {
		t.Fatal(err)
	}
	replicaOf(t, r1.respAddr, p.respAddr)
	linkUp(t, r1.respAddr)

	stop := w.background() // writes go on while R2 and the Redis replica attach
	replicaOf(t, r2.respAddr, r1.respAddr)
	_, r1Port, _ := net.SplitHostPort(r1.respAddr)
	redisLog := t.TempDir() + "/redis.log"
	redisReplica := startRedisServer(t, "--replicaof", "127.0.0.1", r1Port, "--logfile", redisLog)
	t.Cleanup(func() {
		if t.Failed() {
			b, _ := os.ReadFile(redisLog)
			t.Logf("the Redis replica's log:\n%s", b)
		}
	})
	linkUp(t, r2.respAddr, redisReplica)
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	if err := w.write(500); err != nil { // and after
		t.Fatal(err)
	}
	if got := dialRESP(t, p.respAddr).Do("WAIT", "1", "30000"); got != ":1\r\n" {
		t.Errorf("WAIT 1 30000 on P = %q", got)
	}
	caughtUp(t, p.respAddr, r1.respAddr, r2.respAddr, redisReplica)
	keys := replKeys()
	for _, r := range []string{r1.respAddr, r2.respAddr, redisReplica} {
		sameKeys(t, p.respAddr, r, keys)
	}
	if got := infoField(t, r1.respAddr, "stats", "sync_full"); got != "2" {
		t.Errorf("R1 counts sync_full %q, want 2 (R2 and the Redis replica)", got)
	}
	if got := infoField(t, p.respAddr, "stats", "sync_full"); got != "1" {
		t.Errorf("P counts sync_full %q, want 1 (R1)", got)
	}
	if got := infoField(t, r1.respAddr, "replication", "connected_slaves"); got != "2" {
		t.Errorf("R1 connected_slaves = %q, want 2", got)
	}
	for _, r := range []string{r2.respAddr, redisReplica} {
		if got, want := infoField(t, r, "replication", "master_replid"), infoField(t, p.respAddr, "replication", "master_replid"); got != want {
			t.Errorf("%s's master_replid = %q, want P's %q", r, got, want)
		}
	}

	// R2's link drops; it continues from R1's backlog.
	if got := dialRESP(t, r2.respAddr).Do("CLIENT", "KILL", "TYPE", "master"); got != ":1\r\n" {
		t.Errorf("CLIENT KILL TYPE master on R2 = %q", got)
	}
	if err := w.write(200); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "R2's partial resync", func() bool { return infoField(t, r1.respAddr, "stats", "sync_partial_ok") == "1" })
	caughtUp(t, p.respAddr, r2.respAddr, redisReplica)
	sameKeys(t, p.respAddr, r2.respAddr, keys)
	sameKeys(t, p.respAddr, redisReplica, keys)

	// R1 drops both its replicas' links; both continue from its backlog.
	if got := dialRESP(t, r1.respAddr).Do("CLIENT", "KILL", "TYPE", "replica"); got != ":2\r\n" {
		t.Errorf("CLIENT KILL TYPE replica on R1 = %q", got)
	}
	if err := w.write(200); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "both partial resyncs", func() bool { return infoField(t, r1.respAddr, "stats", "sync_partial_ok") == "3" })
	caughtUp(t, p.respAddr, r1.respAddr, r2.respAddr, redisReplica)
	for _, r := range []string{r1.respAddr, r2.respAddr, redisReplica} {
		sameKeys(t, p.respAddr, r, keys)
	}
	if got := infoField(t, r1.respAddr, "stats", "sync_full"); got != "2" {
		t.Errorf("R1 counts sync_full %q after the partial resyncs, want still 2", got)
	}
}

// TestRedisPrimaryChainedMiniKV: redis-server primary, MiniKV R1, MiniKV
// R2 of R1, attached while the primary runs Redis's own commands (INCR,
// LPUSH, HINCRBY, MULTI ...; applying one twice would change the
// state): R2's snapshot from R1 holds exactly the commands before the
// offset R1 names, and every key ends the same on all three.
func TestRedisPrimaryChainedMiniKV(t *testing.T) {
	primary := startRedisServer(t, "--repl-diskless-sync-delay", "0")
	r1 := startRESP(t, server.Config{EventLoops: 1}, store.Config{}) // applies Redis's stream in its loop
	r2 := startRESP(t, server.Config{}, store.Config{})
	bigBacklog(t, primary, r1.respAddr)
	w := newReplWriter(t, uint64(time.Now().UnixNano()), primary, "")
	if err := w.write(300); err != nil {
		t.Fatal(err)
	}
	replicaOf(t, r1.respAddr, primary)
	linkUp(t, r1.respAddr)
	stop := w.background()
	time.Sleep(50 * time.Millisecond) // R2 attaches while the writes stream (not a timing assertion)
	replicaOf(t, r2.respAddr, r1.respAddr)
	linkUp(t, r2.respAddr)
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	if err := w.write(300); err != nil { // and after
		t.Fatal(err)
	}
	if got := dialRESP(t, primary).Do("WAIT", "1", "30000"); got != ":1\r\n" {
		t.Errorf("WAIT 1 30000 on the Redis primary = %q", got)
	}
	caughtUp(t, primary, r1.respAddr, r2.respAddr)
	sameKeys(t, primary, r1.respAddr, replKeys())
	sameKeys(t, primary, r2.respAddr, replKeys())
	if got := infoField(t, r1.respAddr, "stats", "sync_full"); got != "1" {
		t.Errorf("R1 counts sync_full %q, want 1 (R2)", got)
	}
}

// clientFields are the field names of a CLIENT LIST line, in order.
func clientFields(line string) []string {
	var names []string
	for _, f := range strings.Fields(line) {
		k, _, _ := strings.Cut(f, "=")
		names = append(names, k)
	}
	return names
}

// listField is one field of a CLIENT LIST line.
func listField(line, name string) string {
	m := regexp.MustCompile(`(?:^| )` + regexp.QuoteMeta(name) + `=(\S*)`).FindStringSubmatch(line)
	if m == nil {
		return ""
	}
	return m[1]
}

// listLines is CLIENT LIST's reply as lines.
func listLines(reply string) []string {
	_, body, _ := strings.Cut(reply, "\r\n")
	body = strings.TrimPrefix(body, "txt:")
	var out []string
	for _, l := range strings.Split(strings.TrimSpace(body), "\n") {
		if l = strings.TrimSpace(l); strings.HasPrefix(l, "id=") {
			out = append(out, l)
		}
	}
	return out
}

// TestReplicaLinkIsAClient: a replica's link to its primary is listed by
// CLIENT LIST with flag M, the primary's address, the command it last
// ran and Redis's fields, in Redis's order (compared with a redis-server
// replica's line); CLIENT KILL TYPE master drops it and the replica
// continues with a partial resync, as Redis's does.
func TestReplicaLinkIsAClient(t *testing.T) {
	// Redis's own line, for the field set.
	redisPrimary := startRedisServer(t, "--repl-diskless-sync-delay", "0")
	_, rpPort, _ := net.SplitHostPort(redisPrimary)
	redisReplica := startRedisServer(t, "--replicaof", "127.0.0.1", rpPort)
	linkUp(t, redisReplica)
	dialRESP(t, redisPrimary).Do("SET", "a", "1")
	caughtUp(t, redisPrimary, redisReplica)
	want := listLines(dialRESP(t, redisReplica).Do("CLIENT", "LIST", "TYPE", "master"))
	if len(want) != 1 {
		t.Fatalf("redis-server lists %q as its master link", want)
	}

	p := startRESP(t, server.Config{}, store.Config{})
	r := startRESP(t, server.Config{}, store.Config{})
	replicaOf(t, r.respAddr, p.respAddr)
	linkUp(t, r.respAddr)
	pc := dialRESP(t, p.respAddr)
	pc.Do("SET", "a", "1")
	caughtUp(t, p.respAddr, r.respAddr)
	rc := dialRESP(t, r.respAddr)
	got := listLines(rc.Do("CLIENT", "LIST", "TYPE", "master"))
	if len(got) != 1 {
		t.Fatalf("CLIENT LIST TYPE master on the replica = %q, want one line", got)
	}
	line := got[0]
	if !slices.Equal(clientFields(line), clientFields(want[0])) {
		t.Errorf("fields %v, redis-server's %v", clientFields(line), clientFields(want[0]))
	}
	for k, v := range map[string]string{"flags": "M", "cmd": "set", "addr": p.respAddr, "user": listField(want[0], "user"),
		"db": "0", "multi": "-1", "name": ""} {
		if g := listField(line, k); g != v {
			t.Errorf("%s=%q in %q, want %q", k, g, line, v)
		}
	}
	masters := 0
	for _, l := range listLines(rc.Do("CLIENT", "LIST")) {
		if listField(l, "flags") == "M" {
			masters++
		}
	}
	if masters != 1 {
		t.Errorf("CLIENT LIST shows %d lines with flags=M, want the link's", masters)
	}
	for _, l := range listLines(rc.Do("CLIENT", "LIST", "TYPE", "normal")) {
		if listField(l, "flags") != "N" {
			t.Errorf("CLIENT LIST TYPE normal lists %q", l)
		}
	}

	// CLIENT KILL drops it; the replica continues from its offset.
	if got := rc.Do("CLIENT", "KILL", "TYPE", "master"); got != ":1\r\n" {
		t.Errorf("CLIENT KILL TYPE master = %q", got)
	}
	pc.Do("SET", "b", "2")
	pc.Do("INCR", "c")
	waitFor(t, "a partial resync", func() bool { return infoField(t, p.respAddr, "stats", "sync_partial_ok") == "1" })
	caughtUp(t, p.respAddr, r.respAddr)
	sameKeys(t, p.respAddr, r.respAddr, []string{"a", "b", "c"})
	if got := infoField(t, p.respAddr, "stats", "sync_full"); got != "1" {
		t.Errorf("sync_full = %q after CLIENT KILL TYPE master, want 1", got)
	}
	id := listField(listLines(rc.Do("CLIENT", "LIST", "TYPE", "master"))[0], "id")
	if got := rc.Do("CLIENT", "KILL", "ID", id); got != ":1\r\n" {
		t.Errorf("CLIENT KILL ID %s (the link) = %q", id, got)
	}
	waitFor(t, "a second partial resync", func() bool { return infoField(t, p.respAddr, "stats", "sync_partial_ok") == "2" })
	// INFO's connected_clients counts the link and not the replicas, as
	// redis-server's does: on each server, CLIENT LIST's lines (the
	// replica's link and the test's connections) and INFO's own
	// connection, without the replica's link on the primary. Polled:
	// connections the test closed may still be counted for a moment.
	var last string // the last counts that differed, for a failure
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("last counts that differed: %s", last)
		}
	})
	counted := func(addr string, links int) bool {
		c := dialRESP(t, addr)
		defer c.Conn.Close()
		list := c.Do("CLIENT", "LIST")
		info := c.Do("INFO", "clients")
		m := regexp.MustCompile(`connected_clients:(\d+)`).FindStringSubmatch(info)
		if m != nil && m[1] == strconv.Itoa(len(listLines(list))-links) {
			return true
		}
		last = fmt.Sprintf("%s: CLIENT LIST %q, INFO %q", addr, list, info)
		return false
	}
	waitFor(t, "the replica's connected_clients to count its link", func() bool { return counted(r.respAddr, 0) })
	waitFor(t, "the primary's connected_clients not to count its replica", func() bool { return counted(p.respAddr, 1) })
	waitFor(t, "redis-server's replica, the same", func() bool { return counted(redisReplica, 0) })
	waitFor(t, "redis-server's primary, the same", func() bool { return counted(redisPrimary, 1) })
	// A primary has no master link.
	if got := pc.Do("CLIENT", "KILL", "TYPE", "master"); got != ":0\r\n" {
		t.Errorf("CLIENT KILL TYPE master on the primary = %q", got)
	}
	if got, want := rc.Do("CONFIG", "GET", "replicaof"), "*2\r\n$9\r\nreplicaof\r\n$"; !strings.HasPrefix(got, want) ||
		!strings.Contains(got, strings.Replace(p.respAddr, ":", " ", 1)) {
		t.Errorf("CONFIG GET replicaof on the replica = %q", got)
	}
}

// TestReplBacklogTTL: with repl-backlog-ttl 1, a primary whose last
// replica left frees its backlog, as redis-server does: INFO says
// repl_backlog_active:0 and repl_backlog_first_byte_offset:0, the
// replication id changes, master_repl_offset stays; a replica that comes
// back resyncs fully and the offsets go on from there.
func TestReplBacklogTTL(t *testing.T) {
	p := startRESP(t, server.Config{}, store.Config{})
	r := startRESP(t, server.Config{}, store.Config{})
	pc := dialRESP(t, p.respAddr)
	if got := pc.Do("CONFIG", "GET", "repl-backlog-ttl"); got != "*2\r\n$16\r\nrepl-backlog-ttl\r\n$4\r\n3600\r\n" {
		t.Errorf("CONFIG GET repl-backlog-ttl = %q, want the default 3600", got)
	}
	pc.Do("CONFIG", "SET", "repl-backlog-ttl", "1")
	pc.Do("SET", "a", "1")
	replicaOf(t, r.respAddr, p.respAddr)
	linkUp(t, r.respAddr)
	pc.Do("SET", "b", "2")
	caughtUp(t, p.respAddr, r.respAddr)
	time.Sleep(2500 * time.Millisecond) // past the TTL: a connected replica keeps the backlog
	if got := infoField(t, p.respAddr, "replication", "repl_backlog_active"); got != "1" {
		t.Errorf("repl_backlog_active = %q with a replica connected", got)
	}
	replid := infoField(t, p.respAddr, "replication", "master_replid")
	if got := dialRESP(t, r.respAddr).Do("REPLICAOF", "NO", "ONE"); got != "+OK\r\n" {
		t.Fatal(got)
	}
	off := infoField(t, p.respAddr, "replication", "master_repl_offset")
	waitFor(t, "the backlog freed", func() bool { return infoField(t, p.respAddr, "replication", "repl_backlog_active") == "0" })
	for k, v := range map[string]string{"repl_backlog_first_byte_offset": "0", "repl_backlog_histlen": "0", "master_repl_offset": off,
		"master_replid2": "0000000000000000000000000000000000000000", "second_repl_offset": "-1"} {
		if got := infoField(t, p.respAddr, "replication", k); got != v {
			t.Errorf("%s = %q once the backlog is freed, want %q", k, got, v)
		}
	}
	if got := infoField(t, p.respAddr, "replication", "master_replid"); got == replid {
		t.Errorf("master_replid %q unchanged once the backlog is freed", got)
	}
	// redis-server, the same steps: the same fields once it freed its
	// backlog.
	rp := startRedisServer(t, "--repl-diskless-sync-delay", "0", "--repl-backlog-ttl", "1")
	_, rpPort, _ := net.SplitHostPort(rp)
	rr := startRedisServer(t, "--replicaof", "127.0.0.1", rpPort)
	dialRESP(t, rp).Do("SET", "a", "1")
	caughtUp(t, rp, rr)
	dialRESP(t, rr).Do("REPLICAOF", "NO", "ONE")
	waitFor(t, "redis-server to free its backlog", func() bool { return infoField(t, rp, "replication", "repl_backlog_active") == "0" })
	for _, k := range []string{"repl_backlog_first_byte_offset", "repl_backlog_histlen", "master_replid2", "second_repl_offset", "connected_slaves"} {
		if got, want := infoField(t, p.respAddr, "replication", k), infoField(t, rp, "replication", k); got != want {
			t.Errorf("%s = %q once the backlog is freed, redis-server's %q", k, got, want)
		}
	}

	// Writes are not streamed to a backlog that is not there.
	pc.Do("SET", "c", "3")
	if got := infoField(t, p.respAddr, "replication", "master_repl_offset"); got != off {
		t.Errorf("master_repl_offset = %q after a write with no backlog, want %q", got, off)
	}
	replicaOf(t, r.respAddr, p.respAddr)
	linkUp(t, r.respAddr)
	if got := infoField(t, p.respAddr, "stats", "sync_full"); got != "2" {
		t.Errorf("sync_full = %q after the replica came back, want 2", got)
	}
	pc.Do("SET", "d", "4")
	caughtUp(t, p.respAddr, r.respAddr)
	sameKeys(t, p.respAddr, r.respAddr, []string{"a", "b", "c", "d"})
	if o := offsetOf(infoField(t, p.respAddr, "replication", "master_repl_offset")); o <= offsetOf(off) {
		t.Errorf("master_repl_offset = %d, want past %s (the new backlog goes on from the old offset)", o, off)
	}
}

// offsetOf is an INFO offset as a number (0 when it is not one).
func offsetOf(s string) int { n, _ := strconv.Atoi(s); return n }

// linkProxy forwards connections to a server until it is cut: then it
// closes them, and every connection it accepts, until it is mended.
type linkProxy struct {
	addr   string
	mu     sync.Mutex
	down   bool
	conns  []net.Conn
	target string
}

func startLinkProxy(t *testing.T, target string) *linkProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	lp := &linkProxy{addr: ln.Addr().String(), target: target}
	t.Cleanup(func() { ln.Close(); lp.cut(true) })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			lp.mu.Lock()
			if lp.down {
				lp.mu.Unlock()
				c.Close()
				continue
			}
			s, err := net.Dial("tcp", target)
			if err != nil {
				lp.mu.Unlock()
				c.Close()
				continue
			}
			lp.conns = append(lp.conns, c, s)
			lp.mu.Unlock()
			go func() { _, _ = io.Copy(s, c); s.Close(); c.Close() }()
			go func() { _, _ = io.Copy(c, s); s.Close(); c.Close() }()
		}
	}()
	return lp
}

// cut closes the proxied connections and refuses new ones (down), or
// takes them again.
func (lp *linkProxy) cut(down bool) {
	lp.mu.Lock()
	defer lp.mu.Unlock()
	lp.down = down
	if down {
		for _, c := range lp.conns {
			c.Close()
		}
		lp.conns = nil
	}
}

// TestReplicaResyncAfterBacklogOverflow: MiniKV follows MiniKV; the link
// drops, and while it is down the primary writes more than its backlog
// (repl-backlog-size 16kb) holds; when the link comes back the replica's
// PSYNC cannot continue, it resyncs fully (sync_full and
// sync_partial_err grow), and every key ends the same. A replica of the
// replica, whose history the full resync replaced, is disconnected and
// resyncs from it, and ends the same too.
func TestReplicaResyncAfterBacklogOverflow(t *testing.T) {
	p := startRESP(t, server.Config{Logger: testLogger(t, "P")}, store.Config{})
	r := startRESP(t, server.Config{Logger: testLogger(t, "R")}, store.Config{})
	r2 := startRESP(t, server.Config{Logger: testLogger(t, "R2")}, store.Config{})
	pc := dialRESP(t, p.respAddr)
	if got := pc.Do("CONFIG", "SET", "repl-backlog-size", "16kb"); got != "+OK\r\n" {
		t.Fatal(got)
	}
	w := newReplWriter(t, uint64(time.Now().UnixNano()), p.respAddr, p.addr)
	if err := w.write(300); err != nil {
		t.Fatal(err)
	}
	lp := startLinkProxy(t, p.respAddr)
	replicaOf(t, r.respAddr, lp.addr)
	linkUp(t, r.respAddr)
	replicaOf(t, r2.respAddr, r.respAddr)
	linkUp(t, r2.respAddr)
	if err := w.write(300); err != nil {
		t.Fatal(err)
	}
	if got := pc.Do("WAIT", "1", "30000"); got != ":1\r\n" {
		t.Errorf("WAIT 1 = %q", got)
	}
	lp.cut(true)
	waitFor(t, "the link down", func() bool { return infoField(t, r.respAddr, "replication", "master_link_status") == "down" })
	base := offsetOf(infoField(t, p.respAddr, "replication", "master_repl_offset"))
	for offsetOf(infoField(t, p.respAddr, "replication", "master_repl_offset")) < base+4*16384 {
		if err := w.write(200); err != nil {
			t.Fatal(err)
		}
	}
	lp.cut(false)
	waitFor(t, "a full resync", func() bool { return infoField(t, p.respAddr, "stats", "sync_full") == "2" })
	if got := infoField(t, p.respAddr, "stats", "sync_partial_err"); got == "0" {
		t.Errorf("sync_partial_err = %q, want the refused PSYNC counted", got)
	}
	if err := w.write(200); err != nil {
		t.Fatal(err)
	}
	caughtUp(t, p.respAddr, r.respAddr, r2.respAddr)
	sameKeys(t, p.respAddr, r.respAddr, replKeys())
	sameKeys(t, p.respAddr, r2.respAddr, replKeys())
	if got := infoField(t, r.respAddr, "stats", "sync_full"); got != "2" {
		t.Errorf("the replica counts sync_full %q, want 2 (its replica's first sync and its resync after its own)", got)
	}
}

// TestDurableReplication: a durable MiniKV primary (--data-dir, here its
// engine on an in-memory filesystem), a durable replica, and a durable
// replica of that replica, which serves its full resync from a walk of
// its disk with the applier held: every key ends the same on all three.
func TestDurableReplication(t *testing.T) {
	_, pmc, p := startDurableOnMem(t, vfs.NewMem())
	_, _, r1 := startDurableOnMem(t, vfs.NewMem())
	_, _, r2 := startDurableOnMem(t, vfs.NewMem())
	w := newReplWriter(t, uint64(time.Now().UnixNano()), p, pmc)
	if err := w.write(300); err != nil {
		t.Fatal(err)
	}
	stop := w.background()
	replicaOf(t, r1, p)
	linkUp(t, r1)
	replicaOf(t, r2, r1)
	linkUp(t, r2)
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	if err := w.write(300); err != nil {
		t.Fatal(err)
	}
	if got := dialRESP(t, p).Do("WAIT", "1", "30000"); got != ":1\r\n" {
		t.Errorf("WAIT 1 = %q", got)
	}
	caughtUp(t, p, r1, r2)
	sameKeys(t, p, r1, replKeys())
	sameKeys(t, p, r2, replKeys())
	if got := infoField(t, r1, "stats", "sync_full"); got != "1" {
		t.Errorf("R1 counts sync_full %q, want 1 (R2's, from its disk)", got)
	}
}

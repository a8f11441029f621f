package main

// The disk under --data-dir fills up for real (issue 37): a tmpfs of a few
// tens of MB, part of it taken by a ballast file, holds the data
// directory of a MiniKV process (the test binary re-run through TestMain,
// as in crash_test.go), and real clients (go-redis, gomemcache) fill it
// until the kernel answers ENOSPC. Needs root (mount); skipped otherwise.

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/bradfitz/gomemcache/memcache"
	"github.com/redis/go-redis/v9"

	"github.com/minikv/minikv/internal/server/servertest"
)

// Texts of the refusals: Redis's MISCONF (strerror of ENOSPC) on the RESP
// port, MiniKV's own SERVER_ERROR on the memcached port.
const (
	misconfENOSPC = "MISCONF Errors writing to the AOF file: No space left on device"
	mcRefused     = "SERVER_ERROR writes refused: errors writing to the data directory: No space left on device"
	failedLogLine = "disk failed: writes refused, reads served; retrying every second"
	resumedLine   = "disk writes resumed"
)

// startDiskServer starts the whole command as a process of its own on dir
// with flags (--fsync ...) and the engine's default options (not
// crash_test.go's small memtables), and waits until its RESP port accepts. It fails the test,
// with the server's output, if the server exits first.
func startDiskServer(t *testing.T, dir, flags string) *crashServer {
	t.Helper()
	cs, err := tryStartDiskServer(t, dir, flags)
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

// tryStartDiskServer is startDiskServer returning the server's output as
// an error when it exits instead of listening.
func tryStartDiskServer(t *testing.T, dir, flags string) (*crashServer, error) {
	t.Helper()
	for attempt := 0; ; attempt++ {
		mcPort, respPort, adminPort := freePort(t), freePort(t), freePort(t)
		args := fmt.Sprintf("-l 127.0.0.1 -p %d --resp-port %d --admin-addr 127.0.0.1:%d --data-dir %s -m 16 %s",
			mcPort, respPort, adminPort, dir, flags)
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), "MINIKV_CRASH_CHILD="+args)
		cs := &crashServer{cmd: cmd, mc: fmt.Sprintf("127.0.0.1:%d", mcPort), resp: fmt.Sprintf("127.0.0.1:%d", respPort),
			admin: fmt.Sprintf("127.0.0.1:%d", adminPort), exited: make(chan struct{})}
		cs.out = &serverOutput{}
		cmd.Stdout, cmd.Stderr = cs.out, cs.out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		go func() { _ = cmd.Wait(); close(cs.exited) }()
		for range 3000 { // up to a minute: a restart replays the log
			if cs.out.listening(cs.resp) {
				t.Cleanup(cs.kill) // a failing test leaves no server behind
				return cs, nil
			}
			select {
			case <-cs.exited:
			case <-time.After(20 * time.Millisecond):
				continue
			}
			break
		}
		cs.kill()
		if attempt == 2 || !strings.Contains(cs.out.String(), "address already in use") {
			return nil, fmt.Errorf("the server did not start on %s: %s", dir, cs.out)
		}
	}
}

// fullModel records every write of the test: each key is written once,
// with a value of its own; acked says whether its reply acknowledged it.
// An acknowledged key must read back with its value; one that was not
// (refused, or its connection closed at the failure) may be absent or
// hold its value, nothing else.
type fullModel struct {
	mu    sync.Mutex
	vals  map[string]string
	acked map[string]bool
}

func (m *fullModel) sent(k, v string) {
	m.mu.Lock()
	m.vals[k] = v
	m.mu.Unlock()
}

func (m *fullModel) ack(k string) {
	m.mu.Lock()
	m.acked[k] = true
	m.mu.Unlock()
}

// keys returns the keys written, sorted, and how many were acknowledged.
func (m *fullModel) keys() ([]string, int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	ks := make([]string, 0, len(m.vals))
	for k := range m.vals {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks, len(m.acked)
}

// fullValue is a value of a few KB that no compression shrinks much.
func fullValue(r *rand.Rand, k string) string {
	b := make([]byte, 2000+r.IntN(4000))
	for i := range b {
		b[i] = 'a' + byte(r.IntN(26))
	}
	return k + ":" + string(b)
}

func newRedisClient(addr string) *redis.Client {
	return redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1, PoolSize: 2,
		DialTimeout: 10 * time.Second, ReadTimeout: 30 * time.Second, WriteTimeout: 30 * time.Second})
}

func newMemcacheClient(addr string) *memcache.Client {
	mc := memcache.New(addr)
	mc.Timeout = 30 * time.Second
	return mc
}

// fillUntilRefused writes distinct keys (prefix) through two go-redis and
// two gomemcache clients until one of them is refused for the disk. It
// returns how many writes were acknowledged. A write whose connection
// closed (its batch was running when the disk failed) is not
// acknowledged, and the client goes on on a new connection.
func fillUntilRefused(t *testing.T, cs *crashServer, m *fullModel, prefix string, seed uint64) int64 {
	t.Helper()
	var refused atomic.Bool
	var acks, writes, dropped atomic.Int64
	var firstRefusal atomic.Value
	const maxWrites = 40000 // 40000 × 4 KB: far more than the filesystem holds
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(seed, uint64(w)))
			rdb, mc := newRedisClient(cs.resp), newMemcacheClient(cs.mc)
			defer rdb.Close()
			for n := 0; !refused.Load() && writes.Add(1) <= maxWrites; n++ {
				k := fmt.Sprintf("%s-w%d-%d", prefix, w, n)
				v := fullValue(r, k)
				m.sent(k, v)
				var err error
				if w%2 == 0 {
					err = rdb.Set(context.Background(), k, v, 0).Err()
				} else {
					err = mc.Set(&memcache.Item{Key: k, Value: []byte(v)})
				}
				switch {
				case err == nil:
					m.ack(k)
					acks.Add(1)
				case strings.HasPrefix(err.Error(), "MISCONF ") || strings.Contains(err.Error(), "SERVER_ERROR writes refused"):
					firstRefusal.CompareAndSwap(nil, err.Error())
					refused.Store(true)
				default:
					// The connection was closed (its batch ran at the
					// failure) or another error: not acknowledged.
					dropped.Add(1)
					select {
					case <-cs.exited:
						refused.Store(true) // the server died: reported below
					default:
					}
				}
			}
		}()
	}
	wg.Wait()
	select {
	case <-cs.exited:
		t.Fatalf("the server exited while the disk filled up: %s", cs.out)
	default:
	}
	if !refused.Load() {
		t.Fatalf("%d writes and none refused: the disk never filled up", maxWrites)
	}
	t.Logf("%s: %d writes acknowledged, %d failed otherwise (closed connections), before the first refusal (%v); server log: %s",
		prefix, acks.Load(), dropped.Load(), firstRefusal.Load(), logLines(cs.out.String(), failedLogLine))
	return acks.Load()
}

// checkModel reads every key of the model through both ports (gomemcache
// GetMulti, go-redis MGET) and checks it against the model.
func checkModel(t *testing.T, cs *crashServer, m *fullModel) {
	t.Helper()
	keys, nacked := m.keys()
	mc, rdb := newMemcacheClient(cs.mc), newRedisClient(cs.resp)
	defer rdb.Close()
	present := 0
	for i := 0; i < len(keys); i += 100 {
		batch := keys[i:min(i+100, len(keys))]
		// A batch running when the disk fails has its connection closed,
		// reads too (the server starting on a full disk fails by itself,
		// in a background flush or compaction): read again, on a new one.
		var items map[string]*memcache.Item
		var vals []any
		for attempt := 0; ; attempt++ {
			var err1, err2 error
			items, err1 = mc.GetMulti(batch)
			if err1 == nil {
				vals, err2 = rdb.MGet(context.Background(), batch...).Result()
			}
			if err := errors.Join(err1, err2); err == nil {
				break
			} else if attempt == 3 || !isClosed(err) {
				t.Fatalf("reading %d keys (memcached get, then MGET): %v; log:\n%s", len(batch), err, cs.out)
			} else {
				t.Logf("reading %d keys: %v (the disk failed meanwhile?); reading again", len(batch), err)
			}
		}
		for j, k := range batch {
			m.mu.Lock()
			want, acked := m.vals[k], m.acked[k]
			m.mu.Unlock()
			it, ok := items[k]
			switch {
			case ok && string(it.Value) != want:
				t.Fatalf("memcached get %s = %.40q..., never written", k, it.Value)
			case !ok && acked:
				t.Fatalf("memcached get %s: absent, but its write was acknowledged", k)
			}
			switch v := vals[j].(type) {
			case nil:
				if acked {
					t.Fatalf("MGET %s: nil, but its write was acknowledged", k)
				}
				if ok {
					t.Fatalf("%s: MGET nil, memcached get has it", k)
				}
			case string:
				if v != want {
					t.Fatalf("MGET %s = %.40q..., never written", k, v)
				}
				if !ok {
					t.Fatalf("%s: MGET has it, memcached get not", k)
				}
			default:
				t.Fatalf("MGET %s: %T %v", k, v, v)
			}
			if ok {
				present++
			}
		}
	}
	t.Logf("model: %d keys written, %d acknowledged, %d present", len(keys), nacked, present)
}

// isClosed reports whether err is a connection the server closed.
func isClosed(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, net.ErrClosed)
}

// memcacheStat reads one field of the memcached port's stats.
func memcacheStat(t *testing.T, c *lineConn, name string) int64 {
	t.Helper()
	for _, line := range c.until("stats\r\n", "END") {
		if v, ok := strings.CutPrefix(line, "STAT "+name+" "); ok {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				t.Fatalf("stats %s = %q", name, v)
			}
			return n
		}
	}
	t.Fatalf("stats has no %s", name)
	return 0
}

// respRaw is a raw RESP connection: its replies are compared as bytes.
type respRaw struct {
	t  *testing.T
	nc net.Conn
	br *bufio.Reader
}

func dialRESPRaw(t *testing.T, addr string) *respRaw {
	t.Helper()
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	return &respRaw{t, nc, bufio.NewReader(nc)}
}

// do sends one command and returns its reply's bytes.
func (c *respRaw) do(args ...string) string {
	c.t.Helper()
	_ = c.nc.SetDeadline(time.Now().Add(30 * time.Second))
	if _, err := io.WriteString(c.nc, servertest.Multibulk(args...)); err != nil {
		c.t.Fatalf("%q: %v", args, err)
	}
	r, err := servertest.ReadRESPReply(c.br)
	if err != nil {
		c.t.Fatalf("%q: %v (read %q)", args, err, r)
	}
	return r
}

func (c *respRaw) expect(want string, args ...string) {
	c.t.Helper()
	if got := c.do(args...); got != want {
		c.t.Errorf("%q = %q, want %q", args, got, want)
	}
}

// httpGet returns the status and body of an admin endpoint.
func httpGet(t *testing.T, url string) (int, string) {
	t.Helper()
	c := &http.Client{Timeout: 30 * time.Second}
	res, err := c.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return res.StatusCode, string(body)
}

// TestDiskFullRealFilesystem shows what MiniKV does when the disk under
// --data-dir fills up for real, in fsync always (on event loops) and
// everysec (a goroutine per connection), on a 100 MB tmpfs with ballast
// files of 24 and 40 MB:
//
//   - writes from both ports are acknowledged until the kernel answers
//     ENOSPC, then refused: RESP with Redis's exact MISCONF text (SET,
//     INCR, DEL), EXEC of a queue holding a write with EXECABORT and the
//     MISCONF reason, a write queued in MULTI dooming EXEC; memcached with
//     the SERVER_ERROR line (set, delete, incr, ms even with q, mg with T),
//     a noreply set silently but counted in stats disk_refused_writes,
//     and stats disk_writes_refused 1;
//   - reads keep working with the acknowledged values: GET, MGET, EXISTS,
//     TTL, SCAN, MULTI of reads, memcached get, and PING, INFO, CONFIG GET,
//     pub/sub;
//   - /readyz is 503 "writes refused, the disk failed: ...", /healthz 200,
//     /metrics memcached_disk_writes_refused 1, INFO persistence
//     aof_last_write_status:err and the minikv_disk_* fields, and the log
//     says so once;
//   - once a ballast file is deleted, writes resume without a restart
//     (/readyz 200, disk_recoveries_total 1, INFO, the log says so once);
//   - full again and killed with SIGKILL while refusing, the server
//     starts again on the still-full directory, with every acknowledged
//     write, and once the other ballast file is deleted, writes resume
//     without a restart again;
//   - after more writes and another kill -9, every acknowledged write is
//     there.
//
// Every key is written once; a write not acknowledged (refused, or on a
// connection closed because its batch ran at the failure) may be absent
// or present with its value after the failure and each restart.
func TestDiskFullRealFilesystem(t *testing.T) {
	// Both ways of serving connections: event loops (the default) and a
	// goroutine per connection.
	for _, flags := range []string{"--fsync always", "--fsync everysec --event-loops 0"} {
		t.Run(strings.ReplaceAll(strings.ReplaceAll(flags, "--", ""), " ", "_"), func(t *testing.T) { diskFullCycle(t, flags) })
	}
}

func diskFullCycle(t *testing.T, flags string) {
	fs := servertest.MountTmpfs(t, "124m")
	// Two ballast files: deleting the first frees space for the recovery
	// without a restart, the second for the one after a restart. They
	// are large: with the engine's 4 MB memtables, a 5 MB preallocated
	// log each, and L0 compactions that write 16 MB and more before they
	// delete their inputs, the engine needs room to get going again.
	// The second frees more than the data directory then holds (about
	// 50 MB): with 40 MB, a compaction after the last recovery could
	// fill the disk again during the final acknowledged writes.
	ballastA, ballastB := filepath.Join(fs, "ballast-a"), filepath.Join(fs, "ballast-b")
	for b, size := range map[string]int{ballastA: 24 << 20, ballastB: 64 << 20} {
		if err := os.WriteFile(b, make([]byte, size), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	dir := filepath.Join(fs, "data")
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	ctx := context.Background()
	m := &fullModel{vals: map[string]string{}, acked: map[string]bool{}}

	cs := startDiskServer(t, dir, flags)
	rdb := newRedisClient(cs.resp)
	defer rdb.Close()
	// Set up before the disk fills: a key to read and INCR, a key with a
	// TTL, and a transaction with a write queued (EXEC comes after).
	for _, kv := range [][2]string{{"pre-counter", "10"}, {"pre-ttl", "t"}} {
		m.sent(kv[0], kv[1])
		if err := rdb.Set(ctx, kv[0], kv[1], 0).Err(); err != nil {
			t.Fatal(err)
		}
		m.ack(kv[0])
	}
	if err := rdb.Expire(ctx, "pre-ttl", time.Hour).Err(); err != nil {
		t.Fatal(err)
	}
	queued := dialRESPRaw(t, cs.resp)
	queued.expect("+OK\r\n", "MULTI")
	queued.expect("+QUEUED\r\n", "SET", "pre-queued", "x")
	sub := rdb.Subscribe(ctx, "ch")
	defer sub.Close()
	if _, err := sub.Receive(ctx); err != nil { // the subscribe confirmation
		t.Fatal(err)
	}

	fillUntilRefused(t, cs, m, "a", seed)

	// RESP: refusals, byte for byte, on a fresh connection.
	rc := dialRESPRaw(t, cs.resp)
	rc.expect("-"+misconfENOSPC+"\r\n", "SET", "x", "1")
	rc.expect("-"+misconfENOSPC+"\r\n", "INCR", "pre-counter")
	rc.expect("-"+misconfENOSPC+"\r\n", "DEL", "pre-counter")
	queued.expect("-EXECABORT Transaction discarded because of: "+misconfENOSPC+"\r\n", "EXEC")
	queued.expect("-ERR EXEC without MULTI\r\n", "EXEC") // discarded
	rc.expect("+OK\r\n", "MULTI")
	rc.expect("-"+misconfENOSPC+"\r\n", "SET", "x", "1")
	rc.expect("+QUEUED\r\n", "GET", "pre-counter")
	rc.expect("-EXECABORT Transaction discarded because of previous errors.\r\n", "EXEC")
	rc.expect("+OK\r\n", "MULTI")
	rc.expect("+QUEUED\r\n", "GET", "pre-counter")
	rc.expect("*1\r\n$2\r\n10\r\n", "EXEC")
	rc.expect("+PONG\r\n", "PING") // Redis refuses PING with MISCONF too: a documented difference
	// go-redis sees the same text.
	if err := rdb.Set(ctx, "x", "1", 0).Err(); err == nil || err.Error() != misconfENOSPC {
		t.Errorf("go-redis SET = %v, want %q", err, misconfENOSPC)
	}

	// RESP reads.
	if v, err := rdb.Get(ctx, "pre-counter").Result(); err != nil || v != "10" {
		t.Errorf("GET pre-counter = %q, %v; want 10", v, err)
	}
	if n, err := rdb.Exists(ctx, "pre-counter", "pre-ttl", "pre-queued", "x").Result(); err != nil || n != 2 {
		t.Errorf("EXISTS = %d, %v; want 2 (pre-counter, pre-ttl)", n, err)
	}
	if d, err := rdb.TTL(ctx, "pre-ttl").Result(); err != nil || d <= 0 || d > time.Hour {
		t.Errorf("TTL pre-ttl = %v, %v; want within an hour", d, err)
	}
	if d, err := rdb.TTL(ctx, "pre-counter").Result(); err != nil || d != -1 {
		t.Errorf("TTL pre-counter = %v, %v; want -1 (no expiry)", d, err)
	}
	var scanned []string
	for cursor := uint64(0); ; {
		ks, next, err := rdb.Scan(ctx, cursor, "pre-*", 1000).Result()
		if err != nil {
			t.Fatalf("SCAN: %v", err)
		}
		scanned = append(scanned, ks...)
		if cursor = next; cursor == 0 {
			break
		}
	}
	slices.Sort(scanned)
	if want := []string{"pre-counter", "pre-ttl"}; !slices.Equal(scanned, want) {
		t.Errorf("SCAN MATCH pre-* = %q, want %q", scanned, want)
	}
	if v, err := rdb.ConfigGet(ctx, "maxmemory").Result(); err != nil || len(v) != 1 {
		t.Errorf("CONFIG GET maxmemory = %v, %v", v, err)
	}
	if err := rdb.Publish(ctx, "ch", "hello").Err(); err != nil {
		t.Errorf("PUBLISH: %v", err)
	} else {
		rctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		if msg, err := sub.ReceiveMessage(rctx); err != nil || msg.Payload != "hello" {
			t.Errorf("subscriber got %v, %v; want hello", msg, err)
		}
		cancel()
	}

	// memcached: refusals, exact lines, and reads.
	mcc := dialLines(t, cs.mc)
	refusedBefore := memcacheStat(t, mcc, "disk_refused_writes")
	for _, req := range []string{"set x 0 0 1\r\nv\r\n", "delete pre-counter\r\n", "incr pre-counter 1\r\n",
		"touch pre-counter 10\r\n", "ms x 1 q\r\nv\r\n", "mg pre-counter v T30\r\n"} {
		if got := mcc.do(req, 1)[0]; got != mcRefused {
			t.Errorf("%q = %q, want %q", req, got, mcRefused)
		}
	}
	if got := mcc.do("set x 0 0 1 noreply\r\nv\r\nmn\r\n", 1)[0]; got != "MN" {
		t.Errorf("a noreply set while refusing answered %q, want no line (then MN)", got)
	}
	if got := memcacheStat(t, mcc, "disk_refused_writes") - refusedBefore; got != 7 {
		t.Errorf("disk_refused_writes grew by %d over 7 refused memcached writes (one noreply), want 7", got)
	}
	for name, want := range map[string]int64{"disk_writes_refused": 1, "disk_failures": 1, "disk_recoveries": 0} {
		if got := memcacheStat(t, mcc, name); got != want {
			t.Errorf("stats %s = %d, want %d", name, got, want)
		}
	}
	if got := mcc.do("get pre-counter\r\n", 3); got[0] != "VALUE pre-counter 0 2" || got[1] != "10" || got[2] != "END" {
		t.Errorf("get pre-counter = %q", got)
	}
	if got := mcc.do("mg pre-counter v\r\n", 2); got[0] != "VA 2" || got[1] != "10" {
		t.Errorf("mg pre-counter v = %q", got)
	}
	if err := newMemcacheClient(cs.mc).Set(&memcache.Item{Key: "x", Value: []byte("v")}); err == nil || !strings.Contains(err.Error(), mcRefused) {
		t.Errorf("gomemcache Set = %v, want the %q line", err, mcRefused)
	}

	// Watching.
	if code, body := httpGet(t, "http://"+cs.admin+"/readyz"); code != http.StatusServiceUnavailable || !strings.HasPrefix(body, "writes refused, the disk failed: ") {
		t.Errorf("/readyz = %d %q, want 503 \"writes refused, the disk failed: ...\"", code, body)
	}
	if code, _ := httpGet(t, "http://"+cs.admin+"/healthz"); code != http.StatusOK {
		t.Errorf("/healthz = %d, want 200", code)
	}
	wantMetric(t, cs, "memcached_disk_writes_refused", "1")
	wantMetric(t, cs, "memcached_disk_failures_total", "1")
	wantMetric(t, cs, "memcached_disk_recoveries_total", "0")
	if v, err := cs.metric("memcached_disk_refused_writes_total"); err != nil || v == "0" {
		t.Errorf("memcached_disk_refused_writes_total = %q, %v; want > 0", v, err)
	}
	info, err := rdb.Info(ctx, "persistence").Result()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"aof_last_write_status:err", "minikv_disk_writes_refused:1", "minikv_disk_failures:1", "minikv_disk_recoveries:0"} {
		if !strings.Contains(info, f+"\r\n") {
			t.Errorf("INFO persistence has no %q:\n%s", f, info)
		}
	}
	if !strings.Contains(info, "minikv_disk_refused_writes:") || strings.Contains(info, "minikv_disk_refused_writes:0\r\n") {
		t.Errorf("INFO persistence: minikv_disk_refused_writes missing or 0:\n%s", info)
	}
	checkModel(t, cs, m)
	if n := strings.Count(cs.out.String(), failedLogLine); n != 1 {
		t.Errorf("the log says %q %d times, want once:\n%s", failedLogLine, n, cs.out)
	}

	// Free space: writes resume without a restart.
	if err := os.Remove(ballastA); err != nil {
		t.Fatal(err)
	}
	waitResumed(t, cs, rdb, m, "resumed-1")
	if code, body := httpGet(t, "http://"+cs.admin+"/readyz"); code != http.StatusOK || body != "ok\n" {
		t.Errorf("/readyz after the recovery = %d %q, want 200 \"ok\\n\"", code, body)
	}
	wantMetric(t, cs, "memcached_disk_writes_refused", "0")
	wantMetric(t, cs, "memcached_disk_failures_total", "1")
	wantMetric(t, cs, "memcached_disk_recoveries_total", "1")
	mcc = dialLines(t, cs.mc)
	for name, want := range map[string]int64{"disk_writes_refused": 0, "disk_failures": 1, "disk_recoveries": 1} {
		if got := memcacheStat(t, mcc, name); got != want {
			t.Errorf("stats %s after the recovery = %d, want %d", name, got, want)
		}
	}
	if info, err := rdb.Info(ctx, "persistence").Result(); err != nil {
		t.Fatal(err)
	} else {
		for _, f := range []string{"aof_last_write_status:ok", "minikv_disk_writes_refused:0", "minikv_disk_recoveries:1"} {
			if !strings.Contains(info, f+"\r\n") {
				t.Errorf("INFO persistence after the recovery has no %q:\n%s", f, info)
			}
		}
	}
	if n := strings.Count(cs.out.String(), resumedLine); n != 1 {
		t.Errorf("the log says %q %d times, want once:\n%s", resumedLine, n, cs.out)
	}
	writeAcked(t, cs, m, "c", seed+2, 200)
	checkModel(t, cs, m)

	// Full again, killed with SIGKILL while refusing, started again on
	// the still-full directory.
	fillUntilRefused(t, cs, m, "d", seed+3)
	wantMetric(t, cs, "memcached_disk_failures_total", "2")
	if n := strings.Count(cs.out.String(), failedLogLine); n != 2 {
		t.Errorf("the log says %q %d times over two failures, want twice:\n%s", failedLogLine, n, cs.out)
	}
	cs.kill()
	rdb.Close()
	cs2, err := tryStartDiskServer(t, dir, flags)
	if err != nil {
		// The engine opens failed on a disk that refuses recovery's
		// writes (lsm.Options.OpenFailedOnWriteError): it must start.
		t.Fatalf("after kill -9 in the refused state, the server does not start on the still-full data directory: %v\n(the directory: %s)", err, dirListing(dir))
	}
	cs = cs2
	checkModel(t, cs, m)
	rdb = newRedisClient(cs.resp)
	defer func() { rdb.Close() }()
	// Started on the full disk: it may take some writes before it is
	// refused again (or refuse at once); fill until it is, then free
	// space: writes resume without a restart once more.
	fillUntilRefused(t, cs, m, "e", seed+4)
	checkModel(t, cs, m)
	if err := os.Remove(ballastB); err != nil {
		t.Fatal(err)
	}
	waitResumed(t, cs, rdb, m, "resumed-2")
	wantMetric(t, cs, "memcached_disk_recoveries_total", "1")

	// More writes, all acknowledged; kill -9; every one is there.
	writeAcked(t, cs, m, "f", seed+5, 200)
	checkModel(t, cs, m)
	cs.kill()
	cs = startDiskServer(t, dir, flags)
	checkModel(t, cs, m)
}

// waitResumed waits, up to 30 s (no timing is asserted), until a SET of
// key succeeds after space was freed: writes resume without a restart.
func waitResumed(t *testing.T, cs *crashServer, rdb *redis.Client, m *fullModel, key string) {
	t.Helper()
	ctx := context.Background()
	var err error
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		m.sent(key, "1")
		if err = rdb.Set(ctx, key, "1", 0).Err(); err == nil {
			m.ack(key)
			return
		} else if !strings.HasPrefix(err.Error(), "MISCONF ") && !isClosed(err) {
			t.Fatalf("SET while waiting for writes to resume: %v", err)
		}
	}
	t.Fatalf("writes did not resume within 30 s of freeing space (%v); log:\n%s", err, cs.out)
}

// writeAcked writes n distinct keys through both ports (go-redis and
// gomemcache, in turn); each must be acknowledged.
func writeAcked(t *testing.T, cs *crashServer, m *fullModel, prefix string, seed uint64, n int) {
	t.Helper()
	r := rand.New(rand.NewPCG(seed, 0))
	rdb, mc := newRedisClient(cs.resp), newMemcacheClient(cs.mc)
	defer rdb.Close()
	for i := range n {
		k := fmt.Sprintf("%s-%d", prefix, i)
		v := fullValue(r, k)
		m.sent(k, v)
		var err error
		if i%2 == 0 {
			err = rdb.Set(context.Background(), k, v, 0).Err()
		} else {
			err = mc.Set(&memcache.Item{Key: k, Value: []byte(v)})
		}
		if err != nil {
			time.Sleep(time.Second) // the log line of a failure may follow the close
			t.Fatalf("write %s (%d of %d) after the recovery: %v; log:\n%s", k, i, n, err, cs.out)
		}
		m.ack(k)
	}
}

// logLines returns the lines of the server's log that contain s.
func logLines(out, s string) string {
	var lines []string
	for line := range strings.Lines(out) {
		if strings.Contains(line, s) {
			lines = append(lines, strings.TrimSpace(line))
		}
	}
	return strings.Join(lines, "\n")
}

// wantMetric checks one series of the server's /metrics.
func wantMetric(t *testing.T, cs *crashServer, name, want string) {
	t.Helper()
	v, err := cs.metric(name)
	if err != nil {
		t.Error(err)
	} else if v != want {
		t.Errorf("%s = %s, want %s", name, v, want)
	}
}

// dirListing lists the files of dir with their sizes, and the space free
// on its filesystem.
func dirListing(dir string) string {
	var b strings.Builder
	ents, _ := os.ReadDir(dir)
	var total int64
	for _, e := range ents {
		fi, _ := e.Info()
		fmt.Fprintf(&b, "%s=%d ", e.Name(), fi.Size())
		total += fi.Size()
	}
	var st syscall.Statfs_t
	_ = syscall.Statfs(dir, &st)
	fmt.Fprintf(&b, "total=%d free=%d", total, int64(st.Bfree)*st.Bsize)
	return b.String()
}

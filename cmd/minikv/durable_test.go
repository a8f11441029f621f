package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// runDurable runs the command in-process on dir and returns its two
// addresses and startRun's stop function.
func runDurable(t *testing.T, dir string, extra ...string) (mc, resp string, stop func()) {
	t.Helper()
	mcPort, respPort := freePort(t), freePort(t)
	// SAVE writes dump.rdb in --dir: next to the data directory.
	args := append([]string{"-p", strconv.Itoa(mcPort), "--resp-port", strconv.Itoa(respPort), "--data-dir", dir,
		"--dir", filepath.Dir(dir)}, extra...)
	stop = startRun(t, args, nil)
	mc, resp = fmt.Sprintf("127.0.0.1:%d", mcPort), fmt.Sprintf("127.0.0.1:%d", respPort)
	waitDial(t, resp)
	return mc, resp, stop
}

// lineConn sends raw protocol lines and reads replies line by line.
type lineConn struct {
	t  *testing.T
	rw *bufio.ReadWriter
}

func dialLines(t *testing.T, addr string) *lineConn {
	t.Helper()
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	_ = nc.SetDeadline(time.Now().Add(30 * time.Second))
	return &lineConn{t, bufio.NewReadWriter(bufio.NewReader(nc), bufio.NewWriter(nc))}
}

// do sends req and returns the next n reply lines, without CRLF.
func (c *lineConn) do(req string, n int) []string {
	c.t.Helper()
	if _, err := c.rw.WriteString(req); err != nil {
		c.t.Fatal(err)
	}
	if err := c.rw.Flush(); err != nil {
		c.t.Fatal(err)
	}
	var out []string
	for range n {
		line, err := c.rw.ReadString('\n')
		if err != nil {
			c.t.Fatalf("after %q: %v (read %q)", req, err, out)
		}
		out = append(out, strings.TrimRight(line, "\r\n"))
	}
	return out
}

// until sends req and returns the reply lines up to and including end.
func (c *lineConn) until(req, end string) []string {
	c.t.Helper()
	out := c.do(req, 1)
	for out[len(out)-1] != end {
		out = append(out, c.do("", 1)...)
	}
	return out
}

// TestDurableModeEndToEnd: with --data-dir, writes from both ports survive
// a restart (with flags and TTL), SAVE/BGSAVE/LASTSAVE and INFO persistence
// answer as Redis's do with persistence on, stats shows the disk counters,
// and a second process on the same directory is refused with a clear
// message.
func TestDurableModeEndToEnd(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data") // created by MiniKV
	admin := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	mc, resp, stop := runDurable(t, dir, "--fsync", "always", "--admin-addr", admin)
	m := dialLines(t, mc)
	r := dialLines(t, resp)
	if got := m.do("set mk 42 0 5\r\nhello\r\n", 1); got[0] != "STORED" {
		t.Fatalf("set: %q", got)
	}
	if got := r.do("*5\r\n$3\r\nSET\r\n$2\r\nrk\r\n$5\r\nworld\r\n$2\r\nEX\r\n$4\r\n1000\r\n", 1); got[0] != "+OK" {
		t.Fatalf("SET: %q", got)
	}
	start := time.Now().Unix()
	if got := r.do("*1\r\n$4\r\nSAVE\r\n", 1); got[0] != "+OK" {
		t.Fatalf("SAVE: %q", got)
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(dir), "dump.rdb")); err != nil {
		t.Errorf("SAVE in durable mode wrote no RDB file: %v", err)
	}
	got := r.do("*1\r\n$8\r\nLASTSAVE\r\n", 1)
	if n, err := strconv.ParseInt(strings.TrimPrefix(got[0], ":"), 10, 64); err != nil || n < start-1 {
		t.Errorf("LASTSAVE = %q, want the time of the SAVE (%d)", got, start)
	}
	info := r.do("*2\r\n$4\r\nINFO\r\n$11\r\npersistence\r\n", 1)
	size, _ := strconv.Atoi(strings.TrimPrefix(info[0], "$"))
	body := make([]byte, size+2)
	if _, err := io.ReadFull(r.rw, body); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"aof_enabled:1", "rdb_changes_since_last_save:0", "aof_last_write_status:ok", "loading:0"} {
		if !strings.Contains(string(body), want+"\r\n") {
			t.Errorf("INFO persistence lacks %q:\n%s", want, body)
		}
	}
	if got := r.do("*1\r\n$6\r\nBGSAVE\r\n", 1); got[0] != "+Background saving started" && got[0] != "-ERR Background save already in progress" {
		t.Errorf("BGSAVE: %q", got)
	}
	stats := strings.Join(m.until("stats\r\n", "END"), "\n")
	for _, want := range []string{"STAT disk_writes 2", "STAT disk_changes_since_save 0", "STAT disk_hits 0",
		"STAT disk_compactions ", "STAT disk_flushing ", "STAT disk_compacting "} {
		if !strings.Contains(stats, want) {
			t.Errorf("stats lacks %q:\n%s", want, stats)
		}
	}
	if strings.Contains(stats, "STAT disk_flushes 0") || !strings.Contains(stats, "STAT disk_flushes ") {
		t.Errorf("stats after SAVE (which flushes the engine) should count a flush in disk_flushes:\n%s", stats)
	}

	res, err := http.Get("http://" + admin + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	metrics, _ := io.ReadAll(res.Body)
	res.Body.Close()
	for _, want := range []string{"memcached_disk_writes_total 2", "memcached_disk_changes_since_save 0", "memcached_disk_last_save_timestamp_seconds ",
		"memcached_disk_flushes_total ", "memcached_disk_compactions_total ", "memcached_disk_flushing ", "memcached_disk_compacting "} {
		if !strings.Contains(string(metrics), want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}

	res, err = http.Get("http://" + admin + "/doctor")
	if err != nil {
		t.Fatal(err)
	}
	doctor, _ := io.ReadAll(res.Body)
	res.Body.Close()
	for _, check := range []string{"disk_space", "disk_write_stalls", "disk_fsync", "disk_errors"} {
		if !strings.Contains(string(doctor), `"name": "`+check+`"`) {
			t.Errorf("/doctor lacks the %s check:\n%s", check, doctor)
		}
	}

	// A second process on the same directory is refused.
	err = run(context.Background(), []string{"-p", strconv.Itoa(freePort(t)), "--resp-port", "0", "--admin-addr", "",
		"--data-dir", dir}, func(string) string { return "" }, io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "in use by another process") {
		t.Errorf("second process on the data directory: %v, want a refusal naming the LOCK", err)
	}
	stop()

	mc, resp, _ = runDurable(t, dir)
	m = dialLines(t, mc)
	r = dialLines(t, resp)
	// Before any read brings them back into memory, the keyspace walks
	// find both keys on disk.
	if got := r.do("*1\r\n$6\r\nDBSIZE\r\n", 1); got[0] != ":2" {
		t.Errorf("after the restart, DBSIZE = %q, want :2", got)
	}
	if got := strings.Join(r.do("*2\r\n$4\r\nKEYS\r\n$1\r\n*\r\n", 5), " "); got != "*2 $2 mk $2 rk" {
		t.Errorf("after the restart, KEYS * = %q", got)
	}
	if got := strings.Join(r.do("*2\r\n$4\r\nSCAN\r\n$1\r\n0\r\n", 8), " "); got != "*2 $1 0 *2 $2 mk $2 rk" {
		t.Errorf("after the restart, SCAN 0 = %q", got)
	}
	if got := m.do("get mk\r\n", 3); got[0] != "VALUE mk 42 5" || got[1] != "hello" {
		t.Errorf("after the restart, get mk = %q", got)
	}
	if got := r.do("*2\r\n$3\r\nTTL\r\n$2\r\nrk\r\n", 1); !ttlNear(got[0], 1000) {
		t.Errorf("after the restart, TTL rk = %q, want about 1000", got)
	}
	if got := r.do("*2\r\n$3\r\nGET\r\n$2\r\nrk\r\n", 2); got[1] != "world" {
		t.Errorf("after the restart, GET rk = %q", got)
	}
	if _, err := os.Stat(filepath.Join(dir, "LOCK")); err != nil {
		t.Errorf("no LOCK file in the data directory: %v", err)
	}
}

// ttlNear reports whether a TTL reply is within 10 s below want.
func ttlNear(reply string, want int) bool {
	n, err := strconv.Atoi(strings.TrimPrefix(reply, ":"))
	return err == nil && n <= want && n > want-10
}

// TestDurableDiskLimit: with --disk-limit, writing well past the bound
// makes the server drop the oldest items for good, counted in stats, and
// the data directory comes back under the bound; the newest items stay.
func TestDurableDiskLimit(t *testing.T) {
	dir := t.TempDir()
	mc, _, _ := runDurable(t, dir, "--disk-limit", "16m", "-m", "8", "--fsync", "no")
	m := dialLines(t, mc)
	value := strings.Repeat("v", 10000)
	const n = 4000 // 40 MB
	var req strings.Builder
	for i := range n {
		fmt.Fprintf(&req, "set k%05d 0 0 %d noreply\r\n%s\r\n", i, len(value), value)
		if i%100 == 99 {
			m.do(req.String(), 0)
			req.Reset()
		}
	}
	if got := m.do("set last 0 0 1\r\nx\r\n", 1); got[0] != "STORED" {
		t.Fatalf("set: %q", got)
	}
	stat := func(name string) int64 {
		for _, l := range m.until("stats\r\n", "END") {
			if v, ok := strings.CutPrefix(l, "STAT "+name+" "); ok {
				n, _ := strconv.ParseInt(v, 10, 64)
				return n
			}
		}
		t.Fatalf("stats has no %s", name)
		return 0
	}
	// The bound is checked every second; wait (a long time on a loaded
	// machine) for the trim to have happened.
	deadline := time.Now().Add(2 * time.Minute)
	for stat("disk_evictions") == 0 || stat("disk_bytes") > 16<<20 {
		if time.Now().After(deadline) {
			t.Fatalf("no trim: disk_bytes %d, disk_evictions %d", stat("disk_bytes"), stat("disk_evictions"))
		}
		time.Sleep(100 * time.Millisecond)
	}
	if got := stat("disk_limit"); got != 16<<20 {
		t.Errorf("disk_limit = %d", got)
	}
	if got := m.do("get k00000\r\n", 1); got[0] != "END" {
		t.Errorf("the oldest item survived the trim: %q", got)
	}
	if got := m.do("get last\r\n", 3); got[1] != "x" {
		t.Errorf("the newest item is gone: %q", got)
	}
}

// TestEngineMemTableFollowsMemoryLimit pins how -m sizes the engine's
// memtables: the default 4 MiB up to -m 256, a 64th of -m above, 16 MiB
// at most (docs/durability.md, "Memtables sized by -m").
func TestEngineMemTableFollowsMemoryLimit(t *testing.T) {
	for _, c := range []struct{ m, want int64 }{
		{16 << 20, 4 << 20}, {64 << 20, 4 << 20}, {256 << 20, 4 << 20},
		{512 << 20, 8 << 20}, {1 << 30, 16 << 20}, {8 << 30, 16 << 20},
	} {
		if got := engineMemTable(c.m); int64(got) != c.want {
			t.Errorf("-m %d MiB: memtable %d MiB, want %d", c.m>>20, got>>20, c.want>>20)
		}
	}
}

// respArgs is a RESP multibulk request of args.
func respArgs(args ...string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "*%d\r\n", len(args))
	for _, a := range args {
		fmt.Fprintf(&b, "$%d\r\n%s\r\n", len(a), a)
	}
	return b.String()
}

// TestDurableFarFutureExpiriesSurviveRestart: deadlines past 2262, where
// int64 nanoseconds end, set on both ports, some checkpointed into tables
// and fully compacted, some left in the log, read back exactly after a
// restart on both ports (PEXPIRETIME, EXPIRETIME, TTL, mg's t), and none
// is taken for expired by the keyspace walk.
func TestDurableFarFutureExpiriesSurviveRestart(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	mc, resp, stop := runDurable(t, dir, "--fsync", "always")
	m := dialLines(t, mc)
	r := dialLines(t, resp)
	want := map[string]string{ // key -> PEXPIRETIME
		"t:exat":  ":33177117420000",
		"t:pxat":  ":9223372036854775807",
		"t:expat": ":9223372036854775000",
		"t:mc":    ":33177117420000",
		"l:pexat": ":9223372036854775806",
		"l:mc":    ":9223372036854775000",
	}
	for _, req := range []string{
		respArgs("SET", "t:exat", "v", "EXAT", "33177117420"),
		respArgs("SET", "t:pxat", "v", "PXAT", "9223372036854775807"),
		respArgs("SET", "t:expat", "v"),
		respArgs("EXPIREAT", "t:expat", "9223372036854775"),
	} {
		if got := r.do(req, 1); got[0] != "+OK" && got[0] != ":1" {
			t.Fatalf("%q: %q", req, got)
		}
	}
	if got := m.do("set t:mc 0 33177117420 1\r\nx\r\n", 1); got[0] != "STORED" {
		t.Fatalf("set t:mc: %q", got)
	}
	if got := r.do(respArgs("SAVE"), 1); got[0] != "+OK" {
		t.Fatalf("SAVE: %q", got)
	}
	if got := r.do(respArgs("BGREWRITEAOF"), 1); !strings.HasPrefix(got[0], "+") {
		t.Fatalf("BGREWRITEAOF: %q", got)
	}
	for { // until the full compaction has finished: it must keep them all
		info := strings.Join(r.until(respArgs("INFO", "persistence"), ""), "\n")
		if strings.Contains(info, "aof_rewrite_in_progress:0") {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	// Left in the log, replayed at the restart.
	if got := r.do(respArgs("SET", "l:pexat", "v", "PXAT", "9223372036854775806"), 1); got[0] != "+OK" {
		t.Fatalf("SET l:pexat: %q", got)
	}
	if got := m.do("set l:mc 0 9223372036854775 1\r\nx\r\n", 1); got[0] != "STORED" {
		t.Fatalf("set l:mc: %q", got)
	}
	stop()

	mc, resp, _ = runDurable(t, dir)
	m = dialLines(t, mc)
	r = dialLines(t, resp)
	if got := r.do(respArgs("DBSIZE"), 1); got[0] != fmt.Sprintf(":%d", len(want)) {
		t.Errorf("after the restart, DBSIZE = %q, want :%d", got, len(want))
	}
	for k, w := range want {
		if got := r.do(respArgs("PEXPIRETIME", k), 1); got[0] != w {
			t.Errorf("after the restart, PEXPIRETIME %s = %q, want %q", k, got, w)
		}
	}
	if got := r.do(respArgs("EXPIRETIME", "t:pxat"), 1); got[0] != ":9223372036854776" {
		t.Errorf("after the restart, EXPIRETIME t:pxat = %q, want :9223372036854776", got)
	}
	left := 33177117420 - time.Now().Unix() // an hour of slack: a wrong deadline is off by centuries
	got := r.do(respArgs("TTL", "t:exat"), 1)
	if n, err := strconv.ParseInt(strings.TrimPrefix(got[0], ":"), 10, 64); err != nil || n < left-3600 || n > left+3600 {
		t.Errorf("after the restart, TTL t:exat = %q, want about %d", got, left)
	}
	got = m.do("mg t:mc t v\r\n", 2)
	var ttl int64
	if _, err := fmt.Sscanf(got[0], "VA 1 t%d", &ttl); err != nil || ttl < left-3600 || ttl > left+3600 || got[1] != "x" {
		t.Errorf("after the restart, mg t:mc t v = %q, want VA 1 t<about %d>, x", got, left)
	}
}

// TestDurableBigValue: in durable mode a 5 MB value set over RESP (above
// memcached's 1 MiB -I, within proto-max-bulk-len), and one grown past
// 1 MiB by APPEND, are in the log before their replies and come back
// whole after a restart, on both ports.
func TestDurableBigValue(t *testing.T) {
	dir := t.TempDir()
	mc, resp, stop := runDurable(t, dir, "--fsync", "always")
	r := dialLines(t, resp)
	big := make([]byte, 5<<20)
	for i := range big {
		big[i] = 'a' + byte(i%23)
	}
	if got := r.do("*3\r\n$3\r\nSET\r\n$3\r\nbig\r\n$"+strconv.Itoa(len(big))+"\r\n"+string(big)+"\r\n", 1); got[0] != "+OK" {
		t.Fatalf("SET of 5 MB: %q", got)
	}
	chunk := strings.Repeat("c", 700<<10)
	for range 2 {
		r.do("*3\r\n$6\r\nAPPEND\r\n$5\r\ngrown\r\n$"+strconv.Itoa(len(chunk))+"\r\n"+chunk+"\r\n", 1)
	}
	stop()

	mc, resp, _ = runDurable(t, dir)
	r = dialLines(t, resp)
	if got := r.do("*2\r\n$3\r\nGET\r\n$3\r\nbig\r\n", 2); got[0] != "$"+strconv.Itoa(len(big)) || got[1] != string(big) {
		t.Errorf("after the restart, GET big: header %q, value equal %v", got[0], got[1] == string(big))
	}
	if got := r.do("*2\r\n$6\r\nSTRLEN\r\n$5\r\ngrown\r\n", 1); got[0] != ":"+strconv.Itoa(2*len(chunk)) {
		t.Errorf("after the restart, STRLEN grown = %q, want %d", got, 2*len(chunk))
	}
	m := dialLines(t, mc)
	if got := m.do("get grown\r\n", 3); got[0] != "VALUE grown 0 "+strconv.Itoa(2*len(chunk)) || got[1] != chunk+chunk || got[2] != "END" {
		t.Errorf("after the restart, memcached get grown: %q", got[0])
	}
}

package redis

import (
	"bufio"
	"io"
	"net"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/minikv/minikv/internal/protocol/resp"
	"github.com/minikv/minikv/internal/server"
	"github.com/minikv/minikv/internal/server/servertest"
	"github.com/minikv/minikv/internal/store"
)

// The operational surface against redis-server 7.0.15, on fresh servers
// (these tests read server-wide counters): commandstats and errorstats
// after a known sequence, SLOWLOG entries, LATENCY, INFO's sections,
// MONITOR's stream; then MiniKV alone: MONITOR over both ports with
// go-redis's Monitor API, a monitor that does not read, and INFO parsed
// as redis_exporter parses it.

// dispatchConn is a connection of p without a socket, authenticated,
// whose replies are dropped: for tests that call dispatch directly. The
// slow log is off (an entry names the client's address, and a command
// slowed down by a loaded machine would allocate one).
func dispatchConn(p *Protocol) *conn {
	p.ops.update(func(s *opsSettings) { s.slowlogSlower = -1 })
	rc := &conn{Conn: new(server.Conn), p: p, st: p.st, stats: p.ops.stats.register()}
	rc.SetAuthed()
	rc.SetACLUser(p.srv.ACL().Default()) // a bare server.Conn has no server to ask
	rc.r = resp.NewReader(strings.NewReader(""), server.ReadBufSize, 1<<20)
	rc.w = resp.NewWriter(io.Discard, server.WriteBufSize)
	rc.w.SetErrorHook(rc.countError)
	return rc
}

// opsSequence exercises calls, refusals and errors: arity, unknown
// commands and subcommands, WRONGTYPE, syntax errors, transactions with
// queued and runtime errors, RESP2 subscribed mode, NOPROTO.
var opsSequence = [][]string{
	{"SET", "a", "1"}, {"GET", "a"}, {"GET"}, {"FOO"}, {"CLIENT", "FOO"}, {"CLIENT"}, {"SET", "x", "y", "z"},
	{"LPUSH", "a", "v"}, {"INCR", "a"}, {"HSET", "h", "f", "v"}, {"HGET", "h"}, {"HGET", "h", "f"},
	{"MULTI"}, {"SET", "m", "1"}, {"INCR", "m"}, {"LPUSH", "m", "x"}, {"EXEC"},
	{"MULTI"}, {"SET"}, {"EXEC"}, {"EXEC"}, {"DISCARD"}, {"MULTI"}, {"MULTI"}, {"DISCARD"},
	{"CLIENT", "GETNAME"}, {"CLIENT", "SETNAME", "a b"}, {"CONFIG", "GET", "maxmemory"}, {"CONFIG", "GET"},
	{"OBJECT", "ENCODING", "a"}, {"OBJECT", "FOO"}, {"ZADD", "z", "x", "y"}, {"ECHO"}, {"PING"},
	{"HELLO", "4"}, {"HELLO", "x"}, {"SLOWLOG", "GET", "x"}, {"LATENCY", "FOO"}, {"COMMAND", "GETKEYS", "ping", "x"},
	{"SUBSCRIBE", "ch"}, {"GET", "a"}, {"PING"}, {"UNSUBSCRIBE"}, {"GET", "a"},
}

// runSequence sends each command and reads its reply (a SUBSCRIBE or
// UNSUBSCRIBE reply per channel: one here).
func runSequence(t *testing.T, c *cmdConn, seq [][]string) {
	t.Helper()
	for _, args := range seq {
		c.do(t, args...)
	}
}

// infoFields parses INFO sections into name -> value.
func infoFields(info string) map[string]string {
	out := make(map[string]string)
	for _, l := range strings.Split(info, "\r\n") {
		if k, v, ok := strings.Cut(l, ":"); ok && !strings.HasPrefix(l, "#") {
			out[k] = v
		}
	}
	return out
}

// cmdstatCounts are the calls, rejected and failed counts of every
// cmdstat line (their durations differ).
func cmdstatCounts(t *testing.T, info string) map[string]string {
	re := regexp.MustCompile(`^calls=(\d+),usec=\d+,usec_per_call=\d+\.\d\d,rejected_calls=(\d+),failed_calls=(\d+)$`)
	out := make(map[string]string)
	for k, v := range infoFields(info) {
		name, ok := strings.CutPrefix(k, "cmdstat_")
		if !ok {
			continue
		}
		m := re.FindStringSubmatch(v)
		if m == nil {
			t.Errorf("cmdstat_%s: malformed %q", name, v)
			continue
		}
		out[name] = "calls=" + m[1] + ",rejected=" + m[2] + ",failed=" + m[3]
	}
	return out
}

func TestCommandStatsDifferential(t *testing.T) {
	redisAddr := startRedisServer(t)
	rs := startRESP(t, server.Config{}, store.Config{})
	get := func(addr string) (cmdstats, errorstats, stats map[string]string) {
		c := dialCmd(t, addr, false)
		runSequence(t, c, opsSequence)
		r := dialCmd(t, addr, false)
		info, _ := parseRV(r.do(t, "INFO", "commandstats"))
		errs, _ := parseRV(r.do(t, "INFO", "errorstats"))
		st, _ := parseRV(r.do(t, "INFO", "stats"))
		return cmdstatCounts(t, info.str), infoFields(errs.str), infoFields(st.str)
	}
	wantCmd, wantErr, wantStats := get(redisAddr)
	gotCmd, gotErr, gotStats := get(rs.respAddr)
	for _, m := range []map[string]string{wantCmd, gotCmd} {
		delete(m, "command|docs") // redis-cli's, if one ran meanwhile
	}
	if !mapsEqual(gotCmd, wantCmd) {
		t.Errorf("commandstats:\nminikv %v\nredis  %v", gotCmd, wantCmd)
	}
	if !mapsEqual(gotErr, wantErr) {
		t.Errorf("errorstats:\nminikv %v\nredis  %v", gotErr, wantErr)
	}
	for _, f := range []string{"total_error_replies", "unexpected_error_replies", "total_commands_processed"} {
		if gotStats[f] != wantStats[f] {
			t.Errorf("%s: minikv %q, redis %q", f, gotStats[f], wantStats[f])
		}
	}
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// TestCommandStatsReset checks CONFIG RESETSTAT: every count restarts,
// and RESETSTAT itself is counted once done, as in Redis.
func TestCommandStatsReset(t *testing.T) {
	rs := startRESP(t, server.Config{}, store.Config{})
	c := dialCmd(t, rs.respAddr, false)
	runSequence(t, c, opsSequence[:10])
	c.do(t, "CONFIG", "RESETSTAT")
	info, _ := parseRV(c.do(t, "INFO", "commandstats"))
	got := cmdstatCounts(t, info.str)
	want := map[string]string{"config|resetstat": "calls=1,rejected=0,failed=0"}
	if !mapsEqual(got, want) {
		t.Errorf("after CONFIG RESETSTAT: %v, want %v", got, want)
	}
	errs, _ := parseRV(c.do(t, "INFO", "errorstats"))
	if f := infoFields(errs.str); len(f) != 0 {
		t.Errorf("errorstats after CONFIG RESETSTAT: %v", f)
	}
}

// slowlogEntry is a SLOWLOG GET entry without its time and duration.
type slowlogView struct {
	id   int64
	argv []string
	peer string
	name string
}

func slowlogEntries(t *testing.T, reply string) []slowlogView {
	v, _ := parseRV(reply)
	var out []slowlogView
	for _, e := range v.elems {
		if len(e.elems) != 6 {
			t.Fatalf("slowlog entry %q", encodeRV(e))
		}
		if ts := e.elems[1].num; ts < time.Now().Unix()-60 || ts > time.Now().Unix()+1 {
			t.Errorf("slowlog entry time %d", ts)
		}
		if e.elems[2].num < 0 {
			t.Errorf("slowlog entry duration %d", e.elems[2].num)
		}
		out = append(out, slowlogView{id: e.elems[0].num, argv: e.elems[3].strs(), peer: e.elems[4].str, name: e.elems[5].str})
	}
	return out
}

func TestSlowlogDifferential(t *testing.T) {
	redisAddr := startRedisServer(t)
	rs := startRESP(t, server.Config{}, store.Config{})
	run := func(addr string) (entries []slowlogView, peer string, lens []string) {
		c := dialCmd(t, addr, false)
		peer = c.nc.LocalAddr().String()
		c.do(t, "CONFIG", "SET", "slowlog-log-slower-than", "0")
		c.do(t, "CLIENT", "SETNAME", "sl")
		mset := []string{"MSET"}
		for i := range 40 {
			mset = append(mset, "k"+strconv.Itoa(i))
		}
		runSequence(t, c, [][]string{
			{"SET", "big", strings.Repeat("x", 300)}, {"SET", strings.Repeat("k", 129), "v"}, mset, {"GET"},
			{"AUTH", "pw"}, {"AUTH", "user", "pw"}, {"AUTH", "a", "b", "c"}, {"HELLO", "3", "AUTH", "u", "p"},
			{"HELLO", "x", "AUTH", "u", "p"}, {"HELLO", "2", "AUTH", "u", "p", "SETNAME", "n2"}, {"HELLO", "2", "FOO", "AUTH", "u", "p"},
			{"MULTI"}, {"SET", "t", "1"}, {"GET", "t"}, {"EXEC"}, {"ECHO", "a\r\nb"},
		})
		entries = slowlogEntries(t, c.do(t, "SLOWLOG", "GET", "-1"))
		lens = append(lens, c.do(t, "SLOWLOG", "LEN"))
		c.do(t, "CONFIG", "SET", "slowlog-max-len", "2")
		c.do(t, "PING")
		lens = append(lens, c.do(t, "SLOWLOG", "LEN"), c.do(t, "SLOWLOG", "RESET"), c.do(t, "SLOWLOG", "LEN"))
		c.do(t, "CONFIG", "SET", "slowlog-max-len", "0")
		lens = append(lens, c.do(t, "SLOWLOG", "LEN"))
		c.do(t, "CONFIG", "SET", "slowlog-max-len", "10", "slowlog-log-slower-than", "-1")
		c.do(t, "PING")
		lens = append(lens, c.do(t, "SLOWLOG", "LEN"))
		c.do(t, "CONFIG", "SET", "slowlog-log-slower-than", "0")
		e := slowlogEntries(t, c.do(t, "SLOWLOG", "GET", "1"))
		lens = append(lens, strconv.FormatInt(e[0].id, 10)) // ids go on through RESET and a zero max-len
		return entries, peer, lens
	}
	want, wantPeer, wantLens := run(redisAddr)
	got, gotPeer, gotLens := run(rs.respAddr)
	if len(got) != len(want) {
		t.Fatalf("%d entries, redis %d:\nminikv %v\nredis  %v", len(got), len(want), got, want)
	}
	for i := range want {
		w, g := want[i], got[i]
		if g.id != w.id || !slices.Equal(g.argv, w.argv) || g.name != w.name {
			t.Errorf("entry %d: minikv %+v, redis %+v", i, g, w)
		}
		if g.peer != gotPeer || w.peer != wantPeer {
			t.Errorf("entry %d peer: minikv %q (client %s), redis %q (client %s)", i, g.peer, gotPeer, w.peer, wantPeer)
		}
	}
	if !slices.Equal(gotLens, wantLens) {
		t.Errorf("LEN, RESET, ids: minikv %q, redis %q", gotLens, wantLens)
	}
}

// TestLatencyDifferential compares LATENCY's replies for one "command"
// event of 20 ms: Redis gets it from DEBUG SLEEP, MiniKV (which has no
// DEBUG) from a sample added to its monitor.
func TestLatencyDifferential(t *testing.T) {
	redisAddr := startRedisServer(t, "--enable-debug-command", "yes")
	var p *Protocol
	rs := startRESPWith(t, server.Config{}, store.Config{}, func(sp server.Protocol) server.Protocol {
		p = sp.(*Protocol)
		return sp
	})
	for _, resp3 := range []bool{false, true} {
		r, m := dialCmd(t, redisAddr, resp3), dialCmd(t, rs.respAddr, resp3)
		// A threshold no real command reaches (on a loaded machine, any
		// may take milliseconds), but for Redis's DEBUG SLEEP, run under
		// a threshold of 1 ms.
		const never = "1000000"
		for _, c := range []*cmdConn{r, m} {
			for _, q := range [][]string{{"LATENCY", "RESET"}, {"CONFIG", "SET", "latency-monitor-threshold", never}} {
				c.do(t, q...)
			}
		}
		if got, want := m.do(t, "LATENCY", "DOCTOR"), r.do(t, "LATENCY", "DOCTOR"); got != want {
			t.Errorf("DOCTOR with no event:\nminikv %q\nredis  %q", got, want)
		}
		r.do(t, "CONFIG", "SET", "latency-monitor-threshold", "1")
		r.do(t, "DEBUG", "SLEEP", "0.02")
		r.do(t, "CONFIG", "SET", "latency-monitor-threshold", never)
		// The same sample in MiniKV: what Redis measured (20 ms or more).
		latest, _ := parseRV(r.do(t, "LATENCY", "LATEST"))
		if len(latest.elems) != 1 {
			t.Fatalf("redis LATENCY LATEST: %q", encodeRV(latest))
		}
		p.ops.latency.add("command", latest.elems[0].elems[2].num)
		now := strconv.FormatInt(time.Now().Unix(), 10)
		timeRE := regexp.MustCompile(`:1[0-9]{9}\r\n`)
		norm := func(s string) string { return timeRE.ReplaceAllString(s, ":T\r\n") }
		for _, q := range [][]string{{"LATENCY", "LATEST"}, {"LATENCY", "HISTORY", "command"}, {"LATENCY", "HISTORY", "fast-command"}} {
			want, got := r.do(t, q...), m.do(t, q...)
			if norm(got) != norm(want) || got != "*0\r\n" && !strings.Contains(got, ":"+now[:len(now)-1]) {
				t.Errorf("RESP3 %v %v:\nminikv %q\nredis  %q", resp3, q, got, want)
			}
		}
		// The graph's label is how many seconds ago the sample was.
		labelRE := regexp.MustCompile(`\n[0-9]\n`)
		for _, q := range [][]string{{"LATENCY", "GRAPH", "command"}, {"LATENCY", "DOCTOR"}} {
			want, got := r.do(t, q...), m.do(t, q...)
			if labelRE.ReplaceAllString(got, "\nN\n") != labelRE.ReplaceAllString(want, "\nN\n") {
				t.Errorf("RESP3 %v %v:\nminikv %q\nredis  %q", resp3, q, got, want)
			}
		}
		for _, q := range [][]string{{"LATENCY", "RESET", "nosuch", "COMMAND"}, {"LATENCY", "LATEST"}, {"CONFIG", "SET", "latency-monitor-threshold", "0"}} {
			if want, got := r.do(t, q...), m.do(t, q...); got != want {
				t.Errorf("RESP3 %v %v: minikv %q, redis %q", resp3, q, got, want)
			}
		}
	}
}

// hdrLabels are the bucket labels LATENCY HISTOGRAM can give: Redis's
// HDR histogram's largest value at 1024 ns * 2^k, in µs.
func hdrLabels() map[int64]bool {
	out := make(map[int64]bool)
	for level := int64(1024); level <= 1<<31; level *= 2 {
		sub := int64(1)
		for v := level | 255; v > 255; v >>= 1 {
			sub <<= 1
		}
		out[(level+sub-1)/1000] = true
	}
	return out
}

func TestLatencyHistogramDifferential(t *testing.T) {
	redisAddr := startRedisServer(t)
	rs := startRESP(t, server.Config{}, store.Config{})
	labels := hdrLabels()
	for _, resp3 := range []bool{false, true} {
		var shapes [2]string
		for i, addr := range []string{redisAddr, rs.respAddr} {
			c := dialCmd(t, addr, resp3)
			c.do(t, "CONFIG", "RESETSTAT")
			runSequence(t, c, [][]string{{"SET", "a", "1"}, {"SET", "a", "2"}, {"SET", "a", "3"}, {"GET", "a"}, {"GET", "a"}, {"CLIENT", "GETNAME"}})
			v, _ := parseRV(c.do(t, "LATENCY", "HISTOGRAM", "set", "get", "client", "nosuch"))
			var shape []string
			for j := 0; j+1 < len(v.elems); j += 2 {
				name, h := v.elems[j].str, v.elems[j+1]
				calls, _ := h.field("calls")
				hist, _ := h.field("histogram_usec")
				var last int64
				for k := 0; k+1 < len(hist.elems); k += 2 {
					if !labels[hist.elems[k].num] {
						t.Errorf("%s: bucket %d is not an HDR label", name, hist.elems[k].num)
					}
					if hist.elems[k+1].num <= last {
						t.Errorf("%s: cumulative counts %q", name, encodeRV(hist))
					}
					last = hist.elems[k+1].num
				}
				if last != calls.num {
					t.Errorf("%s: histogram ends at %d of %d calls", name, last, calls.num)
				}
				shape = append(shape, name+"="+strconv.FormatInt(calls.num, 10))
			}
			slices.Sort(shape)
			shapes[i] = strings.Join(shape, " ")
			if i == 0 && len(v.elems) != 6 {
				t.Fatalf("redis: %q", encodeRV(v))
			}
		}
		if shapes[0] != shapes[1] {
			t.Errorf("RESP3 %v: minikv %s, redis %s", resp3, shapes[1], shapes[0])
		}
	}
}

func TestInfoSectionsDifferential(t *testing.T) {
	redisAddr := startRedisServer(t)
	rs := startRESP(t, server.Config{}, store.Config{})
	r, m := dialCmd(t, redisAddr, false), dialCmd(t, rs.respAddr, false)
	headers := func(reply string) string {
		v, _ := parseRV(reply)
		var hs []string
		for _, l := range strings.Split(v.str, "\r\n") {
			if strings.HasPrefix(l, "# ") {
				hs = append(hs, l[2:])
			}
		}
		return strings.Join(hs, ",")
	}
	for _, q := range [][]string{{"INFO"}, {"INFO", "default"}, {"INFO", "all"}, {"INFO", "everything"}, {"INFO", "ALL", "foo"},
		{"INFO", "commandstats", "ERRORSTATS"}, {"INFO", "latencystats", "server"}, {"INFO", "default", "commandstats"}, {"INFO", "foo"}} {
		if got, want := headers(m.do(t, q...)), headers(r.do(t, q...)); got != want {
			t.Errorf("%v: minikv %s, redis %s", q, got, want)
		}
	}
}

// monitorLines reads a monitor's lines until one with the marker,
// without their time and client address.
func monitorLines(t *testing.T, br *bufio.Reader, marker string) []string {
	t.Helper()
	re := regexp.MustCompile(`^\+[0-9]+\.[0-9]{6} \[0 127\.0\.0\.1:[0-9]+\] (.*)\r\n$`)
	var out []string
	for {
		l, err := br.ReadString('\n')
		if err != nil {
			t.Fatalf("monitor: %v after %q (%s)", err, out, t.Name())
		}
		m := re.FindStringSubmatch(l)
		if m == nil {
			t.Fatalf("monitor line %q", l)
		}
		if strings.Contains(m[1], marker) {
			return out
		}
		out = append(out, m[1])
	}
}

func TestMonitorDifferential(t *testing.T) {
	redisAddr := startRedisServer(t)
	rs := startRESP(t, server.Config{}, store.Config{})
	var streams [2][]string
	for i, addr := range []string{redisAddr, rs.respAddr} {
		mon, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer mon.Close()
		_ = mon.SetReadDeadline(time.Now().Add(30 * time.Second))
		br := bufio.NewReader(mon)
		if _, err := io.WriteString(mon, mb("MONITOR")); err != nil {
			t.Fatal(err)
		}
		if l, err := br.ReadString('\n'); err != nil || l != "+OK\r\n" {
			t.Fatalf("MONITOR: %q, %v", l, err)
		}
		c := dialCmd(t, addr, false)
		// Should the monitor see nothing, the log says which server and
		// how the server saw the monitor then.
		t.Cleanup(func() {
			if t.Failed() {
				t.Logf("server %d (%s): CLIENT LIST %q", i, addr, dialCmd(t, addr, false).do(t, "CLIENT", "LIST"))
			}
		})
		runSequence(t, c, opsSequence[:30])
		runSequence(t, c, [][]string{{"SET", "q", "a \"b\"\\\n\r\t\a\b\x00\xff"}, {"AUTH", "pw"}, {"AUTH", "u", "pw"},
			{"HELLO", "3", "AUTH", "u", "p"}, {"HELLO", "2"}, {"SLOWLOG", "LEN"}, {"LATENCY", "LATEST"}, {"INFO", "server"},
			{"CONFIG", "SET", "slowlog-max-len", "128"}, {"ECHO", "end-of-monitor"}})
		streams[i] = monitorLines(t, br, "end-of-monitor")
		// The monitor's own commands: keyspace ones are refused.
		c2 := dialCmd(t, addr, false)
		c2.nc, c2.br = mon, br
		lineRE := regexp.MustCompile(`^\+[0-9]+\.[0-9]{6} \[0 127\.0\.0\.1:[0-9]+\] `)
		for _, q := range [][]string{{"PING"}, {"GET", "a"}, {"SET", "x"}} {
			streams[i] = append(streams[i], lineRE.ReplaceAllString(strings.TrimSuffix(c2.do(t, q...), "\r\n"), "+T "))
		}
	}
	if !slices.Equal(streams[1], streams[0]) {
		t.Errorf("monitor streams differ:\nminikv %q\nredis  %q", streams[1], streams[0])
	}
}

// TestMonitorBothPorts watches commands of both ports on a MONITOR
// connection. (Not go-redis's Monitor: it hands the connection back to its
// pool after +OK while its reader goroutine still uses it, which -race
// reports, and drops the connection when monitor lines are already
// buffered then.)
func TestMonitorBothPorts(t *testing.T) {
	rs := startRESP(t, server.Config{}, store.Config{})
	mon := dialCmd(t, rs.respAddr, false)
	if r := mon.do(t, "MONITOR"); r != "+OK\r\n" {
		t.Fatalf("MONITOR: %q", r)
	}
	c := dialCmd(t, rs.respAddr, false)
	if list := c.do(t, "CLIENT", "LIST"); !regexp.MustCompile(`flags=O .* cmd=monitor `).MatchString(list) {
		t.Errorf("CLIENT LIST does not show the monitor (flags=O):\n%s", list)
	}
	c.do(t, "SET", "k", "v")
	mc := servertest.Dial(t, rs.addr)
	mc.Expect("set mk 5 0 1\r\nx\r\n", "STORED")
	mc.Expect("get mk k\r\n", "VALUE mk 5 1", "x", "VALUE k 0 1", "v", "END")
	mc.Expect("incr nosuch 1\r\n", "NOT_FOUND")
	mc.Expect("mg mk v t\r\n", "VA 1 t-1", "x")
	mc.Expect("bogus\r\n", "ERROR")
	c.do(t, "ECHO", "done")
	want := []string{`"SET" "k" "v"`, `"set" "mk" "5" "0" "1"`, `"get" "mk" "k"`, `"incr" "nosuch" "1"`, `"mg" "mk" "v" "t"`}
	_ = mon.nc.SetReadDeadline(time.Now().Add(30 * time.Second))
	got := monitorLines(t, mon.br, `"ECHO" "done"`)
	if !slices.Equal(got, want) {
		t.Errorf("monitor gave %q, want %q", got, want)
	}
}

// TestMonitorThatDoesNotReadIsCutOff: a monitor that stops reading is
// disconnected at the output limit, counted, and the server's memory
// stays bounded while commands go on.
func TestMonitorThatDoesNotReadIsCutOff(t *testing.T) {
	const limit = 1 << 20
	rs := startRESP(t, server.Config{WriteTimeout: -1, PubsubOutputLimit: server.OutputLimit{Hard: limit, Soft: -1}}, store.Config{})
	stuck := dialCmd(t, rs.respAddr, false)
	if r := stuck.do(t, "MONITOR"); r != "+OK\r\n" {
		t.Fatalf("MONITOR: %q", r)
	}
	var ms runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms)
	base, peak := ms.HeapAlloc, ms.HeapAlloc
	c := dialCmd(t, rs.respAddr, false)
	arg := strings.Repeat("x", 32<<10)
	for n := 0; rs.srv.Stats().Count[server.StatOutputLimitKicks] == 0; n++ {
		if n == 100_000 { // 3 GiB of monitor lines: more than any kernel buffers
			t.Fatal("the monitor that does not read was never cut off")
		}
		c.do(t, "ECHO", arg)
		if n%64 == 0 {
			runtime.GC()
			runtime.ReadMemStats(&ms)
			peak = max(peak, ms.HeapAlloc)
		}
	}
	if grew := int64(peak) - int64(base); grew > 8*limit {
		t.Errorf("heap grew %d bytes with a %d-byte output limit", grew, limit)
	}
	_ = stuck.nc.SetReadDeadline(time.Now().Add(30 * time.Second))
	if _, err := io.Copy(io.Discard, stuck.br); err != nil && !servertest.IsRESPReset(err) {
		t.Errorf("the monitor's connection did not end: %v", err)
	}
	if r := c.do(t, "PING"); r != "+PONG\r\n" {
		t.Errorf("PING after the cut-off: %q", r)
	}
}

// TestExporterParsesOps reads INFO ALL, LATENCY and SLOWLOG the way
// redis_exporter does (exporter/info.go, latency.go, slowlog.go): lines
// split at the first ':', sections by "# ", commandstats values as
// comma-separated k=v floats at fixed places, latencystats as pX=v,
// errorstats as count=v, the total usec by its regexp, and LATENCY
// HISTOGRAM as RESP2 arrays.
func TestExporterParsesOps(t *testing.T) {
	rs := startRESP(t, server.Config{}, store.Config{})
	c := dialCmd(t, rs.respAddr, false)
	runSequence(t, c, opsSequence[:12])
	c.do(t, "CONFIG", "SET", "slowlog-log-slower-than", "0")
	info, _ := parseRV(c.do(t, "INFO", "ALL"))
	section := ""
	cmdCalls := map[string]float64{}
	latency := map[string]map[float64]float64{}
	errs := map[string]float64{}
	extract := func(kv string) float64 {
		k, v, ok := strings.Cut(kv, "=")
		f, err := strconv.ParseFloat(v, 64)
		if !ok || err != nil || k == "" {
			t.Errorf("exporter cannot read %q", kv)
		}
		return f
	}
	for _, line := range strings.Split(info.str, "\n") {
		line = strings.TrimSpace(line)
		if strings.HasPrefix(line, "# ") {
			section = line[2:]
			continue
		}
		key, value, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		switch section {
		case "Commandstats":
			parts := strings.Split(value, ",")
			if !strings.HasPrefix(key, "cmdstat_") || len(parts) != 5 {
				t.Errorf("commandstats line %q", line)
				continue
			}
			cmdCalls[strings.TrimPrefix(key, "cmdstat_")] = extract(parts[0])
			extract(parts[1])
			extract(parts[3])
			extract(parts[4])
		case "Latencystats":
			pcs := map[float64]float64{}
			for _, kv := range strings.Split(value, ",") {
				k, v, _ := strings.Cut(kv, "=")
				pc, err1 := strconv.ParseFloat(k[1:], 64)
				f, err2 := strconv.ParseFloat(v, 64)
				if err1 != nil || err2 != nil {
					t.Errorf("latencystats %q", line)
				}
				pcs[pc] = f
			}
			latency[strings.TrimPrefix(key, "latency_percentiles_usec_")] = pcs
		case "Errorstats":
			errs[strings.TrimPrefix(key, "errorstat_")] = extract(value)
		}
	}
	if cmdCalls["set"] != 2 || cmdCalls["get"] != 1 || cmdCalls["hset"] != 1 || errs["ERR"] == 0 || errs["WRONGTYPE"] != 1 {
		t.Errorf("exporter read calls %v, errors %v", cmdCalls, errs)
	}
	if pcs := latency["set"]; len(pcs) != 3 || pcs[50] <= 0 || pcs[99.9] < pcs[50] {
		t.Errorf("exporter read latency %v", latency)
	}
	usecRE := regexp.MustCompile(`(?m)^cmdstat_([a-zA-Z0-9\|]+):.*usec=([0-9]+).*$`)
	if m := usecRE.FindAllStringSubmatch(info.str, -1); len(m) != len(cmdCalls) {
		t.Errorf("the exporter's usec regexp matched %d of %d lines", len(m), len(cmdCalls))
	}
	// LATENCY HISTOGRAM in RESP2: name, [calls, n, histogram_usec, [usec, count, ...]].
	h, _ := parseRV(c.do(t, "LATENCY", "HISTOGRAM"))
	if len(h.elems) == 0 || len(h.elems)%2 != 0 {
		t.Fatalf("LATENCY HISTOGRAM %q", encodeRV(h))
	}
	for i := 0; i < len(h.elems); i += 2 {
		d := h.elems[i+1].elems
		if len(d) != 4 || d[0].str != "calls" || d[1].kind != ':' || d[2].str != "histogram_usec" || len(d[3].elems)%2 != 0 {
			t.Errorf("LATENCY HISTOGRAM entry %q", encodeRV(h.elems[i+1]))
		}
	}
	if r := c.do(t, "LATENCY", "LATEST"); r != "*0\r\n" {
		t.Errorf("LATENCY LATEST = %q", r)
	}
	if r := c.do(t, "SLOWLOG", "LEN"); !strings.HasPrefix(r, ":") {
		t.Errorf("SLOWLOG LEN = %q", r)
	}
	last := slowlogEntries(t, c.do(t, "SLOWLOG", "GET", "1"))
	if len(last) != 1 || last[0].argv[0] != "SLOWLOG" {
		t.Errorf("SLOWLOG GET 1 = %+v", last)
	}
}

// TestLatencyTrackingOffDifferential: with latency-tracking off, calls
// are still counted but go into no histogram, as in Redis.
func TestLatencyTrackingOffDifferential(t *testing.T) {
	redisAddr := startRedisServer(t)
	rs := startRESP(t, server.Config{}, store.Config{})
	var got [2]string
	for i, addr := range []string{redisAddr, rs.respAddr} {
		c := dialCmd(t, addr, false)
		runSequence(t, c, [][]string{{"CONFIG", "SET", "latency-tracking", "no"}, {"SET", "a", "1"}, {"SET", "a", "2"}, {"SET", "a", "3"}})
		lat, _ := parseRV(c.do(t, "INFO", "latencystats"))
		runSequence(t, c, [][]string{{"CONFIG", "SET", "latency-tracking", "yes"}, {"SET", "a", "4"}, {"SET", "a", "5"}})
		cmd, _ := parseRV(c.do(t, "INFO", "commandstats"))
		h, _ := parseRV(c.do(t, "LATENCY", "HISTOGRAM", "set"))
		calls, _ := h.elems[1].field("calls")
		got[i] = strings.TrimSpace(lat.str) + " | " + cmdstatCounts(t, cmd.str)["set"] + " | histogram calls " + strconv.FormatInt(calls.num, 10)
	}
	if got[1] != got[0] {
		t.Errorf("minikv %q, redis %q", got[1], got[0])
	}
}

// TestMonitorBlockingDifferential: a blocking command shows in MONITOR
// when it begins to wait, before the push that serves it, as in Redis;
// its SLOWLOG entry keeps its arguments although the client sent more
// while it waited, and leaves the wait out of its duration.
func TestMonitorBlockingDifferential(t *testing.T) {
	redisAddr := startRedisServer(t)
	rs := startRESP(t, server.Config{}, store.Config{})
	var streams [2][]string
	for i, addr := range []string{redisAddr, rs.respAddr} {
		mon := dialCmd(t, addr, false)
		if r := mon.do(t, "MONITOR"); r != "+OK\r\n" {
			t.Fatalf("MONITOR: %q", r)
		}
		admin := dialCmd(t, addr, false)
		admin.do(t, "CONFIG", "SET", "slowlog-log-slower-than", "0")
		admin.do(t, "SLOWLOG", "RESET")
		blocked := dialCmd(t, addr, false)
		if _, err := io.WriteString(blocked.nc, mb("BLPOP", "bl", "0")); err != nil {
			t.Fatal(err)
		}
		for n := 0; !strings.Contains(admin.do(t, "INFO", "clients"), "blocked_clients:1"); n++ {
			if n == 3000 {
				t.Fatal("BLPOP never blocked")
			}
			time.Sleep(10 * time.Millisecond)
		}
		// More from the blocked client while it waits: kept for later.
		if _, err := io.WriteString(blocked.nc, mb("ECHO", strings.Repeat("e", 12<<10))); err != nil {
			t.Fatal(err)
		}
		const wait = 250 * time.Millisecond
		time.Sleep(wait) // a wait far longer than the command's own time, which must not count it
		admin.do(t, "LPUSH", "bl", "x")
		if r, err := readRESPReply(blocked.br); err != nil || r != "*2\r\n$2\r\nbl\r\n$1\r\nx\r\n" {
			t.Fatalf("BLPOP: %q, %v", r, err)
		}
		if r, err := readRESPReply(blocked.br); err != nil || !strings.HasPrefix(r, "$12288\r\n") {
			t.Fatalf("ECHO: %.20q, %v", r, err)
		}
		admin.do(t, "ECHO", "end-of-monitor")
		streams[i] = monitorLines(t, mon.br, "end-of-monitor")
		for _, e := range slowlogEntries(t, admin.do(t, "SLOWLOG", "GET", "-1")) {
			if e.argv[0] == "BLPOP" {
				if !slices.Equal(e.argv, []string{"BLPOP", "bl", "0"}) {
					t.Errorf("slowlog BLPOP entry %q", e.argv)
				}
			}
		}
		for _, e := range slowlogDurations(t, admin.do(t, "SLOWLOG", "GET", "-1"), "BLPOP") {
			if e >= wait.Microseconds() {
				t.Errorf("BLPOP logged as %d µs: its wait is counted", e)
			}
		}
	}
	for i := range streams {
		streams[i] = slices.DeleteFunc(streams[i], func(l string) bool {
			return strings.HasPrefix(l, `"INFO"`) || strings.HasPrefix(l, `"ECHO" "eee`)
		})
	}
	if !slices.Equal(streams[1], streams[0]) {
		t.Errorf("monitor streams differ:\nminikv %q\nredis  %q", streams[1], streams[0])
	}
}

// slowlogDurations are the durations of the SLOWLOG GET entries of
// command name.
func slowlogDurations(t *testing.T, reply, name string) []int64 {
	v, _ := parseRV(reply)
	var out []int64
	for _, e := range v.elems {
		if len(e.elems) == 6 && len(e.elems[3].elems) > 0 && e.elems[3].elems[0].str == name {
			out = append(out, e.elems[2].num)
		}
	}
	return out
}

// TestCommandStatsInPipeline: a connection's calls earlier in the same
// pipelined batch count in its INFO and LATENCY HISTOGRAM, and another
// connection sees them once their replies have left.
func TestCommandStatsInPipeline(t *testing.T) {
	rs := startRESP(t, server.Config{}, store.Config{})
	c := dialCmd(t, rs.respAddr, false)
	if _, err := io.WriteString(c.nc, mb("SET", "a", "1")+mb("SET", "a", "2")+mb("INFO", "commandstats")+mb("LATENCY", "HISTOGRAM", "set")); err != nil {
		t.Fatal(err)
	}
	var replies []string
	for range 4 {
		r, err := readRESPReply(c.br)
		if err != nil {
			t.Fatal(err)
		}
		replies = append(replies, r)
	}
	info, _ := parseRV(replies[2])
	if got := cmdstatCounts(t, info.str)["set"]; got != "calls=2,rejected=0,failed=0" {
		t.Errorf("INFO in the batch: set %q", got)
	}
	h, _ := parseRV(replies[3])
	if calls, _ := h.elems[1].field("calls"); calls.num != 2 {
		t.Errorf("LATENCY HISTOGRAM in the batch: %q", replies[3])
	}
	other := dialCmd(t, rs.respAddr, false)
	info, _ = parseRV(other.do(t, "INFO", "commandstats"))
	if got := cmdstatCounts(t, info.str)["latency|histogram"]; got != "calls=1,rejected=0,failed=0" {
		t.Errorf("INFO of another connection: latency|histogram %q", got)
	}
}

// TestMonitorUnderReplyOffDifferential: CLIENT REPLY OFF silences a
// monitor's lines too (and MONITOR's +OK); after CLIENT REPLY ON they flow
// again, beginning with the CLIENT REPLY command itself, as in Redis.
func TestMonitorUnderReplyOffDifferential(t *testing.T) {
	redisAddr := startRedisServer(t)
	rs := startRESP(t, server.Config{}, store.Config{})
	lineRE := regexp.MustCompile(`^\+[0-9]+\.[0-9]{6} \[0 127\.0\.0\.1:[0-9]+\] `)
	var streams [2][]string
	for i, addr := range []string{redisAddr, rs.respAddr} {
		mon, c := dialCmd(t, addr, false), dialCmd(t, addr, false)
		if _, err := io.WriteString(mon.nc, mb("CLIENT", "REPLY", "OFF")+mb("MONITOR")); err != nil {
			t.Fatal(err)
		}
		// Wait until CLIENT LIST shows the monitor (CLIENT, an admin
		// command, is never fed to monitors), then run a command it must
		// not see.
		for deadline := time.Now().Add(time.Minute); !strings.Contains(c.do(t, "CLIENT", "LIST"), "cmd=monitor"); {
			if time.Now().After(deadline) { // a bound for a broken server
				t.Fatal("CLIENT LIST never showed the monitor")
			}
		}
		c.do(t, "SET", "mro:a", "1")
		streams[i] = append(streams[i], mon.do(t, "CLIENT", "REPLY", "ON"))
		c.do(t, "SET", "mro:b", "2")
		for range 2 {
			r, err := readRESPReply(mon.br)
			if err != nil {
				t.Fatal(err)
			}
			streams[i] = append(streams[i], lineRE.ReplaceAllString(r, "+T "))
		}
	}
	if !slices.Equal(streams[1], streams[0]) {
		t.Errorf("monitor under CLIENT REPLY OFF:\nminikv %q\nredis  %q", streams[1], streams[0])
	}
}

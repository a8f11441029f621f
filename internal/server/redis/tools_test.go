package redis

import (
	"bytes"
	"context"
	"net"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/minikv/minikv/internal/server"
	"github.com/minikv/minikv/internal/store"
)

// Tests with Redis's own tools: redis-cli (scripted sessions, INFO, the
// COMMAND DOCS help it loads) and redis-benchmark. They skip when the
// tools are missing, unless MINIKV_REQUIRE_PEERS=1 (make test).

func redisTool(t *testing.T, name string) string {
	t.Helper()
	path, err := exec.LookPath(name)
	if err != nil {
		if os.Getenv("MINIKV_REQUIRE_PEERS") == "1" {
			t.Fatalf("%s not found and MINIKV_REQUIRE_PEERS=1: %v", name, err)
		}
		t.Skipf("%s not installed (%v)", name, err)
	}
	return path
}

// runTool runs a Redis tool with a timeout and returns its output.
func runTool(t *testing.T, stdin string, path string, args ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, path, args...)
	cmd.Stdin = strings.NewReader(stdin)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	return out.String(), err
}

func respPort(t *testing.T, addr string) string {
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		t.Fatal(err)
	}
	return port
}

// TestRedisCLIScripted feeds redis-cli a script on stdin (its
// non-interactive mode, one command per line) covering the command list,
// and compares its output with the same script run against redis-server.
func TestRedisCLIScripted(t *testing.T) {
	cli := redisTool(t, "redis-cli")
	rs := startRESP(t, server.Config{}, store.Config{})
	script := `PING
PING hello
ECHO "two words"
SELECT 0
SET k v
GET k
SET k v2 NX
SET k v2 XX GET
SETNX k x
SETEX ex 100 v
TTL ex
PSETEX pex 100000 v
GETSET k v3
GETEX k PERSIST
GETDEL k
EXISTS k
MSET a 1 b 2
MGET a b nope
MSETNX a 1 c 3
APPEND a 23
STRLEN a
GETRANGE a 0 1
SETRANGE a 1 X
GET a
INCR n
DECR n
INCRBY n 10
DECRBY n 3
INCRBYFLOAT f 1.5
TYPE a
EXPIRE a 100
PEXPIRE a 100000
EXPIREAT a 4102444800
EXPIRETIME a
PEXPIREAT a 4102444800000
PEXPIRETIME a
PERSIST a
PTTL a
KEYS a*
SCAN 0 MATCH a* COUNT 1000
DEL a b
UNLINK c
DBSIZE
CLIENT SETNAME cli
CLIENT GETNAME
CONFIG GET appendonly
FLUSHDB
FLUSHALL SYNC
DBSIZE
RANDOMKEY
GET
FOO bar
`
	run := func(addr string) string {
		out, err := runTool(t, script, cli, "-p", respPort(t, addr))
		if err != nil {
			t.Fatalf("redis-cli: %v\n%s", err, out)
		}
		return out
	}
	got := run(rs.respAddr)
	want := run(startRedisServer(t))
	gl, wl := strings.Split(got, "\n"), strings.Split(want, "\n")
	sl := strings.Split(script, "\n")
	for i := range max(len(gl), len(wl)) {
		var g, w string
		if i < len(gl) {
			g = gl[i]
		}
		if i < len(wl) {
			w = wl[i]
		}
		if g != w {
			t.Errorf("output line %d (script line %q?): minikv %q, redis-server %q", i+1, sl[min(i, len(sl)-1)], g, w)
		}
	}
	for _, f := range []string{"two words\n", "1X3\n", "4102444800000\n", "ERR unknown command 'FOO', with args beginning with: 'bar' \n"} {
		if !strings.Contains(got, f) {
			t.Errorf("redis-cli output lacks %q:\n%s", f, got)
		}
	}
}

// TestRedisCLIInfoAndHelp checks INFO and the help redis-cli builds from
// COMMAND DOCS (which it sends before "help <command>", as in its
// interactive mode).
func TestRedisCLIInfoAndHelp(t *testing.T) {
	cli := redisTool(t, "redis-cli")
	rs := startRESP(t, server.Config{}, store.Config{})
	port := respPort(t, rs.respAddr)
	out, err := runTool(t, "", cli, "-p", port, "INFO")
	if err != nil {
		t.Fatalf("redis-cli INFO: %v\n%s", err, out)
	}
	for _, f := range []string{"# Server", "redis_version:" + Version, "# Clients", "connected_clients:", "# Memory",
		"used_memory_human:", "# Stats", "instantaneous_ops_per_sec:", "# Replication", "role:master", "# Keyspace"} {
		if !strings.Contains(out, f) {
			t.Errorf("redis-cli INFO lacks %q", f)
		}
	}
	out, err = runTool(t, "", cli, "-p", port, "COMMAND", "DOCS", "GET")
	if err != nil || !strings.Contains(out, "Returns the string value of a key.") {
		t.Errorf("redis-cli COMMAND DOCS GET: %v\n%s", err, out)
	}
	out, err = runTool(t, "help set\nhelp incrbyfloat\n", cli, "-p", port)
	if err != nil {
		t.Fatalf("redis-cli help: %v\n%s", err, out)
	}
	for _, f := range []string{"SET key value [NX|XX] [GET] [EX seconds|PX milliseconds|EXAT unix-time-seconds|PXAT unix-time-milliseconds|KEEPTTL]",
		"summary: Sets the string value of a key, ignoring its type.", "since: 1.0.0", "group: string", "INCRBYFLOAT key increment"} {
		if !strings.Contains(stripANSI(out), f) {
			t.Errorf("redis-cli help lacks %q:\n%s", f, stripANSI(out))
		}
	}
}

var ansi = regexp.MustCompile("\x1b\\[[0-9;]*m")

func stripANSI(s string) string { return ansi.ReplaceAllString(s, "") }

// TestRedisBenchmark runs redis-benchmark's string tests, pipelined, as
// the acceptance check does (with fewer requests); any error reply would
// abort it.
func TestRedisBenchmark(t *testing.T) {
	bench := redisTool(t, "redis-benchmark")
	rs := startRESP(t, server.Config{}, store.Config{})
	port := respPort(t, rs.respAddr)
	out, err := runTool(t, "", bench, "-p", port, "-q", "-n", "20000", "-t", "ping,set,get,incr,mset", "-P", "16")
	if err != nil {
		t.Fatalf("redis-benchmark: %v\n%s", err, out)
	}
	if strings.Contains(out, "Error") || strings.Contains(out, "WARNING") {
		t.Errorf("redis-benchmark reported a problem:\n%s", out)
	}
	for _, name := range []string{"PING_INLINE", "PING_MBULK", "SET", "GET", "INCR", "MSET (10 keys)"} {
		if !regexp.MustCompile(`(?m)` + regexp.QuoteMeta(name) + `: [0-9.]+ requests per second`).MatchString(out) {
			t.Errorf("redis-benchmark output lacks a %s result:\n%s", name, out)
		}
	}
	t.Logf("redis-benchmark -P 16 -n 20000:\n%s", lastLines(out))
}

// lastLines drops redis-benchmark's carriage-return progress updates.
func lastLines(s string) string {
	var b strings.Builder
	for _, l := range strings.Split(s, "\n") {
		if i := strings.LastIndexByte(l, '\r'); i >= 0 {
			l = l[i+1:]
		}
		if strings.TrimSpace(l) != "" {
			b.WriteString(strings.TrimSpace(l) + "\n")
		}
	}
	return b.String()
}

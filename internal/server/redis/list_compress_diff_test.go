package redis

import (
	"fmt"
	"strings"
	"testing"

	"github.com/minikv/minikv/internal/server"
	"github.com/minikv/minikv/internal/server/servertest"
	"github.com/minikv/minikv/internal/store"
)

// Compressed lists (list-compress-depth, internal/store/quicklist.go)
// against redis-server compressing its own the same way.

func init() {
	configSessions = append(configSessions, respSession{name: "config set list-compress-depth",
		in: mb("CONFIG", "SET", "list-compress-depth", "-1") + mb("CONFIG", "SET", "list-compress-depth", "2147483648") +
			mb("CONFIG", "SET", "list-compress-depth", "abc") + mb("CONFIG", "SET", "list-compress-depth", "1.5") +
			mb("CONFIG", "SET", "list-compress-depth", "2147483647") + mb("CONFIG", "GET", "list-compress-depth") +
			mb("CONFIG", "SET", "list-compress-depth", "3") + mb("CONFIG", "GET", "list-compress-depth") +
			mb("CONFIG", "SET", "LIST-compress-DEPTH", "0") + mb("CONFIG", "GET", "list-compress-depth")})
}

// startCompressedPair starts a redis-server and a MiniKV that both keep
// lists in nodes of at most fill entries and compress all but depth
// nodes at each end.
func startCompressedPair(t *testing.T, fill, depth int) (redisAddr string, rs *respServer) {
	t.Helper()
	redisAddr = startRedisServer(t, "--list-max-listpack-size", fmt.Sprint(fill), "--list-compress-depth", fmt.Sprint(depth))
	rs = startRESP(t, server.Config{}, store.Config{MaxItemSize: 1 << 20})
	lim := rs.store.Limits()
	lim.ListPackSize, lim.ListCompressDepth = int64(fill), int64(depth)
	rs.store.SetLimits(lim)
	return redisAddr, rs
}

// TestRESPListRandomDifferentialCompressed is the list commands' random
// differential test with small nodes (16 entries), all but the end ones
// compressed: LINDEX, LRANGE, LPOS, LSET, LINSERT, LREM and LTRIM in the
// middle of a list go through compressed nodes on both sides.
func TestRESPListRandomDifferentialCompressed(t *testing.T) {
	redisAddr, rs := startCompressedPair(t, 16, 1)
	runListRandom(t, redisAddr, rs.respAddr)
}

// TestListCompressedDumpRestore: a compressed list's DUMP is Redis's
// quicklist format with plain nodes, which redis-server restores; Redis's
// DUMP of its own compressed list (LZF nodes) restores in MiniKV; and
// both read back the same elements.
func TestListCompressedDumpRestore(t *testing.T) {
	redisAddr, rs := startCompressedPair(t, 16, 1)
	r, m := dialRESP(t, redisAddr), dialRESP(t, rs.respAddr)
	do := func(c *servertest.RESPClient, args ...string) string {
		c.Send(multibulk(args...))
		return c.Reply()
	}
	push := []string{"RPUSH", "l"}
	for i := range 3000 {
		push = append(push, fmt.Sprintf("element:%07d", i), strings.Repeat("ab", i%40))
	}
	if a, b := do(r, push...), do(m, push...); a != b {
		t.Fatalf("RPUSH: redis %q, minikv %q", a, b)
	}
	want := do(r, "LRANGE", "l", "0", "-1")
	if got := do(m, "LRANGE", "l", "0", "-1"); got != want {
		t.Fatal("LRANGE of the compressed lists differ")
	}
	for _, tc := range []struct {
		name     string
		from, to *servertest.RESPClient
	}{{"minikv to redis", m, r}, {"redis to minikv", r, m}} {
		dump := do(tc.from, "DUMP", "l")
		if !strings.HasPrefix(dump, "$") {
			t.Fatalf("%s: DUMP = %q", tc.name, dump[:min(len(dump), 40)])
		}
		payload := dump[strings.Index(dump, "\r\n")+2 : len(dump)-2]
		if got := do(tc.to, "RESTORE", "copy", "0", payload); got != "+OK\r\n" {
			t.Fatalf("%s: RESTORE = %q", tc.name, got)
		}
		if got := do(tc.to, "LRANGE", "copy", "0", "-1"); got != want {
			t.Fatalf("%s: the restored list differs", tc.name)
		}
		do(tc.to, "DEL", "copy")
	}
}

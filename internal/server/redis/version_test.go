package redis

import (
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/minikv/minikv/internal/server"
	"github.com/minikv/minikv/internal/store"
)

// What redis_version promises. Clients and their test suites gate
// features on the version HELLO and INFO report, so MiniKV reports the
// release its replies are compared with byte for byte (redis-server
// 7.2.4, which cmddata.go is generated from), and every command of that
// release is served except the gaps below, each waiting on the issue
// that brings it (docs/redis.md, "What redis_version promises").

// versionGaps are the commands and subcommands of Redis 7.2.4 MiniKV
// does not serve, each group with the reason.
var versionGaps = map[string][]string{
	"the Lua debugger (not planned: docs/redis.md, Scripting)": {"script|debug"},
	"cluster topology is MiniKV's configuration, not CLUSTER commands (docs/scale-out.md)": {
		"cluster|addslots", "cluster|addslotsrange", "cluster|bumpepoch", "cluster|count-failure-reports",
		"cluster|delslots", "cluster|delslotsrange", "cluster|failover", "cluster|flushslots", "cluster|forget",
		"cluster|links", "cluster|meet", "cluster|replicate", "cluster|reset",
		"cluster|saveconfig", "cluster|set-config-epoch", "cluster|setslot",
		"migrate", "restore-asking"},
	"debugging internals and modules": {"debug", "pfdebug", "pfselftest", "module", "module|help", "module|list",
		"module|load", "module|loadex", "module|unload"},
}

// TestVersionPromise checks what redis_version promises: HELLO and INFO
// report Version; it is the version of the redis-server installed here,
// which the differential tests compare with; every command of that
// release is served unless versionGaps names it, and every gap is
// refused as an unknown command (not half-served), so the list cannot go
// stale either way.
func TestVersionPromise(t *testing.T) {
	redisAddr := startRedisServer(t)
	if v := redisVersion(t, redisAddr); v != Version {
		t.Fatalf("redis-server here is %s, MiniKV reports %s: the differential tests compare with the wrong release", v, Version)
	}
	rs := startRESP(t, server.Config{}, store.Config{})
	if v := redisVersion(t, rs.respAddr); v != Version {
		t.Errorf("INFO server: redis_version %s, want %s", v, Version)
	}
	if hello := dialCmd(t, rs.respAddr, false).do(t, "HELLO", "2"); !strings.Contains(hello, "$7\r\nversion\r\n$"+strconv.Itoa(len(Version))+"\r\n"+Version+"\r\n") {
		t.Errorf("HELLO 2: %q does not report version %s", hello, Version)
	}

	served := make(map[string]bool)
	for _, c := range servedCommands() {
		served[c.name] = true
	}
	gap := make(map[string]bool)
	for _, names := range versionGaps {
		for _, n := range names {
			gap[n] = true
		}
	}
	var redisNames []string
	for name := range fetchCommandData(t, redisAddr) {
		redisNames = append(redisNames, name)
	}
	slices.Sort(redisNames)
	for _, name := range redisNames {
		switch {
		case served[name] && gap[name]:
			t.Errorf("%s: served, but versionGaps lists it as missing", name)
		case !served[name] && !gap[name]:
			t.Errorf("%s: Redis %s has it, MiniKV does not serve it, and versionGaps does not say why", name, Version)
		}
	}
	for name := range gap {
		if !slices.Contains(redisNames, name) {
			t.Errorf("%s: in versionGaps, not a command of Redis %s", name, Version)
		}
	}

	// Each gap is refused as unknown, the way Redis refuses a command it
	// does not have.
	c := dialCmd(t, rs.respAddr, false)
	for name := range gap {
		args := strings.Split(name, "|")
		if reply := c.do(t, args...); !strings.HasPrefix(reply, "-ERR unknown") {
			t.Errorf("%s: MiniKV answers %q, want an unknown command or subcommand error", name, reply)
		}
	}
}

// The sessions of issue 36's expiry and bit-offset fixes once more after
// HELLO 3, on keys of their own (upper-case prefixes of the same length,
// so the multibulk lengths hold) since sessions run in parallel.
func init() {
	prefixes := strings.NewReplacer("ff:", "FF:", "fg:", "FG:", "fr:", "FR:", "bw:", "BW:", "bl:", "BL:")
	for _, s := range respSessions {
		switch s.name {
		case "far-future absolute expiry", "far-future expire nx xx gt lt", "largest relative expiry",
			"bit write past 1 MB", "offsets against proto-max-bulk-len":
			respSessions = append(respSessions, respSession{name: s.name + " resp3", skip: 1, in: mb("HELLO", "3") + prefixes.Replace(s.in)})
		}
	}
}

package redis

import (
	"strconv"
	"strings"
	"testing"

	"github.com/minikv/minikv/internal/server"
	"github.com/minikv/minikv/internal/store"
)

// TestAcceptedConfigs: the parameters MiniKV keeps without a mechanism
// answer CONFIG GET and SET (defaults, accepted values as printed back,
// refusals with their reasons) byte for byte as redis-server 7.2.4's,
// but for activedefrag yes: Redis's build with its own jemalloc takes it,
// MiniKV, without a defragmenter, refuses it with the words of a Redis
// built without (docs/configuration.md).
func TestAcceptedConfigs(t *testing.T) {
	var in string
	for _, c := range acceptedConfigs {
		if c.name == "protected-mode" {
			continue // the test's redis-server runs with it off (startRedisServer)
		}
		in += mb("CONFIG", "GET", c.name)
		vals := []string{c.def, "zzz", "-1"}
		switch c.kind {
		case acceptBool:
			vals = append(vals, "YES", "no", "1")
		case acceptInt:
			vals = append(vals, strconv.FormatInt(c.lo, 10), strconv.FormatInt(c.lo-1, 10), "1.5", "+3")
			if c.hi < 1<<40 {
				vals = append(vals, strconv.FormatInt(c.hi+1, 10), strconv.FormatInt(c.hi, 10))
			}
		case acceptMem:
			vals = append(vals, "2mb", "1GB", "0", "3k")
		case acceptEnum:
			for _, e := range c.enum {
				vals = append(vals, e, "  "+e)
			}
			vals = append(vals, "DEFAULT")
		}
		for _, v := range vals {
			if c.name == "activedefrag" && strings.EqualFold(v, "yes") {
				continue
			}
			in += mb("CONFIG", "SET", c.name, v) + mb("CONFIG", "GET", c.name)
		}
	}
	for _, v := range []string{"pubsub 1mb 2mb 30", "replica 1 2 3", "foo 1 2 3", "pubsub 1 2", "normal 1x 2 3", "pubsub 1 2 -1", "",
		"slave 10 20 30 normal 1 2 3", "NORMAL 5 5 5", "normal 0 0 0"} { // (Redis would cut this client at 5 bytes)
		in += mb("CONFIG", "SET", "client-output-buffer-limit", v) + mb("CONFIG", "GET", "client-output-buffer-limit")
	}
	for _, v := range []string{"10%", "200%", "1gb", "x%", "-5", "0"} {
		in += mb("CONFIG", "SET", "maxmemory-clients", v) + mb("CONFIG", "GET", "maxmemory-clients")
	}
	in += mb("CONFIG", "SET", "replica-lazy-flush", "yes") + mb("CONFIG", "GET", "slave-lazy-flush")
	redisAddr := startRedisServer(t)
	rs := startRESP(t, server.Config{}, store.Config{})
	if got := dialCmd(t, rs.respAddr, false).do(t, "CONFIG", "SET", "activedefrag", "yes"); !strings.Contains(got, "Active defragmentation cannot be enabled") {
		t.Errorf("CONFIG SET activedefrag yes = %q", got)
	}
	for _, s := range []respSession{{name: "accepted configs", in: in}, {name: "accepted configs resp3", skip: 1, in: mb("HELLO", "3") + in}} {
		want, got := runRESPSession(redisAddr, s), runRESPSession(rs.respAddr, s)
		if want.err != nil || got.err != nil {
			t.Fatalf("redis: %v; minikv: %v", want.err, got.err)
		}
		if string(got.out) != string(want.out) {
			w, g := string(want.out), string(got.out)
			i := 0
			for i < len(w) && i < len(g) && w[i] == g[i] {
				i++
			}
			t.Errorf("session %q differs at byte %d\nredis:  %q\nminikv: %q", s.name, i, w[max(0, i-200):min(len(w), i+200)], g[max(0, i-200):min(len(g), i+200)])
		}
	}
}

package redis

import (
	"context"
	"fmt"
	"net"
	"strings"
	"testing"

	goredis "github.com/redis/go-redis/v9"

	"github.com/minikv/minikv/internal/server"
	"github.com/minikv/minikv/internal/store"
	"github.com/minikv/minikv/lsm/vfs"
)

// streamWrites builds a stream with groups, consumers, pending entries,
// deletions and a trim, over more than one node, on c.
func streamWrites(c interface{ Do(...string) string }, key string) {
	for i := 1; i <= 230; i++ {
		args := []string{"XADD", key, fmt.Sprintf("%d-1", i), "f", fmt.Sprint(i)}
		if i%9 == 0 {
			args = append(args, "g", "x")
		}
		c.Do(args...)
	}
	c.Do("XDEL", key, "5-1", "150-1")
	c.Do("XGROUP", "CREATE", key, "g1", "0")
	c.Do("XGROUP", "CREATE", key, "g2", "100-1", "ENTRIESREAD", "99")
	c.Do("XREADGROUP", "GROUP", "g1", "alice", "COUNT", "7", "STREAMS", key, ">")
	c.Do("XREADGROUP", "GROUP", "g1", "bob", "COUNT", "3", "STREAMS", key, ">")
	c.Do("XACK", key, "g1", "2-1", "9-1")
	c.Do("XCLAIM", key, "g1", "carol", "0", "3-1", "4-1", "JUSTID")
	c.Do("XREADGROUP", "GROUP", "g2", "dan", "NOACK", "COUNT", "2", "STREAMS", key, ">")
	c.Do("XGROUP", "CREATECONSUMER", key, "g2", "erin")
	c.Do("XTRIM", key, "MINID", "3-1")
	c.Do("XADD", key, "MAXLEN", "~", "200", "300-1", "last", "1")
}

// TestStreamRedisReplica: a redis-server replica of MiniKV gets every
// stream change (as the commands Redis propagates) and ends with the same
// stream, its groups' times included but the consumers' seen times (the
// replica's clock stamps them, as between Redis servers); a full sync
// carries streams exactly (Redis's own nodes: the same DUMP).
func TestStreamRedisReplica(t *testing.T) {
	rs := startRESP(t, server.Config{}, store.Config{})
	_, port, _ := net.SplitHostPort(rs.respAddr)
	c := dialRESP(t, rs.respAddr)
	streamWrites(c, "before")
	replica := startRedisServer(t, "--replicaof", "127.0.0.1", port)
	waitFor(t, "the replica's link", func() bool { return infoField(t, replica, "replication", "master_link_status") == "up" })
	streamWrites(c, "after")
	c.Do("XGROUP", "CREATE", "empty", "g", "$", "MKSTREAM")
	waitFor(t, "the replica to catch up", func() bool {
		off := infoField(t, rs.respAddr, "replication", "master_repl_offset")
		return off != "0" && infoField(t, replica, "replication", "slave_repl_offset") == off
	})
	sameKeys(t, rs.respAddr, replica, []string{"before", "empty"})
	rc := dialRESP(t, replica)
	for _, args := range [][]string{{"XRANGE", "after", "-", "+"}, {"XINFO", "STREAM", "after", "FULL", "COUNT", "0"}} {
		want, got := c.Do(args...), rc.Do(args...)
		if args[0] == "XINFO" {
			want, got = maskSeenTimes(drop72(want)), maskSeenTimes(drop72(got))
		}
		if got != want {
			t.Errorf("%q: MiniKV %q, its Redis replica %q", args, want, got)
		}
	}
	for _, k := range []string{"before"} {
		if want, got := rc.Do("DUMP", k), c.Do("DUMP", k); got != want {
			t.Errorf("DUMP %s: MiniKV %.120q, its Redis replica %.120q", k, got, want)
		}
	}
	// sameKeys left out Redis 7.2's fields (the replica is 7.0): MiniKV's
	// own say that a consumer is active after it read or claimed (alice,
	// bob, carol), not after a NOACK read (dan) or when only made (erin).
	for _, k := range []string{"before", "after"} {
		for g, want := range map[string]string{"g1": "alice:active bob:active carol:active", "g2": "dan:-1 erin:-1"} {
			var got []string
			for _, cons := range goredisConsumers(t, rs.respAddr, k, g) {
				a := "-1"
				if cons.Inactive >= 0 {
					a = "active"
				}
				got = append(got, cons.Name+":"+a)
			}
			if strings.Join(got, " ") != want {
				t.Errorf("%s %s: consumers %v, want %s", k, g, got, want)
			}
		}
	}
}

// TestStreamMiniKVFollowsRedis: MiniKV replicating a redis-server loads
// its streams from the full sync's RDB and applies Redis's stream of
// XADD (IDs made explicit), XTRIM, XGROUP and XCLAIM ... FORCE JUSTID
// LASTID (what XREADGROUP becomes), ending with the same entries and
// pending entries.
func TestStreamMiniKVFollowsRedis(t *testing.T) {
	primary := startRedisServer(t, "--repl-diskless-sync-delay", "0")
	p := dialRESP(t, primary)
	streamWrites(p, "before")
	rs := startRESP(t, server.Config{}, store.Config{})
	c := dialRESP(t, rs.respAddr)
	host, port, _ := net.SplitHostPort(primary)
	if got := c.Do("REPLICAOF", host, port); got != "+OK\r\n" {
		t.Fatalf("REPLICAOF = %q", got)
	}
	waitFor(t, "the link to the primary", func() bool { return infoField(t, rs.respAddr, "replication", "master_link_status") == "up" })
	streamWrites(p, "after")
	for i := 0; i < 5; i++ {
		p.Do("XADD", "auto", "MAXLEN", "~", "2", "*", "n", fmt.Sprint(i))
	}
	p.Do("XGROUP", "CREATE", "auto", "g", "0")
	p.Do("XREADGROUP", "GROUP", "g", "c", "STREAMS", "auto", ">")
	waitFor(t, "MiniKV to catch up", func() bool {
		off := infoField(t, primary, "replication", "master_repl_offset")
		return infoField(t, rs.respAddr, "replication", "slave_repl_offset") == off
	})
	for _, k := range []string{"before", "after", "auto"} {
		for _, args := range [][]string{{"XRANGE", k, "-", "+"}, {"XLEN", k}, {"XPENDING", k, "g1"}, {"XPENDING", k, "g", "-", "+", "100"},
			{"XINFO", "STREAM", k}} {
			want, got := p.Do(args...), c.Do(args...)
			if args[0] == "XPENDING" && len(args) > 3 {
				want, got = dropIdle(want), dropIdle(got)
			}
			if got != want {
				t.Errorf("%q: MiniKV %.200q, its Redis primary %.200q", args, got, want)
			}
		}
	}
}

// dropIdle blanks the idle times of an extended XPENDING reply (the
// third field of each entry), which depend on the clock.
func dropIdle(r string) string {
	lines := strings.Split(r, "\r\n")
	for i := 0; i+5 < len(lines); i++ {
		if lines[i] == "*4" {
			lines[i+5] = ":_"
		}
	}
	return strings.Join(lines, "\r\n")
}

// TestStreamDurableRestart: in durable mode a stream, its groups and
// their pending entries survive a restart exactly.
func TestStreamDurableRestart(t *testing.T) {
	mem := vfs.NewMem()
	reads := [][]string{{"XINFO", "STREAM", "s", "FULL", "COUNT", "0"}, {"XRANGE", "s", "-", "+", "COUNT", "5"}, {"XLEN", "s"},
		{"XINFO", "STREAM", "e"}, {"DUMP", "s"}}
	var before []string
	for life := range 2 {
		t.Run(fmt.Sprint("life", life), func(t *testing.T) {
			_, _, addr := startDurableOnMem(t, mem)
			c := dialRESP(t, addr)
			if life == 0 {
				streamWrites(c, "s")
				c.Do("XGROUP", "CREATE", "e", "g", "$", "MKSTREAM")
				for _, r := range reads {
					before = append(before, c.Do(r...))
				}
				if !strings.Contains(before[0], "alice") || before[2] == ":0\r\n" {
					t.Fatalf("the writes did not land: %.300q", before)
				}
				return
			}
			for i, r := range reads {
				if got := c.Do(r...); got != before[i] {
					t.Errorf("%q after the restart: %.200q, before it %.200q", r, got, before[i])
				}
			}
		})
	}
}

// TestStreamDumpMatchesRedis: the same writes give the same nodes as
// Redis's, byte for byte (DUMP), through node splits by entries and by
// bytes, same-fields and other entries, deletions and trims, and a
// changed stream-node-max-entries.
func TestStreamDumpMatchesRedis(t *testing.T) {
	redis := dialRESP(t, startRedisServer(t))
	mk := dialRESP(t, startRESP(t, server.Config{}, store.Config{}).respAddr)
	for _, c := range []interface{ Do(...string) string }{redis, mk} {
		for i := 1; i <= 250; i++ {
			args := []string{"XADD", "a", fmt.Sprintf("%d-%d", i/3, i), "f", fmt.Sprint(i)}
			if i%9 == 0 {
				args = append(args, "g", strings.Repeat("x", i))
			}
			c.Do(args...)
		}
		c.Do("XDEL", "a", "2-7", "50-150")
		c.Do("XTRIM", "a", "MAXLEN", "200")
		c.Do("XADD", "a", "MINID", "~", "40", "90-1", "big", strings.Repeat("y", 5000))
		c.Do("CONFIG", "SET", "stream-node-max-entries", "7")
		for i := 1; i <= 30; i++ {
			c.Do("XADD", "b", fmt.Sprintf("%d-1", i), "n", fmt.Sprint(-i*1000))
		}
		c.Do("CONFIG", "SET", "stream-node-max-entries", "100")
	}
	for _, k := range []string{"a", "b"} {
		if want, got := redis.Do("DUMP", k), mk.Do("DUMP", k); got != want {
			t.Errorf("DUMP %s: MiniKV %.200q, redis-server %.200q", k, got, want)
		}
		if want, got := redis.Do("XINFO", "STREAM", k), mk.Do("XINFO", "STREAM", k); got != want {
			t.Errorf("XINFO STREAM %s: MiniKV %.300q, redis-server %.300q", k, got, want)
		}
	}
}

// TestNonBlockingRead: XREAD and XREADGROUP run in the event loop unless
// BLOCK is among their options, whatever the group and consumer names.
func TestNonBlockingRead(t *testing.T) {
	xr, xg := respCommands["xread"], respCommands["xreadgroup"]
	for _, tc := range []struct {
		cmd  *respCommand
		args []string
		want bool
	}{
		{xr, []string{"xread", "STREAMS", "s", "0"}, true},
		{xr, []string{"xread", "COUNT", "5", "BLOCK", "0", "STREAMS", "s", "0"}, false},
		{xr, []string{"xread", "COUNT", "block", "STREAMS", "block", "0"}, true},
		{xg, []string{"xreadgroup", "GROUP", "streams", "c", "BLOCK", "0", "STREAMS", "s", ">"}, false},
		{xg, []string{"xreadgroup", "GROUP", "block", "block", "STREAMS", "s", ">"}, true},
		{xg, []string{"xreadgroup", "GROUP", "g", "c", "NOACK", "STREAMS", "block", ">"}, true},
		{respCommands["blpop"], []string{"blpop", "k", "0"}, false},
	} {
		argv := make([][]byte, len(tc.args))
		for i, a := range tc.args {
			argv[i] = []byte(a)
		}
		if got := nonBlockingRead(tc.cmd, argv); got != tc.want {
			t.Errorf("nonBlockingRead(%q) = %v, want %v", tc.args, got, tc.want)
		}
	}
}

// goredisConsumers is XINFO CONSUMERS key group through go-redis.
func goredisConsumers(t *testing.T, addr, key, group string) []goredis.XInfoConsumer {
	t.Helper()
	c := goredis.NewClient(&goredis.Options{Addr: addr, Protocol: 2})
	defer c.Close()
	cs, err := c.XInfoConsumers(context.Background(), key, group).Result()
	if err != nil {
		t.Fatalf("XINFO CONSUMERS %s %s: %v", key, group, err)
	}
	return cs
}

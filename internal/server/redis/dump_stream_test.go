package redis

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/minikv/minikv/internal/rdb"
	"github.com/minikv/minikv/internal/server"
	"github.com/minikv/minikv/internal/store"
	"github.com/minikv/minikv/lsm/vfs"
)

// streamDumpCmds build streams of every shape DUMP carries: entries with
// the master entry's fields and others, integer and long values,
// deletions (the first entry of a node among them), an exact trim that
// leaves a node partly deleted, groups with pending entries, consumers
// with none, a group whose read counter is unknown, integer-like names,
// an empty stream with a group, a stream whose entries are all deleted,
// XSETID's counters, many nodes. Explicit IDs: the same on both servers.
func streamDumpCmds() [][]any {
	var cmds [][]any
	add := func(args ...any) { cmds = append(cmds, args) }
	add("XADD", "x:same", "1-1", "a", "1", "b", "2")
	add("XADD", "x:same", "1-2", "a", "3", "b", "4")
	add("XADD", "x:same", "2-0", "a", "5")
	add("XADD", "x:same", "2-1", "c", strings.Repeat("long value ", 20), "d", "-12345678901")
	for i := range 40 {
		add("XADD", "x:del", fmt.Sprintf("%d-%d", 100+i/3, i%3), "f", i, "g", fmt.Sprint("v", i))
	}
	add("XDEL", "x:del", "100-0", "105-1", "113-0", "113-1")
	for i := range 300 {
		add("XADD", "x:trim", fmt.Sprintf("7-%d", i+1), "n", i)
	}
	add("XTRIM", "x:trim", "MAXLEN", "150")
	for i := range 20 {
		add("XADD", "x:groups", fmt.Sprintf("5-%d", i), "k", i)
	}
	add("XGROUP", "CREATE", "x:groups", "g1", "0")
	add("XGROUP", "CREATE", "x:groups", "g2", "$")
	add("XGROUP", "CREATE", "x:groups", "123", "5-3")
	add("XREADGROUP", "GROUP", "g1", "alice", "COUNT", 3, "STREAMS", "x:groups", ">")
	add("XREADGROUP", "GROUP", "g1", "bob", "COUNT", 4, "STREAMS", "x:groups", ">")
	add("XREADGROUP", "GROUP", "g1", "77", "COUNT", 2, "STREAMS", "x:groups", ">")
	add("XACK", "x:groups", "g1", "5-1", "5-4")
	add("XCLAIM", "x:groups", "g1", "alice", 0, "5-5", "5-6")
	add("XGROUP", "CREATECONSUMER", "x:groups", "g1", "idle")
	add("XREADGROUP", "GROUP", "123", "carol", "COUNT", 2, "STREAMS", "x:groups", ">")
	add("XDEL", "x:groups", "5-8")
	add("XGROUP", "CREATE", "x:groups", "gunknown", "5-10")
	add("XGROUP", "CREATE", "x:empty", "g", "$", "MKSTREAM")
	add("XADD", "x:alldel", "9-1", "a", "b")
	add("XDEL", "x:alldel", "9-1")
	add("XADD", "x:setid", "10-0", "a", "b")
	add("XSETID", "x:setid", "20-5", "ENTRIESADDED", 50, "MAXDELETEDID", "15-0")
	for i := range 700 {
		add("XADD", "x:big", fmt.Sprintf("%d-%d", 1700000000000+i*7, i%5), "field", i, "other", strings.Repeat("z", i%50))
	}
	return cmds
}

var streamDumpKeys = []string{"x:same", "x:del", "x:trim", "x:groups", "x:empty", "x:alldel", "x:setid", "x:big"}

// streamView is what the stream commands say of a stream, times left
// out: XRANGE, XINFO STREAM, XINFO GROUPS, each group's XPENDING summary
// and entries (not their idle times), XINFO CONSUMERS' names and pending
// counts.
func streamView(t *testing.T, c *redis.Client, key string) string {
	t.Helper()
	ctx := context.Background()
	do := func(args ...any) string {
		t.Helper()
		v, err := c.Do(ctx, args...).Result()
		if err != nil && err != redis.Nil {
			t.Fatalf("%v: %v", args, err)
		}
		return fmt.Sprint(v)
	}
	var b strings.Builder
	fmt.Fprintln(&b, do("XRANGE", key, "-", "+"))
	fmt.Fprintln(&b, do("XINFO", "STREAM", key))
	fmt.Fprintln(&b, do("XINFO", "GROUPS", key))
	groups, _ := c.XInfoGroups(ctx, key).Result()
	for _, g := range groups {
		fmt.Fprintln(&b, do("XPENDING", key, g.Name))
		pend, err := c.XPendingExt(ctx, &redis.XPendingExtArgs{Stream: key, Group: g.Name, Start: "-", End: "+", Count: 100}).Result()
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range pend {
			fmt.Fprintln(&b, p.ID, p.Consumer, p.RetryCount) // not the idle time
		}
		cs, err := c.XInfoConsumers(ctx, key, g.Name).Result()
		if err != nil {
			t.Fatal(err)
		}
		for _, cs := range cs {
			fmt.Fprintln(&b, cs.Name, cs.Pending)
		}
	}
	return b.String()
}

// TestStreamDumpRestoreWithRedis moves streams both ways: redis-server's
// DUMP RESTOREs into MiniKV, which then says of it all that Redis says
// (XINFO STREAM FULL, times included, and XRANGE) and DUMPs the same
// bytes; MiniKV's DUMP of a stream built by its own commands RESTOREs
// into redis-server, which then says of it what it says of its own.
func TestStreamDumpRestoreWithRedis(t *testing.T) {
	redisAddr := startRedisServer(t)
	rs := startRESP(t, server.Config{}, store.Config{MemoryLimit: 256 << 20})
	rc := redis.NewClient(&redis.Options{Addr: redisAddr, Protocol: 2})
	mc := redis.NewClient(&redis.Options{Addr: rs.respAddr, Protocol: 2})
	t.Cleanup(func() { rc.Close(); mc.Close() })
	ctx := context.Background()
	for _, cmd := range streamDumpCmds() {
		if err := rc.Do(ctx, cmd...).Err(); err != nil {
			t.Fatalf("redis %v: %v", cmd, err)
		}
		if err := mc.Do(ctx, cmd...).Err(); err != nil {
			t.Fatalf("minikv %v: %v", cmd, err)
		}
	}
	// full is XINFO STREAM FULL without Redis 7.2's active-time, which
	// redis-server 7.0 has not (drop72); MiniKV's restored from a 7.0
	// payload must equal the seen-time, as Redis 7.2 loads one.
	full := func(c *redis.Client, key string) string {
		v, err := c.Do(ctx, "XINFO", "STREAM", key, "FULL").Result()
		if err != nil {
			t.Fatalf("XINFO STREAM %s FULL: %v", key, err)
		}
		v, times := drop72Value(v)
		for _, st := range times {
			if c == mc && strings.HasPrefix(key, "from-redis:") && st[1] != st[0] {
				t.Errorf("%s: a consumer restored from a 7.0 payload: seen-time %d, active-time %d", key, st[0], st[1])
			}
		}
		return fmt.Sprint(v)
	}
	for _, k := range streamDumpKeys {
		t.Run(k, func(t *testing.T) {
			want := streamView(t, rc, k)
			// Redis -> MiniKV.
			p, err := rc.Dump(ctx, k).Result()
			if err != nil {
				t.Fatal(err)
			}
			if err := mc.Restore(ctx, "from-redis:"+k, 0, p).Err(); err != nil {
				t.Fatalf("RESTORE of redis's DUMP: %v", err)
			}
			if err := rc.Restore(ctx, "from-redis:"+k, 0, p).Err(); err != nil {
				t.Fatal(err)
			}
			if got, want := full(mc, "from-redis:"+k), full(rc, "from-redis:"+k); got != want {
				t.Errorf("XINFO STREAM FULL after RESTORE:\nminikv %.2000s\nredis  %.2000s", got, want)
			}
			if got := streamView(t, mc, "from-redis:"+k); got != want {
				t.Errorf("after RESTORE:\nminikv %.2000s\nredis  %.2000s", got, want)
			}
			mp, err := mc.Dump(ctx, "from-redis:"+k).Result()
			if err != nil || mp != p {
				t.Errorf("DUMP of the restored stream differs (%v):\nminikv %q\nredis  %q", err, mp, p)
			}
			// MiniKV -> Redis: the stream MiniKV built itself.
			if got := streamView(t, mc, k); got != want {
				t.Errorf("built by MiniKV's commands:\nminikv %.2000s\nredis  %.2000s", got, want)
			}
			mp, err = mc.Dump(ctx, k).Result()
			if err != nil {
				t.Fatal(err)
			}
			if err := rc.Restore(ctx, "from-minikv:"+k, 0, mp).Err(); err != nil {
				t.Fatalf("redis RESTORE of MiniKV's DUMP %q: %v", mp, err)
			}
			if got := streamView(t, rc, "from-minikv:"+k); got != want {
				t.Errorf("minikv -> redis:\ngot  %.2000s\nwant %.2000s", got, want)
			}
		})
	}
	// A payload Redis refuses (a node whose master entry counts two
	// entries, holding one) MiniKV refuses with Redis's error, leaving
	// the key as it was under REPLACE.
	p := []byte(rc.Dump(ctx, "x:setid").Val())
	if p[1] != 1 || p[2] != 16 || p[26] != 1 {
		t.Fatalf("x:setid's DUMP is not one plain node: %q", p)
	}
	obj := p[:len(p)-10]
	obj[26] = 2
	bad := string(rdb.Seal(obj))
	if err := rc.ConfigSet(ctx, "sanitize-dump-payload", "yes").Err(); err != nil { // MiniKV always checks
		t.Fatal(err)
	}
	for name, c := range map[string]*redis.Client{"redis": rc, "minikv": mc} {
		err := c.RestoreReplace(ctx, "x:same", 0, bad).Err()
		if err == nil || err.Error() != "ERR Bad data format" {
			t.Errorf("%s: RESTORE of a bad stream: %v", name, err)
		}
		if typ := c.Type(ctx, "x:same").Val(); typ != "stream" {
			t.Errorf("%s: the key after a refused RESTORE REPLACE: %s", name, typ)
		}
	}
}

// TestStreamFullSync: streams travel in a full resync's RDB both ways: an
// unmodified redis-server replica of MiniKV, and MiniKV a replica of
// redis-server, each end up saying of every stream what its primary
// says (XINFO STREAM FULL included).
func TestStreamFullSync(t *testing.T) {
	ctx := context.Background()
	build := func(c *redis.Client) {
		for _, cmd := range streamDumpCmds() {
			if err := c.Do(ctx, cmd...).Err(); err != nil {
				t.Fatalf("%v: %v", cmd, err)
			}
		}
	}
	var mc2 *redis.Client // MiniKV, the replica of Redis
	same := func(primary, replica *redis.Client) {
		t.Helper()
		for _, k := range streamDumpKeys {
			if got, want := streamView(t, replica, k), streamView(t, primary, k); got != want {
				t.Errorf("%s: replica\n%.2000s\nprimary\n%.2000s", k, got, want)
			}
			// Without Redis 7.2's active-time (drop72), which only
			// MiniKV's side has: a 7.0 RDB does not carry it, and MiniKV
			// loading one sets it to the seen-time, as Redis 7.2 does.
			got, _ := replica.Do(ctx, "XINFO", "STREAM", k, "FULL").Result()
			want, _ := primary.Do(ctx, "XINFO", "STREAM", k, "FULL").Result()
			got, gotTimes := drop72Value(got)
			want, _ = drop72Value(want)
			if replica == mc2 {
				for _, st := range gotTimes {
					if st[1] != st[0] {
						t.Errorf("%s: a consumer loaded from Redis's RDB: seen-time %d, active-time %d", k, st[0], st[1])
					}
				}
			}
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("%s: XINFO STREAM FULL: replica\n%.2000v\nprimary\n%.2000v", k, got, want)
			}
		}
	}

	// A Redis replica of MiniKV.
	rs := startRESP(t, server.Config{}, store.Config{MemoryLimit: 256 << 20})
	mc := redis.NewClient(&redis.Options{Addr: rs.respAddr, Protocol: 2})
	t.Cleanup(func() { mc.Close() })
	build(mc)
	_, port, _ := net.SplitHostPort(rs.respAddr)
	replica := startRedisServer(t, "--replicaof", "127.0.0.1", port)
	waitFor(t, "the Redis replica's link", func() bool { return infoField(t, replica, "replication", "master_link_status") == "up" })
	rc := redis.NewClient(&redis.Options{Addr: replica, Protocol: 2})
	t.Cleanup(func() { rc.Close() })
	same(mc, rc)

	// MiniKV a replica of Redis.
	primary := startRedisServer(t, "--repl-diskless-sync-delay", "0")
	pc := redis.NewClient(&redis.Options{Addr: primary, Protocol: 2})
	t.Cleanup(func() { pc.Close() })
	build(pc)
	rs2 := startRESP(t, server.Config{}, store.Config{MemoryLimit: 256 << 20})
	mc2 = redis.NewClient(&redis.Options{Addr: rs2.respAddr, Protocol: 2})
	t.Cleanup(func() { mc2.Close() })
	host, pport, _ := net.SplitHostPort(primary)
	if err := mc2.Do(ctx, "REPLICAOF", host, pport).Err(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "MiniKV's link to Redis", func() bool { return infoField(t, rs2.respAddr, "replication", "master_link_status") == "up" })
	same(pc, mc2)
}

// TestStreamDumpDurable: in durable mode (the store over its disk) a
// restored stream DUMPs back byte for byte, and rdb.Save, which walks the
// disk there, writes it so that a memory store loading the file DUMPs the
// same bytes again.
func TestStreamDumpDurable(t *testing.T) {
	redisAddr := startRedisServer(t)
	rc := redis.NewClient(&redis.Options{Addr: redisAddr, Protocol: 2})
	t.Cleanup(func() { rc.Close() })
	ctx := context.Background()
	for _, cmd := range streamDumpCmds() {
		if err := rc.Do(ctx, cmd...).Err(); err != nil {
			t.Fatalf("redis %v: %v", cmd, err)
		}
	}
	st, _, respAddr := startDurableOnMem(t, vfs.NewMem())
	mc := redis.NewClient(&redis.Options{Addr: respAddr, Protocol: 2})
	t.Cleanup(func() { mc.Close() })
	want := map[string]string{}
	for _, k := range streamDumpKeys {
		p, err := rc.Dump(ctx, k).Result()
		if err != nil {
			t.Fatal(err)
		}
		want[k] = p
		if err := mc.Restore(ctx, k, 0, p).Err(); err != nil {
			t.Fatalf("%s: RESTORE: %v", k, err)
		}
		if got, err := mc.Dump(ctx, k).Result(); err != nil || got != p {
			t.Errorf("%s: DUMP in durable mode (%v):\nminikv %q\nredis  %q", k, err, got, p)
		}
	}
	var buf bytes.Buffer
	if _, err := rdb.Save(&buf, st, rdb.SaveOptions{}); err != nil {
		t.Fatal(err)
	}
	mem := store.New(store.Config{MemoryLimit: 64 << 20})
	defer mem.Close()
	if _, err := rdb.LoadBytes(buf.Bytes(), mem, rdb.LoadOptions{}); err != nil {
		t.Fatalf("loading the durable store's file: %v", err)
	}
	for _, k := range streamDumpKeys {
		got, ok, err := rdb.Dump(mem, []byte(k))
		if err != nil || !ok || string(got) != want[k] {
			t.Errorf("%s: after SAVE and load (%v %v):\ngot  %q\nwant %q", k, ok, err, got, want[k])
		}
	}
}

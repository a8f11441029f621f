package redis

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"net"
	"regexp"
	"strconv"
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
	// full is XINFO STREAM FULL: every time in it (seen-time, active-time,
	// delivery times) is absolute, so the same payload restored into both
	// says the same, the consumers' active-times (carried by 7.2's type
	// 21) included.
	full := func(c *redis.Client, key string) string {
		v, err := c.Do(ctx, "XINFO", "STREAM", key, "FULL").Result()
		if err != nil {
			t.Fatalf("XINFO STREAM %s FULL: %v", key, err)
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
	same := func(primary, replica *redis.Client) {
		t.Helper()
		for _, k := range streamDumpKeys {
			if got, want := streamView(t, replica, k), streamView(t, primary, k); got != want {
				t.Errorf("%s: replica\n%.2000s\nprimary\n%.2000s", k, got, want)
			}
			// Times included: the RDB (type 21) carries the consumers'
			// active-times as well as their seen-times.
			got, _ := replica.Do(ctx, "XINFO", "STREAM", k, "FULL").Result()
			want, _ := primary.Do(ctx, "XINFO", "STREAM", k, "FULL").Result()
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
	mc2 := redis.NewClient(&redis.Options{Addr: rs2.respAddr, Protocol: 2})
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

// stream70Payload is redis-server 7.0.15's DUMP (RDB version 10, type 19:
// no active-times) of a stream with entries 1-1, 1-2 and 2-0, group g
// (alice holding 1-1 and 1-2, bob made by XGROUP CREATECONSUMER) and an
// empty group g2.
const stream70Payload = "\x13\x01\x10\x00\x00\x00\x00\x00\x00\x00\x01\x00\x00\x00\x00\x00\x00\x00\x01\xc3\x35\x3b\x11\x3b\x00\x00\x00\x18\x00\x03\x01\x00\x01\x01\x01\x81\x61\x02\x00\x01\x02\x20\x0a\x40\x0c\x00\x04\x20\x05\x40\x07\x20\x16\x04\x62\x02\x02\x01\x06\x60\x0c\x02\xdf\xff\x02\x20\x0f\x02\x63\x02\x03\x20\x0f\x00\xff\x03\x02\x00\x01\x01\x00\x00\x03\x02\x01\x67\x01\x02\x02\x02\x00\x00\x00\x00\x00\x00\x00\x01\x00\x00\x00\x00\x00\x00\x00\x01\xc0\x17\x49\x43\xa2\x01\x00\x00\x01\x00\x00\x00\x00\x00\x00\x00\x01\x00\x00\x00\x00\x00\x00\x00\x02\xc0\x17\x49\x43\xa2\x01\x00\x00\x01\x02\x05\x61\x6c\x69\x63\x65\xc0\x17\x49\x43\xa2\x01\x00\x00\x02\x00\x00\x00\x00\x00\x00\x00\x01\x00\x00\x00\x00\x00\x00\x00\x01\x00\x00\x00\x00\x00\x00\x00\x01\x00\x00\x00\x00\x00\x00\x00\x02\x03\x62\x6f\x62\xd5\x17\x49\x43\xa2\x01\x00\x00\x00\x02\x67\x32\x02\x00\x81\xff\xff\xff\xff\xff\xff\xff\xff\x00\x00\x0a\x00\x53\xe2\xd3\xaf\x02\xf9\xca\x74"

// seal10 seals an object as Redis 7.0's DUMP does: RDB version 10.
func seal10(obj string) string {
	p := binary.LittleEndian.AppendUint16([]byte(obj), 10)
	return string(binary.LittleEndian.AppendUint64(p, rdb.CRC64(0, p)))
}

// TestRestore70Payloads: payloads of RDB version 10 (Redis 7.0's DUMP)
// RESTORE into MiniKV as into redis-server 7.2: a stream without
// active-times (each consumer's becomes its seen-time, XINFO STREAM FULL
// equal on both), plain sets (RDB_TYPE_SET, in a 7.0 hashtable's order)
// that 7.2 loads as listpacks, intsets or hashtables; and each server
// then DUMPs the same version-11 bytes.
func TestRestore70Payloads(t *testing.T) {
	redisAddr := startRedisServer(t)
	rs := startRESP(t, server.Config{}, store.Config{MemoryLimit: 64 << 20})
	rc := redis.NewClient(&redis.Options{Addr: redisAddr, Protocol: 2})
	mc := redis.NewClient(&redis.Options{Addr: rs.respAddr, Protocol: 2})
	t.Cleanup(func() { rc.Close(); mc.Close() })
	ctx := context.Background()
	if got := seal10(stream70Payload[:len(stream70Payload)-10]); got != stream70Payload {
		t.Fatalf("seal10 does not make 7.0's footer: %q", got[len(got)-10:])
	}
	set := func(members ...string) string {
		obj := rdb.AppendLen([]byte{2}, uint64(len(members)))
		for _, m := range members {
			obj = rdb.AppendString(obj, []byte(m))
		}
		return seal10(string(obj))
	}
	var many []string
	for i := range 200 {
		many = append(many, "m"+strconv.Itoa(i))
	}
	payloads := map[string]string{
		"stream":     stream70Payload,
		"set:strs":   set("c", "a", "hello", "b"),
		"set:mixed":  set("5", "x", "-7", "1000000"),
		"set:ints":   set("3", "1", "2"),
		"set:long":   set("a", strings.Repeat("L", 65)),
		"set:many":   set(many...),
		"set:string": seal10("\x00\x05hello"),
	}
	for k, p := range payloads {
		for name, c := range map[string]*redis.Client{"redis": rc, "minikv": mc} {
			if err := c.Restore(ctx, k, 0, p).Err(); err != nil {
				t.Fatalf("%s: RESTORE %s: %v", name, k, err)
			}
		}
		if k == "stream" {
			got := mc.Do(ctx, "XINFO", "STREAM", k, "FULL").Val()
			want := rc.Do(ctx, "XINFO", "STREAM", k, "FULL").Val()
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("XINFO STREAM FULL:\nminikv %v\nredis  %v", got, want)
			}
			times := regexp.MustCompile(`seen-time (\d+) active-time (\d+)`).FindAllStringSubmatch(fmt.Sprint(want), -1)
			if len(times) != 2 || times[0][1] != times[0][2] || times[1][1] != times[1][2] {
				t.Errorf("redis-server's consumers' seen-time, active-time: %v", times)
			}
		} else if got, want := mc.ObjectEncoding(ctx, k).Val(), rc.ObjectEncoding(ctx, k).Val(); got != want {
			t.Errorf("%s: OBJECT ENCODING %s, redis %s", k, got, want)
		}
		got, want := mc.Dump(ctx, k).Val(), rc.Dump(ctx, k).Val()
		if rc.ObjectEncoding(ctx, k).Val() != "hashtable" && got != want { // a hashtable's order is the server's own
			t.Errorf("%s: DUMP after RESTORE of 7.0's payload:\nminikv %q\nredis  %q", k, got, want)
		}
		if want[len(want)-10] != 11 {
			t.Errorf("%s: redis-server's DUMP is of version %d", k, want[len(want)-10])
		}
	}
}

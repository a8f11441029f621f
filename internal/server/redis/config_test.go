package redis

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/minikv/minikv/internal/server"
	"github.com/minikv/minikv/internal/store"
)

// pollUntil calls cond until it reports true, failing the test after a
// generous hang guard; it never asserts on how long it took.
func pollUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); !cond(); {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestConfigSetMaxmemoryEvicts: CONFIG SET maxmemory below what is stored
// evicts down to it before the reply, INFO and CONFIG GET report the new
// limit, and noeviction then refuses writes with Redis's OOM error.
func TestConfigSetMaxmemoryEvicts(t *testing.T) {
	rs := startRESP(t, server.Config{}, store.Config{MemoryLimit: 16 << 20})
	ctx := context.Background()
	rdb := redis.NewClient(&redis.Options{Addr: rs.respAddr, MaxRetries: -1})
	t.Cleanup(func() { rdb.Close() })
	val := strings.Repeat("x", 200)
	pipe := rdb.Pipeline()
	for i := range 20000 {
		pipe.Set(ctx, fmt.Sprintf("k%05d", i), val, 0)
	}
	if _, err := pipe.Exec(ctx); err != nil {
		t.Fatal(err)
	}
	if err := rdb.ConfigSet(ctx, "maxmemory", "1mb").Err(); err != nil {
		t.Fatalf("CONFIG SET maxmemory 1mb: %v", err)
	}
	if got := rdb.ConfigGet(ctx, "maxmemory").Val()["maxmemory"]; got != "1048576" {
		t.Errorf("CONFIG GET maxmemory = %q, want 1048576", got)
	}
	st := rs.store.Stats()
	if st.Bytes > 1<<20 || st.Evictions == 0 {
		t.Errorf("after CONFIG SET maxmemory 1mb: Bytes %d Evictions %d", st.Bytes, st.Evictions)
	}
	info := rdb.Info(ctx, "memory", "stats").Val()
	for _, f := range []string{"maxmemory:1048576\r\n", "maxmemory_policy:allkeys-lru\r\n", fmt.Sprintf("evicted_keys:%d\r\n", st.Evictions)} {
		if !strings.Contains(info, f) {
			t.Errorf("INFO lacks %q", f)
		}
	}
	if n := rdb.DBSize(ctx).Val(); n == 0 || n >= 20000 {
		t.Errorf("DBSIZE = %d after the cut", n)
	}

	// noeviction: over the limit, writes are refused, reads go on.
	if err := rdb.ConfigSet(ctx, "maxmemory-policy", "noeviction").Err(); err != nil {
		t.Fatal(err)
	}
	if err := rdb.ConfigSet(ctx, "maxmemory", "100kb").Err(); err != nil {
		t.Fatal(err)
	}
	if err := rdb.Set(ctx, "new", val, 0).Err(); err == nil || err.Error() != errOOM {
		t.Errorf("SET over the limit with noeviction = %v, want %q", err, errOOM)
	}
	if got := rdb.ConfigGet(ctx, "maxmemory-policy").Val()["maxmemory-policy"]; got != "noeviction" {
		t.Errorf("CONFIG GET maxmemory-policy = %q", got)
	}
	// Back to evicting: the store sheds down to the limit at once.
	if err := rdb.ConfigSet(ctx, "maxmemory-policy", "ALLKEYS-LRU").Err(); err != nil {
		t.Fatal(err)
	}
	if b := rs.store.Stats().Bytes; b > 100<<10 {
		t.Errorf("after allkeys-lru: Bytes %d over 100kb", b)
	}
	if err := rdb.Set(ctx, "new", val, 0).Err(); err != nil {
		t.Errorf("SET with allkeys-lru: %v", err)
	}
}

// TestConfigSetTimeoutKicksIdle: CONFIG SET timeout applies to connections
// already open and idle, which MiniKV started without a timeout, and
// counts them as idle kicks; timeout 0 turns it off again.
func TestConfigSetTimeoutKicksIdle(t *testing.T) {
	rs := startRESP(t, server.Config{}, store.Config{})
	idle := dialRESP(t, rs.respAddr)
	idle.Expect(multibulk("PING"), "+PONG\r\n")
	mc := dial(t, rs.addr) // a memcached connection goes the same way
	mc.Expect("version\r\n", "VERSION "+server.Version)

	admin := dialRESP(t, rs.respAddr)
	admin.Expect(multibulk("CONFIG", "SET", "timeout", "1"), "+OK\r\n")
	admin.Expect(multibulk("CONFIG", "GET", "timeout"), "*2\r\n$7\r\ntimeout\r\n$1\r\n1\r\n")
	if !idle.Closed(30*time.Second) || !mc.Closed(30*time.Second) {
		t.Fatal("idle connections still open after CONFIG SET timeout 1")
	}
	if n := rs.srv.Stats().Count[server.StatIdleKicks]; n < 2 {
		t.Errorf("idle kicks = %d, want at least 2", n)
	}
	// The admin connection may have been idle past the timeout too (an
	// event loop applies it to every connection, as Redis's cron does).
	admin = dialRESP(t, rs.respAddr)
	admin.Expect(multibulk("CONFIG", "SET", "timeout", "0"), "+OK\r\n")
	if got := rs.srv.IdleTimeout(); got != 0 {
		t.Errorf("IdleTimeout() = %v after timeout 0", got)
	}
}

// TestConfigSetMaxclients: a lowered maxclients refuses new connections
// with Redis's error while the open ones stay.
func TestConfigSetMaxclients(t *testing.T) {
	rs := startRESP(t, server.Config{}, store.Config{})
	a := dialRESP(t, rs.respAddr)
	a.Expect(multibulk("CONFIG", "SET", "maxclients", "1"), "+OK\r\n")
	b := dialRESP(t, rs.respAddr)
	if got := b.Reply(); got != "-ERR max number of clients reached\r\n" {
		t.Errorf("connection over maxclients 1: %q", got)
	}
	a.Expect(multibulk("CONFIG", "GET", "maxclients"), "*2\r\n$10\r\nmaxclients\r\n$1\r\n1\r\n")
	a.Expect(multibulk("CONFIG", "SET", "maxclients", "100"), "+OK\r\n")
	c := dialRESP(t, rs.respAddr)
	c.Expect(multibulk("PING"), "+PONG\r\n")
}

// TestConfigSetErrors pins MiniKV's own refusals, where Redis would accept.
func TestConfigSetErrors(t *testing.T) {
	rs := startRESP(t, server.Config{}, store.Config{})
	c := dialRESP(t, rs.respAddr)
	fail := func(arg, why string) string {
		return "-ERR CONFIG SET failed (possibly related to argument '" + arg + "') - " + why + "\r\n"
	}
	c.Expect(multibulk("CONFIG", "SET", "maxmemory-policy", "volatile-lru"), fail("maxmemory-policy", "MiniKV supports only allkeys-lru, allkeys-lfu and noeviction"))
	c.Expect(multibulk("CONFIG", "SET", "maxmemory-policy", "volatile-lfu"), fail("maxmemory-policy", "MiniKV supports only allkeys-lru, allkeys-lfu and noeviction"))
	c.Expect(multibulk("CONFIG", "GET", "maxmemory-policy"), "*2\r\n$16\r\nmaxmemory-policy\r\n$11\r\nallkeys-lru\r\n")
	c.Expect(multibulk("CONFIG", "SET", "port", "7000"), fail("port", "can't set immutable config"))
	c.Expect(multibulk("CONFIG", "SET", "maxclients", "7", "maxmemory-policy", "volatile-lru"), fail("maxmemory-policy", "MiniKV supports only allkeys-lru, allkeys-lfu and noeviction"))
	c.Expect(multibulk("CONFIG", "GET", "maxclients"), "*2\r\n$10\r\nmaxclients\r\n$4\r\n1024\r\n")
}

// TestConfigSetMaxmemoryZeroIsNoLimit: maxmemory 0 is no limit, as in
// Redis. A multi-parameter CONFIG SET with a bad value changes nothing;
// one that lifts the limit applies both values, every report says 0, a
// write far over the old limit succeeds without evicting, and a nonzero
// value afterwards is a limit again, evicted down to at once.
func TestConfigSetMaxmemoryZeroIsNoLimit(t *testing.T) {
	rs := startRESP(t, server.Config{}, store.Config{MemoryLimit: 16 << 20})
	ctx := context.Background()
	rdb := redis.NewClient(&redis.Options{Addr: rs.respAddr, MaxRetries: -1})
	t.Cleanup(func() { rdb.Close() })
	get := func(name string) string { return rdb.ConfigGet(ctx, name).Val()[name] }

	if err := rdb.Do(ctx, "CONFIG", "SET", "timeout", "70", "maxmemory", "100").Err(); err != nil {
		t.Fatalf("CONFIG SET timeout 70 maxmemory 100: %v", err)
	}
	err := rdb.Do(ctx, "CONFIG", "SET", "timeout", "0", "maxmemory", "bogus").Err()
	if want := "ERR CONFIG SET failed (possibly related to argument 'maxmemory') - argument must be a memory value"; err == nil || err.Error() != want {
		t.Errorf("CONFIG SET timeout 0 maxmemory bogus = %v, want %q", err, want)
	}
	if got, mm := get("timeout"), get("maxmemory"); got != "70" || mm != "100" {
		t.Errorf("after the refused SET: timeout %q maxmemory %q, want 70 and 100 (all or nothing)", got, mm)
	}
	if err := rdb.Set(ctx, "k", strings.Repeat("v", 100), 0).Err(); err == nil || err.Error() != errOOM {
		t.Errorf("SET of 100 bytes under maxmemory 100 = %v, want %q", err, errOOM)
	}
	if err := rdb.Do(ctx, "CONFIG", "SET", "timeout", "0", "maxmemory", "0").Err(); err != nil {
		t.Fatalf("CONFIG SET timeout 0 maxmemory 0: %v", err)
	}
	if got, mm := get("timeout"), get("maxmemory"); got != "0" || mm != "0" {
		t.Errorf("after CONFIG SET timeout 0 maxmemory 0: timeout %q maxmemory %q, want 0 and 0", got, mm)
	}
	if rs.store.MemoryLimit() != 0 || rs.srv.IdleTimeout() != 0 {
		t.Errorf("store limit %d, idle timeout %v: want 0 and 0", rs.store.MemoryLimit(), rs.srv.IdleTimeout())
	}
	info := rdb.Info(ctx, "memory").Val()
	for _, f := range []string{"\r\nmaxmemory:0\r\n", "\r\nmaxmemory_human:0B\r\n"} {
		if !strings.Contains(info, f) {
			t.Errorf("INFO memory lacks %q", f[2:])
		}
	}
	mc := dial(t, rs.addr)
	mc.Send("stats\r\n")
	for line := mc.Line(); line != "END"; line = mc.Line() {
		if strings.HasPrefix(line, "STAT limit_maxbytes ") && line != "STAT limit_maxbytes 0" {
			t.Errorf("memcached stats: %q, want STAT limit_maxbytes 0", line)
		}
	}

	// Far more than the old 16 MiB, in values of 4 MiB: nothing evicted.
	big := strings.Repeat("v", 4<<20)
	for i := range 8 {
		if err := rdb.Set(ctx, fmt.Sprintf("big:%d", i), big, 0).Err(); err != nil {
			t.Fatalf("SET big:%d without a limit: %v", i, err)
		}
	}
	if st := rs.store.Stats(); st.Evictions != 0 || st.Bytes < 32<<20 || st.Limit != 0 {
		t.Errorf("without a limit: Evictions %d Bytes %d Limit %d", st.Evictions, st.Bytes, st.Limit)
	}
	if got := rdb.StrLen(ctx, "big:0").Val(); got != 4<<20 {
		t.Errorf("STRLEN big:0 = %d", got)
	}

	// A limit again: evicted down to it before the reply.
	if err := rdb.ConfigSet(ctx, "maxmemory", "8mb").Err(); err != nil {
		t.Fatal(err)
	}
	if st := rs.store.Stats(); st.Bytes > 8<<20 || st.Evictions == 0 || st.Limit != 8<<20 {
		t.Errorf("after maxmemory 8mb: Bytes %d Evictions %d Limit %d", st.Bytes, st.Evictions, st.Limit)
	}
	if got := get("maxmemory"); got != "8388608" {
		t.Errorf("CONFIG GET maxmemory = %q, want 8388608", got)
	}
}

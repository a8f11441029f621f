package redis

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/minikv/minikv/internal/server"
	"github.com/minikv/minikv/internal/store"
)

// newGoRedis returns a go-redis client with default options (RESP3 via
// HELLO 3) against a fresh server, or with protocol 2 when resp2 is set.
func newGoRedis(t *testing.T, resp2 bool) (*redis.Client, *respServer) {
	t.Helper()
	rs := startRESP(t, server.Config{}, store.Config{})
	opt := &redis.Options{Addr: rs.respAddr, MaxRetries: -1}
	if resp2 {
		opt.Protocol = 2
	}
	rdb := redis.NewClient(opt)
	t.Cleanup(func() { rdb.Close() })
	return rdb, rs
}

// TestGoRedis runs every command through go-redis, over RESP3 (its
// default) and RESP2.
func TestGoRedis(t *testing.T) {
	for _, resp2 := range []bool{false, true} {
		t.Run(fmt.Sprintf("resp2=%v", resp2), func(t *testing.T) {
			rdb, _ := newGoRedis(t, resp2)
			testGoRedisCommands(t, rdb, resp2)
		})
	}
}

func testGoRedisCommands(t *testing.T, rdb *redis.Client, resp2 bool) {
	ctx := context.Background()
	check := func(what string, got, want any) {
		t.Helper()
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s = %v, want %v", what, got, want)
		}
	}
	// checkTTL allows a second less than want: TTL rounds to the nearest
	// second, and a loaded machine may take half a second between calls.
	checkTTL := func(what string, got, want time.Duration) {
		t.Helper()
		if got != want && got != want-time.Second {
			t.Errorf("%s = %v, want %v", what, got, want)
		}
	}
	noErr := func(what string, err error) {
		t.Helper()
		if err != nil {
			t.Errorf("%s: %v", what, err)
		}
	}
	wantErr := func(what string, err error, want string) {
		t.Helper()
		if err == nil || err.Error() != want {
			t.Errorf("%s error = %v, want %q", what, err, want)
		}
	}

	// Connection.
	check("PING", rdb.Ping(ctx).Val(), "PONG")
	check("ECHO", rdb.Echo(ctx, "hi there").Val(), "hi there")
	check("PING msg", rdb.Do(ctx, "PING", "x").Val(), "x")
	check("TIME year", rdb.Time(ctx).Val().Year() >= 2024, true)
	id, err := rdb.ClientID(ctx).Result()
	noErr("CLIENT ID", err)
	check("CLIENT ID > 0", id > 0, true)
	check("SELECT 0", rdb.Do(ctx, "SELECT", "0").Val(), "OK")
	wantErr("SELECT 16", rdb.Do(ctx, "SELECT", "16").Err(), "ERR DB index is out of range")
	wantErr("AUTH pass", rdb.Do(ctx, "AUTH", "pw").Err(), errNoPassword)
	check("AUTH default pw", rdb.Do(ctx, "AUTH", "default", "pw").Val(), "OK")
	wantErr("AUTH user pw", rdb.Do(ctx, "AUTH", "bob", "pw").Err(), errWrongPass)

	// SET and its options.
	noErr("SET", rdb.Set(ctx, "k", "v", 0).Err())
	check("GET", rdb.Get(ctx, "k").Val(), "v")
	_, err = rdb.Get(ctx, "missing").Result()
	check("GET missing is redis.Nil", err == redis.Nil, true)
	check("SET NX existing", rdb.SetNX(ctx, "k", "x", 0).Val(), false)
	check("SET XX existing", rdb.SetXX(ctx, "k", "v2", 0).Val(), true)
	check("SET XX missing", rdb.SetXX(ctx, "nokey", "v", 0).Val(), false)
	check("SET NX missing", rdb.SetArgs(ctx, "nx1", "v", redis.SetArgs{Mode: "NX"}).Val(), "OK")
	old, err := rdb.SetArgs(ctx, "k", "v3", redis.SetArgs{Get: true}).Result()
	noErr("SET GET", err)
	check("SET GET old", old, "v2")
	noErr("SET EX", rdb.Set(ctx, "ttl", "v", 100*time.Second).Err())
	checkTTL("TTL", rdb.TTL(ctx, "ttl").Val(), 100*time.Second)
	noErr("SET KEEPTTL", rdb.SetArgs(ctx, "ttl", "w", redis.SetArgs{KeepTTL: true}).Err())
	check("TTL after KEEPTTL", rdb.TTL(ctx, "ttl").Val() > 90*time.Second, true)
	check("GET after KEEPTTL", rdb.Get(ctx, "ttl").Val(), "w")
	noErr("SET PX", rdb.Do(ctx, "SET", "px", "v", "PX", "50000").Err())
	check("PTTL", rdb.PTTL(ctx, "px").Val() > 49*time.Second, true)
	exat := time.Now().Add(time.Hour).Unix()
	noErr("SET EXAT", rdb.Do(ctx, "SET", "exat", "v", "EXAT", exat).Err())
	check("EXPIRETIME", rdb.ExpireTime(ctx, "exat").Val(), time.Duration(exat)*time.Second)
	noErr("SET PXAT", rdb.Do(ctx, "SET", "pxat", "v", "PXAT", exat*1000+5).Err())
	check("PEXPIRETIME", rdb.PExpireTime(ctx, "pxat").Val(), time.Duration(exat*1000+5)*time.Millisecond)
	noErr("SET without KEEPTTL clears TTL", rdb.Set(ctx, "ttl", "x", 0).Err())
	check("TTL cleared", rdb.TTL(ctx, "ttl").Val(), time.Duration(-1))
	wantErr("SET NX XX", rdb.Do(ctx, "SET", "a", "b", "NX", "XX").Err(), errSyntax)
	wantErr("SET EX KEEPTTL", rdb.Do(ctx, "SET", "a", "b", "EX", "1", "KEEPTTL").Err(), errSyntax)
	wantErr("SET EX PX", rdb.Do(ctx, "SET", "a", "b", "EX", "1", "PX", "1").Err(), errSyntax)
	wantErr("SET EX 0", rdb.Do(ctx, "SET", "a", "b", "EX", "0").Err(), "ERR invalid expire time in 'set' command")
	wantErr("SET EX -1", rdb.Do(ctx, "SET", "a", "b", "EX", "-1").Err(), "ERR invalid expire time in 'set' command")
	wantErr("SET EX abc", rdb.Do(ctx, "SET", "a", "b", "EX", "abc").Err(), errNotInt)
	wantErr("SET EX missing arg", rdb.Do(ctx, "SET", "a", "b", "EX").Err(), errSyntax)
	wantErr("GET arity", rdb.Do(ctx, "GET").Err(), "ERR wrong number of arguments for 'get' command")
	wantErr("unknown", rdb.Do(ctx, "FOO", "a", "b").Err(), "ERR unknown command 'FOO', with args beginning with: 'a' 'b' ")

	// SETNX, SETEX, PSETEX, GETSET, GETDEL, GETEX.
	check("SETNX new", rdb.Do(ctx, "SETNX", "snx", "1").Val(), int64(1))
	check("SETNX again", rdb.Do(ctx, "SETNX", "snx", "2").Val(), int64(0))
	noErr("SETEX", rdb.SetEx(ctx, "sex", "v", 10*time.Second).Err())
	checkTTL("SETEX TTL", rdb.TTL(ctx, "sex").Val(), 10*time.Second)
	wantErr("SETEX 0", rdb.Do(ctx, "SETEX", "sex", "0", "v").Err(), "ERR invalid expire time in 'setex' command")
	noErr("PSETEX", rdb.Do(ctx, "PSETEX", "psex", "20000", "v").Err())
	check("PSETEX PTTL", rdb.PTTL(ctx, "psex").Val() > 19*time.Second, true)
	wantErr("PSETEX -5", rdb.Do(ctx, "PSETEX", "psex", "-5", "v").Err(), "ERR invalid expire time in 'psetex' command")
	check("GETSET", rdb.GetSet(ctx, "snx", "3").Val(), "1")
	check("GETSET new", rdb.GetSet(ctx, "gs-new", "1").Err() == redis.Nil, true)
	check("GETSET stored", rdb.Get(ctx, "gs-new").Val(), "1")
	check("GETDEL", rdb.GetDel(ctx, "snx").Val(), "3")
	check("GETDEL gone", rdb.Exists(ctx, "snx").Val(), int64(0))
	check("GETDEL missing", rdb.GetDel(ctx, "snx").Err() == redis.Nil, true)
	noErr("SET gx", rdb.Set(ctx, "gx", "v", 0).Err())
	check("GETEX EX", rdb.GetEx(ctx, "gx", 30*time.Second).Val(), "v")
	checkTTL("GETEX TTL", rdb.TTL(ctx, "gx").Val(), 30*time.Second)
	check("GETEX PERSIST", rdb.Do(ctx, "GETEX", "gx", "PERSIST").Val(), "v")
	check("GETEX PERSIST TTL", rdb.TTL(ctx, "gx").Val(), time.Duration(-1))
	check("GETEX plain", rdb.Do(ctx, "GETEX", "gx").Val(), "v")
	check("GETEX missing", rdb.Do(ctx, "GETEX", "nope", "EX", "0").Err() == redis.Nil, true)
	wantErr("GETEX EX 0", rdb.Do(ctx, "GETEX", "gx", "EX", "0").Err(), "ERR invalid expire time in 'getex' command")
	wantErr("GETEX KEEPTTL", rdb.Do(ctx, "GETEX", "gx", "KEEPTTL").Err(), errSyntax)
	check("GETEX PXAT past", rdb.Do(ctx, "GETEX", "gx", "PXAT", "1").Val(), "v")
	check("GETEX PXAT past deletes", rdb.Exists(ctx, "gx").Val(), int64(0))

	// MGET, MSET, MSETNX.
	noErr("MSET", rdb.MSet(ctx, "m1", "a", "m2", "b").Err())
	check("MGET", rdb.MGet(ctx, "m1", "nope", "m2").Val(), []any{"a", nil, "b"})
	wantErr("MSET odd", rdb.Do(ctx, "MSET", "a", "b", "c").Err(), "ERR wrong number of arguments for 'mset' command")
	check("MSETNX clash", rdb.MSetNX(ctx, "m1", "x", "m3", "y").Val(), false)
	check("MSETNX clash wrote nothing", rdb.Exists(ctx, "m3").Val(), int64(0))
	check("MSETNX", rdb.MSetNX(ctx, "m3", "x", "m4", "y").Val(), true)
	check("MSETNX values", rdb.MGet(ctx, "m3", "m4").Val(), []any{"x", "y"})

	// APPEND, STRLEN, GETRANGE, SETRANGE.
	check("APPEND new", rdb.Append(ctx, "ap", "Hello").Val(), int64(5))
	check("APPEND", rdb.Append(ctx, "ap", " World").Val(), int64(11))
	check("STRLEN", rdb.StrLen(ctx, "ap").Val(), int64(11))
	check("STRLEN missing", rdb.StrLen(ctx, "nope").Val(), int64(0))
	check("GETRANGE 0 4", rdb.GetRange(ctx, "ap", 0, 4).Val(), "Hello")
	check("GETRANGE -5 -1", rdb.GetRange(ctx, "ap", -5, -1).Val(), "World")
	check("GETRANGE 0 -1", rdb.GetRange(ctx, "ap", 0, -1).Val(), "Hello World")
	check("GETRANGE 10 100", rdb.GetRange(ctx, "ap", 10, 100).Val(), "d")
	check("GETRANGE 5 3", rdb.GetRange(ctx, "ap", 5, 3).Val(), "")
	check("GETRANGE missing", rdb.GetRange(ctx, "nope", 0, -1).Val(), "")
	check("SETRANGE", rdb.SetRange(ctx, "ap", 6, "Redis").Val(), int64(11))
	check("SETRANGE value", rdb.Get(ctx, "ap").Val(), "Hello Redis")
	check("SETRANGE pad", rdb.SetRange(ctx, "sr", 3, "x").Val(), int64(4))
	check("SETRANGE padded", rdb.Get(ctx, "sr").Val(), "\x00\x00\x00x")
	check("SETRANGE empty on missing", rdb.SetRange(ctx, "sr-none", 5, "").Val(), int64(0))
	check("SETRANGE empty did not create", rdb.Exists(ctx, "sr-none").Val(), int64(0))
	wantErr("SETRANGE -1", rdb.SetRange(ctx, "sr", -1, "x").Err(), "ERR offset is out of range")
	wantErr("SETRANGE huge", rdb.SetRange(ctx, "sr", 1<<40, "x").Err(), errTooLarge) // Redis's error past 512 MB

	// INCR family.
	check("INCR new", rdb.Incr(ctx, "n").Val(), int64(1))
	check("INCRBY", rdb.IncrBy(ctx, "n", 10).Val(), int64(11))
	check("DECR", rdb.Decr(ctx, "n").Val(), int64(10))
	check("DECRBY", rdb.DecrBy(ctx, "n", 20).Val(), int64(-10))
	check("DECR new", rdb.Decr(ctx, "n2").Val(), int64(-1))
	noErr("SET max", rdb.Set(ctx, "max", "9223372036854775807", 0).Err())
	wantErr("INCR overflow", rdb.Incr(ctx, "max").Err(), errOverflow)
	noErr("SET min", rdb.Set(ctx, "min", "-9223372036854775808", 0).Err())
	wantErr("DECR overflow", rdb.Decr(ctx, "min").Err(), errOverflow)
	wantErr("DECRBY MinInt64", rdb.Do(ctx, "DECRBY", "n", "-9223372036854775808").Err(), "ERR decrement would overflow")
	wantErr("INCR non-int", rdb.Incr(ctx, "ap").Err(), errNotInt)
	wantErr("INCRBY bad arg", rdb.Do(ctx, "INCRBY", "n", "1.5").Err(), errNotInt)
	noErr("SET padded", rdb.Set(ctx, "pad", " 1", 0).Err())
	wantErr("INCR space", rdb.Incr(ctx, "pad").Err(), errNotInt)
	noErr("SET float", rdb.Set(ctx, "fl", "10.50", 0).Err())
	check("INCRBYFLOAT", rdb.IncrByFloat(ctx, "fl", 0.1).Val(), 10.6)
	check("INCRBYFLOAT text", rdb.Get(ctx, "fl").Val(), "10.6")
	noErr("SET 5e3", rdb.Set(ctx, "fl2", "5.0e3", 0).Err())
	check("INCRBYFLOAT exp", rdb.Do(ctx, "INCRBYFLOAT", "fl2", "2.0e2").Val(), "5200")
	check("INCRBYFLOAT new", rdb.IncrByFloat(ctx, "fl3", -1.5).Val(), -1.5)
	wantErr("INCRBYFLOAT bad", rdb.Do(ctx, "INCRBYFLOAT", "fl", "abc").Err(), errNotFloat)
	wantErr("INCRBYFLOAT on string", rdb.IncrByFloat(ctx, "ap", 1).Err(), errNotFloat)
	wantErr("INCRBYFLOAT inf", rdb.Do(ctx, "INCRBYFLOAT", "fl", "inf").Err(), "ERR increment would produce NaN or Infinity")

	// Keyspace.
	check("EXISTS", rdb.Exists(ctx, "m1", "m2", "nope", "m1").Val(), int64(3))
	check("TYPE", rdb.Type(ctx, "m1").Val(), "string")
	check("TYPE none", rdb.Type(ctx, "nope").Val(), "none")
	check("DEL", rdb.Del(ctx, "m1", "m2", "nope").Val(), int64(2))
	check("UNLINK", rdb.Unlink(ctx, "m3", "m4").Val(), int64(2))
	noErr("SET e", rdb.Set(ctx, "e", "v", 0).Err())
	check("EXPIRE", rdb.Expire(ctx, "e", 100*time.Second).Val(), true)
	check("EXPIRE missing", rdb.Expire(ctx, "nope", time.Second).Val(), false)
	checkTTL("TTL e", rdb.TTL(ctx, "e").Val(), 100*time.Second)
	check("EXPIRE NX has ttl", rdb.ExpireNX(ctx, "e", 50*time.Second).Val(), false)
	check("EXPIRE XX", rdb.ExpireXX(ctx, "e", 50*time.Second).Val(), true)
	check("EXPIRE GT smaller", rdb.ExpireGT(ctx, "e", 10*time.Second).Val(), false)
	check("EXPIRE GT larger", rdb.ExpireGT(ctx, "e", 200*time.Second).Val(), true)
	check("EXPIRE LT larger", rdb.ExpireLT(ctx, "e", 300*time.Second).Val(), false)
	check("EXPIRE LT smaller", rdb.ExpireLT(ctx, "e", 150*time.Second).Val(), true)
	checkTTL("TTL after LT", rdb.TTL(ctx, "e").Val(), 150*time.Second)
	wantErr("EXPIRE NX XX", rdb.Do(ctx, "EXPIRE", "e", "10", "NX", "XX").Err(), "ERR NX and XX, GT or LT options at the same time are not compatible")
	wantErr("EXPIRE GT LT", rdb.Do(ctx, "EXPIRE", "e", "10", "GT", "LT").Err(), "ERR GT and LT options at the same time are not compatible")
	wantErr("EXPIRE bad opt", rdb.Do(ctx, "EXPIRE", "e", "10", "FOO").Err(), "ERR Unsupported option FOO")
	wantErr("EXPIRE overflow", rdb.Do(ctx, "EXPIRE", "e", "9223372036854775807").Err(), "ERR invalid expire time in 'expire' command")
	check("PEXPIRE", rdb.PExpire(ctx, "e", 5000*time.Millisecond).Val(), true)
	check("PTTL e", rdb.PTTL(ctx, "e").Val() <= 5*time.Second, true)
	at := time.Now().Add(time.Hour).Truncate(time.Second)
	check("EXPIREAT", rdb.ExpireAt(ctx, "e", at).Val(), true)
	check("EXPIRETIME e", rdb.ExpireTime(ctx, "e").Val(), time.Duration(at.Unix())*time.Second)
	check("PEXPIREAT", rdb.PExpireAt(ctx, "e", at.Add(time.Millisecond)).Val(), true)
	check("PEXPIRETIME e", rdb.PExpireTime(ctx, "e").Val(), time.Duration(at.UnixMilli()+1)*time.Millisecond)
	check("EXPIRETIME missing", rdb.ExpireTime(ctx, "nope").Val(), time.Duration(-2))
	check("PERSIST", rdb.Persist(ctx, "e").Val(), true)
	check("PERSIST again", rdb.Persist(ctx, "e").Val(), false)
	check("TTL persisted", rdb.TTL(ctx, "e").Val(), time.Duration(-1))
	check("EXPIRETIME persisted", rdb.ExpireTime(ctx, "e").Val(), time.Duration(-1))
	check("TTL missing", rdb.TTL(ctx, "nope").Val(), time.Duration(-2))
	check("PTTL missing", rdb.PTTL(ctx, "nope").Val(), time.Duration(-2))
	check("EXPIRE negative deletes", rdb.Do(ctx, "EXPIRE", "e", "-1").Val(), int64(1))
	check("EXPIRE negative gone", rdb.Exists(ctx, "e").Val(), int64(0))
	noErr("SET short", rdb.Set(ctx, "short", "v", 0).Err())
	check("PEXPIRE 30", rdb.PExpire(ctx, "short", 30*time.Millisecond).Val(), true)
	time.Sleep(60 * time.Millisecond)
	check("expired is missing", rdb.Get(ctx, "short").Err() == redis.Nil, true)

	// KEYS, SCAN, RANDOMKEY, DBSIZE, FLUSHDB, FLUSHALL.
	noErr("FLUSHALL", rdb.FlushAll(ctx).Err())
	check("DBSIZE empty", rdb.DBSize(ctx).Val(), int64(0))
	check("RANDOMKEY empty", rdb.RandomKey(ctx).Err() == redis.Nil, true)
	var want []string
	for i := range 100 {
		k := fmt.Sprintf("user:%03d", i)
		want = append(want, k)
		noErr("SET "+k, rdb.Set(ctx, k, i, 0).Err())
	}
	noErr("SET other", rdb.Set(ctx, "other", "x", 0).Err())
	check("DBSIZE", rdb.DBSize(ctx).Val(), int64(101))
	got := rdb.Keys(ctx, "user:*").Val()
	slices.Sort(got)
	check("KEYS user:*", got, want)
	check("KEYS ?ther", rdb.Keys(ctx, "?ther").Val(), []string{"other"})
	check("KEYS user:00[0-2]", sorted(rdb.Keys(ctx, "user:00[0-2]").Val()), []string{"user:000", "user:001", "user:002"})
	check("KEYS user:00[^0-8]", rdb.Keys(ctx, "user:00[^0-8]").Val(), []string{"user:009"})
	var scanned []string
	cursor := uint64(0)
	calls := 0
	for {
		ks, next, err := rdb.Scan(ctx, cursor, "user:*", 7).Result()
		noErr("SCAN", err)
		scanned = append(scanned, ks...)
		calls++
		if next == 0 || calls > 10000 {
			break
		}
		cursor = next
	}
	slices.Sort(scanned)
	check("SCAN MATCH every key once", scanned, want)
	ks, _, err := rdb.ScanType(ctx, 0, "*", 1000, "hash").Result()
	noErr("SCAN TYPE hash", err)
	check("SCAN TYPE hash", len(ks), 0)
	wantErr("SCAN COUNT 0", rdb.Do(ctx, "SCAN", "0", "COUNT", "0").Err(), errSyntax)
	wantErr("SCAN bad cursor", rdb.Do(ctx, "SCAN", "x").Err(), "ERR invalid cursor")
	rk := rdb.RandomKey(ctx).Val()
	check("RANDOMKEY exists", rdb.Exists(ctx, rk).Val(), int64(1))
	noErr("FLUSHDB", rdb.FlushDB(ctx).Err())
	check("DBSIZE after FLUSHDB", rdb.DBSize(ctx).Val(), int64(0))
	noErr("FLUSHALL ASYNC", rdb.FlushAllAsync(ctx).Err())
	wantErr("FLUSHALL bad", rdb.Do(ctx, "FLUSHALL", "NOW").Err(), errSyntax)

	// Server.
	info := rdb.Info(ctx).Val()
	for _, f := range []string{"redis_version:" + Version, "connected_clients:", "used_memory:", "maxmemory:",
		"role:master", "cluster_enabled:0", "keyspace_hits:", "total_connections_received:", "# Keyspace"} {
		if !strings.Contains(info, f) {
			t.Errorf("INFO lacks %q", f)
		}
	}
	mem := rdb.Info(ctx, "memory").Val()
	check("INFO memory only", strings.HasPrefix(mem, "# Memory\r\n") && !strings.Contains(mem, "# Server"), true)
	cfg := rdb.ConfigGet(ctx, "maxmemory").Val()
	check("CONFIG GET maxmemory", cfg["maxmemory"], "67108864")
	cfg = rdb.ConfigGet(ctx, "*").Val()
	check("CONFIG GET * save", cfg["save"], "")
	check("CONFIG GET * appendonly", cfg["appendonly"], "no")
	check("CONFIG GET * databases", cfg["databases"], "16")
	check("CONFIG RESETSTAT", rdb.ConfigResetStat(ctx).Val(), "OK")
	wantErr("CONFIG SET", rdb.ConfigSet(ctx, "databases", "2").Err(), "ERR CONFIG SET failed (possibly related to argument 'databases') - can't set immutable config")
	wantErr("CONFIG FOO", rdb.Do(ctx, "CONFIG", "FOO").Err(), "ERR unknown subcommand 'FOO'. Try CONFIG HELP.")
	wantErr("CONFIG GET arity", rdb.Do(ctx, "CONFIG", "GET").Err(), "ERR wrong number of arguments for 'config|get' command")
	check("COMMAND COUNT", rdb.Do(ctx, "COMMAND", "COUNT").Val(), int64(len(respCommands)))
	cmds, err := rdb.Command(ctx).Result()
	noErr("COMMAND", err)
	if c := cmds["get"]; c == nil || c.Arity != 2 || c.FirstKeyPos != 1 || !c.ReadOnly {
		t.Errorf("COMMAND get = %+v", c)
	}
	docs, err := rdb.Do(ctx, "COMMAND", "DOCS", "GET").Result()
	noErr("COMMAND DOCS GET", err)
	if !strings.Contains(fmt.Sprint(docs), "Returns the string value of a key.") {
		t.Errorf("COMMAND DOCS GET = %v", docs)
	}
	wantErr("CLIENT FOO", rdb.Do(ctx, "CLIENT", "FOO").Err(), "ERR unknown subcommand 'FOO'. Try CLIENT HELP.")
	check("CLIENT SETINFO", rdb.Do(ctx, "CLIENT", "SETINFO", "LIB-NAME", "x").Val(), "OK")
	wantErr("CLIENT SETINFO bad", rdb.Do(ctx, "CLIENT", "SETINFO", "FOO", "x").Err(), "ERR Unrecognized option 'FOO'")

	// CLIENT SETNAME / GETNAME and HELLO live on one connection.
	conn := rdb.Conn()
	defer conn.Close()
	check("CLIENT GETNAME unset", conn.ClientGetName(ctx).Err() == redis.Nil, true)
	noErr("CLIENT SETNAME", conn.ClientSetName(ctx, "worker-1").Err())
	check("CLIENT GETNAME", conn.ClientGetName(ctx).Val(), "worker-1")
	wantErr("CLIENT SETNAME space", conn.ClientSetName(ctx, "a b").Err(), "ERR Client names cannot contain spaces, newlines or special characters.")
	hello, err := conn.Do(ctx, "HELLO", "3", "SETNAME", "w2").Result()
	noErr("HELLO 3", err)
	if m, ok := hello.(map[any]any); !ok || m["proto"] != int64(3) || m["version"] != Version {
		t.Errorf("HELLO 3 = %#v", hello)
	}
	check("HELLO SETNAME", conn.ClientGetName(ctx).Val(), "w2")
	wantErr("HELLO 4", conn.Do(ctx, "HELLO", "4").Err(), "NOPROTO unsupported protocol version")
	wantErr("HELLO AUTH bob", conn.Do(ctx, "HELLO", "3", "AUTH", "bob", "pw").Err(), errWrongPass)
	wantErr("HELLO bad opt", conn.Do(ctx, "HELLO", "3", "FOO").Err(), "ERR Syntax error in HELLO option 'FOO'")
	_ = resp2
}

func sorted(s []string) []string { slices.Sort(s); return s }

// TestGoRedisTooLarge checks the store's size limit and OOM mapping.
func TestGoRedisTooLarge(t *testing.T) {
	rs := startRESP(t, server.Config{}, store.Config{MaxItemSize: 4096, MemoryLimit: 64 << 10, NoEvict: true})
	rdb := redis.NewClient(&redis.Options{Addr: rs.respAddr, MaxRetries: -1})
	defer rdb.Close()
	ctx := context.Background()
	if err := rdb.Set(ctx, "k", "old", 0).Err(); err != nil {
		t.Fatal(err)
	}
	// One byte more than fits: key "k" + value + the per-item charge is
	// one byte above MaxItemSize.
	big := strings.Repeat("x", 4096-len("k")-store.ItemOverhead+1)
	if err := rdb.Set(ctx, "k", big, 0).Err(); err == nil || err.Error() != errTooLarge {
		t.Errorf("SET too large = %v, want %q", err, errTooLarge)
	}
	if got := rdb.Get(ctx, "k").Val(); got != "old" {
		t.Errorf("after a too-large SET, GET = %q, want the old value", got)
	}
	if err := rdb.Append(ctx, "k", big).Err(); err == nil || err.Error() != errTooLarge {
		t.Errorf("APPEND too large = %v", err)
	}
	// A bulk longer than the item size is read and dropped: the same
	// error, the old value kept, and the connection stays usable.
	err := rdb.Set(ctx, "k", strings.Repeat("x", 5000), 0).Err()
	if err == nil || err.Error() != errTooLarge {
		t.Errorf("SET of a bulk above max-item-size = %v, want %q", err, errTooLarge)
	}
	if got := rdb.Get(ctx, "k").Val(); got != "old" {
		t.Errorf("after a SET of a bulk above max-item-size, GET = %q, want the old value", got)
	}
	var oom error
	for i := 0; i < 100 && oom == nil; i++ {
		oom = rdb.Set(ctx, fmt.Sprintf("fill:%d", i), strings.Repeat("v", 3000), 0).Err()
	}
	if oom == nil || oom.Error() != errOOM {
		t.Errorf("filling a no-evict store: %v, want %q", oom, errOOM)
	}
}

// TestGoRedisConcurrentIncr checks that INCR's CAS loop loses no update.
func TestGoRedisConcurrentIncr(t *testing.T) {
	rdb, _ := newGoRedis(t, false)
	ctx := context.Background()
	const workers, each = 8, 200
	done := make(chan error, workers)
	for range workers {
		go func() {
			for range each {
				if err := rdb.Incr(ctx, "ctr").Err(); err != nil {
					done <- err
					return
				}
				if err := rdb.Append(ctx, "log", "x").Err(); err != nil {
					done <- err
					return
				}
			}
			done <- nil
		}()
	}
	for range workers {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
	if got := rdb.Get(ctx, "ctr").Val(); got != fmt.Sprint(workers*each) {
		t.Errorf("after %d concurrent INCRs, value = %s", workers*each, got)
	}
	if got := rdb.StrLen(ctx, "log").Val(); got != workers*each {
		t.Errorf("after %d concurrent APPENDs, length = %d", workers*each, got)
	}
}

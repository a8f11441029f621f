package rdb

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/minikv/minikv/internal/store"
)

// redisServer is a redis-server started by a test on a Unix socket in
// dir, loading (and saving) dir/dbfilename.
type redisServer struct {
	c   *redis.Client
	cmd *exec.Cmd
}

// startRedis starts redis-server with --dir dir --dbfilename name and
// the extra arguments, or skips the test when it is not installed (fails
// with MINIKV_REQUIRE_PEERS=1). It is killed, by its PID, when the test
// ends.
func startRedis(t *testing.T, dir, name string, extra ...string) *redisServer {
	t.Helper()
	return startServer(t, "redis-server", dir, name, extra...)
}

// startServer is startRedis for bin (redis-server, or another server
// taking its options).
func startServer(t *testing.T, bin, dir, name string, extra ...string) *redisServer {
	t.Helper()
	path, err := exec.LookPath(bin)
	if err != nil {
		if os.Getenv("MINIKV_REQUIRE_PEERS") == "1" {
			t.Fatalf("%s not found and MINIKV_REQUIRE_PEERS=1: %v", bin, err)
		}
		t.Skipf("%s not installed (%v)", bin, err)
	}
	sock := filepath.Join(dir, "redis.sock")
	args := append([]string{"--port", "0", "--unixsocket", sock, "--dir", dir, "--dbfilename", name,
		"--save", "", "--appendonly", "no"}, extra...)
	cmd := exec.Command(path, args...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatalf("%s: %v", bin, err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-exited
	})
	c := redis.NewClient(&redis.Options{Network: "unix", Addr: sock, Protocol: 2})
	t.Cleanup(func() { c.Close() })
	for deadline := time.Now().Add(10 * time.Second); ; {
		if c.Ping(context.Background()).Err() == nil {
			return &redisServer{c: c, cmd: cmd}
		}
		select {
		case <-exited:
			t.Fatalf("%s exited: %s", bin, out.String())
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s did not start: %s", bin, out.String())
		}
	}
}

// populate writes a value of every kind and encoding redis-server 7.2
// has (big hashes, sets and sorted sets of 5000 elements among them): integers, short and long (compressible) strings, listpack and
// hashtable hashes, intset, listpack (one of integers only, left by SREM
// of its strings) and hashtable sets, listpack and skiplist
// sorted sets (with infinite scores), one-node and many-node quicklists
// with a plain node, deadlines on strings and collections, a key in
// database 1 and a function library.
func populate(t *testing.T, c *redis.Client) {
	t.Helper()
	ctx := context.Background()
	do := func(args ...any) {
		t.Helper()
		if err := c.Do(ctx, args...).Err(); err != nil {
			t.Fatalf("%v: %v", args, err)
		}
	}
	do("SET", "s:int", "12345")
	do("SET", "s:neg", "-7")
	do("SET", "s:i64", "1234567890123")
	do("SET", "s:empty", "")
	do("SET", "s:bin", "\x00\xff\r\n")
	do("SET", "s:long", strings.Repeat("compressible ", 100))
	do("SET", "s:ttl", "v", "PX", "100000")
	do("SET", "12", "a key that is an integer")
	do("HSET", "h:small", "f1", "v1", "f2", "2", "f3", "")
	pipe := c.Pipeline() // the big ones (tables of 16 KiB and more live outside the Go heap)
	for i := range 5000 {
		pipe.HSet(ctx, "h:big", "field:"+strconv.Itoa(i), strconv.Itoa(i*7))
		pipe.SAdd(ctx, "set:big", "member:"+strconv.Itoa(i))
		pipe.ZAdd(ctx, "z:huge", redis.Z{Score: float64(i%97) / 7, Member: "m" + strconv.Itoa(i)})
	}
	if _, err := pipe.Exec(ctx); err != nil {
		t.Fatal(err)
	}
	do("HSET", "h:longval", "f", strings.Repeat("x", 100))
	do("SADD", "set:ints", 1, 2, 3, -5, 70000, 5000000000)
	for i := range 600 {
		do("SADD", "set:bigints", i*3)
	}
	do("SADD", "set:strs", "a", "b", "c", "7")
	do("SADD", "set:lpints", 5, "x", 300000, -2, 1<<40)
	do("SREM", "set:lpints", "x")
	do("SADD", "set:longmember", "m", strings.Repeat("y", 65))
	do("ZADD", "z:small", 1, "a", 2.5, "b", "-inf", "c", "+inf", "d")
	for i := range 200 {
		do("ZADD", "z:big", float64(i)/3, "m"+strconv.Itoa(i))
	}
	do("RPUSH", "l:small", "a", "1", "b", "-2", "")
	for i := range 5000 {
		do("RPUSH", "l:big", "element-"+strconv.Itoa(i))
	}
	do("RPUSH", "l:plain", "x", strings.Repeat("p", 10000), "y")
	do("EXPIRE", "h:small", 5000)
	do("PEXPIRE", "l:big", 7000000)
	do("PEXPIREAT", "z:small", 33177117420123)
	do("FUNCTION", "LOAD", "#!lua name=mylib\nredis.register_function('f', function() return 1 end)")
	do("SELECT", 1)
	do("SET", "db1:key", "not loaded")
	do("SELECT", 0)
}

// canonical is a value's contents in one form whatever its encoding.
func canonical(v *Value) string {
	var parts []string
	switch v.Kind {
	case store.KindString:
		return "string " + strconv.Quote(string(v.Str))
	case store.KindHash:
		for i := 0; i < len(v.elems); i += 2 {
			parts = append(parts, strconv.Quote(string(v.elems[i]))+"="+strconv.Quote(string(v.elems[i+1])))
		}
		slices.Sort(parts)
	case store.KindZSet:
		for i, m := range v.elems {
			parts = append(parts, strconv.Quote(string(m))+"="+strconv.FormatFloat(v.scores[i], 'g', -1, 64))
		}
		slices.Sort(parts)
	default:
		for _, e := range v.elems {
			parts = append(parts, strconv.Quote(string(e)))
		}
		if v.Kind == store.KindSet {
			slices.Sort(parts)
		}
	}
	return v.Kind.String() + " " + strings.Join(parts, ",")
}

// decodeDump decodes a DUMP payload.
func decodeDump(t *testing.T, p []byte) *Value {
	t.Helper()
	obj, ok := Verify(p)
	if !ok {
		t.Fatalf("DUMP payload fails its footer check: %q", p)
	}
	v, err := DecodeValue(obj)
	if err != nil {
		t.Fatalf("DUMP payload: %v", err)
	}
	return v
}

// compareWithRedis checks that st holds exactly the keys of database 0
// of the redis-server behind c, each with the same value and deadline;
// a string's and a listpack hash's DUMP must be the same bytes.
func compareWithRedis(t *testing.T, c *redis.Client, st *store.Store) {
	t.Helper()
	ctx := context.Background()
	keys, err := c.Keys(ctx, "*").Result()
	if err != nil {
		t.Fatal(err)
	}
	n, err := st.Len()
	if err != nil || n != int64(len(keys)) {
		t.Errorf("MiniKV holds %d keys (%v), redis-server %d", n, err, len(keys))
	}
	for _, k := range keys {
		want, err := c.Dump(ctx, k).Result()
		if err != nil {
			t.Fatalf("DUMP %s: %v", k, err)
		}
		got, ok, err := Dump(st, []byte(k))
		if err != nil || !ok {
			t.Errorf("key %q: missing in MiniKV (%v)", k, err)
			continue
		}
		wv, gv := decodeDump(t, []byte(want)), decodeDump(t, got)
		if canonical(gv) != canonical(wv) {
			t.Errorf("key %q: MiniKV %.300s, redis-server %.300s", k, canonical(gv), canonical(wv))
		}
		enc := c.ObjectEncoding(ctx, k).Val()
		compact := enc == "listpack" && (wv.Kind == store.KindHash || wv.Kind == store.KindSet) || enc == "intset"
		if (wv.Kind == store.KindString || compact) && string(got) != want {
			t.Errorf("key %q (%s): DUMP differs:\nMiniKV %q\nredis  %q", k, enc, got, want)
		}
		if wv.Kind == store.KindSet {
			if oi, _ := st.Object([]byte(k)); oi.Encoding != enc {
				t.Errorf("key %q: MiniKV's encoding %s, redis-server's %s", k, oi.Encoding, enc)
			}
		}
		wantAt, _ := c.Do(ctx, "PEXPIRETIME", k).Int64() // go-redis's Duration overflows past 2262
		it, _ := st.Peek([]byte(k))
		if wantAt < 0 && it.Deadline != 0 || wantAt >= 0 && it.Deadline != wantAt {
			t.Errorf("key %q: deadline %d, redis-server's %v", k, it.Deadline, wantAt)
		}
	}
}

// TestRedisToMiniKVToRedis: redis-server writes an RDB of every kind and
// encoding; MiniKV loads it and holds every key of database 0 with its
// value and deadline (the db 1 key and the function library skipped and
// counted); MiniKV saves the store; redis-check-rdb passes the file; a
// redis-server started on it holds the same keys, values and deadlines.
func TestRedisToMiniKVToRedis(t *testing.T) {
	dirA := t.TempDir()
	ra := startRedis(t, dirA, "a.rdb")
	populate(t, ra.c)
	if err := ra.c.Save(context.Background()).Err(); err != nil {
		t.Fatal(err)
	}
	st := store.New(store.Config{MemoryLimit: 256 << 20})
	defer st.Close()
	stats, err := LoadFile(filepath.Join(dirA, "a.rdb"), st, LoadOptions{})
	if err != nil {
		t.Fatalf("loading redis-server's file: %v", err)
	}
	if stats.Version != 11 || stats.Aux["redis-ver"] == "" || stats.Functions != 1 || stats.OtherDBs[1] != 1 || stats.Expired != 0 {
		t.Errorf("load stats %+v", stats)
	}
	compareWithRedis(t, ra.c, st)

	dirB := t.TempDir()
	path := filepath.Join(dirB, "b.rdb")
	saved, err := SaveFile(path, st, SaveOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if saved.Keys != stats.Keys || saved.Expires != 4 {
		t.Errorf("saved %+v, loaded %d keys, 4 with a TTL", saved, stats.Keys)
	}
	if out, err := exec.Command("redis-check-rdb", path).CombinedOutput(); err != nil || !bytes.Contains(out, []byte("RDB looks OK")) {
		t.Fatalf("redis-check-rdb on MiniKV's file: %v\n%s", err, out)
	}
	rb := startRedis(t, dirB, "b.rdb")
	compareWithRedis(t, rb.c, st)
}

// TestSaveIsPointInTime: while writers change two keys of different
// shards together (one Tx: no client sees one without the other) and
// create keys, files saved at the same time hold the pair equal: the
// file is one instant of the store, the one AtSnapshot sees.
func TestSaveIsPointInTime(t *testing.T) {
	st := store.New(store.Config{MemoryLimit: 64 << 20})
	defer st.Close()
	a, b := []byte("pair:a"), []byte("pair:b")
	var written atomic.Int64
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			v := []byte(strconv.Itoa(i))
			_ = st.Tx([][]byte{a, b}, func(tx *store.Tx) error {
				tx.Delete(a)
				tx.Delete(b)
				_ = tx.PutString(a, v)
				_ = tx.PutString(b, v)
				written.Store(int64(i)) // under the same locks, as a change feed's offset
				return nil
			})
			_, _ = st.Store(store.ModeSet, []byte("k:"+strconv.Itoa(i%5000)), v, 0, 0, 0)
		}
	}()
	defer func() { close(stop); <-done }()
	for n := int64(0); n < 5000; n, _ = st.Len() {
		time.Sleep(time.Millisecond)
	}
	for range 20 {
		var buf bytes.Buffer
		opt := SaveOptions{AtSnapshot: func() [][2]string {
			return [][2]string{{"test-written", strconv.FormatInt(written.Load(), 10)}}
		}}
		if _, err := Save(&buf, st, opt); err != nil {
			t.Fatal(err)
		}
		got := map[string]string{}
		stats, err := Check(buf.Bytes())
		if err != nil {
			t.Fatalf("Check of a file saved under writes: %v", err)
		}
		_, err = parse(buf.Bytes(), LoadOptions{}, func(k *fileKey) error {
			got[string(k.key)] = string(k.v.Str)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if got["pair:a"] != got["pair:b"] {
			t.Fatalf("a file holds pair:a = %q and pair:b = %q: not one instant", got["pair:a"], got["pair:b"])
		}
		if w := stats.Aux["test-written"]; w != got["pair:a"] {
			t.Fatalf("AtSnapshot saw write %s, the file holds %s", w, got["pair:a"])
		}
	}
}

// TestLoadRefuses: damaged and unsupported files are errors that store
// nothing.
func TestLoadRefuses(t *testing.T) {
	src := store.New(store.Config{MemoryLimit: 8 << 20})
	defer src.Close()
	for i := range 50 {
		_, _ = src.Store(store.ModeSet, []byte(fmt.Sprint("k", i)), []byte("value"), 0, 0, 0)
	}
	var buf bytes.Buffer
	if _, err := Save(&buf, src, SaveOptions{}); err != nil {
		t.Fatal(err)
	}
	good := buf.Bytes()
	flip := bytes.Clone(good)
	flip[len(flip)/2] ^= 1
	stream := fileOf(9, []byte{typeStreamLP2}, "st", "")
	for _, c := range []struct {
		name string
		data []byte
		want string
	}{
		{"empty", nil, "not an RDB file"},
		{"signature", []byte("RODIS0010\xff"), "not an RDB file"},
		{"version 12", []byte("REDIS0012\xff"), "can't handle RDB format version"},
		{"a flipped bit", flip, "wrong checksum"},
		{"cut short", good[:len(good)-20], "wrong checksum"},
		{"a cut stream", stream, "bad data format"},
		{"a module type", fileOf(9, []byte{typeModule2}, "m", ""), "module data types"},
	} {
		st := store.New(store.Config{MemoryLimit: 8 << 20})
		_, err := LoadBytes(c.data, st, LoadOptions{})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err %v, want %q", c.name, err, c.want)
		}
		if n, _ := st.Len(); n != 0 {
			t.Errorf("%s: %d keys stored from a refused file", c.name, n)
		}
		st.Close()
	}
}

// fileOf is an RDB file of version ver (no checksum before 5, a zero one
// from 5: not checked) with body after the header, then one key with
// the given type bytes, key and raw object, then EOF.
func fileOf(ver int, typ []byte, key, obj string) []byte {
	b := []byte(fmt.Sprintf("REDIS%04d", ver))
	b = append(b, typ...)
	b = AppendString(b, []byte(key))
	b = append(b, obj...)
	b = append(b, opEOF)
	if ver >= 5 {
		b = append(b, make([]byte, 8)...)
	}
	return b
}

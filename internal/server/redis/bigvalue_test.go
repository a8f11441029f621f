package redis

import (
	"bytes"
	"context"
	"io"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/minikv/minikv/internal/server"
	"github.com/minikv/minikv/internal/store"
)

// TestRESPBigValueOverMemcachedItemSize: the RESP port stores strings up
// to proto-max-bulk-len, not memcached's -I (1 MiB here): a 5 MB SET
// reads back byte for byte, APPEND grows a value past 1 MiB, and the
// memcached port reads those values whole (get and mg) while it still
// refuses a set over -I with memcached's reply, and keeps the old value.
func TestRESPBigValueOverMemcachedItemSize(t *testing.T) {
	rs := startRESP(t, server.Config{MaxItemSize: 1 << 20}, store.Config{})
	ctx := context.Background()
	rdb := redis.NewClient(&redis.Options{Addr: rs.respAddr, MaxRetries: -1})
	t.Cleanup(func() { rdb.Close() })

	big := make([]byte, 5<<20)
	for i := range big {
		big[i] = byte(i*7 + i>>13)
	}
	if err := rdb.Set(ctx, "big", big, 0).Err(); err != nil {
		t.Fatalf("SET of 5 MB: %v", err)
	}
	got, err := rdb.Get(ctx, "big").Bytes()
	if err != nil || !bytes.Equal(got, big) {
		t.Fatalf("GET of the 5 MB value: %d bytes, equal %v, err %v", len(got), bytes.Equal(got, big), err)
	}

	chunk := strings.Repeat("a", 300<<10)
	for i := range 5 {
		n, err := rdb.Append(ctx, "grown", chunk).Result()
		if want := int64((i + 1) * len(chunk)); err != nil || n != want {
			t.Fatalf("APPEND %d: %d, %v, want %d", i, n, err, want)
		}
	}
	if n, err := rdb.SetRange(ctx, "ranged", 3<<20, "end").Result(); err != nil || n != 3<<20+3 {
		t.Errorf("SETRANGE at 3 MiB = %d, %v", n, err)
	}
	if n, err := rdb.SetBit(ctx, "bits", 8*(2<<20), 1).Result(); err != nil || n != 0 {
		t.Errorf("SETBIT at 2 MiB = %d, %v", n, err)
	}
	if err := rdb.MSet(ctx, "m1", big[:2<<20], "m2", "x").Err(); err != nil {
		t.Errorf("MSET with a 2 MiB value: %v", err)
	}
	if old, err := rdb.SetArgs(ctx, "m1", big[:3<<20], redis.SetArgs{Get: true}).Result(); err != nil || len(old) != 2<<20 {
		t.Errorf("SET GET with 3 MiB: old %d bytes, %v", len(old), err)
	}
	if old, err := rdb.GetSet(ctx, "m1", big[:4<<20]).Result(); err != nil || len(old) != 3<<20 {
		t.Errorf("GETSET with 4 MiB: old %d bytes, %v", len(old), err)
	}
	if n, err := rdb.LPush(ctx, "list", big).Result(); err != nil || n != 1 {
		t.Errorf("LPUSH of 5 MB: %d, %v", n, err)
	}
	if got, err := rdb.LIndex(ctx, "list", 0).Bytes(); err != nil || !bytes.Equal(got, big) {
		t.Errorf("LINDEX of the 5 MB element: %d bytes, %v", len(got), err)
	}

	mc := dial(t, rs.addr)
	mc.Send("get big\r\n")
	if line := mc.Line(); line != "VALUE big 0 "+strconv.Itoa(len(big)) {
		t.Fatalf("memcached get big: %q", line)
	}
	v := make([]byte, len(big)+2)
	if _, err := io.ReadFull(mc.R, v); err != nil || !bytes.Equal(v, append(big, "\r\n"...)) {
		t.Fatalf("memcached get big: not the value (%v)", err)
	}
	if end := mc.Line(); end != "END" {
		t.Fatalf("memcached get big: %q, want END", end)
	}
	mc.Send("mg grown s v\r\n")
	if line := mc.Line(); line != "VA 1536000 s1536000" {
		t.Fatalf("mg grown: %q", line)
	}
	if v := mc.Line(); v != strings.Repeat(chunk, 5) {
		t.Errorf("mg grown: %d bytes, not the value", len(v))
	}
	// -I still holds on the memcached port, and the value stays.
	over := strings.Repeat("o", 1<<20)
	mc.Expect("set big 0 0 "+strconv.Itoa(len(over))+"\r\n"+over+"\r\n", "SERVER_ERROR object too large for cache")
	mc.Expect("append grown 0 0 1\r\nx\r\n", "SERVER_ERROR object too large for cache")
	mc.Expect("ms big "+strconv.Itoa(len(over))+"\r\n"+over+"\r\n", "SERVER_ERROR object too large for cache")
	mc.Expect("set small 0 0 1\r\ns\r\n", "STORED")
	if n := rdb.StrLen(ctx, "big").Val(); n != int64(len(big)) {
		t.Errorf("after the refused memcached writes, STRLEN big = %d", n)
	}
	if n := rdb.StrLen(ctx, "grown").Val(); n != 5*int64(len(chunk)) {
		t.Errorf("after the refused append, STRLEN grown = %d", n)
	}
}

// TestRESPBigValueOverMemoryLimit: a value larger than the whole memory
// limit is refused with -OOM, as before proto-max-bulk-len was the RESP
// port's limit, and the old value stays.
func TestRESPBigValueOverMemoryLimit(t *testing.T) {
	rs := startRESP(t, server.Config{}, store.Config{MemoryLimit: 4 << 20})
	c := dialRESP(t, rs.respAddr)
	c.Expect(multibulk("SET", "k", "old"), "+OK\r\n")
	c.Expect(multibulk("SET", "k", strings.Repeat("x", 5<<20)), "-"+errOOM+"\r\n")
	c.Expect(multibulk("APPEND", "k", strings.Repeat("x", 5<<20)), "-"+errOOM+"\r\n")
	c.Expect(multibulk("GET", "k"), "$3\r\nold\r\n")
}

// TestRESPProtoMaxBulkLenLimitsStrings: CONFIG SET proto-max-bulk-len
// limits what the RESP port takes at once, in the request (a longer bulk
// is Redis's protocol error, and the connection closes) and in the
// strings commands build (Redis's checkStringLength error).
func TestRESPProtoMaxBulkLenLimitsStrings(t *testing.T) {
	rs := startRESP(t, server.Config{}, store.Config{})
	c := dialRESP(t, rs.respAddr)
	c.Expect(multibulk("CONFIG", "SET", "proto-max-bulk-len", "1mb"), "+OK\r\n")
	c.Expect(multibulk("SET", "k", strings.Repeat("x", 1<<20)), "+OK\r\n")
	c.Expect(multibulk("APPEND", "k", "y"), "-"+errTooLarge+"\r\n")
	c.Expect(multibulk("SETRANGE", "k", strconv.Itoa(1<<20), "y"), "-"+errTooLarge+"\r\n")
	c.Expect(multibulk("MSET", "a", "1", "b", strings.Repeat("x", 1<<20)), "+OK\r\n")
	c.Expect(multibulk("SETBIT", "bits", strconv.Itoa(8<<20), "1"), "-"+errBitOffset+"\r\n")
	c.Expect(multibulk("STRLEN", "k"), ":1048576\r\n")
	c.Send("*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$1048577\r\n")
	if got := c.Reply(); got != "-ERR Protocol error: invalid bulk length\r\n" || !c.Closed(5*time.Second) {
		t.Fatalf("bulk over proto-max-bulk-len: %q, want the protocol error and a close", got)
	}
	// A connection opened later has the same limit; raising it lets the
	// longer bulk through.
	d := dialRESP(t, rs.respAddr)
	d.Expect(multibulk("CONFIG", "GET", "proto-max-bulk-len"), "*2\r\n$18\r\nproto-max-bulk-len\r\n$7\r\n1048576\r\n")
	d.Expect(multibulk("CONFIG", "SET", "proto-max-bulk-len", "2mb"), "+OK\r\n")
	d.Expect(multibulk("APPEND", "k", "y"), ":1048577\r\n")
}

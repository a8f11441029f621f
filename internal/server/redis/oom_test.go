package redis

import (
	"fmt"
	"strings"
	"testing"

	"github.com/minikv/minikv/internal/server"
	"github.com/minikv/minikv/internal/store"
)

// TestDenyOOMWhenFull: with -M (no eviction) and the budget spent,
// commands flagged denyoom (HSET, SADD, ...) are refused with -OOM before
// they run, inside MULTI too (EXECABORT); reads and deletes still work,
// and once memory is freed the write goes through. As in Redis, the
// write that crosses the limit is done (a collection write is never
// undone halfway); the ones after it are refused.
func TestDenyOOMWhenFull(t *testing.T) {
	rs := startRESP(t, server.Config{}, store.Config{MemoryLimit: 1 << 20, NoEvict: true})
	r := dialRESP(t, rs.respAddr)
	value := strings.Repeat("v", 1000)
	n := 0
	for ; ; n++ {
		if reply := r.Do("SET", fmt.Sprint("k", n), value); reply != "+OK\r\n" {
			if !strings.HasPrefix(reply, "-OOM") {
				t.Fatalf("SET k%d: %q", n, reply)
			}
			break
		}
	}
	fields := 0
	for ; ; fields++ {
		reply := r.Do("HSET", "h", fmt.Sprint("f", fields), value)
		if reply != ":1\r\n" {
			if reply != "-"+errOOM+"\r\n" || fields > 2 {
				t.Fatalf("HSET #%d: %q", fields, reply)
			}
			break
		}
	}
	r.Expect(multibulk("HLEN", "h"), fmt.Sprintf(":%d\r\n", fields))
	r.Expect(multibulk("SADD", "s", "m"), "-"+errOOM+"\r\n")
	r.Expect(multibulk("GET", "k0"), fmt.Sprintf("$%d\r\n%s\r\n", len(value), value))
	r.Expect(multibulk("MULTI"), "+OK\r\n")
	r.Expect(multibulk("HSET", "h", "f", "v"), "-"+errOOM+"\r\n")
	r.Expect(multibulk("EXEC"), "-EXECABORT Transaction discarded because of previous errors.\r\n")
	r.Expect(multibulk("HDEL", "h", "f0"), ":1\r\n") // not denyoom: runs while full
	for i := range 10 {
		r.Expect(multibulk("DEL", fmt.Sprint("k", i)), ":1\r\n")
	}
	r.Expect(multibulk("HSET", "h", "f", "v"), ":1\r\n")
}

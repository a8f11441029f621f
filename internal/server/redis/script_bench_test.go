package redis

import (
	"bufio"
	"net"
	"strconv"
	"strings"
	"testing"

	"github.com/minikv/minikv/internal/server"
	"github.com/minikv/minikv/internal/store"
)

// BenchmarkEvalSHA is redis-benchmark's EVALSHA of a GET+SET script,
// pipelined 16 deep, over a real connection.
func BenchmarkEvalSHA(b *testing.B) {
	rs := startRESP(b, server.Config{}, store.Config{})
	nc, err := net.Dial("tcp", rs.respAddr)
	if err != nil {
		b.Fatal(err)
	}
	defer nc.Close()
	br := bufio.NewReader(nc)
	const body = "redis.call('get', KEYS[1]) return redis.call('set', KEYS[1], ARGV[1])"
	if _, err := nc.Write([]byte(multibulk("SCRIPT", "LOAD", body))); err != nil {
		b.Fatal(err)
	}
	sha, err := readRESPReply(br)
	if err != nil {
		b.Fatal(err)
	}
	sha = strings.Split(sha, "\r\n")[1]
	var batch strings.Builder
	for i := range 16 {
		batch.WriteString(multibulk("EVALSHA", sha, "1", "key:"+strconv.Itoa(i), "v"))
	}
	req := []byte(batch.String())
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i += 16 {
		if _, err := nc.Write(req); err != nil {
			b.Fatal(err)
		}
		for range 16 {
			if r, err := readRESPReply(br); err != nil || r != "+OK\r\n" {
				b.Fatalf("reply %q, %v", r, err)
			}
		}
	}
}

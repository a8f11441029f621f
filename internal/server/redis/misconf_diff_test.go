package redis

// MISCONF differential test (issue 37): a real redis-server with its AOF
// on a full disk, and MiniKV in durable mode with its data directory on a
// full disk, get the same sessions, and the replies must be byte for byte
// equal (but for PING, a documented difference). Both disks are small
// tmpfs mounts filled through the servers themselves until they refuse
// writes; needs root (mount), skipped otherwise.

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/minikv/minikv/internal/durable"
	"github.com/minikv/minikv/internal/server"
	"github.com/minikv/minikv/internal/server/memcache"
	"github.com/minikv/minikv/internal/server/servertest"
	"github.com/minikv/minikv/internal/store"
	"github.com/minikv/minikv/lsm"
)

// startDurableRESP starts an in-process MiniKV whose store is durable on
// dir (fsync everysec, as Redis's appendfsync below), with a RESP
// listener; it stops when the test ends.
func startDurableRESP(t *testing.T, dir string) (addr string) {
	t.Helper()
	l, err := durable.Open(dir, lsm.Options{Sync: lsm.SyncEverySecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = l.Close() }) // after the server's Stop; the failed disk's error is expected
	// No retry during the test: a retry may find room (recovery writes
	// the memtables to tables, then deletes the logs they were in) and
	// take writes again, as it should, but the comparison needs the
	// refused state to last.
	st, err := store.Open(store.Config{MaxItemSize: durable.MaxItemSize, MemoryLimit: 64 << 20,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), DiskRetry: time.Hour}, l)
	if err != nil {
		t.Fatal(err)
	}
	s := servertest.StartOn(t, server.Config{}, st)
	_ = s.Listen(t, memcache.New(s.Server))
	return s.Listen(t, New(s.Server))
}

// rawRESP is one raw connection; do sends a request and returns the reply
// bytes, or "" and the error when the connection ended.
type rawRESP struct {
	nc net.Conn
	br *bufio.Reader
}

func dialRawRESP(t *testing.T, addr string) *rawRESP {
	t.Helper()
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	return &rawRESP{nc, bufio.NewReader(nc)}
}

func (c *rawRESP) do(req string) (string, error) {
	_ = c.nc.SetDeadline(time.Now().Add(30 * time.Second))
	if _, err := io.WriteString(c.nc, req); err != nil {
		return "", err
	}
	return readRESPReply(c.br)
}

// fillToMisconf sends SETs of 64 KB values to addr until one is answered
// with MISCONF. A connection that ends (MiniKV closes the one whose
// request ran at the failure) is replaced.
func fillToMisconf(t *testing.T, name, addr string) {
	t.Helper()
	val := strings.Repeat("f", 64<<10)
	c := dialRawRESP(t, addr)
	for n := 0; ; n++ {
		if n == 2000 { // 128 MB: far more than the disk holds
			t.Fatalf("%s: 2000 SETs of 64 KB and no MISCONF", name)
		}
		r, err := c.do(mb("SET", fmt.Sprintf("fill:%d", n), val))
		switch {
		case err != nil:
			c = dialRawRESP(t, addr)
		case r == misconf:
			t.Logf("%s: MISCONF after %d SETs of 64 KB", name, n)
			return
		case r != "+OK\r\n":
			t.Fatalf("%s: SET fill:%d = %q", name, n, r)
		}
	}
}

// topOff fills what is left of the filesystem at dir with a file, so the
// server's retries (Redis's of its AOF buffer, MiniKV's once a second)
// cannot succeed while the sessions run.
func topOff(t *testing.T, dir string) {
	t.Helper()
	f, err := os.Create(filepath.Join(dir, "topoff"))
	if err != nil {
		if errors.Is(err, syscall.ENOSPC) {
			return
		}
		t.Fatal(err)
	}
	defer f.Close()
	buf := make([]byte, 4096)
	for {
		if _, err := f.Write(buf); err != nil {
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatal(err)
			}
			break
		}
	}
	for _, size := range []int{1024, 256, 64, 16, 1} { // the last partial page
		for {
			if _, err := f.Write(buf[:size]); err != nil {
				break
			}
		}
	}
}

// TestMisconfDifferential shows that MiniKV's writes-refused state answers
// as Redis 7.0 does after an AOF write error (appendfsync everysec: with
// always Redis exits): the same sessions, over RESP2 and RESP3 (HELLO 3),
// get byte-equal replies from a redis-server whose AOF directory is a full
// 4 MB tmpfs and from MiniKV whose data directory is a full 8 MB tmpfs:
// MISCONF for SET, INCR, DEL, EXPIRE, LPUSH; reads (GET, EXISTS, TTL)
// served with the values set before the disks filled; MULTI with a write
// refused while queuing then EXECABORT "previous errors"; MULTI of reads
// runs; EXEC of a write queued before the failure aborted with EXECABORT
// and the MISCONF reason; CONFIG GET maxmemory. PING is the documented
// difference: Redis refuses it with MISCONF, MiniKV answers PONG.
func TestMisconfDifferential(t *testing.T) {
	redisFS := servertest.MountTmpfs(t, "4m")
	minikvFS := servertest.MountTmpfs(t, "8m")
	servers := map[string]string{
		"redis": startRedisServer(t, "--appendonly", "yes", "--appendfsync", "everysec", "--dir", redisFS,
			"--maxmemory", "67108864", "--auto-aof-rewrite-percentage", "0"),
		"minikv": startDurableRESP(t, filepath.Join(minikvFS, "data")),
	}
	fsOf := map[string]string{"redis": redisFS, "minikv": minikvFS}
	names := []string{"redis", "minikv"}

	// Before the disks fill: the keys the sessions read, and on each
	// server a transaction with a write queued, for EXEC after.
	setup := mb("SET", "k:str", "hello") + mb("SET", "k:counter", "5") + mb("SET", "k:ttl", "t") + mb("EXPIRE", "k:ttl", "1000")
	queued := map[string][]*rawRESP{}
	for _, name := range names {
		c := dialRawRESP(t, servers[name])
		if _, err := io.WriteString(c.nc, setup); err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{"+OK\r\n", "+OK\r\n", "+OK\r\n", ":1\r\n"} {
			if r, err := readRESPReply(c.br); err != nil || r != want {
				t.Fatalf("%s: setup reply %q, %v; want %q", name, r, err, want)
			}
		}
		for _, proto := range []string{"2", "3"} {
			q := dialRawRESP(t, servers[name])
			if proto == "3" {
				if r, err := q.do(mb("HELLO", "3")); err != nil || !strings.HasPrefix(r, "%") {
					t.Fatalf("%s: HELLO 3 = %q, %v", name, r, err)
				}
			}
			for _, req := range []string{mb("MULTI"), mb("SET", "k:queued", "1")} {
				if r, err := q.do(req); err != nil || r != "+OK\r\n" && r != "+QUEUED\r\n" {
					t.Fatalf("%s: %q = %q, %v", name, req, r, err)
				}
			}
			queued[name] = append(queued[name], q)
		}
	}

	for _, name := range names {
		fillToMisconf(t, name, servers[name])
		topOff(t, fsOf[name])
	}

	// EXEC of the write queued before the failure, RESP2 then RESP3.
	for i := range 2 {
		var got [2]string
		for j, name := range names {
			r, err := queued[name][i].do(mb("EXEC"))
			if err != nil {
				t.Fatalf("%s: EXEC: %v", name, err)
			}
			got[j] = r
		}
		want := "-EXECABORT Transaction discarded because of: " + strings.TrimPrefix(misconf, "-")
		if got[0] != got[1] || got[1] != want {
			t.Errorf("RESP%d EXEC of a queued write: redis %q, minikv %q; want %q", i+2, got[0], got[1], want)
		}
	}

	session := mb("SET", "k:new", "1") + mb("INCR", "k:counter") + mb("DEL", "k:str") + mb("EXPIRE", "k:str", "100") +
		mb("LPUSH", "k:list", "a") + mb("SET", "k:str", "other") + mb("GET", "k:str") + mb("GET", "k:counter") +
		mb("EXISTS", "k:str", "k:counter", "k:new", "k:queued", "k:list") + mb("TTL", "k:str") + mb("TTL", "k:ttl") +
		mb("MULTI") + mb("SET", "k:str", "x") + mb("GET", "k:str") + mb("EXEC") +
		mb("MULTI") + mb("GET", "k:str") + mb("GET", "k:counter") + mb("EXEC") +
		mb("CONFIG", "GET", "maxmemory") + mb("GET", "k:str")
	for _, s := range []respSession{
		{name: "misconf resp2", in: session},
		{name: "misconf resp3", in: mb("HELLO", "3") + session, skip: 1},
	} {
		res := map[string]respDiffResult{}
		for _, name := range names {
			res[name] = runRESPSession(servers[name], s)
			if res[name].err != nil || res[name].closed {
				t.Fatalf("%s, %s: err %v, closed %v, after %q", s.name, name, res[name].err, res[name].closed, res[name].out)
			}
		}
		if !sameRESPReplies(s, res["minikv"], res["redis"]) {
			t.Errorf("%s:\nredis  %q\nminikv %q", s.name, res["redis"].out, res["minikv"].out)
		}
		t.Logf("%s: redis %q", s.name, res["redis"].out)
		// Not only equal: the session shows the refused state.
		if r := res["minikv"].replies; len(r) < 8 || r[0] != misconf || r[6] != "$5\r\nhello\r\n" || r[7] != "$1\r\n5\r\n" {
			t.Errorf("%s: minikv's replies do not show the refused state: %q", s.name, r)
		}
	}

	// PING: Redis refuses it too, MiniKV answers it (docs/durability.md).
	for _, proto := range []string{"2", "3"} {
		in := mb("PING") + mb("PING", "x")
		skip := 0
		if proto == "3" {
			in, skip = mb("HELLO", "3")+in, 1
		}
		s := respSession{name: "ping resp" + proto, in: in, skip: skip}
		want := map[string]string{
			"redis":  misconf + misconf + "$7\r\n__end__\r\n",
			"minikv": "+PONG\r\n$1\r\nx\r\n$7\r\n__end__\r\n",
		}
		for _, name := range names {
			if got := runRESPSession(servers[name], s); string(got.out) != want[name] {
				t.Errorf("%s, %s: %q, want %q", s.name, name, got.out, want[name])
			}
		}
	}
}

package redis

import (
	"bufio"
	"fmt"
	"math/rand/v2"
	"net"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/minikv/minikv/internal/server"
	"github.com/minikv/minikv/internal/store"
)

// infoField reads one field of INFO section from the server at addr.
func infoField(t *testing.T, addr, section, field string) string {
	t.Helper()
	c := dialRESP(t, addr)
	defer c.Conn.Close()
	m := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(field) + `:(.*)\r$`).FindStringSubmatch(c.Do("INFO", section))
	if m == nil {
		return ""
	}
	return m[1]
}

// sameKeys requires every key of keys to hold the same on both servers.
func sameKeys(t *testing.T, primary, replica string, keys []string) {
	t.Helper()
	conn := func(addr string) *bufio.ReadWriter {
		nc, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { nc.Close() })
		return bufio.NewReadWriter(bufio.NewReader(nc), bufio.NewWriter(nc))
	}
	p, r := conn(primary), conn(replica)
	for _, k := range keys {
		want, err := keyState(p, k)
		if err != nil {
			t.Fatal(err)
		}
		got, err := keyState(r, k)
		if err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Errorf("%s: MiniKV holds %.200q, its Redis replica %.200q", k, want, got)
		}
	}
}

// TestRedisReplicaFollowsMiniKV starts an unmodified redis-server as a
// replica of MiniKV (--replicaof): it loads MiniKV's RDB (full resync),
// then follows the stream of writes made on both of MiniKV's ports; its
// link is dropped and it continues from the backlog (PSYNC +CONTINUE);
// at each step every key must be the same on both, and both servers'
// INFO replication must say so.
func TestRedisReplicaFollowsMiniKV(t *testing.T) {
	rs := startRESP(t, server.Config{}, store.Config{})
	_, port, _ := net.SplitHostPort(rs.respAddr)
	c := dialRESP(t, rs.respAddr)
	mc := dial(t, rs.addr)
	var keys []string
	for i := range 20 {
		keys = append(keys, fmt.Sprintf("pre:%d", i))
	}
	c.Do("SET", "pre:0", "string")
	c.Do("SET", "pre:1", "expires", "EX", "1000")
	c.Do("HSET", "pre:2", "a", "1", "b", "2")
	c.Do("RPUSH", "pre:3", "x", "y", "z")
	c.Do("SADD", "pre:4", "1", "2", "3")
	c.Do("ZADD", "pre:5", "1.5", "m", "2", "n")
	for i := range 300 {
		c.Do("HSET", "pre:6", fmt.Sprint("f", i), strings.Repeat("v", i)) // a big hash
	}

	replica := startRedisServer(t, "--replicaof", "127.0.0.1", port)
	waitFor(t, "the replica's link", func() bool { return infoField(t, replica, "replication", "master_link_status") == "up" })
	if got := infoField(t, rs.respAddr, "stats", "sync_full"); got != "1" {
		t.Errorf("sync_full = %q after the replica's first sync, want 1", got)
	}

	caughtUp := func() {
		t.Helper()
		waitFor(t, "the replica to catch up", func() bool {
			off := infoField(t, rs.respAddr, "replication", "master_repl_offset")
			return off != "0" && infoField(t, replica, "replication", "slave_repl_offset") == off
		})
	}
	r := rand.New(rand.NewPCG(1, 2))
	write := func(n int) {
		for range n {
			k := fmt.Sprintf("k:%d", r.IntN(30))
			switch r.IntN(6) {
			case 0:
				c.Do("SET", k, fmt.Sprint(r.IntN(1000)))
			case 1:
				c.Do("DEL", k)
			case 2:
				c.Do("INCR", "counter")
			case 3:
				c.Do("SADD", "set", fmt.Sprint(r.IntN(100)))
			case 4:
				v := fmt.Sprint("mc", r.IntN(1000))
				mc.Send(fmt.Sprintf("set %s 3 0 %d\r\n%s\r\n", k, len(v), v))
				mc.Line()
			case 5:
				c.Send(multibulk("MULTI") + multibulk("LPUSH", "list", "a") + multibulk("HSET", "pre:2", "c", "3") + multibulk("EXEC"))
				for range 4 {
					c.Reply()
				}
			}
		}
	}
	for i := range 30 {
		keys = append(keys, fmt.Sprintf("k:%d", i))
	}
	keys = append(keys, "counter", "set", "list")
	write(500)
	caughtUp()
	sameKeys(t, rs.respAddr, replica, keys)
	if got := infoField(t, rs.respAddr, "replication", "connected_slaves"); got != "1" {
		t.Errorf("connected_slaves = %q, want 1", got)
	}
	if role := c.Do("ROLE"); !strings.HasPrefix(role, "*3\r\n$6\r\nmaster\r\n:") || !strings.Contains(role, "*1\r\n*3\r\n$9\r\n127.0.0.1\r\n") {
		t.Errorf("ROLE = %q", role)
	}

	// The replica drops its link and asks to continue where it was.
	rc := dialRESP(t, replica)
	rc.Do("CLIENT", "KILL", "TYPE", "master")
	write(200)
	waitFor(t, "a partial resync", func() bool { return infoField(t, rs.respAddr, "stats", "sync_partial_ok") == "1" })
	caughtUp()
	sameKeys(t, rs.respAddr, replica, keys)
	if got := infoField(t, rs.respAddr, "stats", "sync_full"); got != "1" {
		t.Errorf("sync_full = %q after the link came back, want still 1", got)
	}
	off, _ := strconv.Atoi(infoField(t, rs.respAddr, "replication", "master_repl_offset"))
	t.Logf("offset %d, replica: %s", off, infoField(t, replica, "replication", "slave_repl_offset"))
	if off == 0 {
		t.Error("master_repl_offset is 0 after the writes")
	}
}

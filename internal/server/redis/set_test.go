package redis

import (
	"fmt"
	"io"
	"strconv"
	"testing"

	"github.com/minikv/minikv/internal/cluster"
	"github.com/minikv/minikv/internal/protocol/resp"
	"github.com/minikv/minikv/internal/server"
	"github.com/minikv/minikv/internal/store"
)

// TestSetDispatchZeroAllocs: SADD, SISMEMBER, SMISMEMBER and SREM
// allocate nothing once warm, on an intset, a listpack and a table.
func TestSetDispatchZeroAllocs(t *testing.T) {
	rs := startRESP(t, server.Config{}, store.Config{})
	p := New(rs.srv)
	rc := &conn{Conn: new(server.Conn), p: p, st: p.st}
	rc.w = resp.NewWriter(io.Discard, server.WriteBufSize)
	for _, c := range []struct {
		prefix string
		n      int
		member string
	}{{"", 10, "12345"}, {"m", 10, "member"}, {"m", 1000, "member"}} {
		key := []byte(fmt.Sprint("s", c.prefix, c.n))
		for i := range c.n {
			rc.dispatch([][]byte{[]byte("SADD"), key, []byte(fmt.Sprint(c.prefix, i))})
		}
		m := []byte(c.member)
		cmds := [][][]byte{
			{[]byte("SADD"), key, m},
			{[]byte("SISMEMBER"), key, m},
			{[]byte("SMISMEMBER"), key, m, []byte("nope")},
			{[]byte("SREM"), key, m},
			{[]byte("SCARD"), key},
		}
		allocs := testing.AllocsPerRun(1000, func() {
			for _, argv := range cmds {
				rc.dispatch(argv)
			}
		})
		if allocs != 0 {
			t.Errorf("%s: SADD+SISMEMBER+SMISMEMBER+SREM+SCARD allocate %v times", key, allocs)
		}
	}
}

// TestClusterSetRouting: the set commands over several keys are routed by
// all their keys; SINTERCARD's keys follow numkeys, and its LIMIT
// argument is not a key.
func TestClusterSetRouting(t *testing.T) {
	nodes, m := startCluster(t, server.Config{})
	c := dialRESP(t, nodes[0].addr)
	local, remote := keyOn(m, m.Nodes[0], "k"), keyOn(m, m.Nodes[2], "k")
	moved := func(key string, to *cluster.Node) string {
		return "-MOVED " + strconv.Itoa(cluster.KeySlot([]byte(key))) + " " + to.Addr + "\r\n"
	}
	cross := "-" + errCrossSlot + "\r\n"
	tag := "{" + local + "}"
	c.Expect(multibulk("SADD", tag+"a", "1", "2"), ":2\r\n")
	c.Expect(multibulk("SADD", tag+"b", "2", "3"), ":2\r\n")
	c.Expect(multibulk("SINTERCARD", "2", tag+"a", tag+"b", "LIMIT", "5"), ":1\r\n")
	c.Expect(multibulk("SINTERCARD", "1", remote), moved(remote, m.Nodes[2]))
	c.Expect(multibulk("SINTERCARD", "2", tag+"a", remote), cross)
	c.Expect(multibulk("SINTERCARD", "0", remote), "-ERR numkeys should be greater than 0\r\n")
	c.Expect(multibulk("SUNIONSTORE", tag+"d", tag+"a", tag+"b"), ":3\r\n")
	c.Expect(multibulk("SUNIONSTORE", tag+"d", tag+"a", remote), cross)
	c.Expect(multibulk("SMOVE", tag+"a", tag+"b", "1"), ":1\r\n")
	c.Expect(multibulk("SMOVE", tag+"a", remote, "2"), cross)
	c.Expect(multibulk("SINTER", remote), moved(remote, m.Nodes[2]))
}

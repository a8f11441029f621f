package redis

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/minikv/minikv/internal/cluster"
	"github.com/minikv/minikv/internal/server"
	"github.com/minikv/minikv/internal/store"
)

// TestSetDispatchZeroAllocs: SADD, SISMEMBER, SMISMEMBER and SREM
// allocate nothing once warm, on an intset, a listpack and a table.
func TestSetDispatchZeroAllocs(t *testing.T) {
	rs := startRESP(t, server.Config{}, store.Config{})
	rc := dispatchConn(New(rs.srv))
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
		// (The test reached the commands only once dispatchConn
		// authenticated its connection; before, NOAUTH answered them.)
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

// TestGoRedisSets runs the set commands through go-redis, over RESP3
// (its default, where sets are ~ replies) and RESP2.
func TestGoRedisSets(t *testing.T) {
	for _, resp2 := range []bool{false, true} {
		t.Run(fmt.Sprintf("resp2=%v", resp2), func(t *testing.T) {
			rdb, _ := newGoRedis(t, resp2)
			ctx := context.Background()
			check := func(what string, got any, err error, want any) {
				t.Helper()
				if err != nil || fmt.Sprint(got) != fmt.Sprint(want) {
					t.Errorf("%s = %v (%v), want %v", what, got, err, want)
				}
			}
			n, err := rdb.SAdd(ctx, "a", 3, 1, 2, 2).Result()
			check("SADD", n, err, 3)
			m, err := rdb.SMembers(ctx, "a").Result()
			check("SMEMBERS", m, err, []string{"1", "2", "3"})
			b, err := rdb.SIsMember(ctx, "a", 2).Result()
			check("SISMEMBER", b, err, true)
			bs, err := rdb.SMIsMember(ctx, "a", 1, 9).Result()
			check("SMISMEMBER", bs, err, []bool{true, false})
			n, err = rdb.SAdd(ctx, "b", "x", 2, 3).Result()
			check("SADD b", n, err, 3)
			m, err = rdb.SInter(ctx, "a", "b").Result()
			check("SINTER", m, err, []string{"2", "3"})
			m, err = rdb.SDiff(ctx, "a", "b").Result()
			check("SDIFF", m, err, []string{"1"})
			m, err = rdb.SUnion(ctx, "a", "b").Result()
			slices.Sort(m)
			check("SUNION", m, err, []string{"1", "2", "3", "x"})
			n, err = rdb.SInterCard(ctx, 1, "a", "b").Result()
			check("SINTERCARD LIMIT 1", n, err, 1)
			n, err = rdb.SUnionStore(ctx, "u", "a", "b").Result()
			check("SUNIONSTORE", n, err, 4)
			ok, err := rdb.SMove(ctx, "u", "v", "x").Result()
			check("SMOVE", ok, err, true)
			keys, cursor, err := rdb.SScan(ctx, "u", 0, "*", 10).Result()
			check("SSCAN", fmt.Sprint(keys, cursor), err, "[1 2 3] 0")
			m, err = rdb.SRandMemberN(ctx, "v", -2).Result()
			check("SRANDMEMBER -2", m, err, []string{"x", "x"})
			m, err = rdb.SPopN(ctx, "u", 5).Result()
			check("SPOP 5", m, err, []string{"1", "2", "3"})
			c, err := rdb.SCard(ctx, "u").Result()
			check("SCARD after SPOP", c, err, 0)
			s, err := rdb.SPop(ctx, "v").Result()
			check("SPOP", s, err, "x")
			if _, err := rdb.SPop(ctx, "v").Result(); err != redis.Nil {
				t.Errorf("SPOP of a missing key: %v, want redis.Nil", err)
			}
		})
	}
}

package redis

import (
	"fmt"
	"math/rand/v2"
	"net"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/minikv/minikv/internal/server"
	"github.com/minikv/minikv/internal/server/servertest"
	"github.com/minikv/minikv/internal/store"
)

// collState is key's type and content as a replica must hold it: a
// hash's fields and a set's members sorted (their order is the table's),
// a sorted set in its order with its scores, and the TTL's presence.
func collState(cl interface{ Do(...string) string }, key string) string {
	typ := cl.Do("TYPE", key)
	var read []string
	step := 0
	switch typ {
	case "+hash\r\n":
		read, step = []string{"HGETALL", key}, 4
	case "+set\r\n":
		read, step = []string{"SMEMBERS", key}, 2
	case "+zset\r\n":
		read = []string{"ZRANGE", key, "0", "-1", "WITHSCORES"}
	case "+string\r\n":
		read = []string{"GET", key}
	case "+list\r\n":
		read = []string{"LRANGE", key, "0", "-1"}
	default:
		return typ
	}
	v := cl.Do(read...)
	if step > 0 {
		lines := strings.SplitAfter(v, "\r\n")
		head, items := lines[0], lines[1:]
		var groups []string
		for i := 0; i+step <= len(items); i += step {
			groups = append(groups, strings.Join(items[i:i+step], ""))
		}
		slices.Sort(groups)
		v = head + strings.Join(groups, "")
	}
	ttl := cl.Do("PTTL", key)
	if ttl != ":-1\r\n" {
		ttl = "ttl"
	}
	return typ + v + ttl
}

// collWorkload writes every kind of change to hashes, sets and sorted
// sets, big (past the listpack limits) and small, in two databases.
func collWorkload(c interface{ Do(...string) string }, rnd *rand.Rand, n int) {
	for i := range n {
		c.Do("HSET", "h", "f"+strconv.Itoa(i), strings.Repeat("v", i%50))
		c.Do("SADD", "s", "m"+strconv.Itoa(i))
		c.Do("ZADD", "z", strconv.Itoa(i%97), "m"+strconv.Itoa(i))
		c.Do("SADD", "ints", strconv.Itoa(i*7))
	}
	c.Do("HSET", "small", "a", "1", "b", "2")
	c.Do("SADD", "sm", "x", "y")
	c.Do("ZADD", "sz", "1", "a", "2", "b")
	c.Do("EXPIRE", "h", "100000")
	key := func(i int) string { return strconv.Itoa(rnd.IntN(n + 20)) }
	for i := range 4 * n {
		switch rnd.IntN(24) {
		case 0:
			c.Do("HSET", "h", "f"+key(i), "new"+strconv.Itoa(i), "g"+key(i), "x")
		case 1:
			c.Do("HDEL", "h", "f"+key(i), "f"+key(i))
		case 2:
			c.Do("HINCRBY", "h", "n"+key(i), strconv.Itoa(rnd.IntN(100)-50))
		case 3:
			c.Do("HINCRBYFLOAT", "h", "fl", "0.1")
		case 4:
			c.Do("HSETNX", "h", "f"+key(i), "nx")
		case 5:
			c.Do("SADD", "s", "m"+key(i), "new"+strconv.Itoa(i))
		case 6:
			c.Do("SREM", "s", "m"+key(i), "m"+key(i))
		case 7:
			c.Do("SPOP", "s", strconv.Itoa(rnd.IntN(3)+1))
		case 8:
			c.Do("SMOVE", "s", "sm", "m"+key(i))
		case 9:
			c.Do("ZADD", "z", strconv.FormatFloat(rnd.NormFloat64()*1e6, 'g', -1, 64), "m"+key(i))
		case 10:
			c.Do("ZINCRBY", "z", "0.1", "m"+key(i))
		case 11:
			c.Do("ZREM", "z", "m"+key(i))
		case 12:
			c.Do("ZPOPMIN", "z", strconv.Itoa(rnd.IntN(3)+1))
		case 13:
			c.Do("ZPOPMAX", "z")
		case 14:
			c.Do("ZADD", "z", "GT", "CH", strconv.Itoa(rnd.IntN(200)), "m"+key(i))
		case 15:
			c.Do("ZADD", "z", "INCR", "inf", "inf:"+key(i))
			c.Do("ZADD", "z", "-inf", "neg:"+key(i))
		case 16:
			c.Do("ZREMRANGEBYSCORE", "z", "10", "12")
		case 17:
			c.Do("SREM", "ints", strconv.Itoa(rnd.IntN(n)*7))
			c.Do("SADD", "ints", strconv.Itoa(rnd.IntN(10*n)))
		case 18:
			c.Do("EVAL", "redis.call('HSET', KEYS[1], 'lua', ARGV[1]); redis.call('ZADD', KEYS[2], 5, ARGV[1]); return 1", "2", "h", "z", strconv.Itoa(i))
		case 19:
			c.Do("MULTI")
			c.Do("HDEL", "h", "f"+key(i))
			c.Do("SADD", "s", "multi"+strconv.Itoa(i))
			c.Do("ZREM", "z", "m"+key(i))
			c.Do("EXEC")
		case 20:
			c.Do("SELECT", "2")
			c.Do("HSET", "h", "db2", strconv.Itoa(i))
			c.Do("ZADD", "z", strconv.Itoa(i), "m")
			c.Do("SELECT", "0")
		case 21:
			c.Do("HSET", "small", "c"+key(i), "v")
			c.Do("ZINCRBY", "sz", "1", "a")
			c.Do("SPOP", "sm")
		case 22:
			c.Do("ZUNIONSTORE", "u", "2", "z", "sz")
			c.Do("SINTERSTORE", "si", "s", "sm")
		case 23:
			c.Do("HDEL", "small", "a", "b")
			c.Do("SREM", "sm", "x", "y")
		}
	}
}

var collKeys = []string{"h", "s", "z", "ints", "small", "sm", "sz", "u", "si"}

// TestCollectionsReplicateCommands: a MiniKV primary streams a hash's,
// set's or sorted set's change as the command that makes it (HSET, SREM,
// ZADD with the score ...), not the whole collection: eight changes of
// 2 000-member collections add under 2 000 bytes to the replication
// stream; and a redis-server replica and a MiniKV replica both end with
// the primary's keys after a random workload of every such command.
func TestCollectionsReplicateCommands(t *testing.T) {
	rs := startRESP(t, server.Config{}, store.Config{})
	host, port, _ := net.SplitHostPort(rs.respAddr)
	c := dialRESP(t, rs.respAddr)
	redisReplica, mkReplica := twoReplicas(t, host, port)
	collWorkload(c, rand.New(rand.NewPCG(4, 40)), 2000)

	off := func() int64 {
		n, _ := strconv.ParseInt(infoField(t, rs.respAddr, "replication", "master_repl_offset"), 10, 64)
		return n
	}
	before := off()
	for _, cmd := range [][]string{{"HSET", "h", "one", "more"}, {"HDEL", "h", "f7"}, {"HINCRBY", "h", "n", "1"},
		{"SADD", "s", "one"}, {"SREM", "s", "m8"}, {"ZADD", "z", "1.5", "one"}, {"ZINCRBY", "z", "2", "m9"}, {"ZREM", "z", "m10"}} {
		c.Do(cmd...)
	}
	if grew := off() - before; grew > 2000 {
		t.Errorf("eight changes of 2 000-member collections grew the replication stream by %d bytes", grew)
	}

	want := fmt.Sprint(off())
	for _, r := range []string{redisReplica, mkReplica} {
		waitFor(t, "the replica "+r+" to catch up", func() bool {
			return infoField(t, r, "replication", "slave_repl_offset") == want
		})
		rc := dialRESP(t, r)
		for _, db := range []string{"0", "2"} {
			c.Do("SELECT", db)
			rc.Do("SELECT", db)
			for _, k := range collKeys {
				if w, g := collState(c, k), collState(rc, k); g != w {
					t.Errorf("db %s key %s: replica %s\n%.2000q\nprimary\n%.2000q", db, k, r, g, w)
				}
			}
		}
		c.Do("SELECT", "0")
	}
}

// TestCollectionPropagationReplays: the commands streamed for hashes,
// sets and sorted sets, applied again from any earlier point over a later
// state, give the primary's state (checkReplays).
func TestCollectionPropagationReplays(t *testing.T) {
	checkReplays(t, func(c *servertest.RESPClient) {
		collWorkload(c, rand.New(rand.NewPCG(5, 50)), 300)
	}, func(cl *servertest.RESPClient) string {
		var b strings.Builder
		for _, db := range []string{"0", "2"} {
			cl.Do("SELECT", db)
			for _, k := range collKeys {
				b.WriteString(collState(cl, k))
			}
		}
		return b.String()
	}, "", 1000)
}

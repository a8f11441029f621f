package redis

import (
	"bufio"
	"fmt"
	"math/rand/v2"
	"net"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/minikv/minikv/internal/rdb"
	"github.com/minikv/minikv/internal/replication"
	"github.com/minikv/minikv/internal/server"
	"github.com/minikv/minikv/internal/store"
)

// keyState is what a key holds, read with client commands: its type, its
// value in a form that does not depend on encoding or iteration order,
// and whether it has a deadline.
func keyState(c *bufio.ReadWriter, key string) (string, error) {
	do := func(args ...string) (string, error) {
		if _, err := c.WriteString(multibulk(args...)); err != nil {
			return "", err
		}
		if err := c.Flush(); err != nil {
			return "", err
		}
		return readRESPReply(c.Reader)
	}
	typ, err := do("TYPE", key)
	if err != nil {
		return "", err
	}
	var read []string
	sorted := false
	switch typ {
	case "+none\r\n":
		return typ, nil
	case "+string\r\n":
		read = []string{"GET", key}
	case "+hash\r\n":
		read, sorted = []string{"HGETALL", key}, true
	case "+list\r\n":
		read = []string{"LRANGE", key, "0", "-1"}
	case "+set\r\n":
		read, sorted = []string{"SMEMBERS", key}, true
	case "+zset\r\n":
		read = []string{"ZRANGE", key, "0", "-1", "WITHSCORES"}
	case "+stream\r\n":
		// Everything, the groups' times included: a replica's copy
		// carries them as they were; but Redis 7.2's active-time, which
		// a redis-server 7.0 replica has not (drop72).
		read = []string{"XINFO", "STREAM", key, "FULL", "COUNT", "0"}
	default:
		return typ, nil
	}
	v, err := do(read...)
	if err != nil {
		return "", err
	}
	if read[0] == "XINFO" {
		v = drop72(v)
	}
	if sorted {
		lines := strings.SplitAfter(v, "\r\n")
		head, items := lines[0], lines[1:]
		var pairs []string
		step := 2 // $len and the bytes
		if read[0] == "HGETALL" {
			step = 4
		}
		for i := 0; i+step <= len(items); i += step {
			pairs = append(pairs, strings.Join(items[i:i+step], ""))
		}
		slices.Sort(pairs)
		v = head + strings.Join(pairs, "")
	}
	ttl, err := do("PTTL", key)
	if err != nil {
		return "", err
	}
	return typ + v + fmt.Sprint(ttl != ":-1\r\n"), nil
}

// TestReplicationStreamMatchesRedis runs a random workload of every data
// type on MiniKV, over both ports, with a replication Source on its store;
// then sends the stream the Source made to a redis-server as a client
// would, and requires every key to hold the same thing on both: the
// stream leaves a Redis replica in the primary's state.
func TestReplicationStreamMatchesRedis(t *testing.T) {
	rs := startRESP(t, server.Config{}, store.Config{})
	bl := replication.NewBacklog(64<<20, 0)
	src := replication.NewSource(bl, rdb.Dump)
	t.Cleanup(src.Close)
	rs.store.SetFeed(src)
	redisAddr := startRedisServer(t)

	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 7))
	const keys = 40
	key := func() string { return fmt.Sprintf("r:%d", r.IntN(keys)) }
	typed := func(kind int) string { return fmt.Sprintf("r:%d", r.IntN(keys/5)*5+kind) }
	val := func() string { return fmt.Sprintf("v%d", r.IntN(1000)) + strings.Repeat("x", r.IntN(3)*r.IntN(100)) }
	mc := dial(t, rs.addr)
	c := dialRESP(t, rs.respAddr)
	for range 3000 {
		switch r.IntN(20) {
		case 0:
			c.Do("SET", typed(0), val())
		case 1:
			c.Do("SET", typed(0), val(), "PX", fmt.Sprint(100000+r.IntN(100000)))
		case 2:
			c.Do("APPEND", typed(0), "+")
		case 3:
			c.Do("DEL", key())
		case 4:
			c.Do("HSET", typed(1), fmt.Sprint("f", r.IntN(200)), val())
		case 5:
			c.Do("HDEL", typed(1), fmt.Sprint("f", r.IntN(200)))
		case 6:
			c.Do("RPUSH", typed(2), val(), val())
		case 7:
			c.Do("LPOP", typed(2))
		case 8:
			c.Do("SADD", typed(3), fmt.Sprint(r.IntN(300)), val())
		case 9:
			c.Do("SREM", typed(3), fmt.Sprint(r.IntN(300)))
		case 10:
			c.Do("ZADD", typed(4), fmt.Sprint(r.IntN(50)), val())
		case 11:
			c.Do("ZINCRBY", typed(4), "1.5", fmt.Sprint("v", r.IntN(1000)))
		case 12:
			c.Do("EXPIRE", key(), fmt.Sprint(1000+r.IntN(1000)))
		case 13:
			c.Do("PERSIST", key())
		case 14:
			from := typed(r.IntN(5))
			c.Do("RENAME", from, fmt.Sprintf("r:%d", r.IntN(keys/5)*5+int(from[len(from)-1]-'0')%5))
		case 15:
			c.Send(multibulk("MULTI") + multibulk("SET", typed(0), val()) + multibulk("HSET", typed(1), "m", val()) +
				multibulk("INCR", "r:counter") + multibulk("EXEC"))
			for range 5 {
				c.Reply()
			}
		case 16:
			c.Do("EVAL", "redis.call('SET', KEYS[1], ARGV[1]) redis.call('SADD', KEYS[2], ARGV[1]) return 1", "2", typed(0), typed(3), val())
		case 17:
			v := val()
			mc.Send(fmt.Sprintf("set %s %d 0 %d\r\n%s\r\n", typed(0), r.IntN(3), len(v), v))
			mc.Line()
		case 18:
			c.Do("SET", typed(0), "short", "PX", "1") // expires at once: DEL on the stream once reclaimed
		case 19:
			c.Do("HSET", typed(1), "big", strings.Repeat("b", 100)) // with 200 fields: a big hash at times
		}
	}
	time.Sleep(20 * time.Millisecond) // the 1 ms keys are past their deadline
	src.Sync()
	stream, _, ok := bl.ReadFrom(nil, 0, 1<<30)
	if !ok || len(stream) == 0 {
		t.Fatalf("no stream (%d bytes, ok %v)", len(stream), ok)
	}

	nc, err := net.Dial("tcp", redisAddr)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	redis := bufio.NewReadWriter(bufio.NewReader(nc), bufio.NewWriter(nc))
	go func() { _, _ = nc.Write(stream) }()
	cmds := strings.Count(string(stream), "\r\n*") + 1 // every command is an array; values hold no "\r\n*" here
	for i := range cmds {
		reply, err := readRESPReply(redis.Reader)
		if err != nil {
			t.Fatalf("redis-server, reply %d of %d: %v", i, cmds, err)
		}
		if strings.HasPrefix(reply, "-") {
			t.Fatalf("redis-server refused a command of the stream: %q", reply)
		}
	}
	mk, err := net.Dial("tcp", rs.respAddr)
	if err != nil {
		t.Fatal(err)
	}
	defer mk.Close()
	minikv := bufio.NewReadWriter(bufio.NewReader(mk), bufio.NewWriter(mk))
	for i := range keys + 1 {
		k := fmt.Sprintf("r:%d", i)
		if i == keys {
			k = "r:counter"
		}
		want, err := keyState(minikv, k)
		if err != nil {
			t.Fatal(err)
		}
		got, err := keyState(redis, k)
		if err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Errorf("%s: MiniKV holds %.300q, redis-server after the stream %.300q", k, want, got)
		}
	}
}

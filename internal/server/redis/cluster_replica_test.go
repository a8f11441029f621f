package redis

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/minikv/minikv/internal/cluster"
	"github.com/minikv/minikv/internal/server"
)

// sixNodes is a cluster of three primaries, n0 to n2, with redis-cli
// --cluster create's split, and a replica of each, n3 of n0, n4 of n1 and
// n5 of n2.
var sixNodes = []string{"0-5460", "5461-10922", "10923-16383", "replicaof n0", "replicaof n1", "replicaof n2"}

// startReplicatedCluster starts sixNodes and waits until each replica
// holds a key written to its primary after the replica started.
func startReplicatedCluster(t *testing.T) ([]*clusterNode, *cluster.Map) {
	t.Helper()
	nodes, m := startCluster(t, server.Config{}, sixNodes...)
	for i := range 3 {
		k := keyOn(m, m.Nodes[i], "ready:")
		dialRESP(t, nodes[i].addr).Expect(multibulk("SET", k, "up"), "+OK\r\n")
		r := dialRESP(t, nodes[i+3].addr)
		r.Expect(multibulk("READONLY"), "+OK\r\n")
		waitReply(t, r, []string{"GET", k}, bulk("up"))
	}
	return nodes, m
}

// waitReply sends args until the reply is want, failing after a deadline
// only a broken replica reaches.
func waitReply(t *testing.T, c interface{ Do(...string) string }, args []string, want string) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		got := c.Do(args...)
		if got == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%q = %q after 30 s, want %q", args, got, want)
		}
	}
}

// TestClusterReplicaRouting: a replica redirects every keyed command to
// the slot's primary, serves the reads of a READONLY connection on its
// own primary's slots (still redirecting writes, and keys of other
// shards), and READWRITE and RESET end that, as redis-server 7.0's
// replicas do (the differential test compares them live).
func TestClusterReplicaRouting(t *testing.T) {
	nodes, m := startReplicatedCluster(t)
	n0, n1 := m.Nodes[0], m.Nodes[1]
	k := keyOn(m, n0, "k")
	other := keyOn(m, n1, "o")
	slot, oslot := strconv.Itoa(cluster.KeySlot([]byte(k))), strconv.Itoa(cluster.KeySlot([]byte(other)))
	moved := "-MOVED " + slot + " " + nodes[0].addr + "\r\n"
	p := dialRESP(t, nodes[0].addr)
	p.Expect(multibulk("SET", k, "v1"), "+OK\r\n")
	p.Expect(multibulk("RPUSH", tagOf(k)+"l", "a", "b"), ":2\r\n")
	// Both writes on the replica before it is read (they raced the reads).
	waitReply(t, p, []string{"WAIT", "1", "1000"}, ":1\r\n")

	r := dialRESP(t, nodes[3].addr)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"GET", k}, moved},
		{[]string{"SET", k, "x"}, moved},
		{[]string{"READONLY"}, "+OK\r\n"},
		{[]string{"GET", other}, "-MOVED " + oslot + " " + nodes[1].addr + "\r\n"},
		{[]string{"SET", k, "x"}, moved},
		{[]string{"DEL", k}, moved},
		{[]string{"FLUSHALL"}, "-" + errReadOnly + "\r\n"}, // no key: the replica's own refusal
		{[]string{"MGET", k, k}, "*2\r\n" + bulk("v1") + bulk("v1")},
		{[]string{"MGET", k, other}, "-" + errCrossSlot + "\r\n"},
		{[]string{"PING"}, "+PONG\r\n"},
		{[]string{"MULTI"}, "+OK\r\n"},
		{[]string{"GET", k}, "+QUEUED\r\n"},
		{[]string{"SET", k, "x"}, moved},
		{[]string{"EXEC"}, "-EXECABORT Transaction discarded because of previous errors.\r\n"},
		{[]string{"READWRITE"}, "+OK\r\n"},
		{[]string{"GET", k}, moved},
		{[]string{"READONLY"}, "+OK\r\n"},
		{[]string{"RESET"}, "+RESET\r\n"},
		{[]string{"GET", k}, moved},
		{[]string{"READONLY"}, "+OK\r\n"},
		{[]string{"MULTI"}, "+OK\r\n"},
		{[]string{"GET", k}, "+QUEUED\r\n"},
		{[]string{"LRANGE", tagOf(k) + "l", "0", "-1"}, "+QUEUED\r\n"},
		{[]string{"EXEC"}, "*2\r\n" + bulk("v1") + "*2\r\n" + bulk("a") + bulk("b")},
		{[]string{"EVAL_RO", "return redis.call('get', KEYS[1])", "1", k}, bulk("v1")},
		{[]string{"EVAL", "return redis.call('get', KEYS[1])", "1", k}, bulk("v1")},
		{[]string{"EVAL", "return redis.call('get', KEYS[1])", "1", other}, "-MOVED " + oslot + " " + nodes[1].addr + "\r\n"},
		{[]string{"EVAL", "return redis.call('set', KEYS[1], 'x')", "1", k}, "-" + errReadOnly + " script: " + "x"},
	} {
		got := r.Do(tc.args...)
		if strings.HasSuffix(tc.want, "script: x") {
			// A write inside a script: the replica's refusal, whose
			// script suffix is the script layer's (not what is tested).
			if !strings.HasPrefix(got, "-READONLY ") {
				t.Errorf("%q = %q, want -READONLY ...", tc.args, got)
			}
			continue
		}
		if got != tc.want {
			t.Errorf("%q = %q, want %q", tc.args, got, tc.want)
		}
	}
	if info := r.Do("CLIENT", "INFO"); !strings.Contains(info, " flags=r ") {
		t.Errorf("CLIENT INFO after READONLY = %q, want flags=r", info)
	}
	// A primary takes READONLY (a flag, as in Redis) and keeps serving
	// its own slots and redirecting the others'.
	p.Expect(multibulk("READONLY"), "+OK\r\n")
	p.Expect(multibulk("GET", k), bulk("v1"))
	p.Expect(multibulk("GET", other), "-MOVED "+oslot+" "+nodes[1].addr+"\r\n")
	// The replica followed the writes the primary took meanwhile.
	p.Expect(multibulk("SET", k, "v2"), "+OK\r\n")
	waitReply(t, r, []string{"GET", k}, bulk("v2"))
}

// TestClusterReplicaReplies checks CLUSTER SLOTS, SHARDS, NODES,
// REPLICAS, SLAVES and INFO with replicas, byte for byte in RESP2 and
// RESP3, in the shapes redis-server 7.0.15 answers for three primaries
// with a replica each (TestClusterReplicaDifferential compares them with
// one live).
func TestClusterReplicaReplies(t *testing.T) {
	nodes, m := startCluster(t, server.Config{}, "0-5460", "5461-10922", "10923-16383", "replicaof n0", "replicaof n0", "replicaof n2")
	for _, resp3 := range []bool{false, true} {
		t.Run(fmt.Sprintf("resp3=%v", resp3), func(t *testing.T) {
			c := dialRESP(t, nodes[4].addr) // n4, n0's second replica
			mapHdr, emptyMap := func(n int) string { return "*" + strconv.Itoa(2*n) + "\r\n" }, "*0\r\n"
			verbatim := func(s string) string { return bulk(s) }
			if resp3 {
				c.Do("HELLO", "3")
				mapHdr, emptyMap = func(n int) string { return "%" + strconv.Itoa(n) + "\r\n" }, "%0\r\n"
				verbatim = func(s string) string { return "=" + strconv.Itoa(len(s)+4) + "\r\ntxt:" + s + "\r\n" }
			}
			node := func(n *cluster.Node) string {
				return fmt.Sprintf("*4\r\n%s:%d\r\n%s%s", bulk("127.0.0.1"), n.Port, bulk(n.ID), emptyMap)
			}
			nd := m.Nodes
			slots := "*3\r\n" +
				"*5\r\n:0\r\n:5460\r\n" + node(nd[0]) + node(nd[3]) + node(nd[4]) +
				"*3\r\n:5461\r\n:10922\r\n" + node(nd[1]) +
				"*4\r\n:10923\r\n:16383\r\n" + node(nd[2]) + node(nd[5])
			if got := c.Do("CLUSTER", "SLOTS"); got != slots {
				t.Errorf("CLUSTER SLOTS = %q, want %q", got, slots)
			}

			shardNode := func(n *cluster.Node, role string) string {
				return mapHdr(7) + bulk("id") + bulk(n.ID) + bulk("port") + ":" + strconv.Itoa(n.Port) + "\r\n" +
					bulk("ip") + bulk("127.0.0.1") + bulk("endpoint") + bulk("127.0.0.1") + bulk("role") + bulk(role) +
					bulk("replication-offset") + ":0\r\n" + bulk("health") + bulk("online")
			}
			shard := func(first, last int, ns ...string) string {
				return fmt.Sprintf("%s%s*2\r\n:%d\r\n:%d\r\n%s*%d\r\n%s", mapHdr(2), bulk("slots"), first, last, bulk("nodes"), len(ns), strings.Join(ns, ""))
			}
			shards := "*3\r\n" +
				shard(0, 5460, shardNode(nd[0], "master"), shardNode(nd[3], "replica"), shardNode(nd[4], "replica")) +
				shard(5461, 10922, shardNode(nd[1], "master")) +
				shard(10923, 16383, shardNode(nd[2], "master"), shardNode(nd[5], "replica"))
			if got := c.Do("CLUSTER", "SHARDS"); got != shards {
				t.Errorf("CLUSTER SHARDS = %q, want %q", got, shards)
			}

			line := func(i int, flags, master, epoch, slots string) string {
				return fmt.Sprintf("%s %s@0 %s %s 0 0 %s connected%s", nd[i].ID, nodes[i].addr, flags, master, epoch, slots)
			}
			lines := []string{
				line(0, "master", "-", "1", " 0-5460"),
				line(1, "master", "-", "2", " 5461-10922"),
				line(2, "master", "-", "3", " 10923-16383"),
				line(3, "slave", nd[0].ID, "1", ""),
				line(4, "myself,slave", nd[0].ID, "1", ""),
				line(5, "slave", nd[2].ID, "3", ""),
			}
			if got, want := c.Do("CLUSTER", "NODES"), verbatim(strings.Join(lines, "\n")+"\n"); got != want {
				t.Errorf("CLUSTER NODES = %q, want %q", got, want)
			}
			for _, sub := range []string{"REPLICAS", "slaves"} {
				want := "*2\r\n" + bulk(lines[3]) + bulk(lines[4])
				if got := c.Do("CLUSTER", sub, nd[0].ID); got != want {
					t.Errorf("CLUSTER %s n0 = %q, want %q", sub, got, want)
				}
				c.Expect(multibulk("CLUSTER", sub, nd[1].ID), "*0\r\n")
				c.Expect(multibulk("CLUSTER", sub, nd[5].ID), "-ERR The specified node is not a master\r\n")
				c.Expect(multibulk("CLUSTER", sub, "abc"), "-ERR Unknown node abc\r\n")
				c.Expect(multibulk("CLUSTER", sub), "-ERR wrong number of arguments for 'cluster|"+strings.ToLower(sub)+"' command\r\n")
			}
			info := c.Do("CLUSTER", "INFO")
			for _, f := range []string{"cluster_known_nodes:6\r\n", "cluster_size:3\r\n", "cluster_current_epoch:3\r\n", "cluster_my_epoch:1\r\n"} {
				if !strings.Contains(info, f) {
					t.Errorf("CLUSTER INFO = %q, want it to hold %q", info, f)
				}
			}
			help := c.Do("CLUSTER", "HELP")
			if !strings.Contains(help, "+REPLICAS <node-id>\r\n+    Return <node-id> replicas.\r\n") || strings.Contains(help, "SLAVES") {
				t.Errorf("CLUSTER HELP = %q, want REPLICAS listed and not SLAVES", help)
			}
		})
	}
	// go-redis's parsers.
	ctx := context.Background()
	c := redis.NewClient(&redis.Options{Addr: nodes[0].addr})
	t.Cleanup(func() { c.Close() })
	slots, err := c.ClusterSlots(ctx).Result()
	if err != nil || len(slots) != 3 || len(slots[0].Nodes) != 3 || slots[0].Nodes[2].Addr != nodes[4].addr || slots[0].Nodes[2].ID != m.Nodes[4].ID {
		t.Errorf("ClusterSlots = %+v, %v", slots, err)
	}
	shards, err := c.ClusterShards(ctx).Result()
	if err != nil || len(shards) != 3 || len(shards[2].Nodes) != 2 || shards[2].Nodes[1].Role != "replica" || shards[2].Nodes[1].ID != m.Nodes[5].ID {
		t.Errorf("ClusterShards = %+v, %v", shards, err)
	}
	if reps, err := c.ClusterSlaves(ctx, m.Nodes[2].ID).Result(); err != nil || len(reps) != 1 || !strings.HasPrefix(reps[0], m.Nodes[5].ID+" ") {
		t.Errorf("ClusterSlaves = %q, %v", reps, err)
	}
}

// TestClusterReplicasGoRedis: go-redis's ClusterClient over three
// primaries with a replica each, with ReadOnly, RouteByLatency and
// RouteRandomly: writes go to the primaries (no replica ever redirects
// one), reads reach the replicas (their GET count grows, which the
// stream never adds to) and return the primaries' values.
func TestClusterReplicasGoRedis(t *testing.T) {
	nodes, m := startReplicatedCluster(t)
	ctx := context.Background()
	gets := func(addr string) int {
		info := dialRESP(t, addr).Do("INFO", "commandstats")
		_, rest, ok := strings.Cut(info, "cmdstat_get:calls=")
		if !ok {
			return 0
		}
		n, _ := strconv.Atoi(rest[:strings.IndexByte(rest, ',')])
		return n
	}
	moved := func(addr string) bool {
		return strings.Contains(dialRESP(t, addr).Do("INFO", "errorstats"), "errorstat_MOVED")
	}
	for _, mode := range []string{"ReadOnly", "RouteByLatency", "RouteRandomly"} {
		t.Run(mode, func(t *testing.T) {
			opt := &redis.ClusterOptions{Addrs: []string{nodes[0].addr}, ReadOnly: true}
			switch mode {
			case "RouteByLatency":
				opt.RouteByLatency = true
			case "RouteRandomly":
				opt.RouteRandomly = true
			}
			rdb := redis.NewClusterClient(opt)
			t.Cleanup(func() { rdb.Close() })
			before := make([]int, len(nodes))
			for i, n := range nodes {
				before[i] = gets(n.addr)
			}
			const nkeys = 300
			key := func(i int) string { return mode + ":" + strconv.Itoa(i) }
			for i := range nkeys {
				if err := rdb.Set(ctx, key(i), i, 0).Err(); err != nil {
					t.Fatal(err)
				}
			}
			// Every key on its slot's primary and that primary's replica
			// only, once replicated: a key written after them reaches each
			// replica last.
			for i := range 3 {
				k := keyOn(m, m.Nodes[i], mode+":last:")
				dialRESP(t, nodes[i].addr).Expect(multibulk("SET", k, "1"), "+OK\r\n")
				r := dialRESP(t, nodes[i+3].addr)
				r.Do("READONLY")
				waitReply(t, r, []string{"GET", k}, bulk("1"))
			}
			for i := range nkeys {
				owner := m.Owner(cluster.KeySlot([]byte(key(i))))
				for j, n := range m.Nodes {
					want := n == owner || n.Primary == owner
					if _, got := nodes[j].store.Peek([]byte(key(i))); got != want {
						t.Errorf("key %s on %s: %v, want %v", key(i), n.Name, got, want)
					}
				}
			}
			// Reads, several rounds so that random and latency routing
			// reach the replicas too.
			for round := range 5 {
				for i := range nkeys {
					v, err := rdb.Get(ctx, key(i)).Result()
					if err != nil || v != strconv.Itoa(i) {
						t.Fatalf("round %d: GET %s = %q, %v", round, key(i), v, err)
					}
				}
			}
			replicaGets, primaryGets := 0, 0
			for i, n := range nodes {
				d := gets(n.addr) - before[i]
				if m.Nodes[i].IsReplica() {
					replicaGets += d
				} else {
					primaryGets += d
				}
			}
			t.Logf("%s: GETs on the replicas %d, on the primaries %d", mode, replicaGets, primaryGets)
			// Latency routing picks the node that answered fastest, which
			// may be any of a shard's two on one machine: only the other
			// modes must have reached the replicas.
			if replicaGets == 0 && mode != "RouteByLatency" {
				t.Errorf("%s: no read reached a replica", mode)
			}
			// The client knows the replicas as read candidates, in every mode.
			var mu sync.Mutex
			seen := map[string]bool{}
			if err := rdb.ForEachSlave(ctx, func(ctx context.Context, c *redis.Client) error {
				mu.Lock()
				defer mu.Unlock()
				seen[c.Options().Addr] = true
				return c.Ping(ctx).Err()
			}); err != nil {
				t.Error(err)
			}
			for i := 3; i < 6; i++ {
				if !seen[nodes[i].addr] {
					t.Errorf("%s: go-redis does not know %s (%s) as a replica: %v", mode, m.Nodes[i].Name, nodes[i].addr, seen)
				}
			}
			if len(seen) != 3 {
				t.Errorf("%s: go-redis's replicas %v, want n3 to n5's", mode, seen)
			}
			if mode == "ReadOnly" && primaryGets != 0 {
				t.Errorf("ReadOnly: %d reads reached a primary, want all on the replicas", primaryGets)
			}
			for i, n := range nodes {
				if moved(n.addr) {
					t.Errorf("%s answered MOVED: a command went to the wrong node", m.Nodes[i].Name)
				}
			}
		})
	}
}

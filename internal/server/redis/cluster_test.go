package redis

import (
	"context"
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/minikv/minikv/internal/cluster"
	"github.com/minikv/minikv/internal/server"
	"github.com/minikv/minikv/internal/server/servertest"
	"github.com/minikv/minikv/internal/store"
)

// clusterNode is one in-process MiniKV of a test cluster.
type clusterNode struct {
	name  string
	addr  string // its RESP port
	port  int
	store *store.Store
	node  *cluster.Node
	p     *Protocol
}

// startCluster starts one MiniKV per slot range list (each on its own
// store and 127.0.0.1 port, RESP only) in cluster mode over one slot map,
// nodes named n0, n1, ... in that order. A "range list" of "replicaof nK"
// makes that node a replica of nK, replicating it as the command's
// start-up does. The listeners are opened first, so the map names the
// real ports: no port is guessed. Everything stops when the test ends.
func startCluster(t testing.TB, cfg server.Config, ranges ...string) ([]*clusterNode, *cluster.Map) {
	t.Helper()
	if len(ranges) == 0 {
		ranges = []string{"0-5460", "5461-10922", "10923-16383"} // redis-cli --cluster create's split
	}
	var conf strings.Builder
	lns := make([]net.Listener, len(ranges))
	for i, r := range ranges {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ln.Close() })
		lns[i] = ln
		fmt.Fprintf(&conf, "n%d %s %s\n", i, ln.Addr(), r)
	}
	m, err := cluster.Parse("test.conf", strings.NewReader(conf.String()))
	if err != nil {
		t.Fatal(err)
	}
	nodes := make([]*clusterNode, len(ranges))
	for i, ln := range lns {
		s := servertest.Start(t, cfg, store.Config{})
		p, err := NewCluster(s.Server, ClusterConfig{Map: m, Self: m.Nodes[i]})
		if err != nil {
			t.Fatal(err)
		}
		s.Serve(ln, p)
		nodes[i] = &clusterNode{name: m.Nodes[i].Name, addr: ln.Addr().String(), port: m.Nodes[i].Port, store: s.Store, node: m.Nodes[i], p: p}
		if pr := m.Nodes[i].Primary; pr != nil {
			p.SetReplicaPort(m.Nodes[i].Port)
			p.Replicate(pr.Host, pr.Port)
			t.Cleanup(p.promote) // ends the link before the server stops (cleanups run last first)
		}
	}
	return nodes, m
}

// keyOn returns a key named prefix+N whose slot node owns.
func keyOn(m *cluster.Map, node *cluster.Node, prefix string) string {
	for i := 0; ; i++ {
		k := prefix + strconv.Itoa(i)
		if m.Owner(cluster.KeySlot([]byte(k))) == node {
			return k
		}
	}
}

// tagOf is key as a hash tag: "{key}", which shares key's slot.
func tagOf(key string) string { return "{" + key + "}" }

func bulk(s string) string { return "$" + strconv.Itoa(len(s)) + "\r\n" + s + "\r\n" }

// TestClusterTopologyReplies checks CLUSTER SLOTS, SHARDS, NODES, INFO,
// MYID, KEYSLOT and HELP byte for byte, in RESP2 and RESP3, in the shapes
// of Redis 7.0.15 (captured from a three-node redis-server cluster; the
// differential test compares a one-node cluster live).
func TestClusterTopologyReplies(t *testing.T) {
	nodes, m := startCluster(t, server.Config{}, "0-5460", "5461-10922", "10923-16000 16001-16383")
	for _, resp3 := range []bool{false, true} {
		t.Run(fmt.Sprintf("resp3=%v", resp3), func(t *testing.T) {
			c := dialRESP(t, nodes[1].addr)
			mapHdr, emptyMap := func(n int) string { return "*" + strconv.Itoa(2*n) + "\r\n" }, "*0\r\n"
			verbatim := func(s string) string { return bulk(s) }
			if resp3 {
				if got := c.Do("HELLO", "3"); !strings.Contains(got, bulk("mode")+bulk("cluster")) {
					t.Fatalf("HELLO 3 = %q, want mode cluster", got)
				}
				mapHdr, emptyMap = func(n int) string { return "%" + strconv.Itoa(n) + "\r\n" }, "%0\r\n"
				verbatim = func(s string) string { return "=" + strconv.Itoa(len(s)+4) + "\r\ntxt:" + s + "\r\n" }
			}

			var slots strings.Builder
			slots.WriteString("*3\r\n")
			for _, n := range m.Nodes {
				r := n.Ranges[0]
				fmt.Fprintf(&slots, "*3\r\n:%d\r\n:%d\r\n*4\r\n%s:%d\r\n%s%s", r.First, r.Last, bulk("127.0.0.1"), n.Port, bulk(n.ID), emptyMap)
			}
			if got := c.Do("CLUSTER", "SLOTS"); got != slots.String() {
				t.Errorf("CLUSTER SLOTS = %q, want %q", got, slots.String())
			}

			var shards strings.Builder
			shards.WriteString("*3\r\n")
			for _, n := range m.Nodes {
				r := n.Ranges[0]
				fmt.Fprintf(&shards, "%s%s*2\r\n:%d\r\n:%d\r\n%s*1\r\n%s", mapHdr(2), bulk("slots"), r.First, r.Last, bulk("nodes"), mapHdr(7))
				fmt.Fprintf(&shards, "%s%s%s:%d\r\n%s%s%s%s%s%s%s:0\r\n%s%s", bulk("id"), bulk(n.ID), bulk("port"), n.Port,
					bulk("ip"), bulk("127.0.0.1"), bulk("endpoint"), bulk("127.0.0.1"), bulk("role"), bulk("master"),
					bulk("replication-offset"), bulk("health"), bulk("online"))
			}
			if got := c.Do("CLUSTER", "SHARDS"); got != shards.String() {
				t.Errorf("CLUSTER SHARDS = %q, want %q", got, shards.String())
			}

			nodesText := fmt.Sprintf("%s %s@0 master - 0 0 1 connected 0-5460\n"+
				"%s %s@0 myself,master - 0 0 2 connected 5461-10922\n"+
				"%s %s@0 master - 0 0 3 connected 10923-16383\n",
				m.Nodes[0].ID, nodes[0].addr, m.Nodes[1].ID, nodes[1].addr, m.Nodes[2].ID, nodes[2].addr)
			if got := c.Do("CLUSTER", "NODES"); got != verbatim(nodesText) {
				t.Errorf("CLUSTER NODES = %q, want %q", got, verbatim(nodesText))
			}

			info := "cluster_state:ok\r\ncluster_slots_assigned:16384\r\ncluster_slots_ok:16384\r\ncluster_slots_pfail:0\r\n" +
				"cluster_slots_fail:0\r\ncluster_known_nodes:3\r\ncluster_size:3\r\ncluster_current_epoch:3\r\ncluster_my_epoch:2\r\n" +
				"cluster_stats_messages_sent:0\r\ncluster_stats_messages_received:0\r\ntotal_cluster_links_buffer_limit_exceeded:0\r\n"
			if got := c.Do("CLUSTER", "INFO"); got != verbatim(info) {
				t.Errorf("CLUSTER INFO = %q, want %q", got, verbatim(info))
			}

			c.Expect(multibulk("CLUSTER", "MYID"), bulk(cluster.NodeID("n1")))
			c.Expect(multibulk("cluster", "keyslot", "{user1}.a"), ":8106\r\n")
			c.Expect(multibulk("CLUSTER", "KEYSLOT", "foo"), ":12182\r\n")
			help := c.Do("CLUSTER", "HELP")
			for _, want := range []string{"+CLUSTER <subcommand> [<arg> [value] [opt] ...]. Subcommands are:\r\n",
				"+COUNTKEYSINSLOT <slot>\r\n+    Return the number of keys in <slot>.\r\n", "+SHARDS\r\n", "+HELP\r\n+    Print this help.\r\n"} {
				if !strings.Contains(help, want) {
					t.Errorf("CLUSTER HELP = %q, want it to hold %q", help, want)
				}
			}
		})
	}
}

// TestClusterRedirects checks MOVED, CROSSSLOT and the key specs they
// follow, against Redis 7.0's order of checks.
func TestClusterRedirects(t *testing.T) {
	nodes, m := startCluster(t, server.Config{})
	c := dialRESP(t, nodes[0].addr)
	n0, n1, n2 := m.Nodes[0], m.Nodes[1], m.Nodes[2]
	local, remote := keyOn(m, n0, "k"), keyOn(m, n2, "k")
	moved := func(key string, to *cluster.Node) string {
		return "-MOVED " + strconv.Itoa(cluster.KeySlot([]byte(key))) + " " + to.Addr + "\r\n"
	}
	cross := "-" + errCrossSlot + "\r\n"

	c.Expect(multibulk("SET", local, "v"), "+OK\r\n")
	c.Expect(multibulk("GET", local), "$1\r\nv\r\n")
	c.Expect(multibulk("SET", remote, "v"), moved(remote, n2))
	c.Expect(multibulk("GET", "foo"), "-MOVED 12182 "+nodes[2].addr+"\r\n")
	c.Expect(multibulk("GET", "{user1}.a"), moved("{user1}.a", n1)) // slot 8106
	// Any command with a key spec in the table, collections too.
	c.Expect(multibulk("HSET", remote, "f", "v"), moved(remote, n2))
	c.Expect(multibulk("HSET", tagOf(local)+"h", "f", "v"), ":1\r\n")

	// Multi-key commands: every key at its spec's positions must hash to
	// one slot, checked before ownership.
	tag := "{" + keyOn(m, n0, "t") + "}"
	c.Expect(multibulk("MSET", tag+"a", "1", tag+"b", "2"), "+OK\r\n") // values are not keys (step 2)
	c.Expect(multibulk("MGET", tag+"a", tag+"b", tag+"a"), "*3\r\n$1\r\n1\r\n$1\r\n2\r\n$1\r\n1\r\n")
	c.Expect(multibulk("MGET", tag+"a", remote), cross)
	c.Expect(multibulk("MGET", remote, local), cross)
	c.Expect(multibulk("MSET", local, "1", remote, "2"), cross)
	c.Expect(multibulk("DEL", local, remote), cross)
	c.Expect(multibulk("EXISTS", remote, remote), moved(remote, n2))
	rtag := "{" + keyOn(m, n1, "t") + "}"
	c.Expect(multibulk("MGET", rtag+"a", rtag+"b"), moved(rtag, n1))
	c.Expect(multibulk("MSETNX", rtag+"a", "1", rtag+"b", "2"), moved(rtag, n1))

	// Unknown command, arity and auth come first; keyless commands run
	// locally.
	c.Expect(multibulk("GET"), "-ERR wrong number of arguments for 'get' command\r\n")
	c.Expect(multibulk("GET", remote, "x"), "-ERR wrong number of arguments for 'get' command\r\n")
	c.Expect(multibulk("PING"), "+PONG\r\n")
	c.Expect(multibulk("DBSIZE"), ":4\r\n")
	c.Expect(multibulk("ECHO", remote), bulk(remote))

	// SELECT, READONLY, READWRITE, ASKING as in a cluster Redis.
	c.Expect(multibulk("SELECT", "0"), "+OK\r\n")
	c.Expect(multibulk("SELECT", "1"), "-ERR SELECT is not allowed in cluster mode\r\n")
	c.Expect(multibulk("SELECT", "x"), "-"+errNotInt+"\r\n")
	c.Expect(multibulk("MOVE", local, "1"), "-ERR MOVE is not allowed in cluster mode\r\n")
	c.Expect(multibulk("SWAPDB", "0", "1"), "-ERR SWAPDB is not allowed in cluster mode\r\n")
	c.Expect(multibulk("COPY", local, local, "DB", "1"), "-ERR Copying to another database is not allowed in cluster mode\r\n")
	for _, cmd := range []string{"READONLY", "READWRITE", "ASKING"} {
		c.Expect(multibulk(cmd), "+OK\r\n")
	}
	c.Expect(multibulk("READONLY", "x"), "-ERR wrong number of arguments for 'readonly' command\r\n")

	// INFO and CONFIG say cluster mode is on.
	for _, tc := range [][2]string{{"INFO server", "redis_mode:cluster\r\n"}, {"INFO cluster", "cluster_enabled:1\r\n"}} {
		if got := c.Do(strings.Fields(tc[0])...); !strings.Contains(got, tc[1]) {
			t.Errorf("%s = %q, want %q in it", tc[0], got, tc[1])
		}
	}
	c.Expect(multibulk("CONFIG", "GET", "cluster-enabled"), "*2\r\n"+bulk("cluster-enabled")+bulk("yes"))

	// Auth before redirection, as Redis: an unauthenticated client learns
	// nothing about the topology from MOVED.
	auth, am := startCluster(t, server.Config{AuthToken: []byte("secret")})
	ac := dialRESP(t, auth[0].addr)
	ac.Expect(multibulk("GET", keyOn(am, am.Nodes[2], "k")), "-NOAUTH Authentication required.\r\n")
	ac.Expect(multibulk("CLUSTER", "SLOTS"), "-NOAUTH Authentication required.\r\n")
}

// TestClusterKeysInSlot checks COUNTKEYSINSLOT and GETKEYSINSLOT, which
// walk the node's keys, and their errors (Redis 7.0's texts).
func TestClusterKeysInSlot(t *testing.T) {
	nodes, m := startCluster(t, server.Config{})
	c := dialRESP(t, nodes[0].addr)
	tag := "{" + keyOn(m, m.Nodes[0], "t") + "}"
	slot := strconv.Itoa(cluster.KeySlot([]byte(tag)))
	keys := []string{tag + "a", tag + "b", tag + "c"}
	for _, k := range keys {
		c.Expect(multibulk("SET", k, "v"), "+OK\r\n")
	}
	c.Expect(multibulk("SET", keyOn(m, m.Nodes[0], "other"), "v"), "+OK\r\n")
	c.Expect(multibulk("CLUSTER", "COUNTKEYSINSLOT", slot), ":3\r\n")
	c.Expect(multibulk("CLUSTER", "COUNTKEYSINSLOT", "0"), ":0\r\n")
	c.Expect(multibulk("CLUSTER", "COUNTKEYSINSLOT", "16383"), ":0\r\n") // another node's: this node has none
	c.Expect(multibulk("CLUSTER", "GETKEYSINSLOT", slot, "0"), "*0\r\n")
	if got := c.Do("CLUSTER", "GETKEYSINSLOT", slot, "2"); !strings.HasPrefix(got, "*2\r\n") {
		t.Errorf("GETKEYSINSLOT %s 2 = %q, want 2 keys", slot, got)
	}
	got := c.Do("CLUSTER", "GETKEYSINSLOT", slot, "10")
	var elems []string
	for _, e := range strings.Split(got, "\r\n")[1:] {
		if e != "" && e[0] != '$' {
			elems = append(elems, e)
		}
	}
	slices.Sort(elems)
	if !strings.HasPrefix(got, "*3\r\n") || !slices.Equal(elems, keys) {
		t.Errorf("GETKEYSINSLOT %s 10 = %q, want %v", slot, got, keys)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"COUNTKEYSINSLOT", "16384"}, "-ERR Invalid slot\r\n"},
		{[]string{"COUNTKEYSINSLOT", "-1"}, "-ERR Invalid slot\r\n"},
		{[]string{"COUNTKEYSINSLOT", "x"}, "-" + errNotInt + "\r\n"},
		{[]string{"COUNTKEYSINSLOT"}, "-ERR wrong number of arguments for 'cluster|countkeysinslot' command\r\n"},
		{[]string{"GETKEYSINSLOT", "16384", "1"}, "-ERR Invalid slot or number of keys\r\n"},
		{[]string{"GETKEYSINSLOT", "1", "-1"}, "-ERR Invalid slot or number of keys\r\n"},
		{[]string{"GETKEYSINSLOT", "x", "-1"}, "-" + errNotInt + "\r\n"},
		{[]string{"GETKEYSINSLOT", "1", "x"}, "-" + errNotInt + "\r\n"},
		{[]string{"GETKEYSINSLOT", "1"}, "-ERR wrong number of arguments for 'cluster|getkeysinslot' command\r\n"},
		{[]string{"KEYSLOT"}, "-ERR wrong number of arguments for 'cluster|keyslot' command\r\n"},
		{[]string{"KEYSLOT", "a", "b"}, "-ERR wrong number of arguments for 'cluster|keyslot' command\r\n"},
		{[]string{"INFO", "x"}, "-ERR wrong number of arguments for 'cluster|info' command\r\n"},
		{[]string{"FOO"}, "-ERR unknown subcommand 'FOO'. Try CLUSTER HELP.\r\n"},
	} {
		c.Expect(multibulk(append([]string{"CLUSTER"}, tc.args...)...), tc.want)
	}
}

// TestClusterDisabled: without --cluster-config MiniKV answers the
// cluster commands as a redis-server started without cluster-enabled.
func TestClusterDisabled(t *testing.T) {
	rs := startRESP(t, server.Config{}, store.Config{})
	c := dialRESP(t, rs.respAddr)
	off := "-" + errClusterDisabled + "\r\n"
	for _, args := range [][]string{{"CLUSTER", "INFO"}, {"CLUSTER", "HELP"}, {"CLUSTER", "SLOTS"}, {"CLUSTER", "SHARDS"},
		{"CLUSTER", "NODES"}, {"CLUSTER", "MYID"}, {"CLUSTER", "KEYSLOT", "a"}, {"CLUSTER", "COUNTKEYSINSLOT", "1"},
		{"CLUSTER", "GETKEYSINSLOT", "1", "1"}, {"READONLY"}, {"READWRITE"}, {"ASKING"}} {
		c.Expect(multibulk(args...), off)
	}
	c.Expect(multibulk("CLUSTER", "FOO"), "-ERR unknown subcommand 'FOO'. Try CLUSTER HELP.\r\n")
	c.Expect(multibulk("CLUSTER"), "-ERR wrong number of arguments for 'cluster' command\r\n")
	c.Expect(multibulk("CLUSTER", "INFO", "x"), "-ERR wrong number of arguments for 'cluster|info' command\r\n")
	c.Expect(multibulk("SELECT", "16"), "-ERR DB index is out of range\r\n")
	c.Expect(multibulk("MGET", "a", "b"), "*2\r\n$-1\r\n$-1\r\n")
}

// TestClusterGoRedis runs go-redis's ClusterClient, given one node's
// address, against three nodes: every key reachable and stored on the
// node that owns its slot, MGET with hash tags, CROSSSLOT without, MOVED
// followed, and go-redis's parsers of the CLUSTER replies.
func TestClusterGoRedis(t *testing.T) {
	nodes, m := startCluster(t, server.Config{})
	ctx := context.Background()
	for _, proto := range []int{2, 3} {
		t.Run(fmt.Sprintf("resp%d", proto), func(t *testing.T) {
			rdb := redis.NewClusterClient(&redis.ClusterOptions{Addrs: []string{nodes[0].addr}, Protocol: proto})
			t.Cleanup(func() { rdb.Close() })
			prefix := fmt.Sprintf("p%d:", proto)
			checkPlacement(t, ctx, rdb, nodes, m, prefix, 600)

			tagged := make([]string, 10)
			for i := range tagged {
				tagged[i] = fmt.Sprintf("{%suser1}.%d", prefix, i)
				if err := rdb.Set(ctx, tagged[i], "t"+strconv.Itoa(i), 0).Err(); err != nil {
					t.Fatal(err)
				}
			}
			vals, err := rdb.MGet(ctx, tagged...).Result()
			if err != nil || len(vals) != len(tagged) || vals[0] != "t0" || vals[9] != "t9" {
				t.Errorf("MGET with a hash tag = %v, %v", vals, err)
			}
			if n, err := rdb.Del(ctx, tagged...).Result(); err != nil || n != 10 {
				t.Errorf("DEL with a hash tag = %d, %v", n, err)
			}

			// Without routing policies (MiniKV's COMMAND reports no request
			// policy tips, so go-redis would not split MGET anyway), MGET
			// of keys in different slots reaches one node, which refuses it.
			strict := redis.NewClusterClient(&redis.ClusterOptions{Addrs: []string{nodes[0].addr}, Protocol: proto, DisableRoutingPolicies: true})
			t.Cleanup(func() { strict.Close() })
			if _, err := strict.MGet(ctx, prefix+"a", prefix+"b").Result(); err == nil || err.Error() != errCrossSlot {
				t.Errorf("MGET across slots: err %v, want %q", err, errCrossSlot)
			}
		})
	}

	// MOVED followed: a client whose slot map puts every slot on n0 sends
	// every command there, and reaches the right node only by following
	// the MOVED replies.
	t.Run("moved", func(t *testing.T) {
		var asked atomic.Int32 // go-redis loads the map from its own goroutine
		rdb := redis.NewClusterClient(&redis.ClusterOptions{
			ClusterSlots: func(context.Context) ([]redis.ClusterSlot, error) {
				asked.Add(1)
				return []redis.ClusterSlot{{Start: 0, End: cluster.Slots - 1, Nodes: []redis.ClusterNode{{Addr: nodes[0].addr}}}}, nil
			},
			MaxRedirects: 3,
		})
		t.Cleanup(func() { rdb.Close() })
		checkPlacement(t, ctx, rdb, nodes, m, "moved:", 300)
		if asked.Load() == 0 {
			t.Error("the client never loaded its (wrong) slot map")
		}
	})

	// go-redis's parsers of the CLUSTER replies, on a plain client.
	for _, proto := range []int{2, 3} {
		c := redis.NewClient(&redis.Options{Addr: nodes[2].addr, Protocol: proto})
		t.Cleanup(func() { c.Close() })
		slots, err := c.ClusterSlots(ctx).Result()
		if err != nil || len(slots) != 3 || slots[2].Start != 10923 || slots[2].End != 16383 ||
			slots[2].Nodes[0].Addr != nodes[2].addr || slots[2].Nodes[0].ID != m.Nodes[2].ID {
			t.Errorf("resp%d: ClusterSlots = %+v, %v", proto, slots, err)
		}
		shards, err := c.ClusterShards(ctx).Result()
		if err != nil || len(shards) != 3 || len(shards[1].Slots) != 1 || shards[1].Slots[0].Start != 5461 ||
			shards[1].Nodes[0].ID != m.Nodes[1].ID || shards[1].Nodes[0].Port != int64(nodes[1].port) ||
			shards[1].Nodes[0].Endpoint != "127.0.0.1" || shards[1].Nodes[0].Role != "master" || shards[1].Nodes[0].Health != "online" {
			t.Errorf("resp%d: ClusterShards = %+v, %v", proto, shards, err)
		}
		if id, err := c.ClusterMyID(ctx).Result(); err != nil || id != m.Nodes[2].ID {
			t.Errorf("resp%d: ClusterMyID = %q, %v", proto, id, err)
		}
		if s, err := c.ClusterKeySlot(ctx, "{user1}.a").Result(); err != nil || s != 8106 {
			t.Errorf("resp%d: ClusterKeySlot = %d, %v", proto, s, err)
		}
		if info, err := c.ClusterInfo(ctx).Result(); err != nil || !strings.HasPrefix(info, "cluster_state:ok\r\n") {
			t.Errorf("resp%d: ClusterInfo = %q, %v", proto, info, err)
		}
		if text, err := c.ClusterNodes(ctx).Result(); err != nil || strings.Count(text, "\n") != 3 || !strings.Contains(text, "myself,master") {
			t.Errorf("resp%d: ClusterNodes = %q, %v", proto, text, err)
		}
	}
}

// checkPlacement writes n keys through rdb, reads each back, and checks
// that each is stored on the node that owns its slot and nowhere else,
// and that every node got some.
func checkPlacement(t *testing.T, ctx context.Context, rdb *redis.ClusterClient, nodes []*clusterNode, m *cluster.Map, prefix string, n int) {
	t.Helper()
	perNode := make([]int, len(nodes))
	for i := range n {
		k := prefix + strconv.Itoa(i)
		if err := rdb.Set(ctx, k, "v"+strconv.Itoa(i), 0).Err(); err != nil {
			t.Fatalf("SET %s: %v", k, err)
		}
		if v, err := rdb.Get(ctx, k).Result(); err != nil || v != "v"+strconv.Itoa(i) {
			t.Fatalf("GET %s = %q, %v", k, v, err)
		}
		owner := m.OwnerIndex(cluster.KeySlot([]byte(k)))
		for j, node := range nodes {
			if _, ok := node.store.Peek([]byte(k)); ok != (j == owner) {
				t.Fatalf("key %s (slot %d, owner %s): on %s = %v", k, cluster.KeySlot([]byte(k)), nodes[owner].name, node.name, ok)
			}
		}
		perNode[owner]++
	}
	for j, c := range perNode {
		if c == 0 {
			t.Errorf("node %s got none of %d keys", nodes[j].name, n)
		}
	}
}

// TestClusterZeroAllocs guards the cluster check on the hot path: GET,
// SET and a hash-tagged MGET on the node that owns the keys allocate
// nothing per request, as without cluster mode.
func TestClusterZeroAllocs(t *testing.T) {
	nodes, _ := startCluster(t, server.Config{}, "0-16383")
	nc, err := net.Dial("tcp", nodes[0].addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	var batch strings.Builder
	for i := range 16 {
		k := fmt.Sprintf("{hot}:%02d", i)
		batch.WriteString(multibulk("SET", k, "value-of-32-bytes-xxxxxxxxxxxxxx"))
		batch.WriteString(multibulk("GET", k))
		batch.WriteString(multibulk("MGET", k, "{hot}:00", "{hot}:01"))
	}
	batch.WriteString(multibulk("ECHO", "end-of-batch"))
	req, end := []byte(batch.String()), []byte("$12\r\nend-of-batch\r\n")
	buf := make([]byte, 64<<10)
	round := func() {
		if _, err := nc.Write(req); err != nil {
			t.Fatal(err)
		}
		n := 0
		for n < len(end) || string(buf[n-len(end):n]) != string(end) {
			m, err := nc.Read(buf[n:])
			if err != nil {
				t.Fatal(err)
			}
			n += m
		}
		if strings.Contains(string(buf[:n]), "-") && strings.Contains(string(buf[:n]), "MOVED") {
			t.Fatalf("redirected: %q", buf[:n])
		}
	}
	for range 50 {
		round()
	}
	if allocs := testing.AllocsPerRun(200, round) / (3*16 + 1); allocs > 0.05 {
		t.Errorf("%.3f allocs per request in cluster mode, want 0", allocs)
	}
}

package redis

import (
	"context"
	"fmt"
	"net"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// startRedisReplicatedCluster builds a Redis Cluster of six redis-server
// processes the way an operator does by hand: CLUSTER ADDSLOTSRANGE on
// three primaries with sixNodes' split, CLUSTER MEET, then CLUSTER
// REPLICATE, node 3+i a replica of node i, and waits until every node
// sees all six, three of them replicas, and the cluster is ok.
func startRedisReplicatedCluster(t *testing.T) []string {
	t.Helper()
	addrs := make([]string, 6)
	for i := range addrs {
		addrs[i] = startRedisServer(t, "--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf")
	}
	c0 := dialRESP(t, addrs[0])
	for i, r := range [][2]string{{"0", "5460"}, {"5461", "10922"}, {"10923", "16383"}} {
		dialRESP(t, addrs[i]).Expect(multibulk("CLUSTER", "ADDSLOTSRANGE", r[0], r[1]), "+OK\r\n")
	}
	for _, a := range addrs[1:] {
		host, port, _ := net.SplitHostPort(a)
		bus := strings.Split(dialRESP(t, a).Do("CONFIG", "GET", "cluster-port"), "\r\n")[4]
		c0.Expect(multibulk("CLUSTER", "MEET", host, port, bus), "+OK\r\n")
	}
	ids := make([]string, 6)
	for i, a := range addrs {
		ids[i] = strings.Split(dialRESP(t, a).Do("CLUSTER", "MYID"), "\r\n")[1]
	}
	// A node can replicate a primary only once it knows it.
	for i := 3; i < 6; i++ {
		c := dialRESP(t, addrs[i])
		for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(50 * time.Millisecond) {
			if got := c.Do("CLUSTER", "REPLICATE", ids[i-3]); got == "+OK\r\n" {
				break
			} else if time.Now().After(deadline) {
				t.Fatalf("CLUSTER REPLICATE on %s: %q", addrs[i], got)
			}
		}
	}
	for _, a := range addrs {
		c := dialRESP(t, a)
		for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(50 * time.Millisecond) {
			nodes := nodesPayload(c.Do("CLUSTER", "NODES"))
			info := c.Do("CLUSTER", "INFO")
			if strings.Count(nodes, " connected") == 6 && strings.Count(nodes, "slave") == 3 &&
				!strings.Contains(nodes, "handshake") && !strings.Contains(nodes, "fail") && !strings.Contains(nodes, "noaddr") &&
				strings.Contains(info, "cluster_state:ok") && strings.Count(c.Do("CLUSTER", "SLOTS"), "*4\r\n:") == 3 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("redis-server %s never saw the whole cluster: %q", a, nodes)
			}
		}
	}
	for i := 3; i < 6; i++ {
		c := dialRESP(t, addrs[i])
		for deadline := time.Now().Add(60 * time.Second); !strings.Contains(c.Do("INFO", "replication"), "master_link_status:up"); time.Sleep(50 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("redis-server replica %s never linked to its primary", addrs[i])
			}
		}
	}
	return addrs
}

// TestClusterReplicaDifferential compares MiniKV's three primaries with a
// replica each with a redis-server cluster of the same shape: CLUSTER
// SLOTS and the replica commands' errors byte for byte, SHARDS as go-redis
// parses it, NODES and REPLICAS field by field, INFO's counts, and a
// replica's redirections with and without READONLY, in RESP2 and RESP3,
// once Redis's node ids, ports and replication offsets (which differ by
// construction) are mapped onto MiniKV's.
func TestClusterReplicaDifferential(t *testing.T) {
	raddrs := startRedisReplicatedCluster(t)
	nodes, m := startReplicatedCluster(t)
	var pairs []string
	rids := make([]string, 6)
	for i, a := range raddrs {
		rids[i] = strings.Split(dialRESP(t, a).Do("CLUSTER", "MYID"), "\r\n")[1]
		_, rport, _ := net.SplitHostPort(a)
		pairs = append(pairs, rids[i], m.Nodes[i].ID, "127.0.0.1:"+rport, nodes[i].addr,
			":"+rport+"\r\n", ":"+strconv.Itoa(m.Nodes[i].Port)+"\r\n")
	}
	mapIDs := strings.NewReplacer(pairs...)
	offset := regexp.MustCompile(`(replication-offset\r\n):\d+`)
	normalize := func(s string) string {
		return offset.ReplaceAllString(mapIDs.Replace(s), "${1}:0")
	}

	k := keyOn(m, m.Nodes[0], "k")
	other := keyOn(m, m.Nodes[1], "o")
	for i, a := range []string{raddrs[0], nodes[0].addr} {
		c := dialRESP(t, a)
		c.Expect(multibulk("SET", k, "v1"), "+OK\r\n")
		c.Expect(multibulk("RPUSH", tagOf(k)+"l", "a", "b"), ":2\r\n")
		r := dialRESP(t, []string{raddrs[3], nodes[3].addr}[i])
		r.Do("READONLY")
		waitReply(t, r, []string{"LLEN", tagOf(k) + "l"}, ":2\r\n")
	}

	for _, resp3 := range []bool{false, true} {
		t.Run(fmt.Sprintf("resp3=%v", resp3), func(t *testing.T) {
			for _, at := range []int{0, 3} { // asked of a primary and of a replica
				rc, mc := dialRESP(t, raddrs[at]), dialRESP(t, nodes[at].addr)
				if resp3 {
					rc.Do("HELLO", "3")
					mc.Do("HELLO", "3")
				}
				for _, args := range [][]string{
					{"CLUSTER", "SLOTS"},
					{"CLUSTER", "REPLICAS", rids[3]}, {"CLUSTER", "SLAVES", rids[5]}, {"CLUSTER", "REPLICAS", "abc"},
					{"CLUSTER", "REPLICAS"}, {"CLUSTER", "SLAVES", "a", "b"},
				} {
					margs := make([]string, len(args))
					for i, a := range args {
						margs[i] = mapIDs.Replace(a)
					}
					if want, got := normalize(rc.Do(args...)), mc.Do(margs...); got != want {
						t.Errorf("node %d %q: MiniKV %q, redis-server (normalized) %q", at, args, got, want)
					}
				}
				// REPLICAS of each primary: one NODES line each.
				for i := range 3 {
					want := normalize(rc.Do("CLUSTER", "REPLICAS", rids[i]))
					got := mc.Do("CLUSTER", "REPLICAS", m.Nodes[i].ID)
					if !strings.HasPrefix(want, "*1\r\n$") || !strings.HasPrefix(got, "*1\r\n$") {
						t.Errorf("node %d: CLUSTER REPLICAS %d: MiniKV %q, redis-server %q", at, i, got, want)
						continue
					}
					compareNodeLines(t, fmt.Sprintf("node %d CLUSTER REPLICAS %d", at, i), nodesPayload(got[4:]), nodesPayload(want[4:]))
				}
				compareNodeLines(t, fmt.Sprintf("node %d CLUSTER NODES", at),
					nodesPayload(mc.Do("CLUSTER", "NODES")), normalize(nodesPayload(rc.Do("CLUSTER", "NODES"))))
				rinfo, minfo := rc.Do("CLUSTER", "INFO"), mc.Do("CLUSTER", "INFO")
				for _, f := range []string{"cluster_state", "cluster_slots_assigned", "cluster_slots_ok", "cluster_known_nodes", "cluster_size"} {
					re := regexp.MustCompile(f + `:\w+`)
					if w, g := re.FindString(rinfo), re.FindString(minfo); w == "" || g != w {
						t.Errorf("node %d CLUSTER INFO: MiniKV %q, redis-server %q", at, g, w)
					}
				}
			}

			// A replica's routing.
			rc, mc := dialRESP(t, raddrs[3]), dialRESP(t, nodes[3].addr)
			if resp3 {
				rc.Do("HELLO", "3")
				mc.Do("HELLO", "3")
			}
			for _, args := range [][]string{
				{"GET", k}, {"SET", k, "x"}, {"MGET", k, other}, {"READWRITE"}, {"READONLY"},
				{"GET", k}, {"GET", other}, {"SET", k, "x"}, {"DEL", k}, {"FLUSHALL"}, {"MGET", k, k}, {"EXISTS", k, other},
				{"LRANGE", tagOf(k) + "l", "0", "-1"}, {"LPUSH", tagOf(k) + "l", "c"},
				{"MULTI"}, {"GET", k}, {"SET", k, "x"}, {"EXEC"},
				{"MULTI"}, {"GET", k}, {"LLEN", tagOf(k) + "l"}, {"EXEC"},
				{"EVAL_RO", "return redis.call('get', KEYS[1])", "1", k},
				{"EVAL", "return redis.call('get', KEYS[1])", "1", k},
				{"EVAL", "return redis.call('get', KEYS[1])", "1", other},
				{"READWRITE"}, {"GET", k}, {"READONLY"}, {"RESET"}, {"GET", k},
			} {
				if want, got := normalize(rc.Do(args...)), mc.Do(args...); got != want {
					t.Errorf("replica %q: MiniKV %q, redis-server (normalized) %q", args, got, want)
				}
			}
		})
	}

	// CLUSTER SHARDS: Redis lists the shards in its node table's order,
	// and (7.2) a shard's nodes in the order it learned they share it,
	// so compare the shards sorted by first slot and their nodes by
	// role, then ID, as go-redis parses them. MiniKV lists a shard's
	// primary first.
	ctx := context.Background()
	for _, proto := range []int{2, 3} {
		shards := func(addr string) []redis.ClusterShard {
			c := redis.NewClient(&redis.Options{Addr: addr, Protocol: proto})
			defer c.Close()
			s, err := c.ClusterShards(ctx).Result()
			if err != nil {
				t.Fatalf("CLUSTER SHARDS of %s: %v", addr, err)
			}
			for i := range s {
				for j := range s[i].Nodes {
					n := &s[i].Nodes[j]
					n.ID = mapIDs.Replace(n.ID)
					if k := slices.Index(raddrs, "127.0.0.1:"+strconv.FormatInt(n.Port, 10)); k >= 0 {
						n.Port = int64(m.Nodes[k].Port)
					}
					n.ReplicationOffset = 0
				}
				slices.SortFunc(s[i].Nodes, func(a, b redis.Node) int {
					if a.Role != b.Role {
						return strings.Compare(a.Role, b.Role) // master before replica
					}
					return strings.Compare(a.ID, b.ID)
				})
			}
			slices.SortFunc(s, func(a, b redis.ClusterShard) int { return int(a.Slots[0].Start - b.Slots[0].Start) })
			return s
		}
		if want, got := shards(raddrs[4]), shards(nodes[4].addr); !reflect.DeepEqual(got, want) {
			t.Errorf("resp%d CLUSTER SHARDS: MiniKV %+v, redis-server (normalized) %+v", proto, got, want)
		}
	}
}

// compareNodeLines compares CLUSTER NODES texts line by line, sorted by
// id: every field but the bus port, the ping and pong times and the
// epoch, which differ by construction; of the epoch, only that a
// replica's is its primary's.
func compareNodeLines(t *testing.T, what, got, want string) {
	t.Helper()
	split := func(s string) [][]string {
		var out [][]string
		for l := range strings.SplitSeq(strings.TrimSpace(s), "\n") {
			out = append(out, strings.Fields(l))
		}
		slices.SortFunc(out, func(a, b []string) int { return strings.Compare(a[0], b[0]) })
		return out
	}
	g, w := split(got), split(want)
	if len(g) != len(w) {
		t.Errorf("%s: MiniKV %q, redis-server %q", what, got, want)
		return
	}
	epochOf := func(lines [][]string, id string) string {
		for _, l := range lines {
			if l[0] == id {
				return l[6]
			}
		}
		return ""
	}
	for i := range g {
		gl, wl := g[i], w[i]
		addr := func(f string) string { a, _, _ := strings.Cut(f, "@"); return a }
		if len(gl) != len(wl) || gl[0] != wl[0] || addr(gl[1]) != addr(wl[1]) || gl[2] != wl[2] || gl[3] != wl[3] ||
			!slices.Equal(gl[7:], wl[7:]) {
			t.Errorf("%s: MiniKV line %q, redis-server %q", what, gl, wl)
		}
		for _, lines := range [][][]string{g, w} {
			l := lines[i]
			if e := epochOf(lines, l[3]); l[3] != "-" && e != "" && l[6] != e { // REPLICAS lists no primary
				t.Errorf("%s: replica %s's epoch %s is not its primary's %s", what, l[0], l[6], epochOf(lines, l[3]))
			}
		}
	}
}

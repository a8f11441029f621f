package redis

import (
	"math/rand/v2"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/minikv/minikv/internal/server"
)

// TestClusterDifferential compares a one-node MiniKV cluster with a
// redis-server started with --cluster-enabled yes that owns every slot:
// CLUSTER KEYSLOT of thousands of random keys full of braces, the
// CROSSSLOT and argument errors, SELECT, READONLY, and the CLUSTER SLOTS,
// SHARDS, INFO and NODES replies, in RESP2 and RESP3, once the node ids,
// ports and epochs (which differ by construction) are mapped onto
// MiniKV's.
func TestClusterDifferential(t *testing.T) {
	redisAddr := startRedisServer(t, "--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf")
	rc := dialRESP(t, redisAddr)
	rc.Expect(multibulk("CLUSTER", "ADDSLOTSRANGE", "0", "16383"), "+OK\r\n")
	// The node moves to cluster_state:ok in its next cron run; keyed
	// commands answer CLUSTERDOWN until then. Poll, with a deadline only
	// for a server that never gets there.
	for deadline := time.Now().Add(30 * time.Second); !strings.Contains(rc.Do("CLUSTER", "INFO"), "cluster_state:ok"); {
		if time.Now().After(deadline) {
			t.Fatalf("redis-server never reached cluster_state:ok: %q", rc.Do("CLUSTER", "INFO"))
		}
		time.Sleep(10 * time.Millisecond)
	}
	nodes, m := startCluster(t, server.Config{}, "0-16383")
	mc := dialRESP(t, nodes[0].addr)

	// KEYSLOT: random keys over a small alphabet rich in braces, pipelined.
	rng := rand.New(rand.NewPCG(18, 3))
	const nkeys = 3000
	var req strings.Builder
	for i := range nkeys {
		k := make([]byte, rng.IntN(12))
		for j := range k {
			k[j] = "{}ab\x00\xff"[rng.IntN(6)]
		}
		if i%10 == 0 {
			k = []byte(strconv.Itoa(i)) // plain keys too
		}
		req.WriteString(multibulk("CLUSTER", "KEYSLOT", string(k)))
	}
	rc.Send(req.String())
	mc.Send(req.String())
	for i := range nkeys {
		if want, got := rc.Reply(), mc.Reply(); got != want {
			t.Fatalf("CLUSTER KEYSLOT, key %d: MiniKV %q, redis-server %q", i, got, want)
		}
	}

	_, rport, _ := net.SplitHostPort(redisAddr)
	rid := strings.Split(rc.Do("CLUSTER", "MYID"), "\r\n")[1]
	me := m.Nodes[0]
	// normalize maps redis-server's own id, port and address onto
	// MiniKV's: a lone Redis node does not know its own IP, and its
	// config epoch is 0 until one is set, where MiniKV's are the file's.
	normalize := func(cmd, s string) string {
		s = strings.ReplaceAll(s, rid, me.ID)
		s = strings.ReplaceAll(s, ":"+rport+"\r\n", ":"+strconv.Itoa(me.Port)+"\r\n")
		s = strings.ReplaceAll(s, "$0\r\n\r\n", bulk("127.0.0.1"))
		s = strings.ReplaceAll(s, "cluster_current_epoch:0\r\ncluster_my_epoch:0", "cluster_current_epoch:1\r\ncluster_my_epoch:1")
		return s
	}
	sessions := [][]string{
		{"CLUSTER", "SLOTS"}, {"CLUSTER", "SHARDS"}, {"CLUSTER", "INFO"}, {"CLUSTER", "MYID"},
		{"CLUSTER", "KEYSLOT"}, {"CLUSTER", "KEYSLOT", "a", "b"}, {"CLUSTER"}, {"CLUSTER", "INFO", "x"},
		{"CLUSTER", "FOO"}, {"cluster", "help", "x"},
		{"CLUSTER", "COUNTKEYSINSLOT", "16384"}, {"CLUSTER", "COUNTKEYSINSLOT", "-1"}, {"CLUSTER", "COUNTKEYSINSLOT", "x"},
		{"CLUSTER", "GETKEYSINSLOT", "16384", "1"}, {"CLUSTER", "GETKEYSINSLOT", "1", "-1"},
		{"CLUSTER", "GETKEYSINSLOT", "x", "1"}, {"CLUSTER", "GETKEYSINSLOT", "1", "x"}, {"CLUSTER", "GETKEYSINSLOT", "1"},
		{"SELECT", "0"}, {"SELECT", "1"}, {"SELECT", "-1"}, {"SELECT", "x"},
		{"READONLY"}, {"READWRITE"}, {"ASKING"}, {"READONLY", "x"},
		{"MSET", "{d}a", "1", "{d}b", "2"}, {"MGET", "{d}a", "{d}b", "{d}c"}, {"MGET", "a", "b"}, {"MGET", "a", "a"},
		{"MSET", "a", "1", "b", "2"}, {"DEL", "a", "b"}, {"EXISTS", "{d}a", "{d}b", "{d}a"}, {"EXISTS", "{d}a", "d"},
		{"MSETNX", "{d}a", "1", "x", "2"}, {"CLUSTER", "COUNTKEYSINSLOT", "11298"}, // slot of "d"
		{"SET", "{e}x", "1"}, {"CLUSTER", "GETKEYSINSLOT", "15363", "5"}, {"CLUSTER", "GETKEYSINSLOT", "11298", "0"},
		{"DEL", "{d}a", "{d}b", "{e}x"},
	}
	for _, resp3 := range []bool{false, true} {
		if resp3 {
			rc.Do("HELLO", "3")
			mc.Do("HELLO", "3")
		}
		for _, args := range sessions {
			want, got := normalize(args[0], rc.Do(args...)), mc.Do(args...)
			if got != want {
				t.Errorf("resp3=%v %q: MiniKV %q, redis-server (normalized) %q", resp3, args, got, want)
			}
		}
		// CLUSTER NODES, field by field: the address field (a lone Redis
		// node prints ":port@bus") and the epoch differ by construction.
		want := strings.Fields(nodesPayload(rc.Do("CLUSTER", "NODES")))
		got := strings.Fields(nodesPayload(mc.Do("CLUSTER", "NODES")))
		if len(got) != len(want) || got[0] != me.ID || want[0] != rid || got[1] != nodes[0].addr+"@0" || got[6] != "1" {
			t.Errorf("CLUSTER NODES: MiniKV %q, redis-server %q", got, want)
		} else {
			for _, i := range []int{2, 3, 4, 5, 7, 8} {
				if got[i] != want[i] {
					t.Errorf("CLUSTER NODES field %d: MiniKV %q, redis-server %q", i, got[i], want[i])
				}
			}
		}
	}
}

// nodesPayload is the text of a CLUSTER NODES reply, bulk or verbatim.
func nodesPayload(reply string) string {
	_, body, _ := strings.Cut(reply, "\r\n")
	return strings.TrimPrefix(strings.TrimSuffix(body, "\r\n"), "txt:")
}

package redis

import (
	"errors"
	"slices"
	"strconv"
	"strings"

	"github.com/minikv/minikv/internal/cluster"
	"github.com/minikv/minikv/internal/server"
)

// Redis Cluster mode over a static slot map (--cluster-config, package
// cluster): the node answers CLUSTER SLOTS, SHARDS, NODES, REPLICAS,
// INFO, KEYSLOT, MYID, COUNTKEYSINSLOT and GETKEYSINSLOT from the map,
// and refuses a command whose keys it does not own, as Redis 7.0's
// getNodeByQuery does:
//
//	-MOVED <slot> <host>:<port>    the keys' slot belongs to that node
//	-CROSSSLOT Keys in request don't hash to the same slot
//
// A replica of the map (a replicaof line) owns no slots: it replicates
// its primary with the ordinary replication (the caller starts it, as
// --replicaof would) and redirects every keyed command to the slot's
// owner, except the reads of a connection that sent READONLY on its own
// primary's slots, which it serves (READWRITE undoes it).
//
// There is no cluster bus: no gossip, no failover, no resharding, so
// there is never an -ASK or a -TRYAGAIN, and every node is always up.
// Without cluster mode CLUSTER, READONLY, READWRITE and ASKING answer as
// a Redis started without cluster-enabled does.

const (
	errClusterDisabled = "ERR This instance has cluster support disabled"
	errCrossSlot       = "CROSSSLOT Keys in request don't hash to the same slot"
)

// ClusterConfig turns cluster mode on (NewCluster).
type ClusterConfig struct {
	Map  *cluster.Map
	Self *cluster.Node // this node: one of Map.Nodes
	// TLS says clients reach the nodes over TLS, which CLUSTER SHARDS
	// reports as "tls-port" instead of "port", as Redis does with
	// tls-cluster on.
	TLS bool
}

// clusterState is what the RESP port keeps in cluster mode. The map never
// changes, so the text replies are built once.
type clusterState struct {
	m       *cluster.Map
	self    *cluster.Node
	index   int // self's index in m.Nodes
	primary int // a replica's primary's index in m.Nodes; -1 on a primary
	tls     bool
	nodes   []byte // CLUSTER NODES
	info    []byte // CLUSTER INFO
}

// NewCluster returns the Redis protocol for srv's listeners in cluster
// mode: keys whose slot cc.Self does not own are answered with -MOVED.
func NewCluster(srv *server.Server, cc ClusterConfig) (*Protocol, error) {
	if cc.Map == nil {
		return nil, errors.New("redis: cluster mode without a slot map")
	}
	index := slices.Index(cc.Map.Nodes, cc.Self)
	if index < 0 {
		return nil, errors.New("redis: cluster mode: this node is not in the slot map")
	}
	p := New(srv)
	cs := &clusterState{m: cc.Map, self: cc.Self, index: index, primary: slices.Index(cc.Map.Nodes, cc.Self.Primary), tls: cc.TLS}
	cs.nodes = cs.nodesText()
	cs.info = cs.infoText()
	p.cluster = cs
	return p, nil
}

// routed reports whether this node serves the keys of cmd in argv, at the
// positions of the table's key spec. When it does not, it has written the
// redirection: CROSSSLOT if the keys hash to different slots, MOVED to the
// slot's owner otherwise. No allocation unless it redirects.
func (rc *conn) routed(cmd *respCommand, argv [][]byte) bool {
	if rc.master {
		return true // the stream of this replica's primary: its keys are served here
	}
	slot := -1
	if cmd.keysOf != nil {
		var buf [8][]byte
		ks, _ := cmd.keysOf(argv, buf[:0])
		for _, k := range ks {
			s := cluster.KeySlot(k)
			if slot >= 0 && s != slot {
				rc.w.Error(errCrossSlot)
				return false
			}
			slot = s
		}
		return rc.ownsSlot(slot, cmd.write)
	}
	last := cmd.lastKey
	if last < 0 {
		last += len(argv)
	}
	for i := cmd.firstKey; i <= last && i < len(argv); i += max(cmd.step, 1) {
		s := cluster.KeySlot(argv[i])
		if slot >= 0 && s != slot {
			rc.w.Error(errCrossSlot)
			return false
		}
		slot = s
	}
	return rc.ownsSlot(slot, cmd.write)
}

// ownsSlot reports whether this node serves slot (-1: no key) to a
// command that writes or not, and answers MOVED if not.
func (rc *conn) ownsSlot(slot int, write bool) bool {
	if rc.p.cluster.serves(slot, write, rc.readOnly) {
		return true
	}
	rc.w.Error("MOVED " + strconv.Itoa(slot) + " " + rc.p.cluster.m.Owner(slot).Addr)
	return false
}

// serves reports whether this node serves slot (-1: no key) to a command
// that writes or not, from a connection that sent READONLY or not: its
// own slots always; on a replica, the reads of a READONLY connection on
// its primary's slots, as Redis's getNodeByQuery.
func (cs *clusterState) serves(slot int, write, readOnly bool) bool {
	if slot < 0 {
		return true
	}
	o := cs.m.OwnerIndex(slot)
	return o == cs.index || readOnly && !write && o == cs.primary
}

// clusterCommands are the table entries of CLUSTER and of the three
// connection commands cluster clients send (table.go adds them).
func clusterCommands() []respCommand {
	fast := []string{"loading", "stale", "fast"}
	help := helpSub("cluster")
	help.run = cmdClusterHelp
	return []respCommand{
		{name: "cluster", arity: -2, group: "cluster", since: "3.0.0", complexity: "Depends on subcommand.",
			summary: "A container for Redis Cluster commands.", subs: []*respCommand{
				sub("cluster|countkeysinslot", 3, "3.0.0", "Returns the number of keys in a hash slot.", "COUNTKEYSINSLOT <slot>",
					"Return the number of keys in <slot>.", cmdClusterCountKeysInSlot, integ("slot")),
				sub("cluster|getkeysinslot", 4, "3.0.0", "Returns the key names in a hash slot.", "GETKEYSINSLOT <slot> <count>",
					"Return key names stored by current node in a slot.", cmdClusterGetKeysInSlot, integ("slot"), integ("count")),
				sub("cluster|info", 2, "3.0.0", "Returns information about the state of a node.", "INFO",
					"Return information about the cluster.", cmdClusterInfo),
				sub("cluster|keyslot", 3, "3.0.0", "Returns the hash slot for a key.", "KEYSLOT <key>",
					"Return the hash slot for <key>.", cmdClusterKeySlot, str("key")),
				sub("cluster|myid", 2, "3.0.0", "Returns the ID of a node.", "MYID",
					"Return the node id.", cmdClusterMyID),
				sub("cluster|myshardid", 2, "7.2.0", "Returns the shard ID of a node.", "MYSHARDID",
					"Return the node's shard id.", cmdClusterMyShardID),
				sub("cluster|nodes", 2, "3.0.0", "Returns the cluster configuration for a node.", "NODES",
					"Return cluster configuration seen by node.", cmdClusterNodes),
				sub("cluster|replicas", 3, "5.0.0", "Lists the replica nodes of a master node.", "REPLICAS <node-id>",
					"Return <node-id> replicas.", cmdClusterReplicas, str("node-id")),
				sub("cluster|shards", 2, "7.0.0", "Returns the mapping of cluster slots to shards.", "SHARDS",
					"Return information about slot range mappings and the nodes associated with them.", cmdClusterShards),
				sub("cluster|slots", 2, "3.0.0", "Returns the mapping of cluster slots to nodes.", "SLOTS",
					"Return information about slots range mappings.", cmdClusterSlots),
				// SLAVES is REPLICAS's old name, which HELP does not list.
				sub("cluster|slaves", 3, "3.0.0", "Lists the replica nodes of a master node.", "", "", cmdClusterReplicas, str("node-id")),
				help,
			}},
		{name: "readonly", arity: 1, flags: fast, group: "cluster", since: "3.0.0", complexity: "O(1)",
			summary: "Enables read-only queries for a connection to a Redis Cluster replica node.", run: cmdReadOnly},
		{name: "readwrite", arity: 1, flags: fast, group: "cluster", since: "3.0.0", complexity: "O(1)",
			summary: "Enables read-write queries for a connection to a Redis Cluster replica node.", run: cmdReadWrite},
		{name: "asking", arity: 1, flags: []string{"fast"}, group: "cluster", since: "3.0.0", complexity: "O(1)",
			summary: "Signals that a cluster client is following an -ASK redirect.", run: cmdClusterOK},
	}
}

// clusterOn returns the cluster state, or writes Redis's error for an
// instance without cluster support and returns nil.
func (rc *conn) clusterOn() *clusterState {
	if rc.p.cluster == nil {
		rc.w.Error(errClusterDisabled)
	}
	return rc.p.cluster
}

// cmdClusterOK is ASKING: every primary owns its slots for good, so no
// slot is ever migrating.
func cmdClusterOK(rc *conn, _ [][]byte) {
	if rc.clusterOn() != nil {
		rc.w.OK()
	}
}

// cmdReadOnly is READONLY: a replica serves this connection's reads of
// its primary's slots (ownsSlot). On a primary it only sets the flag, as
// in Redis.
func cmdReadOnly(rc *conn, _ [][]byte) {
	if rc.clusterOn() != nil {
		rc.readOnly = true
		rc.w.OK()
	}
}

// cmdReadWrite is READWRITE: READONLY undone.
func cmdReadWrite(rc *conn, _ [][]byte) {
	if rc.clusterOn() != nil {
		rc.readOnly = false
		rc.w.OK()
	}
}

func cmdClusterHelp(rc *conn, argv [][]byte) {
	if rc.clusterOn() != nil {
		cmdHelp(rc, argv)
	}
}

func cmdClusterMyID(rc *conn, _ [][]byte) {
	if cs := rc.clusterOn(); cs != nil {
		rc.w.BulkString(cs.self.ID)
	}
}

// cmdClusterMyShardID is CLUSTER MYSHARDID (Redis 7.2): the ID of the
// node's shard, which its primary and replicas share. Redis draws it at
// random; MiniKV derives it from the primary's name in the cluster
// configuration, so every node computes the same one.
func cmdClusterMyShardID(rc *conn, _ [][]byte) {
	if cs := rc.clusterOn(); cs != nil {
		rc.w.BulkString(shardID(cs.self))
	}
}

// shardID is the shard ID of node n's shard.
func shardID(n *cluster.Node) string {
	if n.Primary != nil {
		n = n.Primary
	}
	return cluster.NodeID("shard " + n.Name)
}

func cmdClusterKeySlot(rc *conn, argv [][]byte) {
	if rc.clusterOn() != nil {
		rc.w.Int(int64(cluster.KeySlot(argv[2])))
	}
}

func cmdClusterInfo(rc *conn, _ [][]byte) {
	if cs := rc.clusterOn(); cs != nil {
		rc.w.Verbatim("txt", cs.info)
	}
}

func cmdClusterNodes(rc *conn, _ [][]byte) {
	if cs := rc.clusterOn(); cs != nil {
		rc.w.Verbatim("txt", cs.nodes)
	}
}

// cmdClusterSlots is CLUSTER SLOTS: one entry per run of consecutive
// slots with one owner, in slot order, each [first, last, primary,
// replica ...], a node as [host, port, id, {}], its replicas in file
// order. The map is Redis 7's extra networking metadata, which a static
// map has none of: the host is reported as the file writes it, an IP or
// a DNS name.
func cmdClusterSlots(rc *conn, _ [][]byte) {
	cs := rc.clusterOn()
	if cs == nil {
		return
	}
	runs := cs.m.Runs()
	rc.w.Array(len(runs))
	node := func(n *cluster.Node) {
		rc.w.Array(4)
		rc.w.BulkString(n.Host)
		rc.w.Int(int64(n.Port))
		rc.w.BulkString(n.ID)
		rc.w.Map(0)
	}
	for _, r := range runs {
		rc.w.Array(3 + len(r.Node.Replicas))
		rc.w.Int(int64(r.First))
		rc.w.Int(int64(r.Last))
		node(r.Node)
		for _, rep := range r.Node.Replicas {
			node(rep)
		}
	}
}

// cmdClusterShards is CLUSTER SHARDS: a shard per primary, in file order,
// each its slot ranges as a flat list of first, last pairs, and its nodes,
// the primary then its replicas (Redis 7.0's seven fields each).
func cmdClusterShards(rc *conn, _ [][]byte) {
	cs := rc.clusterOn()
	if cs == nil {
		return
	}
	rc.w.Array(len(cs.m.Primaries))
	for _, n := range cs.m.Primaries {
		rc.w.Map(2)
		rc.w.BulkString("slots")
		rc.w.Array(2 * len(n.Ranges))
		for _, r := range n.Ranges {
			rc.w.Int(int64(r.First))
			rc.w.Int(int64(r.Last))
		}
		rc.w.BulkString("nodes")
		rc.w.Array(1 + len(n.Replicas))
		cs.shardNode(rc, n)
		for _, rep := range n.Replicas {
			cs.shardNode(rc, rep)
		}
	}
}

// shardNode is one node of CLUSTER SHARDS. Its replication offset is 0:
// without a cluster bus a node does not know the others' offsets.
func (cs *clusterState) shardNode(rc *conn, n *cluster.Node) {
	rc.w.Map(7)
	rc.w.BulkString("id")
	rc.w.BulkString(n.ID)
	if cs.tls {
		rc.w.BulkString("tls-port")
	} else {
		rc.w.BulkString("port")
	}
	rc.w.Int(int64(n.Port))
	rc.w.BulkString("ip")
	rc.w.BulkString(n.Host)
	rc.w.BulkString("endpoint")
	rc.w.BulkString(n.Host)
	rc.w.BulkString("role")
	if n.IsReplica() {
		rc.w.BulkString("replica")
	} else {
		rc.w.BulkString("master")
	}
	rc.w.BulkString("replication-offset")
	rc.w.Int(0)
	rc.w.BulkString("health")
	rc.w.BulkString("online")
}

// cmdClusterReplicas is CLUSTER REPLICAS node-id (and SLAVES): the
// CLUSTER NODES line of each replica of that primary, as bulk strings.
func cmdClusterReplicas(rc *conn, argv [][]byte) {
	cs := rc.clusterOn()
	if cs == nil {
		return
	}
	var n *cluster.Node
	for _, c := range cs.m.Nodes {
		if c.ID == string(argv[2]) {
			n = c
			break
		}
	}
	switch {
	case n == nil:
		rc.w.Error("ERR Unknown node " + string(cString(argv[2], 128)))
		return
	case n.IsReplica():
		rc.w.Error("ERR The specified node is not a master")
		return
	}
	rc.w.Array(len(n.Replicas))
	for _, rep := range n.Replicas {
		rc.w.BulkString(cs.nodeLine(rep))
	}
}

// cmdClusterCountKeysInSlot is CLUSTER COUNTKEYSINSLOT slot. The store
// keeps no index by slot, so this walks every key (KEYS's cost, O(N) in
// the keys the node holds; in durable mode a walk over the disk).
func cmdClusterCountKeysInSlot(rc *conn, argv [][]byte) {
	if rc.clusterOn() == nil {
		return
	}
	slot, ok := rc.parseInt(argv[2])
	if !ok {
		return
	}
	if slot < 0 || slot >= cluster.Slots {
		rc.w.Error("ERR Invalid slot")
		return
	}
	n := int64(0)
	err := rc.st.Keys(func(k []byte) {
		if cluster.KeySlot(k) == int(slot) {
			n++
		}
	})
	if err != nil {
		rc.w.Error("ERR " + err.Error())
		return
	}
	rc.w.Int(n)
}

// cmdClusterGetKeysInSlot is CLUSTER GETKEYSINSLOT slot count: up to
// count keys of the slot, in no particular order. Like COUNTKEYSINSLOT it
// walks every key.
func cmdClusterGetKeysInSlot(rc *conn, argv [][]byte) {
	if rc.clusterOn() == nil {
		return
	}
	slot, ok := rc.parseInt(argv[2])
	if !ok {
		return
	}
	count, ok := rc.parseInt(argv[3])
	if !ok {
		return
	}
	if slot < 0 || slot >= cluster.Slots || count < 0 {
		rc.w.Error("ERR Invalid slot or number of keys")
		return
	}
	var keys keyList
	err := rc.st.Keys(func(k []byte) {
		if int64(len(keys.offs)) < count && cluster.KeySlot(k) == int(slot) {
			keys.add(k)
		}
	})
	if err != nil {
		rc.w.Error("ERR " + err.Error())
		return
	}
	keys.write(rc)
}

// nodesText is CLUSTER NODES: a line per node, in file order (nodeLine).
func (cs *clusterState) nodesText() []byte {
	var b strings.Builder
	for _, n := range cs.m.Nodes {
		b.WriteString(cs.nodeLine(n))
		b.WriteByte('\n')
	}
	return []byte(b.String())
}

// nodeLine is n's line of CLUSTER NODES, in Redis's format
//
//	<id> <host>:<port>@<bus port> <flags> <master> <ping sent> <pong received> <epoch> <link> <slot> ...
//
// with bus port 0 (there is no cluster bus), flags master or slave (with
// myself for this node), a replica's primary's id as its master ("-" for
// a primary), every node connected, and ping and pong times 0 (no node
// pings another).
func (cs *clusterState) nodeLine(n *cluster.Node) string {
	flags, master := "master", "-"
	if n.IsReplica() {
		flags, master = "slave", n.Primary.ID
	}
	if n == cs.self {
		flags = "myself," + flags
	}
	var b strings.Builder
	b.WriteString(n.ID + " " + n.Addr + "@0 " + flags + " " + master + " 0 0 " + strconv.Itoa(n.Epoch) + " connected")
	for _, r := range n.Ranges {
		b.WriteString(" " + r.String())
	}
	return b.String()
}

// infoText is CLUSTER INFO: a cluster that is always ok, every slot
// assigned, a shard per primary, and no bus messages.
func (cs *clusterState) infoText() []byte {
	n, size := strconv.Itoa(len(cs.m.Nodes)), strconv.Itoa(len(cs.m.Primaries))
	var b strings.Builder
	for _, f := range [][2]string{
		{"cluster_state", "ok"},
		{"cluster_slots_assigned", strconv.Itoa(cluster.Slots)},
		{"cluster_slots_ok", strconv.Itoa(cluster.Slots)},
		{"cluster_slots_pfail", "0"},
		{"cluster_slots_fail", "0"},
		{"cluster_known_nodes", n},
		{"cluster_size", size},
		{"cluster_current_epoch", size},
		{"cluster_my_epoch", strconv.Itoa(cs.self.Epoch)},
		{"cluster_stats_messages_sent", "0"},
		{"cluster_stats_messages_received", "0"},
		{"total_cluster_links_buffer_limit_exceeded", "0"},
	} {
		b.WriteString(f[0] + ":" + f[1] + "\r\n")
	}
	return []byte(b.String())
}

// redisMode is HELLO's mode and INFO's redis_mode.
func (p *Protocol) redisMode() string {
	if p.cluster != nil {
		return "cluster"
	}
	return "standalone"
}

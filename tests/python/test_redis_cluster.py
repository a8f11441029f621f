"""redis-py's RedisCluster against three MiniKV in Redis Cluster mode.

Three MiniKV processes share one --cluster-config slot map (the split
redis-cli --cluster create makes: 0-5460, 5461-10922, 10923-16383). Node 0
finds its line by its RESP address, nodes 1 and 2 by --cluster-node. The
client is given node 0's address only and learns the rest from CLUSTER
SLOTS. Checked: every key written through the client reads back and sits
on exactly the node that owns its slot (asked of each node directly);
MGET of hash-tagged keys; the server's CROSSSLOT for keys of several
slots; MOVED followed when the client's slot map is wrong; the CLUSTER
replies through redis-py's parsers; RESP2 and RESP3 (redis-py 8's
default, with CLIENT SETINFO). A second cluster adds a replica of each
node (replicaof lines): redis-py's replica load balancing reads from the
replicas, which serve it after READONLY, and writes go to the primaries.

No timing is asserted: start-up polls with a generous deadline.
"""

import subprocess
import time

import pytest
import redis
from redis.cluster import LoadBalancingStrategy, RedisCluster
from redis.exceptions import ClusterCrossSlotError, MovedError

from conftest import MINIKV_BIN, _free_port, _wait_accepting

DEADLINE = 60.0
RANGES = [(0, 5460), (5461, 10922), (10923, 16383)]


def owner(slot):
    for i, (lo, hi) in enumerate(RANGES):
        if lo <= slot <= hi:
            return i
    raise AssertionError(slot)


class Cluster:
    """Three MiniKV in cluster mode, and with replicas a replica of each
    (node-3 of node-0, ...), stopped by PID on close."""

    def __init__(self, tmp, replicas=False):
        self.procs = []
        self.replicas = replicas
        n = 2 * len(RANGES) if replicas else len(RANGES)
        for _ in range(3):  # a free port may be taken before MiniKV binds it
            self.ports = [_free_port() for _ in range(n)]
            if len(set(self.ports)) == len(self.ports) and self._start(tmp):
                return
            self.close()
        pytest.fail("the MiniKV cluster did not start:\n" + self.log())

    def _start(self, tmp):
        conf = tmp / "cluster.conf"
        lines = ["# name  address  slots"]
        lines += [f"node-{i} 127.0.0.1:{port} {lo}-{hi}" for i, (port, (lo, hi)) in enumerate(zip(self.ports, RANGES))]
        lines += [f"node-{i} 127.0.0.1:{port} replicaof node-{i - len(RANGES)}"
                  for i, port in enumerate(self.ports) if i >= len(RANGES)]
        conf.write_text("\n".join(lines) + "\n")
        self.log_paths = []
        for i, port in enumerate(self.ports):
            args = [MINIKV_BIN, "-p", "0", "--resp-port", str(port), "--admin-addr", "", "-l", "127.0.0.1",
                    "-m", "32", "--cluster-config", str(conf)]
            if i > 0:
                args += ["--cluster-node", f"node-{i}"]
            log_path = tmp / f"node-{i}.log"
            self.log_paths.append(log_path)
            with open(log_path, "wb") as log:
                self.procs.append(subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT))
        return all(_wait_accepting(p, port, DEADLINE) for p, port in zip(self.procs, self.ports))

    def log(self):
        return "\n".join(p.read_text(errors="replace") for p in getattr(self, "log_paths", []) if p.exists())

    def node(self, i, **kw):
        return redis.Redis(port=self.ports[i], socket_timeout=5, **kw)

    def close(self):
        for p in self.procs:
            if p.poll() is None:
                p.terminate()
        for p in self.procs:
            try:
                assert p.wait(timeout=10) == 0, f"minikv exited with {p.returncode}:\n{self.log()}"
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
                pytest.fail("minikv did not stop on SIGTERM:\n" + self.log())
        self.procs = []


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    c = Cluster(tmp_path_factory.mktemp("cluster"))
    yield c
    c.close()


@pytest.fixture(params=[2, 3], ids=["resp2", "resp3"])
def rc(request, cluster):
    client = RedisCluster(host="127.0.0.1", port=cluster.ports[0], protocol=request.param, socket_timeout=5)
    yield client
    client.close()


def test_every_key_on_its_owner(cluster, rc):
    prefix = f"p{rc.get_connection_kwargs().get('protocol')}:"
    assert len(rc.get_primaries()) == 3, rc.get_nodes()
    direct = [cluster.node(i) for i in range(3)]
    per_node = [0, 0, 0]
    for i in range(500):
        k = f"{prefix}{i}"
        assert rc.set(k, f"v{i}")
        assert rc.get(k) == f"v{i}".encode()
        slot = rc.keyslot(k)
        want = owner(slot)
        per_node[want] += 1
        for j, d in enumerate(direct):
            assert d.execute_command("CLUSTER", "COUNTKEYSINSLOT", slot) >= (1 if j == want else 0)
        # The owner serves it; the others redirect.
        assert direct[want].get(k) == f"v{i}".encode()
        for j in range(3):
            if j != want:
                with pytest.raises(MovedError) as moved:
                    direct[j].get(k)
                e = moved.value
                assert (e.slot_id, e.host, e.port) == (slot, "127.0.0.1", cluster.ports[want]), str(e)
    assert all(per_node), per_node


def test_mget_with_hash_tags(rc):
    keys = [f"{{user1}}.{i}" for i in range(10)]
    for i, k in enumerate(keys):
        rc.set(k, f"t{i}")
    assert rc.mget(keys) == [f"t{i}".encode() for i in range(10)]
    assert rc.delete(*keys) == 10
    assert rc.mget(keys) == [None] * 10


def test_crossslot(cluster, rc):
    # redis-py refuses an MGET across slots itself; sent to a node anyway,
    # the node answers CROSSSLOT.
    node = rc.get_node(host="127.0.0.1", port=cluster.ports[0])
    with pytest.raises(ClusterCrossSlotError):
        rc.execute_command("MGET", "a", "b", target_nodes=node)
    # redis-py maps the error code CROSSSLOT to ClusterCrossSlotError and
    # keeps the rest of Redis's text.
    with pytest.raises(ClusterCrossSlotError, match="^Keys in request don't hash to the same slot$"):
        cluster.node(0).mget("a", "b")


def test_moved_followed(cluster):
    # reinitialize_steps=0: on MOVED the client only patches the slot, so
    # the patched entry shows the redirect was followed.
    rc = RedisCluster(host="127.0.0.1", port=cluster.ports[0], reinitialize_steps=0, socket_timeout=5)
    try:
        wrong = rc.get_node(host="127.0.0.1", port=cluster.ports[0])
        for i in range(50):
            k = f"moved:{i}"
            slot = rc.keyslot(k)
            right = owner(slot)
            if right == 0:
                continue
            rc.nodes_manager.slots_cache[slot] = [wrong]  # a stale map
            assert rc.set(k, "x")
            assert rc.nodes_manager.slots_cache[slot][0].port == cluster.ports[right]
            assert cluster.node(right).get(k) == b"x"
    finally:
        rc.close()


def test_cluster_replies(cluster, rc):
    slots = rc.cluster_slots()
    assert sorted(slots) == [(lo, hi) for lo, hi in RANGES], slots
    assert [n["primary"] for n in slots.values()] == [("127.0.0.1", p) for p in cluster.ports]
    info = rc.cluster_info()
    assert info["cluster_state"] == "ok" and int(info["cluster_known_nodes"]) == 3, info
    assert rc.cluster_keyslot("{user1}.a") == 8106
    nodes = rc.cluster_nodes()
    assert sorted(nodes) == sorted(f"127.0.0.1:{p}" for p in cluster.ports), nodes
    assert all(n["connected"] and "master" in n["flags"] for n in nodes.values()), nodes
    shards = cluster.node(1).execute_command("CLUSTER", "SHARDS")
    assert len(shards) == 3
    ids = {cluster.node(i).execute_command("CLUSTER", "MYID") for i in range(3)}
    assert len(ids) == 3 and all(len(i) == 40 for i in ids), ids
    assert cluster.node(2).execute_command("READONLY")
    with pytest.raises(redis.ResponseError, match="^SELECT is not allowed in cluster mode$"):
        cluster.node(2).select(1)


@pytest.fixture(scope="module")
def replicated(tmp_path_factory):
    c = Cluster(tmp_path_factory.mktemp("replicated"), replicas=True)
    yield c
    c.close()


def gets(node):
    return node.info("commandstats").get("cmdstat_get", {}).get("calls", 0)


@pytest.mark.parametrize("protocol", [2, 3])
def test_reads_from_replicas(replicated, protocol):
    rc = RedisCluster(host="127.0.0.1", port=replicated.ports[0], protocol=protocol, socket_timeout=5,
                      load_balancing_strategy=LoadBalancingStrategy.ROUND_ROBIN_REPLICAS)
    try:
        assert len(rc.get_primaries()) == 3 and len(rc.get_replicas()) == 3, rc.get_nodes()
        direct = [replicated.node(i) for i in range(6)]
        keys = [f"r{protocol}:{i}" for i in range(300)]
        for i, k in enumerate(keys):
            assert rc.set(k, f"v{i}")
        # Replication is asynchronous: wait until each replica has the
        # last key its primary took (a bound only a broken replica hits).
        for i, k in enumerate(keys):
            replica = direct[owner(rc.keyslot(k)) + 3]
            replica.execute_command("READONLY")
            deadline = time.monotonic() + DEADLINE
            while replica.get(k) != f"v{i}".encode():
                assert time.monotonic() < deadline, k
                time.sleep(0.01)
        before = [gets(d) for d in direct]
        for i, k in enumerate(keys):
            assert rc.get(k) == f"v{i}".encode()
        after = [gets(d) for d in direct]
        primary_gets = sum(after[i] - before[i] for i in range(3))
        replica_gets = sum(after[i] - before[i] for i in range(3, 6))
        assert replica_gets == len(keys) and primary_gets == 0, (before, after)
        # A replica's writes go to its primary: without READONLY it
        # redirects every keyed command there.
        k = keys[0]
        slot = rc.keyslot(k)
        with pytest.raises(MovedError) as moved:
            replicated.node(owner(slot) + 3).set(k, "x")
        assert (moved.value.slot_id, moved.value.port) == (slot, replicated.ports[owner(slot)])
        with pytest.raises(MovedError):
            replicated.node(owner(slot) + 3).get(k)
        nodes = rc.cluster_nodes()
        assert sum("slave" in n["flags"] for n in nodes.values()) == 3, nodes
    finally:
        rc.close()

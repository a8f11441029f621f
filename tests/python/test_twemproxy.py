"""twemproxy (nutcracker) in front of three MiniKV, both protocols.

The proxy runs deploy/twemproxy/nutcracker.yml itself, with the addresses
swapped for free loopback ports and the ejection timers shortened
(server_failure_limit 1, server_retry_timeout 1 s) so the test is quick.
Every key written through the proxy must read back through it, one by one
and in multi-key gets (memcached `get k1 k2 ...`, Redis MGET), which
twemproxy splits per server and merges; every key must sit on exactly the
server that ketama (md5) over the servers' names predicts, per
`minikv-bench locate --hash ketama-md5`, asked of each MiniKV directly; and a
killed MiniKV must be ejected (its keys go to the others) and readmitted
once it is back.

No timing is asserted: every wait polls with a generous deadline.
"""

import os
import shutil
import signal
import socket
import subprocess
import time
from pathlib import Path

import pytest
import redis
import yaml
from pymemcache.client.base import Client
from redis.backoff import NoBackoff
from redis.retry import Retry

from conftest import MINIKV_BIN, REPO, _free_port, _wait_accepting

BENCH_BIN = os.environ.get("MINIKV_BENCH_BIN", str(Path(MINIKV_BIN).parent / "minikv-bench"))
CONFIG = REPO / "deploy" / "twemproxy" / "nutcracker.yml"
DEADLINE = 60.0  # seconds any one wait may take on a loaded machine


def nutcracker_bin():
    path = shutil.which("nutcracker") or shutil.which("nutcracker", path="/usr/sbin:/usr/local/sbin")
    if path:
        return path
    msg = "nutcracker (twemproxy) not installed: apt-get install nutcracker"
    if os.environ.get("MINIKV_REQUIRE_PEERS") == "1":
        pytest.fail(msg + " (MINIKV_REQUIRE_PEERS=1)")
    pytest.skip(msg + "; set MINIKV_REQUIRE_PEERS=1 to make this a failure")


def redis_client(port, **kw):
    """The redis-py settings twemproxy needs: RESP2 (redis-py 8 sends HELLO 3
    otherwise) and no CLIENT SETINFO (driver_info=None); twemproxy closes
    the connection on either command."""
    return redis.Redis(port=port, protocol=2, driver_info=None, socket_timeout=5,
                       retry=Retry(NoBackoff(), 0), **kw)


class Node:
    """A MiniKV process with a memcached and a Redis port that can be
    killed and started again on the same ports."""

    def __init__(self, name, tmp):
        self.name = name
        self.log_path = tmp / f"{name}.log"
        self.proc = None
        for _ in range(3):
            self.port, self.resp_port = _free_port(), _free_port()
            if self.start():
                return
        pytest.fail(f"{name} did not start:\n{self.log()}")

    def start(self):
        with open(self.log_path, "ab") as log:
            self.proc = subprocess.Popen(
                [MINIKV_BIN, "-p", str(self.port), "--resp-port", str(self.resp_port), "--admin-addr", "",
                 "-l", "127.0.0.1", "-m", "32", "-U", "0"],
                stdout=log, stderr=subprocess.STDOUT)
        if _wait_accepting(self.proc, self.port, DEADLINE) and _wait_accepting(self.proc, self.resp_port, DEADLINE):
            return True
        self.stop()
        return False

    def log(self):
        return self.log_path.read_text(errors="replace")

    def kill(self):
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait()

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()

    def mc(self):
        return Client(("127.0.0.1", self.port), connect_timeout=5, timeout=5)

    def rd(self):
        return redis.Redis(port=self.resp_port, socket_timeout=5)


class Proxy:
    def __init__(self, tmp):
        self.bin = nutcracker_bin()
        self.nodes = [Node(f"minikv-{i}", tmp) for i in range(3)]
        conf = yaml.safe_load(CONFIG.read_text())
        assert set(conf) == {"minikv_memcache", "minikv_redis"}, conf.keys()
        self.ports = {}
        for pool, c in conf.items():
            redis_pool = bool(c.get("redis"))
            assert c["distribution"] == "ketama" and c["hash"] == "md5" and c["auto_eject_hosts"] is True
            self.ports[pool] = _free_port()
            c["listen"] = f"127.0.0.1:{self.ports[pool]}"
            c["server_failure_limit"] = 1
            c["server_retry_timeout"] = 1000
            servers = []
            for line, node in zip(c["servers"], self.nodes, strict=True):
                addr, name = line.split()
                weight = addr.rsplit(":", 1)[1]
                assert name == node.name, line
                port = node.resp_port if redis_pool else node.port
                servers.append(f"127.0.0.1:{port}:{weight} {name}")
            c["servers"] = servers
        self.conf_path = tmp / "nutcracker.yml"
        self.conf_path.write_text(yaml.safe_dump(conf))
        subprocess.run([self.bin, "-t", "-c", str(self.conf_path)], check=True, capture_output=True, timeout=30)
        self.log_path = tmp / "nutcracker.log"
        self.proc = subprocess.Popen(
            [self.bin, "-c", str(self.conf_path), "-s", str(_free_port()), "-a", "127.0.0.1",
             "-o", str(self.log_path)],
            stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
        for port in self.ports.values():
            if not _wait_accepting(self.proc, port, DEADLINE):
                self.close()
                pytest.fail("nutcracker did not start:\n" + self.log())
        self.mc_port = self.ports["minikv_memcache"]
        self.rd_port = self.ports["minikv_redis"]

    def log(self):
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""

    def close(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        for n in self.nodes:
            n.stop()

    def mc(self):
        return Client(("127.0.0.1", self.mc_port), connect_timeout=5, timeout=5, default_noreply=False)

    def predict(self, keys):
        """Which node each key belongs on: ketama-md5 over the names."""
        names = ",".join(f"{n.name}:11211" for n in self.nodes)
        out = subprocess.run([BENCH_BIN, "locate", "--hash", "ketama-md5", "-s", names],
                             input="\n".join(keys) + "\n", capture_output=True, text=True, check=True,
                             timeout=60).stdout
        by_name = {n.name: i for i, n in enumerate(self.nodes)}
        return {k: by_name[a.rsplit(":", 1)[0]] for k, a in (line.split("\t") for line in out.splitlines())}


@pytest.fixture
def proxy(tmp_path):
    if not os.access(BENCH_BIN, os.X_OK):
        pytest.fail(f"{BENCH_BIN} is not an executable; run `make build` or set MINIKV_BENCH_BIN")
    p = Proxy(tmp_path)
    yield p
    p.close()


def where_mc(proxy, keys):
    """For each node, the keys it holds (asked directly, not via the proxy)."""
    held = []
    for n in proxy.nodes:
        c = n.mc()
        found = {}
        for i in range(0, len(keys), 100):
            found.update(c.get_many(keys[i:i + 100]))
        c.close()
        held.append({k.decode() if isinstance(k, bytes) else k for k in found})
    return held


def where_rd(proxy, keys):
    held = []
    for n in proxy.nodes:
        r = n.rd()
        held.append({k for k in keys if r.exists(k)})
        r.close()
    return held


def check_placement(proxy, keys, held):
    want = proxy.predict(keys)
    for i, ks in enumerate(held):
        wrong = sorted(k for k in ks if want[k] != i)
        assert not wrong, f"{proxy.nodes[i].name} holds {len(wrong)} keys ketama puts elsewhere, e.g. {wrong[:5]}"
        assert len(ks) > len(keys) // 10, f"{proxy.nodes[i].name} holds {len(ks)} of {len(keys)} keys"
    assert sum(len(ks) for ks in held) == len(keys)


def test_deploy_config_is_valid():
    subprocess.run([nutcracker_bin(), "-t", "-c", str(CONFIG)], check=True, capture_output=True, timeout=30)


def test_memcache_through_twemproxy(proxy):
    c = proxy.mc()
    keys = [f"mc:{i}" for i in range(900)]
    values = {k: f"value-{k}".encode() for k in keys}
    for i in range(0, len(keys), 100):
        assert c.set_many({k: values[k] for k in keys[i:i + 100]}) == []
    for k in keys[:50]:
        assert c.get(k) == values[k]
    # Multi-key gets span the three servers; twemproxy splits and merges.
    for i in range(0, len(keys), 100):
        assert c.get_many(keys[i:i + 100] + ["mc:missing"]) == {k: values[k] for k in keys[i:i + 100]}
    # The other commands clients use.
    assert c.set("counter", b"10")
    assert c.incr("counter", 5) == 15
    assert c.decr("counter", 3) == 12
    assert c.add("counter", b"x") is False
    assert c.replace("counter", b"20") is True
    assert c.append("counter", b"0") is True
    assert c.get("counter") == b"200"
    assert c.touch("counter", 100) is True
    assert c.delete("counter") is True
    assert c.get("counter") is None
    value, cas = c.gets(keys[0])
    assert value == values[keys[0]] and c.cas(keys[0], b"new", cas) is True
    c.close()
    check_placement(proxy, keys, where_mc(proxy, keys))


def test_redis_through_twemproxy(proxy):
    # redis-py's defaults fail at connect through twemproxy: HELLO 3 and
    # CLIENT SETINFO are commands twemproxy does not know, and it closes
    # the connection.
    default = redis.Redis(port=proxy.rd_port, socket_timeout=5, retry=Retry(NoBackoff(), 0))
    with pytest.raises(redis.ConnectionError):
        default.ping()
    default.close()

    r = redis_client(proxy.rd_port)
    keys = [f"rd:{i}" for i in range(900)]
    for i in range(0, len(keys), 100):
        assert r.mset({k: f"value-{k}" for k in keys[i:i + 100]}) is True
    for k in keys[:50]:
        assert r.get(k) == f"value-{k}".encode()
    for i in range(0, len(keys), 100):
        chunk = keys[i:i + 100]
        assert r.mget(chunk + ["rd:missing"]) == [f"value-{k}".encode() for k in chunk] + [None]
    assert r.set("counter", 10) is True
    assert r.incr("counter") == 11
    assert r.incrby("counter", 4) == 15
    assert r.expire("counter", 100) is True
    assert 0 < r.ttl("counter") <= 100
    # One key per EXISTS: twemproxy 0.5.0 sends a multi-key EXISTS whole to
    # the first key's server (docs/scale-out.md lists what is not split).
    assert all(r.exists(k) == 1 for k in keys[:10])
    assert r.delete("counter", keys[0], keys[1]) == 3
    assert r.get(keys[0]) is None
    assert r.set("session", "abc", ex=60) is True
    assert r.getset("session", "def") == b"abc"
    assert r.strlen("session") == 3
    r.close()
    check_placement(proxy, keys[2:], where_rd(proxy, keys[2:]))


def poll(what, attempt):
    """Calls attempt until it returns a true value; fails after DEADLINE."""
    deadline = time.monotonic() + DEADLINE
    last = None
    while time.monotonic() < deadline:
        try:
            got = attempt()
            if got:
                return got
        except Exception as e:  # any client error means "not yet"
            last = e
        time.sleep(0.1)
    pytest.fail(f"{what}: not within {DEADLINE:.0f} s (last error: {last!r})")


def test_killed_backend_is_ejected_and_readmitted(proxy):
    victim = 1
    node = proxy.nodes[victim]
    candidates = [f"ej:{i}" for i in range(200)]
    want = proxy.predict(candidates)
    on_victim = [k for k in candidates if want[k] == victim]
    assert len(on_victim) >= 4, on_victim
    others = [n for i, n in enumerate(proxy.nodes) if i != victim]

    def mc_set(key, value):
        c = proxy.mc()
        try:
            return c.set(key, value)
        finally:
            c.close()

    def rd_set(key, value):
        r = redis_client(proxy.rd_port)
        try:
            return r.set(key, value)
        finally:
            r.close()

    # Before: the key goes to the victim.
    assert mc_set(on_victim[0], b"before") and rd_set(on_victim[0], "before")
    assert node.mc().get(on_victim[0]) == b"before" and node.rd().get(on_victim[0]) == b"before"

    node.kill()
    # Ejected: writes of the victim's keys succeed again, on another server.
    poll("memcached pool ejects the killed server", lambda: mc_set(on_victim[1], b"during"))
    poll("Redis pool ejects the killed server", lambda: rd_set(on_victim[1], "during"))
    assert sum(n.mc().get(on_victim[1]) == b"during" for n in others) == 1
    assert sum(n.rd().get(on_victim[1]) == b"during" for n in others) == 1

    # Back on the same ports (empty: a cache restarts cold): readmitted after
    # server_retry_timeout, so the victim's keys go to it again.
    assert node.start(), node.log()

    def lands_on_victim(setter, getter, key):
        def attempt():
            setter(key)
            return getter(key)
        return attempt

    poll("memcached pool readmits the server", lands_on_victim(
        lambda k: mc_set(k, b"after"), lambda k: node.mc().get(k) == b"after", on_victim[2]))
    poll("Redis pool readmits the server", lands_on_victim(
        lambda k: rd_set(k, "after"), lambda k: node.rd().get(k) == b"after", on_victim[3]))
    assert proxy.nodes[victim].proc.poll() is None
    assert proxy.proc.poll() is None, proxy.log()

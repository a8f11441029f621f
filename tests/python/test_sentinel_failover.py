"""Failover of MiniKV by unmodified Redis Sentinel (issue 39).

One MiniKV primary, two MiniKV replicas (--replicaof) and three sentinels
(redis-server --sentinel, Debian's redis-server binary) on free loopback
ports. A redis-py Sentinel client writes through the primary, confirming
batches with WAIT 2; the primary is killed with SIGKILL; the sentinels
promote a replica, the other replica follows it, the client finds the new
primary by itself, and every write WAIT 2 confirmed before the kill is
there. Every process is stopped by its PID.
"""

import os
import shutil
import signal
import subprocess
import threading
import time

import pytest
import redis
from redis.sentinel import Sentinel

from conftest import MINIKV_BIN, _free_port, _wait_accepting

REDIS_SERVER = shutil.which("redis-server")


def _wait(what, cond, timeout=30.0):
    """Polls cond until it holds; the bound only keeps a broken build from
    hanging (nothing here is timed)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if cond():
                return
        except (redis.RedisError, OSError):
            pass
        time.sleep(0.05)
    pytest.fail(f"waited {timeout:.0f} s for {what}")


class Procs:
    def __init__(self, tmp_path):
        self.tmp = tmp_path
        self.procs = []

    def start(self, name, args, port):
        log = open(self.tmp / f"{name}.log", "wb")
        proc = subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT, cwd=self.tmp)
        self.procs.append(proc)
        if not _wait_accepting(proc, port, timeout=10):
            pytest.fail(f"{name} did not start: {(self.tmp / f'{name}.log').read_text(errors='replace')}")
        return proc

    def minikv(self, name, extra=()):
        port = _free_port()
        proc = self.start(name, [MINIKV_BIN, "-l", "127.0.0.1", "-p", "0", "--resp-port", str(port),
                                 "--admin-addr", "", *extra], port)
        return proc, port

    def sentinel(self, name, primary_port):
        port = _free_port()
        conf = self.tmp / f"{name}.conf"
        conf.write_text(
            f"port {port}\nbind 127.0.0.1\ndir {self.tmp}\n"
            f"sentinel monitor mymaster 127.0.0.1 {primary_port} 2\n"
            "sentinel down-after-milliseconds mymaster 1000\n"
            "sentinel failover-timeout mymaster 10000\n"
            "sentinel parallel-syncs mymaster 2\n")
        self.start(name, [REDIS_SERVER, str(conf), "--sentinel"], port)
        return port

    def stop(self):
        for p in self.procs:
            if p.poll() is None:
                p.kill()  # by PID: only the processes this test started
                p.wait()


@pytest.fixture
def procs(tmp_path):
    ps = Procs(tmp_path)
    yield ps
    ps.stop()


@pytest.mark.skipif(REDIS_SERVER is None, reason="redis-server is not installed")
def test_sentinel_fails_over_minikv(procs):
    primary, pport = procs.minikv("primary")
    replicas = [procs.minikv(f"replica{i}", ["--replicaof", f"127.0.0.1:{pport}"])[1] for i in (1, 2)]
    pc = redis.Redis(port=pport, decode_responses=True)
    _wait("both replicas online", lambda: pc.info("replication")["connected_slaves"] == 2)

    sentinels = [procs.sentinel(f"sentinel{i}", pport) for i in (1, 2, 3)]
    s0 = redis.Redis(port=sentinels[0], decode_responses=True)
    _wait("the sentinels to find the replicas and each other",
          lambda: len(s0.sentinel_slaves("mymaster")) == 2 and len(s0.sentinel_sentinels("mymaster")) == 2)

    sentinel = Sentinel([("127.0.0.1", p) for p in sentinels], socket_timeout=1)
    master = sentinel.master_for("mymaster", socket_timeout=10, decode_responses=True)
    assert master.execute_command("ROLE")[0] == "master"

    confirmed = {}  # key -> value, every write WAIT 2 confirmed
    stop = threading.Event()
    errors = []

    def writer():
        pending = {}
        i = 0
        while not stop.is_set():
            try:
                for _ in range(20):
                    k, v = f"k{i}", f"v{i}"
                    master.set(k, v)
                    pending[k] = v
                    i += 1
                if master.execute_command("WAIT", 2, 2000) == 2:
                    confirmed.update(pending)
                pending = {}
            except (redis.ConnectionError, redis.TimeoutError, redis.ReadOnlyError):
                return  # the primary is gone
            except redis.RedisError as e:
                errors.append(e)
                return

    t = threading.Thread(target=writer)
    t.start()
    _wait("writes confirmed by WAIT 2", lambda: len(confirmed) >= 200)
    primary.kill()  # SIGKILL, by PID
    primary.wait()
    stop.set()
    t.join(30)
    assert not errors, errors
    assert len(confirmed) >= 200

    _wait("a new primary", lambda: int(s0.sentinel_get_master_addr_by_name("mymaster")[1]) != pport, timeout=60)
    new_port = int(s0.sentinel_get_master_addr_by_name("mymaster")[1])
    assert new_port in replicas
    other = [p for p in replicas if p != new_port][0]
    oc = redis.Redis(port=other, decode_responses=True)
    _wait("the other replica to follow the new primary",
          lambda: oc.execute_command("ROLE")[:4] == ["slave", "127.0.0.1", new_port, "connected"], timeout=60)

    # The Sentinel client finds the new primary by itself.
    _wait("the client to write through the new primary", lambda: master.set("after", "1"), timeout=60)
    assert master.execute_command("ROLE")[0] == "master"
    nc = redis.Redis(port=new_port, decode_responses=True)
    missing = [k for k, v in confirmed.items() if nc.get(k) != v]
    assert not missing, f"{len(missing)} writes confirmed by WAIT 2 are missing on the new primary: {missing[:5]}"
    _wait("the write after the failover on the other replica", lambda: oc.get("after") == "1")
    with pytest.raises(redis.ReadOnlyError):
        oc.set("x", "1")

"""scripts/cluster.sh: local, bench and stop for real, sentinel (a primary,
two replicas and three unmodified Redis Sentinels) and stop for real, deploy
and stop over a substitute for ssh and scp (MINIKV_SSH, MINIKV_SCP) that runs
the commands on this machine, and shellcheck over the script."""

import os
import re
import shutil
import signal
import socket
import subprocess
import time
from pathlib import Path

import pytest
import redis

from conftest import MINIKV_BIN, REPO

SCRIPT = REPO / "scripts" / "cluster.sh"
BENCH_BIN = os.environ.get("MINIKV_BENCH_BIN", str(Path(MINIKV_BIN).parent / "minikv-bench"))
AGGREGATE = re.compile(
    r"^aggregate nodes=(\d+) requests=(\d+) conns=(\d+) ops_per_sec=(\d+) p99_us=([\d.]+) errors=(\d+)$")

FAKE_SSH = """#!/bin/sh
# ssh stand-in: skips options, logs the host, runs the command here.
while [ $# -gt 0 ]; do
  case $1 in -o|-p|-i|-l) shift 2 ;; -*) shift ;; *) break ;; esac
done
echo "$1" >>"$FAKE_LOG"
shift
exec sh -c "$*"
"""

FAKE_SCP = """#!/bin/sh
# scp stand-in: skips options, copies SRC to the path of HOST:PATH here.
while [ $# -gt 0 ]; do
  case $1 in -o|-P|-i) shift 2 ;; -*) shift ;; *) break ;; esac
done
echo "scp $2" >>"$FAKE_LOG"
exec cp "$1" "${2#*:}"
"""


def require(tool):
    path = shutil.which(tool)
    if path:
        return path
    msg = f"{tool} not installed (apt-get install {tool})"
    if os.environ.get("MINIKV_REQUIRE_PEERS") == "1":
        pytest.fail(msg + " and MINIKV_REQUIRE_PEERS=1")
    pytest.skip(msg + "; set MINIKV_REQUIRE_PEERS=1 to make this a failure")


@pytest.fixture
def env(tmp_path):
    for b in (MINIKV_BIN, BENCH_BIN):
        if not os.access(b, os.X_OK):
            pytest.fail(f"{b} is not an executable; run `make build`")
    e = dict(os.environ)
    e.update({
        "MINIKV_BIN": MINIKV_BIN,
        "MINIKV_BENCH": BENCH_BIN,
        "MINIKV_STATE_DIR": str(tmp_path / "state"),
        "MINIKV_ARGS": "-m 16",
        "MINIKV_BENCH_ARGS": "--keys 2000 --prefill --warmup 0",
        "MINIKV_WAIT": "60",
    })
    yield e
    # Whatever a failed test left running: only the PIDs the script wrote.
    for pidfile in [*tmp_path.rglob("node-*.pid"), *tmp_path.rglob("sentinel-*.pid")]:
        try:
            os.kill(int(pidfile.read_text()), signal.SIGKILL)
        except (ValueError, ProcessLookupError):
            pass


def run(env, *args, check=True):
    p = subprocess.run([str(SCRIPT), *args], env=env, capture_output=True, text=True, timeout=120)
    if check and p.returncode != 0:
        pytest.fail(f"cluster.sh {' '.join(args)}: exit {p.returncode}\n{p.stdout}\n{p.stderr}")
    return p


def nodes_of(text):
    out = []
    for line in text.splitlines():
        if line.strip() and not line.startswith("#"):
            addr, resp = line.split()
            host, port = addr.rsplit(":", 1)
            out.append((host, int(port), int(resp)))
    return out


def accepting(port):
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1):
            return True
    except OSError:
        return False


def pids(state):
    return [int(p.read_text()) for p in Path(state).glob("node-*.pid")]


def alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie has exited; the script's servers are not our children, but
    # check the state to be sure.
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def test_shellcheck():
    subprocess.run([require("shellcheck"), str(SCRIPT)], check=True, timeout=60)


def test_local_bench_stop(env, tmp_path):
    out = run(env, "local", "3").stdout
    nodes = nodes_of(out)
    assert len(nodes) == 3 and len({p for _, p, _ in nodes} | {r for _, _, r in nodes}) == 6, out
    started = pids(env["MINIKV_STATE_DIR"])
    assert len(started) == 3
    nodes_file = tmp_path / "nodes"
    nodes_file.write_text(out)
    for host, port, resp in nodes:
        assert host == "127.0.0.1"
        with socket.create_connection((host, port), timeout=5) as s:
            s.sendall(b"set k 0 0 1\r\nv\r\nget k\r\n")
            data = b""
            while not data.endswith(b"END\r\n"):
                chunk = s.recv(4096)
                assert chunk, data
                data += chunk
            assert data == b"STORED\r\nVALUE k 0 1\r\nv\r\nEND\r\n"
        assert redis.Redis(port=resp, socket_timeout=5).ping()

    b = run(env, "bench", str(nodes_file), "3000", "4")
    lines = b.stdout.strip().splitlines()
    assert len(lines) == 1, b.stdout
    m = AGGREGATE.match(lines[0])
    assert m, lines[0]
    assert m.group(1) == "3" and m.group(2) == "3000" and m.group(3) == "4" and m.group(6) == "0", lines[0]
    assert int(m.group(4)) > 0
    for _, port, _ in nodes:
        assert f"127.0.0.1:{port}" in b.stderr  # the per-server table

    s = run(env, "stop", str(nodes_file))
    assert s.stderr.count("stopped") == 3, s.stderr
    assert not any(alive(p) for p in started)
    assert pids(env["MINIKV_STATE_DIR"]) == []
    for _, port, resp in nodes:
        assert not accepting(port) and not accepting(resp)
    # Stopping again finds no pid files: an error, and nothing is killed.
    again = run(env, "stop", str(nodes_file), check=False)
    assert again.returncode != 0


def test_sentinel_write_stop(env, tmp_path):
    """`sentinel` starts a primary, two replicas and three Sentinels; a
    write through the master that Sentinel names reaches both replicas;
    `stop` stops all six."""
    require("redis-server")  # the Sentinel: redis-sentinel is the same binary
    out = run(env, "sentinel").stdout
    servers, sentinels = [], []
    for line in out.splitlines():
        f = line.split()
        if not f or f[0].startswith("#"):
            continue
        if f[0] == "sentinel":
            sentinels.append(int(f[1].rsplit(":", 1)[1]))
        else:
            servers.append((int(f[0].rsplit(":", 1)[1]), int(f[1])))
    assert len(servers) == 3 and len(sentinels) == 3, out
    state = Path(env["MINIKV_STATE_DIR"])
    started = pids(state) + [int(p.read_text()) for p in state.glob("sentinel-*.pid")]
    assert len(started) == 6

    primary = servers[0][1]
    sentinel = redis.Sentinel([("127.0.0.1", p) for p in sentinels], socket_timeout=5)
    assert sentinel.discover_master("mymaster") == ("127.0.0.1", primary)
    master = sentinel.master_for("mymaster", socket_timeout=5)
    assert master.set("through-sentinel", "yes")
    assert master.wait(2, 10000) == 2  # both replicas have it
    for _, resp in servers[1:]:
        r = redis.Redis(port=resp, socket_timeout=5)
        assert r.get("through-sentinel") == b"yes"
        assert r.role()[0] == b"slave"
    # Sentinel finds the replicas in the primary's INFO (its first INFO
    # comes within a second; poll with a bound only a broken setup hits).
    want = sorted(r for _, r in servers[1:])
    deadline = time.monotonic() + 30
    while sorted(p for _, p in sentinel.discover_slaves("mymaster")) != want:
        assert time.monotonic() < deadline, sentinel.discover_slaves("mymaster")
        time.sleep(0.05)

    nodes_file = tmp_path / "nodes"
    nodes_file.write_text(out)
    s = run(env, "stop", str(nodes_file))
    assert s.stderr.count("stopped") == 6, s.stderr
    assert not any(alive(p) for p in started)
    assert pids(state) == [] and list(state.glob("sentinel-*.pid")) == []
    for port in [p for sv in servers for p in sv] + sentinels:
        assert not accepting(port)
    # bench and deploy refuse a file with sentinels.
    assert "replicas refuse writes" in run(env, "bench", str(nodes_file), check=False).stderr
    assert "deploy starts no sentinels" in run(env, "deploy", str(nodes_file), check=False).stderr


def test_deploy_over_substitute_ssh(env, tmp_path):
    log = tmp_path / "fake.log"
    for name, body in (("fake-ssh", FAKE_SSH), ("fake-scp", FAKE_SCP)):
        p = tmp_path / name
        p.write_text(body)
        p.chmod(0o755)
    remote = tmp_path / "remote dir"  # a space: quoting must hold over ssh
    env.update({"MINIKV_SSH": str(tmp_path / "fake-ssh"), "MINIKV_SCP": str(tmp_path / "fake-scp"),
                "MINIKV_REMOTE_DIR": str(remote), "FAKE_LOG": str(log)})
    # Two "hosts" that are both this machine; free ports from a local run.
    probe = nodes_of(run(env, "local", "2").stdout)
    probe_file = tmp_path / "probe"
    probe_file.write_text("\n".join(f"{h}:{p} {r}" for h, p, r in probe) + "\n")
    run(env, "stop", str(probe_file))
    (h1, p1, r1), (_, p2, _) = probe
    nodes_file = tmp_path / "nodes"
    nodes_file.write_text(f"# two nodes\n{h1}:{p1} {r1}\n\n127.0.0.2:{p2}\n")

    d = run(env, "deploy", str(nodes_file))
    assert nodes_of(d.stdout) == [("127.0.0.1", p1, r1), ("127.0.0.2", p2, 0)], d.stdout
    calls = log.read_text().splitlines()
    assert "127.0.0.1" in calls and "127.0.0.2" in calls, calls
    assert f"scp 127.0.0.1:{remote}/minikv.new" in calls and f"scp 127.0.0.2:{remote}/minikv.new" in calls, calls
    assert (remote / "minikv").exists()
    deployed = pids(remote)
    assert len(deployed) == 2 and all(alive(p) for p in deployed)
    assert redis.Redis(port=r1, socket_timeout=5).ping()
    with socket.create_connection(("127.0.0.2", p2), timeout=5) as s:
        s.sendall(b"version\r\n")
        assert s.recv(100).startswith(b"VERSION ")

    m = AGGREGATE.match(run(env, "bench", str(nodes_file), "1000", "2").stdout.strip())
    assert m and m.group(1) == "2" and m.group(6) == "0"

    log.write_text("")
    s = run(env, "stop", str(nodes_file))
    assert s.stderr.count("stopped") == 2, s.stderr
    assert sorted(log.read_text().split()) == ["127.0.0.1", "127.0.0.2"]  # both over "ssh"
    assert not any(alive(p) for p in deployed)
    assert pids(remote) == []


def test_usage_and_bad_nodes(env, tmp_path):
    assert run(env, check=False).returncode == 2
    assert run(env, "local", "x", check=False).returncode == 2
    bad = tmp_path / "bad"
    for text, why in (("", "lists no node"), ("hostonly\n", "not host:port"), ("h:99999\n", "bad port"),
                      ("h:1 2 3\n", "too many fields"), ("h:1 x\n", "bad Redis port"),
                      ("h:1\nsentinel\n", "want 'sentinel host:port'"), ("h:1\nsentinel h 2\n", "want 'sentinel host:port'"),
                      ("h:1\nsentinel h:x\n", "not host:port")):
        bad.write_text(text)
        p = run(env, "stop", str(bad), check=False)
        assert p.returncode == 1 and why in p.stderr, (text, p.stderr)
    assert "cannot read" in run(env, "bench", str(tmp_path / "missing"), check=False).stderr

"""minikv-bench's client-side hashing (-s a,b,c --hash ...) against pylibmc.

pylibmc wraps libmemcached, the reference for ketama on memcached clients.
Three MiniKV servers; keys written through pylibmc must sit, server by
server, where `minikv-bench locate` says, and keys written by minikv-bench
must be found by pylibmc. Each of minikv-bench's modes is paired with the
pylibmc behaviors that mean the same thing:

    ketama      behaviors={"ketama": True}            (libmemcached's default hash)
    ketama-md5  behaviors={"ketama_weighted": True}   (MD5, libketama, twemproxy)
    modula      no behaviors                          (libmemcached's default)

plus server weights (host:port:weight), which switch libmemcached's ketama
to the weighted continuum.
"""

import os
import random
import subprocess
from pathlib import Path

import pytest

from conftest import MINIKV_BIN, _start, _stop

try:
    import pylibmc
except ImportError:  # pragma: no cover - depends on the machine
    pylibmc = None

BENCH_BIN = os.environ.get("MINIKV_BENCH_BIN", str(Path(MINIKV_BIN).parent / "minikv-bench"))

MODES = [
    ("ketama", {"ketama": True}, [1, 1, 1]),
    ("ketama-md5", {"ketama_weighted": True}, [1, 1, 1]),
    ("modula", {}, [1, 1, 1]),
    ("ketama", {"ketama": True}, [1, 2, 4]),
    ("ketama-md5", {"ketama_weighted": True}, [3, 1, 2]),
]
IDS = [f"{m}-w{''.join(map(str, w))}" for m, _, w in MODES]


@pytest.fixture
def trio(tmp_path):
    if pylibmc is None:
        msg = "pylibmc is not installed (pip install -r tests/python/requirements.txt)"
        if os.environ.get("MINIKV_REQUIRE_PEERS") == "1":
            pytest.fail(msg + " and MINIKV_REQUIRE_PEERS=1")
        pytest.skip(msg)
    if not os.access(BENCH_BIN, os.X_OK):
        pytest.fail(f"{BENCH_BIN} is not an executable; run `make build` or set MINIKV_BENCH_BIN")
    servers = []
    try:
        for i in range(3):
            d = tmp_path / f"s{i}"
            d.mkdir()
            servers.append(_start(d, resp=False))
        yield servers
    finally:
        for s in servers:
            _stop(s)


def spec(servers, weights):
    return [f"127.0.0.1:{s.port}:{w}" for s, w in zip(servers, weights)]


def locate(servers, weights, mode, keys):
    out = subprocess.run(
        [BENCH_BIN, "locate", "-s", ",".join(spec(servers, weights)), "--hash", mode],
        input="\n".join(keys) + "\n", capture_output=True, text=True, check=True, timeout=60,
    ).stdout
    where = dict(line.split("\t") for line in out.splitlines())
    assert len(where) == len(keys)
    return where


@pytest.mark.parametrize("mode,behaviors,weights", MODES, ids=IDS)
def test_pylibmc_puts_keys_where_locate_says(trio, mode, behaviors, weights):
    rng = random.Random(18)
    keys = [f"user:{i}:{rng.getrandbits(40):x}" for i in range(1500)] + [f"key:{i:06d}" for i in range(500)]
    mc = pylibmc.Client(spec(trio, weights), behaviors=behaviors)
    assert not mc.set_multi({k: b"v" for k in keys})
    where = locate(trio, weights, mode, keys)
    held = {}
    for s in trio:
        c = s.client()
        found = {}
        for i in range(0, len(keys), 100):
            found.update(c.get_many(keys[i:i + 100]))
        c.close()
        held[f"127.0.0.1:{s.port}"] = {k.decode() if isinstance(k, bytes) else k for k in found}
    misplaced = [(k, a, where[k]) for a, ks in held.items() for k in ks if where[k] != a]
    assert not misplaced[:10], f"{len(misplaced)} keys not where minikv-bench locate says (key, on, predicted)"
    assert sum(len(ks) for ks in held.values()) == len(keys)
    for a, ks in held.items():
        assert len(ks) > len(keys) // 20, f"{a} holds {len(ks)} of {len(keys)} keys"


@pytest.mark.parametrize("mode,behaviors,weights", MODES, ids=IDS)
def test_pylibmc_finds_what_the_bench_wrote(trio, mode, behaviors, weights):
    n = 1200
    subprocess.run(
        [BENCH_BIN, "-s", ",".join(spec(trio, weights)), "--hash", mode, "--keys", str(n), "--prefill",
         "-n", "1", "--warmup", "0", "-c", "2", "--progress", "off"],
        capture_output=True, text=True, check=True, timeout=60,
    )
    keys = [f"key:{i:04d}" for i in range(n)]
    mc = pylibmc.Client(spec(trio, weights), behaviors=behaviors)
    found = {}
    for i in range(0, n, 200):
        found.update(mc.get_multi(keys[i:i + 200]))
    missing = sorted(set(keys) - set(found))
    assert not missing, f"pylibmc misses {len(missing)} of {n} keys the bench wrote, e.g. {missing[:5]}"

"""Regenerates internal/bench/testdata/ring_pylibmc.json: where pylibmc
(libmemcached) puts keys under each distribution, the golden values of
internal/bench's ring test.

    python3 tests/python/ring_golden.py [path/to/minikv]

It starts MiniKV on fixed loopback ports (11211 among them, whose point
names leave the port out), so those must be free. Every key is set through
pylibmc, then looked up on each server directly.
"""

import json
import subprocess
import sys
import time
from pathlib import Path

import pylibmc
from pymemcache.client.base import Client

REPO = Path(__file__).resolve().parents[2]
BIN = sys.argv[1] if len(sys.argv) > 1 else str(REPO / "bin" / "minikv")
PORTS = [21201, 21202, 21203, 21204, 11211]

CASES = [
    # name, servers as given to pylibmc, behaviors
    ("ketama 3", ["127.0.0.1:21201", "127.0.0.1:21202", "127.0.0.1:21203"], {"ketama": True}),
    ("ketama 11211", ["127.0.0.1:11211", "127.0.0.1:21201", "localhost:21202"], {"ketama": True}),
    ("ketama weights", ["127.0.0.1:21201:1", "127.0.0.1:21202:2", "127.0.0.1:21203:5"], {"ketama": True}),
    ("ketama 5", [f"127.0.0.1:{p}" for p in PORTS], {"ketama": True}),
    ("ketama-md5 3", ["127.0.0.1:21201", "127.0.0.1:21202", "127.0.0.1:21203"], {"ketama_weighted": True}),
    ("ketama-md5 11211", ["127.0.0.1:11211", "127.0.0.1:21201", "localhost:21202"], {"ketama_weighted": True}),
    ("ketama-md5 weights", ["127.0.0.1:21201:1", "127.0.0.1:21202:2", "127.0.0.1:21203:5"], {"ketama_weighted": True}),
    ("modula 3", ["127.0.0.1:21201", "127.0.0.1:21202", "127.0.0.1:21203"], {}),
    ("modula 5", [f"127.0.0.1:{p}" for p in PORTS], {}),
]

KEYS = [f"key:{i:06d}" for i in range(1000)] + [
    "a", "user:1", "{user1}.a", "x" * 250, "caf\u00e9", "\u00fcber-\u00df-\u65e5\u672c",
]


def main():
    procs = [
        subprocess.Popen([BIN, "-p", str(p), "--resp-port", "0", "--admin-addr", "", "-m", "16"],
                         stderr=subprocess.DEVNULL)
        for p in PORTS
    ]
    try:
        time.sleep(0.5)
        direct = {p: Client(("127.0.0.1", p), allow_unicode_keys=True) for p in PORTS}
        out = {"generator": "tests/python/ring_golden.py",
               "pylibmc": pylibmc.__version__, "libmemcached": pylibmc.libmemcached_version,
               "keys": KEYS, "cases": []}
        for name, servers, behaviors in CASES:
            for c in direct.values():
                c.flush_all()
            mc = pylibmc.Client(servers, behaviors=behaviors)
            for k in KEYS:
                mc.set(k, "v")
            ports = [int(s.split(":")[1]) for s in servers]
            where = []
            for k in KEYS:
                found = [i for i, p in enumerate(ports) if direct[p].get(k) is not None]
                assert len(found) == 1, (name, k, found)
                where.append(str(found[0]))
            out["cases"].append({"name": name, "servers": servers, "behaviors": behaviors,
                                 "hash": mc.behaviors["hash"], "distribution": mc.behaviors["distribution"],
                                 "where": "".join(where)})
        path = REPO / "internal" / "bench" / "testdata" / "ring_pylibmc.json"
        # One line per key list and per case keeps the file short and diffable.
        lines = ["{"]
        for k in ("generator", "pylibmc", "libmemcached", "keys"):
            lines.append(f" {json.dumps(k)}: {json.dumps(out[k], ensure_ascii=False)},")
        lines.append(' "cases": [')
        lines.append(",\n".join("  " + json.dumps(c, ensure_ascii=False) for c in out["cases"]))
        lines.append(" ]")
        lines.append("}")
        path.write_text("\n".join(lines) + "\n")
        print("wrote", path)
    finally:
        for p in procs:
            p.terminate()
            p.wait()


if __name__ == "__main__":
    main()

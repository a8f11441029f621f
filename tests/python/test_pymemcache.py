"""MiniKV against a real memcached client library: pymemcache 4.0.0.

Every pymemcache call that maps onto a command MiniKV supports, through the
library's own parsing, so a reply the library cannot read fails here. Run:

    make build && MINIKV_BIN=$PWD/bin/minikv python3 -m pytest -q tests/python
"""

import threading
import time

import pytest
from pymemcache.client.base import PooledClient
from pymemcache.exceptions import (
    MemcacheClientError,
    MemcacheIllegalInputError,
    MemcacheServerError,
    MemcacheUnknownCommandError,
)
from pymemcache.serde import pickle_serde

MAX_VALUE = 1_047_552  # largest value memcached -I 1m must store (t/getset.t)
TOO_LARGE = 1_048_576


def raw_flags(client, key):
    """The flags field of key's VALUE line, read past pymemcache's serde."""
    head = client.raw_command(b"get " + key, b"END\r\n").split(b"\r\n", 1)[0]
    return int(head.split()[2])


def test_set_get(client):
    assert client.set("k", b"value") is True
    assert client.get("k") == b"value"
    assert client.set("k", "ascii text") is True
    assert client.get("k") == b"ascii text"
    assert client.get("missing") is None
    assert client.get("missing", default=b"dflt") == b"dflt"
    assert client.set("empty", b"") is True
    assert client.get("empty") == b""
    client["item"] = b"via setitem"
    assert client["item"] == b"via setitem"


def test_flags_round_trip(client):
    for flags in (0, 1, 123, 65535, 2**31, 2**32 - 1):
        assert client.set("f", b"x", flags=flags) is True
        assert raw_flags(client, b"f") == flags


def test_pickle_serde_uses_flags(minikv):
    c = minikv.client(serde=pickle_serde)
    values = {"s": "text", "i": 42, "l": [1, "two", 3.0], "d": {"a": (1, 2)}, "b": b"\x00\xff"}
    for k, v in values.items():
        assert c.set(k, v) is True
    assert c.get_many(list(values)) == values
    c.close()


def test_set_many_get_many(client):
    data = {f"m{i}": f"v{i}".encode() for i in range(50)}
    assert client.set_many(data) == []
    got = client.get_many(list(data) + ["nope1", "nope2"])
    assert got == data
    assert client.get_many(["nope"]) == {}
    assert client.get_many([]) == {}


def test_add_replace(client):
    assert client.add("a", b"1") is True
    assert client.add("a", b"2") is False
    assert client.get("a") == b"1"
    assert client.replace("a", b"3") is True
    assert client.get("a") == b"3"
    assert client.replace("nope", b"x") is False
    assert client.get("nope") is None


def test_append_prepend(client):
    assert client.set("ap", b"mid", flags=7) is True
    assert client.append("ap", b">>") is True
    assert client.prepend("ap", b"<<") is True
    assert client.get("ap") == b"<<mid>>"
    assert raw_flags(client, b"ap") == 7  # append/prepend keep the flags
    assert client.append("nope", b"x") is False
    assert client.prepend("nope", b"x") is False
    assert client.get("nope") is None


def test_gets_cas(client):
    assert client.gets("c") == (None, None)
    assert client.set("c", b"v1") is True
    value, token = client.gets("c")
    assert value == b"v1"
    assert token.isdigit()
    assert client.cas("c", b"v2", token) is True
    assert client.get("c") == b"v2"
    assert client.cas("c", b"v3", token) is False  # stale token: EXISTS
    assert client.get("c") == b"v2"
    assert client.cas("nope", b"x", token) is None  # NOT_FOUND

    _, t2 = client.gets("c")
    assert t2 != token
    assert client.set("c", b"v4") is True  # any write changes the token
    _, t3 = client.gets("c")
    assert t3 != t2
    assert client.cas("c", b"v5", t2) is False
    assert client.delete("c") is True
    assert client.set("c", b"v6") is True  # re-created: old tokens stay stale
    assert client.cas("c", b"v7", t3) is False

    client.set("d", b"dd")
    many = client.gets_many(["c", "d", "nope"])
    assert set(many) == {"c", "d"}
    assert many["c"][0] == b"v6"
    assert many["d"][0] == b"dd"
    assert many["c"][1] != many["d"][1]
    assert client.gets_many([]) == {}


def test_delete(client):
    client.set("d", b"x")
    assert client.delete("d") is True
    assert client.delete("d") is False
    assert client.get("d") is None
    client.set_many({"d1": b"1", "d2": b"2", "d3": b"3"})
    assert client.delete_many(["d1", "d2", "missing"]) is True
    assert client.get_many(["d1", "d2", "d3"]) == {"d3": b"3"}
    assert client.delete_many([]) is True


def test_incr_decr(client):
    client.set("n", b"10")
    assert client.incr("n", 5) == 15
    assert client.decr("n", 3) == 12
    assert client.decr("n", 100) == 0  # floors at 0
    assert client.incr("n", 0) == 0
    assert client.get("n") == b"0"  # MiniKV never space-pads
    assert client.incr("missing", 1) is None
    assert client.decr("missing", 1) is None
    assert client.get("missing") is None

    client.set("big", str(2**64 - 1).encode())
    assert client.incr("big", 1) == 0  # wraps at 2^64
    client.set("grow", b"99")
    assert client.incr("grow", 1) == 100
    assert client.get("grow") == b"100"
    assert client.incr("grow", 2**64 - 1) == 99  # wraps: 100 + 2^64-1

    client.set("text", b"abc")
    with pytest.raises(MemcacheClientError, match="non-numeric"):
        client.incr("text", 1)
    with pytest.raises(MemcacheClientError, match="invalid numeric delta"):
        client.incr("n", 2**64)
    with pytest.raises(MemcacheClientError, match="invalid numeric delta"):
        client.incr("n", -1)
    assert client.incr("n", 1) == 1  # the connection is still in step


def test_touch(client):
    client.set("t", b"x")
    assert client.touch("t", 100) is True
    assert client.touch("missing", 100) is False
    assert client.get("t") == b"x"
    assert client.touch("t", -1) is True  # negative: expired at once
    assert client.get("t") is None
    assert client.touch("t", 100) is False


def test_gat_gats(client):
    # pymemcache 4.0.0 has no gat/gats methods; raw_command sends them.
    client.set("g", b"gv", flags=3)
    got = client.raw_command(b"gat 100 g missing g", b"END\r\n")
    assert got == b"VALUE g 3 2\r\ngv\r\nVALUE g 3 2\r\ngv\r\n"
    _, token = client.gets("g")
    got = client.raw_command(b"gats 100 g", b"END\r\n")
    assert got == b"VALUE g 3 2 " + token + b"\r\ngv\r\n"
    assert client.raw_command(b"gat 100 missing", b"END\r\n") == b""
    assert client.raw_command(b"gat -1 g", b"END\r\n") == b"VALUE g 3 2\r\ngv\r\n"
    assert client.get("g") is None  # gat -1 expired it


def test_flush_all(client):
    client.set_many({"f1": b"1", "f2": b"2"})
    assert client.flush_all() is True
    assert client.get_many(["f1", "f2"]) == {}
    client.set("f3", b"3")  # stored after the flush: stays
    assert client.get("f3") == b"3"
    assert client.flush_all(noreply=True) is True
    assert client.get("f3") is None


def test_expiry_and_delayed_flush(client):
    """A 1 s TTL expires; flush_all with a delay acts only at its time."""
    client.set("ttl1", b"short", expire=1)
    client.set("ttl100", b"long", expire=100)
    client.set("forever", b"stay")
    assert client.flush_all(delay=2) is True
    assert client.get_many(["ttl1", "ttl100", "forever"]) == {
        "ttl1": b"short",
        "ttl100": b"long",
        "forever": b"stay",
    }
    time.sleep(1.1)
    assert client.get_many(["ttl1", "ttl100", "forever"]) == {"ttl100": b"long", "forever": b"stay"}
    time.sleep(1.0)
    assert client.get_many(["ttl1", "ttl100", "forever"]) == {}
    client.set("after", b"new")  # stored after the flush time: stays
    assert client.get("after") == b"new"

    # exptime over 30 days is an absolute Unix time: 2592001 is in 1970
    assert client.set("abs", b"x", expire=2592001) is True
    assert client.get("abs") is None
    assert client.set("neg", b"x", expire=-1) is True
    assert client.get("neg") is None
    assert client.add("neg", b"again") is True  # expired means missing
    assert client.get("neg") == b"again"


def test_version(client):
    v = client.version()
    assert v.startswith(b"1.6."), v
    major, minor, _ = v.split(b".", 2)
    assert int(major) == 1 and int(minor) == 6


def test_stats(minikv, client):
    client.set("s1", b"x")
    client.get("s1")
    client.get("nope")
    st = client.stats()
    for name in (b"pid", b"uptime", b"time", b"curr_connections", b"total_connections",
                 b"curr_items", b"total_items", b"bytes", b"limit_maxbytes", b"cmd_get",
                 b"cmd_set", b"get_hits", b"get_misses", b"evictions"):
        assert isinstance(st[name], int), (name, st.get(name))
    assert st[b"pid"] == minikv.proc.pid
    assert st[b"limit_maxbytes"] == 64 << 20
    assert st[b"curr_items"] >= 1
    assert st[b"get_hits"] >= 1 and st[b"get_misses"] >= 1
    assert st[b"version"].startswith(b"1.6.")
    assert isinstance(st[b"rusage_user"], float)

    settings = client.stats("settings")
    assert settings[b"maxbytes"] == 64 << 20
    assert settings[b"item_size_max"] == 1 << 20
    assert settings[b"maxconns"] == 1024

    items = client.stats("items")
    assert items, "stats items is empty with an item stored"
    assert all(k.startswith(b"items:") for k in items), items
    assert any(k.endswith(b":number") and v >= 1 for k, v in items.items()), items

    slabs = client.stats("slabs")
    assert b"active_slabs" in slabs and b"total_malloced" in slabs, slabs

    with pytest.raises(MemcacheUnknownCommandError):
        client.stats("nosuch")
    assert client.get("s1") == b"x"  # still in step after the error


def test_stats_settings_tcpport(minikv, client):
    # memcached reports its port in "stats settings"; tools read it there.
    assert client.stats("settings").get(b"tcpport") == minikv.port


def test_big_values(client):
    big = bytes(i % 251 for i in range(MAX_VALUE))
    assert client.set("big", big) is True
    assert client.get("big") == big

    with pytest.raises(MemcacheServerError, match="object too large for cache"):
        client.set("toolarge", b"z" * TOO_LARGE)
    assert client.get("toolarge") is None
    assert client.get("big") == big  # the data block was swallowed, in step

    # MiniKV keeps the old value when a too-large set fails (memcached
    # deletes it: a documented difference).
    with pytest.raises(MemcacheServerError, match="object too large for cache"):
        client.set("big", b"z" * TOO_LARGE)
    assert client.get("big") == big


def test_unicode_and_binary_values(minikv, client):
    every_byte = bytes(range(256)) * 4 + b"\r\nEND\r\n"
    assert client.set("bin", every_byte) is True
    assert client.get("bin") == every_byte

    text = "héllo wörld ✓ 日本語"
    assert client.set("utf8", text.encode("utf-8")) is True
    assert client.get("utf8").decode("utf-8") == text

    with pytest.raises(MemcacheIllegalInputError):
        client.set("ascii-only", text)  # encoding="ascii" refuses it client-side

    uc = minikv.client(encoding="utf-8", allow_unicode_keys=True)
    assert uc.set("ключ", text) is True
    assert uc.get("ключ") == text.encode("utf-8")
    assert uc.get_many(["ключ", "нет"]) == {"ключ": text.encode("utf-8")}
    uc.close()


def test_key_limits_client_side(client):
    ok = "k" * 250
    assert client.set(ok, b"x") is True
    assert client.get(ok) == b"x"
    for bad in ("k" * 251, "has space", "tab\tkey", "nul\x00key", "new\nline"):
        with pytest.raises(MemcacheIllegalInputError):
            client.set(bad, b"x")
        with pytest.raises(MemcacheIllegalInputError):
            client.get(bad)
    assert client.get(ok) == b"x"


def test_noreply_pipelining(minikv, client):
    """noreply calls return at once; a later get on the same connection sees
    their effects, so MiniKV executed them in order and wrote nothing back."""
    nr = minikv.client(default_noreply=True)
    assert nr.set("p1", b"one") is True
    assert nr.set_many({f"pm{i}": str(i).encode() for i in range(100)}) == []
    assert nr.add("p2", b"two") is True
    assert nr.add("p1", b"not stored") is True  # noreply: always True
    assert nr.replace("p2", b"TWO") is True
    assert nr.append("p1", b"+") is True
    assert nr.prepend("p1", b"-") is True
    assert nr.set("n", b"5") is True
    assert nr.incr("n", 10, noreply=True) is None
    assert nr.decr("n", 3, noreply=True) is None
    assert nr.touch("p2", 100) is True
    assert nr.delete("pm0") is True
    assert nr.delete_many(["pm1", "pm2"]) is True
    assert nr.set("gone", b"x") is True
    assert nr.touch("gone", -1) is True
    assert nr.cas("p2", b"bad", b"1", noreply=True) is True
    # errors are hidden too, and must not leave a stray reply behind
    assert nr.incr("p1", 1, noreply=True) is None
    assert nr.get("p1") == b"-one+"
    assert nr.get("n") == b"12"
    assert nr.get("p2") == b"TWO"
    assert nr.get_many([f"pm{i}" for i in range(100)]) == {f"pm{i}": str(i).encode() for i in range(3, 100)}
    assert nr.get("gone") is None
    assert nr.flush_all() is True  # flush_all 0 noreply
    assert nr.get("p1") is None
    nr.close()
    # and another connection agrees
    assert client.get("n") is None


def test_pooled_client_threads(minikv):
    pool = PooledClient(minikv.addr, max_pool_size=8, default_noreply=False,
                        connect_timeout=5, timeout=5)
    pool.set("counter", b"0")
    threads, rounds = 8, 200
    errors = []

    def worker(n):
        try:
            for i in range(rounds):
                key = f"t{n}_{i % 10}"
                val = f"{n}:{i}".encode()
                assert pool.set(key, val) is True
                assert pool.get(key) == val
                pool.incr("counter", 1)
                if i % 50 == 0:
                    many = pool.get_many([f"t{n}_{j}" for j in range(10)])
                    assert all(v.startswith(f"{n}:".encode()) for v in many.values())
        except Exception as e:  # surfaced in the main thread
            errors.append(e)

    ts = [threading.Thread(target=worker, args=(n,)) for n in range(threads)]
    for t in ts:
        t.start()
    for t in ts:
        t.join(timeout=30)
    assert not errors, errors
    assert pool.get("counter") == str(threads * rounds).encode()
    assert 1 <= pool.stats()[b"curr_connections"] <= 8 + 1  # the pool's cap
    pool.close()


def test_errors_keep_the_connection_in_step(client):
    with pytest.raises(MemcacheUnknownCommandError):
        client.raw_command(b"bogus command")
    with pytest.raises(MemcacheClientError, match="bad command line format"):
        client.raw_command(b"set k 0 0 -1")
    client.set("ok", b"fine")
    assert client.get("ok") == b"fine"


def test_quit_and_reconnect(client):
    client.set("q", b"x")
    client.quit()
    assert client.get("q") == b"x"  # pymemcache reconnects after quit


def test_shutdown_with_busy_clients(minikv):
    """SIGTERM with several connected clients still exits 0 (checked by the
    fixture's teardown); here the clients are mid-conversation."""
    clients = [minikv.client() for _ in range(5)]
    for i, c in enumerate(clients):
        assert c.set(f"sd{i}", b"x" * 1000) is True
        assert c.get(f"sd{i}") == b"x" * 1000

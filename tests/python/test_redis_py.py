"""redis-py against MiniKV's RESP port.

Every client is redis-py's default `redis.Redis(port=...)`: no protocol
argument, so redis-py 8 sends HELLO 3 on connect and speaks RESP3.
"""

import socket
import time

import pytest
import redis
from pymemcache.client.base import Client as MemcacheClient


@pytest.fixture
def r(minikv_resp):
    c = redis.Redis(port=minikv_resp.resp_port, socket_timeout=5)
    yield c
    c.close()


def test_handshake_is_resp3(r):
    assert r.ping() is True
    conn = r.connection_pool.get_connection()
    try:
        assert conn.protocol in (3, "3")
    finally:
        r.connection_pool.release(conn)
    hello = r.execute_command("HELLO", "3")
    assert hello[b"proto"] == 3
    assert hello[b"server"] == b"redis"
    assert hello[b"version"] == b"7.2.4"


def test_strings(r):
    assert r.set("k", "v") is True
    assert r.get("k") == b"v"
    assert r.get("missing") is None
    assert r.set("k", "x", nx=True) is None
    assert r.set("k", "v2", xx=True) is True
    assert r.set("nokey", "v", xx=True) is None
    assert r.set("k", "v3", get=True) == b"v2"
    assert r.setnx("k", "x") is False
    assert r.setnx("snx", "1") is True
    assert r.getset("k", "v4") == b"v3"
    assert r.getdel("k") == b"v4"
    assert r.exists("k") == 0
    assert r.mset({"a": "1", "b": "2"}) is True
    assert r.mget("a", "nope", "b") == [b"1", None, b"2"]
    assert r.msetnx({"a": "x", "c": "y"}) is False
    assert r.msetnx({"c": "x", "d": "y"}) is True
    assert r.append("ap", "Hello") == 5
    assert r.append("ap", " World") == 11
    assert r.strlen("ap") == 11
    assert r.getrange("ap", 0, 4) == b"Hello"
    assert r.getrange("ap", -5, -1) == b"World"
    assert r.setrange("ap", 6, "Redis") == 11
    assert r.get("ap") == b"Hello Redis"
    assert r.setrange("pad", 2, "x") == 3
    assert r.get("pad") == b"\x00\x00x"
    assert r.set("bin", b"\x00\xff\r\n") is True
    assert r.get("bin") == b"\x00\xff\r\n"


def test_expiry(r):
    assert r.set("e", "v", ex=100) is True
    assert r.ttl("e") == 100
    assert 99000 < r.pttl("e") <= 100000
    assert r.set("e", "w", keepttl=True) is True
    assert r.ttl("e") > 90
    assert r.set("p", "v", px=50000) is True
    assert 49000 < r.pttl("p") <= 50000
    assert r.set("at", "v", exat=4102444800) is True
    assert r.expiretime("at") == 4102444800
    assert r.set("pat", "v", pxat=4102444800123) is True
    assert r.pexpiretime("pat") == 4102444800123
    assert r.execute_command("SETEX", "sx", 10, "v") in (True, b"OK")
    assert r.ttl("sx") == 10
    assert r.psetex("psx", 20000, "v") is True
    assert 19000 < r.pttl("psx") <= 20000
    assert r.getex("sx", ex=30) == b"v"
    assert r.ttl("sx") == 30
    assert r.getex("sx", persist=True) == b"v"
    assert r.ttl("sx") == -1
    assert r.ttl("missing") == -2
    assert r.pttl("missing") == -2
    assert r.expire("sx", 100) is True
    assert r.expire("missing", 100) is False
    assert r.expire("sx", 50, nx=True) is False
    assert r.expire("sx", 50, xx=True) is True
    assert r.expire("sx", 10, gt=True) is False
    assert r.expire("sx", 10, lt=True) is True
    assert r.pexpire("sx", 5000) is True
    assert r.expireat("sx", 4102444800) is True
    assert r.expiretime("sx") == 4102444800
    assert r.pexpireat("sx", 4102444800005) is True
    assert r.pexpiretime("sx") == 4102444800005
    assert r.persist("sx") is True
    assert r.persist("sx") is False
    assert r.expiretime("sx") == -1
    assert r.set("short", "v", px=30) is True
    time.sleep(0.08)
    assert r.get("short") is None
    with pytest.raises(redis.ResponseError, match="invalid expire time in 'set' command"):
        r.set("bad", "v", ex=0)


def test_counters(r):
    assert r.incr("n") == 1
    assert r.incrby("n", 10) == 11
    assert r.decr("n") == 10
    assert r.decrby("n", 20) == -10
    r.set("max", "9223372036854775807")
    with pytest.raises(redis.ResponseError, match="increment or decrement would overflow"):
        r.incr("max")
    r.set("s", "abc")
    with pytest.raises(redis.ResponseError, match="value is not an integer or out of range"):
        r.incr("s")
    r.set("f", "10.50")
    assert r.incrbyfloat("f", 0.1) == 10.6
    assert r.get("f") == b"10.6"
    r.set("f2", "0.1")
    assert r.incrbyfloat("f2", 0.2) == 0.3
    with pytest.raises(redis.ResponseError, match="value is not a valid float"):
        r.incrbyfloat("s", 1)


def test_keyspace(r):
    assert r.flushall() is True
    assert r.dbsize() == 0
    assert r.randomkey() is None
    keys = {f"user:{i:03d}".encode() for i in range(50)}
    for k in keys:
        r.set(k, "v")
    r.set("other", "x")
    assert r.dbsize() == 51
    assert set(r.keys("user:*")) == keys
    assert r.keys("?ther") == [b"other"]
    assert set(r.scan_iter(match="user:*", count=7)) == keys
    cursor, batch = r.scan(0, match="user:*", count=1000)
    assert cursor == 0 and set(batch) == keys
    assert r.randomkey() in keys | {b"other"}
    assert r.type("other") == b"string"
    assert r.type("nope") == b"none"
    assert r.exists("other", "nope", "other") == 2
    assert r.delete("other", "nope") == 1
    assert r.unlink("user:000", "user:001") == 2
    assert r.flushdb(asynchronous=True) is True
    assert r.dbsize() == 0


def test_server_commands(r):
    info = r.info()
    assert info["redis_version"] == "7.2.4"
    assert info["role"] == "master"
    assert info["cluster_enabled"] == 0
    assert "connected_clients" in info and "used_memory" in info and "maxmemory" in info
    assert "keyspace_hits" in r.info("stats")
    r.set("a", "1")
    assert r.info("keyspace")["db0"]["keys"] == 1
    cfg = r.config_get("*")
    assert cfg["maxmemory"] == "67108864"
    assert cfg["save"] == "" and cfg["appendonly"] == "no"
    assert r.config_resetstat() is True
    seconds, micros = r.time()
    assert abs(seconds - time.time()) < 5 and 0 <= micros < 1_000_000
    assert r.echo("hi") == b"hi"
    assert r.client_id() > 0
    assert r.client_setname("py") is True
    assert r.client_getname() in ("py", b"py")
    assert r.command_count() >= 50
    cmds = r.command()
    assert cmds["get"]["arity"] == 2 and cmds["set"]["arity"] == -3
    # redis-py parses every "COMMAND ..." reply as COMMAND's; read this raw.
    conn = r.connection_pool.get_connection()
    try:
        conn.send_command("COMMAND", "DOCS", "GET")
        docs = conn.read_response()
    finally:
        r.connection_pool.release(conn)
    assert docs[b"get"][b"summary"] == b"Returns the string value of a key."  # Redis 7.2.4's text
    assert docs[b"get"][b"group"] == b"string"
    assert r.execute_command("SELECT", "0") in (True, b"OK", "OK")
    with pytest.raises(redis.ResponseError, match="DB index is out of range"):
        r.execute_command("SELECT", "16")
    with pytest.raises(redis.ResponseError, match="unknown command 'FOO', with args beginning with: 'a' "):
        r.execute_command("FOO", "a")
    with pytest.raises(redis.ResponseError, match="wrong number of arguments for 'get' command"):
        r.execute_command("GET")


def test_auth_without_password(minikv_resp):
    c = redis.Redis(port=minikv_resp.resp_port, password="anything")
    try:
        # HELLO 3 AUTH default <pw> succeeds: the default user has no password.
        assert c.ping() is True
    finally:
        c.close()
    c = redis.Redis(port=minikv_resp.resp_port, username="bob", password="pw")
    try:
        with pytest.raises(redis.AuthenticationError):
            c.ping()
    finally:
        c.close()


def test_decode_responses_and_pipeline(minikv_resp):
    c = redis.Redis(port=minikv_resp.resp_port, decode_responses=True)
    try:
        pipe = c.pipeline(transaction=False)
        for i in range(100):
            pipe.set(f"p{i}", i)
        for i in range(100):
            pipe.get(f"p{i}")
        out = pipe.execute()
        assert out[:100] == [True] * 100
        assert out[100:] == [str(i) for i in range(100)]
        assert c.mget("p1", "p2") == ["1", "2"]
    finally:
        c.close()


def test_cross_port(minikv_resp, r):
    mc = MemcacheClient(("127.0.0.1", minikv_resp.port), default_noreply=False, timeout=5)
    try:
        assert mc.set("from-mc", b"hello", expire=100) is True
        assert r.get("from-mc") == b"hello"
        assert r.ttl("from-mc") in (99, 100)
        assert r.set("from-redis", "world", ex=50) is True
        assert mc.get("from-redis") == b"world"
        assert r.incr("ctr") == 1
        assert mc.incr("ctr", 5) == 6
        assert mc.delete("from-redis") is True
        assert r.exists("from-redis") == 0
    finally:
        mc.close()


def _read_until_close(s):
    """Everything the server sends until it closes the connection."""
    data = b""
    while chunk := s.recv(4096):
        data += chunk
    return data


def test_protocol_error_closes(minikv_resp):
    with socket.create_connection(("127.0.0.1", minikv_resp.resp_port), timeout=5) as s:
        s.sendall(b"*1\r\n:1\r\n")
        data = _read_until_close(s)
        assert data == b"-ERR Protocol error: expected '$', got ':'\r\n"


def test_value_over_memcached_item_size(minikv_resp, r):
    """The RESP port takes values over memcached's -I (1 MiB by default), up
    to proto-max-bulk-len, as Redis does, and the memcached port reads them
    whole. A value larger than the whole memory limit (-m 64) is refused
    with -OOM: the old value stays and the connection stays in step."""
    big = b"{" + b"x" * (2 << 20) + b"}"
    assert r.set("blob", big) is True
    assert r.get("blob") == big
    assert r.mset({"blob2": "new", "other": b"y" * (2 << 20)}) is True
    assert r.strlen("other") == 2 << 20
    assert r.append("blob", b"z" * (3 << 20)) == len(big) + (3 << 20)
    mc = MemcacheClient(("127.0.0.1", minikv_resp.port), default_noreply=False, timeout=5)
    try:
        assert mc.get("other") == b"y" * (2 << 20)
    finally:
        mc.close()

    # 100 MB on a raw socket, then a PING pipelined behind it.
    r.set("small", "old")
    size = 100 << 20
    with socket.create_connection(("127.0.0.1", minikv_resp.resp_port), timeout=30) as s:
        s.sendall(b"*3\r\n$3\r\nSET\r\n$5\r\nsmall\r\n$%d\r\n" % size)
        chunk = b"v" * (1 << 20)
        for _ in range(size // len(chunk)):
            s.sendall(chunk)
        s.sendall(b"\r\n*1\r\n$4\r\nPING\r\n")
        want = b"-OOM command not allowed when used memory > 'maxmemory'.\r\n+PONG\r\n"
        data = b""
        while len(data) < len(want):
            part = s.recv(4096)
            assert part, f"connection closed after {data!r}"
            data += part
        assert data == want
    assert r.get("small") == b"old"
    assert r.ping()


def test_bulk_over_proto_max_closes(minikv_resp):
    """Only a bulk longer than proto-max-bulk-len (512 MB) closes."""
    with socket.create_connection(("127.0.0.1", minikv_resp.resp_port), timeout=5) as s:
        s.sendall(b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$536870913\r\n")
        data = _read_until_close(s)
        assert data == b"-ERR Protocol error: invalid bulk length\r\n"


def test_monitor_both_ports(minikv_resp, r):
    """redis-py's Monitor API reads MONITOR's stream: Redis's line format,
    the memcached port's commands as their words, AUTH redacted."""
    with r.monitor() as m:
        other = redis.Redis(port=minikv_resp.resp_port, socket_timeout=5)
        mc = MemcacheClient(("127.0.0.1", minikv_resp.port), default_noreply=False, timeout=5)
        try:
            other.set("mon", 'a "b"')
            assert mc.set("mc-mon", b"x") is True
            with pytest.raises(redis.AuthenticationError):
                other.execute_command("AUTH", "secret")
            other.get("mon")
            seen = []
            while not seen or seen[-1]["command"] != "GET mon":
                seen.append(m.next_command())
        finally:
            mc.close()
            other.close()
    commands = [c["command"] for c in seen]
    assert 'SET mon a "b"' in commands
    assert "set mc-mon 0 0 1" in commands
    assert "AUTH (redacted)" in commands
    assert all(c["db"] == 0 and c["client_address"] == "127.0.0.1" for c in seen)

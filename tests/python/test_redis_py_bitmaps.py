"""redis-py (RESP3 and RESP2) against MiniKV: bitmaps, BITFIELD,
HyperLogLog and LCS. The expected values are redis-server 7.0's."""

import pytest
import redis


@pytest.fixture(params=[3, 2], ids=["resp3", "resp2"])
def r(minikv_resp, request):
    c = redis.Redis(port=minikv_resp.resp_port, socket_timeout=5, protocol=request.param)
    yield c
    c.close()


def test_bitmaps(r):
    assert r.setbit("b", 7, 1) == 0
    assert r.getbit("b", 7) == 1
    assert r.set("s", "foobar")
    assert r.bitcount("s") == 26
    assert r.bitcount("s", 5, 30, "BIT") == 17
    assert r.bitpos("s", 1, 2) == 17
    assert r.bitpos("s", 0, 1, 20, "BIT") == 3
    assert r.bitop("AND", "d", "s", "b") == 6
    assert r.bitop("NOT", "d", "b") == 1
    assert r.get("d") == b"\xfe"
    bf = r.bitfield("bf")
    assert bf.set("i8", 0, -100).incrby("u4", "#3", 20).get("i8", 0).execute() == [0, 4, -100]
    assert r.bitfield("bf", default_overflow="FAIL").incrby("u2", 0, 9).execute() == [None]
    assert r.bitfield_ro("bf", "u8", 0) == [156]


def test_hyperloglog(r):
    assert r.pfadd("h", "a", "b", "c", "a") == 1
    assert r.pfadd("h", "a") == 0
    r.pfadd("h2", "c", "d")
    assert r.pfcount("h") == 3
    assert r.pfcount("h", "h2") == 4
    assert r.pfmerge("hm", "h", "h2")
    assert r.pfcount("hm") == 4
    raw = r.get("hm")
    assert raw[:4] == b"HYLL"
    r.set("copy", raw)
    assert r.pfcount("copy") == 4
    r.set("plain", "x")
    with pytest.raises(redis.ResponseError, match="not a valid HyperLogLog"):
        r.pfadd("plain", "a")


def test_lcs(r):
    r.set("l1", "ohmytext")
    r.set("l2", "mynewtext")
    assert r.lcs("l1", "l2") == b"mytext"
    assert r.lcs("l1", "l2", len=True) == 6
    r.hset("hash", "f", "v")
    with pytest.raises(redis.ResponseError, match="WRONGTYPE"):
        r.setbit("hash", 1, 1)


# Each command, and how many changes INFO persistence's
# rdb_changes_since_last_save counts for it, must be redis-server's:
# writes that change nothing count none.
_DIRTY_STEPS = [
    ("SETBIT", "d", 0, 0),  # creates the key: 1
    ("SETBIT", "d", 0, 0),  # the same bit: 0
    ("SETBIT", "d", 0, 1),
    ("SETBIT", "d", 0, 1),
    ("SETBIT", "d", 100, 0),  # grows the string: 1
    ("BITFIELD", "d", "SET", "u8", 0, 128),  # the byte is 128 already: 0
    ("BITFIELD", "d", "INCRBY", "u8", 0, 0),
    ("BITFIELD", "d", "OVERFLOW", "FAIL", "INCRBY", "u8", 0, 255),  # refused: 0
    ("BITFIELD", "d", "SET", "u8", 0, 128, "SET", "u8", 8, 0),
    ("BITFIELD", "d", "GET", "u8", 0),
    ("BITFIELD", "d", "SET", "u8", 0, 1, "GET", "u8", 0),  # changed: 1
    ("BITFIELD", "new", "SET", "u8", 0, 0),  # creates the key: 1
    ("SET", "s", "abc"),
    ("SETRANGE", "s", 0, "abc"),  # Redis counts it, unchanged or not
    ("SETRANGE", "s", 1, ""),
    ("APPEND", "s", ""),
]


def _changes(r):
    return r.info("persistence")["rdb_changes_since_last_save"]


def _dirty_transcript(port):
    r = redis.Redis(port=port, socket_timeout=5, protocol=2)
    try:
        out = []
        for step in _DIRTY_STEPS:
            before = _changes(r)
            reply = r.execute_command(*step)
            out.append((step, reply, _changes(r) - before))
        return out
    finally:
        r.close()


def test_dirty_counts_like_redis(minikv_resp_durable, redis_server):
    assert _dirty_transcript(minikv_resp_durable.resp_port) == _dirty_transcript(redis_server)

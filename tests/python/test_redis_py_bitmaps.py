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

"""redis-py 8's client-side cache (RESP3 CLIENT TRACKING) against MiniKV.

The cache serves repeated reads from the client's memory; the server's
invalidation pushes evict an entry when the key changes (through the Redis
port, MiniKV's memcached port, or a FLUSHALL), so a read after a change sees
the new value.

redis-py turns its cache on only for servers that say they are Redis 7.4 or
later (CacheProxyConnection.MIN_ALLOWED_VERSION): a version gate, not a
protocol need, since tracking is Redis 6's. MiniKV says 7.2.4 (the release
its differential tests compare with), so the test lowers the gate to the
version both servers here report, and runs the same steps on redis-server
7.2.4 to show they hold there.
"""

import time

import pytest
import redis
from redis.cache import CacheConfig
from redis.connection import CacheProxyConnection


@pytest.fixture
def cache_gate(monkeypatch):
    monkeypatch.setattr(CacheProxyConnection, "MIN_ALLOWED_VERSION", "7.2.0")


def _eventually(fn, want, timeout=10.0):
    deadline = time.monotonic() + timeout
    got = fn()
    while got != want and time.monotonic() < deadline:
        time.sleep(0.01)
        got = fn()
    return got


def _cache_steps(port, other_write=None):
    cached = redis.Redis(port=port, protocol=3, cache_config=CacheConfig())
    writer = redis.Redis(port=port)
    try:
        writer.set("cc:a", "1")
        assert cached.get("cc:a") == b"1"
        assert cached.get_cache().size == 1  # the read was cached
        assert cached.get("cc:a") == b"1"  # served from the cache

        writer.set("cc:a", "2")  # another client
        assert _eventually(lambda: cached.get("cc:a"), b"2") == b"2"

        if other_write is not None:
            other_write("cc:a", b"3")
            assert _eventually(lambda: cached.get("cc:a"), b"3") == b"3"

        cached.set("cc:b", "own")
        assert cached.get("cc:b") == b"own"
        cached.set("cc:b", "own2")  # its own write invalidates its entry too
        assert cached.get("cc:b") == b"own2"

        writer.flushall()
        assert _eventually(lambda: cached.get("cc:a"), None) is None
        assert cached.get_cache().size <= 1
    finally:
        cached.close()
        writer.close()


def test_client_side_cache_minikv(minikv_resp, cache_gate):
    mc = minikv_resp.client()
    try:
        _cache_steps(minikv_resp.resp_port, other_write=mc.set)  # the memcached port too
    finally:
        mc.close()


def test_client_side_cache_redis(redis_server, cache_gate):
    _cache_steps(redis_server)

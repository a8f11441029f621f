"""Rate limiters written in Lua against the server given by lua_target
(conftest.py: MiniKV by default, redis-server with MINIKV_LUA_TARGET=redis).

Two kinds: the published `limits` package (its Redis storage runs every
strategy as a Lua script through redis-py's register_script: INCR+EXPIRE for
the fixed window, a sorted list for the moving window, a pair of counters
renamed into each other for the sliding window), and a token bucket of the
kind applications write for themselves, whose clock is an argument so that
refills are exact and no test waits for time to pass.
"""

import threading

import pytest
from limits import RateLimitItemPerMinute, RateLimitItemPerHour
from limits.storage import RedisStorage
from limits.strategies import (
    FixedWindowRateLimiter,
    MovingWindowRateLimiter,
    SlidingWindowCounterRateLimiter,
)


@pytest.fixture
def storage(lua_target):
    s = RedisStorage(lua_target.url(), socket_timeout=10)
    assert s.check()
    yield s
    s.storage.close()


@pytest.mark.parametrize(
    "strategy",
    [FixedWindowRateLimiter, MovingWindowRateLimiter, SlidingWindowCounterRateLimiter],
    ids=["fixed", "moving", "sliding"],
)
def test_limits_strategies(storage, strategy):
    limiter = strategy(storage)
    # An hour's window: no window boundary can pass during the test.
    item = RateLimitItemPerHour(5)
    for i in range(5):
        assert limiter.test(item, "user", "1"), i
        assert limiter.hit(item, "user", "1"), i
    assert not limiter.test(item, "user", "1")
    assert not limiter.hit(item, "user", "1")
    stats = limiter.get_window_stats(item, "user", "1")
    assert stats.remaining == 0
    # Another identity has its own budget.
    assert limiter.hit(item, "user", "2")
    assert limiter.get_window_stats(item, "user", "2").remaining == 4
    # More than the limit at once is refused; all of it at once passes.
    # (The fixed window counts refused hits too, so each gets its own key.)
    assert not limiter.hit(item, "user", "3", cost=6)
    assert limiter.hit(item, "user", "4", cost=5)
    assert not limiter.hit(item, "user", "4")
    limiter.clear(item, "user", "1")
    assert limiter.hit(item, "user", "1")


def test_limits_moving_window_entries(storage):
    limiter = MovingWindowRateLimiter(storage)
    item = RateLimitItemPerMinute(3)
    for _ in range(3):
        assert limiter.hit(item, "api")
    assert not limiter.hit(item, "api")
    # The moving window keeps one timestamp per hit, newest first, in a list.
    key = item.key_for("api")
    c = storage.storage
    assert c.llen(f"{storage.key_prefix}:{key}") == 3
    start, count = storage.get_moving_window(key, 3, 60)
    assert count == 3 and start > 0


def test_limits_concurrent_hits(lua_target):
    """Eight clients hit one moving-window limit of 50 twenty times each: the
    script is atomic, so exactly 50 hits pass."""
    item = RateLimitItemPerHour(50)
    passed = []
    storages = [RedisStorage(lua_target.url(), socket_timeout=10) for _ in range(8)]

    def work(s):
        limiter = MovingWindowRateLimiter(s)
        passed.append(sum(limiter.hit(item, "shared") for _ in range(20)))

    threads = [threading.Thread(target=work, args=(s,)) for s in storages]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    for s in storages:
        s.storage.close()
    assert not any(t.is_alive() for t in threads)
    assert sum(passed) == 50


#: A token bucket: KEYS[1] is a hash of the tokens left and the time they were
#: counted at; ARGV is capacity, refill rate in tokens per second, the time
#: now in milliseconds, and the tokens wanted. Returns {allowed, tokens left as
#: a string} (a Lua number would be truncated to an integer in the reply).
TOKEN_BUCKET = """
local capacity = tonumber(ARGV[1])
local rate = tonumber(ARGV[2])
local now = tonumber(ARGV[3])
local wanted = tonumber(ARGV[4])
local state = redis.call('HMGET', KEYS[1], 'tokens', 'ts')
local tokens = tonumber(state[1])
local ts = tonumber(state[2])
if tokens == nil then
  tokens = capacity
  ts = now
end
local elapsed = math.max(0, now - ts)
tokens = math.min(capacity, tokens + elapsed * rate / 1000)
local allowed = 0
if tokens >= wanted then
  tokens = tokens - wanted
  allowed = 1
end
redis.call('HSET', KEYS[1], 'tokens', tokens, 'ts', math.max(now, ts))
redis.call('PEXPIRE', KEYS[1], math.ceil(capacity / rate * 1000))
return {allowed, tostring(tokens)}
"""

T0 = 1_700_000_000_000  # milliseconds


@pytest.fixture
def bucket(lua_target):
    c = lua_target.client()
    script = c.register_script(TOKEN_BUCKET)

    # A token every 16 s (binary fractions keep the sums exact), so the key's
    # TTL, the time to fill the bucket, is 80 s: no stall of the test
    # machine lets a bucket expire between two calls.
    def take(key, now, wanted=1, capacity=5, rate=0.0625, client=None):
        allowed, left = script(keys=[key], args=[capacity, rate, now, wanted], client=client)
        return allowed, float(left)

    take.client = c
    yield take
    c.close()


def test_token_bucket_burst_then_refill(bucket):
    for i in range(5):
        assert bucket("b", T0) == (1, 4 - i)
    assert bucket("b", T0) == (0, 0.0)
    # 16 s at a token every 16 s is one token.
    assert bucket("b", T0 + 16_000) == (1, 0.0)
    assert bucket("b", T0 + 16_000) == (0, 0.0)
    # A long pause fills the bucket to its capacity, no more.
    assert bucket("b", T0 + 1_000_000) == (1, 4.0)
    # Fractional tokens accumulate: 8 s is half a token.
    assert bucket("c", T0, wanted=5) == (1, 0.0)
    assert bucket("c", T0 + 8_000) == (0, 0.5)
    assert bucket("c", T0 + 16_000) == (1, 0.0)
    # A clock that goes back does not refill.
    assert bucket("c", T0) == (0, 0.0)
    # Asking for more than the capacity never passes.
    assert bucket("d", T0, wanted=6) == (0, 5.0)
    c = bucket.client
    assert c.hmget("b", "tokens", "ts") == [b"4", str(T0 + 1_000_000).encode()]
    assert 0 < c.pttl("b") <= 80_000


def test_token_bucket_concurrent(lua_target, bucket):
    """Eight clients take 25 tokens each from one bucket of 100 at the same
    instant: the script is atomic, so exactly 100 are granted."""
    clients = [lua_target.client() for _ in range(8)]
    granted = []

    def work(c):
        granted.append(sum(bucket("shared", T0, capacity=100, rate=1, client=c)[0] for _ in range(25)))

    threads = [threading.Thread(target=work, args=(c,)) for c in clients]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    for c in clients:
        c.close()
    assert not any(t.is_alive() for t in threads)
    assert sum(granted) == 100
    assert bucket("shared", T0, capacity=100, rate=1) == (0, 100.0 - 100)

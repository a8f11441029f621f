"""redis-py's PubSub against MiniKV's RESP port, in RESP3 (redis-py 8's
default, push messages) and RESP2 (subscribed mode).

Messages are waited for with get_message(timeout=...), a bound on a wait
that ends as soon as the message arrives, never a sleep.
"""

import pytest
import redis


def _next(p, kind, timeout=5.0):
    """The next message of the given type, skipping nothing else."""
    m = p.get_message(timeout=timeout)
    assert m is not None, f"no {kind} within {timeout}s"
    assert m["type"] == kind, m
    return m


@pytest.mark.parametrize("protocol", [2, 3])
def test_subscribe_publish(minikv_resp, protocol):
    sub = redis.Redis(port=minikv_resp.resp_port, socket_timeout=5, protocol=protocol)
    pub = redis.Redis(port=minikv_resp.resp_port, socket_timeout=5)
    p = sub.pubsub()
    try:
        p.subscribe("news")
        assert _next(p, "subscribe")["channel"] == b"news"
        p.psubscribe("n*")
        assert _next(p, "psubscribe")["channel"] == b"n*"

        assert pub.publish("news", "hello") == 2
        m = _next(p, "message")
        assert (m["channel"], m["data"]) == (b"news", b"hello")
        m = _next(p, "pmessage")
        assert (m["pattern"], m["channel"], m["data"]) == (b"n*", b"news", b"hello")

        assert pub.publish("nothing-here", "x") == 1  # the pattern only
        assert _next(p, "pmessage")["channel"] == b"nothing-here"
        assert pub.publish("other", "x") == 0

        assert pub.pubsub_numsub("news", "other") == [(b"news", 1), (b"other", 0)]
        assert pub.pubsub_numpat() == 1
        assert pub.pubsub_channels() == [b"news"]

        p.unsubscribe("news")
        assert _next(p, "unsubscribe")["data"] == 1
        p.punsubscribe()
        assert _next(p, "punsubscribe")["data"] == 0
        assert pub.publish("news", "gone") == 0
        assert pub.pubsub_numpat() == 0
    finally:
        p.close()
        sub.close()
        pub.close()


def test_handler_thread(minikv_resp):
    """run_in_thread with a callback, as applications use it."""
    sub = redis.Redis(port=minikv_resp.resp_port, socket_timeout=5)
    pub = redis.Redis(port=minikv_resp.resp_port, socket_timeout=5)
    got = []
    import threading

    done = threading.Event()

    def handler(m):
        got.append(m["data"])
        if len(got) == 100:
            done.set()

    p = sub.pubsub(ignore_subscribe_messages=True)
    p.subscribe(**{"jobs": handler})
    t = p.run_in_thread(sleep_time=0.01)
    try:
        # Wait for the subscription to be registered before publishing.
        for _ in range(500):
            if pub.pubsub_numsub("jobs")[0][1] == 1:
                break
            done.wait(0.01)
        for i in range(100):
            assert pub.publish("jobs", str(i)) == 1
        assert done.wait(10), f"only {len(got)} of 100 messages arrived"
        assert got == [str(i).encode() for i in range(100)]
    finally:
        t.stop()
        t.join(5)
        p.close()
        sub.close()
        pub.close()


def test_resp2_subscribed_mode_refuses_other_commands(minikv_resp):
    c = redis.Redis(port=minikv_resp.resp_port, socket_timeout=5, protocol=2)
    p = c.pubsub()
    try:
        p.subscribe("a")
        _next(p, "subscribe")
        p.execute_command("GET", "k")
        with pytest.raises(redis.ResponseError, match=r"^Can't execute 'get': only \(P\|S\)SUBSCRIBE"):
            p.parse_response(timeout=5)
        p.ping()
        assert p.parse_response(timeout=5) == [b"pong", b""]
    finally:
        p.close()
        c.close()


def _transcript(port, protocol, steps):
    """Runs steps on a redis-py PubSub with ignore_subscribe_messages=True
    and a separate publisher, and returns what the client saw: each
    get_message() result (None for an ignored confirmation; the steps ask
    only for what a server like Redis sends, so none waits out its
    timeout there), each PUBLISH count, and p.subscribed, the state
    redis-py keeps from the confirmations it reads."""
    sub = redis.Redis(port=port, socket_timeout=5, protocol=protocol)
    pub = redis.Redis(port=port, socket_timeout=5, protocol=2)
    p = sub.pubsub(ignore_subscribe_messages=True)
    seen = []
    try:
        for step, *args in steps:
            if step == "get":
                m = p.get_message(timeout=10.0)  # a bound: every get here has something to read
                seen.append(None if m is None else (m["type"], m["channel"], m["data"]))
            elif step == "publish":
                seen.append(("published", pub.publish(*args)))
            elif step == "subscribed":
                seen.append(("subscribed", p.subscribed))
            else:
                getattr(p, step)(*args)
    finally:
        p.close()
        sub.close()
        pub.close()
    return seen


# Sequences where MiniKV's confirmations differed from Redis 7.0.15's:
# under CLIENT REPLY OFF it sent none, so redis-py, which learns from the
# unsubscribe confirmations that it is no longer subscribed, stayed
# "subscribed" on MiniKV only.
_REPLY_OFF = [
    ("execute_command", "CLIENT", "REPLY", "OFF"),
    ("subscribe", "ch"),
    ("psubscribe", "c*"),
    ("get",),
    ("get",),
    ("publish", "ch", "hi"),
    ("get",),
    ("get",),
    ("unsubscribe",),
    ("get",),
    ("subscribed",),
    ("punsubscribe",),
    ("get",),
    ("subscribed",),
]


@pytest.mark.parametrize("protocol", [2, 3])
def test_ignore_subscribe_messages_like_redis(minikv_resp, redis_server, protocol):
    """get_message() with ignore_subscribe_messages=True sees on MiniKV
    what it sees on redis-server, step by step."""
    want = _transcript(redis_server, protocol, _REPLY_OFF)
    got = _transcript(minikv_resp.resp_port, protocol, _REPLY_OFF)
    assert got == want
    assert want[-1] == ("subscribed", False)

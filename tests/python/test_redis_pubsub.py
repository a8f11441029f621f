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

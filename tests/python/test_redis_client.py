"""redis-py's client and config commands against MiniKV with both ports:
CLIENT LIST (memcached connections included), CLIENT KILL of a memcached
and of a RESP connection, CLIENT PAUSE WRITE, CONFIG SET/GET.

Waits are polls with a bound that only guards against a hang.
"""

import threading
import time

import pytest
import redis


def _poll(cond, what, bound=30.0):
    deadline = time.monotonic() + bound
    while not cond():
        assert time.monotonic() < deadline, f"gave up waiting for {what}"
        time.sleep(0.005)


def _r(server, **kw):
    return redis.Redis(port=server.resp_port, socket_timeout=30, **kw)


def test_client_list_and_kill_both_ports(minikv_resp):
    admin = _r(minikv_resp)
    mc = minikv_resp.client()
    assert mc.get("nothing") is None
    victim = _r(minikv_resp)
    victim.client_setname("victim")

    clients = admin.client_list()
    memcached = [c for c in clients if c["flags"] == "m"]
    assert len(memcached) == 1, clients
    assert memcached[0]["cmd"] == "get" and memcached[0]["resp"] == "0"
    named = [c for c in clients if c["name"] == "victim"]
    assert len(named) == 1 and named[0]["cmd"] == "client|setname", clients

    # The memcached connection, by address (the old form), then the RESP
    # one by ID (the filter form, which counts).
    assert admin.client_kill(memcached[0]["addr"]) is True
    with pytest.raises(Exception):
        mc.get("nothing")  # pymemcache sees its connection closed
    assert admin.client_kill_filter(_id=named[0]["id"]) == 1
    _poll(lambda: not any(c["name"] == "victim" for c in admin.client_list()), "the victim to leave CLIENT LIST")
    with pytest.raises(redis.exceptions.ResponseError, match="No such client"):
        admin.client_kill(memcached[0]["addr"])


def test_client_pause_write(minikv_resp):
    admin, reader, writer = _r(minikv_resp), _r(minikv_resp), _r(minikv_resp)
    writer.set("k", "before")
    assert admin.client_pause(600000, all=False) is True
    done = threading.Event()
    result = {}

    def write():
        result["set"] = writer.set("k", "after")
        done.set()

    t = threading.Thread(target=write)
    t.start()
    # The SET is paused once its connection shows flags=b.
    _poll(lambda: any("b" in c["flags"] for c in admin.client_list()), "the SET to be paused")
    assert reader.get("k") == b"before"  # reads go on
    assert not done.is_set()
    assert admin.client_unpause() in (True, b"OK")  # redis-py returns the raw reply
    assert done.wait(30), "SET still waiting after CLIENT UNPAUSE"
    t.join()
    assert result["set"] is True
    assert reader.get("k") == b"after"


def test_config_set_get(minikv_resp):
    r = _r(minikv_resp)
    assert r.config_set("maxmemory", "32mb") is True
    assert r.config_get("maxmemory") == {"maxmemory": "33554432"}
    assert r.config_set("timeout", "300") is True
    assert r.config_get("timeout") == {"timeout": "300"}
    with pytest.raises(redis.exceptions.ResponseError, match="can't set immutable config"):
        r.config_set("databases", "4")
    with pytest.raises(redis.exceptions.ResponseError, match="running without a config file"):
        r.config_rewrite()

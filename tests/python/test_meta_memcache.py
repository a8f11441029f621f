"""meta-memcache (a client that speaks only the meta protocol: mg, ms, md,
ma, mn) against MiniKV: the round trips its high-level API makes."""

import pytest
from meta_memcache import (
    CacheClient,
    Key,
    LeasePolicy,
    ServerAddress,
    SetMode,
    connection_pool_factory_builder,
)


@pytest.fixture
def meta(minikv):
    return CacheClient.cache_client_from_servers(
        servers=[ServerAddress(host="127.0.0.1", port=minikv.port)],
        connection_pool_factory_fn=connection_pool_factory_builder(),
    )


def test_set_get_delete(meta, client):
    k = Key("mm:a")
    assert meta.set(key=k, value={"x": 1}, ttl=60)
    assert meta.get(key=k) == {"x": 1}
    assert meta.touch(key=k, ttl=30)
    assert meta.delete(key=k)
    assert meta.get(key=k) is None
    assert meta.set(key="mm:s", value=b"bytes", ttl=0)
    assert client.get("mm:s") is not None  # the classic protocol sees the item


def test_multi_get(meta):
    assert meta.set(key=Key("mm:m1"), value="one", ttl=0)
    got = meta.multi_get(keys=[Key("mm:m1"), Key("mm:m2")])
    assert got == {Key("mm:m1"): "one", Key("mm:m2"): None}


def test_cas_and_modes(meta):
    k = Key("mm:cas")
    assert meta.set(key=k, value=1, ttl=0)
    value, cas = meta.get_cas(key=k)
    assert value == 1 and cas
    assert meta.set(key=k, value=2, ttl=0, cas_token=cas)
    assert not meta.set(key=k, value=3, ttl=0, cas_token=cas)
    assert meta.get(key=k) == 2
    assert meta.set(key=Key("mm:add"), value=1, ttl=0, set_mode=SetMode.ADD)
    assert not meta.set(key=Key("mm:add"), value=1, ttl=0, set_mode=SetMode.ADD)


def test_counters(meta):
    k = Key("mm:n")
    assert not meta.delta(key=k, delta=5)
    assert meta.delta_initialize(key=k, delta=5, initial_value=10, initial_ttl=60)
    assert meta.delta_and_get(key=k, delta=2) == 12


def test_lease(meta):
    k = Key("mm:lease")
    # The first caller wins the lease on a miss (N vivify, W flag) and gets None.
    assert meta.get_or_lease(key=k, lease_policy=LeasePolicy(ttl=30)) is None
    assert meta.set(key=k, value="filled", ttl=60)
    assert meta.get_or_lease(key=k, lease_policy=LeasePolicy()) == "filled"


def test_unicode_and_long_keys(meta):
    # Keys that are not plain ASCII or are over 250 bytes go out hashed or
    # base64-encoded (b flag).
    k = Key("mm:ü ключ " + "x" * 300)
    assert meta.set(key=k, value="u", ttl=0)
    assert meta.get(key=k) == "u"

"""redis-py's redis.lock.Lock against the server given by lua_target
(conftest.py: MiniKV by default, redis-server with MINIKV_LUA_TARGET=redis).

Lock.acquire is SET NX PX, but release, extend and reacquire are Lua scripts
that redis-py registers once and runs with EVALSHA (falling back to EVAL on
NOSCRIPT): the scripting of issue 38 as a client library uses it. Every wait
is bounded (blocking_timeout, join timeouts) and nothing asserts how long an
operation took: an expiry is waited for by a competing acquire that blocks
until it happens.
"""

import threading

import pytest
import redis
from redis.exceptions import LockError, LockNotOwnedError

NAME = "lock:resource"


@pytest.fixture
def clients(lua_target):
    """Two independent clients, as two processes competing for a lock would
    have, in RESP2 and RESP3 (redis-py 8's default)."""
    a = lua_target.client(protocol=3)
    b = lua_target.client(protocol=2)
    yield a, b
    a.close()
    b.close()


def test_second_holder_fails_while_first_holds(clients):
    a, b = clients
    la = a.lock(NAME, timeout=30, sleep=0.01)
    lb = b.lock(NAME, timeout=30, sleep=0.01)
    assert la.acquire(blocking=False) is True
    assert la.owned() and la.locked()
    assert lb.locked() and not lb.owned()
    assert lb.acquire(blocking=False) is False
    assert lb.acquire(blocking=True, blocking_timeout=0.2) is False
    la.release()
    assert not la.locked()
    assert lb.acquire(blocking=False) is True
    assert lb.owned() and not la.owned()
    lb.release()


def test_blocked_holder_gets_the_lock_on_release(clients):
    a, b = clients
    la = a.lock(NAME, timeout=30, sleep=0.01)
    assert la.acquire(blocking=False)
    got = []
    lb = b.lock(NAME, timeout=30, sleep=0.01, thread_local=False)

    def wait_for_it():
        got.append(lb.acquire(blocking=True, blocking_timeout=10))

    t = threading.Thread(target=wait_for_it)
    t.start()
    la.release()
    t.join(15)
    assert not t.is_alive()
    assert got == [True]
    assert lb.owned()
    lb.release()


def test_context_manager(clients):
    a, b = clients
    with a.lock(NAME, timeout=30, blocking_timeout=5):
        assert b.get(NAME) is not None
        assert b.lock(NAME).acquire(blocking=False) is False
    assert b.exists(NAME) == 0


def test_timeout_expires_and_the_old_owner_cannot_release(clients):
    a, b = clients
    la = a.lock(NAME, timeout=0.2, sleep=0.01)
    lb = b.lock(NAME, timeout=30, sleep=0.01)
    assert la.acquire(blocking=False)
    assert a.pttl(NAME) <= 200  # -2 if it expired already
    # b blocks until the 200 ms expiry frees the lock: the bound is generous.
    assert lb.acquire(blocking=True, blocking_timeout=10) is True
    assert not la.owned()
    # release forgets the token as it fails, so it comes last.
    with pytest.raises(LockNotOwnedError):
        la.extend(10)
    with pytest.raises(LockNotOwnedError):
        la.reacquire()
    with pytest.raises(LockNotOwnedError):
        la.release()
    assert lb.owned()
    lb.release()


def test_extend_and_reacquire(clients):
    a, _ = clients
    la = a.lock(NAME, timeout=100, sleep=0.01)
    assert la.acquire(blocking=False)
    assert 0 < a.pttl(NAME) <= 100_000
    # extend adds to the remaining time: over 100 s now.
    assert la.extend(100) is True
    assert 100_000 < a.pttl(NAME) <= 200_000
    # replace_ttl sets it outright.
    assert la.extend(50, replace_ttl=True) is True
    assert 0 < a.pttl(NAME) <= 50_000
    # reacquire resets it to the lock's timeout.
    assert la.reacquire() is True
    assert 50_000 < a.pttl(NAME) <= 100_000
    la.release()
    assert a.exists(NAME) == 0
    with pytest.raises(LockError):
        la.extend(1)  # client side: the lock is not acquired


def test_release_by_non_owner(clients):
    a, b = clients
    la = a.lock(NAME, timeout=30)
    assert la.acquire(blocking=False)
    token = a.get(NAME)
    intruder = b.lock(NAME, timeout=30, thread_local=False)
    intruder.local.token = b"not-the-owner-token"
    with pytest.raises(LockNotOwnedError):
        intruder.extend(10)
    with pytest.raises(LockNotOwnedError):
        intruder.reacquire()
    with pytest.raises(LockNotOwnedError):
        intruder.release()
    # The scripts compared tokens and changed nothing.
    assert a.get(NAME) == token
    assert 0 < a.pttl(NAME) <= 30_000
    la.release()
    # Released: nobody owns it, and releasing again is refused by the script.
    stale = b.lock(NAME, thread_local=False)
    stale.local.token = token
    with pytest.raises(LockNotOwnedError):
        stale.release()


def test_scripts_reload_after_script_flush(clients):
    """redis-py runs the registered scripts with EVALSHA and, on NOSCRIPT,
    loads them again: SCRIPT FLUSH must give that error, not another."""
    a, b = clients
    la = a.lock(NAME, timeout=30)
    assert la.acquire(blocking=False)
    la.release()
    assert a.script_exists(la.lua_release.sha) == [True]
    assert b.script_flush() is True
    assert a.script_exists(la.lua_release.sha) == [False]
    with pytest.raises(redis.exceptions.NoScriptError):
        b.evalsha(la.lua_release.sha, 1, NAME, "x")
    lb = b.lock(NAME, timeout=30)
    assert lb.acquire(blocking=False)
    lb.release()  # EVALSHA, NOSCRIPT, then EVAL
    assert a.exists(NAME) == 0


def test_many_threads_one_holder_at_a_time(lua_target):
    """Eight threads take the lock ten times each around a read-modify-write
    of a counter: with the lock working, no increment is lost."""
    clients = [lua_target.client() for _ in range(8)]
    errors = []

    def work(c):
        try:
            for _ in range(10):
                with c.lock(NAME, timeout=30, sleep=0.005, blocking_timeout=20):
                    v = int(c.get("counter") or 0)
                    c.set("counter", v + 1)
        except Exception as e:  # reported below, with the thread's error
            errors.append(e)

    threads = [threading.Thread(target=work, args=(c,)) for c in clients]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    try:
        assert not any(t.is_alive() for t in threads)
        assert errors == []
        assert int(clients[0].get("counter")) == 80
        assert clients[0].exists(NAME) == 0
    finally:
        for c in clients:
            c.close()

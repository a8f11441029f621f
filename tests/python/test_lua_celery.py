"""Celery 5 with its broker and result backend on the server given by
lua_target (conftest.py: MiniKV by default, redis-server with
MINIKV_LUA_TARGET=redis).

Scripting in Celery's path: kombu's Redis transport guards its restore of
unacknowledged messages with a redis-py Lock (released and extended by Lua
scripts, run with EVALSHA) and keeps exchange bindings fresh with scripts of
its own; Celery's Redis result backend counts a chord's finished parts with a
Lua script. The worker is a real `celery worker` process (solo pool), waited
for by its "ready" log line, stopped by SIGTERM (a warm shutdown, exit 0).
Every wait has a generous bound and none is asserted on.
"""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from kombu import Connection
from kombu.transport.redis import Mutex, MutexHeld

HERE = Path(__file__).resolve().parent
WAIT = 30  # seconds: the bound of every wait here


def _wait_for_line(path, text, proc, timeout=WAIT):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        log = path.read_text(errors="replace")
        if text in log:
            return log
        if proc.poll() is not None:
            break
        time.sleep(0.05)
    pytest.fail(f"no {text!r} from the worker (exit status {proc.poll()}):\n{path.read_text(errors='replace')}")


@pytest.fixture
def celery_env(lua_target, monkeypatch):
    env = {
        # Celery's usual layout: the broker in database 0, the results in 1.
        "MINIKV_CELERY_BROKER": lua_target.url(0),
        "MINIKV_CELERY_BACKEND": lua_target.url(1),
    }
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    monkeypatch.syspath_prepend(str(HERE))
    sys.modules.pop("celery_lua_app", None)  # configured from this test's env
    import celery_lua_app

    yield celery_lua_app
    celery_lua_app.app.close()
    sys.modules.pop("celery_lua_app", None)


@pytest.fixture
def worker(celery_env, tmp_path):
    log_path = tmp_path / "worker.log"
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(HERE), os.environ.get("PYTHONPATH", "")]))
    with open(log_path, "wb") as log:
        proc = subprocess.Popen(
            [sys.executable, "-m", "celery", "-A", "celery_lua_app", "worker",
             "--pool", "solo", "--concurrency", "1", "--hostname", "lua@test",
             "--without-gossip", "--without-mingle", "--without-heartbeat",
             "--loglevel", "INFO"],
            cwd=str(HERE), env=env, stdout=log, stderr=subprocess.STDOUT,
        )
    try:
        _wait_for_line(log_path, "ready.", proc)
        yield proc, log_path
    finally:
        if proc.poll() is None:
            proc.kill()  # by PID: only the worker started here
            proc.wait()


def test_celery_worker_tasks_results_chord(celery_env, worker, lua_target):
    from celery import chord, group

    tasks = celery_env
    app = tasks.app
    proc, log_path = worker

    # Remote control goes over the broker's fanout (PUBLISH/PSUBSCRIBE).
    replies = app.control.ping(destination=["lua@test"], timeout=WAIT)
    assert any("lua@test" in r for r in replies), replies

    assert tasks.add.delay(2, 3).get(timeout=WAIT) == 5
    assert tasks.echo.delay({"a": [1, "x", None]}).get(timeout=WAIT) == {"a": [1, "x", None]}

    res = group(tasks.add.s(i, i) for i in range(20)).apply_async()
    assert res.get(timeout=WAIT) == [2 * i for i in range(20)]

    # A chord: each finished part runs the backend's Lua script; the last one
    # to finish starts the body.
    res = chord(tasks.add.s(i, 1) for i in range(10))(tasks.total.s())
    assert res.get(timeout=WAIT) == sum(i + 1 for i in range(10))

    failed = tasks.fail.delay("boom")
    with pytest.raises(ValueError, match="boom"):
        failed.get(timeout=WAIT)
    assert failed.state == "FAILURE"

    # Every message was acknowledged: nothing is left unacked or queued.
    broker = lua_target.client()
    try:
        assert broker.hlen("unacked") == 0
        assert broker.zcard("unacked_index") == 0
        assert broker.llen("celery") == 0
        assert broker.exists("unacked_mutex") == 0
        # The scripts ran: the chord's counter, the restore mutex's release.
        stats = broker.info("commandstats")
        assert stats.get("cmdstat_evalsha", {}).get("calls", 0) >= 10, stats
        # The results went to database 1, the broker's keys stayed in 0.
        results = lua_target.client(db=1)
        try:
            assert results.keys("celery-task-meta-*"), results.keys("*")
            assert not results.exists("unacked", "celery", "_kombu.binding.celery")
        finally:
            results.close()
        assert not broker.keys("celery-task-meta-*")
        assert broker.exists("_kombu.binding.celery") == 1
    finally:
        broker.close()

    # Warm shutdown on SIGTERM, exit status 0.
    proc.send_signal(signal.SIGTERM)
    try:
        code = proc.wait(timeout=WAIT)
    except subprocess.TimeoutExpired:
        pytest.fail("the worker did not stop within %d s of SIGTERM:\n%s" % (WAIT, log_path.read_text(errors="replace")))
    log = log_path.read_text(errors="replace")
    assert code == 0, log
    assert "Unrecoverable error" not in log and "CRITICAL" not in log, log


def test_kombu_unacked_mutex(lua_target):
    """kombu's Mutex is redis-py's Lock taken without blocking: a second
    holder gets MutexHeld, and release (a Lua script) frees it."""
    a = lua_target.client()
    b = lua_target.client()
    try:
        with Mutex(a, "unacked_mutex", 300):
            assert 0 < a.pttl("unacked_mutex") <= 300_000
            with pytest.raises(MutexHeld):
                with Mutex(b, "unacked_mutex", 300):
                    pass
        assert a.exists("unacked_mutex") == 0
        with Mutex(b, "unacked_mutex", 300):
            pass
    finally:
        a.close()
        b.close()


def test_kombu_restores_unacked_message(lua_target):
    """A message taken and never acknowledged goes back to its queue when
    another consumer's restore pass (under the Lua-released mutex) finds it
    past the visibility timeout."""
    opts = {"visibility_timeout": 0.001, "socket_timeout": 10}
    with Connection(lua_target.url(), transport_options=opts) as c1, \
            Connection(lua_target.url(), transport_options=opts) as c2:
        q1 = c1.SimpleQueue("jobs")
        q1.put({"job": 1})
        m = q1.get(timeout=WAIT)
        assert m.payload == {"job": 1}
        probe = lua_target.client()
        try:
            assert probe.hlen("unacked") == 1
            q2 = c2.SimpleQueue("jobs")
            qos = q2.channel.qos
            deadline = time.monotonic() + WAIT
            while probe.hlen("unacked") and time.monotonic() < deadline:
                qos.restore_visible(num=10, interval=1)
                time.sleep(0.01)
            assert probe.hlen("unacked") == 0
            assert probe.exists("unacked_mutex") == 0
            again = q2.get(timeout=WAIT)
            assert again.payload == {"job": 1}
            assert again.headers.get("redelivered") is True
            again.ack()
            # The first consumer's late ack finds nothing to remove.
            m.ack()
            assert probe.hlen("unacked") == 0
            q2.close()
        finally:
            probe.close()
        q1.close()

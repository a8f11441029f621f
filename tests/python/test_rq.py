"""python-rq 3 against MiniKV (issue 40): rq keeps every job's results in a
stream (rq:results:<job id>): the worker XADDs each execution's result with
MAXLEN ~ 10, job.latest_result() reads it with XREVRANGE ... COUNT 1, or with
XREAD BLOCK when given a timeout, and job.results() with XRANGE.

The worker is rq's SimpleWorker in burst mode, in this process (the job
functions below are imported by name from this module). The server is
MiniKV by default; MINIKV_RQ_TARGET=redis runs the same tests against a
redis-server 7.2.4 on a free port, to prove the tests themselves. While
MiniKV answers XADD with the unknown-command error (before streams land)
the tests skip with STREAMS_MISSING.
"""

import os
import threading
import time

import pytest
import redis
from rq import Queue, SimpleWorker
from rq.job import Job, JobStatus
from rq.results import Result

RQ_TARGET = os.environ.get("MINIKV_RQ_TARGET", "minikv")
STREAMS_MISSING = "streams (issue 40) not merged yet"
WAIT = 20  # seconds: the bound of every wait here


def add(a, b):
    return a + b


def shout(word):
    return {"word": word.upper(), "len": len(word)}


def nothing():
    return None


def divide(a, b):
    return a / b


class Boom(Exception):
    pass


def explode(msg):
    raise Boom(msg)


@pytest.fixture
def conn(request):
    """A redis-py connection (RESP2, as rq uses by default) to the target."""
    if RQ_TARGET == "redis":
        port = request.getfixturevalue("redis_server")
    elif RQ_TARGET == "minikv":
        port = request.getfixturevalue("minikv_resp").resp_port
    else:
        pytest.fail(f"MINIKV_RQ_TARGET={RQ_TARGET!r}: want minikv or redis")
    c = redis.Redis(host="127.0.0.1", port=port, socket_timeout=WAIT + 10)
    try:
        c.xadd("rq-probe:streams", {"f": "v"})
        c.delete("rq-probe:streams")
    except redis.ResponseError as e:
        if "unknown command" in str(e):
            c.close()
            pytest.skip(f"{STREAMS_MISSING}: {RQ_TARGET} answers XADD with {e}")
        raise
    yield c
    c.close()


def _burst(conn, *queues):
    """Runs a SimpleWorker until the queues are empty; asserts it ran a job
    (work() says whether it did)."""
    w = SimpleWorker(list(queues), connection=conn)
    assert w.work(burst=True, max_jobs=100) is True
    return w


def test_results_of_finished_jobs(conn):
    q = Queue("default", connection=conn)
    jobs = [q.enqueue(add, i, 10 * i) for i in range(5)]
    j_shout = q.enqueue(shout, "hello")
    j_none = q.enqueue(nothing)
    assert all(j.get_status() == JobStatus.QUEUED for j in jobs)
    assert jobs[0].latest_result() is None and jobs[0].results() == []
    assert conn.exists(Result.get_key(jobs[0].id)) == 0

    _burst(conn, q)

    for i, j in enumerate(jobs):
        assert j.get_status(refresh=True) == JobStatus.FINISHED
        assert j.return_value() == 11 * i
        r = j.latest_result()
        assert r.type == Result.Type.SUCCESSFUL and r.return_value == 11 * i
        assert [x.return_value for x in j.results()] == [11 * i]
        # The result is a stream entry of the job's own stream.
        assert conn.type(Result.get_key(j.id)) == b"stream"
        assert conn.xlen(Result.get_key(j.id)) == 1
        entries = conn.xrange(Result.get_key(j.id))
        assert entries[0][0].decode() == r.id
    assert j_shout.return_value() == {"word": "HELLO", "len": 5}
    assert j_none.latest_result().type == Result.Type.SUCCESSFUL
    assert j_none.return_value() is None
    # A job fetched anew reads the same result from the server.
    again = Job.fetch(jobs[3].id, connection=conn)
    assert again.return_value() == 33
    assert q.count == 0
    assert q.finished_job_registry.count == 7


def test_failed_job_result(conn):
    q = Queue("failing", connection=conn)
    bad = q.enqueue(explode, "kaput")
    zero = q.enqueue(divide, 1, 0)
    good = q.enqueue(divide, 6, 3)
    _burst(conn, q)

    assert bad.get_status(refresh=True) == JobStatus.FAILED
    r = bad.latest_result()
    assert r.type == Result.Type.FAILED
    assert "Boom: kaput" in r.exc_string and "Traceback" in r.exc_string
    assert bad.return_value() is None
    assert [x.type for x in bad.results()] == [Result.Type.FAILED]
    assert "ZeroDivisionError" in zero.latest_result().exc_string
    assert good.return_value() == 2.0
    assert q.failed_job_registry.count == 2
    assert set(q.failed_job_registry.get_job_ids()) == {bad.id, zero.id}


def _run_failing_again(conn, q, job, times):
    """Runs the failing job, then requeues it from the failed registry and
    runs it again, times runs in all: one FAILED result each."""
    _burst(conn, q)
    for _ in range(times - 1):
        q.failed_job_registry.requeue(job.id)
        _burst(conn, q)


def test_reruns_keep_every_result(conn):
    """A job run three times (requeued twice from the failed registry) has
    three FAILED results in its stream, newest first from job.results(),
    the latest one from latest_result()."""
    q = Queue("rerun", connection=conn)
    job = q.enqueue(explode, "again")
    _run_failing_again(conn, q, job, 3)
    results = job.results()
    assert [r.type for r in results] == [Result.Type.FAILED] * 3
    assert job.latest_result().id == results[0].id
    ids = [r.id for r in results]
    assert ids == sorted(ids, key=lambda i: tuple(int(x) for x in i.split("-")), reverse=True)
    assert conn.xlen(Result.get_key(job.id)) == 3
    assert job.get_status(refresh=True) == JobStatus.FAILED


def test_latest_result_waits_on_the_stream(conn):
    """latest_result(timeout=...) blocks in XREAD BLOCK on the job's result
    stream until the worker, run afterwards, writes the result."""
    q = Queue("waiting", connection=conn)
    job = q.enqueue(add, 20, 22)
    # XREAD BLOCK times out with a null reply: no result yet.
    start = time.monotonic()
    assert job.latest_result(timeout=1) is None
    assert time.monotonic() - start >= 0.9

    got = []
    reader_conn = redis.Redis(**{k: conn.connection_pool.connection_kwargs[k] for k in ("host", "port")})
    reader = threading.Thread(target=lambda: got.append(Job.fetch(job.id, connection=reader_conn).latest_result(timeout=WAIT)))
    reader.start()
    # The worker runs in this thread (it sets signal handlers), once the
    # reader is blocked; were it not yet, XREAD would find the result at
    # once, and the test passes the same.
    deadline = time.monotonic() + WAIT
    while conn.info("clients")["blocked_clients"] < 1 and time.monotonic() < deadline:
        time.sleep(0.01)
    _burst(conn, q)
    reader.join(WAIT)
    reader_conn.close()
    assert not reader.is_alive()
    assert len(got) == 1 and got[0] is not None
    assert got[0].type == Result.Type.SUCCESSFUL and got[0].return_value == 42


def test_results_stream_trimmed_approximately(conn):
    """rq XADDs each result with MAXLEN ~ 10 (redis-py's approximate
    default): Redis trims whole radix tree nodes only (100 entries each),
    so twelve runs keep twelve results."""
    q = Queue("capped", connection=conn)
    job = q.enqueue(explode, "x")
    _run_failing_again(conn, q, job, 12)
    assert len(job.results()) == 12
    assert conn.xlen(Result.get_key(job.id)) == 12
    info = conn.xinfo_stream(Result.get_key(job.id))
    assert info["length"] == 12 and info["entries-added"] == 12
    assert info["first-entry"][0].decode() == job.results()[-1].id

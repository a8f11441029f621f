'use strict';
// BullMQ (every queue operation is a Lua script, run with EVALSHA by
// ioredis) against the server server.js starts: MiniKV by default,
// redis-server with MINIKV_LUA_TARGET=redis. Skipped, with the reason,
// while MiniKV has no scripting (issue 38), then while it has no streams
// (issue 40: the probe is an XADD). A producer adds jobs, workers process
// them, QueueEvents (a reader of the queue's event stream, which BullMQ's
// scripts XADD to and QueueEvents follows with XREAD BLOCK) reports their
// progress, completions and failures, live and replayed from the stream's
// start. Every wait has a generous bound and none is asserted on.

const { test, before, after } = require('node:test');
const assert = require('node:assert/strict');
const { Queue, Worker, QueueEvents, FlowProducer, Job } = require('bullmq');
const IORedis = require('ioredis');
const { startServer, missingFeature, sleep, TARGET } = require('./server');

const WAIT_MS = 20000; // the bound of every wait here

let server;
let skip = null;
const closers = [];

before(async () => {
  server = await startServer();
  skip = await missingFeature(server.port);
});

after(async () => {
  if (server) await server.stop();
});

function connection() {
  // Workers block on the queue; BullMQ wants no per-request retry limit.
  return { host: '127.0.0.1', port: server.port, maxRetriesPerRequest: null };
}

// Opens a BullMQ object closed after the test, in reverse order.
function open(obj) {
  closers.push(obj);
  return obj;
}

async function closeAll() {
  while (closers.length) await closers.pop().close();
}

function within(promise, what, ms = WAIT_MS) {
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: not within ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

// Resolves once `count` events named `name` arrived, with their payloads.
function collect(emitter, name, count) {
  return new Promise((resolve) => {
    const got = [];
    emitter.on(name, (ev) => {
      got.push(ev);
      if (got.length === count) resolve(got);
    });
  });
}

// Resolves once at least n clients are blocked (INFO clients), or fails
// after WAIT_MS.
async function untilBlocked(n) {
  const c = new IORedis(connection());
  try {
    const deadline = Date.now() + WAIT_MS;
    for (;;) {
      const m = /blocked_clients:(\d+)/.exec(await c.info('clients'));
      if (m && Number(m[1]) >= n) return;
      if (Date.now() > deadline) assert.fail(`blocked clients never ${n}: ${m && m[1]}`);
      await sleep(5);
    }
  } finally {
    c.disconnect();
  }
}

let queueSeq = 0;
const queueName = (what) => `${what}-${process.pid}-${++queueSeq}`;

async function newQueue(what) {
  const name = queueName(what);
  const queue = open(new Queue(name, { connection: connection() }));
  const events = open(new QueueEvents(name, { connection: connection() }));
  await within(events.waitUntilReady(), 'QueueEvents ready');
  return { name, queue, events };
}

function lib(name, fn) {
  test(`${name} [${TARGET}]`, { timeout: 60000 }, async (t) => {
    if (skip) {
      t.skip(skip);
      return;
    }
    try {
      await fn(t);
    } finally {
      await closeAll();
    }
  });
}

lib('producer adds jobs, a worker completes them, events report results', async () => {
  const { name, queue, events } = await newQueue('basic');
  const completed = collect(events, 'completed', 20);
  const jobs = await queue.addBulk(
    Array.from({ length: 19 }, (_, i) => ({ name: 'double', data: { n: i } })),
  );
  jobs.push(await queue.add('double', { n: 19 }, { jobId: 'the-last-one' }));
  assert.equal(jobs[19].id, 'the-last-one');
  assert.equal(await queue.count(), 20);

  open(new Worker(name, async (job) => ({ doubled: job.data.n * 2, name: job.name }), {
    connection: connection(), concurrency: 4,
  }));
  const evs = await within(completed, '20 completed events');
  const byId = new Map(evs.map((e) => [e.jobId, e.returnvalue]));
  for (const [i, job] of jobs.entries()) {
    assert.deepEqual(byId.get(job.id), { doubled: i * 2, name: 'double' });
    const done = await Job.fromId(queue, job.id);
    assert.deepEqual(done.returnvalue, { doubled: i * 2, name: 'double' });
    assert.equal(done.attemptsMade, 1);
    assert.ok(done.finishedOn >= done.processedOn);
  }
  const counts = await queue.getJobCounts('waiting', 'active', 'completed', 'failed', 'delayed');
  assert.deepEqual(counts, { waiting: 0, active: 0, completed: 20, failed: 0, delayed: 0 });
  const job = await queue.add('double', { n: 21 });
  assert.deepEqual(await within(job.waitUntilFinished(events, WAIT_MS), 'waitUntilFinished'),
    { doubled: 42, name: 'double' });
  // The queue ran on scripts: ioredis sent them as EVALSHA.
  const c = new IORedis(connection());
  try {
    const stats = await c.info('commandstats');
    const m = /^cmdstat_evalsha:calls=(\d+)/m.exec(stats);
    assert.ok(m && Number(m[1]) >= 40, stats);
  } finally {
    c.disconnect();
  }
});

lib('retries, then failure with its reason', async () => {
  const { name, queue, events } = await newQueue('retry');
  const flaky = await queue.add('flaky', {}, { attempts: 3 });
  const doomed = await queue.add('doomed', {}, { attempts: 2 });
  const completed = collect(events, 'completed', 1);
  open(new Worker(name, async (job) => {
    if (job.name === 'doomed') throw new Error('doomed to fail');
    if (job.attemptsMade < 2) throw new Error(`attempt ${job.attemptsMade + 1} fails`);
    return 'third time lucky';
  }, { connection: connection(), concurrency: 1 }));
  const [done] = await within(completed, 'flaky completed');
  assert.equal(done.jobId, flaky.id);
  assert.equal(done.returnvalue, 'third time lucky');
  const deadline = Date.now() + WAIT_MS;
  let state;
  while ((state = await queue.getJobState(doomed.id)) !== 'failed' && Date.now() < deadline) {
    await sleep(20);
  }
  assert.equal(state, 'failed');
  const d = await Job.fromId(queue, doomed.id);
  assert.equal(d.failedReason, 'doomed to fail');
  assert.equal(d.attemptsMade, 2);
  assert.equal((await Job.fromId(queue, flaky.id)).attemptsMade, 3);
  assert.equal(await queue.getFailedCount(), 1);
  assert.equal(await queue.getCompletedCount(), 1);
});

lib('priorities and a delayed job', async () => {
  const { name, queue, events } = await newQueue('prio');
  // Added before any worker runs: the worker takes them by priority.
  for (const [n, priority] of [[1, 5], [2, 1], [3, 10], [4, 2], [5, 1]]) {
    await queue.add('p', { n }, { priority });
  }
  // The lowest priority too: last, even if it is due before the others ran.
  const delayed = await queue.add('late', { n: 6 }, { delay: 300, priority: 20 });
  assert.equal(await queue.getJobState(delayed.id), 'delayed');
  assert.equal(await queue.getPrioritizedCount(), 5);
  const completed = collect(events, 'completed', 6);
  const order = [];
  open(new Worker(name, async (job) => { order.push(job.data.n); return job.data.n; }, {
    connection: connection(), concurrency: 1,
  }));
  await within(completed, '6 completed events');
  assert.deepEqual(order, [2, 5, 4, 1, 3, 6]);
  assert.equal(await queue.getJobState(delayed.id), 'completed');
});

lib('a flow: the parent runs after its children, with their results', async () => {
  const { name, queue, events } = await newQueue('flow');
  const flows = open(new FlowProducer({ connection: connection() }));
  const tree = await flows.add({
    name: 'sum', queueName: name, data: {},
    children: [1, 2, 3, 4].map((n) => ({ name: 'square', queueName: name, data: { n } })),
  });
  assert.equal(await queue.getJobState(tree.job.id), 'waiting-children');
  const parentDone = new Promise((resolve) => {
    events.on('completed', (ev) => { if (ev.jobId === tree.job.id) resolve(ev.returnvalue); });
  });
  open(new Worker(name, async (job) => {
    if (job.name === 'square') return job.data.n * job.data.n;
    const values = await job.getChildrenValues();
    return Object.values(values).reduce((a, b) => a + b, 0);
  }, { connection: connection(), concurrency: 2 }));
  assert.equal(await within(parentDone, 'parent completed'), 30);
});

lib('obliterate removes the queue, and closed workers stop', async () => {
  const { name, queue, events } = await newQueue('gone');
  const completed = collect(events, 'completed', 3);
  await queue.addBulk([1, 2, 3].map((n) => ({ name: 'x', data: { n } })));
  const worker = new Worker(name, async () => 'ok', { connection: connection() });
  await within(completed, '3 completed events');
  await within(worker.close(), 'worker close');
  assert.equal(worker.isRunning(), false);
  await queue.add('x', { n: 4 });
  assert.equal(await queue.getWaitingCount(), 1);
  await queue.obliterate({ force: true });
  const c = new IORedis(connection());
  try {
    assert.deepEqual(await c.keys(`bull:${name}:*`), []);
  } finally {
    c.disconnect();
  }
});

lib('QueueEvents follows the event stream with XREAD BLOCK, and replays it', async () => {
  const { name, queue, events } = await newQueue('events');
  // Every event, by job, in the order QueueEvents emitted them.
  const seen = new Map();
  const kinds = ['added', 'waiting', 'active', 'progress', 'completed', 'failed'];
  for (const kind of kinds) {
    events.on(kind, (ev) => {
      if (!seen.has(ev.jobId)) seen.set(ev.jobId, []);
      seen.get(ev.jobId).push([kind, ev]);
    });
  }
  const completed = collect(events, 'completed', 1);
  const failed = collect(events, 'failed', 1);
  const progress = collect(events, 'progress', 2);
  // QueueEvents starts from "$": the jobs are added once its first XREAD
  // BLOCK waits (the only blocked client yet), so it sees their every event.
  await untilBlocked(1);
  const good = await queue.add('good', { n: 7 });
  const bad = await queue.add('bad', {});
  open(new Worker(name, async (job) => {
    if (job.name === 'bad') throw new Error('bad job');
    await job.updateProgress(50);
    await job.updateProgress({ step: 'done' });
    return { sevenfold: job.data.n * 7 };
  }, { connection: connection(), concurrency: 1 }));
  const [[c], [f], p] = await within(Promise.all([completed, failed, progress]), 'completed, failed and progress events');
  assert.equal(c.jobId, good.id);
  assert.deepEqual(c.returnvalue, { sevenfold: 49 });
  assert.equal(f.jobId, bad.id);
  assert.equal(f.failedReason, 'bad job');
  assert.deepEqual(p.map((e) => [e.jobId, e.data]), [[good.id, 50], [good.id, { step: 'done' }]]);
  // Each job's events came in the order the scripts wrote them.
  const order = (id) => seen.get(id).map(([kind]) => kind);
  const g = order(good.id);
  for (const [a, b] of [['added', 'active'], ['waiting', 'active'], ['active', 'progress'], ['progress', 'completed']]) {
    assert.ok(g.indexOf(a) >= 0 && g.indexOf(a) < g.indexOf(b), `${a} before ${b}: ${g}`);
  }
  assert.equal(order(bad.id).at(-1), 'failed');

  // The events are a stream the scripts XADD to and QueueEvents XREADs.
  const cl = new IORedis(connection());
  try {
    const key = `bull:${name}:events`;
    assert.equal(await cl.type(key), 'stream');
    const all = await cl.xrange(key, '-', '+');
    assert.ok(all.length >= 10, `${all.length} events`);
    const last = await cl.xrevrange(key, '+', '-', 'COUNT', 1);
    assert.deepEqual(last[0], all.at(-1));
    const stats = await cl.info('commandstats');
    assert.match(stats, /^cmdstat_xread:calls=[1-9]/m);
    assert.match(stats, /^cmdstat_xadd:calls=[1-9]/m);
    // QueueEvents is blocked in XREAD now, waiting for the next event.
    await untilBlocked(1);
  } finally {
    cl.disconnect();
  }

  // A QueueEvents reading from the stream's start replays the history.
  const replay = open(new QueueEvents(name, { connection: connection(), lastEventId: '0-0' }));
  const replayed = collect(replay, 'completed', 1);
  const replayedFail = collect(replay, 'failed', 1);
  const [[rc], [rf]] = await within(Promise.all([replayed, replayedFail]), 'replayed events');
  assert.deepEqual([rc.jobId, rc.returnvalue], [good.id, { sevenfold: 49 }]);
  assert.deepEqual([rf.jobId, rf.failedReason], [bad.id, 'bad job']);

  // A new event reaches both readers, each blocked in its own XREAD.
  const third = collect(events, 'completed', 1);
  const thirdReplay = collect(replay, 'completed', 1);
  await replay.waitUntilReady();
  const again = await queue.add('good', { n: 1 });
  const [[t3], [r3]] = await within(Promise.all([third, thirdReplay]), 'the next completed event on both');
  assert.deepEqual([t3.jobId, t3.returnvalue], [again.id, { sevenfold: 7 }]);
  assert.deepEqual([r3.jobId, r3.returnvalue], [again.id, { sevenfold: 7 }]);
});

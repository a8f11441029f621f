'use strict';
// Bee-Queue (a job queue whose every state change is a Lua script:
// addJob, addDelayedJob, raiseDelayedJobs, checkStalledJobs, removeJob;
// on node_redis 3) against the server server.js starts: MiniKV by
// default, redis-server with MINIKV_LUA_TARGET=redis. It needs scripting
// and pub/sub, no streams. A producer adds jobs, workers process them,
// the producer hears each result (pub/sub), failed jobs are retried,
// delayed jobs run once due, a job is removed, and the queue's counts add
// up (checkHealth); every worker runs checkStalledJobs as it starts. Every wait has a generous bound and none is asserted on.

const { test, before, after } = require('node:test');
const assert = require('node:assert/strict');
const Queue = require('bee-queue');
const { startServer, TARGET } = require('./server');

const WAIT_MS = 20000; // the bound of every wait here

let server;
before(async () => {
  server = await startServer();
});
after(async () => {
  if (server) await server.stop();
});

function within(promise, what, ms = WAIT_MS) {
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: not within ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

let seq = 0;
function newQueue(opts = {}) {
  const name = `bee-${process.pid}-${++seq}`;
  return new Queue(name, {
    redis: { host: '127.0.0.1', port: server.port },
    activateDelayedJobs: true,
    removeOnSuccess: false,
    ...opts,
  });
}

test(`bee-queue: jobs run and report their results [${TARGET}]`, { timeout: 60000 }, async () => {
  const producer = newQueue();
  const worker = producer;
  try {
    await within(producer.ready(), 'queue ready');
    worker.process(4, async (job) => job.data.x * 2);
    const results = await within(Promise.all(Array.from({ length: 50 }, (_, i) =>
      new Promise((resolve, reject) => {
        const job = producer.createJob({ x: i });
        job.on('succeeded', resolve);
        job.on('failed', reject);
        job.save().catch(reject);
      }))), '50 jobs');
    assert.deepEqual(results, Array.from({ length: 50 }, (_, i) => i * 2));
    const counts = await producer.checkHealth();
    assert.equal(counts.succeeded, 50);
    assert.equal(counts.waiting + counts.active + counts.failed, 0);
  } finally {
    await producer.close(WAIT_MS);
  }
});

test(`bee-queue: retries, delays and removal [${TARGET}]`, { timeout: 60000 }, async () => {
  const q = newQueue();
  try {
    await within(q.ready(), 'queue ready');
    const attempts = new Map();
    q.process(async (job) => {
      const n = (attempts.get(job.id) || 0) + 1;
      attempts.set(job.id, n);
      if (job.data.failTimes >= n) throw new Error(`attempt ${n}`);
      return `done after ${n}`;
    });
    const flaky = q.createJob({ failTimes: 2 }).retries(3);
    const done = new Promise((resolve, reject) => {
      flaky.on('succeeded', resolve);
      flaky.on('failed', reject);
    });
    await flaky.save();
    assert.equal(await within(done, 'the retried job'), 'done after 3');

    const hopeless = q.createJob({ failTimes: 9 }).retries(1);
    const failed = new Promise((resolve) => hopeless.on('failed', (err) => resolve(err.message)));
    await hopeless.save();
    assert.equal(await within(failed, 'the failing job'), 'attempt 2');

    const at = Date.now() + 300;
    const delayed = q.createJob({ failTimes: 0 }).delayUntil(at);
    const ran = new Promise((resolve) => delayed.on('succeeded', () => resolve(Date.now())));
    await delayed.save();
    assert.ok(await within(ran, 'the delayed job') >= at);

    const extra = await q.createJob({ failTimes: 0 }).delayUntil(Date.now() + 60000).save();
    assert.ok(await q.getJob(extra.id));
    await q.removeJob(extra.id);
    assert.equal(await q.getJob(extra.id), null);

    const counts = await q.checkHealth();
    assert.equal(counts.succeeded, 2);
    assert.equal(counts.failed, 1);
    assert.equal(counts.delayed, 0);
  } finally {
    await q.close(WAIT_MS);
  }
});

'use strict';
// The server the Node.js library tests run against, as tests/python's
// lua_target fixture chooses it: MINIKV_LUA_TARGET=minikv (the default, as
// `make test` needs: $MINIKV_BIN, default bin/minikv) or redis (a
// redis-server 7.2.4 on a free port, to prove the tests themselves).

const { spawn, spawnSync } = require('node:child_process');
const fs = require('node:fs');
const net = require('node:net');
const os = require('node:os');
const path = require('node:path');
const IORedis = require('ioredis');

const REPO = path.resolve(__dirname, '..', '..');
const MINIKV_BIN = process.env.MINIKV_BIN || path.join(REPO, 'bin', 'minikv');
const TARGET = process.env.MINIKV_LUA_TARGET || 'minikv';

// The skip reason while MiniKV has no scripting: the tests then start
// running by themselves on the build that answers EVAL.
const SCRIPTING_MISSING = 'scripting (issue 38) not merged yet';

// BullMQ needs streams too (issue 40): the skip reason once scripting is
// there and streams are not.
const STREAMS_MISSING = 'streams (issue 40) not served yet, and BullMQ needs them';

function freePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.on('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

function accepting(port) {
  return new Promise((resolve) => {
    const c = net.connect({ host: '127.0.0.1', port });
    c.setTimeout(500);
    c.on('connect', () => { c.destroy(); resolve(true); });
    c.on('error', () => resolve(false));
    c.on('timeout', () => { c.destroy(); resolve(false); });
  });
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function waitAccepting(child, ports, timeoutMs = 5000) {
  const deadline = Date.now() + timeoutMs;
  for (const port of ports) {
    for (;;) {
      if (child.exitCode !== null || child.signalCode !== null) return false;
      if (await accepting(port)) break;
      if (Date.now() > deadline) return false;
      await sleep(20);
    }
  }
  return true;
}

function exited(child, timeoutMs) {
  if (child.exitCode !== null || child.signalCode !== null) {
    return Promise.resolve({ code: child.exitCode, signal: child.signalCode });
  }
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(null), timeoutMs);
    child.once('exit', (code, signal) => { clearTimeout(timer); resolve({ code, signal }); });
  });
}

// Starts the target on free loopback ports. Resolves to
// { name, port, log(), stop() }; stop() asserts MiniKV's graceful exit
// (status 0 within 5 s of SIGTERM) and kills redis-server by its PID.
async function startServer() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'minikv-node-'));
  const logPath = path.join(dir, 'server.log');
  let cmd;
  if (TARGET === 'minikv') {
    try {
      fs.accessSync(MINIKV_BIN, fs.constants.X_OK);
    } catch {
      throw new Error(`${MINIKV_BIN} is not an executable; run \`make build\` or set MINIKV_BIN`);
    }
    cmd = (port, respPort) => [MINIKV_BIN, ['-p', String(port), '--resp-port', String(respPort),
      '--admin-addr', '', '-l', '127.0.0.1', '-m', '64', '-U', '0']];
  } else if (TARGET === 'redis') {
    if (spawnSync('redis-server', ['--version']).status !== 0) {
      throw new Error('redis-server not installed');
    }
    cmd = (port) => ['redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '',
      '--appendonly', 'no', '--protected-mode', 'no', '--dir', dir]];
  } else {
    throw new Error(`MINIKV_LUA_TARGET=${TARGET}: want minikv or redis`);
  }
  for (let attempt = 0; attempt < 3; attempt++) { // a free port may be taken before the server binds it
    const port = await freePort();
    const respPort = TARGET === 'minikv' ? await freePort() : port;
    const [bin, args] = cmd(port, respPort);
    const log = fs.openSync(logPath, 'w');
    const child = spawn(bin, args, { stdio: ['ignore', log, log] });
    fs.closeSync(log);
    if (await waitAccepting(child, [...new Set([port, respPort])])) {
      const readLog = () => fs.readFileSync(logPath, 'utf8');
      return {
        name: TARGET,
        port: respPort,
        log: readLog,
        async stop() {
          if (TARGET === 'redis') {
            child.kill('SIGKILL');
            await exited(child, 5000);
            return;
          }
          child.kill('SIGTERM');
          const st = await exited(child, 5000);
          if (st === null) {
            child.kill('SIGKILL');
            await exited(child, 5000);
            throw new Error(`minikv did not exit within 5 s of SIGTERM:\n${readLog()}`);
          }
          if (st.code !== 0) {
            throw new Error(`minikv exited with ${JSON.stringify(st)} after SIGTERM:\n${readLog()}`);
          }
        },
      };
    }
    child.kill('SIGKILL');
    await exited(child, 5000);
  }
  throw new Error(`${TARGET} did not start:\n${fs.readFileSync(logPath, 'utf8')}`);
}

// Resolves to the reason to skip the BullMQ tests on this server, or null:
// SCRIPTING_MISSING while it answers EVAL "return 1" 0 with the
// unknown-command error; then STREAMS_MISSING while it answers XADD (on a
// key of its own, deleted after) so, since BullMQ's scripts XADD every
// job's events to a stream that QueueEvents reads with XREAD BLOCK. Any
// other answer to either throws.
async function missingFeature(port) {
  const c = new IORedis({ host: '127.0.0.1', port, lazyConnect: true, maxRetriesPerRequest: 1 });
  const unknown = (e) => /unknown command/.test(String(e && e.message));
  try {
    await c.connect();
    try {
      const one = await c.eval('return 1', 0);
      if (one !== 1) throw new Error(`EVAL "return 1" 0 answered ${JSON.stringify(one)}`);
    } catch (e) {
      if (unknown(e)) return `${SCRIPTING_MISSING}: ${TARGET} answers EVAL with ${e.message}`;
      throw e;
    }
    try {
      const id = await c.xadd('minikv-node-probe:stream', '*', 'f', 'v');
      if (!/^\d+-\d+$/.test(id)) throw new Error(`XADD answered ${JSON.stringify(id)}`);
      await c.del('minikv-node-probe:stream');
    } catch (e) {
      if (unknown(e)) return `${STREAMS_MISSING}: ${TARGET} answers XADD with ${e.message}`;
      throw e;
    }
    return null;
  } finally {
    c.disconnect();
  }
}

module.exports = { startServer, missingFeature, sleep, TARGET };

// Graceful shutdown of the real `idsvc serve` (issue 16): on SIGTERM a request under way is
// finished and answered, idle keep-alive clients do not hold the process, it exits 0 within the
// 10 s the deployment contract promises (a systemd stop, a rolling restart), and the database is
// closed cleanly. The bound is the contract, not a speed measurement.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import SQLite from 'better-sqlite3';
import { TEST_DB } from '../helpers/app.js';
import { runCli } from '../helpers/cli.js';
import { servedForThisFile, type ServedIdsvc, type TestDatabase } from '../helpers/serve.js';

const CONTRACT_MS = 10_000;
const { database, serve } = servedForThisFile();

async function partnerOn(db: TestDatabase): Promise<{ apiKey: string; apiToken: string }> {
  const created = await runCli({ cliEnv: db.env }, ['partner', 'create', '--name', 'Shutdown test', '--json']);
  assert.equal(created.code, 0, created.stderr);
  const keys = JSON.parse(created.stdout) as { api_key: string; api_token: string };
  return { apiKey: keys.api_key, apiToken: keys.api_token };
}

/** Keep-alive connections that have each been used once and now sit idle. */
async function idleKeepAliveSockets(url: string, count: number): Promise<{ closed: Promise<void>[] }> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: count });
  const closed: Promise<void>[] = [];
  await Promise.all(
    Array.from(
      { length: count },
      () =>
        new Promise<void>((resolve, reject) => {
          const req = http.get(`${url}/healthz`, { agent }, (res) => {
            res.resume();
            res.on('end', resolve);
          });
          req.on('socket', (socket) => closed.push(new Promise((r) => socket.once('close', () => r()))));
          req.on('error', reject);
        }),
    ),
  );
  assert.equal(Object.values(agent.freeSockets).flat().length, count, 'the connections are idle and kept alive');
  return { closed };
}

/** An update_service whose body arrives in two parts: the request is under way until the second is sent. */
async function slowUpdate(served: ServedIdsvc, keys: { apiKey: string; apiToken: string }, requestId: string) {
  const { port, hostname } = new URL(served.url);
  const socket = net.connect(Number(port), hostname);
  await new Promise((resolve) => socket.once('connect', resolve));
  let answer = '';
  socket.on('data', (d: Buffer) => (answer += d.toString()));
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  const body = `api_token=${keys.apiToken}`;
  socket.write(
    `POST /api/update_service/${keys.apiKey}/alice/github/alice-gh HTTP/1.1\r\nHost: ${hostname}\r\nConnection: keep-alive\r\n` +
      `X-Request-Id: ${requestId}\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: ${body.length}\r\n\r\n${body.slice(0, 10)}`,
  );
  // The server has the request once it logs it; from then on it is under way.
  await served.waitFor(new RegExp(`"reqId":"${requestId}".*incoming request`));
  return { finish: () => socket.write(body.slice(10)), answer: () => answer, closed };
}

test(`SIGTERM: the request under way is answered, idle keep-alive clients are let go, exit 0 within 10 s, the database closed (${TEST_DB})`, async () => {
  const db = database('shutdown');
  const keys = await partnerOn(db);
  const served = await serve({ ...db.env, LOG_LEVEL: 'info' });
  // One process alone on a SQLite file reads through its writer's map (db/prepared.ts, readConnection), and says so.
  const started = await served.waitFor(/idsvc listening on [^\n]*\(database: [^)\n]*\)/);
  assert.match(started, TEST_DB === 'sqlite' ? /database: SQLite, reads through the writer's map/ : /database: PostgreSQL/);

  const idle = await idleKeepAliveSockets(served.url, 3);
  const slow = await slowUpdate(served, keys, 'slow-under-way');
  const signalledAt = Date.now();
  served.child.kill('SIGTERM');
  await served.waitFor(/"msg":"shutting down"/);
  slow.finish();

  const { code } = await served.exited;
  const tookMs = Date.now() - signalledAt;
  assert.equal(code, 0, served.stderr());
  assert.ok(tookMs < CONTRACT_MS, `exited ${tookMs} ms after SIGTERM`);
  await slow.closed;
  assert.match(slow.answer(), /^HTTP\/1\.1 200 /, 'the request under way got its answer');
  assert.match(slow.answer(), /<usrSvcId>alice-gh<\/usrSvcId>/);
  await Promise.all(idle.closed);
  assert.match(served.stdout(), /"msg":"database closed"/);
  if (db.sqliteFile) {
    // The last connection to close checkpoints the write-ahead log and deletes it: none is left.
    assert.equal(fs.existsSync(`${db.sqliteFile}-wal`), false, 'no -wal file left behind');
    const check = new SQLite(db.sqliteFile, { readonly: true });
    assert.deepEqual(check.pragma('integrity_check'), [{ integrity_check: 'ok' }]);
    check.close();
  }
});

test(`--workers 2: SIGTERM to the primary stops every worker cleanly, exit 0 within 10 s (${TEST_DB})`, async () => {
  const db = database('shutdown');
  const keys = await partnerOn(db);
  const served = await serve({ ...db.env, LOG_LEVEL: 'info' }, ['--workers', '2']);
  const workerPids = await bothWorkers(served);
  // Each worker's commits would drop the other's map: both read on their second connection.
  if (TEST_DB === 'sqlite') assert.equal(served.stdout().match(/database: SQLite, reads on a second connection: other processes commit/g)?.length, 2);

  const idle = await idleKeepAliveSockets(served.url, 2);
  const slow = await slowUpdate(served, keys, 'slow-on-a-worker');
  const signalledAt = Date.now();
  served.child.kill('SIGTERM');
  await served.waitFor(/"msg":"shutting down"/);
  slow.finish();

  const { code } = await served.exited;
  assert.equal(code, 0, served.stderr());
  assert.ok(Date.now() - signalledAt < CONTRACT_MS);
  await slow.closed;
  assert.match(slow.answer(), /^HTTP\/1\.1 200 /);
  await Promise.all(idle.closed);
  assert.equal(served.stdout().match(/"msg":"database closed"/g)?.length, 2, 'each worker closed its database');
  for (const pid of workerPids) assert.equal(alive(pid), false, `worker ${pid} has exited`);
});

test(`--workers 2: when the primary is killed outright, no worker is left serving (${TEST_DB})`, async () => {
  const db = database('shutdown');
  const served = await serve({ ...db.env, LOG_LEVEL: 'info' }, ['--workers', '2']);
  const workerPids = await bothWorkers(served);
  served.child.kill('SIGKILL');
  await served.exited;
  for (let waited = 0; workerPids.some(alive) && waited < CONTRACT_MS; waited += 100) await new Promise((r) => setTimeout(r, 100));
  for (const pid of workerPids) assert.equal(alive(pid), false, `worker ${pid} has exited`);
});

/** The pids of both workers, from their start-up log lines. */
async function bothWorkers(served: ServedIdsvc): Promise<number[]> {
  for (let waited = 0; waited < 180_000; waited += 100) {
    const pids = new Set([...served.stdout().matchAll(/"pid":(\d+)[^\n]*idsvc listening on/g)].map((m) => Number(m[1])));
    if (pids.size === 2) return [...pids];
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`two workers did not start: ${served.stderr()}`);
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

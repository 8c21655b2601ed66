// The database going away (issue 20; docs/operations.md "When a dependency fails"). On PostgreSQL
// the server reaches the database through a TCP proxy that the tests cut, freeze and restore, and
// backends are terminated as a failover or an idle timeout would: the process never exits, every
// call meanwhile answers `unavailable` (503, Retry-After) within seconds in the API's own format,
// /readyz says the database is down, and the same process serves again, nothing acknowledged lost.
// On SQLite the outage is a database locked by another process beyond busy_timeout.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { once } from 'node:events';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import SQLite from 'better-sqlite3';
import { IdsvcError, type IdsvcClient } from '@idsvc/client';
import { startTestApp, PG_URL, TEST_DB, type TestApp } from '../helpers/app.js';
import { TcpProxy } from '../helpers/tcp-proxy.js';

const TIMEOUT_MS = 1500;
const schema = `fault_${process.pid}_${Math.random().toString(36).slice(2, 8)}`;
let proxy: TcpProxy | undefined;
let t: TestApp;

before(async () => {
  if (TEST_DB === 'postgres') {
    const target = new URL(PG_URL);
    proxy = await TcpProxy.start(target.hostname, Number(target.port || 5432));
    t = await startTestApp({ DATABASE_URL: proxy.via(PG_URL), DATABASE_SCHEMA: schema, DATABASE_TIMEOUT_MS: String(TIMEOUT_MS) });
    if (!t.ctx.partners.caching) await once(t.ctx.partners, 'live');
  } else {
    t = await startTestApp();
  }
});

after(async () => {
  await t.close();
  await proxy?.close();
  if (TEST_DB === 'postgres') await admin((c) => c.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`));
});

/** Runs `fn` on a connection straight to PostgreSQL, past the proxy. */
async function admin<T>(fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const c = new pg.Client({ connectionString: PG_URL });
  await c.connect();
  try {
    return await fn(c);
  } finally {
    await c.end();
  }
}

interface Outcome {
  code: string;
  status: number;
  retryAfter: number | null;
  ms: number;
}

/** Light load: one update_service after another, each to a user of its own; what was acknowledged and what was not. */
function writer(client: IdsvcClient, prefix: string) {
  const acked: string[] = [];
  /** When each acknowledgement came (performance.now()). */
  const ackedAt: number[] = [];
  const refused: Outcome[] = [];
  let stopped = false;
  const done = (async () => {
    for (let n = 0; !stopped; n++) {
      const user = `${prefix}${n}`;
      const started = performance.now();
      try {
        await client.updateService(user, 'github', `v${n}`);
        acked.push(user);
        ackedAt.push(performance.now());
      } catch (e) {
        if (!(e instanceof IdsvcError)) throw e;
        refused.push({ code: e.code, status: e.status, retryAfter: e.retryAfter, ms: performance.now() - started });
      }
      await sleep(50);
    }
  })();
  return {
    acked,
    ackedAt,
    refused,
    async stop() {
      stopped = true;
      await done;
    },
  };
}

/** Every acknowledged write is there, read back through the API. */
async function assertAllPresent(client: IdsvcClient, users: string[]): Promise<void> {
  for (const user of users) {
    const services = await client.returnServices(user);
    assert.equal(services.find((s) => s.svcId === 'github')?.usrSvcId, `v${user.replace(/^[a-z]+/, '')}`, `acknowledged write for ${user} is present`);
  }
}

async function waitFor(what: string, check: () => Promise<boolean>, withinMs: number): Promise<number> {
  const started = performance.now();
  while (performance.now() - started < withinMs) {
    if (await check()) return performance.now() - started;
    await sleep(100);
  }
  assert.fail(`${what} did not happen within ${withinMs} ms`);
}

async function timed(url: string, init?: RequestInit): Promise<{ res: Response; body: string; ms: number }> {
  const started = performance.now();
  const res = await fetch(url, init);
  const body = await res.text();
  return { res, body, ms: performance.now() - started };
}

test('PostgreSQL: terminated backends do not stop the server; the pool reconnects by itself, and the change feed with it', {
  skip: TEST_DB !== 'postgres' && 'PostgreSQL only',
}, async () => {
  const P = await t.partner();
  // Several calls at once leave several idle connections in the pool.
  await Promise.all(Array.from({ length: 6 }, (_, i) => P.client.updateService(`idle${i}`, 'github', `v${i}`)));
  const cache = t.ctx.partners;
  assert.equal(cache.caching, true);
  // What a failover, a proxy restart or an idle timeout does to every connection of this server.
  const terminated = await admin(
    async (c) =>
      (await c.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE client_port = ANY($1::int[])', [proxy!.upstreamPorts()])).rowCount,
  );
  assert.ok((terminated ?? 0) >= 2, `the pool's connections were ended (${terminated})`);
  await sleep(300); // the connections' 'error' events have all fired by now: an unhandled one would have ended this process
  assert.deepEqual(
    (await P.client.returnServices('idle3')).map((s) => s.usrSvcId),
    ['v3'],
  );
  await P.client.updateService('idle3', 'github', 'again');
  // The change feed is read through the pool like any statement, so it has no connection of its
  // own to lose: its next reading takes a new one.
  assert.equal((await cache.feed!.fresh()).ok, true);
  assert.equal(cache.caching, true, 'the change feed is read again');
  const lost = t.logs.map((l) => JSON.parse(l) as { dependency?: string; msg?: string; level?: number }).filter((l) => l.dependency === 'database');
  assert.ok(lost.length >= 1 && lost.every((l) => l.level === 40 && /connection lost/.test(l.msg ?? '')), 'idle connections lost are logged as warnings');
});

test('PostgreSQL: a 10-second cut under light load answers unavailable quickly, then the same process serves again, nothing acknowledged lost', {
  skip: TEST_DB !== 'postgres' && 'PostgreSQL only',
}, async (ctx) => {
  const P = await t.partner();
  await t.user({ email: 'cora@example.org', userId: 'cora' });
  const writers = [writer(P.client, 'cuta'), writer(P.client, 'cutb')];
  // Counted, not timed: on a busy machine a write may take a good part of a second.
  const ACKS_EACH_SIDE = 6;
  await waitFor('writes acknowledged before the cut', async () => writers.every((w) => w.acked.length >= ACKS_EACH_SIDE), 30_000);
  const cache = t.ctx.partners;
  const down = once(cache, 'down');
  await proxy!.cut();
  const cutAt = performance.now();
  await down;

  // Every kind of answer says the same thing, in its own format.
  const json = await timed(`${t.baseUrl}/api/return_services/${P.apiKey}/cora/public?format=json`);
  assert.equal(json.res.status, 503);
  assert.equal(json.res.headers.get('retry-after'), '5');
  assert.ok(json.res.headers.get('x-request-id'));
  assert.deepEqual(JSON.parse(json.body), { error: { code: 'unavailable', message: 'Temporarily unavailable; retry later' } });
  const xml = await timed(`${t.baseUrl}/api/return_services/${P.apiKey}/cora/public`);
  assert.equal(xml.res.status, 503);
  assert.match(xml.res.headers.get('content-type') ?? '', /^application\/xml/);
  assert.match(xml.body, /<error><code>unavailable<\/code><message>Temporarily unavailable; retry later<\/message><\/error>/);
  const widget = await timed(`${t.baseUrl}/api/service_collection_widget/${P.apiKey}/cora/TRUE`);
  assert.equal(widget.res.status, 503);
  assert.match(widget.res.headers.get('content-type') ?? '', /^text\/javascript/);
  assert.match(widget.body, /console\.error\("idsvc widget: "\+c\+": "\+m\)/);
  assert.match(widget.body, /"unavailable"/);
  const page = await timed(`${t.baseUrl}/u/cora`);
  assert.equal(page.res.status, 503);
  assert.match(page.res.headers.get('content-type') ?? '', /^text\/html/);
  assert.match(page.body, /Back in a moment/);
  const ready = await timed(`${t.baseUrl}/readyz`);
  assert.equal(ready.res.status, 503);
  assert.deepEqual(JSON.parse(ready.body), { status: 'unavailable', database: 'down' });
  for (const r of [json, xml, widget, page, ready]) assert.ok(r.ms < 3000, `answered in ${Math.round(r.ms)} ms`);
  assert.equal((await fetch(`${t.baseUrl}/healthz`)).status, 200, 'the process is up');

  await sleep(Math.max(0, 10_000 - (performance.now() - cutAt)));
  assert.equal(cache.caching, false);
  const feedLive = once(cache, 'live').then(() => performance.now());
  await proxy!.restore();
  const restoredAt = performance.now();
  const back = await waitFor('a successful call after the cut', async () => (await fetch(`${t.baseUrl}/readyz`)).status === 200, 10_000);
  await waitFor(
    'writes acknowledged after the restore',
    async () => writers.every((w) => w.ackedAt.filter((at) => at > restoredAt).length >= ACKS_EACH_SIDE),
    30_000,
  );
  for (const w of writers) await w.stop();

  const refused = writers.flatMap((w) => w.refused);
  const acked = writers.flatMap((w) => w.acked);
  assert.ok(refused.length >= 20, `calls were refused during the cut (${refused.length})`);
  assert.deepEqual([...new Set(refused.map((r) => `${r.status} ${r.code} ${r.retryAfter}`))], ['503 unavailable 5']);
  const slowest = Math.max(...refused.map((r) => r.ms));
  assert.ok(slowest < 3000, `each refusal came within 3 s (slowest ${Math.round(slowest)} ms)`);
  assert.ok(back < 5000, `ready again ${Math.round(back)} ms after the restore`);
  ctx.diagnostic(
    `${acked.length} writes acknowledged, ${refused.length} refused (slowest refusal ${Math.round(slowest)} ms), ready again ${Math.round(back)} ms after the restore`,
  );
  const feedBack = (await feedLive) - restoredAt;
  ctx.diagnostic(`the change feed is read again ${Math.round(feedBack)} ms after the restore`);
  await assertAllPresent(P.client, acked);
  assert.ok(
    writers.every((w) => w.ackedAt.some((at) => at < cutAt) && w.ackedAt.some((at) => at > restoredAt)),
    'writes were acknowledged before the cut and after the restore',
  );
  // No back-off of its own: the first call after the restore starts a reading, on the pool's first connection.
  assert.ok(feedBack < 3000, `the change feed is read again ${Math.round(feedBack)} ms after the restore`);
});

test('PostgreSQL: a stalled connection answers unavailable within the timeout, and the server recovers when it moves again', {
  skip: TEST_DB !== 'postgres' && 'PostgreSQL only',
}, async () => {
  const P = await t.partner();
  await P.client.updateService('stall', 'github', 'before');
  proxy!.freeze();
  try {
    const started = performance.now();
    const res = await fetch(`${t.baseUrl}/api/return_services/${P.apiKey}/stall?format=json`, {
      method: 'POST',
      body: new URLSearchParams({ api_token: P.apiToken }),
    });
    const ms = performance.now() - started;
    assert.equal(res.status, 503);
    assert.equal(((await res.json()) as { error: { code: string } }).error.code, 'unavailable');
    assert.ok(ms >= TIMEOUT_MS * 0.9 && ms < TIMEOUT_MS * 2 + 1000, `it waited for the timeout, no longer (${Math.round(ms)} ms)`);
    const ready = await timed(`${t.baseUrl}/readyz`);
    assert.equal(ready.res.status, 503);
    assert.ok(ready.ms < TIMEOUT_MS * 2 + 1000);
  } finally {
    await proxy!.restore();
  }
  await waitFor('a successful call after the stall', async () => (await fetch(`${t.baseUrl}/readyz`)).status === 200, 10_000);
  await P.client.updateService('stall', 'github', 'after');
  assert.deepEqual(
    (await P.client.returnServices('stall')).map((s) => s.usrSvcId),
    ['after'],
  );
});

test('SQLite: a database locked by another process beyond busy_timeout answers unavailable; reads go on; it recovers when the lock goes', {
  skip: TEST_DB !== 'sqlite' && 'SQLite only',
}, async () => {
  const P = await t.partner();
  await P.client.updateService('lock', 'github', 'before');
  const other = new SQLite(t.cliEnv.DATABASE_URL!.slice('sqlite:'.length));
  other.exec('BEGIN IMMEDIATE'); // another process holds the write lock (a long CLI command, a backup tool)
  try {
    const res = await fetch(`${t.baseUrl}/api/update_service/${P.apiKey}/lock/github/during?format=json`, {
      method: 'POST',
      body: new URLSearchParams({ api_token: P.apiToken }),
    });
    assert.equal(res.status, 503);
    assert.equal(res.headers.get('retry-after'), '5');
    assert.deepEqual(await res.json(), { error: { code: 'unavailable', message: 'Temporarily unavailable; retry later' } });
    assert.deepEqual(
      (await P.client.returnServices('lock')).map((s) => s.usrSvcId),
      ['before'],
      'reads do not wait for the lock',
    );
  } finally {
    other.exec('ROLLBACK');
    other.close();
  }
  await P.client.updateService('lock', 'github', 'after');
  assert.deepEqual(
    (await P.client.returnServices('lock')).map((s) => s.usrSvcId),
    ['after'],
  );
  const warned = t.logs.map((l) => JSON.parse(l) as { msg?: string; cause?: string }).find((l) => l.msg === 'database unavailable');
  assert.equal(warned?.cause, 'SQLITE_BUSY');
});

test('SQLite: a full disk answers unavailable, not internal_error; reads go on; nothing acknowledged is lost; writes resume when there is room', {
  skip: TEST_DB !== 'sqlite' && 'SQLite only',
}, async (ctx) => {
  const P = await t.partner();
  await P.client.updateService('full', 'github', 'before');
  const raw = t.ctx.db.sqlite!;
  // SQLite itself answers SQLITE_FULL once the file would grow past max_page_count, as it does
  // when the disk is full; a few pages of room let some writes through first.
  const room = Number(raw.pragma('page_count', { simple: true })) + 6;
  raw.pragma(`max_page_count = ${room}`);
  // Several writers at once, so a commit holds several callers' writes when the room runs out.
  const writers = Array.from({ length: 6 }, (_, i) => writer(P.client, `full${String.fromCharCode(97 + i)}`));
  try {
    await waitFor('writes refused for want of room', async () => writers.reduce((n, w) => n + w.refused.length, 0) >= 30, 60_000);
    const ready = await fetch(`${t.baseUrl}/readyz`);
    assert.equal(ready.status, 200, 'reads work, so the instance stays ready');
    assert.deepEqual(
      (await P.client.returnServices('full')).map((s) => s.usrSvcId),
      ['before'],
      'reads go on',
    );
  } finally {
    for (const w of writers) await w.stop();
  }
  const refused = writers.flatMap((w) => w.refused);
  const acked = writers.flatMap((w) => w.acked);
  ctx.diagnostic(`${acked.length} writes acknowledged, ${refused.length} refused`);
  assert.deepEqual([...new Set(refused.map((r) => `${r.status} ${r.code} ${r.retryAfter}`))], ['503 unavailable 5']);
  await assertAllPresent(P.client, acked);
  const warned = t.logs.map((l) => JSON.parse(l) as { msg?: string; cause?: string }).filter((l) => l.msg === 'database unavailable');
  assert.ok(
    warned.some((l) => l.cause === 'SQLITE_FULL'),
    'the cause is logged',
  );

  raw.pragma(`max_page_count = ${2 ** 30}`);
  await P.client.updateService('full', 'github', 'after');
  assert.deepEqual(
    (await P.client.returnServices('full')).map((s) => s.usrSvcId),
    ['after'],
  );
});

/** A small tmpfs of this test's own, where the machine lets it mount one (root); null elsewhere. */
function smallTmpfs(): string | null {
  if (process.platform !== 'linux') return null;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'idsvc-full-'));
  if (spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=4m', 'tmpfs', dir], { stdio: 'ignore' }).status === 0) return dir;
  fs.rmSync(dir, { recursive: true, force: true });
  return null;
}

// A really full disk fails the COMMIT (the WAL cannot grow), after which SQLite has rolled the
// transaction back itself; where no tmpfs can be mounted, the max_page_count test above and
// test/db/group-commit.test.ts cover the same answer.
test('SQLite: a disk that fills up (a small tmpfs) answers unavailable; nothing acknowledged is lost; writes resume when there is room', {
  skip: TEST_DB !== 'sqlite' && 'SQLite only',
}, async (ctx) => {
  const dir = smallTmpfs();
  if (!dir) return ctx.skip('cannot mount a tmpfs here');
  let f: TestApp | undefined;
  try {
    f = await startTestApp({ DATABASE_URL: `sqlite:${path.join(dir, 'full.sqlite')}` });
    const P = await f.partner();
    await P.client.updateService('full', 'github', 'before');
    // Fill the disk, then give back 64 KiB: room for a few commits.
    const filler = path.join(dir, 'filler');
    const fd = fs.openSync(filler, 'w');
    try {
      for (const block = Buffer.alloc(64 * 1024); ; ) fs.writeSync(fd, block);
    } catch (e) {
      assert.equal((e as { code?: string }).code, 'ENOSPC');
    } finally {
      fs.closeSync(fd);
    }
    fs.truncateSync(filler, Math.max(0, fs.statSync(filler).size - 64 * 1024));
    const writers = Array.from({ length: 4 }, (_, i) => writer(P.client, `disk${String.fromCharCode(97 + i)}`));
    try {
      await waitFor('writes refused for want of room', async () => writers.reduce((n, w) => n + w.refused.length, 0) >= 20, 60_000);
      assert.deepEqual(
        (await P.client.returnServices('full')).map((s) => s.usrSvcId),
        ['before'],
        'reads go on',
      );
    } finally {
      for (const w of writers) await w.stop();
    }
    const refused = writers.flatMap((w) => w.refused);
    const acked = writers.flatMap((w) => w.acked);
    ctx.diagnostic(`${acked.length} writes acknowledged, ${refused.length} refused`);
    assert.deepEqual([...new Set(refused.map((r) => `${r.status} ${r.code} ${r.retryAfter}`))], ['503 unavailable 5']);
    fs.rmSync(filler);
    await P.client.updateService('full', 'github', 'after');
    assert.deepEqual(
      (await P.client.returnServices('full')).map((s) => s.usrSvcId),
      ['after'],
    );
    await assertAllPresent(P.client, acked);
  } finally {
    await f?.close();
    spawnSync('umount', [dir], { stdio: 'ignore' });
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

// Many times every wait the server has on the database (TIMEOUT_MS, the pool's idle timeout, the
// partner cache listener's longest back-off of 10 s), so that each has run out, some repeatedly,
// before the restore. The 10-second cut above is the test that the listener comes back at once.
const FREEZE_MS = Number(process.env.FREEZE_MS ?? 30_000);

test('PostgreSQL: a long freeze under light load answers unavailable meanwhile; the same process serves again within 3 s of the restore', {
  skip: TEST_DB !== 'postgres' && 'PostgreSQL only',
}, async (ctx) => {
  const P = await t.partner();
  const writers = [writer(P.client, 'frza'), writer(P.client, 'frzb')];
  await sleep(1000);
  proxy!.freeze();
  const frozenAt = performance.now();
  await sleep(FREEZE_MS);
  await proxy!.restore();
  const restoredAt = performance.now();
  const ready = await waitFor('/readyz 200 after the freeze', async () => (await fetch(`${t.baseUrl}/readyz`)).status === 200, 30_000);
  await waitFor('writes acknowledged after the freeze', async () => writers.every((w) => w.ackedAt.some((at) => at > restoredAt)), 30_000);
  const writesBack = Math.max(...writers.map((w) => w.ackedAt.find((at) => at > restoredAt)! - restoredAt));
  await sleep(500);
  for (const w of writers) await w.stop();
  const refused = writers.flatMap((w) => w.refused);
  const acked = writers.flatMap((w) => w.acked);
  ctx.diagnostic(
    `freeze ${FREEZE_MS} ms: ${acked.length} acknowledged, ${refused.length} refused; ready ${Math.round(ready)} ms and every writer acknowledged ${Math.round(writesBack)} ms after the restore`,
  );
  assert.ok(refused.length >= 10, `calls were refused during the freeze (${refused.length})`);
  assert.deepEqual([...new Set(refused.map((r) => `${r.status} ${r.code}`))], ['503 unavailable']);
  assert.ok(writers.every((w) => w.ackedAt.some((at) => at < frozenAt)));
  assert.ok(writesBack < 3000, `writes acknowledged again ${Math.round(writesBack)} ms after the restore`);
  await assertAllPresent(P.client, acked);
});

test('PostgreSQL: a transaction cut off by a partition does not hold its locks after the restore', {
  skip: TEST_DB !== 'postgres' && 'PostgreSQL only',
}, async (ctx) => {
  const P = await t.partner();
  await P.client.updateService('zombie', 'github', 'before');
  // A transaction of this server's, holding the row the next push needs, when the network drops
  // everything: its next statement is lost, this side gives up on the connection, and that goes
  // unheard too, so on the server the session stays open, idle in its transaction.
  const tx = await t.ctx.db.kysely.startTransaction().execute();
  await tx.selectFrom('partner_identities').select('id').where('partner_id', '=', P.id).forUpdate().execute();
  proxy!.partition();
  const partitionedAt = performance.now();
  await assert.rejects(tx.commit().execute());
  await tx
    .rollback()
    .execute()
    .catch(() => {}); // hands the connection back (discarded: it timed out)
  await sleep(Math.max(0, 2 * TIMEOUT_MS + 3000 - (performance.now() - partitionedAt)));
  await proxy!.restore();
  const restoredAt = performance.now();
  await waitFor(
    'the push after the partition',
    async () => {
      try {
        await P.client.updateService('zombie', 'github', 'after');
        return true;
      } catch (e) {
        if (e instanceof IdsvcError && e.status === 503) return false;
        throw e;
      }
    },
    20_000,
  );
  const back = performance.now() - restoredAt;
  ctx.diagnostic(`the push went through ${Math.round(back)} ms after the restore`);
  assert.ok(back < 3000, `the push went through ${Math.round(back)} ms after the restore`);
  assert.deepEqual(
    (await P.client.returnServices('zombie')).map((s) => s.usrSvcId),
    ['after'],
  );
});

// Partner usage counts: every answer of the partner API counted by partner, operation, status
// class and budget use in hourly buckets, kept in memory and written in one upsert per flush, at
// shutdown too; several servers on one database add up; old buckets are pruned.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { JOBS } from '../../src/jobs/index.js';
import { updatePartner } from '../../src/repositories/partners.js';
import { addUsage, type UsageBucket } from '../../src/repositories/usage.js';
import { HOUR_MS } from '../../src/services/usage-counter.js';
import { DAY_MS, partnerUsage } from '../../src/services/usage.js';
import { startTestApp, TEST_DB, type TestApp } from '../helpers/app.js';

type Partner = Awaited<ReturnType<TestApp['partner']>>;

async function call(url: string, init: RequestInit = {}): Promise<number> {
  const res = await fetch(url, init);
  await res.arrayBuffer();
  return res.status;
}

const post = (url: string, fields: Record<string, string>) => call(url, { method: 'POST', body: new URLSearchParams(fields) });

const counts = (c: Partial<Record<'2xx' | '3xx' | '4xx' | '429' | '5xx', number>>) => ({ '2xx': 0, '3xx': 0, '4xx': 0, '429': 0, '5xx': 0, ...c });

/** The stored counts of one partner as `operation → status class → n`, read through the service. */
async function stored(t: TestApp, partnerId: number): Promise<Record<string, Record<string, number>>> {
  const buckets = await t.ctx.db.kysely.selectFrom('partner_usage').selectAll().where('partner_id', '=', partnerId).execute();
  const out: Record<string, Record<string, number>> = {};
  for (const b of buckets) {
    const o = out[b.operation] ?? counts({});
    o['2xx']! += Number(b.status_2xx);
    o['3xx']! += Number(b.status_3xx);
    o['4xx']! += Number(b.status_4xx);
    o['429']! += Number(b.status_429);
    o['5xx']! += Number(b.status_5xx);
    out[b.operation] = o;
  }
  return out;
}

describe('usage counting', () => {
  let t: TestApp;
  let P: Partner;
  before(async () => {
    // A flush interval no test waits out, unless it says so.
    t = await startTestApp({ USAGE_FLUSH_SECONDS: '3600', RATE_LIMIT_PER_KEY: '50', RATE_LIMIT_PER_KEY_UNPROVEN: '1000', RATE_LIMIT_PER_ADDRESS: '100000' });
    P = await t.partner();
    await t.user({ email: 'ann@example.org', userId: 'ann' });
  });
  after(() => t.close());

  test('each operation and each status class, after real API calls', async () => {
    const api = `${t.baseUrl}/api`;
    const Q = await t.partner({ name: 'Counted' });
    // 2xx: a public read, a push, the catalogue.
    assert.equal(await call(`${api}/return_services/${Q.apiKey}/ann/public`), 200);
    assert.equal(await post(`${api}/update_service/${Q.apiKey}/ann/github/ann-gh`, { api_token: Q.apiToken }), 200);
    assert.equal(await call(`${api}/service_details/${Q.apiKey}/github`), 200);
    // 3xx: the public read again, with the ETag it gave (a shared cache's revalidation).
    const first = await fetch(`${api}/return_services/${Q.apiKey}/ann/public`);
    await first.arrayBuffer();
    const etag = first.headers.get('etag');
    assert.ok(etag);
    assert.equal(await call(`${api}/return_services/${Q.apiKey}/ann/public`, { headers: { 'if-none-match': etag } }), 304);
    // 4xx: a push without the token, an unknown service, a wrong token.
    assert.equal(await post(`${api}/update_service/${Q.apiKey}/ann/github/x`, {}), 401);
    assert.equal(await call(`${api}/service_details/${Q.apiKey}/no-such-service`), 404);
    assert.equal(await post(`${api}/return_services/${Q.apiKey}/ann`, { api_token: 'wrong' }), 401);
    // 429: a key whose operator set a budget of 2 a minute.
    const R = await t.partner({ name: 'Limited' });
    await t.ctx.db.write((w) => updatePartner(w, R.id, { rateLimitPerMinute: 2 }, t.clock.now()));
    const limited = [];
    for (let i = 0; i < 4; i++) limited.push(await call(`${api}/service_details/${R.apiKey}/github`));
    assert.deepEqual(limited, [200, 200, 429, 429]);
    // A call whose key names no partner is nobody's usage.
    assert.equal(await call(`${api}/service_details/${'z'.repeat(32)}/github`), 401);

    // Nothing is written per request: the database has nothing before the flush.
    assert.deepEqual(await stored(t, Q.id), {});
    await t.ctx.usage.flush();
    assert.deepEqual(await stored(t, Q.id), {
      return_services: counts({ '2xx': 2, '3xx': 1, '4xx': 1 }),
      update_service: counts({ '2xx': 1, '4xx': 1 }),
      service_details: counts({ '2xx': 1, '4xx': 1 }),
    });
    assert.deepEqual(await stored(t, R.id), { service_details: counts({ '2xx': 2, '429': 2 }) });
    // R's budget: 2 of 2 in use at its busiest (the refused calls do not count past the budget).
    const r = await partnerUsage(t.ctx.db, R.id, t.clock.now());
    assert.deepEqual(r.daily.at(-1)!.unproven, { used: 2, limit: 2 });
    assert.deepEqual(r.daily.at(-1)!.proven, { used: 0, limit: 0 });
  });

  test('a 5xx answer is counted', async () => {
    // A database that lost a table answers update_service with a server error.
    const broken = await startTestApp({ USAGE_FLUSH_SECONDS: '3600' });
    try {
      const B = await broken.partner();
      await sql`ALTER TABLE partner_identities RENAME TO partner_identities_gone`.execute(broken.ctx.db.kysely);
      const status = await post(`${broken.baseUrl}/api/update_service/${B.apiKey}/${'a'.repeat(32)}/github/x`, { api_token: B.apiToken });
      assert.ok(status >= 500, `status ${status}`);
      await broken.ctx.usage.flush();
      assert.deepEqual(await stored(broken, B.id), { update_service: counts({ '5xx': 1 }) });
    } finally {
      await broken.close();
    }
  });

  test('budget use: the busiest window of each budget in the hour, proven and unproven apart', async () => {
    const api = `${t.baseUrl}/api`;
    for (let i = 0; i < 3; i++) assert.equal(await post(`${api}/service_details/${P.apiKey}/github`, { api_token: P.apiToken }), 200);
    for (let i = 0; i < 5; i++) assert.equal(await call(`${api}/service_details/${P.apiKey}/github`), 200);
    await t.ctx.usage.flush();
    const u = await partnerUsage(t.ctx.db, P.id, t.clock.now());
    const hour = u.hourly.at(-1)!;
    assert.deepEqual(hour.proven, { used: 3, limit: 50 });
    assert.deepEqual(hour.unproven, { used: 5, limit: 1000 });
    assert.equal(hour.requests.service_details, 8);
  });

  test('many requests are one write per flush', async () => {
    // Each row the flush inserts or updates adds a line here, in the database itself.
    const db = t.ctx.db.kysely;
    await sql`CREATE TABLE usage_writes (n INTEGER)`.execute(db);
    if (TEST_DB === 'postgres') {
      await sql`CREATE FUNCTION usage_written() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN INSERT INTO usage_writes VALUES (1); RETURN NULL; END $$`.execute(
        db,
      );
      await sql`CREATE TRIGGER usage_written AFTER INSERT OR UPDATE ON partner_usage FOR EACH ROW EXECUTE FUNCTION usage_written()`.execute(db);
    } else {
      await sql`CREATE TRIGGER usage_inserted AFTER INSERT ON partner_usage BEGIN INSERT INTO usage_writes VALUES (1); END`.execute(db);
      await sql`CREATE TRIGGER usage_updated AFTER UPDATE ON partner_usage BEGIN INSERT INTO usage_writes VALUES (1); END`.execute(db);
    }
    const writes = async () => Number((await sql<{ n: number }>`SELECT count(*) AS n FROM usage_writes`.execute(db)).rows[0]!.n);
    try {
      const M = await t.partner({ name: 'Many' });
      const url = `${t.baseUrl}/api/return_services/${M.apiKey}/ann/public`;
      const many = async () => {
        for (let i = 0; i < 4; i++) await Promise.all(Array.from({ length: 25 }, () => call(url)));
      };
      await many();
      assert.equal(await writes(), 0);
      await t.ctx.usage.flush();
      assert.equal(await writes(), 1);
      await many();
      await t.ctx.usage.flush();
      assert.equal(await writes(), 2);
      assert.deepEqual(await stored(t, M.id), { return_services: counts({ '2xx': 200 }) });
    } finally {
      await sql`DROP TABLE usage_writes`.execute(db);
      if (TEST_DB === 'postgres') await sql`DROP FUNCTION usage_written() CASCADE`.execute(db);
      else {
        await sql`DROP TRIGGER usage_inserted`.execute(db);
        await sql`DROP TRIGGER usage_updated`.execute(db);
      }
    }
  });

  test('an hour that ends starts a new bucket', async () => {
    const H = await t.partner({ name: 'Hours' });
    const url = `${t.baseUrl}/api/service_details/${H.apiKey}/github`;
    assert.equal(await call(url), 200);
    t.clock.advance(HOUR_MS);
    assert.equal(await call(url), 200);
    assert.equal(await call(url), 200);
    await t.ctx.usage.flush();
    const u = await partnerUsage(t.ctx.db, H.id, t.clock.now());
    assert.deepEqual(
      u.hourly.slice(-2).map((h) => h.total),
      [1, 2],
    );
    assert.equal(u.hourly.at(-1)!.start % HOUR_MS, 0);
  });

  test('a flush that cannot write keeps its counts for the next one, neither lost nor doubled', async () => {
    const F = await t.partner({ name: 'Failing' });
    const url = `${t.baseUrl}/api/service_details/${F.apiKey}/github`;
    for (let i = 0; i < 3; i++) assert.equal(await call(url), 200);
    const db = t.ctx.db.kysely;
    await sql`ALTER TABLE partner_usage RENAME TO partner_usage_away`.execute(db);
    try {
      await t.ctx.usage.flush();
    } finally {
      await sql`ALTER TABLE partner_usage_away RENAME TO partner_usage`.execute(db);
    }
    assert.ok(t.logs.some((l) => l.includes('usage counts not written')));
    assert.equal(await call(url), 200);
    await t.ctx.usage.flush();
    assert.deepEqual(await stored(t, F.id), { service_details: counts({ '2xx': 4 }) });
  });

  test("a partner deleted before the flush loses its counts; the others' are written in the same flush", async () => {
    const D = await t.partner({ name: 'Deleted' });
    const E = await t.partner({ name: 'Staying' });
    for (const p of [D, E]) assert.equal(await call(`${t.baseUrl}/api/service_details/${p.apiKey}/github`), 200);
    await t.ctx.db.kysely.deleteFrom('partners').where('id', '=', D.id).execute();
    await t.ctx.usage.flush();
    assert.deepEqual(await stored(t, E.id), { service_details: counts({ '2xx': 1 }) });
    assert.deepEqual(await stored(t, D.id), {});
    // Nothing is left to fail again.
    const failures = () => t.logs.filter((l) => l.includes('usage counts not written')).length;
    const before = failures();
    await t.ctx.usage.flush();
    assert.equal(failures(), before);
  });

  test('the timer flushes without being asked', async () => {
    const quick = await startTestApp({ USAGE_FLUSH_SECONDS: '1' });
    try {
      const Q = await quick.partner();
      assert.equal(await call(`${quick.baseUrl}/api/service_details/${Q.apiKey}/github`), 200);
      const deadline = Date.now() + 5000;
      while (Object.keys(await stored(quick, Q.id)).length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
      assert.deepEqual(await stored(quick, Q.id), { service_details: counts({ '2xx': 1 }) });
    } finally {
      await quick.close();
    }
  });

  test('closing the app writes what it counted since the last flush; a second app on the same database adds its own', async () => {
    const S = await t.partner({ name: 'Shared' });
    const second = await startTestApp({ ...t.cliEnv, LOG_LEVEL: 'info', USAGE_FLUSH_SECONDS: '3600' });
    const url = (base: string) => `${base}/api/service_details/${S.apiKey}/github`;
    let closed = false;
    try {
      for (let i = 0; i < 7; i++) assert.equal(await call(url(second.baseUrl)), 200);
      for (let i = 0; i < 5; i++) assert.equal(await call(url(t.baseUrl)), 200);
      await t.ctx.usage.flush();
      assert.deepEqual(await stored(t, S.id), { service_details: counts({ '2xx': 5 }) });
      // The second server stops (as at SIGTERM): its unflushed counts are written as it closes.
      await second.close();
      closed = true;
      assert.deepEqual(await stored(t, S.id), { service_details: counts({ '2xx': 12 }) });
    } finally {
      if (!closed) await second.close();
    }
  });

  test('USAGE_COUNTING=0 counts nothing', async () => {
    const off = await startTestApp({ USAGE_COUNTING: '0' });
    try {
      const O = await off.partner();
      assert.equal(await call(`${off.baseUrl}/api/service_details/${O.apiKey}/github`), 200);
      await off.ctx.usage.flush();
      assert.deepEqual(await stored(off, O.id), {});
    } finally {
      await off.close();
    }
  });

  test('the prune job deletes buckets older than 31 days and keeps the rest', async () => {
    const O = await t.partner({ name: 'Old' });
    const now = t.clock.now();
    const hour = now - (now % HOUR_MS);
    const bucket = (hourStart: number): UsageBucket => ({
      partnerId: O.id,
      hourStart,
      operation: 'return_services',
      statuses: counts({ '2xx': 1 }),
      proven: { used: 0, limit: 0 },
      unproven: { used: 1, limit: 40 },
    });
    const kept = [hour - 31 * DAY_MS + HOUR_MS, hour - 29 * DAY_MS, hour];
    await t.ctx.db.write((w) => addUsage(w, [bucket(hour - 40 * DAY_MS), bucket(hour - 32 * DAY_MS), ...kept.map(bucket)]));
    const job = JOBS.find((j) => j.name === 'usage-prune');
    assert.ok(job);
    await job.run(t.ctx, t.app.log);
    const left = await t.ctx.db.kysely.selectFrom('partner_usage').select('hour_start').where('partner_id', '=', O.id).orderBy('hour_start').execute();
    assert.deepEqual(
      left.map((r) => Number(r.hour_start)),
      kept,
    );
  });
});

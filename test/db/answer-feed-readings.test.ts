// How often the answer cache and the partner cache read their change feed (services/change-feed.ts)
// on PostgreSQL, where each reading is a round trip on a connection of its own. Only a lookup that
// may be served from memory, or whose answer will be kept, reads it (a render reads the database
// itself), and at most one reading is in flight: lookups made while one runs share the next, so
// under load the readings stay fewer than the lookups instead of one per turn of the event loop.
// The readings do not wait in the pool behind the views' statements: memory answers while every
// pooled connection is busy.
// Exactness (a change committed before a request is applied before it is answered) is checked by
// test/db/answer-cache.test.ts; here it is checked again under concurrent reads and writes.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import type pg from 'pg';
import { IdsvcClient } from '@idsvc/client';
import { ChangeFeed } from '../../src/services/change-feed.js';
import { MAX_LAG_MS } from '../../src/services/change-feed.js';
import { occupyPool, startTestApp, TEST_DB, type TestApp } from '../helpers/app.js';

const skip = TEST_DB !== 'postgres' && 'PostgreSQL only (on SQLite a reading is a synchronous local read)';
let t: TestApp | undefined;
const readings = { started: 0, inFlight: 0, maxInFlight: 0 };

before(async () => {
  if (skip) return;
  // Many requests at once from one address, as a load balancer would send them. The partner cache
  // off: its own readings (at most one per MAX_LAG_MS / 2) are counted by the last test. The answer
  // cache as a full one is: an answer is kept the second time it is asked for, not the first (the
  // first test counts readings by it).
  t = await startTestApp({ CONNECTIONS_PER_ADDRESS: '0', PARTNER_CACHE: '0' }, {}, { answerCacheRoom: 0 });
  countReadings(t);
});

/** Counts the feed's statement (repositories/answer-feed.ts names it) on the app's feed connection. */
function countReadings(app: TestApp): void {
  const pool = app.ctx.db.pgFeedPool!;
  const query = pool.query.bind(pool) as (config: pg.QueryConfig) => Promise<pg.QueryResult>;
  (pool as { query: unknown }).query = async (config: pg.QueryConfig) => {
    if (config.name !== 'idsvc_answer_feed') return query(config);
    readings.started++;
    readings.maxInFlight = Math.max(readings.maxInFlight, ++readings.inFlight);
    try {
      return await query(config);
    } finally {
      readings.inFlight--;
    }
  };
}

after(async () => {
  await t?.close();
});

test('concurrent lookups share readings of the change feed: one in flight at a time, fewer readings than lookups', { skip }, async () => {
  const app = t!;
  const P = await app.partner();
  const people = ['ada', 'bob', 'cyd', 'dia'];
  for (const p of people) {
    await app.user({ email: `${p}@example.org`, userId: p });
    await P.client.updateService(p, 'github', `${p}-0`);
  }
  readings.started = 0;
  readings.maxInFlight = 0;
  const lookups = 120;
  // Each request is its own turn of the event loop here (separate sockets), as under real load.
  const answers = await Promise.all(Array.from({ length: lookups }, (_, i) => P.client.returnServices(people[i % people.length]!)));
  assert.equal(answers.length, lookups);
  assert.equal(readings.maxInFlight, 1, 'never more than one reading in flight');
  assert.ok(readings.started >= 1 && readings.started < lookups, `${readings.started} readings for ${lookups} lookups`);
});

test('a lookup whose answer will not be kept reads no feed; one kept or served from memory reads it first', { skip }, async () => {
  const app = t!;
  const P = await app.partner();
  const people = ['fay', 'gus', 'hal'];
  for (const p of people) {
    await app.user({ email: `${p}@example.org`, userId: p });
    await P.client.updateService(p, 'github', `${p}-gh`);
  }
  // A reading applies the partner's creation before counting: until one has, an answer rendered for
  // a partner the feed names is not kept (services/answer-cache.ts, readBefore).
  await app.user({ email: 'ivy@example.org', userId: 'ivy' });
  await P.client.updateService('ivy', 'github', 'ivy-gh');
  for (let i = 0; i < 2; i++) await P.client.returnServices('ivy');
  const before = { readings: readings.started, hits: app.ctx.answers.hits };
  // The first ask is rendered and remembered: it reads no feed.
  for (const p of people) await P.client.returnServices(p);
  assert.equal(readings.started, before.readings, 'no reading for an answer that is not kept');
  // The second is rendered and kept, after a reading (so the changes it applies, which the answer
  // already shows, do not drop it); the third is served from memory, after a reading.
  for (const p of people) await P.client.returnServices(p);
  for (const p of people)
    assert.deepEqual(
      (await P.client.returnServices(p)).map((s) => s.usrSvcId),
      [`${p}-gh`],
    );
  assert.equal(app.ctx.answers.hits, before.hits + people.length);
  assert.equal(readings.started, before.readings + 2 * people.length, 'one reading before each kept render and each answer from memory (one at a time here)');
});

test('under concurrent reads, every read sent after a write was acknowledged shows it', { skip }, async () => {
  const app = t!;
  const P = await app.partner();
  await app.user({ email: 'eve@example.org', userId: 'eve' });
  await P.client.updateService('eve', 'github', 'v0');
  let stop = false;
  // Background readers keep readings in flight, so each check below lands behind one.
  const background = Array.from({ length: 8 }, async () => {
    while (!stop) await P.client.returnServices('eve');
  });
  try {
    for (let n = 1; n <= 25; n++) {
      await P.client.updateService('eve', 'github', `v${n}`);
      assert.deepEqual(
        (await P.client.returnServices('eve')).map((s) => s.usrSvcId),
        [`v${n}`],
        `the read after write ${n}`,
      );
    }
  } finally {
    stop = true;
    await Promise.all(background);
  }
  assert.equal(readings.maxInFlight, 1);
});

test('the partner cache reads the feed at most once per half of its bound, whatever the number of calls', { skip }, async () => {
  // Its own instance on the same database, with the answer cache off: every reading is the partner cache's.
  const app = await startTestApp({ ...t!.cliEnv, CONNECTIONS_PER_ADDRESS: '0', ANSWER_CACHE_MB: '0' });
  try {
    countReadings(app);
    const P = await app.partner();
    const client = new IdsvcClient({ baseUrl: app.baseUrl, apiKey: P.apiKey, apiToken: P.apiToken });
    readings.started = 0;
    readings.maxInFlight = 0;
    const started = performance.now();
    const calls = 200;
    for (let i = 0; i < calls / 10; i++) await Promise.all(Array.from({ length: 10 }, (_, j) => client.updateService(`pc${j}`, 'github', `v${i}`)));
    const elapsed = performance.now() - started;
    // A reading starts only when the last began more than MAX_LAG_MS / 2 before (a timer's slack of a millisecond aside).
    assert.ok(
      readings.started >= 1 && readings.started <= Math.floor(elapsed / (MAX_LAG_MS / 2 - 1)) + 1,
      `${readings.started} readings in ${Math.round(elapsed)} ms`,
    );
    assert.equal(readings.maxInFlight, 1);
  } finally {
    await app.close();
  }
});

test('a reading of the feed does not wait for a pooled connection', { skip }, async () => {
  const feed = new ChangeFeed(t!.ctx.db);
  await feed.fresh();
  const busy = await occupyPool(t!);
  try {
    // In the shared pool this reading would wait for a connection until DATABASE_TIMEOUT_MS, then fail.
    const reading = await feed.fresh();
    assert.equal(reading.ok, true);
    assert.equal(reading.unavailable, undefined);
  } finally {
    busy.release();
  }
});

test('an answer kept in memory is served while every pooled connection is busy', { skip }, async () => {
  // Its own instance with the partner cache on, and the catalogue checked as in production (not at
  // every call, as tests do elsewhere): a kept answer then needs no pooled connection at all. The
  // partner cache's bound is long, so that a slow machine's pauses do not send it to the table.
  const app = await startTestApp({ ...t!.cliEnv, CONNECTIONS_PER_ADDRESS: '0' }, {}, { catalogueCheckMs: 60_000, partnerMaxAgeMs: 60_000 });
  try {
    const P = await app.partner();
    const client = new IdsvcClient({ baseUrl: app.baseUrl, apiKey: P.apiKey, apiToken: P.apiToken });
    await app.user({ email: 'kim@example.org', userId: 'kim' });
    await client.updateService('kim', 'github', 'kim-gh');
    // Kept the second time it is asked for, served from memory after (test/db/answer-cache.test.ts
    // says when); a few asks more when the partner's creation reached the feed only after the
    // first ones (the answer rendered from its older row is not kept).
    const before = app.ctx.answers.hits;
    for (let i = 0; i < 6 && app.ctx.answers.hits === before; i++) await client.returnServices('kim');
    assert.ok(app.ctx.answers.hits > before, 'served from memory before the pool is taken');
    const hits = app.ctx.answers.hits;
    const busy = await occupyPool(app);
    try {
      assert.deepEqual(
        (await client.returnServices('kim')).map((s) => s.usrSvcId),
        ['kim-gh'],
      );
      assert.equal(app.ctx.answers.hits, hits + 1, 'served from memory with every pooled connection taken');
    } finally {
      busy.release();
    }
  } finally {
    await app.close();
  }
});

/** Reads `uid`'s public view of `apiKey` (no proof) until one is answered from memory; the hits counter after it. */
async function warmPublic(app: TestApp, apiKey: string, uid: string): Promise<number> {
  const url = `${app.baseUrl}/api/return_services/${apiKey}/${uid}/public`;
  const before = app.ctx.answers.hits;
  for (let i = 0; i < 6 && app.ctx.answers.hits === before; i++) assert.equal((await fetch(url)).status, 200);
  assert.ok(app.ctx.answers.hits > before, 'the public view is served from memory');
  return app.ctx.answers.hits;
}

test('a public view from memory waits for no reading while the last one is recent enough; a private one reads first', { skip }, async () => {
  // A bound far longer than the test, so that a slow machine's pauses do not make the last reading
  // too old; no usage counting, whose flush is a write of this process (it makes the next lookup wait).
  const app = await startTestApp({ ...t!.cliEnv, CONNECTIONS_PER_ADDRESS: '0', PARTNER_CACHE: '0', USAGE_COUNTING: '0' }, {}, { publicMaxLagMs: 60_000 });
  try {
    countReadings(app);
    const P = await app.partner();
    const lea = await app.user({ email: 'lea@example.org', userId: 'lea' });
    await P.client.updateService('lea', 'github', 'lea-gh');
    // Linked, so that the partner's pushes reach the public view.
    await P.client.syncUser('lea', { email: 'lea@example.org', password: lea.password });
    await app.ctx.partners.feed!.fresh();
    const hits = await warmPublic(app, P.apiKey, 'lea');
    const before = readings.started;
    for (let i = 0; i < 5; i++) assert.equal((await fetch(`${app.baseUrl}/api/return_services/${P.apiKey}/lea/public`)).status, 200);
    assert.equal(app.ctx.answers.hits, hits + 5);
    assert.equal(readings.started, before, 'no reading for a public view answered from memory');
    // The partner's own view is exact: each lookup kept or served from memory waits for a reading.
    for (let i = 0; i < 3; i++) await P.client.returnServices('lea');
    assert.ok(readings.started >= before + 2, `${readings.started - before} readings for 3 private lookups`);
    // A write of this process is seen at once: the next public lookup waits for a reading after it.
    // Both ways a push is written: one statement (a userId), a transaction (an e-mail address).
    const publicView = async () => (await fetch(`${app.baseUrl}/api/return_services/${P.apiKey}/lea/public`)).text();
    assert.match(await publicView(), /lea-gh/);
    await P.client.updateService('lea', 'github', 'lea-renamed');
    assert.match(await publicView(), /lea-renamed/);
    assert.match(await publicView(), /lea-renamed/);
    await P.client.updateService('lea@example.org', 'github', 'lea-by-address');
    assert.match(await publicView(), /lea-by-address/);
  } finally {
    await app.close();
  }
});

test('PUBLIC_CACHE_MAX_AGE=0: a public view from memory waits for a reading of its own, as a private one does', { skip }, async () => {
  const app = await startTestApp(
    { ...t!.cliEnv, CONNECTIONS_PER_ADDRESS: '0', PARTNER_CACHE: '0', USAGE_COUNTING: '0', PUBLIC_CACHE_MAX_AGE: '0' },
    {},
    { publicMaxLagMs: 60_000 },
  );
  try {
    countReadings(app);
    const P = await app.partner();
    await app.user({ email: 'max@example.org', userId: 'max' });
    await P.client.updateService('max', 'github', 'max-gh');
    await app.ctx.partners.feed!.fresh();
    const hits = await warmPublic(app, P.apiKey, 'max');
    const before = readings.started;
    for (let i = 0; i < 3; i++) assert.equal((await fetch(`${app.baseUrl}/api/return_services/${P.apiKey}/max/public`)).status, 200);
    assert.equal(app.ctx.answers.hits, hits + 3);
    assert.equal(readings.started, before + 3, 'one reading before each answer from memory');
  } finally {
    await app.close();
  }
});

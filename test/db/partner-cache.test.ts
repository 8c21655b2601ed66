// The partner cache (services/partner-cache.ts): it answers from memory, and any change to
// `partners`, by any connection, empties it: on SQLite through a counter kept by triggers, read on
// every call; on PostgreSQL through NOTIFY, while its change feed listens (when the feed is down,
// every call reads the table).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { once } from 'node:events';
import pg from 'pg';
import SQLite from 'better-sqlite3';
import { IdsvcClient } from '@idsvc/client';
import { updatePartner } from '../../src/repositories/partners.js';
import { startTestApp, PG_URL, TEST_DB, type TestApp, errorCode as code } from '../helpers/app.js';

let t: TestApp;
const METRICS_TOKEN = 'partner-cache-test-metrics-token';
/** /metrics as an operator's scraper reads it (issue 14.15: never public). */
const scrape = async () => (await fetch(`${t.baseUrl}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } })).text();
before(async () => {
  t = await startTestApp({ METRICS_TOKEN });
  if (TEST_DB === 'postgres' && !t.ctx.partners.caching) await once(t.ctx.partners, 'live');
});
after(() => t.close());

/** Runs SQL on a connection of its own to the test's database: another process, as far as the server knows. */
async function elsewhere(sqlText: string, params: unknown[], options: { skipTriggers?: boolean } = {}): Promise<void> {
  if (TEST_DB === 'postgres') {
    const c = new pg.Client({ connectionString: PG_URL, options: `-c search_path=${t.cliEnv.DATABASE_SCHEMA}` });
    await c.connect();
    try {
      // replica mode skips ordinary triggers: a change the cache is never told about.
      if (options.skipTriggers) await c.query('SET session_replication_role = replica');
      let n = 0;
      await c.query(sqlText.replace(/\?/g, () => `$${++n}`), params);
    } finally {
      await c.end();
    }
  } else {
    const file = t.cliEnv.DATABASE_URL!.slice('sqlite:'.length);
    const c = new SQLite(file);
    try {
      const run = () => c.prepare(sqlText).run(...(params as (string | number)[]));
      if (!options.skipTriggers) run();
      else {
        // The change counter's triggers dropped and put back around the change, in one transaction.
        const triggers = c.prepare("SELECT name, sql FROM sqlite_master WHERE type = 'trigger' AND tbl_name = 'partners' AND name LIKE 'partners_changed%'").all() as { name: string; sql: string }[];
        assert.equal(triggers.length, 3);
        c.transaction(() => {
          for (const tr of triggers) c.exec(`DROP TRIGGER ${tr.name}`);
          run();
          for (const tr of triggers) c.exec(tr.sql);
        })();
      }
    } finally {
      c.close();
    }
  }
}

/**
 * A new partner, once the change feed has also heard of its creation: on PostgreSQL that
 * notification arrives some time after the insert returned (later still on a loaded machine), and
 * would empty the cache, or satisfy a wait meant for a later change.
 */
async function settledPartner(): ReturnType<TestApp['partner']> {
  const cache = t.ctx.partners;
  if (TEST_DB !== 'postgres') return t.partner();
  let seen = 0;
  const count = () => seen++;
  cache.on('invalidated', count);
  try {
    const P = await t.partner();
    while (seen < 2) await once(cache, 'invalidated'); // this process's own write, then the notification
    return P;
  } finally {
    cache.off('invalidated', count);
  }
}

test('a partner suspended by another connection is refused on its next call', async () => {
  const P = await t.partner();
  assert.equal(await code(P.client.returnServices('kim@example.org')), 'not_found'); // read once: now cached where caching is on
  const invalidated = TEST_DB === 'postgres' ? once(t.ctx.partners, 'invalidated') : Promise.resolve();
  await elsewhere('UPDATE partners SET suspended = 1 WHERE id = ?', [P.id]);
  await invalidated; // the notification, on PostgreSQL; nothing to wait for on SQLite
  assert.equal(await code(P.client.returnServices('kim@example.org')), 'forbidden');
});

test('writes through this process take effect at once, without waiting for a notification', async () => {
  const P = await t.partner();
  assert.equal(await code(P.client.returnServices('kim@example.org')), 'not_found');
  await updatePartner(t.ctx.db.kysely, P.id, { suspended: true }, t.clock.now());
  assert.equal(await code(P.client.returnServices('kim@example.org')), 'forbidden');
  await updatePartner(t.ctx.db.kysely, P.id, { suspended: false }, t.clock.now());
  assert.equal(await code(P.client.returnServices('kim@example.org')), 'not_found');
});

test('SQLite answers from memory until the change counter moves, whoever moves it', { skip: TEST_DB !== 'sqlite' && 'SQLite only' }, async () => {
  const cache = t.ctx.partners;
  assert.equal(cache.caching, true);
  assert.match(await scrape(), /^idsvc_partner_cache_listening 1$/m);
  const P = await settledPartner();
  assert.equal(await code(P.client.returnServices('kim@example.org')), 'not_found');
  const hits = cache.hits;
  assert.equal(await code(P.client.returnServices('kim@example.org')), 'not_found');
  assert.equal(cache.hits, hits + 1, 'the second call is answered from memory');
  // A change that fires no trigger is invisible to the cache: this is what proves the row came from memory.
  await elsewhere('UPDATE partners SET suspended = 1 WHERE id = ?', [P.id], { skipTriggers: true });
  assert.equal(await code(P.client.returnServices('kim@example.org')), 'not_found', 'served from memory');
  // Any change that moves the counter, here to another partner's row by another connection, empties it.
  const Q = await t.partner();
  await elsewhere('UPDATE partners SET name = ? WHERE id = ?', ['renamed elsewhere', Q.id]);
  assert.equal(await code(P.client.returnServices('kim@example.org')), 'forbidden', 'read from the table again');
  // Deleting a partner elsewhere is seen at once too.
  assert.equal(await code(Q.client.returnServices('kim@example.org')), 'not_found');
  await elsewhere('DELETE FROM partners WHERE id = ?', [Q.id]);
  assert.equal(await code(Q.client.returnServices('kim@example.org')), 'invalid_api_key');
});

test('SQLite reads the change counter once per turn of the event loop, and a change is seen from the next turn on', { skip: TEST_DB !== 'sqlite' && 'SQLite only' }, async () => {
  const cache = t.ctx.partners;
  const P = await t.partner();
  await new Promise((r) => setImmediate(r)); // a fresh turn
  assert.equal((await cache.get(P.apiKey))?.suspended, false);
  await elsewhere('UPDATE partners SET suspended = 1 WHERE id = ?', [P.id]);
  // Still the turn whose first call read the counter: the calls of one turn share that reading.
  assert.equal((await cache.get(P.apiKey))?.suspended, false);
  await new Promise((r) => setImmediate(r));
  assert.equal((await cache.get(P.apiKey))?.suspended, true, 'the next turn reads the counter again and sees the change');
});

test('a token rotated by another connection is refused on its next call', async () => {
  const P = await settledPartner();
  const client = new IdsvcClient({ baseUrl: t.baseUrl, apiKey: P.apiKey, apiToken: P.apiToken });
  await client.updateService('kim@example.org', 'github', 'kim-gh');
  const invalidated = TEST_DB === 'postgres' ? once(t.ctx.partners, 'invalidated') : Promise.resolve();
  // A new hash with no grace period for the old token (as `partner rotate-token KEY --grace 0` leaves it).
  await elsewhere('UPDATE partners SET token_hash = ?, previous_token_hash = NULL, previous_token_expires_at = NULL WHERE id = ?', ['0'.repeat(64), P.id]);
  await invalidated;
  assert.equal(await code(client.updateService('kim@example.org', 'github', 'kim-gh2')), 'invalid_api_token');
});

test('PostgreSQL answers from memory while listening, and reads the table while the feed is down', { skip: TEST_DB !== 'postgres' && 'PostgreSQL only' }, async () => {
  const cache = t.ctx.partners;
  assert.equal(cache.caching, true);
  assert.match(await scrape(), /^idsvc_partner_cache_listening 1$/m);
  const P = await settledPartner();
  assert.equal(await code(P.client.returnServices('kim@example.org')), 'not_found');
  // A change that fires no trigger is invisible to the cache: this is what proves the row came from memory.
  await elsewhere('UPDATE partners SET suspended = 1 WHERE id = ?', [P.id], { skipTriggers: true });
  assert.equal(await code(P.client.returnServices('kim@example.org')), 'not_found', 'served from memory');

  // The feed goes down (its connection ended by the server): nothing is cached any more.
  const down = once(cache, 'down');
  const admin = new pg.Client({ connectionString: PG_URL });
  await admin.connect();
  await admin.query('SELECT pg_terminate_backend($1)', [cache.listenerPid]);
  await admin.end();
  await down;
  assert.equal(cache.caching, false);
  assert.match(await scrape(), /^idsvc_partner_cache_listening 0$/m);
  assert.equal(await code(P.client.returnServices('kim@example.org')), 'forbidden', 'read from the table');

  // It comes back by itself, empty (maybe already: it reconnects after 500 ms, and a loaded machine
  // may take that long over the calls above; an event already fired would be waited for forever).
  if (!cache.caching) await once(cache, 'live');
  await elsewhere('UPDATE partners SET suspended = 0 WHERE id = ?', [P.id], { skipTriggers: true });
  assert.equal(await code(P.client.returnServices('kim@example.org')), 'not_found');
});

test('PARTNER_CACHE=0 turns it off', async () => {
  const other = await startTestApp({ ...t.cliEnv, PARTNER_CACHE: '0' });
  try {
    const P = await t.partner();
    assert.equal(await code(new IdsvcClient({ baseUrl: other.baseUrl, apiKey: P.apiKey, apiToken: P.apiToken }).returnServices('kim@example.org')), 'not_found');
    await elsewhere('UPDATE partners SET suspended = 1 WHERE id = ?', [P.id], { skipTriggers: true });
    assert.equal(other.ctx.partners.caching, false);
    assert.equal(await code(new IdsvcClient({ baseUrl: other.baseUrl, apiKey: P.apiKey, apiToken: P.apiToken }).returnServices('kim@example.org')), 'forbidden');
  } finally {
    await other.close();
  }
});

// The partner cache (services/partner-cache.ts): it answers from memory, and any change to
// `partners`, by any connection, drops the row through the change feed it shares with the answer
// cache (services/change-feed.ts): on SQLite read at the first call of every turn of the event loop,
// so the change is seen from the next turn on; on PostgreSQL a row is served only while a reading
// that started at most MAX_LAG_MS ago succeeded, so a change is seen by every call made that long
// after its commit. While the feed cannot be read, every call reads the table.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { once } from 'node:events';
import pg from 'pg';
import SQLite from 'better-sqlite3';
import { IdsvcClient } from '@idsvc/client';
import { updatePartner } from '../../src/repositories/partners.js';
import { pastFeedLag, startTestApp, PG_URL, TEST_DB, type TestApp, errorCode as code } from '../helpers/app.js';

let t: TestApp;
const METRICS_TOKEN = 'partner-cache-test-metrics-token';
/** /metrics as an operator's scraper reads it (issue 14.15: never public). */
const scrapeOf = async (app: TestApp) => (await fetch(`${app.baseUrl}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } })).text();
before(async () => {
  t = await startTestApp({ METRICS_TOKEN });
});

/**
 * Waits until a change committed now is seen by every call: on SQLite the next turn of the event
 * loop; on PostgreSQL MAX_LAG_MS (a margin on top, since a timer may fire a little early).
 */
const seenByNextCall = (): Promise<unknown> => (TEST_DB === 'postgres' ? pastFeedLag() : new Promise((r) => setImmediate(r)));
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
      await c.query(
        sqlText.replace(/\?/g, () => `$${++n}`),
        params,
      );
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
        // The change feed's triggers dropped and put back around the change, in one transaction.
        const triggers = c
          .prepare("SELECT name, sql FROM sqlite_master WHERE type = 'trigger' AND tbl_name = 'partners' AND name LIKE 'answer_feed_partners_%'")
          .all() as { name: string; sql: string }[];
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

test('a partner suspended by another connection is refused on its next call', async () => {
  const P = await t.partner();
  assert.equal(await code(P.client.returnServices('kim@example.org')), 'not_found'); // read once: now cached where caching is on
  assert.equal(await code(P.client.returnServices('kim@example.org')), 'not_found');
  await elsewhere('UPDATE partners SET suspended = 1 WHERE id = ?', [P.id]);
  await seenByNextCall();
  assert.equal(await code(P.client.returnServices('kim@example.org')), 'forbidden');
});

test('a token rotated by another connection is refused on its next call', async () => {
  const P = await t.partner();
  const client = new IdsvcClient({ baseUrl: t.baseUrl, apiKey: P.apiKey, apiToken: P.apiToken });
  await client.updateService('kim@example.org', 'github', 'kim-gh');
  await client.updateService('kim@example.org', 'github', 'kim-gh1');
  // A new hash with no grace period for the old token (as `partner rotate-token KEY --grace 0` leaves it).
  await elsewhere('UPDATE partners SET token_hash = ?, previous_token_hash = NULL, previous_token_expires_at = NULL WHERE id = ?', ['0'.repeat(64), P.id]);
  await seenByNextCall();
  assert.equal(await code(client.updateService('kim@example.org', 'github', 'kim-gh2')), 'invalid_api_token');
});

test('writes through this process take effect at once, without waiting for the feed', async () => {
  const P = await t.partner();
  assert.equal(await code(P.client.returnServices('kim@example.org')), 'not_found');
  await t.ctx.db.write((w) => updatePartner(w, P.id, { suspended: true }, t.clock.now()));
  assert.equal(await code(P.client.returnServices('kim@example.org')), 'forbidden');
  await t.ctx.db.write((w) => updatePartner(w, P.id, { suspended: false }, t.clock.now()));
  assert.equal(await code(P.client.returnServices('kim@example.org')), 'not_found');
});

describe('answers from memory until the change feed names the partner, whoever changed it', () => {
  // On PostgreSQL with a bound far above any test's duration, so that every call below may be
  // answered from memory however busy the machine: what drops a row here is the feed alone.
  let app: TestApp;
  before(async () => {
    app = await startTestApp({ ...t.cliEnv, METRICS_TOKEN }, {}, { partnerMaxAgeMs: 600_000 });
  });
  after(() => app.close());
  const call = (P: { apiKey: string; apiToken: string }) =>
    code(new IdsvcClient({ baseUrl: app.baseUrl, apiKey: P.apiKey, apiToken: P.apiToken }).returnServices('kim@example.org'));
  /** A reading of the feed, as the next call would make one (on PostgreSQL at most every 300 s here). */
  const read = () => app.ctx.partners.feed!.fresh();

  test("a change that fires no trigger is not seen; one the feed names drops that partner's row alone", async () => {
    const cache = app.ctx.partners;
    assert.equal(cache.caching, true);
    const P = await t.partner();
    const Q = await t.partner();
    await read();
    for (const X of [P, Q]) assert.equal(await call(X), 'not_found');
    const hits = cache.hits;
    for (const X of [P, Q]) assert.equal(await call(X), 'not_found');
    assert.equal(cache.hits, hits + 2, 'the second calls are answered from memory');
    // A change that fires no trigger is invisible to the cache: this is what proves the rows come from memory.
    await elsewhere('UPDATE partners SET suspended = 1 WHERE id IN (?, ?)', [P.id, Q.id], { skipTriggers: true });
    await read();
    assert.equal(await call(P), 'not_found', 'served from memory');
    // A change the feed names, here P's name by another connection: P's row is read again, Q's stays.
    await elsewhere('UPDATE partners SET name = ? WHERE id = ?', ['renamed elsewhere', P.id]);
    const invalidated = once(cache, 'invalidated');
    await read();
    await invalidated;
    assert.equal(await call(P), 'forbidden', 'read from the table again');
    assert.equal(await call(Q), 'not_found', "another partner's row stays in memory");
    // A partner deleted elsewhere is unknown from the next reading on.
    await elsewhere('DELETE FROM partners WHERE id = ?', [Q.id]);
    await read();
    assert.equal(await call(Q), 'invalid_api_key');
  });

  test('while the feed cannot be read every call reads the table, and nothing changed meanwhile is missed', async () => {
    const cache = app.ctx.partners;
    const P = await t.partner();
    await read();
    assert.equal(await call(P), 'not_found');
    assert.equal(await call(P), 'not_found');
    const down = once(cache, 'down');
    // PostgreSQL's triggers name the feed table when they run, so there its other table goes away.
    const table = TEST_DB === 'postgres' ? 'answer_changes_horizon' : 'answer_changes';
    await elsewhere(`ALTER TABLE ${table} RENAME TO feed_away`, []);
    try {
      await read();
      await down;
      assert.equal(cache.caching, false);
      assert.match(await scrapeOf(app), /^idsvc_partner_cache_listening 0$/m);
      await elsewhere('UPDATE partners SET suspended = 1 WHERE id = ?', [P.id], { skipTriggers: true });
      assert.equal(await call(P), 'forbidden', 'read from the table');
      await elsewhere('UPDATE partners SET suspended = 0 WHERE id = ?', [P.id], { skipTriggers: true });
      assert.equal(await call(P), 'not_found');
      // A change while the feed cannot be read: the row kept from before must not outlive it.
      await elsewhere('UPDATE partners SET suspended = 1 WHERE id = ?', [P.id]);
    } finally {
      await elsewhere(`ALTER TABLE feed_away RENAME TO ${table}`, []);
    }
    const live = once(cache, 'live');
    await read();
    await live;
    assert.equal(cache.caching, true);
    assert.match(await scrapeOf(app), /^idsvc_partner_cache_listening 1$/m);
    assert.equal(await call(P), 'forbidden', 'the reading that found the feed again applied the change');
  });
});

test('SQLite reads the change feed once per turn of the event loop, and a change is seen from the next turn on', {
  skip: TEST_DB !== 'sqlite' && 'SQLite only',
}, async () => {
  const cache = t.ctx.partners;
  const P = await t.partner();
  await new Promise((r) => setImmediate(r)); // a fresh turn
  assert.equal((await cache.get(P.apiKey))?.suspended, false);
  await elsewhere('UPDATE partners SET suspended = 1 WHERE id = ?', [P.id]);
  // Still the turn whose first call read the feed: the calls of one turn share that reading.
  assert.equal((await cache.get(P.apiKey))?.suspended, false);
  await new Promise((r) => setImmediate(r));
  assert.equal((await cache.get(P.apiKey))?.suspended, true, 'the next turn reads the feed again and sees the change');
});

test('PostgreSQL serves a row from memory only while the feed was read within the bound', { skip: TEST_DB !== 'postgres' && 'PostgreSQL only' }, async () => {
  const cache = t.ctx.partners;
  const P = await t.partner();
  assert.equal(await code(P.client.returnServices('kim@example.org')), 'not_found');
  // Past the bound with no call: the next call reads the table, whatever is in memory.
  await pastFeedLag();
  await elsewhere('UPDATE partners SET suspended = 1 WHERE id = ?', [P.id], { skipTriggers: true });
  const misses = cache.misses;
  assert.equal(await code(P.client.returnServices('kim@example.org')), 'forbidden', 'a change no trigger names is still seen once the last reading is too old');
  assert.equal(cache.misses, misses + 1);
});

test('PARTNER_CACHE=0 turns it off', async () => {
  const other = await startTestApp({ ...t.cliEnv, PARTNER_CACHE: '0' });
  try {
    const P = await t.partner();
    assert.equal(
      await code(new IdsvcClient({ baseUrl: other.baseUrl, apiKey: P.apiKey, apiToken: P.apiToken }).returnServices('kim@example.org')),
      'not_found',
    );
    await elsewhere('UPDATE partners SET suspended = 1 WHERE id = ?', [P.id], { skipTriggers: true });
    assert.equal(other.ctx.partners.caching, false);
    assert.equal(
      await code(new IdsvcClient({ baseUrl: other.baseUrl, apiKey: P.apiKey, apiToken: P.apiToken }).returnServices('kim@example.org')),
      'forbidden',
    );
  } finally {
    await other.close();
  }
});

test("the partner cache's own feeds are gone: no NOTIFY trigger, no change counter", async () => {
  if (TEST_DB === 'postgres') {
    const c = new pg.Client({ connectionString: PG_URL });
    await c.connect();
    try {
      const triggers = await c.query('SELECT tgname FROM pg_trigger WHERE tgrelid = $1::regclass AND NOT tgisinternal ORDER BY tgname', [
        `${t.cliEnv.DATABASE_SCHEMA}.partners`,
      ]);
      assert.deepEqual(
        triggers.rows.map((r: { tgname: string }) => r.tgname),
        ['partners_answer_feed', 'partners_answer_feed_truncate'],
      );
      const fn = await c.query("SELECT 1 FROM pg_proc WHERE proname = 'idsvc_partners_changed' AND pronamespace = $1::regnamespace", [
        t.cliEnv.DATABASE_SCHEMA,
      ]);
      assert.equal(fn.rowCount, 0);
    } finally {
      await c.end();
    }
  } else {
    const c = new SQLite(t.cliEnv.DATABASE_URL!.slice('sqlite:'.length), { readonly: true });
    try {
      const names = c
        .prepare("SELECT name FROM sqlite_master WHERE tbl_name IN ('partners', 'partner_changes') AND type IN ('trigger', 'table') ORDER BY name")
        .pluck()
        .all();
      assert.deepEqual(names, ['answer_feed_partners_delete', 'answer_feed_partners_insert', 'answer_feed_partners_update', 'partners']);
    } finally {
      c.close();
    }
  }
});

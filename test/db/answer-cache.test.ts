// The answer cache (services/answer-cache.ts): a second read warms it, and any change to what fed an
// answer, made by another process (the idsvc CLI) or another connection (raw SQL), is seen by the
// very next read, without waiting, except a public view on PostgreSQL, which sees it by every read
// made MAX_LAG_MS after the commit (test/db/answer-feed-readings.test.ts checks that such a read
// waits for no reading, and that PUBLIC_CACHE_MAX_AGE=0 makes it exact); it stays within its size,
// never hands one reader's answer to another, and leaves the HTTP caching headers as they were.
// Both databases.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { after, before, describe, test } from 'node:test';
import SQLite from 'better-sqlite3';
import pg from 'pg';
import { returnServices } from '../../src/api/return-services.js';
import { serviceCollectionWidget } from '../../src/api/service-collection-widget.js';
import { findUserByUserId } from '../../src/repositories/users.js';
import { widgetBundle } from '../../src/widget/bundle.js';
import { AnswerCache } from '../../src/services/answer-cache.js';
import { ChangeFeed } from '../../src/services/change-feed.js';
import { setCentralIdentity } from '../../src/services/central.js';
import { pastFeedLag, PG_URL, postForm, startTestApp, TEST_DB, type TestApp } from '../helpers/app.js';
import { runCli } from '../helpers/cli.js';

let t: TestApp;
type Partner = Awaited<ReturnType<TestApp['partner']>>;
const LIMITS = { RATE_LIMIT_PER_KEY: '1000000', RATE_LIMIT_PER_KEY_UNPROVEN: '1000000', RATE_LIMIT_PER_ADDRESS: '1000000' };

before(async () => {
  t = await startTestApp(LIMITS);
});
after(() => t.close());

/** Runs SQL on a connection of its own to the test's database: another process, as far as the server knows. */
async function elsewhere(sqlText: string, ...params: (string | number)[]): Promise<void> {
  if (TEST_DB === 'postgres') {
    const c = new pg.Client({ connectionString: PG_URL, options: `-c search_path=${t.cliEnv.DATABASE_SCHEMA}` });
    await c.connect();
    try {
      let n = 0;
      await c.query(
        sqlText.replace(/\?/g, () => `$${++n}`),
        params,
      );
    } finally {
      await c.end();
    }
  } else {
    const c = new SQLite(t.cliEnv.DATABASE_URL!.slice('sqlite:'.length));
    try {
      c.prepare(sqlText).run(...params);
    } finally {
      c.close();
    }
  }
}

let people = 0;
/** A person with an entry of their own on gitlab, linked to a partner of their own that pushed github. */
async function person(app: TestApp = t): Promise<{ uid: string; userId: number; subjectId: number; partner: Partner }> {
  const uid = `person_${++people}`;
  const email = `${uid}@example.org`;
  const u = await app.user({ email, userId: uid });
  const partner = await app.partner({ name: `Partner of ${uid}` });
  const user = (await findUserByUserId(app.ctx.db, uid))!;
  const gitlab = (await app.ctx.catalogue.get()).byId.get('gitlab')!;
  await app.ctx.db.write((tx) => setCentralIdentity(tx, user, gitlab, `${uid}-gl`, { partnerId: null }, app.clock.now()));
  await partner.client.updateService(uid, 'github', `${uid}-gh`);
  await partner.client.syncUser(uid, { email, password: u.password });
  const subject = await app.ctx.db.kysely.selectFrom('subjects').select('id').where('user_ref', '=', u.id).executeTakeFirstOrThrow();
  // A reading of the feed applies the new partner: until one has, an answer rendered for it is not
  // kept (on PostgreSQL its key check does not wait for the feed; services/answer-cache.ts, readBefore).
  await app.ctx.partners.feed!.fresh();
  return { uid, userId: u.id, subjectId: subject.id, partner };
}

type Read = 'public' | 'private' | 'widget';

/**
 * Lets a change committed elsewhere reach the reads of `kind`: at once, but a public view (the
 * widget without proof is one) on PostgreSQL may lag by MAX_LAG_MS (a margin on top, since a timer
 * may fire a little early).
 */
async function seenBy(kind: Read): Promise<void> {
  if (TEST_DB === 'postgres' && kind !== 'private') await pastFeedLag();
}
/** One read as a partner's server or a browser makes it: status and body. */
async function read(kind: Read, partner: Partner, uid: string, format: 'xml' | 'json' = 'xml', app: TestApp = t): Promise<{ status: number; body: string }> {
  const q = format === 'json' ? '?format=json' : '';
  const res =
    kind === 'public'
      ? await fetch(`${app.baseUrl}/api/return_services/${partner.apiKey}/${uid}/public${q}`)
      : kind === 'private'
        ? await postForm(`${app.baseUrl}/api/return_services/${partner.apiKey}/${uid}${q}`, { api_token: partner.apiToken })
        : await fetch(`${app.baseUrl}/api/service_collection_widget/${partner.apiKey}/${uid}/FALSE`);
  return { status: res.status, body: await res.text() };
}

/**
 * Reads twice (the app's cache has room, so it keeps an answer the first time it renders it),
 * checks the second came from memory, and returns the answer.
 */
async function warm(kind: Read, partner: Partner, uid: string): Promise<{ status: number; body: string }> {
  const first = await read(kind, partner, uid);
  const hits = t.ctx.answers.hits;
  const second = await read(kind, partner, uid);
  assert.equal(t.ctx.answers.hits, hits + 1, 'the second read is answered from memory');
  assert.deepEqual(second, first);
  return second;
}

test('a cache with room keeps an answer the first time, and the answer from memory is byte for byte the rendered one', async () => {
  const p = await person();
  for (const kind of ['public', 'private', 'widget'] as const) {
    const misses = t.ctx.answers.misses;
    const answer = await warm(kind, p.partner, p.uid);
    assert.equal(answer.status, 200);
    assert.equal(t.ctx.answers.misses, misses + 1, `${kind}: rendered once, and kept`);
    assert.match(answer.body, new RegExp(`${p.uid}-gl`));
  }
  assert.ok(t.ctx.answers.size >= 3);
  assert.ok(t.ctx.answers.bytes > 0);
});

// Every API call asks for its partner row, the catalogue and the feed's reading before its answer:
// on SQLite all of them are at hand, so a read from memory is answered without making a promise.
// (On PostgreSQL a reading is a round trip: a public view skips it only within MAX_LAG_MS.)
test('on SQLite, a read from memory (return_services, the widget) waits for nothing: partner row, catalogue, feed reading and answer come at once, not as promises', {
  skip: TEST_DB !== 'sqlite' && 'SQLite: its readings are synchronous',
}, async () => {
  // The catalogue checked for edits once a second, as in production (the shared app checks on every call).
  const own = await startTestApp(LIMITS, {}, { catalogueCheckMs: 1000 });
  try {
    const p = await person(own);
    const returned: [string, unknown][] = [];
    const spies: [object, string, unknown][] = [];
    const spy = (owner: object, name: string, label: string) => {
      const target = owner as Record<string, (...args: unknown[]) => unknown>;
      const original = target[name]!;
      spies.push([owner, name, original]);
      target[name] = function (this: unknown, ...args: unknown[]) {
        const value = original.apply(this, args);
        returned.push([label, value]);
        return value;
      };
    };
    for (const kind of ['public', 'private', 'widget'] as const) {
      await read(kind, p.partner, p.uid, 'xml', own);
      await read(kind, p.partner, p.uid, 'xml', own); // kept now
      spy(own.ctx.partners, 'get', 'partner row');
      spy(own.ctx.catalogue, 'get', 'catalogue');
      spy(own.ctx.partners.feed!, 'fresh', 'feed reading'); // the one feed both caches read
      spy(own.ctx.answers, 'get', 'answer');
      // The operation's own answer too (the widget's also names its bundle, read once per process).
      if (kind === 'widget') {
        spy(serviceCollectionWidget, 'handler', 'handler');
        spy(widgetBundle, 'current', 'bundle');
      } else spy(returnServices, 'handler', 'handler');
      const hits = own.ctx.answers.hits;
      try {
        assert.equal((await read(kind, p.partner, p.uid, 'xml', own)).status, 200);
      } finally {
        for (const [owner, name, original] of spies.splice(0)) (owner as Record<string, unknown>)[name] = original;
      }
      assert.equal(own.ctx.answers.hits, hits + 1, `the ${kind} read came from memory`);
      const asked = ['partner row', 'catalogue', 'feed reading', 'answer', 'handler', ...(kind === 'widget' ? ['bundle'] : [])];
      assert.deepEqual(new Set(returned.map(([label]) => label)), new Set(asked));
      for (const [label, value] of returned.splice(0)) assert.ok(!(value instanceof Promise), `${kind}: the ${label} came as a promise`);
    }
  } finally {
    await own.close();
  }
});

describe('every kind of change to what feeds an answer, made on another connection, is seen by the next read (public views on PostgreSQL: one made MAX_LAG_MS later)', () => {
  interface Case {
    name: string;
    read: Read;
    change(p: Awaited<ReturnType<typeof person>>): Promise<void>;
    /** What the next answer shows. */
    expect(answer: { status: number; body: string }, p: Awaited<ReturnType<typeof person>>): void;
  }
  const now = Date.UTC(2026, 0, 2);
  const cases: Case[] = [
    {
      name: 'a central entry added',
      read: 'public',
      change: (p) =>
        elsewhere(
          'INSERT INTO central_identities (user_ref, svc_id, usr_svc_id, usr_svc_id_norm, verified, created_at, updated_at) VALUES (?, ?, ?, ?, 0, ?, ?)',
          p.userId,
          'twitter',
          'added',
          'added',
          now,
          now,
        ),
      expect: (a) => assert.match(a.body, /<svcId>twitter<\/svcId>/),
    },
    {
      name: 'a central entry changed',
      read: 'public',
      change: (p) => elsewhere("UPDATE central_identities SET usr_svc_id = 'renamed' WHERE user_ref = ? AND svc_id = 'gitlab'", p.userId),
      expect: (a) => assert.match(a.body, /gitlab\.com\/renamed/),
    },
    {
      name: 'a verification result',
      read: 'public',
      change: (p) => elsewhere("UPDATE central_identities SET verified = 1, verified_by = 'rel-me' WHERE user_ref = ? AND svc_id = 'gitlab'", p.userId),
      expect: (a) => assert.match(a.body, /<verified>TRUE<\/verified>/),
    },
    {
      name: 'a central entry removed',
      read: 'public',
      change: (p) => elsewhere("DELETE FROM central_identities WHERE user_ref = ? AND svc_id = 'gitlab'", p.userId),
      expect: (a) => assert.doesNotMatch(a.body, /gitlab/),
    },
    {
      // The answer of the account it left: only the old row names it.
      name: 'a central entry moved to another account',
      read: 'public',
      change: async (p) => {
        const other = await t.user({ email: `moved_to_${p.uid}@example.org`, userId: `moved_to_${p.uid}` });
        await elsewhere("UPDATE central_identities SET user_ref = ? WHERE user_ref = ? AND svc_id = 'gitlab'", other.id, p.userId);
      },
      expect: (a) => assert.doesNotMatch(a.body, /gitlab/),
    },
    {
      name: 'an opt-out',
      read: 'public',
      change: (p) => elsewhere('UPDATE users SET opted_in = 0, consented = 0 WHERE id = ?', p.userId),
      expect: (a) => assert.equal(a.status, 404),
    },
    {
      name: 'the proof of address withdrawn',
      read: 'public',
      change: (p) => elsewhere('UPDATE users SET email_proven_at = NULL WHERE id = ?', p.userId),
      expect: (a) => assert.equal(a.status, 404),
    },
    {
      name: 'the pro flag (usrSvcId shown to partners)',
      read: 'private',
      change: (p) => elsewhere('UPDATE users SET pro = 1 WHERE id = ?', p.userId),
      expect: (a, p) => assert.match(a.body, new RegExp(`<usrSvcId>${p.uid}-gl</usrSvcId>`)),
    },
    {
      name: 'a partner push',
      read: 'private',
      change: (p) =>
        elsewhere(
          'INSERT INTO partner_identities (partner_id, subject_id, svc_id, usr_svc_id, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)',
          p.partner.id,
          p.subjectId,
          'twitter',
          'pushed',
          now,
          now,
        ),
      expect: (a) => assert.match(a.body, /<usrSvcId>pushed<\/usrSvcId>/),
    },
    {
      name: 'a partner push changed',
      read: 'private',
      // Newer than the central entry it flowed into, so it wins the merge.
      change: (p) =>
        elsewhere("UPDATE partner_identities SET usr_svc_id = 'changed', updated_at = ? WHERE partner_id = ? AND svc_id = 'github'", now + 1000, p.partner.id),
      expect: (a) => assert.match(a.body, /<usrSvcId>changed<\/usrSvcId>/),
    },
    {
      name: 'a link ended',
      read: 'private',
      change: (p) => elsewhere('DELETE FROM links WHERE partner_id = ? AND user_ref = ?', p.partner.id, p.userId),
      expect: (a) => assert.doesNotMatch(a.body, /gitlab/),
    },
    {
      name: 'the partner row (made trusted)',
      read: 'private',
      change: async (p) => {
        await elsewhere('UPDATE partners SET trusted = 1 WHERE id = ?', p.partner.id);
        // On PostgreSQL the partner cache may serve a row up to MAX_LAG_MS behind its table
        // (docs/operations.md, PARTNER_CACHE); test/db/partner-cache.test.ts checks that bound.
        if (TEST_DB === 'postgres') await pastFeedLag();
      },
      expect: (a, p) => assert.match(a.body, new RegExp(`<usrSvcId>${p.uid}-gl</usrSvcId>`)),
    },
    {
      name: 'the widget data (a central entry added)',
      read: 'widget',
      change: (p) =>
        elsewhere(
          'INSERT INTO central_identities (user_ref, svc_id, usr_svc_id, usr_svc_id_norm, verified, created_at, updated_at) VALUES (?, ?, ?, ?, 0, ?, ?)',
          p.userId,
          'twitter',
          'added',
          'added',
          now,
          now,
        ),
      expect: (a) => assert.match(a.body, /"svcId":"twitter"/),
    },
    {
      name: 'the widget data (an opt-out)',
      read: 'widget',
      change: (p) => elsewhere('UPDATE users SET opted_in = 0, consented = 0 WHERE id = ?', p.userId),
      expect: (a, p) => assert.doesNotMatch(a.body, new RegExp(`${p.uid}-gl`)),
    },
  ];
  for (const c of cases) {
    test(c.name, async () => {
      const p = await person();
      const before = await warm(c.read, p.partner, p.uid);
      await c.change(p);
      await seenBy(c.read);
      const next = await read(c.read, p.partner, p.uid);
      assert.notDeepEqual(next, before, 'the next read sees the change');
      c.expect(next, p);
    });
  }
});

describe('a change by another process, the idsvc CLI, is seen by the next read', () => {
  test('user set --opt-out hides the user', async () => {
    const p = await person();
    assert.equal((await warm('public', p.partner, p.uid)).status, 200);
    assert.equal((await warm('private', p.partner, p.uid)).status, 200);
    const r = await runCli(t, ['user', 'set', p.uid, '--opt-out']);
    assert.equal(r.code, 0, r.stderr);
    await seenBy('public');
    assert.equal((await read('public', p.partner, p.uid)).status, 404);
    // The partner still sees its own push, but nothing of the central repository.
    const own = await read('private', p.partner, p.uid);
    assert.equal(own.status, 200);
    assert.doesNotMatch(own.body, /gitlab/);
  });

  test('user delete answers not_found', async () => {
    const p = await person();
    await warm('public', p.partner, p.uid);
    const r = await runCli(t, ['user', 'delete', p.uid]);
    assert.equal(r.code, 0, r.stderr);
    await seenBy('public');
    assert.equal((await read('public', p.partner, p.uid)).status, 404);
  });

  test('partner set --trusted shows usrSvcId at once', async () => {
    const p = await person();
    assert.doesNotMatch((await warm('private', p.partner, p.uid)).body, new RegExp(`<usrSvcId>${p.uid}-gl<`));
    const r = await runCli(t, ['partner', 'set', p.partner.apiKey, '--trusted', 'on']);
    assert.equal(r.code, 0, r.stderr);
    assert.match((await read('private', p.partner, p.uid)).body, new RegExp(`<usrSvcId>${p.uid}-gl<`));
  });

  test('catalogue disable removes the service from answers', async () => {
    const p = await person();
    await warm('public', p.partner, p.uid);
    const r = await runCli(t, ['catalogue', 'disable', 'gitlab']);
    assert.equal(r.code, 0, r.stderr);
    await seenBy('public');
    try {
      assert.doesNotMatch((await read('public', p.partner, p.uid)).body, /gitlab/);
    } finally {
      assert.equal((await runCli(t, ['catalogue', 'disable', 'gitlab', '--enable'])).code, 0);
    }
  });
});

test("the cache never hands a private answer to a public reader, nor one partner's answer to another", async () => {
  const p = await person();
  const stranger = await t.partner({ name: 'Stranger' });
  const mine = await warm('private', p.partner, p.uid);
  assert.match(mine.body, new RegExp(`<usrSvcId>${p.uid}-gh</usrSvcId>`));
  // The same key without the token, the same person: the public view, without a single usrSvcId.
  for (const format of ['xml', 'json'] as const) {
    const pub = await read('public', p.partner, p.uid, format);
    assert.equal(pub.status, 200);
    assert.doesNotMatch(pub.body, /usrSvcId/);
  }
  const unsignedWidget = await read('widget', p.partner, p.uid);
  assert.doesNotMatch(unsignedWidget.body, /"usrSvcId":"/);
  // Another partner's private view: not linked, nothing pushed, so only the central entries and no usrSvcId.
  const theirs = await read('private', stranger, p.uid);
  assert.equal(theirs.status, 200);
  assert.doesNotMatch(theirs.body, /usrSvcId/);
  // And XML and JSON are kept apart.
  const json = await read('private', p.partner, p.uid, 'json');
  assert.equal(JSON.parse(json.body).services.length, 2);
});

test('ETag and 304 on kept answers: service_details and return_services keep the ETag beside the body', async () => {
  const p = await person();
  const url = `${t.baseUrl}/api/service_details/${p.partner.apiKey}/gitlab`;
  const first = await fetch(url);
  const etag = first.headers.get('etag');
  assert.ok(etag);
  assert.equal((await fetch(url, { headers: { 'if-none-match': etag } })).status, 304);
  await warm('public', p.partner, p.uid);
  const publicUrl = `${t.baseUrl}/api/return_services/${p.partner.apiKey}/${p.uid}/public`;
  const cached = await fetch(publicUrl, { headers: { 'if-none-match': '"anything"' } });
  assert.equal(cached.status, 200);
  const kept = cached.headers.get('etag');
  assert.ok(kept, 'a public answer from the answer cache carries the ETag kept beside it');
  assert.equal(cached.headers.get('content-type'), 'application/xml; charset=utf-8');
  assert.equal((await fetch(publicUrl, { headers: { 'if-none-match': kept } })).status, 304);
});

/**
 * A 1 MB cache, in which about 5 answers of 200 kB fit, and a render of such answers that counts
 * its calls. `room`: the share below which every answer is kept (0: only those asked for before).
 */
async function withSmallCache(
  room: number | undefined,
  fn: (cache: AnswerCache, render: () => Promise<string>, renders: () => number) => Promise<void>,
): Promise<void> {
  const cache = new AnswerCache(new ChangeFeed(t.ctx.db), 1, 0, room);
  const big = 'x'.repeat(200_000);
  let count = 0;
  const render = async () => {
    count++;
    return big;
  };
  try {
    await fn(cache, render, () => count);
  } finally {
    cache.close();
  }
}

test('it stays within its size: a full cache makes way, the least recently read first, only for an answer asked for more often', () =>
  withSmallCache(0, async (cache, render, renders) => {
    for (let i = 0; i < 5; i++) for (let twice = 0; twice < 2; twice++) await cache.get(`k${i}`, 'v', render);
    assert.equal(cache.size, 5, 'five answers of 200 kB fill a 1 MB cache');
    // Asked for as often as those kept (twice): evicting one for it would only trade places.
    for (let twice = 0; twice < 2; twice++) await cache.get('k5', 'v', render);
    assert.equal(cache.size, 5);
    assert.equal(renders(), 12, 'k5 rendered twice, not kept');
    await cache.get('k5', 'v', render);
    assert.equal(renders(), 13);
    assert.equal(cache.size, 5, 'kept at its third ask, in place of another');
    assert.ok(cache.bytes <= 1024 * 1024, `${cache.bytes} bytes kept`);
    await cache.get('k5', 'v', render);
    assert.equal(renders(), 13, 'k5 is answered from memory');
    for (const key of ['k1', 'k2', 'k3', 'k4']) await cache.get(key, 'v', render);
    assert.equal(renders(), 13, 'the others are still there');
    await cache.get('k0', 'v', render);
    assert.equal(renders(), 14, 'the least recently read made way');
  }));

test('an answer rendered again with a new catalogue replaces its own kept answer, however often the others were asked for', () =>
  withSmallCache(0, async (cache, render, renders) => {
    for (let i = 0; i < 10; i++) await cache.get('k0', 'v', render); // the least recently read, and the most asked for
    for (let i = 1; i < 5; i++) for (let twice = 0; twice < 2; twice++) await cache.get(`k${i}`, 'v', render);
    assert.equal(cache.size, 5);
    for (let twice = 0; twice < 2; twice++) await cache.get('k4', 'v2', render);
    const rendered = renders();
    await cache.get('k4', 'v2', render);
    assert.equal(renders(), rendered, 'the answer of the new catalogue took its own place');
  }));

test('reads going round more people than it holds, again and again, leave the answers kept in place and read from memory', () =>
  withSmallCache(0, async (cache, render, renders) => {
    // Twenty people read in turn, five rounds: with each answer kept at its second ask in place of the
    // least recently read, every round would render all twenty and replace the cache's answers.
    for (let round = 0; round < 5; round++) for (let i = 0; i < 20; i++) await cache.get(`p${i}`, 'v', render);
    const rendered = renders();
    assert.ok(rendered <= 100 - 5 * 3, `${rendered} renders for 100 reads: from the third round on, the kept answers are hits`);
    assert.equal(cache.size, 5);
  }));

test('past its room, an answer asked for once is not kept: a sweep over everyone leaves the answers read again in place', () =>
  withSmallCache(0, async (cache, render, renders) => {
    await cache.get('often', 'v', render);
    assert.equal(cache.size, 0, 'not kept the first time');
    await cache.get('often', 'v', render);
    assert.equal(cache.size, 1, 'kept the second time');
    // Far more once-only answers than the cache holds.
    for (let i = 0; i < 50; i++) await cache.get(`once${i}`, 'v', render);
    assert.equal(cache.size, 1, 'none of them kept');
    const before = renders();
    await cache.get('often', 'v', render);
    assert.equal(renders(), before, 'the answer read again is still answered from memory');
  }));

test('below three quarters of its budget every answer is kept the first time; past them only those asked for before', () =>
  withSmallCache(undefined, async (cache, render, renders) => {
    // 768 kB of room: four answers of 200 kB go in at their first render.
    for (let i = 0; i < 4; i++) await cache.get(`first${i}`, 'v', render);
    assert.equal(cache.size, 4, 'each kept the first time');
    for (let i = 0; i < 4; i++) await cache.get(`first${i}`, 'v', render);
    assert.equal(renders(), 4, 'and answered from memory the second');
    // Past the room, the cache keeps what is asked for again, as a full one does.
    await cache.get('once', 'v', render);
    assert.equal(cache.size, 4, 'not kept the first time');
    await cache.get('once', 'v', render);
    assert.equal(cache.size, 5, 'kept the second time');
    for (let i = 0; i < 20; i++) await cache.get(`sweep${i}`, 'v', render);
    assert.equal(renders(), 26);
    // Kept, the sweep's answers would have pushed these out (the cache holds five).
    for (const key of ['first0', 'first1', 'first2', 'first3', 'once']) await cache.get(key, 'v', render);
    assert.equal(renders(), 26, 'a sweep over everyone replaced none of the answers kept');
  }));

test('an answer rendered from a partner row that a reading has since changed is answered but not kept', async () => {
  const P = await t.partner();
  const feed = new ChangeFeed(t.ctx.db);
  const cache = new AnswerCache(feed, 1);
  let renders = 0;
  const render = async (tags: Set<string>) => {
    tags.add(`u${P.id}`);
    return `rendered ${++renders}`;
  };
  try {
    await feed.fresh(); // where the feed starts (on PostgreSQL the first reading only sets it)
    const partnerRow = { tag: `p${P.id}`, at: feed.sequence }; // the partner read now, as the key check reads it
    await elsewhere('UPDATE partners SET name = ? WHERE id = ?', 'renamed', P.id);
    await new Promise((r) => setImmediate(r)); // a later turn, whose lookups wait for a reading of their own
    // The cache has room, so each ask waits for a reading first: the first applies the rename, so the
    // row the answers come from is stale and neither is kept.
    assert.equal(await cache.get('k', 'v', render, { readBefore: partnerRow }), 'rendered 1');
    assert.equal(await cache.get('k', 'v', render, { readBefore: partnerRow }), 'rendered 2');
    assert.equal(cache.size, 0, 'not kept');
    // Read again after that reading, the row is current: the answer is kept.
    const current = { tag: `p${P.id}`, at: feed.sequence };
    assert.equal(await cache.get('k', 'v', render, { readBefore: current }), 'rendered 3');
    assert.equal(cache.size, 1);
    assert.equal(await cache.get('k', 'v', render, { readBefore: current }), 'rendered 3', 'answered from memory');
  } finally {
    cache.close();
  }
});

test('a change drops exactly the answers that carry its tag, whether one answer or several carry it, also after one of them left', async () => {
  const feed = new ChangeFeed(t.ctx.db);
  // Only answers asked for before are kept: the second render of each is the one kept.
  const cache = new AnswerCache(feed, 1, 0, 0);
  let droppedAll = false;
  cache.on('invalidated', (tags: readonly string[]) => {
    if (tags.includes('*')) droppedAll = true;
  });
  /** One round with tags and keys of its own; false when a reading dropped everything, which proves nothing. */
  const round = async (n: number): Promise<boolean> => {
    // Tags no other test names: the change feed is shared by the whole database.
    const base = 900_000_000 + Math.floor(Math.random() * 1_000_000) * 10;
    const [shared, alone, second] = [`u${base}`, `u${base + 1}`, `u${base + 2}`];
    const carried: Record<string, string[]> = { a: [shared], b: [shared, second], c: [alone] };
    const renders: Record<string, number> = { a: 0, b: 0, c: 0 };
    const get = (name: string) =>
      cache.get(`${n}${name}`, 'v', async (tags) => {
        for (const tag of carried[name]!) tags.add(tag);
        return `${name} ${++renders[name]!}`;
      });
    const change = async (tag: string) => {
      await elsewhere('INSERT INTO answer_changes (tag) VALUES (?)', tag);
      await new Promise((r) => setImmediate(r));
      assert.equal((await feed.fresh()).ok, true);
      return !droppedAll;
    };
    droppedAll = false;
    // Kept the second time each is asked for: the second render is the one answered from memory.
    // A reading may drop everything during the gets too (a busy shared feed): each check first asks whether one did.
    const gets = async (names: string[]) => {
      const answers: string[] = [];
      for (const name of names) answers.push(await get(name));
      return droppedAll ? null : answers;
    };
    for (const name of ['a', 'b', 'c']) for (let i = 0; i < 2; i++) await get(name);
    let seen = await gets(['a', 'b', 'c']);
    if (seen === null) return false;
    assert.deepEqual(seen, ['a 2', 'b 2', 'c 2']);
    // An answer a change dropped had earned its place: its next render is kept at once.
    if (!(await change(alone))) return false; // carried by c alone
    seen = await gets(['a', 'b', 'c', 'c']);
    if (seen === null) return false;
    assert.deepEqual(seen, ['a 2', 'b 2', 'c 3', 'c 3'], 'c kept again at its next render');
    if (!(await change(second))) return false; // b leaves, and with it its place among the answers carrying `shared`
    seen = await gets(['a', 'b', 'b']);
    if (seen === null) return false;
    assert.deepEqual(seen, ['a 2', 'b 3', 'b 3'], 'b kept again at its next render');
    if (!(await change(shared))) return false; // carried by a and b
    seen = await gets(['a', 'b', 'c', 'a', 'b']);
    if (seen === null) return false;
    assert.deepEqual(seen, ['a 3', 'b 4', 'c 3', 'a 3', 'b 4']);
    return true;
  };
  try {
    await feed.fresh(); // on PostgreSQL the first reading only sets where the feed starts
    for (let n = 1; !(await round(n)); n++) assert.ok(n < 5, 'five rounds in a row had a reading that dropped everything');
  } finally {
    cache.close();
  }
});

test("a push by one partner drops only its own view of the person: another partner's answer stays in memory, and a row moved between partners changes both", async () => {
  const p = await person();
  const other = await t.partner({ name: `Other partner of ${p.uid}` });
  await t.ctx.partners.feed!.fresh();
  const mine = await warm('private', p.partner, p.uid);
  // Another partner names the same person (the subject they share) in its own repository.
  await other.client.updateService(p.uid, 'twitter', `${p.uid}-other-tw`);
  const hits = t.ctx.answers.hits;
  assert.deepEqual(await read('private', p.partner, p.uid), mine, 'unchanged');
  assert.equal(t.ctx.answers.hits, hits + 1, "answered from memory: the other partner's push did not drop it");
  const theirs = await warm('private', other, p.uid);
  assert.match(theirs.body, new RegExp(`<usrSvcId>${p.uid}-other-tw</usrSvcId>`));
  // Its row handed to the first partner, by another connection: the old row names the view it left, the new one the view it joined.
  await elsewhere("UPDATE partner_identities SET partner_id = ? WHERE partner_id = ? AND svc_id = 'twitter'", p.partner.id, other.id);
  assert.doesNotMatch((await read('private', other, p.uid)).body, /other-tw/);
  assert.match((await read('private', p.partner, p.uid)).body, new RegExp(`<usrSvcId>${p.uid}-other-tw</usrSvcId>`));
  // A partner's own push (not linked: it changes its repository alone, which only its own tag names) is seen at once.
  await warm('private', other, p.uid);
  await other.client.updateService(p.uid, 'reddit', `${p.uid}-rd`);
  assert.match((await read('private', other, p.uid)).body, new RegExp(`<usrSvcId>${p.uid}-rd</usrSvcId>`));
});

test('answers for a partner read long ago are still kept after the feed named more tags than it remembers', async () => {
  // The partner cache keeps a partner's row for as long as the row does not change, so the
  // sequence it was read at falls ever further behind a busy feed. The cache forgets the tags it
  // heard of past RECENT_TAGS_MAX (10,000); a partner's own changes must outlive that, or no answer
  // for that partner would be kept again.
  const P = await t.partner();
  const feed = new ChangeFeed(t.ctx.db);
  // Only answers asked for before are kept, as in a full cache.
  const cache = new AnswerCache(feed, 1, 0, 0);
  let renders = 0;
  const render = async (tags: Set<string>) => {
    tags.add(`p${P.id}`);
    return `rendered ${++renders}`;
  };
  const nextTurn = () => new Promise((r) => setImmediate(r));
  // A reading that cannot name what changed drops everything, rightly, whatever was read before
  // it. On PostgreSQL that is any reading whose transaction horizon another session of the server
  // held back while the feed pruned its oldest rows (these 11,000 rows prune some), which other
  // test files' sessions can do at any moment: such a round proves nothing and is run again.
  let droppedAll = false;
  cache.on('invalidated', (tags: readonly string[]) => {
    if (tags.includes('*')) droppedAll = true;
  });
  try {
    await feed.fresh(); // on PostgreSQL the first reading only sets where the feed starts
    for (let round = 1; ; round++) {
      droppedAll = false;
      const key = `k${round}`;
      const partnerRow = { tag: `p${P.id}`, at: feed.sequence };
      // Eleven readings of a thousand other people's changes each (one reading takes at most a thousand).
      for (let batch = 0; batch < 11; batch++) {
        await elsewhere(
          'WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 1000) INSERT INTO answer_changes (tag) SELECT ' +
            (TEST_DB === 'postgres' ? "'u' || (i + ?::int)" : "'u' || (i + ?)") +
            ' FROM n',
          (round * 11 + batch) * 1000 + 1_000_000,
        );
        await nextTurn();
        assert.equal((await feed.fresh()).ok, true);
      }
      await nextTurn();
      renders = 0;
      for (let i = 0; i < 2; i++) await cache.get(key, 'v', render, { readBefore: partnerRow });
      const kept = cache.size;
      const third = await cache.get(key, 'v', render, { readBefore: partnerRow });
      if (droppedAll && round < 5) {
        // A session holding the horizon back may hold it a while: give it time before the next round.
        await new Promise((r) => setTimeout(r, 200 * round));
        continue;
      }
      assert.equal(droppedAll, false, 'five rounds in a row had a reading that dropped everything');
      assert.equal(kept, 1, 'kept the second time, as for a partner read just now');
      assert.equal(third, 'rendered 2', 'answered from memory');
      // A change to the partner itself still keeps its older row's answers out.
      await elsewhere('UPDATE partners SET name = ? WHERE id = ?', 'renamed again', P.id);
      await nextTurn();
      assert.equal(await cache.get(key, 'v', render, { readBefore: partnerRow }), 'rendered 3');
      assert.equal(await cache.get(key, 'v', render, { readBefore: partnerRow }), 'rendered 4', 'not kept: the row it came from changed');
      break;
    }
  } finally {
    cache.close();
  }
});

test('ANSWER_CACHE_MB=0 turns it off', async () => {
  const other = await startTestApp({ ...t.cliEnv, ...LIMITS, ANSWER_CACHE_MB: '0' });
  try {
    const p = await person();
    for (let i = 0; i < 2; i++) assert.equal((await fetch(`${other.baseUrl}/api/return_services/${p.partner.apiKey}/${p.uid}/public`)).status, 200);
    assert.equal(other.ctx.answers.hits, 0);
    assert.equal(other.ctx.answers.caching, false);
  } finally {
    await other.close();
  }
});

test('while the change feed cannot be read nothing is served from memory, and nothing committed meanwhile is missed', async () => {
  const p = await person();
  await warm('public', p.partner, p.uid);
  const down = once(t.ctx.answers, 'down');
  // PostgreSQL's triggers name the feed table when they run, so there its other table goes away.
  const table = TEST_DB === 'postgres' ? 'answer_changes_horizon' : 'answer_changes';
  await elsewhere(`ALTER TABLE ${table} RENAME TO feed_away`);
  try {
    // Past the lag a public view may have, the next read needs a reading of its own, which fails.
    await seenBy('public');
    await read('public', p.partner, p.uid);
    await down;
    assert.equal(t.ctx.answers.caching, false);
    const hits = t.ctx.answers.hits;
    assert.equal((await read('public', p.partner, p.uid)).status, 200);
    assert.equal(t.ctx.answers.hits, hits, 'no answer from memory while changes could go unheard');
    // A change while the feed cannot be read.
    await elsewhere('UPDATE users SET opted_in = 0, consented = 0 WHERE id = ?', p.userId);
  } finally {
    await elsewhere(`ALTER TABLE feed_away RENAME TO ${table}`);
  }
  const live = once(t.ctx.answers, 'live');
  assert.equal((await read('public', p.partner, p.uid)).status, 404);
  await live;
  assert.equal(t.ctx.answers.caching, true);
});

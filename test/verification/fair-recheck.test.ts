// Re-checks fair to people and to services (verify.ts, polite-fetch.ts), on SQLite and PostgreSQL:
// a service that answers 503, then does not answer at all, then answers again never costs a
// person their mark; a host gets at most VERIFY_HOST_REQUESTS_PER_MINUTE requests a minute from
// the re-check job, and a Retry-After is honoured by not asking that host again before then.
import assert from 'node:assert/strict';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { after, before, beforeEach, describe, test } from 'node:test';
import { reverifyDue } from '../../src/jobs/reverify.js';
import { findUserByUserId, type User } from '../../src/repositories/users.js';
import { setCentralIdentity } from '../../src/services/central.js';
import { verifyIdentity } from '../../src/verification/verify.js';
import type { TestApp } from '../helpers/app.js';
import { addLocalService, pageWithBacklink, startSiteApp } from '../site/helpers.js';
import { startServer, type LocalServer } from './servers.js';

const HOUR = 3600_000;
const DAY = 24 * HOUR;
let t: TestApp;
let remote: LocalServer;
/** How the remote answers each page, by name: 'ok' (a backlink), '503', '429' (Retry-After: 120) or 'hang'. */
const mode = new Map<string, 'ok' | '503' | '429' | 'hang'>();
const agents: string[] = [];
let users = 0;

before(async () => {
  t = await startSiteApp({ VERIFY_TIMEOUT_MS: '300', VERIFY_HOST_REQUESTS_PER_MINUTE: '3', VERIFY_CONFIRM_AFTER_SECONDS: '3600' });
  remote = await startServer((req: IncomingMessage, res: ServerResponse) => {
    agents.push(req.headers['user-agent'] ?? '');
    const name = decodeURIComponent((req.url ?? '/').slice(1));
    const m = mode.get(name) ?? 'ok';
    if (m === 'hang') return; // never answers: the check's deadline ends it
    if (m === '503') return void res.writeHead(503, { 'content-type': 'text/plain' }).end('down for maintenance');
    if (m === '429') return void res.writeHead(429, { 'retry-after': '120', 'content-type': 'text/plain' }).end('slow down');
    res.writeHead(200, { 'content-type': 'text/html' }).end(pageWithBacklink(`${t.config.baseUrl}/u/${name.split('~')[0]}`));
  });
  await addLocalService(t, 'pages', 'Pages', remote.origin);
});
after(async () => {
  await remote.close();
  await t.close();
});
beforeEach(async () => {
  await t.ctx.db.kysely
    .updateTable('central_identities')
    .set({ next_check_at: t.clock.now() + 365 * DAY })
    .execute();
  // Past every host's budget minute and Retry-After of the test before.
  t.clock.advance(DAY);
});

async function newUser(): Promise<User> {
  users += 1;
  const u = await t.user({ email: `fair.${users}@example.org`, userId: `fair_${users}` });
  return (await findUserByUserId(t.ctx.db, u.userId))!;
}

async function addEntry(user: User, usrSvcId: string): Promise<number> {
  const svc = (await t.ctx.catalogue.get()).byId.get('pages')!;
  const { row } = await t.ctx.db.write((tx) => setCentralIdentity(tx, user, svc, usrSvcId, { partnerId: null }, t.clock.now()));
  return row.id;
}

const entry = (id: number) => t.ctx.db.kysely.selectFrom('central_identities').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
const attemptsOf = (id: number) => t.ctx.db.kysely.selectFrom('verification_attempts').selectAll().where('identity_id', '=', id).orderBy('id').execute();

describe('a transient failure never unverifies', () => {
  test('503, then no answer at all, then an answer again: the mark stays, and keeps its first date', async () => {
    const user = await newUser();
    const name = `${user.user_id}~flaky`;
    const id = await addEntry(user, name);
    mode.set(name, 'ok');
    assert.equal((await verifyIdentity(t.ctx, id))?.verified, true);
    const first = await entry(id);
    assert.equal(first.verified_by, 'rel-me');
    // Due again a day later, spread over the next two hours.
    assert.ok(first.next_check_at! >= t.clock.now() + DAY && first.next_check_at! < t.clock.now() + DAY + 2 * HOUR, String(first.next_check_at));

    mode.set(name, '503');
    t.clock.advance(DAY);
    const down = await verifyIdentity(t.ctx, id);
    assert.equal(down?.outcome, 'transient');
    assert.equal(down?.verified, true);
    assert.match(down!.detail, /HTTP 503/);
    assert.equal((await entry(id)).next_check_at, t.clock.now() + HOUR, 'asked again sooner');

    mode.set(name, 'hang');
    t.clock.advance(2 * HOUR);
    const slow = await verifyIdentity(t.ctx, id);
    assert.equal(slow?.outcome, 'transient');
    assert.match(slow!.detail, /did not answer/);
    let row = await entry(id);
    assert.equal(row.verified, 1);
    assert.equal(row.negative_since, null, 'a failure to look is not a negative');

    mode.set(name, 'ok');
    t.clock.advance(2 * HOUR);
    assert.equal((await verifyIdentity(t.ctx, id))?.outcome, 'verified');
    row = await entry(id);
    assert.equal(row.verified, 1);
    assert.equal(row.verified_at, first.verified_at, 'first verified: unchanged');
    assert.equal(row.last_checked_at, t.clock.now());
    assert.deepEqual(
      (await attemptsOf(id)).map((a) => [a.outcome, a.status]),
      [
        ['verified', 200],
        ['transient', 503],
        ['transient', null],
        ['verified', 200],
      ],
    );
  });
});

describe('politeness', () => {
  test('at most VERIFY_HOST_REQUESTS_PER_MINUTE requests a minute to one host; the rest wait for the next minute', async () => {
    const ids: number[] = [];
    for (let i = 0; i < 5; i++) {
      const user = await newUser();
      mode.set(`${user.user_id}~budget`, 'ok');
      ids.push(await addEntry(user, `${user.user_id}~budget`));
    }
    const before = remote.requests.length;
    await reverifyDue(t.ctx);
    assert.equal(remote.requests.length - before, 3, 'three requests this minute');
    const rows = await Promise.all(ids.map(entry));
    assert.equal(rows.filter((r) => r.verified === 1).length, 3);
    const waiting = rows.filter((r) => r.verified === 0);
    for (const r of waiting) {
      const attempt = (await attemptsOf(r.id)).at(-1)!;
      assert.equal(attempt.outcome, 'transient');
      assert.match(attempt.detail, /not asked now/);
      assert.ok(r.next_check_at! > t.clock.now());
    }
    assert.match(
      agents.at(-1)!,
      new RegExp(`^idsvc/[^ ]+ \\(identity verification; \\+${t.config.baseUrl.replace(/[.]/g, '\\.')}\\)$`),
      'the user agent names the service and its URL',
    );

    // Not a minute yet: still nothing for this host.
    for (const r of waiting) await verifyIdentity(t.ctx, r.id);
    assert.equal(remote.requests.length - before, 3);
    t.clock.advance(61_000);
    for (const r of waiting) await verifyIdentity(t.ctx, r.id);
    assert.equal(remote.requests.length - before, 5);
    for (const id of ids) assert.equal((await entry(id)).verified, 1);
  });

  test('a 429 with Retry-After defers the whole host until then, and never removes a mark', async () => {
    const a = await newUser();
    const b = await newUser();
    const slow = `${a.user_id}~retry`;
    const other = `${b.user_id}~retry`;
    const slowId = await addEntry(a, slow);
    const otherId = await addEntry(b, other);
    mode.set(slow, 'ok');
    assert.equal((await verifyIdentity(t.ctx, slowId))?.verified, true);
    t.clock.advance(DAY);

    mode.set(slow, '429');
    const before = remote.requests.length;
    const limited = await verifyIdentity(t.ctx, slowId);
    assert.equal(limited?.outcome, 'transient');
    assert.equal(limited?.verified, true);
    assert.equal(remote.requests.length - before, 1);

    mode.set(other, 'ok');
    const deferred = await verifyIdentity(t.ctx, otherId);
    assert.equal(deferred?.outcome, 'transient');
    assert.match(deferred!.detail, /not asked now/);
    assert.equal(remote.requests.length - before, 1, 'the host is not asked again before Retry-After');

    t.clock.advance(121_000);
    assert.equal((await verifyIdentity(t.ctx, otherId))?.verified, true);
    assert.equal(remote.requests.length - before, 2);
    assert.equal((await entry(slowId)).verified, 1);
  });
});

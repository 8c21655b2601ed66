// rel="me" verification of central entries (SPEC §10): "verify now" outcomes and reasons, recorded
// attempts, and the re-verification job: new entries first, every entry again after a day, a lost
// backlink clears the flag once a second check confirms it, and several instances never check one
// entry twice.
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import { sql } from 'kysely';
import { createContext, type AppContext } from '../../src/context.js';
import { reverifyDue } from '../../src/jobs/reverify.js';
import { sweepSite } from '../../src/jobs/site-sweep.js';
import { listOutbox } from '../../src/repositories/outbox.js';
import { findUserByUserId, type User } from '../../src/repositories/users.js';
import { setCentralIdentity } from '../../src/services/central.js';
import { verifyIdentity } from '../../src/verification/verify.js';
import type { TestApp } from '../helpers/app.js';
import {
  addLocalService,
  pageWithBacklink,
  pageWithoutBacklink,
  SiteClient,
  signUpConfirmed,
  startProfilePages,
  startSiteApp,
  type ProfilePages,
} from './helpers.js';

const DAY = 24 * 3600 * 1000;
let t: TestApp;
let remote: ProfilePages;
let users = 0;

before(async () => {
  t = await startSiteApp();
  remote = await startProfilePages();
  await addLocalService(t, 'pages', 'Pages', remote.origin);
  await addLocalService(t, 'morepages', 'More pages', remote.origin);
});
after(async () => {
  await remote.close();
  await t.close();
});

// Each test starts with nothing due, so the job's work is only what the test set up.
beforeEach(async () => {
  await t.ctx.db.kysely
    .updateTable('central_identities')
    .set({ next_check_at: t.clock.now() + 30 * DAY })
    .execute();
});

const profileOf = (userId: string) => `${t.config.baseUrl}/u/${userId}`;

async function newUser(): Promise<User> {
  users += 1;
  const u = await t.user({ email: `verify.${users}@example.org`, userId: `verify_${users}` });
  return (await findUserByUserId(t.ctx.db, u.userId))!;
}

async function addEntry(user: User, svcId: string, usrSvcId: string, partnerId: number | null = null): Promise<number> {
  const svc = (await t.ctx.catalogue.get()).byId.get(svcId)!;
  const { row } = await t.ctx.db.write((tx) => setCentralIdentity(tx, user, svc, usrSvcId, { partnerId }, t.clock.now()));
  return row.id;
}

const entry = (id: number) => t.ctx.db.kysely.selectFrom('central_identities').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
const attemptsOf = (id: number) => t.ctx.db.kysely.selectFrom('verification_attempts').selectAll().where('identity_id', '=', id).orderBy('id').execute();

describe('verify now', () => {
  test('records each outcome with its reason', async () => {
    const user = await newUser();
    remote.pages.set(`${user.user_id}-ok`, pageWithBacklink(profileOf(user.user_id)));
    remote.pages.set(`${user.user_id}-plain`, pageWithoutBacklink);
    remote.pages.set(`${user.user_id}-other`, pageWithBacklink('https://someone.else.example/'));
    const cases: [string, string, RegExp][] = [
      [`${user.user_id}-ok`, 'verified', /rel="me" link to .* found/],
      [`${user.user_id}-plain`, 'absent', /^looked for a rel="me" link to .* on .*-plain: no rel="me" link found on the page$/],
      [`${user.user_id}-other`, 'absent', /rel="me" links point elsewhere: https:\/\/someone\.else\.example\//],
      [`${user.user_id}-missing`, 'absent', /the page answered HTTP 404$/],
    ];
    for (const [name, outcome, detail] of cases) {
      const id = await addEntry(user, 'pages', name);
      const result = await verifyIdentity(t.ctx, id);
      assert.equal(result?.outcome, outcome, name);
      assert.match(result!.detail, detail);
      const row = await entry(id);
      assert.equal(row.verified, outcome === 'verified' ? 1 : 0);
      assert.equal(row.verified_by, outcome === 'verified' ? 'rel-me' : null);
      assert.equal(row.evidence_url, outcome === 'verified' ? `${remote.origin}/${name}` : null);
      assert.equal(row.last_checked_at, t.clock.now());
      const attempt = (await attemptsOf(id)).at(-1);
      assert.equal(attempt?.outcome, outcome);
      assert.equal(attempt?.method, 'rel-me');
      assert.equal(attempt?.status, name.endsWith('-missing') ? 404 : 200);
      assert.equal(attempt?.url, `${remote.origin}/${name}`);
      assert.equal(attempt?.attempted_at, t.clock.now());
    }
  });

  test('the account page shows the result and the reason right after the check', async () => {
    const client = new SiteClient(t.baseUrl);
    await signUpConfirmed(t, client, { email: 'verify.page@example.org', user_id: 'verify_page', password: 'reasons are shown here', opt_in: true });
    await client.submit('/account/identities', { svc_id: 'pages', usr_svc_id: 'verify_page-nowhere' });
    const { res } = await client.submit('/account/identities/verify', { svc_id: 'pages' });
    assert.equal(res.status, 303);
    assert.equal(res.headers.get('location'), '/account?checked=pages#identity-pages');
    const { body } = await client.get('/account?checked=pages');
    assert.match(
      body,
      /role="status"><p class="check bad" data-check-result="absent" data-method="rel-me"><span class="check-label">Checked just now:<\/span> <strong>Proof not found<\/strong> \(a rel=(&quot;|")me(&quot;|") link back to your profile\) — looked for a rel=(&quot;|")me(&quot;|") link to [^ ]+ on [^ ]+verify_page-nowhere: the page answered HTTP 404 \(HTTP 404\)/,
    );
  });

  test('a user cannot check another user\'s entry, or use "verify now" as a crawler', async () => {
    const client = new SiteClient(t.baseUrl);
    await signUpConfirmed(t, client, { email: 'verify.limit@example.org', user_id: 'verify_limit', password: 'only my own entries' });
    const none = await client.submit('/account/identities/verify', { svc_id: 'github' });
    assert.equal(none.res.status, 404);
    await client.submit('/account/identities', { svc_id: 'pages', usr_svc_id: 'limit-page' });
    const statuses: number[] = [];
    for (let i = 0; i < 11; i++) statuses.push((await client.submit('/account/identities/verify', { svc_id: 'pages' })).res.status);
    assert.deepEqual(statuses, [...Array(10).fill(303), 429]);
  });
});

describe('the re-verification job', () => {
  test('checks new entries — typed on the site or flowed in from a partner — soon after they appear', async () => {
    const user = await newUser();
    remote.pages.set(`${user.user_id}-a`, pageWithBacklink(profileOf(user.user_id)));
    const own = await addEntry(user, 'pages', `${user.user_id}-a`);
    const partner = await t.partner({ name: 'Flow partner' });
    await partner.client.updateService(user.user_id, 'morepages', `${user.user_id}-b`);
    await partner.client.syncUser(user.user_id, { email: user.email, password: 'correct horse battery' });
    const flowed = await t.ctx.db.kysely
      .selectFrom('central_identities')
      .select('id')
      .where('user_ref', '=', user.id)
      .where('svc_id', '=', 'morepages')
      .executeTakeFirstOrThrow();
    assert.equal((await entry(flowed.id)).source_partner_id, partner.id);

    assert.equal(await reverifyDue(t.ctx), 2);
    assert.equal((await entry(own)).verified, 1);
    assert.equal((await attemptsOf(flowed.id))[0]?.outcome, 'absent');
    assert.equal(await reverifyDue(t.ctx), 0, 'nothing is due again the same day');
  });

  test('re-checks every entry a day after its last check, and a lost backlink clears the flag once confirmed', async () => {
    const user = await newUser();
    const name = `${user.user_id}-daily`;
    remote.pages.set(name, pageWithBacklink(profileOf(user.user_id)));
    const id = await addEntry(user, 'pages', name);
    const partner = await t.partner({ name: 'Watching partner' });
    await partner.client.syncUser(user.user_id, { email: user.email, password: 'correct horse battery' });
    await reverifyDue(t.ctx);
    assert.equal((await entry(id)).verified, 1);
    const flippedOn = (await listOutbox(t.ctx.db, partner.id)).filter((e) => e.event_type === 'identity.updated');
    assert.equal(JSON.parse(flippedOn.at(-1)!.payload).data.verified, true, 'linked partners hear of the new mark');

    const verifiedAt = (await entry(id)).verified_at;
    remote.pages.set(name, pageWithoutBacklink);
    t.clock.advance(DAY - 60_000);
    assert.equal(await reverifyDue(t.ctx), 0, 'not yet a day');
    assert.equal((await entry(id)).verified, 1);
    // The daily check comes within the jitter (up to two hours) after the day.
    t.clock.advance(2 * 3600_000 + 60_000);
    assert.ok((await reverifyDue(t.ctx)) >= 1);
    let row = await entry(id);
    assert.equal(row.verified, 1, 'one definite negative does not remove the mark');
    assert.equal(row.negative_since, t.clock.now());
    assert.equal(row.next_check_at, t.clock.now() + 3600_000, 'it is confirmed after the delay');
    t.clock.advance(3600_000);
    assert.ok((await reverifyDue(t.ctx)) >= 1);
    row = await entry(id);
    assert.equal(row.verified, 0);
    assert.equal(row.verified_by, null);
    assert.equal(row.verified_at, null);
    assert.equal(row.evidence_url, null);
    assert.equal(row.negative_since, null);
    assert.notEqual(verifiedAt, null);
    assert.deepEqual(
      (await attemptsOf(id)).map((a) => a.outcome),
      ['verified', 'absent', 'absent'],
    );
    const events = (await listOutbox(t.ctx.db, partner.id)).filter((e) => e.event_type === 'identity.updated');
    assert.equal(JSON.parse(events.at(-1)!.payload).data.verified, false, 'and of its loss');
    const lost = (await listOutbox(t.ctx.db, partner.id)).filter((e) => e.event_type === 'identity.unverified');
    assert.equal(lost.length, 1);
    const reason = JSON.parse(lost[0]!.payload).data.reason;
    assert.equal(reason.method, 'rel-me');
    assert.equal(reason.evidenceUrl, `${remote.origin}/${name}`);
    assert.equal(reason.status, 200);
    assert.match(reason.detail, /no rel="me" link found on the page/);
  });

  test('leaves entries an operator verified alone', async () => {
    const user = await newUser();
    const id = await addEntry(user, 'pages', `${user.user_id}-operator`);
    await t.ctx.db.kysely
      .updateTable('central_identities')
      .set({ verified: 1, verified_by: 'operator', verified_at: t.clock.now(), next_check_at: null })
      .where('id', '=', id)
      .execute();
    assert.equal(await reverifyDue(t.ctx), 0);
    assert.equal((await attemptsOf(id)).length, 0);
    // "Verify now" still runs, and a failure does not undo the operator's mark.
    await verifyIdentity(t.ctx, id);
    assert.equal((await entry(id)).verified_by, 'operator');
  });

  test('two instances running at once check each due entry exactly once', async () => {
    const db = t.ctx.db;
    const schema = db.dialect === 'postgres' ? (await sql<{ s: string }>`select current_schema() as s`.execute(db.kysely)).rows[0]!.s : undefined;
    const second: AppContext = await createContext(t.config, { clock: t.clock, ...(schema ? { pgSchema: schema } : {}) });
    try {
      const ids: number[] = [];
      for (let i = 0; i < 6; i++) {
        const user = await newUser();
        remote.pages.set(`${user.user_id}-race`, pageWithBacklink(profileOf(user.user_id)));
        ids.push(await addEntry(user, 'pages', `${user.user_id}-race`));
        ids.push(await addEntry(user, 'morepages', `${user.user_id}-race`));
      }
      const before = remote.requests.length;
      const [a, b, c] = await Promise.all([reverifyDue(t.ctx), reverifyDue(second), reverifyDue(second)]);
      assert.equal(a + b + c, ids.length);
      assert.equal(remote.requests.length - before, ids.length, 'each page fetched once');
      for (const id of ids) assert.equal((await attemptsOf(id)).length, 1);
    } finally {
      await second.close();
    }
  });
});

test('old attempts and expired sessions are swept', async () => {
  const user = await newUser();
  const id = await addEntry(user, 'pages', `${user.user_id}-old`);
  await verifyIdentity(t.ctx, id);
  await t.ctx.db.kysely
    .insertInto('sessions')
    .values({ id: 'expired-session', user_ref: user.id, csrf_token: 'x', created_at: 0, expires_at: t.clock.now() - 1 })
    .execute();
  t.clock.advance(91 * DAY);
  await sweepSite(t.ctx);
  assert.equal((await attemptsOf(id)).length, 0);
  assert.equal((await t.ctx.db.kysely.selectFrom('sessions').select('id').where('id', '=', 'expired-session').execute()).length, 0);
});

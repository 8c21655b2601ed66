// Proof of e-mail ownership (issue 15), through HTTP as partners and people use it: an account's
// address counts only once its owner follows the mailed link. Until then partners cannot tell the
// account from nobody, their pushes about the address stay out of it, and sync_user refuses it.
import assert from 'node:assert/strict';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { Migrator, sql } from 'kysely';
import pg from 'pg';
import { migrate, openDatabase } from '../../src/db/database.js';
import { migrationsFor } from '../../src/db/migrations/index.js';
import { emailHashes } from '../../src/domain/identifiers.js';
import { sweepSite } from '../../src/jobs/site-sweep.js';
import { MAILS_PER_ADDRESS_PER_HOUR } from '../../src/services/ownership.js';
import { errorCode, PG_URL, startTestApp, TEST_DB, type TestApp } from '../helpers/app.js';
import { lastMailTo, linkIn, mailsTo } from '../helpers/mailbox.js';
import { assertLogsClean, followMailedLink, SiteClient, signUpConfirmed, startSiteApp } from './helpers.js';
import { runCli } from '../helpers/cli.js';

let t: TestApp;
const secrets: string[] = [];
let n = 0;

before(async () => {
  t = await startSiteApp({ TRUST_PROXY: 'true' });
});
after(() => t.close());

const browser = () => new SiteClient(t.baseUrl, { 'x-forwarded-for': `10.15.${Math.floor(++n / 250)}.${n % 250}` });

function fresh(prefix: string) {
  n += 1;
  const email = `${prefix}.${n}@example.org`;
  const password = `${prefix} sings ${n} quiet songs`;
  const userId = `${prefix}_${n}`;
  secrets.push(email, password);
  return { ...emailHashes(email), email, password, userId };
}

/** An answer of the partner API as status and body: what "answers alike" compares. */
async function answer(pathAndQuery: string, token?: string): Promise<string> {
  const res = await fetch(`${t.baseUrl}${pathAndQuery}`, token ? { method: 'POST', body: new URLSearchParams({ api_token: token }) } : {});
  return `${res.status} ${(await res.text()).trim()}`;
}

/** Signs up through the site and stops there: the address is not proven. */
async function signUpOnly(who: { email: string; password: string; userId: string }, optIn = true): Promise<SiteClient> {
  const client = browser();
  const res = await client.signUp({ email: who.email, user_id: who.userId, password: who.password, opt_in: optIn });
  assert.equal(res.status, 303);
  assert.equal(res.headers.get('location'), '/signup/sent');
  return client;
}

async function exportOf(client: SiteClient): Promise<{ account: Record<string, unknown>; partnerEntries: unknown[]; identities: unknown[] }> {
  const { res, body } = await client.submit('/account/export');
  assert.equal(res.status, 200);
  return JSON.parse(body);
}

describe('an unproven account', () => {
  test('names nobody to partners: every form of its address and its userId answers as for an unknown person', async () => {
    const p = await t.partner({ name: 'Reader' });
    secrets.push(p.apiToken);
    const who = fresh('unproven');
    const client = await signUpOnly(who);
    assert.equal((await client.logIn(who.email, who.password)).status, 303, 'the owner can log in meanwhile');
    await client.submit('/account/identities', { svc_id: 'github', usr_svc_id: 'unproven-gh' });
    const nobody = fresh('nobody');
    const forms = (x: { email: string; md5: string; sha256: string; userId: string }) => [x.md5, x.sha256, encodeURIComponent(x.email), x.userId];
    const mine = forms(who);
    const theirs = forms(nobody);
    for (let i = 0; i < mine.length; i++) {
      for (const op of ['return_services', 'return_profile']) {
        for (const view of ['/public', '']) {
          const token = view === '' ? p.apiToken : undefined;
          assert.equal(
            await answer(`/api/${op}/${p.apiKey}/${mine[i]}${view}`, token),
            await answer(`/api/${op}/${p.apiKey}/${theirs[i]}${view}`, token),
            `${op}${view} ${i}`,
          );
        }
      }
    }
    assert.deepEqual(await p.publicClient.reverseLookup('github', 'unproven-gh'), []);
    assert.equal((await fetch(`${t.baseUrl}/u/${who.userId}`)).status, 404);
    const wf = await fetch(`${t.baseUrl}/.well-known/webfinger?resource=${encodeURIComponent(`acct:${who.userId}@${new URL(t.config.baseUrl).host}`)}`);
    assert.equal(wf.status, 404);
  });

  test('does not take in what partners push about its address; sync_user refuses the right password until it is proven', async () => {
    const A = await t.partner({ name: 'Pusher', webhookUrl: 'http://127.0.0.1:9/hook' });
    secrets.push(A.apiToken);
    const who = fresh('pushed');
    const client = await signUpOnly(who);
    await client.logIn(who.email, who.password);
    // A push under the hash while the account is unproven goes to the person as partners know them.
    await A.client.updateService(who.sha256, 'github', 'pushed-before-proof');
    assert.deepEqual((await exportOf(client)).partnerEntries, [], 'nothing from partners reaches the account');

    const refused = await errorCode(A.client.syncUser(who.md5, { email: who.email, password: who.password }));
    assert.equal(refused, 'forbidden');
    const res = await fetch(`${t.baseUrl}/api/sync_user/${A.apiKey}/${who.md5}?format=json`, {
      method: 'POST',
      body: new URLSearchParams({ api_token: A.apiToken, email_address: who.email, password: who.password }),
    });
    assert.equal(res.status, 403);
    assert.match(((await res.json()) as { error: { message: string } }).error.message, /Confirm your e-mail address first/);
    // A wrong password answers as it always did, as for an address with no account.
    const wrong = await fetch(`${t.baseUrl}/api/sync_user/${A.apiKey}/${who.md5}?format=json`, {
      method: 'POST',
      body: new URLSearchParams({ api_token: A.apiToken, email_address: who.email, password: 'not the password at all' }),
    });
    const unknown = await fetch(`${t.baseUrl}/api/sync_user/${A.apiKey}/${who.md5}?format=json`, {
      method: 'POST',
      body: new URLSearchParams({ api_token: A.apiToken, email_address: 'no.account.here@example.org', password: 'not the password at all' }),
    });
    assert.equal(wrong.status, 401);
    assert.equal(await wrong.text(), await unknown.text());
    const events = await t.ctx.db.kysely.selectFrom('outbox').select('event_type').where('partner_id', '=', A.id).execute();
    assert.deepEqual(events, [], 'nothing about the account went out');

    // Proving the address folds the earlier push in and makes the user visible (they opted in).
    const confirmed = await followMailedLink(client, linkIn(await lastMailTo(t, who.email), '/confirm?token='));
    assert.equal(confirmed.res.headers.get('location'), '/account?msg=confirmed', 'the logged-in owner lands on the account page');
    const exported = await exportOf(client);
    assert.deepEqual(
      exported.partnerEntries.map((e) => (e as { usrSvcId: string }).usrSvcId),
      ['pushed-before-proof'],
    );
    assert.equal(exported.account.optedIn, true);
    assert.equal(exported.account.visibleToPartners, true);
    assert.deepEqual(
      (await A.client.returnServices(who.userId)).map((s) => s.usrSvcId),
      ['pushed-before-proof'],
      'one person under every name now',
    );
    assert.equal(await A.client.syncUser(who.md5, { email: who.email, password: who.password }), true);
    assert.deepEqual(
      (await A.publicClient.returnServices(who.email, { profileType: 'public' })).map((s) => s.svcId),
      ['github'],
    );
  });

  test('the link opens a page with a button (a mail scanner opening it proves nothing), works once, and for 24 hours', async () => {
    const who = fresh('once');
    const client = await signUpOnly(who, false);
    const link = linkIn(await lastMailTo(t, who.email), '/confirm?token=');
    const scanner = browser();
    const seen = await scanner.get(link);
    assert.equal(seen.res.status, 200);
    assert.match(seen.body, new RegExp(`account <strong class="user-id">${who.userId}</strong>`));
    const row = await t.ctx.db.kysely.selectFrom('users').select('email_proven_at').where('user_id', '=', who.userId).executeTakeFirstOrThrow();
    assert.equal(row.email_proven_at, null, 'opening the link proved nothing');
    const token = new URL(link, t.baseUrl).searchParams.get('token')!;
    const stored = await t.ctx.db.kysely.selectFrom('email_tokens').select('token_hash').execute();
    assert.ok(!stored.some((r) => r.token_hash === token), 'only a hash of the token is stored');

    // A day later the link is dead; a new one (asked for on the account page) works, once.
    t.clock.advance(24 * 3600 * 1000 + 1000);
    assert.equal((await client.get(link)).res.status, 410);
    assert.equal((await client.logIn(who.email, who.password)).status, 303);
    const account = await client.get('/account');
    assert.match(account.body, /data-unconfirmed="yes"/);
    assert.match(account.body, /Send the link again/);
    const resent = await client.submit('/account/confirm/resend');
    assert.equal(resent.res.headers.get('location'), '/account?msg=resent#confirm-address');
    const fresher = linkIn(await lastMailTo(t, who.email), '/confirm?token=');
    assert.notEqual(fresher, link);
    const first = await followMailedLink(browser(), fresher);
    assert.equal(first.res.headers.get('location'), '/login?msg=confirmed', 'another browser is sent to log in, not logged in');
    assert.equal((await browser().get(fresher)).res.status, 410, 'used once');
    assert.doesNotMatch((await client.get('/account')).body, /data-unconfirmed/);
  });

  test('"send the link again" is throttled, and an earlier link stops working when a new one is sent', async () => {
    const who = fresh('resend');
    const client = await signUpOnly(who, false);
    await client.logIn(who.email, who.password);
    const firstLink = linkIn(await lastMailTo(t, who.email), '/confirm?token=');
    const outcomes: string[] = [];
    for (let i = 0; i < 4; i++) outcomes.push((await client.submit('/account/confirm/resend')).res.headers.get('location') ?? '');
    assert.deepEqual(
      outcomes.map((o) => o.replace(/#.*/, '')),
      ['/account?msg=resent', '/account?msg=resent', '/account?msg=resent', '/account?msg=resend_wait'],
    );
    assert.match((await client.get('/account?msg=resend_wait')).body, /sent the link several times/);
    assert.equal((await mailsTo(t, who.email)).length, 4, 'the sign-up mail and three resends');
    assert.equal((await browser().get(firstLink)).res.status, 410, 'an older link no longer works');
  });

  test('is removed after seven days; a proven one is not', async () => {
    const stale = fresh('stale');
    await signUpOnly(stale);
    const kept = fresh('kept');
    await signUpConfirmed(t, browser(), { email: kept.email, user_id: kept.userId, password: kept.password });
    t.clock.advance(6 * 24 * 3600 * 1000);
    await sweepSite(t.ctx);
    const ids = async () =>
      (await t.ctx.db.kysely.selectFrom('users').select('user_id').where('user_id', 'in', [stale.userId, kept.userId]).execute()).map((r) => r.user_id).sort();
    assert.deepEqual(await ids(), [kept.userId, stale.userId]);
    t.clock.advance(24 * 3600 * 1000 + 1000);
    await sweepSite(t.ctx);
    assert.deepEqual(await ids(), [kept.userId]);
    // Its userId and address are free again.
    assert.equal((await browser().signUp({ email: stale.email, user_id: stale.userId, password: stale.password })).headers.get('location'), '/signup/sent');
    assert.ok(await t.ctx.db.kysely.selectFrom('users').select('id').where('user_id', '=', stale.userId).executeTakeFirst());
  });
});

describe('sign-up does not tell whether an address has an account', () => {
  test('an address with an account gets the same answer as a new one; its owner gets a mail with links to log in and to reset the password', async () => {
    const owner = fresh('owner');
    await signUpConfirmed(t, browser(), { email: owner.email, user_id: owner.userId, password: owner.password });
    const before = (await mailsTo(t, owner.email)).length;
    const stranger = browser();
    const known = await stranger.post('/signup', {
      _csrf: await stranger.csrf('/signup'),
      email: owner.email.toUpperCase(),
      user_id: `x${owner.userId}`,
      password: 'another long passphrase',
    });
    const newcomer = fresh('newcomer');
    const other = browser();
    const unknown = await other.post('/signup', {
      _csrf: await other.csrf('/signup'),
      email: newcomer.email,
      user_id: newcomer.userId,
      password: newcomer.password,
    });
    const shape = (r: { res: Response; body: string }) => ({
      status: r.res.status,
      location: r.res.headers.get('location'),
      cookies: r.res.headers.getSetCookie().map((c) => c.replace(/=.*/, '')),
      body: r.body,
    });
    assert.deepEqual(shape(known), shape(unknown));
    assert.equal((await stranger.get('/signup/sent')).body, (await other.get('/signup/sent')).body);
    assert.equal((await t.ctx.db.kysely.selectFrom('users').select('id').where('user_id', '=', `x${owner.userId}`).execute()).length, 0, 'no second account');

    const mails = await mailsTo(t, owner.email);
    assert.equal(mails.length, before + 1);
    const note = mails.at(-1)!;
    assert.match(note.subject ?? '', /Someone tried to sign up/);
    assert.match(note.text ?? '', new RegExp(`your account "${owner.userId}"`));
    assert.ok(note.text?.includes(`${t.config.baseUrl}/login`));
    assert.ok(note.text?.includes(`${t.config.baseUrl}/forgot`));
  });

  test('a taken userId is still said (userIds are public), whatever the address', async () => {
    const owner = fresh('uidowner');
    await signUpConfirmed(t, browser(), { email: owner.email, user_id: owner.userId, password: owner.password });
    const c = browser();
    const r = await c.post('/signup', {
      _csrf: await c.csrf('/signup'),
      email: fresh('uidother').email,
      user_id: owner.userId,
      password: 'another long passphrase',
    });
    assert.equal(r.res.status, 400);
    assert.match(r.body, /That userId is taken/);
  });

  test(`a stranger can cause at most ${MAILS_PER_ADDRESS_PER_HOUR} mails an hour to one address`, async () => {
    const owner = fresh('flooded');
    await signUpConfirmed(t, browser(), { email: owner.email, user_id: owner.userId, password: owner.password });
    t.clock.advance(3600 * 1000 + 1000);
    for (let i = 0; i < MAILS_PER_ADDRESS_PER_HOUR + 3; i++) {
      const c = browser();
      assert.equal(
        (await c.signUp({ email: owner.email, user_id: `flood_${n}_${i}`, password: 'another long passphrase' })).headers.get('location'),
        '/signup/sent',
      );
    }
    const notes = (await mailsTo(t, owner.email)).filter((m) => /Someone tried/.test(m.subject ?? ''));
    assert.equal(notes.length, MAILS_PER_ADDRESS_PER_HOUR);
  });
});

test("the impostor scenario: partners push under carol's address, someone signs up with it and never proves it; carol signs up later and gets everything", async () => {
  const A = await t.partner({ name: 'Alpha' });
  const B = await t.partner({ name: 'Beta' });
  secrets.push(A.apiToken, B.apiToken);
  const carol = fresh('carol');
  await A.client.updateService(carol.md5, 'github', 'carol-gh');
  await B.client.updateService(carol.sha256, 'gitlab', 'carol-gl');

  // The impostor signs up with carol's address and never proves it.
  const mallory = { email: carol.email, password: 'mallory knows no mail', userId: `mallory_${n}` };
  secrets.push(mallory.password);
  const impostor = await signUpOnly(mallory);
  assert.equal((await impostor.logIn(mallory.userId, mallory.password)).status, 303);
  await impostor.submit('/account/identities', { svc_id: 'twitter', usr_svc_id: 'mallory' });
  const unknownPerson = fresh('stranger');
  for (const [form, other] of [
    [carol.md5, unknownPerson.md5],
    [carol.sha256, unknownPerson.sha256],
    [mallory.userId, unknownPerson.userId],
  ] as const) {
    assert.equal(await answer(`/api/return_services/${A.apiKey}/${form}/public`), await answer(`/api/return_services/${A.apiKey}/${other}/public`));
  }
  // Each partner still reads its own pushes (SPEC §3 rule 1), nothing of the impostor's.
  assert.deepEqual(
    (await A.client.returnServices(carol.md5)).map((s) => s.usrSvcId),
    ['carol-gh'],
  );
  assert.deepEqual(
    (await B.client.returnServices(carol.sha256)).map((s) => s.usrSvcId),
    ['carol-gl'],
  );
  // A push while the impostor holds the address still goes to the person, not to the impostor.
  await A.client.updateService(carol.sha256, 'flickr', 'carol-flickr');
  assert.deepEqual((await exportOf(impostor)).partnerEntries, [], "the impostor's export holds nothing partners pushed");
  assert.equal(await errorCode(A.client.syncUser(carol.md5, { email: carol.email, password: mallory.password })), 'forbidden');

  // Carol signs up on her own. The unproven account does not block her: she gets a link that
  // gives her the address.
  const carolBrowser = browser();
  const res = await carolBrowser.signUp({ email: carol.email, user_id: carol.userId, password: carol.password, opt_in: true });
  assert.equal(res.headers.get('location'), '/signup/sent');
  const claim = await lastMailTo(t, carol.email);
  assert.match(claim.text ?? '', new RegExp(`the unconfirmed account "${mallory.userId}" is removed`));
  const link = linkIn(claim, '/confirm?token=');
  const page = await carolBrowser.get(link);
  assert.match(page.body, new RegExp(`creates your account <strong class="user-id">${carol.userId}</strong>`));
  // Confirmed in the browser that signed up: the account is created and that browser is in it.
  const done = await followMailedLink(carolBrowser, link);
  assert.equal(done.res.headers.get('location'), '/account?msg=confirmed');

  // The impostor's account is gone (its session with it); carol's has everything.
  assert.equal((await impostor.get('/account')).res.status, 303);
  assert.equal((await new SiteClient(t.baseUrl).logIn(mallory.userId, mallory.password)).status, 400);
  const mine = await exportOf(carolBrowser);
  assert.equal(mine.account.userId, carol.userId);
  assert.deepEqual(mine.partnerEntries.map((e) => `${(e as { partner: string }).partner}:${(e as { usrSvcId: string }).usrSvcId}`).sort(), [
    'Alpha:carol-flickr',
    'Alpha:carol-gh',
    'Beta:carol-gl',
  ]);
  assert.deepEqual(mine.identities, [], "nothing of the impostor's");
  assert.deepEqual((await A.client.returnServices(carol.userId)).map((s) => s.usrSvcId).sort(), ['carol-flickr', 'carol-gh']);
  assert.equal(await A.client.syncUser(carol.md5, { email: carol.email, password: carol.password }), true);
  // Linking A copied its pushes into carol's central repository: every partner sees them now.
  assert.deepEqual((await B.publicClient.returnServices(carol.sha256, { profileType: 'public' })).map((s) => s.url).sort(), [
    'https://www.flickr.com/people/carol-flickr',
    'https://www.github.com/carol-gh',
  ]);
});

test("a stranger's claim on an address whose owner has not confirmed yet does not read like the owner's own confirmation", async () => {
  // The owner signs up and has not followed the link yet; a stranger then signs up with her address.
  const owner = fresh('slowpoke');
  await signUpOnly(owner);
  const own = await lastMailTo(t, owner.email);
  const strangerId = `claimer_${n}`;
  const stranger = browser();
  assert.equal(
    (await stranger.signUp({ email: owner.email, user_id: strangerId, password: 'a stranger picks this phrase' })).headers.get('location'),
    '/signup/sent',
  );
  const claim = await lastMailTo(t, owner.email);
  assert.notEqual(claim.messageId, own.messageId, 'the claim was mailed');
  assert.match(own.subject ?? '', /^Confirm your e-mail address/);
  assert.notEqual(claim.subject, own.subject);
  assert.doesNotMatch(claim.subject ?? '', /^Confirm your e-mail address/);
  assert.match(claim.subject ?? '', /second sign-up.*confirm only if it was you/);
  const opening = (m: typeof own) => (m.text ?? '').trim().split('\n')[0] ?? '';
  assert.notEqual(opening(claim), opening(own));
  assert.match(
    opening(claim),
    new RegExp(`A second account, "${strangerId}", asks to take this e-mail address.*Confirm only if you just signed up as "${strangerId}"`),
  );
  // The page the claim link opens says the same, and its button names the account it creates.
  const page = await browser().get(linkIn(claim, '/confirm?token='));
  assert.match(page.body, /<h1>A second sign-up asks for this address<\/h1>/);
  assert.match(page.body, new RegExp(`Confirm and create ${strangerId}`));
  assert.doesNotMatch(page.body, /Confirm my address/);
  const ownPage = await browser().get(linkIn(own, '/confirm?token='));
  assert.match(ownPage.body, /<h1>Confirm your e-mail address<\/h1>/);
});

describe('accounts the operator creates', () => {
  const cli = (args: string[], stdin = '') => runCli(t, args, { stdin });

  test('count as proven (the operator vouches); --unproven mails the link instead', async () => {
    const p = await t.partner({ name: 'Operator check' });
    secrets.push(p.apiToken);
    const vouched = fresh('vouched');
    const r = await cli(['--json', 'user', 'create', '--email', vouched.email, '--user-id', vouched.userId, '--opt-in'], vouched.password);
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual((({ opted_in, email_proven, visible }) => ({ opted_in, email_proven, visible }))(JSON.parse(r.stdout)), {
      opted_in: true,
      email_proven: true,
      visible: true,
    });
    assert.deepEqual(await p.publicClient.returnServices(vouched.md5, { profileType: 'public' }), []);
    assert.deepEqual(await mailsTo(t, vouched.email), [], 'no mail');

    const unvouched = fresh('unvouched');
    const u = await cli(['--json', 'user', 'create', '--email', unvouched.email, '--user-id', unvouched.userId, '--opt-in', '--unproven'], unvouched.password);
    assert.equal(u.code, 0, u.stderr);
    assert.equal(JSON.parse(u.stdout).visible, false);
    assert.equal(await errorCode(p.publicClient.returnServices(unvouched.md5, { profileType: 'public' })), 'not_found');
    const shown = await cli(['user', 'show', unvouched.userId]);
    assert.match(shown.stdout, /not confirmed yet/);
    // The CLI's clock is the system's: the link is valid from then on.
    t.clock.advance(Math.max(0, Date.now() - t.clock.now()));
    const done = await followMailedLink(browser(), linkIn(await lastMailTo(t, unvouched.email), '/confirm?token='));
    assert.equal(done.res.status, 303);
    assert.deepEqual(await p.publicClient.returnServices(unvouched.md5, { profileType: 'public' }), []);
  });
});

test('accounts that exist when migration 007 runs count as proven, and keep their opt-in', async () => {
  let url: string;
  let schema: string | undefined;
  let tmp: string | undefined;
  if (TEST_DB === 'postgres') {
    url = t.cliEnv.DATABASE_URL!;
    schema = `m007_${process.pid}_${Math.random().toString(36).slice(2, 8)}`;
  } else {
    tmp = path.join(path.dirname(t.cliEnv.DATABASE_URL!.slice('sqlite:'.length)), `premigration-${n}.sqlite`);
    url = `sqlite:${tmp}`;
  }
  const db = await openDatabase(url, schema ? { pgSchema: schema } : {});
  try {
    // The schema as it was before 007: every migration before it.
    const migrator = new Migrator({
      db: db.kysely,
      provider: { getMigrations: async () => migrationsFor(db.dialect) },
      ...(schema ? { migrationTableSchema: schema } : {}),
    });
    const names = Object.keys(migrationsFor(db.dialect)).sort();
    const previous = names[names.indexOf('007-mail-ownership') - 1]!;
    const r = await migrator.migrateTo(previous);
    assert.equal(r.error, undefined);
    const h = emailHashes('old.timer@example.org');
    const h2 = emailHashes('old.hidden@example.org');
    const created = Date.UTC(2025, 5, 1);
    await sql`INSERT INTO users (user_id, email, email_md5, email_sha256, password_hash, opted_in, discoverable, pro, public_fields, created_at, updated_at)
      VALUES ('old_timer', ${h.email}, ${h.md5}, ${h.sha256}, 'x', 1, 1, 0, '[]', ${created}, ${created}),
             ('old_hidden', ${h2.email}, ${h2.md5}, ${h2.sha256}, 'x', 0, 1, 0, '[]', ${created}, ${created})`.execute(db.kysely);
    await migrate(db);
    const rows = await db.kysely.selectFrom('users').select(['user_id', 'opted_in', 'consented', 'email_proven_at']).orderBy('user_id').execute();
    assert.deepEqual(rows, [
      { user_id: 'old_hidden', opted_in: 0, consented: 0, email_proven_at: created },
      { user_id: 'old_timer', opted_in: 1, consented: 1, email_proven_at: created },
    ]);
    // And the partner API finds the proven, opted-in one.
    const app = await startTestApp({ DATABASE_URL: url, ...(schema ? { DATABASE_SCHEMA: schema } : {}) });
    try {
      const p = await app.partner();
      assert.deepEqual(await p.publicClient.returnServices(h.md5, { profileType: 'public' }), []);
      assert.equal(await errorCode(p.publicClient.returnServices(h2.md5, { profileType: 'public' })), 'not_found');
    } finally {
      await app.close();
    }
  } finally {
    await db.close();
    if (schema) {
      const c = new pg.Client({ connectionString: PG_URL });
      await c.connect();
      await c.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
      await c.end();
    }
  }
});

test('no token, link or address in any log line', () => {
  assertLogsClean(t, secrets);
  const all = t.logs.join('\n');
  assert.doesNotMatch(all, /token=[A-Za-z0-9_-]{10}/, 'a mailed link reached the log');
  assert.match(all, /token=\[redacted\]/, 'the link was opened and logged, redacted');
});

test('confirming in the browser that signed up continues signed in there, and only there', async () => {
  const who = fresh('samebrowser');
  const client = await signUpOnly(who);
  assert.equal((await client.get('/account')).res.headers.get('location'), '/login', 'signing up alone logs nobody in');
  const link = linkIn(await lastMailTo(t, who.email), '/confirm?token=');
  const done = await followMailedLink(client, link);
  assert.equal(done.res.headers.get('location'), '/account?msg=confirmed');
  const account = await client.get('/account?msg=confirmed');
  assert.equal(account.res.status, 200);
  assert.match(account.body, /Your e-mail address is confirmed/);
  assert.match(account.body, new RegExp(`<span class="user-id">${who.userId}</span>`));

  // Another browser with a sign-up cookie of its own, for another account, is not let in by this link.
  const other = fresh('otherbrowser');
  const elsewhere = await signUpOnly(other);
  const stranger = fresh('stranger');
  await signUpOnly(stranger);
  const strangerLink = linkIn(await lastMailTo(t, stranger.email), '/confirm?token=');
  const crossed = await followMailedLink(elsewhere, strangerLink);
  assert.equal(crossed.res.headers.get('location'), '/login?msg=confirmed');
  assert.equal((await elsewhere.get('/account')).res.headers.get('location'), '/login');

  // A sign-up cookie older than a link's lifetime does not log in either.
  const late = fresh('late');
  const lateClient = await signUpOnly(late);
  t.clock.advance(25 * 3600 * 1000);
  assert.equal((await lateClient.logIn(late.email, late.password)).status, 303);
  await lateClient.submit('/account/confirm/resend');
  await lateClient.post('/logout', { _csrf: await lateClient.csrf('/account') });
  const fresher = linkIn(await lastMailTo(t, late.email), '/confirm?token=');
  assert.ok(lateClient.cookies.has('idsvc_signup'), 'the browser still sends its old sign-up cookie');
  assert.equal((await followMailedLink(lateClient, fresher)).res.headers.get('location'), '/login?msg=confirmed');
});

// Connecting GitHub (an OAuth app) against a local server in GitHub's documented shape, on SQLite
// and PostgreSQL: a connection logs in, proves the GitHub identity with method `oauth` (shown to
// the person, on the public profile and to partners), is mailed, and the daily re-check follows a
// renamed account and takes the mark from a deleted one. A tampered or missing `state` is refused,
// and nothing secret reaches the logs.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { listOutbox } from '../../src/repositories/outbox.js';
import { connectionsOfUser } from '../../src/repositories/provider-connections.js';
import { findUserByUserId } from '../../src/repositories/users.js';
import { verifyIdentity } from '../../src/verification/verify.js';
import type { TestApp } from '../helpers/app.js';
import { mailsTo } from '../helpers/mailbox.js';
import { startFakeGitHub, type FakeProvider } from '../helpers/oauth-servers.js';
import { assertLogsClean, SiteClient, startSiteApp } from '../site/helpers.js';
import { providerRedirect, startAtProvider, throughProvider } from './helpers.js';

const DAY = 24 * 3600_000;
let t: TestApp;
let gh: FakeProvider;
let partner: Awaited<ReturnType<TestApp['partner']>>;

before(async () => {
  gh = await startFakeGitHub();
  t = await startSiteApp({
    GITHUB_CLIENT_ID: gh.clientId,
    GITHUB_CLIENT_SECRET: gh.clientSecret,
    IDSVC_TEST_PROOF_ORIGINS: `https://github.com=${gh.origin},https://api.github.com=${gh.origin},https://www.github.com=${gh.origin}`,
    VERIFY_CONFIRM_AFTER_SECONDS: '60',
  });
  partner = await t.partner({ name: 'GitHub partner' });
});
after(async () => {
  await t.close();
  await gh.close();
});

const githubEntry = (userRef: number) =>
  t.ctx.db.kysely.selectFrom('central_identities').selectAll().where('user_ref', '=', userRef).where('svc_id', '=', 'github').executeTakeFirst();
const events = async (type: string) =>
  (await listOutbox(t.ctx.db, partner.id)).filter((e) => e.event_type === type).map((e) => JSON.parse(e.payload).data as Record<string, unknown>);

describe('connecting GitHub while logged in', () => {
  const client = new SiteClient('');
  let userRef: number;
  before(async () => {
    Object.assign(client, { baseUrl: t.baseUrl });
    const u = await t.user({ email: 'gh_alice@example.org', userId: 'gh_alice' });
    userRef = u.id;
    await partner.client.syncUser('gh_alice', { email: 'gh_alice@example.org', password: u.password });
    assert.equal((await client.logIn('gh_alice', u.password)).status, 303);
    const person = { id: 4101, login: 'Alice-GH', email: 'alice.gh@example.org', emailVerified: true };
    gh.signedIn = person;
    gh.accounts.set(person.id, person);
  });

  test('the security page offers GitHub, and connecting marks the GitHub identity verified by oauth', async () => {
    const page = await client.get('/account/security');
    assert.match(page.body, /data-provider="github"[^>]*>Connect GitHub/);
    const done = await throughProvider(client, 'github', 'connect');
    assert.equal(done.res.status, 303);
    assert.equal(done.res.headers.get('location'), '/account/security?msg=provider_connected#connections');
    const entry = await githubEntry(userRef);
    assert.equal(entry?.usr_svc_id, 'Alice-GH');
    assert.equal(entry?.verified, 1);
    assert.equal(entry?.verified_by, 'oauth');
    assert.equal(entry?.evidence_url, 'https://api.github.com/user/4101');
    const [connection] = await connectionsOfUser(t.ctx.db, userRef);
    assert.equal(connection?.subject, '4101');
    const listed = await client.get('/account/security');
    assert.match(listed.body, /data-connection="GitHub"/);
    assert.match(listed.body, /GitHub · Alice-GH/);
    assert.doesNotMatch(listed.body, /Connect GitHub/, 'a connected provider is not offered again');
  });

  test('the export lists the connection, and no token', async () => {
    const { res, body } = await client.submit('/account/export');
    assert.equal(res.status, 200);
    const data = JSON.parse(body) as { providerConnections: Record<string, unknown>[] };
    assert.deepEqual(
      data.providerConnections.map((c) => [c.provider, c.accountId, c.username]),
      [['github', '4101', 'Alice-GH']],
    );
    for (const secret of gh.issued) assert.equal(body.includes(secret), false);
  });

  test('the connection is mailed to the account address', async () => {
    const mails = await mailsTo(t, 'gh_alice@example.org');
    assert.ok(mails.some((m) => m.subject === 'GitHub was connected to your idsvc account' && /Alice-GH/.test(m.text ?? '')));
  });

  test('the method and time show on the public profile, to partners and in webhooks', async () => {
    const html = await (await fetch(`${t.baseUrl}/u/gh_alice`)).text();
    assert.match(html, /data-verified-by="oauth"> by signing in to the account through its provider, since <time/);
    const json = (await (await fetch(`${t.baseUrl}/api/return_services/${partner.apiKey}/gh_alice/public?format=json`)).json()) as {
      services: Record<string, unknown>[];
    };
    const github = json.services.find((s) => s.svcId === 'github');
    assert.equal(github?.verifiedBy, 'oauth');
    assert.equal(github?.evidenceUrl, 'https://api.github.com/user/4101');
    assert.equal(typeof github?.verifiedAt, 'string');
    const profile = (await (await fetch(`${t.baseUrl}/v3/profiles/gh_alice`)).json()) as { verified_accounts: Record<string, unknown>[] };
    assert.equal(profile.verified_accounts.find((a) => a.service_type === 'github')?.verified_by, 'oauth');
    const verified = (await events('identity.verified')).filter((d) => d.svcId === 'github');
    assert.equal(verified.length, 1);
    assert.equal(verified[0]?.verifiedBy, 'oauth');
  });

  test('the person can log in with GitHub in another browser', async () => {
    const other = new SiteClient(t.baseUrl);
    const done = await throughProvider(other, 'github', 'login');
    assert.equal(done.res.status, 303);
    assert.equal(done.res.headers.get('location'), '/account');
    const account = await other.get('/account');
    assert.equal(account.res.status, 200);
    assert.match(account.body, /class="user-id">gh_alice</);
  });

  test('the daily re-check follows a renamed account', async () => {
    gh.accounts.set(4101, { id: 4101, login: 'alice-renamed', email: 'alice.gh@example.org', emailVerified: true });
    t.clock.advance(DAY);
    const entry = await githubEntry(userRef);
    const result = await verifyIdentity(t.ctx, Number(entry?.id));
    assert.equal(result?.verified, true);
    const after = await githubEntry(userRef);
    assert.equal(after?.usr_svc_id, 'alice-renamed');
    assert.equal(after?.verified_by, 'oauth');
    assert.equal((await connectionsOfUser(t.ctx.db, userRef))[0]?.username, 'alice-renamed');
    const updated = (await events('identity.updated')).filter((d) => d.svcId === 'github');
    assert.match(String(updated.at(-1)?.url), /alice-renamed$/);
  });

  test('the daily re-check takes the mark from a deleted account, and partners hear identity.unverified', async () => {
    gh.accounts.delete(4101);
    const id = Number((await githubEntry(userRef))?.id);
    t.clock.advance(DAY);
    assert.equal((await verifyIdentity(t.ctx, id))?.verified, true, 'one negative does not remove a mark');
    t.clock.advance(2 * 60_000);
    assert.equal((await verifyIdentity(t.ctx, id))?.verified, false);
    const unverified = (await events('identity.unverified')).filter((d) => d.svcId === 'github');
    assert.equal(unverified.length, 1);
    assert.equal((unverified[0]?.reason as { method?: string } | undefined)?.method, 'oauth');
  });

  test('disconnecting removes the connection, is mailed, and GitHub no longer logs in', async () => {
    const [connection] = await connectionsOfUser(t.ctx.db, userRef);
    const res = await client.submit('/account/connections/remove', { connection_id: String(connection?.id) });
    assert.equal(res.res.status, 303);
    assert.equal(res.res.headers.get('location'), '/account/security?msg=provider_disconnected#connections');
    assert.deepEqual(await connectionsOfUser(t.ctx.db, userRef), []);
    const mails = await mailsTo(t, 'gh_alice@example.org');
    assert.ok(mails.some((m) => m.subject === 'GitHub was disconnected from your idsvc account'));
    gh.accounts.set(4101, { id: 4101, login: 'alice-renamed', email: 'alice.gh@example.org', emailVerified: true });
    gh.signedIn = gh.accounts.get(4101)!;
    const other = new SiteClient(t.baseUrl);
    const done = await throughProvider(other, 'github', 'login');
    // The provider's verified address is another account's? No: it is nobody's, so a sign-up is offered.
    assert.equal(done.res.headers.get('location'), '/auth/signup');
  });
});

describe('signing up with GitHub', () => {
  test("a verified GitHub address makes a proven account, logged in, with GitHub's identity proven", async () => {
    gh.signedIn = { id: 4202, login: 'bob-gh', email: 'bob.gh@example.org', emailVerified: true };
    const client = new SiteClient(t.baseUrl);
    const back = await throughProvider(client, 'github', 'login');
    assert.equal(back.res.headers.get('location'), '/auth/signup');
    const form = await client.get('/auth/signup');
    assert.match(form.body, /data-verified-email/);
    assert.match(form.body, /bob\.gh@example\.org/);
    const csrf = /name="_csrf" value="([^"]+)"/.exec(form.body)![1]!;
    const created = await client.post('/auth/signup', { _csrf: csrf, user_id: 'bob_gh', opt_in: '1' });
    assert.equal(created.res.status, 303);
    assert.equal(created.res.headers.get('location'), '/account');
    const user = await findUserByUserId(t.ctx.db, 'bob_gh');
    assert.ok(user?.email_proven_at, 'the address the provider verified counts as proven');
    assert.equal(user?.email, 'bob.gh@example.org');
    assert.equal((await githubEntry(user.id))?.verified_by, 'oauth');
    assert.equal((await client.get('/account')).res.status, 200);
  });
});

describe('a flow that does not match is refused', () => {
  test('a tampered state is refused, and nothing logs in', async () => {
    gh.signedIn = { id: 4303, login: 'carol-gh', email: 'carol@example.org', emailVerified: true };
    const client = new SiteClient(t.baseUrl);
    const back = await providerRedirect(await startAtProvider(client, 'github', 'login'));
    const tampered = back.replace(/state=[^&]+/, 'state=forged');
    const res = await client.get(tampered);
    assert.equal(res.res.status, 400);
    assert.match(res.body, /data-page="provider-refused"/);
    // The flow is spent: the genuine answer does not work after a forged one either.
    assert.equal((await client.get(back)).res.status, 400);
    assert.equal(client.cookies.has('idsvc_session'), false);
  });

  test('a missing state is refused', async () => {
    const client = new SiteClient(t.baseUrl);
    const back = await providerRedirect(await startAtProvider(client, 'github', 'login'));
    const res = await client.get(back.replace(/&?state=[^&]+/, ''));
    assert.equal(res.res.status, 400);
  });

  test("another browser's answer is refused (the flow is bound to the browser that started it)", async () => {
    const starter = new SiteClient(t.baseUrl);
    const back = await providerRedirect(await startAtProvider(starter, 'github', 'login'));
    const victim = new SiteClient(t.baseUrl);
    assert.equal((await victim.get(back)).res.status, 400);
  });

  test('starting needs the CSRF token', async () => {
    const client = new SiteClient(t.baseUrl);
    await client.get('/login');
    const res = await client.post('/auth/github/start', { purpose: 'login' });
    assert.equal(res.res.status, 403);
  });

  test('an unconfigured provider has no button and no route', async () => {
    const client = new SiteClient(t.baseUrl);
    const login = await client.get('/login');
    assert.match(login.body, /Log in with GitHub/);
    assert.doesNotMatch(login.body, /Google|GitLab/);
    const res = await client.post('/auth/google/start', { _csrf: await client.csrf('/login'), purpose: 'login' });
    assert.equal(res.res.status, 404);
  });

  test('nothing secret reaches the logs', () => {
    assert.ok(gh.issued.length > 0);
    assertLogsClean(t, [...gh.issued, gh.clientSecret]);
  });
});

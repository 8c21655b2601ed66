// GitLab and Google, both OpenID Connect, against local servers in their documented shapes (GitLab's
// /oauth/* endpoints and /api/v4/users/{id}; Google's discovery, token and certificate addresses),
// on SQLite and PostgreSQL: a GitLab connection signs in and proves the GitLab identity with method
// `oauth`, and its re-check follows a rename; Google signs in and proves nothing; a Google address
// the provider has not verified is never used, and one that is another account's attaches nothing.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { connectionsOfUser } from '../../src/repositories/provider-connections.js';
import { findUserByUserId } from '../../src/repositories/users.js';
import { verifyIdentity } from '../../src/verification/verify.js';
import type { TestApp } from '../helpers/app.js';
import { linkIn, mailsTo } from '../helpers/mailbox.js';
import { startFakeOidc, type FakeProvider } from '../helpers/oauth-servers.js';
import { assertLogsClean, followMailedLink, SiteClient, startSiteApp } from '../site/helpers.js';
import { throughProvider } from './helpers.js';

let t: TestApp;
let gitlab: FakeProvider;
let google: FakeProvider;

before(async () => {
  gitlab = await startFakeOidc('https://gitlab.com', 'gitlab');
  google = await startFakeOidc('https://accounts.google.com', 'google');
  t = await startSiteApp({
    GITLAB_CLIENT_ID: gitlab.clientId,
    GITLAB_CLIENT_SECRET: gitlab.clientSecret,
    GOOGLE_CLIENT_ID: google.clientId,
    GOOGLE_CLIENT_SECRET: google.clientSecret,
    IDSVC_TEST_PROOF_ORIGINS: `https://gitlab.com=${gitlab.origin},https://accounts.google.com=${google.origin}`,
  });
});
after(async () => {
  await t.close();
  await gitlab.close();
  await google.close();
});

async function signUpForm(client: SiteClient, slug: string): Promise<{ csrf: string; body: string }> {
  const back = await throughProvider(client, slug, 'login');
  assert.equal(back.res.headers.get('location'), '/auth/signup', back.body.slice(0, 200));
  const form = await client.get('/auth/signup');
  return { csrf: /name="_csrf" value="([^"]+)"/.exec(form.body)![1]!, body: form.body };
}

describe('GitLab', () => {
  test('signing up proves the GitLab identity with method oauth; the re-check follows a rename; log-in works', async () => {
    const person = { id: 77, login: 'dora-lab', email: 'dora@example.org', emailVerified: true };
    gitlab.signedIn = person;
    gitlab.accounts.set(77, person);
    const client = new SiteClient(t.baseUrl);
    const { csrf } = await signUpForm(client, 'gitlab');
    const created = await client.post('/auth/signup', { _csrf: csrf, user_id: 'dora', opt_in: '1' });
    assert.equal(created.res.headers.get('location'), '/account');
    const user = (await findUserByUserId(t.ctx.db, 'dora'))!;
    const entry = await t.ctx.db.kysely
      .selectFrom('central_identities')
      .selectAll()
      .where('user_ref', '=', user.id)
      .where('svc_id', '=', 'gitlab')
      .executeTakeFirstOrThrow();
    assert.equal(entry.usr_svc_id, 'dora-lab');
    assert.equal(entry.verified_by, 'oauth');
    assert.equal(entry.evidence_url, 'https://gitlab.com/api/v4/users/77');

    gitlab.accounts.set(77, { ...person, login: 'dora-renamed' });
    t.clock.advance(24 * 3600_000);
    assert.equal((await verifyIdentity(t.ctx, entry.id))?.verified, true);
    const renamed = await t.ctx.db.kysely
      .selectFrom('central_identities')
      .select(['usr_svc_id', 'verified_by'])
      .where('id', '=', entry.id)
      .executeTakeFirstOrThrow();
    assert.deepEqual(renamed, { usr_svc_id: 'dora-renamed', verified_by: 'oauth' });

    const again = new SiteClient(t.baseUrl);
    const login = await throughProvider(again, 'gitlab', 'login');
    assert.equal(login.res.headers.get('location'), '/account');
  });
});

describe('Google', () => {
  test('a verified Google address signs up and logs in; Google proves no identity', async () => {
    google.signedIn = { id: 1001, login: 'unused', email: 'erin@example.org', emailVerified: true };
    const client = new SiteClient(t.baseUrl);
    const { csrf } = await signUpForm(client, 'google');
    const created = await client.post('/auth/signup', { _csrf: csrf, user_id: 'erin' });
    assert.equal(created.res.headers.get('location'), '/account');
    const user = (await findUserByUserId(t.ctx.db, 'erin'))!;
    assert.ok(user.email_proven_at);
    assert.equal((await connectionsOfUser(t.ctx.db, user.id))[0]?.provider, 'google');
    const entries = await t.ctx.db.kysely.selectFrom('central_identities').select('svc_id').where('user_ref', '=', user.id).execute();
    assert.deepEqual(entries, []);
    const login = await throughProvider(new SiteClient(t.baseUrl), 'google', 'login');
    assert.equal(login.res.headers.get('location'), '/account');
  });

  test('an address Google has not verified is not used: the person types one and confirms it by mail', async () => {
    google.signedIn = { id: 1002, login: 'unused', email: 'frank@example.org', emailVerified: false };
    const client = new SiteClient(t.baseUrl);
    const { csrf, body } = await signUpForm(client, 'google');
    assert.doesNotMatch(body, /frank@example\.org/, 'the unverified address is not offered');
    assert.match(body, /name="email"/);
    const done = await client.post('/auth/signup', { _csrf: csrf, user_id: 'frank', email: 'frank.typed@example.org' });
    assert.equal(done.res.headers.get('location'), '/signup/sent');
    const user = (await findUserByUserId(t.ctx.db, 'frank'))!;
    assert.equal(user.email, 'frank.typed@example.org');
    assert.equal(user.email_proven_at, null, 'unproven until the mailed link is followed');
    const mails = await mailsTo(t, 'frank.typed@example.org');
    assert.ok(mails.some((m) => m.subject === 'Google was connected to your idsvc account'));
    const confirm = mails.find((m) => (m.text ?? '').includes('/confirm?token='));
    assert.ok(confirm, 'a confirmation link was mailed');
    const confirmed = await followMailedLink(client, linkIn(confirm, '/confirm?token='));
    assert.equal(confirmed.res.status, 303);
    assert.ok((await findUserByUserId(t.ctx.db, 'frank'))?.email_proven_at);
  });

  test("a verified address that is another account's attaches nothing: log in there first", async () => {
    const owner = await t.user({ email: 'gina@example.org', userId: 'gina' });
    google.signedIn = { id: 1003, login: 'unused', email: 'gina@example.org', emailVerified: true };
    const client = new SiteClient(t.baseUrl);
    const res = await throughProvider(client, 'google', 'login');
    assert.equal(res.res.status, 409);
    assert.match(res.body, /data-page="provider-log-in-first"/);
    assert.deepEqual(await connectionsOfUser(t.ctx.db, owner.id), []);
    assert.equal(client.cookies.has('idsvc_session'), false);
  });

  test('nothing secret reaches the logs', () => {
    assertLogsClean(t, [...gitlab.issued, ...google.issued, gitlab.clientSecret, google.clientSecret]);
  });
});

// Mastodon on any server, against a local server in Mastodon's documented shape, on SQLite and
// PostgreSQL: the person names their server, idsvc registers its app there once and reuses it, the
// connection proves the Mastodon identity `user@server` with method `oauth` and logs in, the daily
// re-check follows a renamed account and takes the mark from a deleted one, and a server that is not
// one (a bad name, or no Mastodon API) is refused with a page that says so.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { parseMastodonServer } from '../../src/connections/mastodon.js';
import { connectionsOfUser } from '../../src/repositories/provider-connections.js';
import { verifyIdentity } from '../../src/verification/verify.js';
import type { TestApp } from '../helpers/app.js';
import { mailsTo } from '../helpers/mailbox.js';
import { startFakeMastodon, type FakeMastodon } from '../helpers/oauth-servers.js';
import { assertLogsClean, SiteClient, startSiteApp } from '../site/helpers.js';
import { providerRedirect, startAtProvider, throughProvider } from './helpers.js';

const DAY = 24 * 3600_000;
let t: TestApp;
let social: FakeMastodon;

before(async () => {
  social = await startFakeMastodon();
  t = await startSiteApp({
    MASTODON_CONNECT: 'on',
    // Two servers, one local stand-in.
    IDSVC_TEST_PROOF_ORIGINS: `https://social.example=${social.origin},https://other.example=${social.origin}`,
    // The stand-in for social.example listens on loopback.
    FETCH_ALLOW_PRIVATE: '1',
    VERIFY_CONFIRM_AFTER_SECONDS: '60',
  });
});
after(async () => {
  await t.close();
  await social.close();
});

const mastodonEntry = (userRef: number) =>
  t.ctx.db.kysely.selectFrom('central_identities').selectAll().where('user_ref', '=', userRef).where('svc_id', '=', 'mastodon').executeTakeFirst();

describe('connecting a Mastodon account while logged in', () => {
  const client = new SiteClient('');
  let userRef: number;
  before(async () => {
    Object.assign(client, { baseUrl: t.baseUrl });
    const u = await t.user({ email: 'ma_anna@example.org', userId: 'ma_anna' });
    userRef = u.id;
    assert.equal((await client.logIn('ma_anna', u.password)).status, 303);
    const person = { id: 109_001, login: 'anna', email: '', emailVerified: false };
    social.signedIn = person;
    social.accounts.set(person.id, person);
  });

  test('the security page asks for the server; connecting registers the app there and proves anna@social.example', async () => {
    const page = await client.get('/account/security');
    assert.match(page.body, /name="server"/);
    assert.match(page.body, /data-provider="mastodon"[^>]*>Connect Mastodon/);
    const done = await throughProvider(client, 'mastodon', 'connect', { server: '@anna@Social.Example' });
    assert.equal(done.res.status, 303);
    assert.equal(done.res.headers.get('location'), '/account/security?msg=provider_connected#connections');
    assert.equal(social.apps.size, 1, 'one app registered with the server');
    const [app] = [...social.apps.values()];
    assert.deepEqual(app?.redirectUris, [`${t.baseUrl}/auth/mastodon/callback`]);
    assert.deepEqual(app?.scopes, ['read:accounts']);
    const entry = await mastodonEntry(userRef);
    assert.equal(entry?.usr_svc_id, 'anna@social.example');
    assert.equal(entry?.verified, 1);
    assert.equal(entry?.verified_by, 'oauth');
    assert.equal(entry?.evidence_url, 'https://social.example/api/v1/accounts/109001');
    const [connection] = await connectionsOfUser(t.ctx.db, userRef);
    assert.equal(connection?.provider, 'mastodon:social.example');
    assert.equal(connection?.subject, '109001');
    const listed = await client.get('/account/security');
    assert.match(listed.body, /Mastodon \(social\.example\) · anna@social\.example/);
    assert.doesNotMatch(listed.body, /Connect Mastodon/, 'one Mastodon account per person, whatever its server');
    const mails = await mailsTo(t, 'ma_anna@example.org');
    assert.ok(mails.some((m) => /Mastodon \(social\.example\) was connected/.test(m.subject ?? '') && /anna@social\.example/.test(m.text ?? '')));
  });

  test('the person logs in with Mastodon in another browser, and the app registered is used again', async () => {
    const other = new SiteClient(t.baseUrl);
    const login = await other.get('/login');
    assert.match(login.body, /Log in with Mastodon/);
    const done = await throughProvider(other, 'mastodon', 'login', { server: 'https://social.example/' });
    assert.equal(done.res.status, 303);
    assert.equal(done.res.headers.get('location'), '/account');
    assert.match((await other.get('/account')).body, /class="user-id">ma_anna</);
    assert.equal(social.apps.size, 1, 'no second registration');
  });

  test("a second Mastodon account, on another server, is refused: one proves the person's Mastodon identity", async () => {
    social.signedIn = { id: 555, login: 'anna_alt', email: '', emailVerified: false };
    const done = await throughProvider(client, 'mastodon', 'connect', { server: 'other.example' });
    assert.equal(done.res.headers.get('location'), '/account/security?msg=provider_taken#connections');
    assert.deepEqual(
      (await connectionsOfUser(t.ctx.db, userRef)).map((c) => c.provider),
      ['mastodon:social.example'],
    );
    assert.equal((await mastodonEntry(userRef))?.usr_svc_id, 'anna@social.example');
    social.signedIn = social.accounts.get(109_001)!;
  });

  test('the daily re-check follows a renamed account, takes the mark from a suspended one, and from a deleted one', async () => {
    social.accounts.set(109_001, { id: 109_001, login: 'anna_new', email: '', emailVerified: false });
    t.clock.advance(DAY);
    const id = Number((await mastodonEntry(userRef))?.id);
    assert.equal((await verifyIdentity(t.ctx, id))?.verified, true);
    assert.equal((await mastodonEntry(userRef))?.usr_svc_id, 'anna_new@social.example');
    assert.equal((await connectionsOfUser(t.ctx.db, userRef))[0]?.username, 'anna_new@social.example');

    social.suspended.add(109_001);
    t.clock.advance(DAY);
    assert.equal((await verifyIdentity(t.ctx, id))?.verified, true, 'one negative does not remove a mark');
    t.clock.advance(2 * 60_000);
    assert.equal((await verifyIdentity(t.ctx, id))?.verified, false, 'a suspended account proves nothing');
    social.suspended.delete(109_001);
    t.clock.advance(DAY);
    assert.equal((await verifyIdentity(t.ctx, id))?.verified, true, 'the account is back');

    social.accounts.delete(109_001);
    t.clock.advance(DAY);
    assert.equal((await verifyIdentity(t.ctx, id))?.verified, true, 'one negative does not remove a mark');
    t.clock.advance(2 * 60_000);
    assert.equal((await verifyIdentity(t.ctx, id))?.verified, false);
  });
});

describe('a server that cannot be used', () => {
  test('a name that is no server is refused before anything is sent', async () => {
    const client = new SiteClient(t.baseUrl);
    const csrf = await client.csrf('/login');
    const before = social.apps.size;
    for (const server of ['', 'localhost', '127.0.0.1', 'social.example:8443', 'https://social.example/path', 'a b.example']) {
      const res = await client.post('/auth/mastodon/start', { _csrf: csrf, purpose: 'login', server });
      assert.equal(res.res.status, 400, server);
      assert.match(res.body, /data-page="provider-mastodon-server"/);
    }
    assert.equal(social.apps.size, before);
  });

  test('a server without the Mastodon API answers a page that says so, and nothing is kept', async () => {
    social.appsStatus = 404;
    try {
      const client = new SiteClient(t.baseUrl);
      await t.ctx.db.kysely.deleteFrom('mastodon_apps').execute();
      const res = await client.post('/auth/mastodon/start', { _csrf: await client.csrf('/login'), purpose: 'login', server: 'social.example' });
      assert.equal(res.res.status, 502, 'the server answered 404 to the registration');
      assert.match(res.body, /data-page="provider-mastodon-server"/);
      assert.deepEqual(await t.ctx.db.kysely.selectFrom('mastodon_apps').selectAll().execute(), []);
    } finally {
      social.appsStatus = null;
    }
  });

  test("a tampered state is refused, and another server's flow cannot be finished at this one's account", async () => {
    social.signedIn = { id: 109_002, login: 'mallory', email: '', emailVerified: false };
    const client = new SiteClient(t.baseUrl);
    const back = await providerRedirect(await startAtProvider(client, 'mastodon', 'login', { server: 'social.example' }));
    const res = await client.get(back.replace(/state=[^&]+/, 'state=forged'));
    assert.equal(res.res.status, 400);
    assert.match(res.body, /data-page="provider-refused"/);
    assert.equal(client.cookies.has('idsvc_session'), false);
  });

  test('nothing secret reaches the logs', () => {
    assert.ok(social.issued.length > 0);
    assertLogsClean(t, social.issued);
  });
});

test('parseMastodonServer: the forms a person types, and what is not a server', () => {
  for (const [input, server] of [
    ['mastodon.social', 'mastodon.social'],
    [' Mastodon.Social ', 'mastodon.social'],
    ['https://mastodon.social/', 'mastodon.social'],
    ['@anna@mastodon.social', 'mastodon.social'],
    ['anna@mastodon.social', 'mastodon.social'],
    ['mastodon.social.', 'mastodon.social'],
    ['mastodon.social/', 'mastodon.social'],
    ['https://mastodon.social/@anna', 'mastodon.social'],
    ['bücher.example', 'xn--bcher-kva.example'],
  ] as const)
    assert.equal(parseMastodonServer(input), server, input);
  for (const input of [
    '',
    'localhost',
    '127.0.0.1',
    '[::1]',
    '10.0.0.300',
    'mastodon.social:443',
    'https://mastodon.social/@anna/123',
    'https://mastodon.social/about',
    'https://u:p@mastodon.social',
    'http://mastodon.social?x',
    'a b.example',
    '-bad.example',
    `${'a'.repeat(64)}.example`,
    'x'.repeat(301),
  ])
    assert.equal(parseMastodonServer(input), null, input);
});

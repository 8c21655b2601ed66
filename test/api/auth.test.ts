// Keys, tokens, origins, throttles and rate limits (SPEC §2, §5, §8).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { IdsvcClient } from '@idsvc/client';
import { findPartnerByKey, rotatePartnerToken, updatePartner } from '../../src/repositories/partners.js';
import { startTestApp, postForm, type TestApp, errorCode as code } from '../helpers/app.js';

let t: TestApp;
before(async () => {
  t = await startTestApp({ RATE_LIMIT_PER_KEY: '1000000', RATE_LIMIT_PER_ADDRESS: '1000000' });
});
after(() => t.close());

test('keys and tokens have the documented shapes; the token is stored only as a hash', async () => {
  const P = await t.partner();
  assert.match(P.apiKey, /^[a-z0-9]{32}$/);
  assert.match(P.apiToken, /^[a-z0-9]{40}$/);
  const row = await findPartnerByKey(t.ctx.db, P.apiKey);
  assert.ok(row);
  assert.notEqual(row.token_hash, P.apiToken);
  assert.ok(!JSON.stringify(row).includes(P.apiToken));
});

test('a rotated token works; the old one works within the grace period and not after it', async () => {
  const P = await t.partner();
  const newToken = await t.ctx.db.write((w) => rotatePartnerToken(w, P.id, 3600, t.clock.now()));
  const fresh = new IdsvcClient({ baseUrl: t.baseUrl, apiKey: P.apiKey, apiToken: newToken });
  assert.equal(await code(fresh.updateService('ivy@example.org', 'github', 'ivy')), 'ok');
  assert.equal(await code(P.client.updateService('ivy@example.org', 'github', 'ivy')), 'ok', 'old token inside the grace period');
  t.clock.advance(3600 * 1000 - 1);
  assert.equal(await code(P.client.updateService('ivy@example.org', 'github', 'ivy')), 'ok');
  t.clock.advance(1);
  assert.equal(await code(P.client.updateService('ivy@example.org', 'github', 'ivy')), 'invalid_api_token', 'old token after the grace period');
  assert.equal(await code(fresh.updateService('ivy@example.org', 'github', 'ivy')), 'ok');
  // Rotating again ends the first token's grace at once and starts the second's.
  const third = await t.ctx.db.write((w) => rotatePartnerToken(w, P.id, 60, t.clock.now()));
  assert.equal(await code(fresh.updateService('ivy@example.org', 'github', 'ivy')), 'ok');
  assert.equal(await code(new IdsvcClient({ baseUrl: t.baseUrl, apiKey: P.apiKey, apiToken: third }).updateService('ivy@example.org', 'github', 'ivy')), 'ok');
});

test('secrets in the query string are refused and never logged', async () => {
  const P = await t.partner();
  const secret = 'qqqqsecretvalueqqqq';
  for (const field of ['api_token', 'email_address', 'password']) {
    const res = await fetch(`${t.baseUrl}/api/return_services/${P.apiKey}/someone?${field}=${secret}`);
    assert.equal(res.status, 400);
    const body = await res.text();
    assert.match(body, /<code>credentials_in_query<\/code>/);
    assert.ok(!body.includes(secret));
  }
  // An e-mail address used as a user_identifier stays out of the logs as well.
  await P.client.updateService('secret.person@example.org', 'github', 'sp');
  await fetch(`${t.baseUrl}/api/return_services/${P.apiKey}/secret.person@example.org/public`);
  const logs = t.logs.join('');
  assert.ok(logs.length > 0, 'requests are logged');
  assert.ok(!logs.includes(secret), 'the secret reached the logs');
  assert.ok(!logs.includes(P.apiToken), 'the api_token reached the logs');
  assert.ok(!logs.includes('secret.person'), 'an e-mail address reached the logs');
  assert.ok(logs.includes('[redacted]'));
});

test('wrong sync password: the sixth try is throttled even when right, and works after the window', async () => {
  const P = await t.partner();
  const u = await t.user({ email: 'jack@example.org', userId: 'jack' });
  for (let i = 0; i < 5; i++) {
    assert.equal(await code(P.client.syncUser('jack', { email: 'jack@example.org', password: 'wrong password!' })), 'invalid_credentials');
  }
  const res = await postForm(`${t.baseUrl}/api/sync_user/${P.apiKey}/jack`, { api_token: P.apiToken, email_address: 'jack@example.org', password: u.password });
  assert.equal(res.status, 429);
  assert.match(await res.text(), /rate_limited/);
  const retry = Number(res.headers.get('retry-after'));
  assert.ok(retry > 0 && retry <= 900, String(retry));
  t.clock.advance(retry * 1000);
  assert.equal(await code(P.client.syncUser('jack', { email: 'jack@example.org', password: u.password })), 'ok');
});

test('unknown e-mail and wrong password answer byte-identically', async () => {
  const P = await t.partner();
  await t.user({ email: 'kim@example.org', userId: 'kim' });
  const a = await postForm(`${t.baseUrl}/api/sync_user/${P.apiKey}/kim`, {
    api_token: P.apiToken,
    email_address: 'kim@example.org',
    password: 'not the password',
  });
  const b = await postForm(`${t.baseUrl}/api/sync_user/${P.apiKey}/kim`, {
    api_token: P.apiToken,
    email_address: 'nobody-at-all@example.org',
    password: 'not the password',
  });
  assert.equal(a.status, 401);
  assert.equal(b.status, a.status);
  assert.equal(await b.text(), await a.text());
});

test('per partner + end-user address throttling counts across accounts', async () => {
  const P = await t.partner();
  for (let i = 0; i < 20; i++) {
    assert.equal(
      await code(P.client.syncUser('anyone', { email: `x${i}@example.org`, password: 'wrong password', endUserIp: '203.0.113.9' })),
      'invalid_credentials',
    );
  }
  assert.equal(await code(P.client.syncUser('anyone', { email: 'y@example.org', password: 'wrong password', endUserIp: '203.0.113.9' })), 'rate_limited');
  assert.equal(
    await code(P.client.syncUser('anyone', { email: 'y@example.org', password: 'wrong password', endUserIp: '203.0.113.10' })),
    'invalid_credentials',
  );
  assert.equal(await code(P.client.syncUser('anyone', { email: 'y@example.org', password: 'wrong password', endUserIp: 'not-an-ip' })), 'invalid_request');
});

test('unsync_user checks optional credentials and also answers on the widget path', async () => {
  const P = await t.partner();
  const u = await t.user({ email: 'lea@example.org', userId: 'lea' });
  await t.user({ email: 'max@example.org', userId: 'maxx' });
  await P.client.syncUser('lea', { email: 'lea@example.org', password: u.password });
  assert.equal(await code(P.client.unsyncUser('lea', { email: 'max@example.org', password: u.password })), 'invalid_credentials');
  const res = await postForm(`${t.baseUrl}/api/service_collection_widget/${P.apiKey}/lea/`, { api_token: P.apiToken });
  assert.equal(res.status, 200);
  assert.equal(await res.text(), '<?xml version="1.0" encoding="UTF-8"?>\n<user_identifier>lea</user_identifier>\n');
  assert.equal(await code(P.client.unsyncUser('lea')), 'not_found');
});

test('allowed origins: browser requests from elsewhere are forbidden', async () => {
  const P = await t.partner({ origins: ['https://partner.example'] });
  const url = `${t.baseUrl}/api/service_details/${P.apiKey}/github`;
  assert.equal((await fetch(url, { headers: { origin: 'https://partner.example' } })).status, 200);
  assert.equal((await fetch(url, { headers: { referer: 'https://partner.example/page?x=1' } })).status, 200);
  assert.equal((await fetch(url)).status, 200, 'server-to-server calls carry no origin');
  const bad = await fetch(url, { headers: { origin: 'https://evil.example' } });
  assert.equal(bad.status, 403);
  assert.match(await bad.text(), /forbidden/);
  assert.equal((await fetch(url, { headers: { referer: 'https://evil.example/' } })).status, 403);
});

test('return_contacts needs a link and matches opted-in, discoverable users', async () => {
  const P = await t.partner();
  const owner = await t.user({ email: 'nia@example.org', userId: 'nia' });
  await t.user({ email: 'oli@example.org', userId: 'oli', discoverable: true });
  await t.user({ email: 'pam@example.org', userId: 'pam', optedIn: false, discoverable: true });
  assert.equal(await code(P.client.returnContacts('nia', ['oli'])), 'forbidden');
  await P.client.syncUser('nia', { email: 'nia@example.org', password: owner.password });
  const found = await P.client.returnContacts('nia', ['oli@example.org', 'pam@example.org', 'nobody@example.org', 'not valid!!', 'oli']);
  assert.deepEqual(
    found.map((c) => [c.identifier, c.userId]),
    [['oli@example.org', 'oli']],
  );
  assert.equal(
    await code(
      P.client.returnContacts(
        'nia',
        Array.from({ length: 1001 }, (_, i) => `u${i}@example.org`),
      ),
    ),
    'invalid_request',
  );
});

test('return_profile: public fields, or all for a linked partner', async () => {
  const { updateProfile } = await import('../../src/repositories/users.js');
  const P = await t.partner();
  const u = await t.user({ email: 'quinn@example.org', userId: 'quinn' });
  await t.ctx.db.write((w) => updateProfile(w, u.id, { nickname: 'Q', city: 'Oslo', bio: 'hi' }, ['nickname'], t.clock.now()));
  assert.deepEqual(await P.publicClient.returnProfile('quinn', { profileType: 'public' }), {
    userId: 'quinn',
    url: `${t.config.baseUrl}/u/quinn`,
    nickname: 'Q',
  });
  assert.deepEqual(await P.client.returnProfile('quinn'), { userId: 'quinn', url: `${t.config.baseUrl}/u/quinn`, nickname: 'Q' });
  await P.client.syncUser('quinn', { email: 'quinn@example.org', password: u.password });
  assert.deepEqual(await P.client.returnProfile('quinn'), { userId: 'quinn', url: `${t.config.baseUrl}/u/quinn`, nickname: 'Q', city: 'Oslo', bio: 'hi' });
  assert.equal(await code(P.client.returnProfile('nobody_x', { profileType: 'public' })), 'not_found');
});

test('request rate limits per api_key, with headers and Retry-After', async () => {
  const P = await t.partner();
  await t.ctx.db.write((w) => updatePartner(w, P.id, { rateLimitPerMinute: 3 }, t.clock.now()));
  const url = `${t.baseUrl}/api/service_details/${P.apiKey}/github`;
  const seen: number[] = [];
  for (let i = 0; i < 4; i++) {
    const res = await fetch(url);
    seen.push(res.status);
    assert.equal(res.headers.get('ratelimit-limit'), i < 3 ? '3' : '3');
    if (res.status === 429) {
      assert.ok(Number(res.headers.get('retry-after')) > 0);
      assert.equal(res.headers.get('ratelimit-remaining'), '0');
    }
  }
  assert.deepEqual(seen, [200, 200, 200, 429]);
});

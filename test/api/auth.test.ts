// Keys, tokens, origins and rate limits (SPEC §2, §5, §8).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { IdsvcClient } from '@idsvc/client';
import { findPartnerByKey, rotatePartnerToken, updatePartner } from '../../src/repositories/partners.js';
import { startTestApp, type TestApp, errorCode as code } from '../helpers/app.js';

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

// The site's public reads, WebFinger and /u/{userId}, are limited per client address, one budget for
// both (issue 14.11), so nobody can map e-mail addresses to people at hundreds a second. With Redis
// the count is shared by every instance.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Redis } from 'ioredis';
import type { TestApp } from '../helpers/app.js';
import { testRedisUrl } from '../helpers/redis.js';
import { SiteClient, signUpConfirmed, startSiteApp } from './helpers.js';

const EMAIL = 'rosa.reads@example.org';
const LIMIT = 5;

async function signUpRosa(t: TestApp): Promise<void> {
  const rosa = new SiteClient(t.baseUrl, { 'x-forwarded-for': '192.0.2.1' });
  assert.equal((await signUpConfirmed(t, rosa, { email: EMAIL, user_id: 'rosa', password: 'velvet anchor meadow', opt_in: true })).status, 303);
  assert.equal((await rosa.submit('/account/discoverable', { discoverable: '1' })).res.status, 303);
}

const fromAddress = (address: string) => ({ 'x-forwarded-for': address });

describe('on one instance', () => {
  let t: TestApp;
  before(async () => {
    t = await startSiteApp({ TRUST_PROXY: 'true', SITE_READS_PER_ADDRESS: String(LIMIT) });
    await signUpRosa(t);
  });
  after(() => t.close());

  const host = () => new URL(t.config.baseUrl).host;
  const webfinger = (resource: string, address: string) =>
    fetch(`${t.baseUrl}/.well-known/webfinger?resource=${encodeURIComponent(resource)}`, { headers: fromAddress(address) });
  const profile = (userId: string, address: string) => fetch(`${t.baseUrl}/u/${userId}`, { headers: fromAddress(address) });

  test('WebFinger and /u/{userId} share one budget per address; past it both answer 429 with Retry-After', async () => {
    const a = '203.0.113.7';
    const answers = [
      await webfinger(`acct:rosa@${host()}`, a),
      await profile('rosa', a),
      await webfinger('mailto:nobody@example.org', a),
      await profile('nobody_here', a),
      await webfinger(`mailto:${EMAIL}`, a),
    ];
    assert.deepEqual(
      answers.map((r) => r.status),
      [200, 200, 404, 404, 200],
      'found and not found alike count',
    );
    assert.deepEqual(
      answers.map((r) => r.headers.get('ratelimit-remaining')),
      ['4', '3', '2', '1', '0'],
    );
    for (const r of answers) assert.equal(r.headers.get('ratelimit-limit'), String(LIMIT));

    const wf = await webfinger(`acct:rosa@${host()}`, a);
    assert.equal(wf.status, 429);
    assert.equal(wf.headers.get('access-control-allow-origin'), '*');
    const retry = Number(wf.headers.get('retry-after'));
    assert.ok(retry >= 1 && retry <= 60, `Retry-After ${retry}`);
    assert.match((await wf.json()).error, /too many lookups from your address; retry in \d+ s/);

    const page = await profile('rosa', a);
    assert.equal(page.status, 429);
    assert.match(page.headers.get('content-type') ?? '', /text\/html/);
    assert.ok(Number(page.headers.get('retry-after')) >= 1);
    assert.equal(page.headers.get('ratelimit-remaining'), '0');
    const html = await page.text();
    assert.match(html, /Too many profile pages requested from your network just now/);
    assert.doesNotMatch(html, /rosa/, 'a refused read tells nothing about the account');
  });

  test('a scraper gets the budget, not hundreds of answers; other addresses are not affected', async () => {
    const scraper = '198.51.100.66';
    const statuses: number[] = [];
    for (let i = 0; i < 200; i++) statuses.push((await webfinger(i === 150 ? `mailto:${EMAIL}` : `mailto:guess${i}@example.org`, scraper)).status);
    assert.deepEqual(statuses.slice(0, LIMIT), Array(LIMIT).fill(404));
    assert.deepEqual(statuses.slice(LIMIT), Array(200 - LIMIT).fill(429), 'the real address among the guesses is not revealed');
    assert.equal((await webfinger(`mailto:${EMAIL}`, '198.51.100.67')).status, 200);
    assert.equal((await profile('rosa', '198.51.100.67')).status, 200);
  });

  test("the limit is the site's own: the partner API and other pages keep their budgets", async () => {
    const a = '203.0.113.99';
    for (let i = 0; i < LIMIT + 1; i++) await profile('rosa', a);
    assert.equal((await profile('rosa', a)).status, 429);
    assert.equal((await fetch(`${t.baseUrl}/`, { headers: fromAddress(a) })).status, 200);
    const P = await t.partner();
    const api = await fetch(`${t.baseUrl}/api/return_services/${P.apiKey}/rosa/public`, { headers: fromAddress(a) });
    assert.equal(api.status, 200);
  });
});

describe('with Redis, across instances', () => {
  const REDIS_URL = testRedisUrl('read-limits');
  let one: TestApp;
  let two: TestApp;
  before(async () => {
    const probe = new Redis(REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 1 });
    await probe.connect();
    await probe.flushdb();
    probe.disconnect();
    const env = { TRUST_PROXY: 'true', SITE_READS_PER_ADDRESS: String(LIMIT), REDIS_URL };
    one = await startSiteApp(env);
    two = await startSiteApp({ ...env, ...one.cliEnv, LOG_LEVEL: 'info' });
    await signUpRosa(one);
  });
  after(async () => {
    await two?.close().catch(() => {});
    await one?.close();
  });

  test('reads on either instance count against one budget', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < LIMIT + 2; i++) {
      const base = i % 2 === 0 ? one.baseUrl : two.baseUrl;
      const url = i % 3 === 0 ? `${base}/u/rosa` : `${base}/.well-known/webfinger?resource=${encodeURIComponent(`mailto:${EMAIL}`)}`;
      statuses.push((await fetch(url, { headers: fromAddress('203.0.113.150') })).status);
    }
    assert.deepEqual(statuses, [...Array(LIMIT).fill(200), 429, 429]);
  });
});

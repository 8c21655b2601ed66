// sync_user (SPEC §4.5): a wrong password and an unknown address answer alike, and credential
// stuffing stays throttled while strangers elsewhere cannot lock the owner out: failures count per
// account + partner + end-user address (low), per partner + end-user address (all accounts), and
// per account over everything (a much higher ceiling), in the database or in Redis.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { Redis } from 'ioredis';
import { errorCode as code, postForm, startTestApp, type TestApp } from '../helpers/app.js';
import { testRedisUrl } from '../helpers/redis.js';

let t: TestApp;
before(async () => {
  t = await startTestApp({ RATE_LIMIT_PER_KEY: '1000000', RATE_LIMIT_PER_ADDRESS: '1000000' });
});
after(() => t.close());

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

const LIMITS = {
  SYNC_FAILURES_PER_ACCOUNT_ADDRESS: '5',
  SYNC_FAILURES_PER_PARTNER_ADDRESS: '20',
  SYNC_FAILURES_PER_ACCOUNT: '12',
  SYNC_FAILURE_WINDOW_SECONDS: '900',
};
const WRONG = 'not the password at all';

// Names and addresses no other run uses: the Redis counters outlive a run (and partner ids repeat
// from one test database to the next).
const run = randomBytes(2).toString('hex');
let n = 0;
const fresh = () => `u${run}${++n}`;
const address = (host: number) => `2001:db8:${run}::${host.toString(16)}`;
const HOME = address(7); // the owner's own address
const STRANGER = address(0x66);
const botnet = (i: number) => address(0x1000 + i);

function scenarios(start: () => TestApp) {
  let t: TestApp;
  before(() => {
    t = start();
  });

  async function owner() {
    const userId = fresh();
    const email = `${userId}@example.org`;
    const u = await t.user({ email, userId });
    return { userId, email, password: u.password };
  }

  test('a stranger elsewhere is throttled; the owner still syncs from her address and partner', async () => {
    const home = await t.partner({ name: 'Her partner' });
    const elsewhere = await t.partner({ name: 'Another partner' });
    const me = await owner();
    const attempt = (p: typeof home, endUserIp: string, password: string) => code(p.client.syncUser(me.userId, { email: me.email, password, endUserIp }));
    // Five wrong passwords from one place (another partner, another address): that place is stopped,
    // even with the right password.
    for (let i = 0; i < 5; i++) assert.equal(await attempt(elsewhere, STRANGER, WRONG), 'invalid_credentials');
    assert.equal(await attempt(elsewhere, STRANGER, WRONG), 'rate_limited');
    assert.equal(await attempt(elsewhere, STRANGER, me.password), 'rate_limited');
    // The same stranger through her partner, or from another address: a place of its own.
    for (let i = 0; i < 5; i++) assert.equal(await attempt(home, STRANGER, WRONG), 'invalid_credentials');
    assert.equal(await attempt(home, STRANGER, WRONG), 'rate_limited');
    // The owner, from her own address, through her partner (and through the other one too).
    assert.equal(await attempt(home, HOME, me.password), 'ok');
    assert.equal(await attempt(elsewhere, HOME, me.password), 'ok');
  });

  test('the account-wide ceiling stops an attack spread over many addresses', async () => {
    const p = await t.partner();
    const q = await t.partner();
    const me = await owner();
    const attempt = (partner: typeof p, endUserIp: string, password: string) =>
      code(partner.client.syncUser(me.userId, { email: me.email, password, endUserIp }));
    // Twelve failures from six addresses over two partners, two each: no place reaches its limit...
    for (let i = 0; i < 12; i++) assert.equal(await attempt(i % 2 ? q : p, botnet(i % 6), WRONG), 'invalid_credentials', String(i));
    // ...but the account has reached its ceiling: a new address is stopped before any hashing,
    assert.equal(await attempt(p, botnet(200), WRONG), 'rate_limited');
    // and, while the window lasts, so is the owner: the price of stopping the attack.
    assert.equal(await attempt(p, HOME, me.password), 'rate_limited');
  });

  test("a success clears the owner's own place, not the ceiling", async () => {
    const p = await t.partner();
    const me = await owner();
    const attempt = (password: string) => code(p.client.syncUser(me.userId, { email: me.email, password, endUserIp: HOME }));
    for (let i = 0; i < 4; i++) assert.equal(await attempt(WRONG), 'invalid_credentials');
    assert.equal(await attempt(me.password), 'ok');
    for (let i = 0; i < 5; i++) assert.equal(await attempt(WRONG), 'invalid_credentials', String(i));
    assert.equal(await attempt(me.password), 'rate_limited');
  });
}

describe('counted in the database', () => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp(LIMITS);
  });
  after(() => t.close());
  scenarios(() => t);

  test('the window ends: the owner is never locked out for good', async () => {
    const p = await t.partner();
    const userId = fresh();
    const u = await t.user({ email: `${userId}@example.org`, userId });
    for (let i = 0; i < 12; i++) await p.client.syncUser(userId, { email: `${userId}@example.org`, password: WRONG, endUserIp: botnet(i) }).catch(() => {});
    assert.equal(await code(p.client.syncUser(userId, { email: `${userId}@example.org`, password: u.password, endUserIp: HOME })), 'rate_limited');
    t.clock.advance(900 * 1000);
    assert.equal(await code(p.client.syncUser(userId, { email: `${userId}@example.org`, password: u.password, endUserIp: HOME })), 'ok');
  });
});

describe('counted in Redis', () => {
  const REDIS_URL = testRedisUrl('sync-user');
  let t: TestApp;
  before(async () => {
    const probe = new Redis(REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 1 });
    await probe.connect(); // fails loudly when Redis is missing: CI has it
    probe.disconnect();
    t = await startTestApp({ REDIS_URL, ...LIMITS });
  });
  after(() => t.close());
  scenarios(() => t);
});

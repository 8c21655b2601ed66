// Issue 14.3: calls on a partner's api_key without proof draw on a budget of their own, so that
// traffic spread over many addresses cannot get the partner's own server calls (api_token) or its
// signed widgets refused. In one process, and shared by every instance through Redis.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { Redis } from 'ioredis';
import { buildWidget } from '../../scripts/build-widget.js';
import { updatePartner } from '../../src/repositories/partners.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { testRedisUrl } from '../helpers/redis.js';

type Partner = Awaited<ReturnType<TestApp['partner']>>;

// Client addresses no other run uses (the limits' windows are real minutes, and Redis outlives a run).
const run = randomBytes(2).toString('hex');
let n = 0;
const freshAddress = () => `2001:db8:${run}::${(++n).toString(16)}`;

const LIMITS = { TRUST_PROXY: 'true', RATE_LIMIT_PER_KEY: '10', RATE_LIMIT_PER_KEY_UNPROVEN: '5', RATE_LIMIT_PER_ADDRESS: '6' };

/** service_details with the key alone, from `address` (X-Forwarded-For, trusted in these apps). */
async function anonymous(base: string, p: Partner, address: string): Promise<Response> {
  const res = await fetch(`${base}/api/service_details/${p.apiKey}/github`, { headers: { 'x-forwarded-for': address } });
  await res.arrayBuffer();
  return res;
}

async function proven(base: string, p: Partner, address = freshAddress()): Promise<Response> {
  const res = await fetch(`${base}/api/service_details/${p.apiKey}/github`, {
    method: 'POST',
    body: new URLSearchParams({ api_token: p.apiToken }),
    headers: { 'x-forwarded-for': address },
  });
  await res.arrayBuffer();
  return res;
}

describe('in one process', () => {
  let t: TestApp;
  before(async () => {
    await buildWidget();
    t = await startTestApp(LIMITS);
  });
  after(() => t.close());

  test("exhausting the unproven budget from many addresses leaves the partner's own calls at 200", async () => {
    const P = await t.partner();
    const statuses: number[] = [];
    for (let i = 0; i < 10; i++) statuses.push((await anonymous(t.baseUrl, P, freshAddress())).status);
    assert.deepEqual(statuses, [200, 200, 200, 200, 200, 429, 429, 429, 429, 429]);
    const refused = await anonymous(t.baseUrl, P, freshAddress());
    assert.equal(refused.headers.get('ratelimit-limit'), '5');
    assert.equal(refused.headers.get('ratelimit-remaining'), '0');
    assert.ok(Number(refused.headers.get('retry-after')) > 0);
    // The partner's server, with its token: its own budget, untouched by the anonymous traffic.
    const own = await proven(t.baseUrl, P);
    assert.equal(own.status, 200);
    assert.equal(own.headers.get('ratelimit-limit'), '10');
    assert.equal(own.headers.get('ratelimit-remaining'), '9');
    // A widget URL its server signed is proven too: the private view, from the proven budget.
    const signed = await fetch(await P.client.widgetUrl('someone', { now: t.clock.now() }), { headers: { 'x-forwarded-for': freshAddress() } });
    assert.equal(signed.status, 200, await signed.text());
    assert.equal((await proven(t.baseUrl, P)).headers.get('ratelimit-remaining'), '7');
    // The same widget unsigned is anonymous: refused with the rest.
    const unsigned = await fetch(await P.publicClient.widgetUrl('someone'), { headers: { 'x-forwarded-for': freshAddress() } });
    assert.equal(unsigned.status, 429);
  });

  test('the proven budget runs out on its own, and leaves the unproven one alone', async () => {
    const P = await t.partner();
    const statuses: number[] = [];
    for (let i = 0; i < 11; i++) statuses.push((await proven(t.baseUrl, P)).status);
    assert.deepEqual(statuses, [...Array(10).fill(200), 429]);
    assert.equal((await anonymous(t.baseUrl, P, freshAddress())).status, 200);
  });

  test('the per-address limit still holds for calls without the api_token, over every key, and not for calls with it', async () => {
    const P = await t.partner();
    const Q = await t.partner();
    const address = freshAddress();
    const statuses: number[] = [];
    for (let i = 0; i < 7; i++) statuses.push((await anonymous(t.baseUrl, i % 2 ? Q : P, address)).status);
    assert.deepEqual(statuses, [200, 200, 200, 200, 200, 200, 429]);
    for (let i = 0; i < 7; i++) assert.equal((await proven(t.baseUrl, P, address)).status, 200);
  });

  test("a partner's own limit sets its proven budget and caps its unproven one", async () => {
    const P = await t.partner();
    await t.ctx.db.write((w) => updatePartner(w, P.id, { rateLimitPerMinute: 2 }, t.clock.now()));
    assert.deepEqual([(await proven(t.baseUrl, P)).status, (await proven(t.baseUrl, P)).status, (await proven(t.baseUrl, P)).status], [200, 200, 429]);
    const first = await anonymous(t.baseUrl, P, freshAddress());
    assert.equal(first.headers.get('ratelimit-limit'), '2');
    assert.deepEqual(
      [first.status, (await anonymous(t.baseUrl, P, freshAddress())).status, (await anonymous(t.baseUrl, P, freshAddress())).status],
      [200, 200, 429],
    );
    const Q = await t.partner();
    await t.ctx.db.write((w) => updatePartner(w, Q.id, { rateLimitPerMinute: 1000 }, t.clock.now()));
    assert.equal((await anonymous(t.baseUrl, Q, freshAddress())).headers.get('ratelimit-limit'), '5', "a raised limit is for the partner's own calls");
  });
});

describe('an unproven budget larger than the proven one', () => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp({ ...LIMITS, RATE_LIMIT_PER_KEY: '2', RATE_LIMIT_PER_KEY_UNPROVEN: '4' });
  });
  after(() => t.close());

  test('is honoured as configured, each budget on its own', async () => {
    const P = await t.partner();
    const anon: number[] = [];
    for (let i = 0; i < 5; i++) anon.push((await anonymous(t.baseUrl, P, freshAddress())).status);
    assert.deepEqual(anon, [200, 200, 200, 200, 429]);
    assert.deepEqual([(await proven(t.baseUrl, P)).status, (await proven(t.baseUrl, P)).status, (await proven(t.baseUrl, P)).status], [200, 200, 429]);
  });
});

describe('shared through Redis by two instances', () => {
  const REDIS_URL = testRedisUrl('key-budgets');
  let one: TestApp;
  let two: TestApp;
  before(async () => {
    const probe = new Redis(REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 1 });
    await probe.connect(); // fails loudly when Redis is missing: CI has it
    probe.disconnect();
    await buildWidget();
    one = await startTestApp({ REDIS_URL, ...LIMITS });
    two = await startTestApp({ REDIS_URL, ...LIMITS, ...one.cliEnv, LOG_LEVEL: 'info' });
  });
  after(async () => {
    await two.close().catch(() => {});
    await one.close();
  });

  test('the unproven budget counts on both instances; the proven one is apart', async () => {
    const P = await one.partner();
    const statuses: number[] = [];
    for (let i = 0; i < 7; i++) statuses.push((await anonymous(i % 2 ? two.baseUrl : one.baseUrl, P, freshAddress())).status);
    assert.deepEqual(statuses, [200, 200, 200, 200, 200, 429, 429]);
    const own: number[] = [];
    for (let i = 0; i < 11; i++) own.push((await proven(i % 2 ? two.baseUrl : one.baseUrl, P)).status);
    assert.deepEqual(own, [...Array(10).fill(200), 429]);
  });
});

// With REDIS_URL, limits are shared by every instance (SPEC §8): two apps, one counter.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { Redis } from 'ioredis';
import { updatePartner } from '../../src/repositories/partners.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { testRedisUrl } from '../helpers/redis.js';

const REDIS_URL = testRedisUrl('redis-limits');
let one: TestApp;
let two: TestApp;

before(async () => {
  const probe = new Redis(REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 1 });
  await probe.connect(); // fails the suite loudly when Redis is missing: CI has it
  await probe.flushdb();
  probe.disconnect();
  // Both instances run in this test process: on a busy machine a command may wait longer than the
  // default 500 ms, and an instance that gave up on Redis would count in its own memory.
  const shared = { REDIS_URL, REDIS_TIMEOUT_MS: '30000', RATE_LIMIT_PER_ADDRESS: '5' };
  one = await startTestApp(shared);
  // The second instance reads the same database: same partners, same users.
  two = await startTestApp({ ...shared, ...one.cliEnv, LOG_LEVEL: 'info' });
});
after(async () => {
  await two.close().catch(() => {});
  await one.close();
});

test('the per-api_key limit counts requests on both instances', async () => {
  const P = await one.partner();
  await one.ctx.db.write((w) => updatePartner(w, P.id, { rateLimitPerMinute: 4 }, one.clock.now()));
  const statuses: number[] = [];
  for (let i = 0; i < 5; i++) {
    const base = i % 2 === 0 ? one.baseUrl : two.baseUrl;
    statuses.push(
      (await fetch(`${base}/api/service_details/${P.apiKey}/github`, { method: 'POST', body: new URLSearchParams({ api_token: P.apiToken }) })).status,
    );
  }
  assert.deepEqual(statuses, [200, 200, 200, 200, 429]);
});

test('requests without a valid token are limited per client address, across instances', async () => {
  const statuses: number[] = [];
  for (let i = 0; i < 6; i++) {
    const base = i % 2 === 0 ? one.baseUrl : two.baseUrl;
    statuses.push((await fetch(`${base}/api/service_details/${'x'.repeat(32)}/github`)).status);
  }
  assert.deepEqual(statuses, [401, 401, 401, 401, 401, 429]);
});

test('credential-failure throttles live in Redis and hold across instances', async () => {
  const P = await one.partner();
  await one.user({ email: 'rhea@example.org', userId: 'rhea' });
  const sync = (base: string, password: string) =>
    fetch(`${base}/api/sync_user/${P.apiKey}/rhea`, {
      method: 'POST',
      body: new URLSearchParams({ api_token: P.apiToken, email_address: 'rhea@example.org', password }),
    });
  for (let i = 0; i < 5; i++) assert.equal((await sync(i % 2 ? one.baseUrl : two.baseUrl, 'wrong password')).status, 401);
  assert.equal(one.ctx.redis?.state, 'up', 'the first instance counted in Redis');
  assert.equal(two.ctx.redis?.state, 'up', 'the second instance counted in Redis');
  assert.equal((await sync(two.baseUrl, 'correct horse battery')).status, 429);
});

// Redis going away (issue 20; docs/operations.md "When a dependency fails"). The server reaches
// Redis through a TCP proxy that the tests cut, freeze and restore. While Redis is away the right
// password works, limits and credential throttles still apply (counted in this process), nothing
// waits on Redis beyond a short timeout, /readyz stays 200 and says `redis: down`, one JSON log line
// marks the loss and one the return, nothing else is printed, and the counts kept in Redis apply
// again once it is back.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { Redis } from 'ioredis';
import { updatePartner } from '../../src/repositories/partners.js';
import type { RedisLink } from '../../src/services/redis-link.js';
import type { TestApp } from '../helpers/app.js';
import { SiteClient, startSiteApp } from '../site/helpers.js';
import { TcpProxy } from '../helpers/tcp-proxy.js';
import { testRedisUrl } from '../helpers/redis.js';

// The database is flushed first: some keys are the same in every run (the first partner's id and
// the client address name a credential throttle), and what an earlier run counted in them, kept for
// the throttle's window, would refuse this one. Names and addresses differ per run too.
const REDIS_URL = testRedisUrl('redis-outage');
const run = Math.random().toString(36).slice(2, 8);
let proxy: TcpProxy;
let t: TestApp;
/** Anything written to this process's stderr (ioredis prints unhandled 'error' events there). */
const stderr: string[] = [];
const writeStderr = process.stderr.write.bind(process.stderr);

before(async () => {
  const probe = new Redis(REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 1 });
  await probe.connect();
  await probe.flushdb();
  probe.disconnect();
  const target = new URL(REDIS_URL);
  proxy = await TcpProxy.start(target.hostname, Number(target.port || 6379));
  // A command timeout well above the pauses a busy test machine puts this process through, so that
  // "the next call does not wait" (under half of it) is told from such a pause by a wide margin.
  t = await startSiteApp({ REDIS_URL: proxy.via(REDIS_URL), REDIS_TIMEOUT_MS: '2000' });
  assert.equal(t.ctx.redis?.state, 'up');
  process.stderr.write = ((chunk: string | Uint8Array, ...rest: unknown[]) => {
    stderr.push(String(chunk));
    return (writeStderr as (c: string | Uint8Array, ...r: unknown[]) => boolean)(chunk, ...rest);
  }) as typeof process.stderr.write;
});

after(async () => {
  process.stderr.write = writeStderr;
  await t.close();
  await proxy.close();
});

function redisLines(): { level: number; state: string; msg: string }[] {
  return t.logs.map((l) => JSON.parse(l) as { level: number; state: string; msg: string; dependency?: string }).filter((l) => l.dependency === 'redis');
}

async function timedSync(apiKey: string, apiToken: string, userId: string, email: string, password: string): Promise<{ status: number; ms: number }> {
  const started = performance.now();
  const res = await fetch(`${t.baseUrl}/api/sync_user/${apiKey}/${userId}?format=json`, {
    method: 'POST',
    body: new URLSearchParams({ api_token: apiToken, email_address: email, password }),
  });
  await res.text();
  return { status: res.status, ms: performance.now() - started };
}

/** Commands ioredis sends on its own when it (re)connects; any other is a caller's. */
const HANDSHAKE = new Set(['select', 'client', 'info', 'auth', 'hello', 'readonly']);

/**
 * The commands callers send to Redis from now until stop(): whether a call went to Redis, told
 * without timing it (a request's time also holds whatever else this process was doing).
 */
function recordCommands(redis: RedisLink): { sent: string[]; stop(): void } {
  const client = redis.client;
  const send = client.sendCommand;
  const sent: string[] = [];
  client.sendCommand = (command, stream) => {
    if (!HANDSHAKE.has(command.name)) sent.push(command.name);
    return send.call(client, command, stream);
  };
  return {
    sent,
    stop: () => {
      client.sendCommand = send;
    },
  };
}

async function ready(): Promise<{ status: number; body: unknown }> {
  const res = await fetch(`${t.baseUrl}/readyz`);
  return { status: res.status, body: await res.json() };
}

test('Redis cut: the right password works (API and site), limits and throttles count in the process, and Redis counts apply again when it returns', async () => {
  const redis = t.ctx.redis!;
  const P = await t.partner();
  const Q = await t.partner();
  await t.ctx.db.write((w) => updatePartner(w, Q.id, { rateLimitPerMinute: 3 }, t.clock.now()));
  const rhea = { email: `rhea-${run}@example.org`, userId: `rhea_${run}` };
  const sia = { email: `sia-${run}@example.org`, userId: `sia_${run}` };
  const rheaUser = await t.user(rhea);
  const siaUser = await t.user(sia);
  const sync = (who: { email: string; userId: string }, password: string) => timedSync(P.apiKey, P.apiToken, who.userId, who.email, password);

  // Three failures counted in Redis before it goes.
  for (let i = 0; i < 3; i++) assert.equal((await sync(rhea, 'wrong password')).status, 401);

  const down = once(redis, 'down');
  await proxy.cut();
  await down;

  const right = await sync(rhea, rheaUser.password);
  assert.equal(right.status, 200, 'the right password works');
  assert.ok(right.ms < 1500, `without waiting on Redis (${Math.round(right.ms)} ms)`);
  assert.equal((await new SiteClient(t.baseUrl).logIn(rhea.email, rheaUser.password)).status, 303, "the site's log-in works");
  // Credential throttles still apply, counted here: five failures, then even the right password waits.
  for (let i = 0; i < 5; i++) assert.equal((await sync(sia, 'wrong password')).status, 401);
  assert.equal((await sync(sia, siaUser.password)).status, 429);
  // Request limits still apply, counted here, and answer at once.
  const statuses: number[] = [];
  for (let i = 0; i < 4; i++) {
    const started = performance.now();
    const res = await fetch(`${t.baseUrl}/api/service_details/${Q.apiKey}/github`, { method: 'POST', body: new URLSearchParams({ api_token: Q.apiToken }) });
    statuses.push(res.status);
    assert.ok(performance.now() - started < 500, 'a limited call does not wait on Redis');
  }
  assert.deepEqual(statuses, [200, 200, 200, 429]);

  assert.deepEqual(await ready(), { status: 200, body: { status: 'ready', database: 'up', redis: 'down' } });
  assert.deepEqual(
    redisLines().map((l) => [l.level, l.state]),
    [[40, 'down']],
    'one warning when Redis goes',
  );

  const up = once(redis, 'up');
  await proxy.restore();
  await up;
  assert.deepEqual(await ready(), { status: 200, body: { status: 'ready', database: 'up', redis: 'up' } });
  assert.deepEqual(
    redisLines().map((l) => [l.level, l.state]),
    [
      [40, 'down'],
      [30, 'up'],
    ],
    'one line when it returns',
  );
  // The three failures kept in Redis count again (the success during the outage reset only this
  // process's count): two more make five, and the account waits.
  for (let i = 0; i < 2; i++) assert.equal((await sync(rhea, 'wrong password')).status, 401);
  assert.equal((await sync(rhea, rheaUser.password)).status, 429);
  assert.deepEqual(stderr, [], 'nothing but JSON log lines: no stack traces on stderr');
});

test('Redis stalled: a call waits at most the command timeout, later ones not at all, and Redis is used again when it moves', async () => {
  const redis = t.ctx.redis!;
  const P = await t.partner();
  const uma = { email: `uma-${run}@example.org`, userId: `uma_${run}` };
  const umaUser = await t.user(uma);
  const before = redisLines().length;

  proxy.freeze();
  const details = async () => {
    const started = performance.now();
    const res = await fetch(`${t.baseUrl}/api/service_details/${P.apiKey}/github`, { method: 'POST', body: new URLSearchParams({ api_token: P.apiToken }) });
    await res.text();
    return { status: res.status, ms: performance.now() - started };
  };
  const first = await details();
  assert.equal(first.status, 200);
  assert.ok(first.ms < redis.commandTimeoutMs + 1000, `the first call waited for one command timeout at most (${Math.round(first.ms)} ms)`);
  assert.equal(redis.state, 'down');
  const commands = recordCommands(redis);
  // Listened for before anything else is awaited: ioredis reconnects about 200 ms after the drop.
  // (Listeners, not once(): that rejects on the 'error' the failed ready check emits.)
  const reconnected = new Promise((resolve) => redis.client.once('connect', resolve));
  const second = await details();
  assert.equal(second.status, 200);
  assert.deepEqual(commands.sent, [], 'the next call does not go to Redis');
  assert.ok(second.ms < redis.commandTimeoutMs / 2, `the next call does not wait (${Math.round(second.ms)} ms)`);
  assert.equal((await timedSync(P.apiKey, P.apiToken, uma.userId, uma.email, umaUser.password)).status, 200, 'the right password works');
  assert.deepEqual(await ready(), { status: 200, body: { status: 'ready', database: 'up', redis: 'down' } });
  // ioredis reconnects through the stalled network: the proxy accepts the connection, so it opens,
  // but nothing answers its ready check, which fails and drops it. Opening is not answering: Redis
  // stays down, and calls meanwhile still go nowhere near it.
  await reconnected;
  const opened = details();
  await new Promise((resolve) => redis.client.once('close', resolve));
  assert.equal((await opened).status, 200);
  assert.equal(redis.state, 'down', 'a connection that opened but did not answer is not Redis back');
  assert.deepEqual(commands.sent, [], 'no call went to Redis while it was stalled');
  commands.stop();

  const up = once(redis, 'up');
  await proxy.restore();
  await up;
  assert.deepEqual(
    redisLines()
      .slice(before)
      .map((l) => l.state),
    ['down', 'up'],
  );
  assert.equal((await timedSync(P.apiKey, P.apiToken, uma.userId, uma.email, umaUser.password)).status, 200);
  assert.deepEqual(stderr, []);
});

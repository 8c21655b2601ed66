// Read replicas (DATABASE_READ_URL, src/db/replicas.ts) against a real streaming replica: a
// primary and a replica of it started for this file (test/helpers/pg-replica.ts), the replica
// applying each commit APPLY_DELAY_MS late, so an answer tells which of the two gave it. Public
// views go to the replica; a partner's private view reads the primary, so it sees its own writes;
// an answer kept in memory is never one a lagging replica gave; a replica further behind than
// DATABASE_READ_MAX_LAG_MS, or stopped, only sends reads back to the primary, and /readyz says so.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { IdsvcError } from '@idsvc/client';
import { sql } from 'kysely';
import { statement } from '../../src/db/prepared.js';
import { startTestApp, TEST_DB, type TestApp } from '../helpers/app.js';
import { pgBinDir, startReplicatedPostgres, type ReplicatedPostgres } from '../helpers/pg-replica.js';

const skip = TEST_DB !== 'postgres' ? 'PostgreSQL only' : pgBinDir() === null && 'PostgreSQL server programs (initdb) not installed';
const APPLY_DELAY_MS = 4000;
const METRICS_TOKEN = 'read-replicas-test-metrics-token';

let pgs: ReplicatedPostgres | undefined;
/** Public views from the replica whatever its lag, no answer cache: every public read goes to the replica. */
let uncached: TestApp | undefined;
/** With the answer cache, as deployed. */
let cached: TestApp | undefined;
/** Skips the replica once it is more than a second behind. */
let strict: TestApp | undefined;

before(async () => {
  if (skip) return;
  pgs = await startReplicatedPostgres(APPLY_DELAY_MS);
  const env = { DATABASE_URL: pgs.primaryUrl, DATABASE_READ_URL: pgs.replicaUrl };
  uncached = await startTestApp({ ...env, ANSWER_CACHE_MB: '0', DATABASE_READ_MAX_LAG_MS: '600000' });
  cached = await startTestApp({ ...env, DATABASE_READ_MAX_LAG_MS: '600000' });
  strict = await startTestApp({ ...env, ANSWER_CACHE_MB: '0', DATABASE_READ_MAX_LAG_MS: '1000', METRICS_TOKEN });
  // The schema the first start made, on the replica before any test reads it there.
  await pgs.caughtUp();
});

after(async () => {
  for (const app of [uncached, cached, strict]) await app?.close();
  pgs?.close();
});

async function waitFor(what: string, ok: () => Promise<boolean> | boolean, withinMs = 60_000): Promise<void> {
  const until = Date.now() + withinMs;
  while (!(await ok())) {
    if (Date.now() > until) assert.fail(`waited ${withinMs} ms for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

const replicaState = (app: TestApp) => app.ctx.db.replicaStatus()[0]?.state;

/** How many services the Gravatar-compatible profile lists (read through the query builder, not a prepared statement). */
async function profileServices(app: TestApp, userId: string, apiToken: string): Promise<number> {
  // With a partner's token the profile lists every service, verified or not (docs/gravatar-compatibility.md).
  const res = await fetch(`${app.baseUrl}/v3/profiles/${userId}`, { headers: { authorization: `Bearer ${apiToken}` } });
  assert.equal(res.status, 200);
  const body = (await res.json()) as { links: unknown[]; verified_accounts: unknown[] };
  return body.links.length + body.verified_accounts.length;
}

/** A person linked with a partner, so that the partner's pushes reach the public view; the services each view lists. */
async function linkedPerson(app: TestApp, userId: string) {
  const person = await app.user({ email: `${userId}@example.org`, userId });
  const P = await app.partner();
  await P.client.syncUser(userId, { email: `${userId}@example.org`, password: person.password });
  /** A partner of each other app that reads the public view, made on its first read. */
  const readers = new Map<TestApp, Promise<Awaited<ReturnType<TestApp['partner']>>>>();
  const publicIds = async (via: TestApp = app) => {
    if (via !== app && !readers.has(via)) readers.set(via, via.partner());
    const reader = via === app ? P.publicClient : (await readers.get(via)!).publicClient;
    try {
      return (await reader.returnServices(userId, { profileType: 'public' })).map((s) => s.svcId).join();
    } catch (err) {
      if (err instanceof IdsvcError && err.code === 'not_found') return '(not found)';
      throw err;
    }
  };
  const privateIds = async () => (await P.client.returnServices(userId, { profileType: 'private' })).map((s) => s.svcId).join();
  // The public view shows which services a person is on (not the account names, SPEC §3 rule 5).
  return {
    push: (svcId: string) => P.client.updateService(userId, svcId, `${userId}-${svcId}`),
    publicIds,
    privateIds,
    profile: () => profileServices(app, userId, P.apiToken),
  };
}

/** A linked person with one service pushed, once the replica is in use and has applied that push. */
async function onReplicaWithGithub(app: TestApp, userId: string) {
  await waitFor('the replica to be checked and used', () => replicaState(app) === 'ok' && replicaState(uncached!) === 'ok');
  const person = await linkedPerson(app, userId);
  await person.push('github');
  // Asked through the app without an answer cache: the cached app keeps renders read from the
  // primary, and would answer 'github' before the replica has it.
  await waitFor('the replica to apply the first push', async () => (await person.publicIds(uncached)) === 'github');
  return person;
}

test('public views are read from the replica; the writer reads its own write from the primary', { skip }, async () => {
  const app = uncached!;
  const ada = await onReplicaWithGithub(app, 'ada');

  await ada.push('gitlab');
  assert.equal(await ada.privateIds(), 'github,gitlab', "the partner's own view shows its write at once");
  assert.equal(await ada.publicIds(), 'github', 'the public view comes from the replica, which has not applied the second push yet');
  assert.equal(await ada.profile(), 1, 'so does the Gravatar-compatible profile');
  await waitFor('the replica to apply the second push', async () => (await ada.publicIds()) === 'github,gitlab');
  assert.equal(await ada.profile(), 2);
});

test('an answer kept in memory is read from the primary, never from a lagging replica', { skip }, async () => {
  const app = cached!;
  const bea = await onReplicaWithGithub(app, 'bea');

  await bea.push('gitlab');
  const hits = app.ctx.answers.hits;
  const answers: string[] = [];
  for (let i = 0; i < 4; i++) answers.push(await bea.publicIds());
  assert.ok(app.ctx.answers.hits > hits, 'some answers came from memory');
  // The first ask after the change may come from the replica; the render kept for later asks reads
  // the primary, so once the second push is shown it stays shown, while the replica still lacks it.
  const current = answers.indexOf('github,gitlab');
  assert.ok(current >= 0, answers.join(' '));
  assert.deepEqual(answers.slice(current), Array(answers.length - current).fill('github,gitlab'), answers.join(' '));
  assert.equal(await bea.publicIds(uncached), 'github', 'the replica had not applied the second push meanwhile');
});

test('a replica further behind than DATABASE_READ_MAX_LAG_MS is skipped, and /readyz and /metrics say so', { skip }, async () => {
  const app = strict!;
  await waitFor('the replica to be checked and used', () => replicaState(app) === 'ok');
  const cyd = await linkedPerson(app, 'cyd');
  // Each round writes, waits until the monitor finds the replica behind, and reads the public view
  // while it stays so; on a machine slow enough for the replica to catch up meanwhile, again.
  let shown = '';
  for (const svcId of ['github', 'gitlab', 'twitter']) {
    await cyd.push(svcId);
    await waitFor('the monitor to find the replica behind', () => replicaState(app) === 'behind', 30_000);
    shown = await cyd.publicIds();
    const ready = await fetch(`${app.baseUrl}/readyz`);
    const body = (await ready.json()) as { replicas: { replica: string; state: string; lag_ms: number }[] };
    const metrics = await (await fetch(`${app.baseUrl}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } })).text();
    // Still behind after all three were read: each was read while it was.
    if (replicaState(app) !== 'behind') continue;
    assert.equal(shown, await cyd.privateIds(), 'read from the primary while the replica is skipped');
    assert.equal(ready.status, 200, 'a lagging replica does not make the instance unready');
    assert.equal(body.replicas.length, 1);
    assert.equal(body.replicas[0]!.state, 'behind');
    assert.ok(body.replicas[0]!.lag_ms > 1000, `lag ${body.replicas[0]!.lag_ms} ms`);
    assert.match(body.replicas[0]!.replica, /^127\.0\.0\.1:\d+\/postgres$/, 'named by address, no credentials');
    assert.match(metrics, /idsvc_replica_reads\{replica="127\.0\.0\.1:\d+\/postgres"\} 0/);
    const lag = /idsvc_replica_lag_seconds\{replica="[^"]+"\} ([\d.]+)/.exec(metrics);
    assert.ok(
      lag && Number(lag[1]) > 1,
      metrics
        .split('\n')
        .filter((l) => l.includes('replica'))
        .join('\n'),
    );
    return;
  }
  assert.fail(`the replica caught up before every read (last answer: ${shown})`);
});

test('a table the replica has not replayed yet (a migration just made) is read from the primary', { skip }, async () => {
  const app = uncached!;
  await waitFor('the replica to be checked and used', () => replicaState(app) === 'ok');
  await app.ctx.db.write(async (w) => {
    await sql`CREATE TABLE replica_probe (n integer)`.execute(w.kysely);
    await sql`INSERT INTO replica_probe VALUES (7)`.execute(w.kysely);
  });
  const from = app.ctx.db.behind();
  assert.notEqual(from, app.ctx.db, "the replica's handle");
  // Both ways a repository reads: the query builder, and a prepared statement.
  assert.deepEqual((await sql<{ n: number }>`SELECT n FROM replica_probe`.execute(from.kysely)).rows, [{ n: 7 }]);
  assert.deepEqual(await from.all(statement<[number]>('SELECT n FROM replica_probe', { rowMode: 'array' })), [[7]]);
  assert.equal(replicaState(app), 'ok', 'a replica behind the schema is not down');
});

test('a stopped replica only sends reads back to the primary: no error is answered', { skip }, async () => {
  const app = uncached!;
  const dee = await onReplicaWithGithub(app, 'dee');
  await dee.push('gitlab');
  pgs!.stopReplica();
  // The first reads go to the stopped replica before any check has noticed: each is retried on the primary.
  for (let i = 0; i < 5; i++) {
    assert.equal(await dee.publicIds(), 'github,gitlab');
    assert.equal(await dee.profile(), 2);
  }
  await waitFor('the monitor to find the replica down', () => replicaState(app) === 'down', 30_000);
  const ready = await fetch(`${app.baseUrl}/readyz`);
  assert.equal(ready.status, 200);
  assert.equal(((await ready.json()) as { replicas: { state: string }[] }).replicas[0]!.state, 'down');
  const said = app.logs.filter((l) => l.includes('"dependency":"replica"'));
  assert.ok(
    said.some((l) => l.includes('"state":"down"') && l.includes('read replica skipped')),
    'the log says the replica is skipped',
  );
  assert.ok(!app.logs.some((l) => l.includes('postgres://')), 'no connection URL in the log');
  assert.equal(await dee.publicIds(), 'github,gitlab');
});

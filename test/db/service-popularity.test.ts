// Popularity counts (migration 005): kept by triggers, they must always equal counting from scratch,
// whatever changed them: the service's own functions, or SQL from another connection.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { COUNT_POPULARITY } from '../../src/db/migrations/005-service-popularity.js';
import { popularityCounts } from '../../src/repositories/catalogue.js';
import { findUserByRef, type User } from '../../src/repositories/users.js';
import { createUser } from '../../src/services/orphan-subjects.js';
import { deleteAccount, setOptIn } from '../../src/services/accounts.js';
import { removeCentralIdentity, setCentralIdentity } from '../../src/services/central.js';
import { startTestApp, type TestApp } from '../helpers/app.js';

let t: TestApp;
before(async () => {
  t = await startTestApp();
});
after(() => t.close());

const db = () => t.ctx.db.kysely;
const handle = () => t.ctx.db;
const now = () => t.ctx.clock.now();

async function fromScratch(): Promise<Map<string, number>> {
  const { rows } = await sql.raw<{ svc_id: string; user_count: number | string }>(COUNT_POPULARITY).execute(db());
  return new Map(rows.map((r) => [r.svc_id, Number(r.user_count)]));
}

async function assertExact(step: string): Promise<Map<string, number>> {
  const kept = await popularityCounts(handle());
  assert.deepEqual(kept, await fromScratch(), `after ${step}`);
  return kept;
}

let n = 0;
async function user(optedIn: boolean): Promise<User> {
  n++;
  return createUser(t.ctx.db, { email: `pop${n}@example.org`, userId: `pop${n}`, passwordHash: 'x', optedIn, proven: true }, now());
}

async function add(u: User, svcId: string): Promise<void> {
  const svc = (await t.ctx.catalogue.get()).byId.get(svcId)!;
  await handle().write((tx) => setCentralIdentity(tx, u, svc, `${u.user_id}-${svcId}`, { partnerId: null }, now()));
}

const fresh = async (u: User) => (await findUserByRef(handle(), u.id))!;

test('every kind of change keeps the counts equal to counting from scratch', async () => {
  const before = await assertExact('start');
  const gh = () => before.get('github') ?? 0;

  const a = await user(true);
  const b = await user(false);
  await add(a, 'github');
  await add(a, 'gitlab');
  await add(b, 'github');
  let counts = await assertExact('entries added for an opted-in and an opted-out user');
  assert.equal(counts.get('github'), gh() + 1, 'the opted-out user is not counted');

  await setOptIn(t.ctx, await fresh(b), true);
  counts = await assertExact('an opt-in');
  assert.equal(counts.get('github'), gh() + 2);

  await setOptIn(t.ctx, await fresh(a), false);
  counts = await assertExact('an opt-out');
  assert.equal(counts.get('github'), gh() + 1);
  assert.equal(counts.get('gitlab') ?? 0, before.get('gitlab') ?? 0);

  await setOptIn(t.ctx, await fresh(a), true);
  await handle().write((tx) => removeCentralIdentity(tx, a, 'gitlab', { partnerId: null }, now()));
  await assertExact('an entry removed');

  // Changes by hand, from SQL: a moved entry, a repeated opt-in that changes nothing, a cascade.
  await sql`UPDATE central_identities SET svc_id = 'gitlab' WHERE user_ref = ${a.id} AND svc_id = 'github'`.execute(db());
  await assertExact('an entry moved to another service');
  await sql`UPDATE users SET opted_in = 1 WHERE id = ${a.id}`.execute(db());
  await assertExact('an opt-in of a user already opted in');

  await deleteAccount(t.ctx, await fresh(b));
  await assertExact('an account deleted by the service');
  await sql`DELETE FROM users WHERE id = ${a.id}`.execute(db());
  counts = await assertExact('an opted-in user deleted by hand (the cascade removes the entries)');
  assert.equal(counts.get('github') ?? 0, gh());
  assert.equal(counts.get('gitlab') ?? 0, before.get('gitlab') ?? 0);
});

test('service_details orders by the kept counts', async () => {
  const P = await t.partner();
  // Three opted-in users on one service make it the most popular of a catalogue nobody else uses.
  for (let i = 0; i < 3; i++) await add(await user(true), 'codeberg');
  t.ctx.catalogue.invalidate();
  const top = await P.client.serviceDetails({ order: 'popularity', limit: 1 });
  assert.equal(top[0]?.svcId, 'codeberg');
});

// update_service's round trips to the database: on PostgreSQL a push for a person the partner has
// not linked is one statement (repositories/partner-pushes.ts), and stays one; a linked push still
// flows to the central repository and writes its events in one transaction. On SQLite pushes share
// one commit (db/group-commit.ts) and make no round trips at all.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import pg from 'pg';
import { PUSH_STATEMENTS } from '../../src/repositories/partner-pushes.js';
import { findPartner, type Partner } from '../../src/repositories/partners.js';
import { parseUserIdentifier } from '../../src/domain/identifiers.js';
import { pushIdentity } from '../../src/services/partner-data.js';
import { startTestApp, TEST_DB, type TestApp } from '../helpers/app.js';

const onlyPostgres = { skip: TEST_DB !== 'postgres' && 'round trips are a PostgreSQL matter' };
let t: TestApp;
let partner: Awaited<ReturnType<TestApp['partner']>>;
let row: Partner;

before(async () => {
  t = await startTestApp();
  partner = await t.partner({ name: 'Pusher' });
  row = (await findPartner(t.ctx.db, String(partner.id)))!;
});
after(() => t.close());

/** Pushes one entry straight through the service, counting every query sent to PostgreSQL meanwhile. */
async function countedPush(identifier: string, svcId: string, usrSvcId: string): Promise<number> {
  const svc = (await t.ctx.catalogue.get()).byId.get(svcId)!;
  const original = pg.Client.prototype.query;
  let queries = 0;
  pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
    queries++;
    return (original as (...a: unknown[]) => unknown).apply(this, args);
  } as typeof original;
  try {
    await pushIdentity(t.ctx, row, parseUserIdentifier(identifier), svc, usrSvcId);
  } finally {
    pg.Client.prototype.query = original;
  }
  return queries;
}

async function ownView(identifier: string): Promise<Record<string, string>> {
  const services = await partner.client.returnServices(identifier);
  return Object.fromEntries(services.map((s) => [s.svcId, s.usrSvcId ?? '']));
}

test('a push for an account the partner has not linked is one round trip', onlyPostgres, async () => {
  await t.user({ email: 'una@example.org', userId: 'una' });
  assert.equal(await countedPush('una', 'github', 'una-gh'), 1, 'the first push also creates the subject');
  assert.equal(await countedPush('una', 'github', 'una-gh2'), 1);
  assert.equal(await countedPush('una', 'gitlab', 'una-gl'), 1);
  assert.deepEqual(await ownView('una'), { github: 'una-gh2', gitlab: 'una-gl' });
});

test('a push for someone without an account is one round trip, and found under that name', onlyPostgres, async () => {
  const md5 = 'b'.repeat(32);
  assert.equal(await countedPush(md5, 'github', 'nobody-gh'), 1);
  assert.equal(await countedPush(md5, 'github', 'nobody-gh2'), 1);
  assert.equal(await countedPush('some_handle', 'github', 'handle-gh'), 1);
  assert.deepEqual(await ownView(md5), { github: 'nobody-gh2' });
  assert.deepEqual(await ownView('some_handle'), { github: 'handle-gh' });
  const subjects = await t.ctx.db.kysely.selectFrom('subjects').select('id').where('email_md5', '=', md5).execute();
  assert.equal(subjects.length, 1);
});

test('a linked push still flows to the central repository and announces it, in one transaction', onlyPostgres, async () => {
  const lin = await t.user({ email: 'lin@example.org', userId: 'lin' });
  const watcher = await t.partner({ name: 'Watcher', webhookUrl: 'http://127.0.0.1:9/hook' });
  await partner.client.syncUser('lin', { email: 'lin@example.org', password: lin.password });
  await watcher.client.syncUser('lin', { email: 'lin@example.org', password: lin.password });
  const trips = await countedPush('lin', 'github', 'lin-gh');
  assert.ok(trips <= 12, `${trips} round trips`);
  const central = await t.ctx.db.kysely.selectFrom('central_identities').select('usr_svc_id').where('user_ref', '=', lin.id).where('svc_id', '=', 'github').executeTakeFirst();
  assert.equal(central?.usr_svc_id, 'lin-gh');
  const events = await t.ctx.db.kysely.selectFrom('outbox').select('event_type').where('partner_id', '=', watcher.id).where('event_type', '=', 'identity.updated').execute();
  assert.equal(events.length, 1);
});

test('removals and pushes under an e-mail address keep the transactional path', onlyPostgres, async () => {
  assert.ok((await countedPush('una', 'gitlab', '')) > 1);
  assert.deepEqual(await ownView('una'), { github: 'una-gh2' });
  assert.ok((await countedPush('Una@Example.org', 'gitlab', 'una-gl2')) > 1);
  assert.deepEqual(await ownView('una'), { github: 'una-gh2', gitlab: 'una-gl2' });
});

/** Every node of a plan (EXPLAIN's JSON), depth first. */
function planNodes(node: PlanNode): PlanNode[] {
  return [node, ...(node.Plans ?? []).flatMap(planNodes)];
}
type PlanNode = { 'Node Type': string; 'Relation Name'?: string; 'Index Cond'?: string; Filter?: string; Plans?: PlanNode[] };

test('the one-statement push finds the links by the person, not by reading all the partner\'s links', onlyPostgres, async () => {
  // An OR over a subquery can use neither index: such a plan reads every link of the partner (or,
  // without sequential scans priced out, of every partner) on each push: 3 ms at 100,000 users.
  const client = await t.ctx.db.pgPool!.connect();
  try {
    await client.query('SET enable_seqscan = off');
    for (const [kind, statement] of Object.entries(PUSH_STATEMENTS)) {
      const { rows } = await client.query<{ 'QUERY PLAN': [{ Plan: PlanNode }] }>(`EXPLAIN (FORMAT JSON) ${statement.text}`, ['x'.repeat(32), row.id, 'github', 'gh', 1]);
      const linkScans = planNodes(rows[0]!['QUERY PLAN'][0].Plan).filter((n) => n['Relation Name'] === 'links');
      assert.equal(linkScans.length, 2, `${kind}: one probe by subject, one by account`);
      for (const scan of linkScans) {
        assert.match(scan['Index Cond'] ?? '', /subject_id|user_ref/, `${kind}: ${JSON.stringify(scan)}`);
        assert.equal(scan.Filter, undefined, `${kind}: ${JSON.stringify(scan)}`);
      }
    }
  } finally {
    await client.query('RESET enable_seqscan');
    client.release();
  }
});

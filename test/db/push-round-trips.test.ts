// update_service's round trips to the database: on PostgreSQL every push with an identifier is one
// statement (repositories/partner-pushes.ts), and stays one, for a person the partner linked too:
// then that statement also flows the push to the central repository and writes its events. On
// SQLite pushes share one commit (db/group-commit.ts) and make no round trips at all. A partner's
// own view reads its pushed entries and its link at once.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import pg from 'pg';
import { buildProfileUrl } from '../../src/catalogue/profile-url.js';
import { PUSH_STATEMENTS } from '../../src/repositories/partner-pushes.js';
import { findPartner, type Partner } from '../../src/repositories/partners.js';
import { parseUserIdentifier } from '../../src/domain/identifiers.js';
import { privateView, pushIdentity } from '../../src/services/partner-data.js';
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

test('a linked push is one round trip too, and still flows to the central repository and announces it', onlyPostgres, async () => {
  const lin = await t.user({ email: 'lin@example.org', userId: 'lin' });
  const watcher = await t.partner({ name: 'Watcher', webhookUrl: 'http://127.0.0.1:9/hook' });
  const trusted = await t.partner({ name: 'Trusted watcher', webhookUrl: 'http://127.0.0.1:9/hook', trusted: true });
  for (const p of [partner, watcher, trusted]) await p.client.syncUser('lin', { email: 'lin@example.org', password: lin.password });
  const central = () =>
    t.ctx.db.kysely
      .selectFrom('central_identities')
      .select(['usr_svc_id', 'verified', 'source_partner_id'])
      .where('user_ref', '=', lin.id)
      .where('svc_id', '=', 'github')
      .executeTakeFirst();
  const events = (partnerId: number) =>
    t.ctx.db.kysely
      .selectFrom('outbox')
      .select(['payload', 'event_id'])
      .where('partner_id', '=', partnerId)
      .where('event_type', '=', 'identity.updated')
      .orderBy('id')
      .execute();

  assert.equal(await countedPush('lin', 'github', 'lin-gh'), 1);
  assert.deepEqual(await central(), { usr_svc_id: 'lin-gh', verified: 0, source_partner_id: row.id });
  const [toWatcher] = await events(watcher.id);
  const [toTrusted] = await events(trusted.id);
  assert.equal((await events(partner.id)).length, 0, 'the pusher is not told of its own push');
  // The bytes writeEvents writes (JSON.stringify's form and key order); usrSvcId only for the trusted partner.
  const sent = JSON.parse(toWatcher!.payload) as { timestamp: string };
  const url = buildProfileUrl((await t.ctx.catalogue.get()).byId.get('github')!, 'lin-gh');
  assert.equal(
    toWatcher!.payload,
    JSON.stringify({
      type: 'identity.updated',
      timestamp: sent.timestamp,
      data: { user_identifier: 'lin', userId: 'lin', svcId: 'github', url, verified: false },
    }),
  );
  assert.equal(
    toTrusted!.payload,
    JSON.stringify({
      type: 'identity.updated',
      timestamp: sent.timestamp,
      data: { user_identifier: 'lin', userId: 'lin', svcId: 'github', usrSvcId: 'lin-gh', url, verified: false },
    }),
  );
  assert.match(toWatcher!.event_id, /^msg_[0-9a-f]{32}$/);

  // The same value again changes nothing and tells nobody.
  assert.equal(await countedPush('lin', 'github', 'lin-gh'), 1);
  assert.equal((await events(watcher.id)).length, 1);

  // An entry the account proved is kept: the partner's own repository takes the push, the central one does not.
  await t.ctx.db.kysely.updateTable('central_identities').set({ verified: 1 }).where('user_ref', '=', lin.id).where('svc_id', '=', 'github').execute();
  assert.equal(await countedPush('lin', 'github', 'lin-other'), 1);
  assert.equal((await central())?.usr_svc_id, 'lin-gh');
  assert.equal((await events(watcher.id)).length, 1);
  assert.deepEqual(await ownView('lin'), { github: 'lin-gh' }, 'the verified central entry wins the merge');

  // Hidden (opted out): the central repository still follows, but nobody is told.
  await t.ctx.db.kysely.updateTable('users').set({ opted_in: 0 }).where('id', '=', lin.id).execute();
  assert.equal(await countedPush('lin', 'gitlab', 'lin-gl'), 1);
  assert.equal((await events(watcher.id)).length, 1);
  await t.ctx.db.kysely.updateTable('users').set({ opted_in: 1 }).where('id', '=', lin.id).execute();
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
type PlanNode = { 'Node Type': string; 'Relation Name'?: string; 'Index Cond'?: string; 'Recheck Cond'?: string; Filter?: string; Plans?: PlanNode[] };

test("the one-statement push finds the links by the person, not by reading all the partner's links", onlyPostgres, async () => {
  // A link found through a condition no index serves (an OR over a subquery was one) reads every
  // link of the partner (or, without sequential scans priced out, of every partner) on each push:
  // 3 ms at 100,000 users. One probe finds this partner's link by subject, one the account's links.
  const client = await t.ctx.db.pgPool!.connect();
  try {
    await client.query('SET enable_seqscan = off');
    for (const [kind, statement] of Object.entries(PUSH_STATEMENTS)) {
      const { rows } = await client.query<{ 'QUERY PLAN': [{ Plan: PlanNode }] }>(`EXPLAIN (FORMAT JSON) ${statement.text}`, [
        'x'.repeat(32),
        row.id,
        'github',
        'gh',
        1,
        'gh',
        'https://github.com/gh',
        new Date(1).toISOString(),
      ]);
      const linkScans = planNodes(rows[0]!['QUERY PLAN'][0].Plan).filter((n) => n['Relation Name'] === 'links');
      assert.equal(linkScans.length, 2, `${kind}: one probe by subject, one by account`);
      for (const scan of linkScans) {
        // Found through an index on the person (directly, or as a bitmap scan's recheck); a filter,
        // if any, only narrows what the index found (never the person).
        assert.match(scan['Index Cond'] ?? scan['Recheck Cond'] ?? '', /subject_id|user_ref/, `${kind}: ${JSON.stringify(scan)}`);
        assert.doesNotMatch(scan.Filter ?? '', /subject_id|user_ref/, `${kind}: ${JSON.stringify(scan)}`);
      }
    }
  } finally {
    await client.query('RESET enable_seqscan');
    client.release();
  }
});

test("a partner's own view reads its entries and its link side by side: two waits in a row, not three", onlyPostgres, async () => {
  await t.user({ email: 'ode@example.org', userId: 'ode' });
  await partner.client.updateService('ode', 'github', 'ode-gh');
  // The view's statements are prepared ones, sent with the pool's query().
  const pool = t.ctx.db.pgPool!;
  const original = pool.query;
  let inFlight = 0;
  let most = 0;
  (pool as { query: unknown }).query = async (...args: unknown[]) => {
    most = Math.max(most, ++inFlight);
    try {
      return await (original as (...a: unknown[]) => Promise<unknown>).apply(pool, args);
    } finally {
      inFlight--;
    }
  };
  try {
    const entries = await privateView(t.ctx, { partner: row, by: 'legacy_open_reads' }, parseUserIdentifier('ode'), 'without-evidence');
    assert.deepEqual(
      entries.map((e) => e.usrSvcId),
      ['ode-gh'],
    );
  } finally {
    (pool as { query: unknown }).query = original;
  }
  assert.ok(most >= 2, `the pushed entries and the link were in flight together (at most ${most} at once)`);
});

// On PostgreSQL a push with an identifier is one statement (repositories/partner-pushes.ts), which
// restates in SQL the rules that services/ applies step by step (pushInTransaction: the person
// lookup, the kept-verified and same-value rules, who is told, and the events' bytes). Two worlds
// built the same way take the same pushes, one through each path, and must hold the same rows after
// every step: the partner's entries, the central entries and the outbox, byte for byte.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { parseUserIdentifier } from '../../src/domain/identifiers.js';
import { findPartner, type Partner } from '../../src/repositories/partners.js';
import { pushIdentity, pushInTransaction } from '../../src/services/partner-data.js';
import { startTestApp, TEST_DB, type TestApp } from '../helpers/app.js';

const onlyPostgres = { skip: TEST_DB !== 'postgres' && 'the one-statement push is PostgreSQL only' };

interface World {
  t: TestApp;
  pusher: Partner;
  users: Record<string, number>;
}

let fast: World;
let stepwise: World;

/** The same partners, accounts and links, created in the same order, so that ids agree too. */
async function world(): Promise<World> {
  const t = await startTestApp();
  const pusher = await t.partner({ name: 'Pusher' });
  const watcher = await t.partner({ name: 'Watcher', webhookUrl: 'http://127.0.0.1:9/hook' });
  const trusted = await t.partner({ name: 'Trusted watcher', webhookUrl: 'http://127.0.0.1:9/hook', trusted: true });
  const users: Record<string, number> = {};
  for (const name of ['lin', 'hid', 'una']) {
    const u = await t.user({ email: `${name}@example.org`, userId: name });
    users[name] = u.id;
    // una is linked to nobody: her pushes stay in the pusher's repository.
    if (name !== 'una') for (const p of [pusher, watcher, trusted]) await p.client.syncUser(name, { email: `${name}@example.org`, password: u.password });
  }
  return { t, pusher: (await findPartner(t.ctx.db, String(pusher.id)))!, users };
}

before(async () => {
  if (TEST_DB !== 'postgres') return;
  fast = await world();
  stepwise = await world();
});
after(async () => {
  await fast?.t.close();
  await stepwise?.t.close();
});

async function push(identifier: string, svcId: string, usrSvcId: string): Promise<void> {
  for (const [w, path] of [
    [fast, 'one statement'],
    [stepwise, 'step by step'],
  ] as const) {
    const svc = (await w.t.ctx.catalogue.get()).byId.get(svcId)!;
    const id = parseUserIdentifier(identifier);
    if (path === 'one statement') await pushIdentity(w.t.ctx, w.pusher, id, svc, usrSvcId);
    else await pushInTransaction(w.t.ctx, w.pusher, id, svc, usrSvcId, w.t.clock.now());
    w.t.clock.advance(1000);
  }
}

/** The same change to both worlds' central entries, as a re-check or an operator would make it. */
async function setCentral(user: string, svcId: string, values: Record<string, unknown>): Promise<void> {
  for (const w of [fast, stepwise]) {
    await w.t.ctx.db.kysely.updateTable('central_identities').set(values).where('user_ref', '=', w.users[user]!).where('svc_id', '=', svcId).execute();
  }
}

async function rows(w: World): Promise<Record<string, unknown[]>> {
  const db = w.t.ctx.db.kysely;
  return {
    partner_identities: await db.selectFrom('partner_identities').selectAll().orderBy('id').execute(),
    central_identities: await db.selectFrom('central_identities').selectAll().orderBy('id').execute(),
    // Event ids are random by design; everything else a partner receives must be the same.
    outbox: await db
      .selectFrom('outbox')
      .select(['id', 'partner_id', 'user_ref', 'event_type', 'payload', 'status', 'attempts', 'next_attempt_at', 'created_at'])
      .orderBy('id')
      .execute(),
    subjects: await db.selectFrom('subjects').selectAll().orderBy('id').execute(),
  };
}

/**
 * A row without its own id: an INSERT … ON CONFLICT that finds the row takes a sequence number all
 * the same, so the one statement leaves gaps the step-by-step path does not. Ids name nothing outside.
 */
const withoutId = (rows: unknown[]) => rows.map((row) => ({ ...(row as Record<string, unknown>), id: undefined }));

async function agree(step: string): Promise<void> {
  const [a, b] = [await rows(fast), await rows(stepwise)];
  for (const table of Object.keys(a)) [a[table], b[table]] = [withoutId(a[table]!), withoutId(b[table]!)];
  for (const table of Object.keys(a)) {
    assert.equal(a[table]!.length, b[table]!.length, `${step}: ${table}, how many rows`);
    for (const [i, row] of a[table]!.entries()) assert.deepEqual(row, b[table]![i], `${step}: ${table}, row ${i + 1} (one statement, then step by step)`);
  }
}

test('the one-statement push and the step-by-step push write the same rows, step after step', onlyPostgres, async () => {
  await agree('the two worlds start the same');
  const outbox = () => fast.t.ctx.db.kysely.selectFrom('outbox').select('id').execute();
  const eventsAtStart = (await outbox()).length;

  await push('lin', 'github', 'lin-gh');
  await agree('a new entry for a linked account: central entry added, watchers told');
  assert.ok((await outbox()).length > eventsAtStart, 'the step wrote events, so the comparison covers their bytes');
  await push('lin', 'github', 'lin-gh');
  await agree('the same value again: nothing changes, nobody is told');
  await push('lin', 'github', 'lin-gh2');
  await agree('a new value for an unverified entry replaces it');

  await setCentral('lin', 'github', {
    verified: 1,
    verified_by: 'rel-me',
    verified_at: 5,
    last_checked_at: 6,
    evidence_url: 'https://github.com/lin-gh2',
    next_check_at: 7,
  });
  await push('lin', 'github', 'lin-other');
  await agree('an entry the account proved is kept; only the partner repository takes the push');
  await push('lin', 'github', 'lin-gh2');
  await agree('pushing the proved value again');

  await setCentral('lin', 'github', {
    verified: 0,
    verified_by: null,
    verified_at: null,
    evidence_url: null,
    negative_since: 8,
    last_checked_at: 9,
    next_check_at: 10,
    proof_url: 'https://gist.github.com/lin-gh2/aa5a315d61ae9438b18d',
  });
  await push('lin', 'github', 'lin-renamed');
  await agree('a new value for an entry whose mark was lost clears what the checks knew of the old one, its proof address too');
  const proofUrls = await fast.t.ctx.db.kysely.selectFrom('central_identities').select('proof_url').where('svc_id', '=', 'github').execute();
  assert.ok(
    proofUrls.every((r) => r.proof_url === null),
    'the old proof address is gone',
  );

  await push('lin', 'gitlab', 'lin-gl');
  await setCentral('lin', 'gitlab', { verified: 1, verified_by: 'operator', verified_at: 11 });
  await push('lin', 'gitlab', 'lin-gl2');
  await agree("an operator's mark is kept");

  const hidden = async (optedIn: 0 | 1) => {
    for (const w of [fast, stepwise]) await w.t.ctx.db.kysely.updateTable('users').set({ opted_in: optedIn }).where('id', '=', w.users.hid!).execute();
  };
  await hidden(0);
  await push('hid', 'github', 'hid-gh');
  await push('hid', 'github', 'hid-gh2');
  await agree('a hidden account: the central repository follows, nobody is told');
  await hidden(1);
  await push('hid', 'gitlab', 'hid-gl');
  await agree('visible again: told again');

  await push('una', 'github', 'una-gh');
  await push('una', 'github', 'una-gh2');
  await agree('an account the partner has not linked: its own repository only');
  await push('c'.repeat(32), 'github', 'nobody-gh');
  await push('d'.repeat(64), 'github', 'nobody-gh');
  await push('some_handle', 'reddit', 'handle-r');
  await agree('people without an account, by md5, sha256 and user id: a subject each');
});

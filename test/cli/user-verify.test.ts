// Issue 14.13: `idsvc user verify <user> <svcId> [--clear]` sets and clears the operator's verified
// mark (SPEC §3 rule 6). Run as a real CLI process against the database a running server uses;
// the result is read through the API, and linked partners hear of it by webhook.
import { after, before, beforeEach, test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { verifyWebhook, type IdsvcClient } from '@idsvc/client';
import { deliverDueWebhooks } from '../../src/jobs/webhooks.js';
import { findCentralIdentity } from '../../src/repositories/central-identities.js';
import { findPartnerByKey } from '../../src/repositories/partners.js';
import { findUserByUserId } from '../../src/repositories/users.js';
import { verifyIdentity } from '../../src/verification/verify.js';
import type { TestApp } from '../helpers/app.js';
import { addLocalService, pageWithBacklink, pageWithoutBacklink, startProfilePages, startSiteApp, type ProfilePages } from '../site/helpers.js';
import { runCli } from '../helpers/cli.js';

let t: TestApp;
let remote: ProfilePages;
let receiver: http.Server;
let received: { headers: http.IncomingHttpHeaders; body: string }[] = [];
let A: { id: number; apiKey: string; client: IdsvcClient; publicClient: IdsvcClient };
let B: { id: number; client: IdsvcClient };
let secretA: string;

before(async () => {
  t = await startSiteApp();
  remote = await startProfilePages();
  await addLocalService(t, 'pages', 'Pages', remote.origin);
  await addLocalService(t, 'morepages', 'More pages', remote.origin);
  receiver = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      received.push({ headers: req.headers, body });
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
  A = await t.partner({ name: 'A', webhookUrl: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook` });
  B = await t.partner({ name: 'B' });
  secretA = (await findPartnerByKey(t.ctx.db, A.apiKey))!.webhook_secret!;
  // alice is linked to both partners; B's pushes flow into her central repository.
  const alice = await t.user({ email: 'alice@example.org', userId: 'alice' });
  await A.client.syncUser('alice', { email: 'alice@example.org', password: alice.password });
  await B.client.syncUser('alice', { email: 'alice@example.org', password: alice.password });
  await B.client.updateService('alice', 'pages', 'alice-page');
  await B.client.updateService('alice', 'morepages', 'alice-more');
});
after(async () => {
  receiver.close();
  await remote.close();
  await t.close();
});
beforeEach(async () => {
  await eventsForA();
});

const cli = (args: string[]) => runCli(t, args);

/** What alice's entry on a service looks like to anyone (the public view). */
async function publicEntry(svcId: string) {
  return (await A.publicClient.returnServices('alice', { profileType: 'public' })).find((e) => e.svcId === svcId);
}

/** The events partner A received since the last call, checked against its webhook secret. */
async function eventsForA() {
  // The CLI stamps its events with the real time; the server's test clock catches up to deliver them.
  if (t.clock.now() < Date.now()) t.clock.advance(Date.now() - t.clock.now());
  await deliverDueWebhooks(t.ctx);
  const events = await Promise.all(received.map((r) => verifyWebhook(secretA, r.headers as Record<string, string>, r.body, { now: t.clock.now() })));
  received = [];
  return events;
}

test('user verify sets the mark, in any case of svcId; partners hear of it; a failed check leaves it', async () => {
  assert.equal((await publicEntry('pages'))?.verified, false);
  const r = await cli(['user', 'verify', 'alice', 'Pages']);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stdout, 'alice pages (alice-page): verified by the operator\n');
  assert.equal((await publicEntry('pages'))?.verified, true);
  const events = await eventsForA();
  // The CLI stamps the mark with the real time.
  const { verifiedAt, ...verifiedData } = events[1]?.data ?? {};
  assert.match(String(verifiedAt), /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  assert.deepEqual(
    [...events.slice(0, 1).map((e) => [e.type, e.data]), [events[1]?.type, verifiedData]],
    [
      ['identity.updated', { user_identifier: 'alice', userId: 'alice', svcId: 'pages', url: `${remote.origin}/alice-page`, verified: true }],
      [
        'identity.verified',
        { user_identifier: 'alice', userId: 'alice', svcId: 'pages', url: `${remote.origin}/alice-page`, verified: true, verifiedBy: 'operator' },
      ],
    ],
  );
  // Every linked partner is told, the one whose push made the entry too: the operator made this change.
  const toB = await t.ctx.db.kysely
    .selectFrom('outbox')
    .select(['event_type', 'payload'])
    .where('partner_id', '=', B.id)
    .where('event_type', '=', 'identity.updated')
    .orderBy('id', 'desc')
    .executeTakeFirstOrThrow();
  assert.equal((JSON.parse(toB.payload) as { data: { verified: boolean } }).data.verified, true);

  // The operator's judgement is not undone by a page without a backlink.
  remote.pages.set('alice-page', pageWithoutBacklink);
  const user = (await findUserByUserId(t.ctx.db, 'alice'))!;
  const row = (await findCentralIdentity(t.ctx.db, user.id, 'pages'))!;
  assert.equal((await verifyIdentity(t.ctx, row.id))?.verified, true);
  assert.equal((await publicEntry('pages'))?.verified, true);

  // Again: nothing changes and nobody is told.
  const again = await cli(['--json', 'user', 'verify', 'alice', 'pages']);
  assert.equal(again.code, 0, again.stderr);
  assert.deepEqual(JSON.parse(again.stdout), {
    userId: 'alice',
    svcId: 'pages',
    usrSvcId: 'alice-page',
    verified: true,
    verified_by: 'operator',
    changed: false,
  });
  assert.deepEqual(await eventsForA(), []);
});

test('user verify --clear removes the mark; partners hear of it; clearing again changes nothing', async () => {
  const r = await cli(['--json', 'user', 'verify', 'alice@example.org', 'PAGES', '--clear']);
  assert.equal(r.code, 0, r.stderr);
  assert.deepEqual(JSON.parse(r.stdout), { userId: 'alice', svcId: 'pages', usrSvcId: 'alice-page', verified: false, verified_by: null, changed: true });
  assert.ok(!r.stdout.includes('alice@example.org'), 'the e-mail address is not printed');
  assert.equal((await publicEntry('pages'))?.verified, false);
  const events = await eventsForA();
  assert.deepEqual(
    events.map((e) => [e.type, e.data.svcId, e.data.verified]),
    [
      ['identity.updated', 'pages', false],
      ['identity.unverified', 'pages', false],
    ],
  );
  assert.deepEqual(events[1]?.data.reason, { method: 'operator', detail: 'an operator removed the mark' });

  const again = await cli(['user', 'verify', 'alice', 'pages', '--clear']);
  assert.equal(again.code, 0, again.stderr);
  assert.equal(again.stdout, 'alice pages (alice-page): not verified (unchanged)\n');
  assert.deepEqual(await eventsForA(), []);
});

test('a rel="me" proof: the operator may take it over, but --clear does not undo a proof', async () => {
  remote.pages.set('alice-more', pageWithBacklink(`${t.config.baseUrl}/u/alice`));
  const user = (await findUserByUserId(t.ctx.db, 'alice'))!;
  const row = (await findCentralIdentity(t.ctx.db, user.id, 'morepages'))!;
  assert.equal((await verifyIdentity(t.ctx, row.id))?.verified, true);
  await eventsForA();

  const refused = await cli(['user', 'verify', 'alice', 'morepages', '--clear']);
  assert.equal(refused.code, 1);
  assert.match(refused.stderr, /^idsvc: alice's morepages entry is verified by its rel="me" link, not by an operator/);
  assert.equal((await publicEntry('morepages'))?.verified, true);

  // Taking it over keeps it verified (so partners hear nothing), now as the operator's mark.
  const r = await cli(['user', 'verify', 'alice', 'morepages']);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stdout, 'alice morepages (alice-more): verified by the operator\n');
  assert.deepEqual(await eventsForA(), []);
  assert.equal((await findCentralIdentity(t.ctx.db, user.id, 'morepages'))?.verified_by, 'operator');
});

test('an unknown user, service or entry is a clear error', async () => {
  const cases: [string[], RegExp][] = [
    [['user', 'verify', 'nobody', 'pages'], /^idsvc: no user nobody\n$/],
    [['user', 'verify', 'nobody@example.org', 'pages'], /^idsvc: no user with that e-mail address\n$/],
    [['user', 'verify', 'alice', 'nosuchservice'], /^idsvc: no service nosuchservice in the catalogue/],
    [['user', 'verify', 'alice', 'GitHub'], /^idsvc: alice has no github entry in the central repository\n$/],
  ];
  for (const [args, message] of cases) {
    const r = await cli(args);
    assert.equal(r.code, 1, args.join(' '));
    assert.match(r.stderr, message);
    assert.equal(r.stdout, '');
  }
  const json = await cli(['--json', 'user', 'verify', 'alice', 'github']);
  assert.equal(json.code, 1);
  assert.deepEqual(JSON.parse(json.stderr), { error: 'alice has no github entry in the central repository' });
  assert.deepEqual(await eventsForA(), []);
});

// The operator console: partners (search, suspend and resume, trusted, budget, members), people
// (found by userId or address, pro, the verified mark, what they see, no secrets), the catalogue
// (disable, edit), the queues (retry failed mail and deliveries), and the audit log of all of it,
// shown and exported as CSV and JSON.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { IdsvcError } from '@idsvc/client';
import { markMailFailed } from '../../src/repositories/mail-queue.js';
import { auditCsv } from '../../src/site/routes/console/audit.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { approvedPartner, operator, person, submitOn, type Person } from './helpers.js';

let t: TestApp;
let op: Person;
before(async () => {
  t = await startTestApp();
  op = await operator(t, 'otto_op');
});
after(() => t.close());

test('partners: search, suspend and resume (the API follows), trust, budget and members, each audited', async () => {
  const p = await t.partner({ name: 'Searchable Shop' });
  const found = await op.client.get('/console/partners?q=searchable');
  assert.match(found.body, new RegExp(`data-partner="${p.id}"`));
  assert.doesNotMatch((await op.client.get('/console/partners?q=nomatch%25')).body, /data-partner=/);
  const page = `/console/partners/${p.id}`;
  assert.equal((await submitOn(op.client, page, page, { action: 'suspend' })).res.status, 303);
  await assert.rejects(p.client.returnServices('x@example.org'), (e: unknown) => e instanceof IdsvcError && e.code === 'forbidden');
  await submitOn(op.client, page, page, { action: 'resume' });
  await submitOn(op.client, page, page, { action: 'trust' });
  assert.match((await op.client.get(page)).body, /data-trusted="yes"/);
  const badBudget = await submitOn(op.client, page, page, { action: 'budget', rate_limit: 'lots' });
  assert.equal(badBudget.res.status, 400);
  await submitOn(op.client, page, page, { action: 'budget', rate_limit: '120' });
  assert.match((await op.client.get(page)).body, /120 requests a minute/);

  const max = await person(t, 'max_member');
  await submitOn(op.client, page, `${page}/members`, { action: 'add', user_id: 'max_member' });
  assert.equal((await max.client.get(`/partners/${p.id}`)).res.status, 200);
  await submitOn(op.client, page, `${page}/members`, { action: 'remove', user_id: 'max_member' });
  assert.equal((await max.client.get(`/partners/${p.id}`)).res.status, 404);

  const audit = (await op.client.get('/console/audit')).body;
  for (const action of ['partner.suspend', 'partner.resume', 'partner.trusted', 'partner.budget', 'partner.member_add', 'partner.member_remove'])
    assert.match(audit, new RegExp(`data-action="${action.replace('.', '\\.')}"`), action);
  assert.match(audit, /&quot;rateLimitPerMinute&quot;:120/);
});

test('people: found by userId or address, set pro, mark verified, and nothing secret shown', async () => {
  const pia = await person(t, 'pia_person');
  await submitOn(pia.client, '/account', '/account/identities', { svc_id: 'github', usr_svc_id: 'pia' });
  const byMail = await op.client.get(`/console/people?q=${encodeURIComponent(pia.email)}`);
  assert.match(byMail.body, /href="\/console\/people\/pia_person"/);
  assert.match((await op.client.get('/console/people?q=pia_person')).body, /href="\/console\/people\/pia_person"/);
  assert.match((await op.client.get('/console/people?q=pia')).body, /No account/, 'exact matches only');

  const page = '/console/people/pia_person';
  await submitOn(op.client, page, page, { action: 'pro_on' });
  assert.match((await op.client.get(page)).body, /data-pro="yes"/);
  await submitOn(op.client, page, page, { action: 'mark', svc_id: 'github' });
  const shown = (await op.client.get(page)).body;
  assert.match(shown, /yes \(operator\)/);
  assert.doesNotMatch(shown, /\$argon2|password_hash|csrf_token/);
  const own = (await pia.client.get('/account')).body;
  assert.match(own, /github/i);
  const noEntry = await submitOn(op.client, page, page, { action: 'mark', svc_id: 'gitlab' });
  assert.equal(noEntry.res.status, 400);
  const audit = (await op.client.get('/console/audit')).body;
  assert.match(audit, /data-action="user\.pro"/);
  assert.match(audit, /data-action="identity\.mark"/);
});

test('catalogue: disable hides a service from answers, enable brings it back, edit checks the template', async () => {
  const p = await t.partner();
  const page = '/console/catalogue?q=github';
  assert.match((await op.client.get(page)).body, /data-service="github"/);
  await submitOn(op.client, page, '/console/catalogue/github', { action: 'disable' });
  await assert.rejects(p.publicClient.serviceDetails({ svcId: 'github' }), (e: unknown) => e instanceof IdsvcError && e.code === 'not_found');
  await submitOn(op.client, page, '/console/catalogue/github', { action: 'enable' });
  assert.ok(await p.publicClient.serviceDetails({ svcId: 'github' }));
  const edit = await submitOn(op.client, page, '/console/catalogue/github', {
    action: 'edit',
    svc_name: 'GitHub (edited)',
    svc_url: 'https://github.com/',
    svc_left_url: 'https://github.com/',
    svc_right_url: '',
  });
  assert.equal(edit.res.status, 303);
  assert.equal((await p.publicClient.serviceDetails({ svcId: 'github' }))[0]?.svcName, 'GitHub (edited)');
  const bad = await submitOn(op.client, page, '/console/catalogue/github', {
    action: 'edit',
    svc_name: '',
    svc_url: '',
    svc_left_url: 'notaurl',
    svc_right_url: '',
  });
  assert.equal(bad.res.status, 400);
  assert.match((await op.client.get('/console/audit')).body, /data-action="catalogue\.edit"/);
});

test('queues: a failed mail and a failed delivery are listed without addresses and retried', async () => {
  const q = await person(t, 'quentin_queue');
  const id = await approvedPartner(q, op, 'Queue App');
  const mailRow = await t.ctx.db.kysely.selectFrom('mail_queue').select(['id']).orderBy('id', 'desc').executeTakeFirstOrThrow();
  await t.ctx.db.write((w) => markMailFailed(w, mailRow.id, 5, 'SMTP 550 mailbox unavailable'));
  const page = await op.client.get('/console/queues');
  assert.match(page.body, new RegExp(`data-mail="${mailRow.id}"`));
  assert.doesNotMatch(page.body, /quentin_queue@example\.org/, 'no address in the queue list');
  const r = await submitOn(op.client, '/console/queues', '/console/queues/retry', { kind: 'mail', id: String(mailRow.id) });
  assert.equal(r.res.status, 303);
  assert.doesNotMatch((await op.client.get('/console/queues')).body, new RegExp(`data-mail="${mailRow.id}"`));
  const again = await submitOn(op.client, '/console/queues', '/console/queues/retry', { kind: 'mail', id: String(mailRow.id) });
  assert.equal(again.res.status, 400);
  void id;
});

test('the audit log exports as CSV (formulas defused) and JSON, never cached', async () => {
  const p = await t.partner();
  await submitOn(op.client, `/console/partners/${p.id}`, `/console/partners/${p.id}`, { action: 'suspend' });
  const csv = await op.client.get('/console/audit/export?format=csv');
  assert.equal(csv.res.status, 200);
  assert.match(csv.res.headers.get('content-type') ?? '', /text\/csv/);
  assert.equal(csv.res.headers.get('cache-control'), 'no-store');
  assert.match(csv.body, /^id,at,actor,action,target,before,after\r\n/);
  assert.match(csv.body, /"otto_op","partner\.suspend","partner \d+"/);
  const json = await op.client.get('/console/audit/export?format=json');
  const parsed = JSON.parse(json.body) as { entries: { action: string; actorUserId: string; before: unknown; after: unknown }[] };
  const suspend = parsed.entries.find((e) => e.action === 'partner.suspend');
  assert.deepEqual(suspend?.after, { suspended: true, trusted: false, rateLimitPerMinute: null });
  assert.equal(suspend?.actorUserId, 'otto_op');
  // A cell a spreadsheet would run as a formula is written as text.
  const crafted = auditCsv([{ id: 1, at: 0, actorUserId: 'o', action: '=HYPERLINK("x")', target: '+1', before: null, after: null }]);
  assert.match(crafted, /"'=HYPERLINK\(""x""\)","'\+1"/);
});

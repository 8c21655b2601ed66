// Applying for partner keys: roles made with the CLI, a proven address applies, the operators are
// mailed, an operator approves (the partner exists, the applicant is its first member and issues
// the api_token once) or declines with a reason, and approval on application as a setting.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { IdsvcClient } from '@idsvc/client';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { runCli } from '../helpers/cli.js';
import { lastMailTo, linkIn, mailsTo } from '../helpers/mailbox.js';
import { assertLogsClean } from '../site/helpers.js';
import { APPLICATION, applyFor, csrfOf, operator, person, submitOn } from './helpers.js';

let t: TestApp;
before(async () => {
  t = await startTestApp();
});
after(() => t.close());

test('idsvc user set-role makes and unmakes an operator, and says so in user show', async () => {
  await t.user({ email: 'rolf@example.org', userId: 'rolf' });
  const made = await runCli(t, ['--json', 'user', 'set-role', 'rolf@example.org', 'operator']);
  assert.equal(made.code, 0, made.stderr);
  assert.deepEqual(JSON.parse(made.stdout), { userId: 'rolf', role: 'operator' });
  assert.equal(JSON.parse((await runCli(t, ['--json', 'user', 'show', 'rolf'])).stdout).role, 'operator');
  assert.equal((await runCli(t, ['user', 'set-role', 'rolf', 'none'])).code, 0);
  assert.equal(JSON.parse((await runCli(t, ['--json', 'user', 'show', 'rolf'])).stdout).role, 'none');
  const bad = await runCli(t, ['user', 'set-role', 'rolf', 'admin']);
  assert.equal(bad.code, 1);
  assert.match(bad.stderr, /operator or none/);
});

test('an application is mailed to the operators, approved in the console, and the applicant runs the partner with keys shown once', async () => {
  const op = await operator(t, 'olivia_op');
  const ann = await person(t, 'ann_applies');
  const id = await applyFor(ann);
  const list = await ann.client.get('/partners');
  assert.match(list.body, /Waiting for review/);

  const opMail = await lastMailTo(t, op.email);
  assert.match(opMail.subject ?? '', /New application for partner keys: Example Forum/);
  assert.equal(linkIn(opMail, '/console/applications/'), `/console/applications/${id}`);

  const review = await op.client.get(`/console/applications/${id}`);
  assert.equal(review.res.status, 200);
  assert.match(review.body, /Show the identities members chose/);
  assert.match(review.body, /https:\/\/www\.forum\.example\.com(?!\/path)/, 'origins are kept as origins');
  const approved = await submitOn(op.client, `/console/applications/${id}`, `/console/applications/${id}/approve`);
  assert.equal(approved.res.status, 303);
  const again = await submitOn(op.client, `/console/applications/${id}`, `/console/applications/${id}/approve`);
  assert.equal(again.res.status, 409, 'a decided application is not decided twice');

  const mail = await lastMailTo(t, ann.email);
  assert.match(mail.subject ?? '', /is approved/);
  const dashboard = linkIn(mail, '/partners/');
  const keys = await ann.client.get(dashboard);
  assert.equal(keys.res.status, 200);
  const apiKey = /data-api-key[^>]*>([a-z0-9]{32})</.exec(keys.body)?.[1];
  assert.ok(apiKey, 'the api_key is on the dashboard');
  assert.match(keys.body, /Not issued yet/);
  assert.doesNotMatch(keys.body, /[a-z0-9]{40}/, 'no token on the page before it is issued');

  const partnerId = Number(dashboard.split('/')[2]);
  const issued = await submitOn(ann.client, dashboard, `/partners/${partnerId}/token`);
  assert.equal(issued.res.status, 200);
  const token = /data-secret="api_token">([a-z0-9]{40})</.exec(issued.body)?.[1];
  assert.ok(token, 'the token is shown once');
  const client = new IdsvcClient({ baseUrl: t.baseUrl, apiKey, apiToken: token });
  assert.deepEqual(await client.updateService('someone@example.org', 'github', 'someone'), { svcId: 'github', usrSvcId: 'someone' });
  const later = await ann.client.get(dashboard);
  assert.equal(later.body.includes(token), false, 'never shown again');
  assert.match(later.body, /Rotate the api_token/);

  const show = JSON.parse((await runCli(t, ['--json', 'partner', 'show', apiKey])).stdout);
  assert.equal(show.name, APPLICATION.name);
  assert.deepEqual(show.origins, ['https://forum.example.com', 'https://www.forum.example.com']);

  const exported = JSON.parse((await submitOn(ann.client, '/account/data', '/account/export')).body);
  assert.equal(exported.partnerApplications[0].status, 'approved');
  assert.deepEqual(exported.partnerMemberships, [{ partner: APPLICATION.name, apiKey }]);
  assert.equal(JSON.stringify(exported).includes(token), false);

  const audit = await op.client.get('/console/audit');
  assert.match(audit.body, /application\.approve/);
  assert.match(audit.body, /olivia_op/);
  assertLogsClean(t, [token, ann.email, op.email]);
});

test('a declined application tells the applicant the reason; a reason is required', async () => {
  const op = await operator(t, 'oscar_op');
  const dan = await person(t, 'dan_declined');
  const id = await applyFor(dan, { name: 'Spam Machine' });
  const blank = await submitOn(op.client, `/console/applications/${id}`, `/console/applications/${id}/decline`, { reason: '  ' });
  assert.equal(blank.res.status, 409);
  const r = await submitOn(op.client, `/console/applications/${id}`, `/console/applications/${id}/decline`, { reason: 'We cannot tell what the site does.' });
  assert.equal(r.res.status, 303);
  const mail = await lastMailTo(t, dan.email);
  assert.match(mail.subject ?? '', /was declined/);
  assert.match(mail.text ?? '', /We cannot tell what the site does\./);
  const list = await dan.client.get('/partners');
  assert.match(list.body, /Declined: We cannot tell what the site does\./);
  assert.doesNotMatch(list.body, /href="\/partners\/\d+">Spam Machine/);
});

test('only a proven address applies, with every field checked, and no more than three wait at once', async () => {
  const uma = await person(t, 'uma_unproven', { proven: false });
  const form = await uma.client.get('/partners/apply');
  assert.equal(form.res.status, 403);
  const refused = await uma.client.post('/partners/apply', { _csrf: /name="_csrf" value="([^"]+)"/.exec(form.body)![1]!, ...APPLICATION });
  assert.equal(refused.res.status, 400);
  assert.match(refused.body, /Confirm your e-mail address first/);

  const pat = await person(t, 'pat_checks');
  const bad = await submitOn(pat.client, '/partners/apply', '/partners/apply', {
    name: ' ',
    site_url: 'javascript:alert(1)',
    purpose: 'x',
    origins: 'ftp://files.example.com',
    contact: '',
  });
  assert.equal(bad.res.status, 400);
  for (const field of ['name', 'site_url', 'purpose', 'origins', 'contact']) assert.match(bad.body, new RegExp(`href="#${field}"`), field);
  for (let i = 0; i < 3; i++) await applyFor(pat, { name: `App ${i}` });
  const fourth = await submitOn(pat.client, '/partners/apply', '/partners/apply', APPLICATION);
  assert.equal(fourth.res.status, 400);
  assert.match(fourth.body, /3 applications waiting/);
});

test('with approval on application, a proven applicant gets the partner at once; the switch is audited', async () => {
  const op = await operator(t, 'ophelia_op');
  const before = (await mailsTo(t, op.email)).length;
  const on = await submitOn(op.client, '/console', '/console/settings', { auto_approve: '1' });
  assert.equal(on.res.status, 303);
  assert.match((await op.client.get('/console')).body, /data-auto-approve="on"/);
  const quick = await person(t, 'quinn_quick');
  const r = await submitOn(quick.client, '/partners/apply', '/partners/apply', { ...APPLICATION, name: 'Quick App' });
  assert.equal(r.res.headers.get('location'), '/partners?msg=approved');
  const list = await quick.client.get('/partners');
  assert.match(list.body, /href="\/partners\/\d+">Quick App</);
  assert.equal((await mailsTo(t, op.email)).length, before, 'operators are not asked to review it');
  assert.match((await lastMailTo(t, quick.email)).subject ?? '', /is approved/);
  const audit = await op.client.get('/console/audit');
  assert.match(audit.body, /settings\.auto_approve/);
  await submitOn(op.client, '/console', '/console/settings', { auto_approve: '0' });
  assert.match((await op.client.get('/console')).body, /data-auto-approve="off"/);
  void csrfOf;
});

// The development inbox (/dev/mail), on SQLite and PostgreSQL: the .eml files the app wrote, newest
// first, with links that work when clicked; absent when NODE_ENV is production, when mail goes to an
// SMTP relay, and for a browser on another machine.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { TestApp } from '../helpers/app.js';
import { mailsTo } from '../helpers/mailbox.js';
import { SiteClient, startSiteApp } from './helpers.js';

let t: TestApp;

before(async () => {
  t = await startSiteApp();
});

after(async () => {
  await t?.close();
});

test('lists the mail written to files, newest first, and its confirmation link works when followed', async () => {
  const empty = await fetch(`${t.baseUrl}/dev/mail`);
  assert.equal(empty.status, 200);
  assert.match(await empty.text(), /No mail yet/);

  const first = new SiteClient(t.baseUrl);
  assert.equal((await first.signUp({ email: 'first@example.org', user_id: 'first_one', password: 'violet kettle drums at dawn' })).status, 303);
  const second = new SiteClient(t.baseUrl);
  assert.equal((await second.signUp({ email: 'second@example.org', user_id: 'second_one', password: 'violet kettle drums at dawn' })).status, 303);
  await mailsTo(t, 'second@example.org'); // runs the mail job: the files are written
  t.clock.advance(1000);

  const page = await first.get('/dev/mail');
  assert.equal(page.res.status, 200);
  assert.equal(page.res.headers.get('cache-control'), 'no-store');
  const subjects = [...page.body.matchAll(/<h2>([^<]+)<\/h2>/g)].map((m) => m[1]);
  assert.equal(subjects.length, 2);
  assert.ok(page.body.indexOf('second@example.org') < page.body.indexOf('first@example.org'), 'newest first');
  const href = new RegExp(`<a href="(${t.baseUrl}/confirm\\?token=[A-Za-z0-9_-]+)">`).exec(page.body)?.[1];
  assert.ok(href, 'the confirmation link is clickable');
  // Following it from the page opens the confirm page, as the link in the mail does.
  const confirmPage = await second.get(href.slice(t.baseUrl.length));
  assert.equal(confirmPage.res.status, 200);
  assert.match(confirmPage.body, /Confirm my address/);
});

test('refused from another machine, with SMTP_URL set, and when NODE_ENV is production', async () => {
  const remote = await t.app.inject({ method: 'GET', url: '/dev/mail', remoteAddress: '192.0.2.10' });
  assert.equal(remote.statusCode, 404);
  assert.match(remote.body, /only in a browser on the machine idsvc runs on/);
  // A proxy header does not make a remote browser local.
  const forwarded = await t.app.inject({ method: 'GET', url: '/dev/mail', remoteAddress: '192.0.2.10', headers: { 'x-forwarded-for': '127.0.0.1' } });
  assert.equal(forwarded.statusCode, 404);

  const smtp = await startSiteApp({ SMTP_URL: 'smtp://127.0.0.1:9' });
  try {
    const res = await fetch(`${smtp.baseUrl}/dev/mail`);
    assert.equal(res.status, 404);
    assert.match(await res.text(), /Mail goes to the SMTP relay in SMTP_URL/);
  } finally {
    await smtp.close();
  }
  const production = await startSiteApp({ NODE_ENV: 'production', IDSVC_TEST_ARGON2_MINIMUM: '0' });
  try {
    const res = await fetch(`${production.baseUrl}/dev/mail`);
    assert.equal(res.status, 404);
    const body = await res.text();
    assert.match(body, /Not found\./);
    assert.doesNotMatch(body, /inbox|mail/i);
  } finally {
    await production.close();
  }
});

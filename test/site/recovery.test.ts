// Account recovery and password changes (issue 15), through HTTP and the mail they send.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { RESETS_PER_ACCOUNT_PER_HOUR } from '../../src/services/recovery.js';
import type { TestApp } from '../helpers/app.js';
import { lastMailTo, linkIn, mailsTo } from '../helpers/mailbox.js';
import { assertLogsClean, SiteClient, signUpConfirmed, startSiteApp } from './helpers.js';

let t: TestApp;
const secrets: string[] = [];
let n = 0;

before(async () => {
  t = await startSiteApp({ TRUST_PROXY: 'true' });
});
after(() => t.close());

const browser = () => new SiteClient(t.baseUrl, { 'x-forwarded-for': `10.16.${Math.floor(++n / 250)}.${n % 250}` });

async function account(prefix: string) {
  n += 1;
  const email = `${prefix}.${n}@example.org`;
  const password = `${prefix} walks ${n} long miles`;
  const userId = `${prefix}_${n}`;
  secrets.push(email, password);
  const client = browser();
  assert.equal((await signUpConfirmed(t, client, { email, user_id: userId, password })).status, 303);
  return { client, email, password, userId };
}

async function askReset(email: string) {
  const c = browser();
  return c.post('/forgot', { _csrf: await c.csrf('/forgot'), email });
}

async function setPassword(link: string, password: string) {
  const c = browser();
  const page = await c.get(link);
  if (page.res.status !== 200) return page;
  const csrf = /name="_csrf" value="([^"]+)"/.exec(page.body)![1]!;
  const token = /name="token" value="([^"]+)"/.exec(page.body)![1]!;
  return c.post('/reset', { _csrf: csrf, token, password });
}

test('forgot password: the same answer for unknown addresses; the link sets a new password once, ends every session, and a notice follows', async () => {
  const me = await account('forgetful');
  const known = await askReset(me.email);
  const unknown = await askReset(`nobody.${n}@example.org`);
  assert.equal(known.res.status, 303);
  assert.deepEqual([unknown.res.status, unknown.res.headers.get('location'), unknown.body], [known.res.status, known.res.headers.get('location'), known.body]);
  assert.equal(known.res.headers.get('location'), '/forgot/sent');
  assert.deepEqual(await mailsTo(t, `nobody.${n}@example.org`), []);

  const mail = await lastMailTo(t, me.email);
  assert.match(mail.subject ?? '', /Set a new password/);
  const link = linkIn(mail, '/reset?token=');
  assert.match((await browser().get(link)).body, new RegExp(`account <strong class="user-id">${me.userId}</strong>`));

  const weak = await setPassword(link, 'password1');
  assert.equal(weak.res.status, 400, 'the usual rules apply');
  const fresh = `brand new ${me.password}`;
  secrets.push(fresh);
  const done = await setPassword(link, fresh);
  assert.equal(done.res.status, 303);
  assert.equal(done.res.headers.get('location'), '/login?msg=password_reset');
  assert.equal((await me.client.get('/account')).res.status, 303, 'the session that was open has ended');
  assert.equal((await browser().logIn(me.email, me.password)).status, 400, 'the old password no longer works');
  assert.equal((await browser().logIn(me.email, fresh)).status, 303);
  assert.equal((await setPassword(link, `again ${fresh}`)).res.status, 410, 'the link works once');
  const notice = await lastMailTo(t, me.email);
  assert.match(notice.subject ?? '', /password was changed/);
  assert.ok(notice.text?.includes(`${t.config.baseUrl}/forgot`));
});

test('a reset link lasts an hour; requests are limited per account', async () => {
  const me = await account('hourly');
  await askReset(me.email);
  const link = linkIn(await lastMailTo(t, me.email), '/reset?token=');
  t.clock.advance(60 * 60_000 + 1000);
  assert.equal((await browser().get(link)).res.status, 410);
  const before = (await mailsTo(t, me.email)).length;
  for (let i = 0; i < RESETS_PER_ACCOUNT_PER_HOUR + 2; i++) assert.equal((await askReset(me.email)).res.headers.get('location'), '/forgot/sent');
  assert.equal((await mailsTo(t, me.email)).length - before, RESETS_PER_ACCOUNT_PER_HOUR);
});

test('a reset link proves the address of an account that was never confirmed', async () => {
  n += 1;
  const email = `late.${n}@example.org`;
  const password = `late bloomer ${n} sings`;
  const userId = `late_${n}`;
  secrets.push(email, password);
  const c = browser();
  await c.signUp({ email, user_id: userId, password, opt_in: true });
  const p = await t.partner({ name: 'Watcher' });
  secrets.push(p.apiToken);
  await assert.rejects(p.publicClient.returnServices(userId, { profileType: 'public' }), /User Not Found/);
  await askReset(email);
  assert.equal((await setPassword(linkIn(await lastMailTo(t, email), '/reset?token='), `${password} again`)).res.status, 303);
  assert.deepEqual(await p.publicClient.returnServices(userId, { profileType: 'public' }), []);
});

test('changing the password asks for the current one, ends the other sessions and sends a notice', async () => {
  const me = await account('changer');
  const elsewhere = browser();
  assert.equal((await elsewhere.logIn(me.email, me.password)).status, 303);
  const wrong = await me.client.submit('/account/password', { current_password: 'not my password at all', new_password: 'a whole new phrase here' });
  assert.equal(wrong.res.status, 400);
  assert.match(wrong.body, /current password is not right/);
  const next = `changed ${me.password}`;
  secrets.push(next);
  const ok = await me.client.submit('/account/password', { current_password: me.password, new_password: next });
  assert.equal(ok.res.headers.get('location'), '/account?msg=password_changed#password');
  assert.equal((await me.client.get('/account')).res.status, 200, 'this session goes on');
  assert.equal((await elsewhere.get('/account')).res.status, 303, 'the other one ended');
  assert.equal((await browser().logIn(me.email, next)).status, 303);
  assert.match((await lastMailTo(t, me.email)).text ?? '', /changed on the account page/);
  for (let i = 0; i < 5; i++) await me.client.submit('/account/password', { current_password: `guess ${i} wrong`, new_password: 'a whole new phrase here' });
  assert.equal((await me.client.submit('/account/password', { current_password: next, new_password: 'a whole new phrase here' })).res.status, 429, 'guessing is throttled');
});

test("a new password is judged against the account's own names, on the account page and through a reset link", async () => {
  // Short enough to be judged whole: strength is judged on the first 32 characters.
  const me = await account('zanzibar');
  const own = `${me.userId}${me.userId}`;
  const changed = await me.client.submit('/account/password', { current_password: me.password, new_password: own });
  assert.equal(changed.res.status, 400);
  assert.match(changed.body, /The new password is too easy to guess/);
  await askReset(me.email);
  const reset = await setPassword(linkIn(await lastMailTo(t, me.email), '/reset?token='), own);
  assert.equal(reset.res.status, 400);
  assert.match(reset.body, /The password is too easy to guess/);
});

test('linking a partner mails the owner, with a link to where links are ended', async () => {
  const me = await account('linked');
  const p = await t.partner({ name: 'Friendly app' });
  secrets.push(p.apiToken);
  await p.client.syncUser(me.email, { email: me.email, password: me.password });
  const mail = await lastMailTo(t, me.email);
  assert.equal(mail.subject, 'Friendly app was connected to your idsvc account');
  assert.ok(mail.text?.includes(`${t.config.baseUrl}/account#links`));
  const count = (await mailsTo(t, me.email)).length;
  await p.client.syncUser(me.email, { email: me.email, password: me.password });
  assert.equal((await mailsTo(t, me.email)).length, count, 'linking again changes nothing and mails nothing');
});

test('no token, link or address in any log line', () => {
  assertLogsClean(t, secrets);
  assert.doesNotMatch(t.logs.join('\n'), /token=[A-Za-z0-9_-]{10}/);
});

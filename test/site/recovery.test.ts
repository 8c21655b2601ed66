// Account recovery and password changes (issue 15), through HTTP and the mail they send.
import assert from 'node:assert/strict';
import { emailHashes } from '../../src/domain/identifiers.js';
import { once } from 'node:events';
import { after, before, test } from 'node:test';
import { Worker } from 'node:worker_threads';
import { AFTER_ANSWER_CAPACITY } from '../../src/context.js';
import { sendDueMail } from '../../src/jobs/mail.js';
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

/** Holds the work answered requests hand over until `release()`: what is queued behind it waits. */
function holdAfterAnswer(): { release: () => void } {
  let release = () => {};
  const gate = new Promise<void>((resolve) => {
    release = resolve;
  });
  assert.ok(t.ctx.afterAnswer.offer('test gate', t.app.log, () => gate));
  return { release };
}

const pendingResets = async (email: string) =>
  (await t.ctx.db.kysely.selectFrom('email_tokens').select('id').where('purpose', '=', 'reset').where('email', '=', email).execute()).length +
  (await t.ctx.db.kysely.selectFrom('mail_queue').select('id').where('to_address', '=', email).where('kind', '=', 'reset-password').execute()).length;

test('forgot password answers before the address is looked up: known and unknown addresses get their answer while no work has been done for either', async () => {
  const me = await account('prompt');
  const stranger = `stranger.${n}@example.org`;
  const gate = holdAfterAnswer();
  try {
    const known = await askReset(me.email);
    const unknown = await askReset(stranger);
    assert.deepEqual([known.res.status, known.res.headers.get('location')], [303, '/forgot/sent']);
    assert.deepEqual(
      [unknown.res.status, unknown.res.headers.get('location'), unknown.body],
      [known.res.status, known.res.headers.get('location'), known.body],
    );
    assert.equal(await pendingResets(me.email), 0, 'answered with no link made and no mail queued');
  } finally {
    gate.release();
  }
  await t.ctx.afterAnswer.idle();
  assert.equal(await pendingResets(me.email), 2, 'then the link is made and its mail queued');
  assert.match((await lastMailTo(t, me.email)).subject ?? '', /Set a new password/);
  assert.deepEqual(await mailsTo(t, stranger), []);
});

/**
 * Posts forms from a worker thread, as a client elsewhere would: the server's event loop (this
 * thread) may then work on after answering without holding up the clock that times the answer.
 */
const POSTER = `
const { parentPort } = require('node:worker_threads');
parentPort.on('message', async ({ url, headers, body }) => {
  const start = performance.now();
  const res = await fetch(url, { method: 'POST', redirect: 'manual', headers, body });
  await res.text();
  parentPort.postMessage({ ms: performance.now() - start, location: res.headers.get('location') });
});`;

test('forgot password takes as long for an address with an account as for one without (medians of interleaved requests)', async () => {
  const me = await account('timed');
  const SAMPLES = 25;
  const known: number[] = [];
  const unknown: number[] = [];
  const poster = new Worker(POSTER, { eval: true });
  try {
    const timed = async (email: string, into: number[]) => {
      const c = browser();
      const csrf = await c.csrf('/forgot');
      const headers = {
        ...c.headers,
        'content-type': 'application/x-www-form-urlencoded',
        cookie: [...c.cookies].map(([k, v]) => `${k}=${v}`).join('; '),
      };
      poster.postMessage({ url: `${t.baseUrl}/forgot`, headers, body: new URLSearchParams({ _csrf: csrf, email }).toString() });
      const [{ ms, location }] = (await once(poster, 'message')) as [{ ms: number; location: string | null }];
      assert.equal(location, '/forgot/sent');
      into.push(ms);
      await t.ctx.afterAnswer.idle();
    };
    for (let i = 0; i < SAMPLES; i++) {
      // A fresh hour each time, so that no throttle cuts the work for the known address short.
      t.clock.advance(3600 * 1000 + 1000);
      const stranger = `nobody.timed.${n}.${i}@example.org`;
      if (i % 2 === 0) {
        await timed(me.email, known);
        await timed(stranger, unknown);
      } else {
        await timed(stranger, unknown);
        await timed(me.email, known);
      }
    }
  } finally {
    await poster.terminate();
  }
  assert.equal(await pendingResets(me.email), 2 * SAMPLES, 'every request for the known address did the whole work: a link and its mail');
  while ((await sendDueMail(t.ctx, t.app.log)) > 0);
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  const [k, u] = [median(known), median(unknown)];
  console.log(`forgot password medians: known ${k.toFixed(1)} ms, unknown ${u.toFixed(1)} ms`);
  assert.ok(k < u * 2 + 3, `known ${k.toFixed(1)} ms against unknown ${u.toFixed(1)} ms`);
});

test(`past ${AFTER_ANSWER_CAPACITY} waiting tasks, forgot password refuses every address alike, before looking at it`, async () => {
  const me = await account('crowded');
  const gate = holdAfterAnswer();
  try {
    let queued = 0;
    while (t.ctx.afterAnswer.offer('filler', t.app.log, async () => {})) queued += 1;
    assert.equal(queued, AFTER_ANSWER_CAPACITY, 'the queue is bounded');
    const known = await askReset(me.email);
    const unknown = await askReset(`crowd.${n}@example.org`);
    assert.equal(known.res.status, 503);
    assert.equal(known.res.headers.get('retry-after'), '60');
    const page = (r: typeof known) => r.body.replace(/name="_csrf" value="[^"]*"/, '').replace(/name="email" type="email" value="[^"]*"/, '');
    assert.deepEqual([unknown.res.status, page(unknown)], [known.res.status, page(known)]);
    assert.match(known.body, /Too many requests just now/);
  } finally {
    gate.release();
  }
  await t.ctx.afterAnswer.idle();
  assert.equal(await pendingResets(me.email), 0, 'a refused request does nothing later either');
  assert.equal((await askReset(me.email)).res.status, 303, 'once the queue empties, requests are taken again');
});

test('work that fails after its answer is logged by its error name and code, without the message (it may hold the address), and the work behind it still runs', async () => {
  const address = `failing.${++n}@example.org`;
  secrets.push(address);
  let ranAfter = false;
  assert.ok(
    t.ctx.afterAnswer.offer('password reset request', t.app.log, async () => {
      throw Object.assign(new Error(`no luck for ${address}`), { code: 'EXAMPLE_FAULT' });
    }),
  );
  assert.ok(
    t.ctx.afterAnswer.offer('next', t.app.log, async () => {
      ranAfter = true;
    }),
  );
  await t.ctx.afterAnswer.idle();
  assert.ok(ranAfter);
  const line = t.logs.find((l) => l.includes('password reset request failed after the answer'));
  assert.ok(line, 'the failure is logged');
  assert.match(line, /EXAMPLE_FAULT/);
  assert.doesNotMatch(line, /no luck/);
});

test('shutting down waits for the work answered requests handed over, before the database closes', async () => {
  const other = await startSiteApp();
  const user = await other.user({ email: `closing.${++n}@example.org`, userId: `closing_${n}` });
  secrets.push(`closing.${n}@example.org`);
  let release = () => {};
  const gate = new Promise<void>((resolve) => {
    release = resolve;
  });
  assert.ok(other.ctx.afterAnswer.offer('test gate', other.app.log, () => gate));
  let wrote = 0;
  assert.ok(
    other.ctx.afterAnswer.offer('test write', other.app.log, async () => {
      wrote = (await other.ctx.db.kysely.selectFrom('users').select('id').where('id', '=', user.id).execute()).length;
    }),
  );
  let closed = false;
  const closing = other.close().then(() => {
    closed = true;
  });
  await new Promise((resolve) => setTimeout(resolve, 200));
  assert.equal(closed, false, 'still waiting for the queued work');
  release();
  await closing;
  assert.equal(wrote, 1, 'the queued work ran on an open database');
  assert.equal(other.logs.filter((l) => l.includes('failed after the answer')).length, 0);
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
  const pushed = `late-gh-${n}`;
  secrets.push(email, password);
  const c = browser();
  await c.signUp({ email, user_id: userId, password, opt_in: true });
  const p = await t.partner({ name: 'Watcher' });
  secrets.push(p.apiToken);
  await assert.rejects(p.publicClient.returnServices(userId, { profileType: 'public' }), /User Not Found/);
  // A push under the address's hash while the account is unproven: the person as partners know them.
  await p.client.updateService(emailHashes(email).sha256, 'github', pushed);
  await askReset(email);
  assert.equal((await setPassword(linkIn(await lastMailTo(t, email), '/reset?token='), `${password} again`)).res.status, 303);
  assert.deepEqual(await p.publicClient.returnServices(userId, { profileType: 'public' }), []);
  // Proven, the account takes in what partners pushed about its address.
  assert.deepEqual(
    (await p.client.returnServices(userId)).map((s) => s.usrSvcId),
    [pushed],
  );
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
  assert.equal(ok.res.headers.get('location'), '/account/security?msg=password_changed#password');
  assert.equal((await me.client.get('/account')).res.status, 200, 'this session goes on');
  assert.equal((await elsewhere.get('/account')).res.status, 303, 'the other one ended');
  assert.equal((await browser().logIn(me.email, next)).status, 303);
  assert.match((await lastMailTo(t, me.email)).text ?? '', /changed on the account page/);
  for (let i = 0; i < 5; i++) await me.client.submit('/account/password', { current_password: `guess ${i} wrong`, new_password: 'a whole new phrase here' });
  assert.equal(
    (await me.client.submit('/account/password', { current_password: next, new_password: 'a whole new phrase here' })).res.status,
    429,
    'guessing is throttled',
  );
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
  assert.ok(mail.text?.includes(`${t.config.baseUrl}/account/sites#links`));
  const count = (await mailsTo(t, me.email)).length;
  await p.client.syncUser(me.email, { email: me.email, password: me.password });
  assert.equal((await mailsTo(t, me.email)).length, count, 'linking again changes nothing and mails nothing');
});

test('no token, link or address in any log line', () => {
  assertLogsClean(t, secrets);
  assert.doesNotMatch(t.logs.join('\n'), /token=[A-Za-z0-9_-]{10}/);
});

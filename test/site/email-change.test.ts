// Changing the e-mail address (issue 15), through HTTP and the mail it sends: the new address is
// proven by a link before anything switches, the old address is told, and partners see the account
// under the new hashes only (docs/spec.md, "Changing the e-mail address").
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { emailHashes } from '../../src/domain/identifiers.js';
import { EMAIL_CHANGES_PER_HOUR } from '../../src/services/email-change.js';
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

const browser = () => new SiteClient(t.baseUrl, { 'x-forwarded-for': `10.17.${Math.floor(++n / 250)}.${n % 250}` });

function address(prefix: string) {
  n += 1;
  const email = `${prefix}.${n}@example.org`;
  secrets.push(email);
  return { ...emailHashes(email), email };
}

async function account(prefix: string) {
  const a = address(prefix);
  const password = `${prefix} rows ${n} small boats`;
  const userId = `${prefix}_${n}`;
  secrets.push(password);
  const client = browser();
  assert.equal((await signUpConfirmed(t, client, { email: a.email, user_id: userId, password, opt_in: true })).status, 303);
  return { client, ...a, password, userId };
}

const askChange = (client: SiteClient, newEmail: string, password: string) =>
  client.submit('/account/email', { new_email: newEmail, current_password: password });

/** Opens the change link and presses its button, as the given browser. */
async function followChangeLink(client: SiteClient, link: string) {
  const page = await client.get(link);
  assert.equal(page.res.status, 200, `the link opens a page (${page.res.status})`);
  const csrf = /name="_csrf" value="([^"]+)"/.exec(page.body)![1]!;
  const token = /name="token" value="([^"]+)"/.exec(page.body)![1]!;
  return client.post('/email/confirm', { _csrf: csrf, token });
}

/** An answer of the partner API as status and body: what "answers alike" compares. */
async function answer(pathAndQuery: string, token?: string): Promise<string> {
  const res = await fetch(`${t.baseUrl}${pathAndQuery}`, token ? { method: 'POST', body: new URLSearchParams({ api_token: token }) } : {});
  return `${res.status} ${(await res.text()).trim()}`;
}

async function exportOf(client: SiteClient) {
  const { res, body } = await client.submit('/account/export');
  assert.equal(res.status, 200);
  return JSON.parse(body) as {
    account: { email: string };
    links: { partner: string; userIdentifier: string }[];
    partnerEntries: { partner: string; usrSvcId: string }[];
  };
}

test('nothing switches until the link mailed to the new address is followed; the old address is told twice, with no link', async () => {
  const me = await account('mover');
  const next = address('moved');
  const elsewhere = browser();
  assert.equal((await elsewhere.logIn(me.email, me.password)).status, 303);

  const wrong = await askChange(me.client, next.email, 'not my password at all');
  assert.equal(wrong.res.status, 400);
  assert.match(wrong.body, /current password is not right/);
  assert.equal((await askChange(me.client, 'not an address', me.password)).res.status, 400);
  assert.match((await askChange(me.client, me.email.toUpperCase(), me.password)).body, /the address the account has now/);
  assert.deepEqual(await mailsTo(t, next.email), [], 'refused requests mail nobody');

  const asked = await askChange(me.client, next.email, me.password);
  assert.equal(asked.res.status, 303);
  assert.equal(asked.res.headers.get('location'), '/account/security?msg=email_sent#email');
  assert.match((await me.client.get('/account/security?msg=email_sent')).body, /Check the new inbox/);

  const notice = await lastMailTo(t, me.email);
  assert.match(notice.subject ?? '', /change of your .* e-mail address was asked for/);
  assert.doesNotMatch(notice.text ?? '', /token=/, 'the notice to the old address cannot complete the change');
  const mail = await lastMailTo(t, next.email);
  assert.match(mail.subject ?? '', /Confirm your new e-mail address/);
  const link = linkIn(mail, '/email/confirm?token=');

  // Asked for, and the link opened (a mail scanner would): nothing has changed.
  const page = await browser().get(link);
  assert.equal(page.res.status, 200);
  assert.match(page.body, new RegExp(`account <strong class="user-id">${me.userId}</strong> will use <strong>${next.email}</strong>`));
  assert.equal((await exportOf(me.client)).account.email, me.email);
  assert.equal((await browser().logIn(next.email, me.password)).status, 400, 'the new address does not log in yet');
  // An earlier reset link, mailed to the old address, must not outlive the switch.
  const forgot = browser();
  await forgot.post('/forgot', { _csrf: await forgot.csrf('/forgot'), email: me.email });
  const resetLink = linkIn(await lastMailTo(t, me.email), '/reset?token=');

  const done = await followChangeLink(me.client, link);
  assert.equal(done.res.status, 303, done.body.slice(0, 300));
  assert.equal(done.res.headers.get('location'), '/account/security?msg=email_changed#email', 'the logged-in owner lands on the account page');
  assert.equal((await me.client.get('/account')).res.status, 200, 'this session goes on');
  assert.equal((await elsewhere.get('/account')).res.status, 303, 'the other one ended');
  assert.equal((await exportOf(me.client)).account.email, next.email);
  assert.equal((await browser().logIn(next.email, me.password)).status, 303);
  assert.equal((await browser().logIn(me.email, me.password)).status, 400, 'the old address no longer logs in');
  assert.equal((await browser().get(link)).res.status, 410, 'the link works once');
  assert.equal((await browser().get(resetLink)).res.status, 410, 'links mailed to the old address end');

  const changed = await lastMailTo(t, me.email);
  assert.match(changed.subject ?? '', /e-mail address was changed/);
  assert.doesNotMatch(changed.text ?? '', /token=/);
  assert.doesNotMatch(changed.text ?? '', new RegExp(next.email.replace(/\./g, '\\.')), 'the old address is not told the new one');
});

test('partners across the switch: links and earlier pushes stay with the account; the old hashes name nobody, the new ones the user; orphan pushes under the new address fold in', async () => {
  const A = await t.partner({ name: 'Anchor', webhookUrl: 'http://127.0.0.1:9/hook' });
  const B = await t.partner({ name: 'Beacon' });
  secrets.push(A.apiToken, B.apiToken);
  const me = await account('switcher');
  await me.client.submit('/account/identities', { svc_id: 'github', usr_svc_id: 'switcher-gh' });
  const next = address('switched');
  const stranger = address('stranger');

  // Before: A links the user and pushes under the old hash; B pushes about the new address, which
  // nobody has yet.
  assert.equal(await A.client.syncUser(me.md5, { email: me.email, password: me.password }), true);
  await A.client.updateService(me.md5, 'gitlab', 'switcher-gl');
  await B.client.updateService(next.sha256, 'flickr', 'switcher-flickr');
  assert.equal(await answer(`/api/return_services/${A.apiKey}/${next.md5}/public`), await answer(`/api/return_services/${A.apiKey}/${stranger.md5}/public`));

  await askChange(me.client, next.email, me.password);
  // Asked for, not yet followed: partners see what they saw.
  assert.deepEqual((await B.publicClient.returnServices(me.md5, { profileType: 'public' })).map((s) => s.svcId).sort(), ['github', 'gitlab']);
  assert.equal((await followChangeLink(me.client, linkIn(await lastMailTo(t, next.email), '/email/confirm?token='))).res.status, 303);

  // The old hashes (and the old address) name nobody: the same answers as for a stranger.
  for (const [old, other] of [
    [me.md5, stranger.md5],
    [me.sha256, stranger.sha256],
    [encodeURIComponent(me.email), encodeURIComponent(stranger.email)],
  ] as const) {
    assert.equal(await answer(`/api/return_services/${B.apiKey}/${old}/public`), await answer(`/api/return_services/${B.apiKey}/${other}/public`));
    assert.equal(await answer(`/api/return_profile/${B.apiKey}/${old}/public`), await answer(`/api/return_profile/${B.apiKey}/${other}/public`));
  }
  // The new ones name the user, with everything: the central entries, A's push made under the old
  // hash (it was the account's), and B's orphan push under the new address, folded in.
  assert.deepEqual((await B.publicClient.returnServices(next.md5, { profileType: 'public' })).map((s) => s.svcId).sort(), ['github', 'gitlab']);
  // A is linked: its own push merged with the central entries (their usrSvcId is for trusted partners).
  assert.deepEqual((await A.client.returnServices(next.sha256)).map((s) => `${s.svcId}:${s.usrSvcId}`).sort(), ['github:undefined', 'gitlab:switcher-gl']);
  assert.deepEqual((await A.client.returnServices(me.userId)).map((s) => s.svcId).sort(), ['github', 'gitlab'], 'the userId names the same person');
  // B is not linked: its own repository, which now holds what it pushed about the new address.
  assert.deepEqual(
    (await B.client.returnServices(next.md5)).map((s) => s.usrSvcId),
    ['switcher-flickr'],
  );
  const exported = await exportOf(me.client);
  assert.deepEqual(exported.partnerEntries.map((e) => `${e.partner}:${e.usrSvcId}`).sort(), ['Anchor:switcher-gl', 'Beacon:switcher-flickr']);

  // A's link stays (it is to the account), under the identifier A linked with: A keeps hearing of changes.
  assert.deepEqual(
    exported.links.map((l) => [l.partner, l.userIdentifier]),
    [['Anchor', me.md5]],
  );
  await me.client.submit('/account/identities', { svc_id: 'twitter', usr_svc_id: 'switcher_tw' });
  const events = await t.ctx.db.kysely.selectFrom('outbox').select(['event_type', 'payload']).where('partner_id', '=', A.id).orderBy('id').execute();
  const last = events.at(-1)!;
  assert.match(last.event_type, /^identity\./);
  assert.equal(JSON.parse(last.payload).data.svcId, 'twitter');
  assert.equal(JSON.parse(last.payload).data.user_identifier, me.md5);
  assert.equal(JSON.stringify(events).includes(next.md5) || JSON.stringify(events).includes(next.sha256), false, 'partners are not handed the new hashes');

  // A push under the old hash now is about whoever has that address next, not about this account.
  await A.client.updateService(me.md5, 'flickr', 'someone-else');
  assert.deepEqual((await exportOf(me.client)).partnerEntries.map((e) => `${e.partner}:${e.usrSvcId}`).sort(), [
    'Anchor:switcher-gl',
    'Beacon:switcher-flickr',
  ]);
  assert.deepEqual(
    (await A.client.returnServices(me.md5)).map((s) => s.usrSvcId),
    ['someone-else'],
    'A still reads its own push (SPEC §3 rule 1)',
  );
});

test('an address with another account: the same answer, the new inbox is told it is taken, nothing changes; an unconfirmed holder yields', async () => {
  const me = await account('crowded');
  const other = await account('owner');
  const free = address('free');
  const shape = (r: { res: Response }) => `${r.res.status} ${r.res.headers.get('location')}`;
  const taken = await askChange(me.client, other.email, me.password);
  const open = await askChange(me.client, free.email, me.password);
  assert.equal(shape(taken), shape(open), 'the page does not say whether the address has an account');
  const note = await lastMailTo(t, other.email);
  assert.match(note.subject ?? '', /already has an account/);
  assert.doesNotMatch(note.text ?? '', /token=/);
  assert.equal((await exportOf(me.client)).account.email, me.email);

  // An account that typed in an address and never confirmed it does not keep it from the change.
  const squat = address('squatted');
  const squatter = browser();
  await squatter.signUp({ email: squat.email, user_id: `squatter_${n}`, password: 'squatter never reads mail', opt_in: true });
  secrets.push('squatter never reads mail');
  await askChange(me.client, squat.email, me.password);
  const link = linkIn((await mailsTo(t, squat.email)).find((m) => /Confirm your new/.test(m.subject ?? ''))!, '/email/confirm?token=');
  assert.equal((await followChangeLink(browser(), link)).res.headers.get('location'), '/login?msg=email_changed', 'another browser is sent to log in');
  assert.equal((await browser().logIn(squat.email, me.password)).status, 303);
  assert.equal((await browser().logIn(`squatter_${n}`, 'squatter never reads mail')).status, 400, 'the unconfirmed account is gone');

  // A link loses to an account that proves the address first.
  const racer = await account('racer');
  const race = address('race');
  await askChange(racer.client, race.email, racer.password);
  const raceLink = linkIn(await lastMailTo(t, race.email), '/email/confirm?token=');
  const rival = browser();
  assert.equal((await signUpConfirmed(t, rival, { email: race.email, user_id: `rival_${n}`, password: 'rival proves it first' })).status, 303);
  secrets.push('rival proves it first');
  assert.equal((await followChangeLink(browser(), raceLink)).res.status, 409);
  assert.equal((await exportOf(racer.client)).account.email, racer.email);
});

test('requests are throttled: wrong passwords like the password change, and a few changes an hour', async () => {
  const me = await account('eager');
  for (let i = 0; i < EMAIL_CHANGES_PER_HOUR; i++) assert.equal((await askChange(me.client, address('eager-new').email, me.password)).res.status, 303);
  const more = await askChange(me.client, address('eager-new').email, me.password);
  assert.equal(more.res.status, 429);
  assert.match(more.body, /several changes in the last hour/);
  const guesser = await account('guesser');
  for (let i = 0; i < 5; i++) assert.equal((await askChange(guesser.client, address('g').email, `guess ${i} wrong`)).res.status, 400);
  assert.equal((await askChange(guesser.client, address('g').email, guesser.password)).res.status, 429, 'guessing is throttled');
});

test('only the newest change link works', async () => {
  const me = await account('fickle');
  const first = address('first');
  const second = address('second');
  await askChange(me.client, first.email, me.password);
  const firstLink = linkIn(await lastMailTo(t, first.email), '/email/confirm?token=');
  await askChange(me.client, second.email, me.password);
  assert.equal((await browser().get(firstLink)).res.status, 410);
  const secondLink = linkIn(await lastMailTo(t, second.email), '/email/confirm?token=');
  t.clock.advance(24 * 3600_000 + 1000);
  assert.equal((await browser().get(secondLink)).res.status, 410, 'a link lasts 24 hours');
});

test('no token, link or address in any log line', () => {
  assertLogsClean(t, secrets);
  assert.doesNotMatch(t.logs.join('\n'), /token=[A-Za-z0-9_-]{10}/, 'a mailed link reached the log');
});

// Every sentence the site says about who can find a person, held to every path that finds one, in
// each consent setting: not yet confirmed, opted in, opted in and discoverable, hidden (with the
// discoverable flag left on, then off). The sentences live in src/site/views/consent.ts; what each
// one promises is written out below as the paths it names.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { emailHashes } from '../../src/domain/identifiers.js';
import { DISCOVERABLE_ADDS, DISCOVERABLE_ADDS_SHORT, NOT_VISIBLE, OPT_IN_REACH } from '../../src/site/views/consent.js';
import type { TestApp } from '../helpers/app.js';
import { lastMailTo, linkIn } from '../helpers/mailbox.js';
import { assertLogsClean, followMailedLink, SiteClient, startSiteApp } from './helpers.js';

const IVY = { email: 'ivy.consent@example.org', userId: 'ivy', password: 'ivy climbs the old stone wall' };
const NOBODY = { email: 'nobody.consent@example.org', userId: 'nobody_here' };
let t: TestApp;
let ivy: SiteClient;
let host = '';
/** Looks people up and never pushed anything about ivy. */
let Q: Awaited<ReturnType<TestApp['partner']>>;
/** Pushed an entry about ivy's address itself, and has a linked user who shares an address book. */
let P: Awaited<ReturnType<TestApp['partner']>>;

before(async () => {
  t = await startSiteApp();
  host = new URL(t.config.baseUrl).host;
  Q = await t.partner({ name: 'Looker' });
  P = await t.partner({ name: 'Pusher' });
  const owner = await t.user({ email: 'olga.owner@example.org', userId: 'olga' });
  await P.client.syncUser('olga', { email: 'olga.owner@example.org', password: owner.password });
  await P.client.updateService(emailHashes(IVY.email).md5, 'gitlab', 'ivy-pushed');
  ivy = new SiteClient(t.baseUrl);
  const res = await ivy.signUp({ email: IVY.email, user_id: IVY.userId, password: IVY.password, opt_in: true });
  assert.equal(res.status, 303);
  assert.equal((await ivy.logIn(IVY.email, IVY.password)).status, 303);
  assert.equal((await ivy.submit('/account/identities', { svc_id: 'github', usr_svc_id: 'ivy-gh' })).res.status, 303);
});
after(() => t.close());

const text = (html: string) =>
  html
    .replace(/<[^>]+>/g, ' ')
    .replace(/&#39;/g, "'")
    .replace(/&quot;/g, '"')
    .replace(/&amp;/g, '&')
    .replace(/\s+/g, ' ');

async function sharingText(): Promise<string> {
  const { body } = await ivy.get('/account/sharing');
  return text(/<section[^>]*id="visibility"[\s\S]*?<\/section>/.exec(body)?.[0] ?? '');
}

async function answer(url: string, init?: RequestInit): Promise<string> {
  const res = await fetch(`${t.baseUrl}${url}`, init);
  return `${res.status} ${(await res.text()).trim()}`;
}

/** Whether a path answers for ivy otherwise than for nobody, the same path asked about a stranger. */
async function tells(path: (who: { email: string; userId: string }) => string): Promise<boolean> {
  return (await answer(path(IVY))) !== (await answer(path(NOBODY)));
}

const hashes = (who: { email: string }) => emailHashes(who.email);
const qAnswer = (id: string) => `/api/return_services/${Q.apiKey}/${encodeURIComponent(id)}/public`;
const webfinger = (resource: string) => `/.well-known/webfinger?resource=${encodeURIComponent(resource)}`;

/** Every path that can find a person, as it answers for ivy right now. */
async function reach() {
  const byUserIdProfile = (await (await fetch(`${t.baseUrl}/v3/profiles/${IVY.userId}`)).json()) as { hash?: string };
  return {
    // OPT_IN_REACH: partner sites through their API, by the address, either hash or the userId.
    partnerByEmail: await tells((w) => qAnswer(w.email)),
    partnerByMd5: await tells((w) => qAnswer(hashes(w).md5)),
    partnerBySha256: await tells((w) => qAnswer(hashes(w).sha256)),
    partnerByUserId: await tells((w) => qAnswer(w.userId)),
    // OPT_IN_REACH: any site or app through the Gravatar-compatible profile and avatar.
    profileByMd5: await tells((w) => `/v3/profiles/${hashes(w).md5}`),
    profileBySha256: await tells((w) => `/v3/profiles/${hashes(w).sha256}`),
    profileByUserId: await tells((w) => `/v3/profiles/${w.userId}`),
    avatarBySha256: await tells((w) => `/avatar/${hashes(w).sha256}?d=404`),
    avatarByMd5: await tells((w) => `/avatar/${hashes(w).md5}?d=404`),
    // "Your page … is online, and WebFinger finds it by your userId (acct:)."
    page: await tells((w) => `/u/${w.userId}`),
    webfingerAcct: await tells((w) => webfinger(`acct:${w.userId}@${host}`)),
    webfingerPageUrl: await tells((w) => webfinger(`${t.config.baseUrl}/u/${w.userId}`)),
    // DISCOVERABLE_ADDS, one path each.
    reverseLookup: (await Q.publicClient.reverseLookup('github', 'ivy-gh')).some((u) => u.userId === IVY.userId),
    contactMatching: (await P.client.returnContacts('olga', [IVY.email, NOBODY.email])).some((c) => c.userId === IVY.userId),
    webfingerMailto: await tells((w) => webfinger(`mailto:${w.email}`)),
    hashWithUserId: (byUserIdProfile.hash ?? '') === hashes(IVY).sha256,
  };
}

type Reach = Awaited<ReturnType<typeof reach>>;
const OPT_IN_PATHS = [
  'partnerByEmail',
  'partnerByMd5',
  'partnerBySha256',
  'partnerByUserId',
  'profileByMd5',
  'profileBySha256',
  'profileByUserId',
  'avatarBySha256',
  'avatarByMd5',
  'page',
  'webfingerAcct',
  'webfingerPageUrl',
] as const;
const DISCOVERABLE_PATHS = ['reverseLookup', 'contactMatching', 'webfingerMailto', 'hashWithUserId'] as const;

/** What the sentences promise: the opt-in paths while visible, the discoverable ones only while also discoverable. */
function promised(visible: boolean, discoverable: boolean): Reach {
  const out: Record<string, boolean> = {};
  for (const p of OPT_IN_PATHS) out[p] = visible;
  for (const p of DISCOVERABLE_PATHS) out[p] = visible && discoverable;
  return out as Reach;
}

/** What P stored itself about her address, read back with its token: P's whatever she chooses ("What they stored themselves stays theirs"). */
async function whatPusherStored(): Promise<string[]> {
  return (await P.client.returnServices(hashes(IVY).md5)).map((s) => s.svcId).sort();
}

function assertBothConsentsExplained(page: string) {
  assert.ok(
    page.includes(`Opting in means: ${OPT_IN_REACH} Your page ${t.config.baseUrl}/u/${IVY.userId} is online, and WebFinger finds it by your userId ( acct: ).`),
    page,
  );
  assert.ok(
    page.includes(`Discoverable adds more ways to find you: ${DISCOVERABLE_ADDS} It is off until you turn it on, and applies only while you are opted in.`),
    page,
  );
}

test('the sign-up page says what opting in lets others do, and what discoverable would add', async () => {
  const page = text((await new SiteClient(t.baseUrl).get('/signup')).body);
  assert.ok(
    page.includes(`This is your opt-in: once your address is confirmed, ${OPT_IN_REACH} Without it your account still works, but ${NOT_VISIBLE}.`),
    page,
  );
  assert.ok(
    page.includes(`More ways to find you (discoverable: ${DISCOVERABLE_ADDS_SHORT}) are a separate choice, off until you turn it on in your account.`),
    page,
  );
});

test('opted in but not yet confirmed: "partner sites and visitors see nothing of you", and no path finds her', async () => {
  const page = await sharingText();
  assert.match(page, /You will be visible once you confirm your e-mail address\./);
  assert.ok(page.includes(`Until your address is confirmed, ${NOT_VISIBLE}.`));
  assertBothConsentsExplained(page);
  assert.deepEqual(await reach(), promised(false, false));
  assert.deepEqual(await whatPusherStored(), ['gitlab']);
});

test('opted in: everyone who knows her address, a hash of it or her userId finds her; the discoverable paths do not', async () => {
  assert.equal((await followMailedLink(ivy, linkIn(await lastMailTo(t, IVY.email), '/confirm?token='))).res.status, 303);
  const page = await sharingText();
  assert.match(page, /You are opted in\. /);
  assert.match(page, /You are not discoverable\. /);
  assert.doesNotMatch(page, new RegExp(NOT_VISIBLE));
  assertBothConsentsExplained(page);
  assert.deepEqual(await reach(), promised(true, false));
  assert.deepEqual(await whatPusherStored(), ['gitlab']);
});

test('opted in and discoverable: every path finds her', async () => {
  assert.equal((await ivy.submit('/account/discoverable', { discoverable: '1' })).res.status, 303);
  const page = await sharingText();
  assert.match(page, /You are discoverable\. /);
  assertBothConsentsExplained(page);
  assert.deepEqual(await reach(), promised(true, true));
});

test('"A field marked public appears on your public page and to every partner site …, names, place and bio also in your Gravatar-compatible profile; the others only to sites you connected"', async () => {
  const { body } = await ivy.get('/account/profile');
  assert.ok(
    text(body).includes(
      'A field marked public appears on your public page and to every partner site while you are visible (names, place and bio also in your Gravatar-compatible profile); the others only to sites you connected.',
    ),
  );
  assert.equal(
    (await ivy.submit('/account/profile', { nickname: 'Ivy Green', public_nickname: '1', city: 'Ghent', public_city: '1', bio: 'kept to linked sites only' }))
      .res.status,
    303,
  );
  const profile = (await (await fetch(`${t.baseUrl}/v3/profiles/${hashes(IVY).sha256}`)).json()) as {
    display_name: string;
    location: string;
    description: string;
  };
  assert.deepEqual([profile.display_name, profile.location, profile.description], ['Ivy Green', 'Ghent', '']);
  const page = (await new SiteClient(t.baseUrl).get(`/u/${IVY.userId}`)).body;
  assert.match(page, /Ghent/);
  assert.doesNotMatch(page, /kept to linked sites only/);
  const seen = JSON.stringify(await Q.publicClient.returnProfile(IVY.userId, { profileType: 'public' }));
  assert.match(seen, /Ghent/);
  assert.doesNotMatch(seen, /kept to linked sites only/);
});

test('opted out, the discoverable flag left on: "Now partner sites and visitors see nothing of you" holds for every path', async () => {
  assert.equal((await ivy.submit('/account/opt-in', { opt_in: '0' })).res.status, 303);
  const page = await sharingText();
  assert.match(page, /You are hidden\. /);
  assert.match(page, /You are discoverable once you opt in\. /);
  assert.ok(page.includes(`Now ${NOT_VISIBLE}, not even sites you connected. What they stored themselves stays theirs.`));
  assertBothConsentsExplained(page);
  assert.deepEqual(await reach(), promised(false, true));
  assert.deepEqual(await whatPusherStored(), ['gitlab'], 'what a partner stored itself stays its own');
});

test('opted out and not discoverable: still nothing finds her; opting in again brings back exactly the opt-in paths', async () => {
  assert.equal((await ivy.submit('/account/discoverable', {})).res.status, 303);
  assert.deepEqual(await reach(), promised(false, false));
  assert.match(await sharingText(), /You are hidden\. .*You are not discoverable\. /);
  assert.equal((await ivy.submit('/account/opt-in', { opt_in: '1' })).res.status, 303);
  assert.deepEqual(await reach(), promised(true, false));
});

test('logs none of the addresses or passwords used', () => {
  assertLogsClean(t, [IVY.email, IVY.password, NOBODY.email, 'olga.owner@example.org']);
});

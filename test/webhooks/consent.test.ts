// Webhooks keep the user's consent (issue 14 point 1): while a user is not visible (never opted in,
// or hidden) no event about them is written but `user.hidden` and `user.deleted`; an event written
// while they were visible is not delivered once they hide; `user.visible` and `profile.updated` say
// when there is something new to read. Through the partner API, the site and the CLI, with real
// receivers.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { listOutbox } from '../../src/repositories/outbox.js';
import type { TestApp } from '../helpers/app.js';
import { addLocalService, pageWithBacklink, SiteClient, startProfilePages, startSiteApp, type ProfilePages } from '../site/helpers.js';
import { cli, deliverAll, startReceiver, toWallClock, verifiedEvents, type Receiver } from './helpers.js';

let t: TestApp;
let remote: ProfilePages;
const receivers: Receiver[] = [];
let people = 0;

before(async () => {
  t = await startSiteApp();
  toWallClock(t);
  remote = await startProfilePages();
  await addLocalService(t, 'pages', 'Pages', remote.origin);
});
after(async () => {
  for (const r of receivers) await r.close();
  await remote.close();
  await t.close();
});

/** A user with an account (opted in or not), logged in on the site. */
async function person(optedIn: boolean) {
  people += 1;
  const email = `consent.${people}@example.org`;
  const u = await t.user({ email, userId: `consent_${people}`, optedIn });
  const site = new SiteClient(t.baseUrl);
  assert.equal((await site.logIn(email, u.password)).status, 303);
  return { email, userId: u.userId, password: u.password, site };
}

/** A partner with a webhook endpoint of its own. */
async function hookedPartner(name: string) {
  const receiver = await startReceiver();
  receivers.push(receiver);
  const partner = await t.partner({ name, webhookUrl: receiver.url });
  return { ...partner, receiver, events: () => verifiedEvents(t, partner.apiKey, receiver) };
}

const typesOf = async (p: { events(): Promise<{ type: string }[]> }) => (await p.events()).map((e) => e.type);
const written = async (partnerId: number) => (await listOutbox(t.ctx.db, partnerId)).map((r) => r.event_type);

describe('nothing about a user who is not visible', () => {
  test('a user who never opted in, linked to two partners: one pushes, the other hears nothing', async () => {
    const me = await person(false);
    const A = await hookedPartner('A');
    const B = await hookedPartner('B');
    await A.client.syncUser(me.email, { email: me.email, password: me.password });
    await B.client.syncUser(me.userId, { email: me.email, password: me.password });
    await A.client.updateService(me.email, 'github', 'me-on-github');
    await B.client.updateService(me.userId, 'gitlab', 'me-on-gitlab');
    await deliverAll(t);
    assert.deepEqual(await typesOf(A), [], 'A heard neither that B linked nor what B pushed');
    assert.deepEqual(await typesOf(B), [], 'B heard nothing of A');
    assert.deepEqual(await written(A.id), [], 'not even written');
    assert.deepEqual(await written(B.id), []);
    // The answers agree: each sees only its own pushes.
    assert.deepEqual(
      (await B.client.returnServices(me.userId)).map((s) => s.svcId),
      ['gitlab'],
    );
  });

  test('a hidden user changes everything on the site: no partner hears of it', async () => {
    const me = await person(true);
    const A = await hookedPartner('A');
    const B = await hookedPartner('B');
    await A.client.syncUser(me.email, { email: me.email, password: me.password });
    await B.client.syncUser(me.email, { email: me.email, password: me.password });
    await deliverAll(t);
    assert.deepEqual(await typesOf(A), ['link.created'], 'B linked while the user was visible');
    assert.equal((await me.site.submit('/account/opt-in', { opt_in: '0' })).res.status, 303);

    // Identities: add, change, prove (the flag flips), add another and remove it.
    remote.pages.set(`${me.userId}-pages`, pageWithBacklink(`${t.config.baseUrl}/u/${me.userId}`));
    assert.equal((await me.site.submit('/account/identities', { svc_id: 'pages', usr_svc_id: 'first-try' })).res.status, 303);
    assert.equal((await me.site.submit('/account/identities', { svc_id: 'pages', usr_svc_id: `${me.userId}-pages`, replace: '1' })).res.status, 303);
    assert.equal((await me.site.submit('/account/identities/verify', { svc_id: 'pages' })).res.status, 303);
    const proven = await t.ctx.db.kysely
      .selectFrom('central_identities')
      .select('verified')
      .where('svc_id', '=', 'pages')
      .where('usr_svc_id', '=', `${me.userId}-pages`)
      .executeTakeFirst();
    assert.equal(proven?.verified, 1, 'the check ran and flipped the flag');
    assert.equal((await me.site.submit('/account/identities', { svc_id: 'github', usr_svc_id: 'hidden-me' })).res.status, 303);
    assert.equal((await me.site.submit('/account/identities/remove', { svc_id: 'github' })).res.status, 303);
    // Profile, and a partner's push flowing in.
    assert.equal((await me.site.submit('/account/profile', { nickname: 'Quiet', public_nickname: '1' })).res.status, 303);
    await A.client.updateService(me.email, 'gitlab', 'from-a');
    // Ending B's link: B is not told either (it heard user.hidden; the link is simply gone).
    assert.equal((await me.site.submit('/account/links/end', { partner_id: String(B.id) })).res.status, 303);

    await deliverAll(t);
    assert.deepEqual(await typesOf(A), ['link.created', 'user.hidden']);
    assert.deepEqual(await typesOf(B), ['user.hidden']);
    assert.deepEqual(await written(A.id), ['link.created', 'user.hidden'], 'nothing else was written');
    assert.deepEqual(await written(B.id), ['user.hidden']);

    // Visible again: the partner still linked is told to read again, and reads it all.
    await me.site.submit('/account/opt-in', { opt_in: '1' });
    await deliverAll(t);
    assert.deepEqual(await typesOf(A), ['link.created', 'user.hidden', 'user.visible']);
    assert.deepEqual(await typesOf(B), ['user.hidden']);
    assert.deepEqual(
      (await A.client.returnServices(me.email)).map((s) => s.svcId),
      ['gitlab', 'pages'],
    );
  });
});

describe('delivery checks again', () => {
  test('an event queued while visible is not sent once the user hides, and never later', async () => {
    const me = await person(true);
    const A = await hookedPartner('A');
    const B = await hookedPartner('B');
    await A.client.syncUser(me.email, { email: me.email, password: me.password });
    await B.client.syncUser(me.email, { email: me.email, password: me.password });
    await deliverAll(t);
    assert.deepEqual(await typesOf(A), ['link.created']);

    await A.client.updateService(me.email, 'github', 'queued-push');
    assert.deepEqual(await written(B.id), ['identity.updated'], 'written while visible');
    await me.site.submit('/account/opt-in', { opt_in: '0' });
    await deliverAll(t);
    assert.deepEqual(await typesOf(B), ['user.hidden']);
    const [held] = (await listOutbox(t.ctx.db, B.id)).filter((r) => r.event_type === 'identity.updated');
    assert.equal(held?.status, 'suppressed');
    assert.match(String(held?.last_error), /not visible/);
    assert.equal(held?.attempts, 0);
    assert.equal(held?.delivered_at, null);

    // Visible again: user.visible goes out; the withheld event does not.
    await me.site.submit('/account/opt-in', { opt_in: '1' });
    await deliverAll(t);
    assert.deepEqual(await typesOf(B), ['user.hidden', 'user.visible']);
    assert.equal((await listOutbox(t.ctx.db, B.id)).find((r) => r.id === held?.id)?.status, 'suppressed');

    // Queued, then the account is deleted: only user.deleted is sent.
    await A.client.updateService(me.email, 'gitlab', 'queued-before-deletion');
    assert.equal((await me.site.submit('/account/delete', { confirm_user_id: me.userId })).res.status, 303);
    await deliverAll(t);
    assert.deepEqual(await typesOf(B), ['user.hidden', 'user.visible', 'user.deleted']);
    assert.deepEqual(await typesOf(A), ['link.created', 'user.hidden', 'user.visible', 'user.deleted']);
    const statuses = (await listOutbox(t.ctx.db, B.id)).map((r) => `${r.event_type}:${r.status}`);
    assert.deepEqual(statuses, [
      'identity.updated:suppressed',
      'user.hidden:delivered',
      'user.visible:delivered',
      'identity.updated:suppressed',
      'user.deleted:delivered',
    ]);
  });
});

describe('user.visible', () => {
  test('every path that opts a user in tells linked partners once', async () => {
    const me = await person(false);
    const A = await hookedPartner('A');
    await A.client.syncUser(me.userId, { email: me.email, password: me.password });
    await me.site.submit('/account/opt-in', { opt_in: '1' });
    await me.site.submit('/account/opt-in', { opt_in: '1' });
    for (const flag of ['--opt-out', '--opt-in', '--opt-in']) {
      const r = await cli(t, ['user', 'set', me.userId, flag]);
      assert.equal(r.code, 0, r.stderr);
    }
    await deliverAll(t);
    const events = await A.events();
    assert.deepEqual(
      events.map((e) => e.type),
      ['user.visible', 'user.hidden', 'user.visible'],
    );
    assert.deepEqual(events[0]?.data, { user_identifier: me.userId, userId: me.userId }, 'names the user as the partner linked them, nothing more');
  });
});

describe('profile.updated', () => {
  test('carries what return_profile answers the linked partner, whenever that changes', async () => {
    const me = await person(true);
    const A = await hookedPartner('A');
    const stranger = await hookedPartner('Not linked');
    await A.client.syncUser(me.email, { email: me.email, password: me.password });

    await me.site.submit('/account/profile', { nickname: 'Mia', public_nickname: '1', city: 'Oslo' });
    await deliverAll(t);
    let events = await A.events();
    assert.deepEqual(
      events.map((e) => e.type),
      ['profile.updated'],
    );
    const first = events[0]!.data;
    assert.deepEqual(first.profile, await A.client.returnProfile(me.email), 'the private view of return_profile, exactly');
    assert.deepEqual(first.profile, { userId: me.userId, url: `${t.config.baseUrl}/u/${me.userId}`, nickname: 'Mia', city: 'Oslo' });
    assert.deepEqual(first.publicFields, ['nickname']);
    assert.deepEqual(Object.keys(await A.publicClient.returnProfile(me.email, { profileType: 'public' })), ['userId', 'url', 'nickname']);

    // The same form saved again changes nothing a partner reads: no event.
    await me.site.submit('/account/profile', { nickname: 'Mia', public_nickname: '1', city: 'Oslo' });
    // Only a public flag changes: the public view changed, so it is announced.
    await me.site.submit('/account/profile', { nickname: 'Mia', public_nickname: '1', city: 'Oslo', public_city: '1' });
    // The operator's CLI too.
    const r = await cli(t, ['user', 'set', me.userId, '--bio', 'Hello there']);
    assert.equal(r.code, 0, r.stderr);
    await deliverAll(t);
    events = await A.events();
    assert.deepEqual(
      events.map((e) => e.type),
      ['profile.updated', 'profile.updated', 'profile.updated'],
    );
    assert.deepEqual(events[1]?.data.publicFields, ['nickname', 'city'], 'in answer order');
    assert.deepEqual(events[2]?.data.profile, {
      userId: me.userId,
      url: `${t.config.baseUrl}/u/${me.userId}`,
      nickname: 'Mia',
      city: 'Oslo',
      bio: 'Hello there',
    });

    // Hidden, a profile change is nobody's news.
    await me.site.submit('/account/opt-in', { opt_in: '0' });
    await me.site.submit('/account/profile', { nickname: 'Someone else' });
    await deliverAll(t);
    assert.deepEqual(
      (await A.events()).map((e) => e.type),
      ['profile.updated', 'profile.updated', 'profile.updated', 'user.hidden'],
    );
    assert.deepEqual(await typesOf(stranger), [], 'a partner that is not linked hears nothing');
  });
});

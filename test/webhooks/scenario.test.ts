// Issue 14's scenario: a user walks unconfirmed → not-opted-in → opted-in → hidden → visible → deleted while two
// partners are linked to her, each with a webhook receiver of its own (a real local HTTP server).
// Every event each partner received is asserted, payload and all, and every delivery is verified
// with the reference implementation of Standard Webhooks (the `standardwebhooks` package).
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, before, test } from 'node:test';
import { buildProfileUrl } from '../../src/catalogue/profile-url.js';
import { listOutbox } from '../../src/repositories/outbox.js';
import { updatePartner } from '../../src/repositories/partners.js';
import { errorCode, type TestApp } from '../helpers/app.js';
import { lastMailTo, linkIn } from '../helpers/mailbox.js';
import { followMailedLink, SiteClient, startSiteApp } from '../site/helpers.js';
import { cli, deliverAll, startReceiver, toWallClock, verifiedEvents, type ReceivedEvent, type Receiver } from './helpers.js';

let t: TestApp;
let hookA: Receiver;
let hookB: Receiver;

before(async () => {
  t = await startSiteApp();
  toWallClock(t);
  hookA = await startReceiver();
  hookB = await startReceiver();
});
after(async () => {
  await hookA.close();
  await hookB.close();
  await t.close();
});

test('not opted in → opted in → hidden → visible → deleted: what each linked partner hears', async () => {
  const email = 'alice.walk@example.org';
  const password = 'ninety-nine lanterns over Bergen';
  const md5 = createHash('md5').update(email).digest('hex');
  const A = await t.partner({ name: 'Partner A', webhookUrl: hookA.url });
  await t.ctx.db.write((w) => updatePartner(w, A.id, { trusted: true }, t.clock.now())); // sees usrSvcId (SPEC §3 rule 5)
  const B = await t.partner({ name: 'Partner B', webhookUrl: hookB.url });
  const snap = await t.ctx.catalogue.get();
  const url = (svcId: string, usrSvcId: string) => buildProfileUrl(snap.byId.get(svcId)!, usrSvcId);
  // How each partner names her: A linked under her MD5, B under her userId.
  const toA = { user_identifier: md5, userId: 'alice_walk' };
  const toB = { user_identifier: 'alice_walk', userId: 'alice_walk' };
  const site = new SiteClient(t.baseUrl);
  const expectA: Omit<ReceivedEvent, 'timestamp'>[] = [];
  const expectB: Omit<ReceivedEvent, 'timestamp'>[] = [];
  const received = async (apiKey: string, hook: Receiver) =>
    (await verifiedEvents(t, apiKey, hook)).map(({ type, timestamp, data }) => {
      assert.ok(!Number.isNaN(Date.parse(timestamp)), 'an ISO-8601 timestamp');
      return { type, data };
    });
  const check = async (stage: string) => {
    await deliverAll(t);
    assert.deepEqual(await received(A.apiKey, hookA), expectA, `partner A after: ${stage}`);
    assert.deepEqual(await received(B.apiKey, hookB), expectB, `partner B after: ${stage}`);
  };

  // 0. Unconfirmed. She signs up without the consent box and has not followed the mailed link yet:
  // no partner can link her, and nothing about her goes out.
  assert.equal((await site.signUp({ email, user_id: 'alice_walk', password })).headers.get('location'), '/signup/sent');
  assert.equal(await errorCode(A.client.syncUser(md5, { email, password })), 'forbidden');
  assert.equal(await errorCode(B.client.syncUser('alice_walk', { email, password })), 'forbidden');
  await check('unconfirmed');
  assert.equal((await followMailedLink(site, linkIn(await lastMailTo(t, email), '/confirm?token='))).res.status, 303);
  assert.equal((await site.logIn(email, password)).status, 303);

  // 1. Not opted in. Both partners link her and push, she edits on the site: nobody hears anything.
  await A.client.updateService(md5, 'github', 'alice-gh');
  await A.client.syncUser(md5, { email, password });
  await B.client.syncUser('alice_walk', { email, password });
  await B.client.updateService('alice_walk', 'gitlab', 'alice-gl');
  await site.submit('/account/identities', { svc_id: 'reddit', usr_svc_id: 'alice_r' });
  await site.submit('/account/profile', { nickname: 'Al' });
  await check('not opted in');

  // 2. She opts in on the site: both are told to read; from now on they hear every change.
  await site.submit('/account/opt-in', { opt_in: '1' });
  expectA.push({ type: 'user.visible', data: toA });
  expectB.push({ type: 'user.visible', data: toB });
  await A.client.updateService(md5, 'twitter', 'alice_t');
  expectB.push({ type: 'identity.updated', data: { ...toB, svcId: 'twitter', url: url('twitter', 'alice_t'), verified: false } });
  await B.client.updateService('alice_walk', 'youtube', 'alice_yt');
  expectA.push({ type: 'identity.updated', data: { ...toA, svcId: 'youtube', usrSvcId: 'alice_yt', url: url('youtube', 'alice_yt'), verified: false } });
  await site.submit('/account/profile', { nickname: 'Al', public_nickname: '1', city: 'Bergen' });
  const profile = { profile: { userId: 'alice_walk', url: `${t.config.baseUrl}/u/alice_walk`, nickname: 'Al', city: 'Bergen' }, publicFields: ['nickname'] };
  expectA.push({ type: 'profile.updated', data: { ...toA, ...profile } });
  expectB.push({ type: 'profile.updated', data: { ...toB, ...profile } });
  await site.submit('/account/identities/remove', { svc_id: 'reddit' });
  expectA.push({ type: 'identity.removed', data: { ...toA, svcId: 'reddit' } });
  expectB.push({ type: 'identity.removed', data: { ...toB, svcId: 'reddit' } });
  await check('opted in');

  // 3. A pushes, and before the event goes out she hides on the site: B never gets that push;
  // both hear only that she is hidden, and nothing of what happens while she is.
  await A.client.updateService(md5, 'twitch', 'alice_tw');
  await site.submit('/account/opt-in', { opt_in: '0' });
  expectA.push({ type: 'user.hidden', data: toA });
  expectB.push({ type: 'user.hidden', data: toB });
  await B.client.updateService('alice_walk', 'keybase', 'alice_kb');
  await site.submit('/account/identities', { svc_id: 'reddit', usr_svc_id: 'alice_r2', replace: '1' });
  await site.submit('/account/profile', { nickname: 'Al', public_nickname: '1', city: 'Oslo' });
  await check('hidden');
  const withheld = (await listOutbox(t.ctx.db, B.id)).filter((r) => r.status === 'suppressed').map((r) => JSON.parse(r.payload).data.svcId);
  assert.deepEqual(withheld, ['twitch'], 'the queued push was suppressed at delivery');

  // 4. The operator opts her in again from the CLI: both are told to read again, and what they read
  // has everything that changed while she was hidden.
  const r = await cli(t, ['user', 'set', 'alice_walk', '--opt-in']);
  assert.equal(r.code, 0, r.stderr);
  expectA.push({ type: 'user.visible', data: toA });
  expectB.push({ type: 'user.visible', data: toB });
  await check('visible again');
  const read = await B.client.returnServices('alice_walk');
  assert.deepEqual(
    read.map((s) => s.svcId),
    ['github', 'gitlab', 'keybase', 'reddit', 'twitch', 'twitter', 'youtube'],
  );
  assert.equal((await B.client.returnProfile('alice_walk')).city, 'Oslo');

  // 5. She deletes the account on the site: both are told.
  assert.equal((await site.submit('/account/delete', { confirm_user_id: 'alice_walk' })).res.headers.get('location'), '/?msg=deleted');
  expectA.push({ type: 'user.deleted', data: toA });
  expectB.push({ type: 'user.deleted', data: toB });
  await check('deleted');

  // Each delivery was signed by our own code and carried the Standard Webhooks headers; none twice.
  for (const hook of [hookA, hookB]) {
    const ids = hook.deliveries.map((d) => d.headers['webhook-id']);
    assert.ok(ids.every((id) => /^msg_[0-9a-f]{32}$/.test(String(id))));
    assert.equal(new Set(ids).size, ids.length);
    assert.ok(hook.deliveries.every((d) => d.headers['content-type'] === 'application/json' && /^v1,/.test(d.headers['webhook-signature'] ?? '')));
  }
});

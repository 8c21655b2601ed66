// After an account is deleted, each partner still finds what it pushed under the identifier it used
// (SPEC §3 rule 1; issue 14 point 5): the userId as much as the e-mail hashes. The userId is free
// to be taken again; someone else who takes it does not get the deleted account's entries.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, before, test } from 'node:test';
import { errorCode, startTestApp, type TestApp } from '../helpers/app.js';
import { SiteClient } from '../site/helpers.js';

let t: TestApp;
before(async () => {
  t = await startTestApp();
});
after(() => t.close());

const md5 = (s: string) => createHash('md5').update(s).digest('hex');
const sha256 = (s: string) => createHash('sha256').update(s).digest('hex');
/** The user deletes the account on the site, as a person would. */
async function deleteOnSite(email: string, password: string, userId: string): Promise<void> {
  const site = new SiteClient(t.baseUrl);
  assert.equal((await site.logIn(email, password)).status, 303);
  assert.equal((await site.submit('/account/delete', { confirm_user_id: userId })).res.headers.get('location'), '/?msg=deleted');
}

const pairs = (list: { svcId: string; usrSvcId?: string }[]) => list.map((s) => [s.svcId, s.usrSvcId]);

test('a partner finds its own pushes under the userId after the account is deleted', async () => {
  const email = 'gone@example.org';
  const u = await t.user({ email, userId: 'gone' });
  const P = await t.partner({ name: 'Pusher' });
  const Q = await t.partner({ name: 'Bystander' });
  await P.client.updateService('gone', 'github', 'gone-gh');
  await P.client.updateService(md5(email), 'gitlab', 'gone-gl');
  await deleteOnSite(email, u.password, 'gone');

  const mine = [
    ['github', 'gone-gh'],
    ['gitlab', 'gone-gl'],
  ];
  for (const id of ['gone', md5(email), sha256(email), email]) {
    assert.deepEqual(pairs(await P.client.returnServices(id)), mine, `under ${id}`);
  }
  // Nobody else learns anything, and the public view knows no such user.
  assert.equal(await errorCode(Q.client.returnServices('gone')), 'not_found');
  assert.equal(await errorCode(P.publicClient.returnServices('gone', { profileType: 'public' })), 'not_found');
  // Pushes under the userId keep landing on the same entries.
  await P.client.updateService('gone', 'github', 'gone-gh-2');
  assert.deepEqual(pairs(await P.client.returnServices(md5(email))), [
    ['github', 'gone-gh-2'],
    ['gitlab', 'gone-gl'],
  ]);
});

test('someone else who takes the freed userId does not get the old entries; the old address does', async () => {
  const oldEmail = 'first.owner@example.org';
  const first = await t.user({ email: oldEmail, userId: 'reused' });
  const P = await t.partner({ name: 'Pusher' });
  await P.client.updateService('reused', 'github', 'first-owner');
  await deleteOnSite(oldEmail, first.password, 'reused');
  assert.deepEqual(pairs(await P.client.returnServices('reused')), [['github', 'first-owner']]);

  // A different person signs up as "reused": the name is theirs now, the old entries are not.
  await t.user({ email: 'second.owner@example.org', userId: 'reused' });
  assert.deepEqual(await P.client.returnServices('reused'), []);
  assert.deepEqual(await P.publicClient.returnServices('reused', { profileType: 'public' }), []);
  // The first owner's entries stay the partner's, under the first owner's address.
  assert.deepEqual(pairs(await P.client.returnServices(md5(oldEmail))), [['github', 'first-owner']]);

  // The first owner comes back under a new userId: the same address, the same person.
  await t.user({ email: oldEmail, userId: 'first_again' });
  assert.deepEqual(pairs(await P.client.returnServices('first_again')), [['github', 'first-owner']]);
  assert.deepEqual(await P.client.returnServices('reused'), [], 'still nothing of theirs under the name someone else holds');
});

// return_profile (SPEC §4.7): the public view has the fields the user made public; the private view,
// for a linked partner, all she filled in.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { errorCode as code, startTestApp, type TestApp } from '../helpers/app.js';

let t: TestApp;
before(async () => {
  t = await startTestApp();
});
after(() => t.close());

test('return_profile: public fields, or all for a linked partner', async () => {
  const { updateProfile } = await import('../../src/repositories/users.js');
  const P = await t.partner();
  const u = await t.user({ email: 'quinn@example.org', userId: 'quinn' });
  await t.ctx.db.write((w) => updateProfile(w, u.id, { nickname: 'Q', city: 'Oslo', bio: 'hi' }, ['nickname'], t.clock.now()));
  assert.deepEqual(await P.publicClient.returnProfile('quinn', { profileType: 'public' }), {
    userId: 'quinn',
    url: `${t.config.baseUrl}/u/quinn`,
    nickname: 'Q',
  });
  assert.deepEqual(await P.client.returnProfile('quinn'), { userId: 'quinn', url: `${t.config.baseUrl}/u/quinn`, nickname: 'Q' });
  await P.client.syncUser('quinn', { email: 'quinn@example.org', password: u.password });
  assert.deepEqual(await P.client.returnProfile('quinn'), { userId: 'quinn', url: `${t.config.baseUrl}/u/quinn`, nickname: 'Q', city: 'Oslo', bio: 'hi' });
  assert.equal(await code(P.client.returnProfile('nobody_x', { profileType: 'public' })), 'not_found');
});

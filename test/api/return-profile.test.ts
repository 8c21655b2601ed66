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

test("a legacy_open_reads partner's private profile, served on the key alone, is never kept by a shared cache", async () => {
  const { updatePartner } = await import('../../src/repositories/partners.js');
  const { updateProfile } = await import('../../src/repositories/users.js');
  const P = await t.partner();
  const u = await t.user({ email: 'rowan@example.org', userId: 'rowan' });
  await t.ctx.db.write((w) => updateProfile(w, u.id, { nickname: 'R', city: 'Bergen' }, ['nickname'], t.clock.now()));
  await P.client.syncUser('rowan', { email: 'rowan@example.org', password: u.password });
  await t.ctx.db.write((w) => updatePartner(w, P.id, { legacyOpenReads: true }, t.clock.now()));
  const open = await fetch(`${t.baseUrl}/api/return_profile/${P.apiKey}/rowan?format=json`);
  assert.equal(open.status, 200);
  assert.equal(((await open.json()) as { profile: { city?: string } }).profile.city, 'Bergen', 'the private view, with what only a linked partner sees');
  assert.equal(open.headers.get('cache-control'), 'private, no-store');
  assert.equal(open.headers.get('etag'), null);
  const shared = await fetch(`${t.baseUrl}/api/return_profile/${P.apiKey}/rowan/public?format=json`);
  assert.equal(shared.status, 200);
  assert.deepEqual(((await shared.json()) as { profile: Record<string, string> }).profile, {
    userId: 'rowan',
    url: `${t.config.baseUrl}/u/rowan`,
    nickname: 'R',
  });
  assert.match(shared.headers.get('cache-control') ?? '', /^public, /, 'the public view still may be kept');
});

// return_contacts (SPEC §4.9): only for a user linked to the partner; of the contacts given, those
// that are opted-in, discoverable users; at most 1,000 of them.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { errorCode as code, startTestApp, type TestApp } from '../helpers/app.js';

let t: TestApp;
before(async () => {
  t = await startTestApp();
});
after(() => t.close());

test('return_contacts needs a link and matches opted-in, discoverable users', async () => {
  const P = await t.partner();
  const owner = await t.user({ email: 'nia@example.org', userId: 'nia' });
  await t.user({ email: 'oli@example.org', userId: 'oli', discoverable: true });
  await t.user({ email: 'pam@example.org', userId: 'pam', optedIn: false, discoverable: true });
  assert.equal(await code(P.client.returnContacts('nia', ['oli'])), 'forbidden');
  await P.client.syncUser('nia', { email: 'nia@example.org', password: owner.password });
  const found = await P.client.returnContacts('nia', ['oli@example.org', 'pam@example.org', 'nobody@example.org', 'not valid!!', 'oli']);
  assert.deepEqual(
    found.map((c) => [c.identifier, c.userId]),
    [['oli@example.org', 'oli']],
  );
  assert.equal(
    await code(
      P.client.returnContacts(
        'nia',
        Array.from({ length: 1001 }, (_, i) => `u${i}@example.org`),
      ),
    ),
    'invalid_request',
  );
});

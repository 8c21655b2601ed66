// reverse_lookup (SPEC §4.8): who claims an identity in their central repository, among opted-in
// users who chose to be discoverable; in any case and with one leading `@` ignored; verified claims
// first; at most 100 users.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { setVerifiedMark } from '../../src/repositories/central-identities.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { addCentralIdentity, expectError } from './helpers.js';

let t: TestApp;
let P: Awaited<ReturnType<TestApp['partner']>>;
before(async () => {
  t = await startTestApp();
  P = await t.partner();
});
after(() => t.close());

const lookup = (svcId: string, usrSvcId: string) =>
  fetch(`${t.baseUrl}/api/reverse_lookup/${P.apiKey}/${encodeURIComponent(svcId)}/${encodeURIComponent(usrSvcId)}`);

test('the discoverable, opted-in claimants of an identity, verified first, in any case and with one leading @', async () => {
  const claim = async (userId: string, usrSvcId: string, flags: { discoverable?: boolean; optedIn?: boolean } = {}) => {
    await t.user({ email: `${userId}@example.org`, userId, discoverable: flags.discoverable ?? true, optedIn: flags.optedIn ?? true });
    return addCentralIdentity(t, userId, 'github', usrSvcId);
  };
  await claim('rl_ann', 'Same-Name');
  const bob = await claim('rl_bob', 'same-name');
  await t.ctx.db.write((w) => setVerifiedMark(w, bob, { verified: true, verified_by: 'operator', verified_at: t.clock.now() }));
  await claim('rl_cat', 'same-name', { discoverable: false });
  await claim('rl_dan', 'SAME-NAME', { optedIn: false });
  await claim('rl_eve', 'other-name');
  // A partner's own entry for a discoverable user is not a claim in her central repository.
  await t.user({ email: 'rl_fay@example.org', userId: 'rl_fay', discoverable: true });
  await P.client.updateService('rl_fay', 'github', 'same-name');

  const claimants = [
    { userId: 'rl_bob', url: `${t.config.baseUrl}/u/rl_bob`, verified: true },
    { userId: 'rl_ann', url: `${t.config.baseUrl}/u/rl_ann`, verified: false },
  ];
  for (const asked of ['same-name', 'SAME-name', '@Same-Name']) assert.deepEqual(await P.publicClient.reverseLookup('github', asked), claimants, asked);
  assert.deepEqual(await P.client.reverseLookup('GitHub', 'same-name'), claimants, 'with the api_token too, and the svcId in any case');
  const xml = await (await lookup('github', 'same-name')).text();
  assert.equal(
    xml,
    '<?xml version="1.0" encoding="UTF-8"?>\n<users>' +
      claimants.map((c) => `<user><userId>${c.userId}</userId><url>${c.url}</url><verified>${c.verified ? 'TRUE' : 'FALSE'}</verified></user>`).join('') +
      '</users>\n',
  );
  // Only one `@` is ignored; another service, or nobody, is an empty list.
  for (const [svcId, asked] of [
    ['github', '@@same-name'],
    ['gitlab', 'same-name'],
    ['github', 'nobody-claims-this'],
  ] as const) {
    const res = await lookup(svcId, asked);
    assert.equal(res.status, 200);
    assert.equal(await res.text(), '<?xml version="1.0" encoding="UTF-8"?>\n<users/>\n', `${svcId} ${asked}`);
  }
});

test('an unknown service is not_found; an empty usrSvcId is invalid_request', async () => {
  await expectError(await lookup('no-such-service', 'someone'), 404, 'not_found', /^Service Not Found$/);
  await expectError(await lookup('github', '@'), 400, 'invalid_request', /usrSvcId is missing/);
});

test('answers at most 100 users, the first by userId', async () => {
  const ids = Array.from({ length: 101 }, (_, i) => `rl_many_${String(i).padStart(3, '0')}`);
  for (const userId of ids) {
    await t.user({ email: `${userId}@example.org`, userId, discoverable: true });
    await addCentralIdentity(t, userId, 'gitlab', 'popular-name');
  }
  const found = await P.publicClient.reverseLookup('gitlab', 'popular-name');
  assert.deepEqual(
    found.map((u) => u.userId),
    ids.slice(0, 100),
  );
});

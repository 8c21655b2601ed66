// The end-to-end story of the partner API, through HTTP with the client library.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { IdsvcError } from '@idsvc/client';
import { listOutbox } from '../../src/repositories/outbox.js';
import { setUserFlags, findUserByUserId } from '../../src/repositories/users.js';
import { updatePartner } from '../../src/repositories/partners.js';
import { setOptIn } from '../../src/services/accounts.js';
import { startTestApp, type TestApp } from '../helpers/app.js';

const md5 = (s: string) => createHash('md5').update(s).digest('hex');
const ALICE = 'alice@example.org';
const alice = md5(ALICE);

let t: TestApp;
before(async () => {
  t = await startTestApp();
});
after(() => t.close());

async function rejects(p: Promise<unknown>, code: string, message?: RegExp) {
  await assert.rejects(p, (e: unknown) => {
    assert.ok(e instanceof IdsvcError, String(e));
    assert.equal(e.code, code);
    if (message) assert.match(e.message, message);
    return true;
  });
}

test('the partner API story', async (story) => {
  const A = await t.partner({ name: 'Partner A' });
  const B = await t.partner({ name: 'Partner B' });
  const tick = () => t.clock.advance(1000);
  let user: Awaited<ReturnType<TestApp['user']>>;
  // Each step builds on the ones before: after a failure the rest are skipped, so the first failing
  // step's name says what broke.
  let failed = false;
  const step = (name: string, fn: () => Promise<void>) =>
    story.test(name, async (s) => {
      if (failed) return s.skip('an earlier step failed');
      try {
        await fn();
      } catch (err) {
        failed = true;
        throw err;
      }
    });

  await step('A pushes three identities for md5(alice) and reads them back with usrSvcId', async () => {
    for (const [svc, id] of [
      ['twitter', 'alice_t'],
      ['github', 'alice-gh'],
      ['reddit', 'alice_r'],
    ]) {
      await A.client.updateService(alice, svc!, id!);
      tick();
    }
    const mine = await A.client.returnServices(alice);
    assert.deepEqual(
      mine.map((s) => [s.svcId, s.usrSvcId]),
      [
        ['github', 'alice-gh'],
        ['reddit', 'alice_r'],
        ['twitter', 'alice_t'],
      ],
    );
    assert.equal(mine[0]?.url, 'https://www.github.com/alice-gh');
    assert.equal(mine[0]?.verified, false);
  });

  await step('nobody else sees anything about an unknown person', async () => {
    await rejects(A.client.returnServices(alice, { profileType: 'public' }), 'not_found', /^User Not Found$/);
    await rejects(B.client.returnServices(alice), 'not_found', /^User Not Found$/);
  });

  await step("alice signs up and opts in: the public view is empty, nothing of A's leaks; A's pushes are A's under every name", async () => {
    user = await t.user({ email: ALICE, userId: 'alice', optedIn: true });
    assert.deepEqual(await A.publicClient.returnServices(alice, { profileType: 'public' }), []);
    assert.equal((await A.client.returnServices('alice')).length, 3);
  });

  await step('A links alice: her central repository holds the three, without usrSvcId for untrusted partners', async () => {
    tick();
    assert.equal(await A.client.syncUser(alice, { email: ALICE, password: user.password }), true);
    assert.equal(await A.client.syncUser(alice, { email: ALICE, password: user.password }), true, 'linking twice is fine');
    const pub = await B.publicClient.returnServices(alice, { profileType: 'public' });
    assert.deepEqual(
      pub.map((s) => s.svcId),
      ['github', 'reddit', 'twitter'],
    );
    assert.ok(pub.every((s) => s.usrSvcId === undefined));
    assert.ok(pub.every((s) => s.url.length > 0));
  });

  await step(
    'usrSvcId in the public view: A with its token on its own entries, a trusted partner, every partner for a pro user; never the key alone',
    async () => {
      assert.ok((await A.client.returnServices(alice, { profileType: 'public' })).every((s) => s.usrSvcId !== undefined));
      assert.ok((await A.publicClient.returnServices(alice, { profileType: 'public' })).every((s) => s.usrSvcId === undefined));
      await t.ctx.db.write((w) => updatePartner(w, B.id, { trusted: true }, t.clock.now()));
      assert.ok((await B.client.returnServices(alice, { profileType: 'public' })).every((s) => s.usrSvcId !== undefined));
      assert.ok((await B.publicClient.returnServices(alice, { profileType: 'public' })).every((s) => s.usrSvcId === undefined));
      await t.ctx.db.write((w) => updatePartner(w, B.id, { trusted: false }, t.clock.now()));
      await t.ctx.db.write((w) => setUserFlags(w, user.id, { pro: true }, t.clock.now()));
      assert.equal((await B.client.returnServices(alice, { profileType: 'public' }))[0]?.usrSvcId, 'alice-gh');
      assert.equal((await B.publicClient.returnServices(alice, { profileType: 'public' }))[0]?.usrSvcId, undefined);
      await t.ctx.db.write((w) => setUserFlags(w, user.id, { pro: false }, t.clock.now()));
    },
  );

  await step('B pushes one of its own and links too: its private view merges central and own', async () => {
    tick();
    await B.client.updateService(alice, 'youtube', 'alice_yt');
    tick();
    await B.client.syncUser(alice, { email: ALICE, password: user.password });
    const merged = await B.client.returnServices(alice);
    assert.deepEqual(
      merged.map((s) => s.svcId),
      ['github', 'reddit', 'twitter', 'youtube'],
    );
    assert.equal(merged.find((s) => s.svcId === 'youtube')?.usrSvcId, 'alice_yt');
  });

  await step('A removes one: it leaves the public view (A was its source and it is unverified)', async () => {
    tick();
    const removed = await A.client.updateService(alice, 'reddit', '');
    assert.deepEqual(removed, { svcId: 'reddit', usrSvcId: '' });
    assert.deepEqual(
      (await B.publicClient.returnServices(alice, { profileType: 'public' })).map((s) => s.svcId),
      ['github', 'twitter', 'youtube'],
    );
  });

  await step('alice opts out: B sees only its own pushes; the public view is gone', async () => {
    const aliceRow = (await findUserByUserId(t.ctx.db, 'alice'))!;
    await setOptIn(t.ctx, aliceRow, false);
    assert.deepEqual(
      (await B.client.returnServices(alice)).map((s) => s.svcId),
      ['youtube'],
    );
    await rejects(B.publicClient.returnServices(alice, { profileType: 'public' }), 'not_found', /^User Not Found$/);
    await setOptIn(t.ctx, { ...aliceRow, opted_in: false }, true);
  });

  await step("A unlinks: A's later pushes no longer reach B; what already flowed stays central", async () => {
    tick();
    assert.equal(await A.client.unsyncUser(alice), 'alice');
    await rejects(A.client.unsyncUser(alice), 'not_found');
    tick();
    await A.client.updateService(alice, 'gitlab', 'alice_gl');
    assert.ok(!(await B.client.returnServices(alice)).some((s) => s.svcId === 'gitlab'));
    assert.ok((await B.client.returnServices(alice)).some((s) => s.svcId === 'twitter'));
  });

  await step('the outbox: one event per change, in order, to the partners that did not cause it', async () => {
    const events = (await listOutbox(t.ctx.db)).map(
      (e) => `${e.partner_id === A.id ? 'A' : 'B'}:${e.event_type}:${(JSON.parse(e.payload).data.svcId as string | undefined) ?? ''}`,
    );
    assert.deepEqual(events, [
      'A:link.created:', // B linked (A was linked already)
      'A:identity.updated:youtube', // B's own entry flowed in at B's link
      'B:identity.removed:reddit', // A removed reddit
      'A:user.hidden:',
      'B:user.hidden:',
      'A:user.visible:', // alice opted in again: read again
      'B:user.visible:',
      'B:link.removed:', // A unlinked
    ]);
    const payload = JSON.parse((await listOutbox(t.ctx.db))[1]!.payload);
    assert.equal(payload.type, 'identity.updated');
    assert.equal(payload.data.user_identifier, alice);
    assert.equal(payload.data.userId, 'alice');
    assert.equal(payload.data.usrSvcId, undefined, 'untrusted partner, non-pro user: no usrSvcId in events either');
  });
});

test('the same person under MD5, SHA-256, raw e-mail and userId gives the same answer', async () => {
  const P = await t.partner();
  const email = 'Bob.Smith@Example.ORG ';
  const norm = 'bob.smith@example.org';
  const forms = [md5(norm), md5(norm).toUpperCase(), createHash('sha256').update(norm).digest('hex'), email.trim(), 'bobsmith'];
  await t.user({ email: norm, userId: 'bobsmith' });
  await P.client.updateService(forms[0]!, 'github', 'bob');
  await P.client.updateService(forms[2]!, 'twitter', 'bobt');
  await P.client.updateService(forms[3]!, 'reddit', 'bobr');
  await P.client.updateService('bobsmith', 'github', 'bob2');
  const answers = await Promise.all(forms.map((f) => P.client.returnServices(f)));
  for (const a of answers) assert.deepEqual(a, answers[0]);
  assert.deepEqual(
    answers[0]!.map((s) => `${s.svcId}=${s.usrSvcId}`),
    ['github=bob2', 'reddit=bobr', 'twitter=bobt'],
  );
});

test('pushes made before sign-up under a hash or a userId belong to the account afterwards', async () => {
  const P = await t.partner();
  await P.client.updateService(md5('carol@example.org'), 'github', 'carol1');
  await P.client.updateService(createHash('sha256').update('carol@example.org').digest('hex'), 'twitter', 'carol2');
  await P.client.updateService('carol', 'reddit', 'carol3');
  await t.user({ email: 'carol@example.org', userId: 'carol' });
  assert.deepEqual(
    (await P.client.returnServices('carol')).map((s) => s.svcId),
    ['github', 'reddit', 'twitter'],
  );
});

test('an unknown person pushed under the raw address is found under either hash', async () => {
  const P = await t.partner();
  await P.client.updateService('dave@example.org', 'github', 'dave');
  assert.equal((await P.client.returnServices(md5('dave@example.org')))[0]?.usrSvcId, 'dave');
  assert.equal((await P.client.returnServices(createHash('sha256').update('dave@example.org').digest('hex')))[0]?.usrSvcId, 'dave');
});

// A mark earned by a proof text, through verifyIdentity (every method that applies is asked), on
// SQLite and PostgreSQL: IDSVC_TEST_PROOF_ORIGINS stands in for the service's profile pages as well
// as its API, so GitHub's rel="me" read reaches a local page and a missing proof can be confirmed
// and take the mark away; and the partner's identity.unverified gives as its reason the method that
// had earned the mark (the proof), not another method's negative (the page's missing rel="me").
import assert from 'node:assert/strict';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { after, before, test } from 'node:test';
import { listOutbox } from '../../src/repositories/outbox.js';
import { findUserByUserId } from '../../src/repositories/users.js';
import { setCentralIdentity } from '../../src/services/central.js';
import { verifyIdentity } from '../../src/verification/verify.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { startServer, type LocalServer } from './servers.js';

const BASE = 'https://idsvc.example';
const PROOF = `${BASE}/u/rc_alice`;
let bio = `Cats. ${PROOF}`;
let api: LocalServer;
let web: LocalServer;
let t: TestApp;
let partner: Awaited<ReturnType<TestApp['partner']>>;

before(async () => {
  // GitHub's REST API (GET /users/{login}) and its HTML profile page, which has no rel="me" link back.
  api = await startServer((req: IncomingMessage, res: ServerResponse) => {
    const found = req.url === '/users/octo-rc';
    res.writeHead(found ? 200 : 404, { 'content-type': 'application/json; charset=utf-8' });
    res.end(JSON.stringify(found ? { login: 'octo-rc', id: 9, bio, blog: '' } : { message: 'Not Found' }));
  });
  web = await startServer((req: IncomingMessage, res: ServerResponse) => {
    res.writeHead(req.url === '/octo-rc' ? 200 : 404, { 'content-type': 'text/html; charset=utf-8' });
    res.end(`<!doctype html><title>octo-rc · GitHub</title><div class="user-profile-bio">${bio}</div>`);
  });
  t = await startTestApp({ BASE_URL: BASE, IDSVC_TEST_PROOF_ORIGINS: `https://api.github.com=${api.origin},https://www.github.com=${web.origin}` });
  partner = await t.partner({ name: 'Recheck partner' });
  await t.user({ email: 'rc_alice@example.org', userId: 'rc_alice' });
  await partner.client.syncUser('rc_alice', { email: 'rc_alice@example.org', password: 'correct horse battery' });
});

after(async () => {
  await t.close();
  await web.close();
  await api.close();
});

test('a proof taken out of the GitHub bio is confirmed missing and the mark goes, with the proof as the reason', async () => {
  const user = (await findUserByUserId(t.ctx.db, 'rc_alice'))!;
  const svc = (await t.ctx.catalogue.get()).byId.get('github')!;
  const { row } = await t.ctx.db.write((tx) => setCentralIdentity(tx, user, svc, 'octo-rc', { partnerId: null }, t.clock.now()));

  const first = await verifyIdentity(t.ctx, row.id);
  assert.equal(first?.verified, true);
  assert.equal(first?.method, 'proof');
  assert.deepEqual(
    first?.outcomes.map((o) => `${o.method} ${o.result}`),
    ['rel-me absent', 'proof verified'],
    'the profile page was read on the local stand-in, not on the real www.github.com',
  );
  assert.ok(web.requests.includes('/octo-rc'));

  bio = 'Cats.';
  t.clock.advance(60_000);
  const negative = await verifyIdentity(t.ctx, row.id);
  assert.equal(negative?.verified, true, 'a first negative only warns');
  assert.deepEqual(
    negative?.outcomes.map((o) => `${o.method} ${o.result}`),
    ['rel-me absent', 'proof absent'],
  );

  t.clock.advance(t.ctx.config.verifyConfirmAfterMs);
  assert.equal((await verifyIdentity(t.ctx, row.id))?.verified, false, 'confirmed after the delay: the mark goes');

  const unverified = (await listOutbox(t.ctx.db, partner.id))
    .filter((e) => e.event_type === 'identity.unverified')
    .map((e) => JSON.parse(e.payload).data as { reason: Record<string, unknown> });
  assert.equal(unverified.length, 1);
  const reason = unverified[0]!.reason;
  assert.equal(reason.method, 'proof');
  assert.equal(reason.evidenceUrl, `${api.origin}/users/octo-rc`);
  assert.equal(reason.status, 200);
  assert.match(
    String(reason.detail),
    /^Looked for https:\/\/idsvc\.example\/u\/rc_alice or idsvc:idsvc\.example:rc_alice in "bio" or "blog" of GitHub's answer/,
  );
});

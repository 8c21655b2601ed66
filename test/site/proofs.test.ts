// The proofs page through HTTP: the person's proof text (both forms, each with a copy button's
// hook), per-service steps for their identities, and the proof address a gist needs, kept with the
// identity only when it is one the definitions read and names the identity's own account.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { proofUrlOf } from '../../src/repositories/proof-urls.js';
import type { TestApp } from '../helpers/app.js';
import { SiteClient, startSiteApp } from './helpers.js';

let t: TestApp;
let client: SiteClient;
const GIST = 'https://gist.github.com/octocat/aa5a315d61ae9438b18d';

before(async () => {
  t = await startSiteApp();
  await t.user({ email: 'prover@example.org', userId: 'prover_1', password: 'correct horse battery staple' });
  client = new SiteClient(t.baseUrl);
  assert.equal((await client.logIn('prover@example.org', 'correct horse battery staple')).status, 303);
  for (const [svc_id, usr_svc_id] of [
    ['github', 'octocat'],
    ['hackernews', 'pg'],
    ['9gag', 'someone'],
  ]) {
    const { res } = await client.submit('/account/identities', { svc_id: svc_id!, usr_svc_id: usr_svc_id! });
    assert.equal(res.status, 303);
  }
});
after(async () => {
  await t.close();
});

const identityId = async (svcId: string) =>
  (await t.ctx.db.kysely.selectFrom('central_identities').select('id').where('svc_id', '=', svcId).executeTakeFirstOrThrow()).id;

test('the account page shows the proof text, ready to copy, and links to the steps', async () => {
  const { body } = await client.get('/account');
  assert.match(body, /href="\/account\/proofs"/);
  const host = new URL(t.config.baseUrl).host;
  const code = (text: string) => new RegExp(`<code data-copy[^>]*>${text.replace(/[.]/g, '\\.')}</code>`);
  assert.match(body, code(`${t.config.baseUrl}/u/prover_1`), 'the profile address form');
  assert.match(body, code(`idsvc:${host}:prover_1`), 'the short form');
});

test('the proofs page shows both forms of the proof text, ready to copy', async () => {
  const { res, body } = await client.get('/account/proofs');
  assert.equal(res.status, 200);
  assert.match(res.headers.get('cache-control') ?? '', /no-store/);
  const host = new URL(t.config.baseUrl).host;
  assert.match(body, new RegExp(`<code data-copy[^>]*data-proof-text="url"[^>]*>${t.config.baseUrl.replace(/[.]/g, '\\.')}/u/prover_1</code>`));
  assert.match(body, new RegExp(`<code data-copy[^>]*data-proof-text="short"[^>]*>idsvc:${host.replace(/[.]/g, '\\.')}:prover_1</code>`));
});

test('each identity a proof can prove has its service’s steps; others are not listed', async () => {
  const { body } = await client.get('/account/proofs');
  assert.match(body, /id="proof-github"/);
  assert.match(body, /Add the proof text to your GitHub bio/);
  assert.match(body, /Create a public gist whose text is the proof text/);
  assert.match(body, /id="proof-hackernews"/);
  assert.match(body, /“about” box of your Hacker News profile/);
  assert.doesNotMatch(body, /id="proof-9gag"/);
  // Only GitHub's gist method takes an address.
  assert.match(body, /<form method="post" action="\/account\/proofs\/github">/);
  assert.doesNotMatch(body, /action="\/account\/proofs\/hackernews"/);
});

test('a gist address of the identity’s account is kept with the identity, shown, and can be removed', async () => {
  const saved = await client.submit('/account/proofs/github', { proof_url: `  ${GIST}  ` });
  assert.equal(saved.res.status, 303);
  assert.equal(saved.res.headers.get('location'), '/account/proofs?msg=saved#proof-github');
  assert.equal(await proofUrlOf(t.ctx.db, await identityId('github')), GIST);
  const { body } = await client.get('/account/proofs?msg=saved');
  assert.match(body, /The proof address is saved/);
  assert.match(body, new RegExp(`name="proof_url" type="url" value="${GIST.replace(/[.]/g, '\\.')}"`));

  const removed = await client.submit('/account/proofs/github', { proof_url: '' });
  assert.equal(removed.res.status, 303);
  assert.equal(await proofUrlOf(t.ctx.db, await identityId('github')), null);
});

test('a new name for the identity drops its proof address: the gist names the old account', async () => {
  await client.submit('/account/proofs/github', { proof_url: GIST });
  assert.equal(await proofUrlOf(t.ctx.db, await identityId('github')), GIST);
  const { res } = await client.submit('/account/identities', { svc_id: 'github', usr_svc_id: 'octocat2', replace: '1' });
  assert.equal(res.status, 303);
  assert.equal(await proofUrlOf(t.ctx.db, await identityId('github')), null);
  await client.submit('/account/identities', { svc_id: 'github', usr_svc_id: 'octocat', replace: '1' });
});

test('an address that is not a gist, or another account’s gist, is refused and not kept', async () => {
  const notGist = await client.submit('/account/proofs/github', { proof_url: 'http://127.0.0.1:1/octocat/aa5a315d61ae9438b18d' });
  assert.equal(notGist.res.status, 400);
  assert.match(notGist.body, /That is not an address we can read a proof from on GitHub/);
  const theirs = await client.submit('/account/proofs/github', { proof_url: 'https://gist.github.com/mallory/aa5a315d61ae9438b18d' });
  assert.equal(theirs.res.status, 400);
  assert.match(theirs.body, /That proof is not yours on GitHub: the proof address belongs to mallory, not to octocat/);
  assert.equal(await proofUrlOf(t.ctx.db, await identityId('github')), null);
});

test('a service without an identity, or without an address method, keeps nothing', async () => {
  const none = await client.submit('/account/proofs/gitlab', { proof_url: GIST });
  assert.equal(none.res.status, 404);
  const noAddress = await client.submit('/account/proofs/hackernews', { proof_url: GIST });
  assert.equal(noAddress.res.status, 400);
  assert.equal(await proofUrlOf(t.ctx.db, await identityId('hackernews')), null);
});

test('the page and the form are the account holder’s only', async () => {
  const stranger = new SiteClient(t.baseUrl);
  const page = await stranger.get('/account/proofs');
  assert.equal(page.res.status, 303);
  assert.equal(page.res.headers.get('location'), '/login');
  const noCsrf = await client.post('/account/proofs/github', { proof_url: GIST });
  assert.notEqual(noCsrf.res.status, 303);
  assert.equal(await proofUrlOf(t.ctx.db, await identityId('github')), null);
});

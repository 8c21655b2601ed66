// return_services (SPEC §4.1): the private view needs the api_token unless the partner chose
// legacy_open_reads, and the view is named by a path segment or the query, by GET or by POST.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { updatePartner } from '../../src/repositories/partners.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { expectError, md5 } from './helpers.js';

let t: TestApp;
before(async () => {
  t = await startTestApp();
});
after(() => t.close());

test('the private view without the api_token says what to do; legacy_open_reads allows it', async () => {
  const P = await t.partner();
  await P.client.updateService('frank@example.org', 'github', 'frank');
  const res = await fetch(`${t.baseUrl}/api/return_services/${P.apiKey}/${md5('frank@example.org')}`);
  await expectError(res, 401, 'invalid_api_token', /api_token in the POST body.*profile_type=public/);
  await t.ctx.db.write((w) => updatePartner(w, P.id, { legacyOpenReads: true }, t.clock.now()));
  const open = await fetch(`${t.baseUrl}/api/return_services/${P.apiKey}/${md5('frank@example.org')}`);
  assert.equal(open.status, 200);
  assert.match(await open.text(), /<usrSvcId>frank<\/usrSvcId>/);
  // Served without proof, but the private view all the same: no shared cache may keep it.
  assert.equal(open.headers.get('cache-control'), 'private, no-store');
  assert.equal(open.headers.get('etag'), null);
  await t.user({ email: 'flora@example.org', userId: 'flora', optedIn: true });
  const shared = await fetch(`${t.baseUrl}/api/return_services/${P.apiKey}/flora/public`);
  assert.equal(shared.status, 200);
  assert.match(shared.headers.get('cache-control') ?? '', /^public, /, 'a public view still may be kept');
});

test('profile_type as path segment or query; old clients POST a token everywhere', async () => {
  const P = await t.partner();
  await t.user({ email: 'gina@example.org', userId: 'gina' });
  const paths = [
    `/api/return_services/${P.apiKey}/gina/public`,
    `/api/return_services/${P.apiKey}/gina?profile_type=public`,
    `/api/return_services/${P.apiKey}/gina/public/`,
  ];
  for (const p of paths) {
    for (const init of [undefined, { method: 'POST', body: new URLSearchParams({ api_token: P.apiToken }) }]) {
      const res = await fetch(`${t.baseUrl}${p}`, init);
      const body = await res.text();
      assert.equal(res.status, 200, `${p} ${body}`);
      assert.equal(body, '<?xml version="1.0" encoding="UTF-8"?>\n<services/>\n');
    }
  }
  await expectError(await fetch(`${t.baseUrl}/api/return_services/${P.apiKey}/gina/sideways`), 400, 'invalid_request', /profile_type/);
});

test('an answer the answer cache may keep is rendered to bytes of its own; one sent once stays its text', async () => {
  const P = await t.partner();
  await t.user({ email: 'kept@example.org', userId: 'keptbody', optedIn: true });
  // Every render the cache asks for, with what it was told and what it got back.
  const renders: { kept: boolean; payload: unknown }[] = [];
  const real = t.ctx.answers;
  const spy = Object.create(real) as typeof real;
  spy.get = (key, version, render, options) =>
    real.get(
      key,
      version,
      async (tags, kept) => {
        const value = await render(tags, kept);
        renders.push({ kept, payload: (value as { payload?: unknown }).payload });
        return value;
      },
      options,
    );
  Object.defineProperty(t.ctx, 'answers', { value: spy, configurable: true });
  try {
    const res = await fetch(`${t.baseUrl}/api/return_services/${P.apiKey}/keptbody/public`);
    assert.equal(res.status, 200);
    // The cache has room: the first render is kept, as bytes.
    assert.equal(renders.length, 1);
    assert.equal(renders[0]!.kept, true);
    assert.ok(Buffer.isBuffer(renders[0]!.payload));
    // A render the cache will not keep (as every render with ANSWER_CACHE_MB=0) is sent as the string it was rendered as, with its ETag.
    spy.get = (_key, _version, render) =>
      render(new Set(), false).then((value) => {
        renders.push({ kept: false, payload: (value as { payload?: unknown }).payload });
        return value;
      });
    const once = await fetch(`${t.baseUrl}/api/return_services/${P.apiKey}/keptbody/public`);
    assert.equal(once.status, 200);
    assert.equal(typeof renders[1]!.payload, 'string');
    assert.equal(await once.text(), await (await fetch(`${t.baseUrl}/api/return_services/${P.apiKey}/keptbody/public`)).text());
    assert.equal(once.headers.get('etag'), res.headers.get('etag'), 'the same ETag for the same answer, bytes or text');
  } finally {
    Object.defineProperty(t.ctx, 'answers', { value: real, configurable: true });
  }
});

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

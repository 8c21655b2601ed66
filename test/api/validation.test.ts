// Across the operations: every answer is well-formed XML with its JSON twin, and a POST without any
// body is a call with no fields.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { XMLParser, XMLValidator } from 'fast-xml-parser';
import { startTestApp, postForm, type TestApp } from '../helpers/app.js';
import { expectError } from './helpers.js';

let t: TestApp;
before(async () => {
  t = await startTestApp();
});
after(() => t.close());

test('every operation answers well-formed XML and its JSON twin', async () => {
  const P = await t.partner({ trusted: true });
  await t.user({ email: 'hal@example.org', userId: 'hal', discoverable: true });
  await P.client.updateService('hal', 'github', 'hal<&>"\'');
  await P.client.syncUser('hal', { email: 'hal@example.org', password: 'correct horse battery' });
  const k = P.apiKey;
  const calls: [string, Record<string, string>][] = [
    [`/api/return_services/${k}/hal`, {}],
    [`/api/return_services/${k}/hal/public`, {}],
    [`/api/service_details/${k}/github`, {}],
    [`/api/update_service/${k}/hal/twitter/hal_t`, {}],
    [`/api/return_profile/${k}/hal`, {}],
    [`/api/reverse_lookup/${k}/github/HAL<&>"'`, {}],
    [`/api/return_contacts/${k}/hal`, { contacts: 'hal@example.org,nobody@example.org' }],
    [`/api/sync_user/${k}/hal`, { email_address: 'hal@example.org', password: 'correct horse battery' }],
    [`/api/unsync_user/${k}/hal`, {}],
    [`/api/return_services/${k}/nobody_here`, {}],
  ];
  for (const [path, body] of calls) {
    const form = { api_token: P.apiToken, ...body };
    const xmlRes = await postForm(`${t.baseUrl}${path.replace(/[<>"']/g, encodeURIComponent)}`, form);
    const xml = await xmlRes.text();
    assert.equal(XMLValidator.validate(xml), true, `${path}: ${xml}`);
    if (path.includes('sync_user'))
      await postForm(`${t.baseUrl}/api/sync_user/${k}/hal`, { api_token: P.apiToken, email_address: 'hal@example.org', password: 'correct horse battery' });
    const jsonRes = await postForm(`${t.baseUrl}${path.replace(/[<>"']/g, encodeURIComponent)}`, form, { accept: 'application/json' });
    assert.equal(jsonRes.status, xmlRes.status, path);
    assert.match(jsonRes.headers.get('content-type') ?? '', /application\/json/);
    const json = await jsonRes.json();
    const parsed = new XMLParser({ parseTagValue: false, isArray: (n) => ['service', 'user', 'contact'].includes(n) }).parse(xml);
    assert.deepEqual(
      Object.keys(json),
      Object.keys(parsed).filter((k2) => k2 !== '?xml'),
      path,
    );
  }
  const lookup = await P.client.reverseLookup('github', '@HAL<&>"\'');
  assert.deepEqual(
    lookup.map((u) => u.userId),
    ['hal'],
  );
});

test('a POST without any body is "no fields", not a malformed body', async () => {
  const P = await t.partner();
  const res = await fetch(`${t.baseUrl}/api/service_details/${P.apiKey}/github`, { method: 'POST' });
  assert.equal(res.status, 200);
  const noToken = await fetch(`${t.baseUrl}/api/update_service/${P.apiKey}/someone/github/x`, { method: 'POST' });
  await expectError(noToken, 401, 'invalid_api_token');
});

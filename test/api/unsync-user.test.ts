// unsync_user (SPEC §4.6): the optional credentials are checked when given, and a POST to the
// widget's path without display_sync is unsync_user too.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { errorCode as code, postForm, startTestApp, type TestApp } from '../helpers/app.js';

let t: TestApp;
before(async () => {
  t = await startTestApp();
});
after(() => t.close());

test('unsync_user checks optional credentials and also answers on the widget path', async () => {
  const P = await t.partner();
  const u = await t.user({ email: 'lea@example.org', userId: 'lea' });
  await t.user({ email: 'max@example.org', userId: 'maxx' });
  await P.client.syncUser('lea', { email: 'lea@example.org', password: u.password });
  assert.equal(await code(P.client.unsyncUser('lea', { email: 'max@example.org', password: u.password })), 'invalid_credentials');
  const res = await postForm(`${t.baseUrl}/api/service_collection_widget/${P.apiKey}/lea/`, { api_token: P.apiToken });
  assert.equal(res.status, 200);
  assert.equal(await res.text(), '<?xml version="1.0" encoding="UTF-8"?>\n<user_identifier>lea</user_identifier>\n');
  assert.equal(await code(P.client.unsyncUser('lea')), 'not_found');
});

describe('the widget path without display_sync', () => {
  test('POST is still unsync_user (SPEC §4.6), answering XML', async () => {
    const P = await t.partner();
    await t.user({ email: 'wanda@example.com', userId: 'wanda' }); // someone this partner has not linked
    const res = await fetch(`${t.baseUrl}/api/service_collection_widget/${P.apiKey}/wanda`, {
      method: 'POST',
      body: new URLSearchParams({ api_token: P.apiToken }),
    });
    assert.equal(res.status, 404);
    assert.equal(res.headers.get('content-type'), 'application/xml; charset=utf-8');
    assert.match(await res.text(), /<code>not_found<\/code>/);
  });
});

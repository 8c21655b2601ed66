// Bad input gets its SPEC error and changes nothing.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { XMLParser, XMLValidator } from 'fast-xml-parser';
import { updatePartner } from '../../src/repositories/partners.js';
import { startTestApp, postForm, type TestApp } from '../helpers/app.js';

const md5 = (s: string) => createHash('md5').update(s).digest('hex');
let t: TestApp;
before(async () => {
  t = await startTestApp();
});
after(() => t.close());

async function snapshot() {
  const db = t.ctx.db.kysely;
  return {
    partner: await db.selectFrom('partner_identities').selectAll().orderBy('id').execute(),
    central: await db.selectFrom('central_identities').selectAll().orderBy('id').execute(),
    links: await db.selectFrom('links').selectAll().orderBy('id').execute(),
    users: await db.selectFrom('users').select(['id', 'opted_in', 'pro']).orderBy('id').execute(),
  };
}

async function expectError(res: Response, status: number, code: string, message?: RegExp) {
  const body = await res.text();
  assert.equal(res.status, status, body);
  assert.equal(XMLValidator.validate(body), true);
  const err = new XMLParser().parse(body).error;
  assert.equal(err.code, code, body);
  if (message) assert.match(String(err.message), message);
}

test('bad writes get their error and leave the data as it was', async () => {
  const P = await t.partner();
  const who = md5('erin@example.org');
  await P.client.updateService(who, 'github', 'erin');
  const before = await snapshot();
  const url = (svc: string, id = who) => `${t.baseUrl}/api/update_service/${P.apiKey}/${encodeURIComponent(id)}/${svc}`;
  await expectError(await postForm(url('nosuchsvc'), { api_token: P.apiToken, usrSvcId: 'x' }), 404, 'not_found', /^Service Not Found$/);
  await expectError(await postForm(url('github'), { api_token: P.apiToken, usrSvcId: 'x'.repeat(256) }), 400, 'invalid_request', /255/);
  await expectError(await postForm(url('github'), { api_token: P.apiToken, usrSvcId: 'bad\u0007id' }), 400, 'invalid_request', /control/);
  await expectError(await postForm(url('github'), { api_token: P.apiToken, usrSvcId: 'bad\nid' }), 400, 'invalid_request', /control/);
  await expectError(await postForm(url('github', 'not an identifier!'), { api_token: P.apiToken, usrSvcId: 'x' }), 400, 'invalid_request', /user_identifier/);
  await expectError(await postForm(url('github', 'ab'), { api_token: P.apiToken, usrSvcId: 'x' }), 400, 'invalid_request', /user_identifier/);
  await expectError(await postForm(url('github'), { usrSvcId: 'x' }), 401, 'invalid_api_token');
  await expectError(await postForm(url('github'), { api_token: 'wrong', usrSvcId: 'x' }), 401, 'invalid_api_token');
  await expectError(await postForm(url('github'), { api_token: P.apiToken, usrSvcId: 'x', verified: 'TRUE' }), 400, 'invalid_request', /verified/);
  await expectError(await postForm(url('github'), { api_token: P.apiToken, usrSvcId: 'x', partner_id: '2' }), 400, 'invalid_request', /partner_id/);
  await expectError(
    await fetch(`${url('github')}?verified=TRUE`, { method: 'POST', body: new URLSearchParams({ api_token: P.apiToken, usrSvcId: 'x' }) }),
    400,
    'invalid_request',
    /verified/,
  );
  await expectError(await postForm(url('github'), { api_token: P.apiToken, usrSvcId: 'x'.repeat(70_000) }), 413, 'payload_too_large');
  await expectError(
    await fetch(url('github'), { method: 'POST', body: '{"api_token":', headers: { 'content-type': 'application/json' } }),
    400,
    'invalid_request',
  );
  await expectError(
    await fetch(url('github'), {
      method: 'POST',
      body: JSON.stringify({ api_token: P.apiToken, usrSvcId: 5 }),
      headers: { 'content-type': 'application/json' },
    }),
    400,
    'invalid_request',
    /usrSvcId/,
  );
  await expectError(
    await fetch(`${t.baseUrl}/api/update_service/${P.apiKey}/${'a'.repeat(300)}/github`, {
      method: 'POST',
      body: new URLSearchParams({ api_token: P.apiToken, usrSvcId: 'x' }),
    }),
    400,
    'invalid_request',
    /256/,
  );
  await t.ctx.db.write((w) => updatePartner(w, P.id, { suspended: true }, t.clock.now()));
  await expectError(await postForm(url('github'), { api_token: P.apiToken, usrSvcId: 'x' }), 403, 'forbidden');
  await t.ctx.db.write((w) => updatePartner(w, P.id, { suspended: false }, t.clock.now()));
  assert.deepEqual(await snapshot(), before);
});

test('the private view without the api_token says what to do; legacy_open_reads allows it', async () => {
  const P = await t.partner();
  await P.client.updateService('frank@example.org', 'github', 'frank');
  const res = await fetch(`${t.baseUrl}/api/return_services/${P.apiKey}/${md5('frank@example.org')}`);
  await expectError(res, 401, 'invalid_api_token', /api_token in the POST body.*profile_type=public/);
  await t.ctx.db.write((w) => updatePartner(w, P.id, { legacyOpenReads: true }, t.clock.now()));
  const open = await fetch(`${t.baseUrl}/api/return_services/${P.apiKey}/${md5('frank@example.org')}`);
  assert.equal(open.status, 200);
  assert.match(await open.text(), /<usrSvcId>frank<\/usrSvcId>/);
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

test('a widget signature in the URL stays out of the logs', async () => {
  const P = await t.partner();
  const sig = 'f'.repeat(64);
  await fetch(`${t.baseUrl}/api/service_collection_widget/${P.apiKey}/someone/TRUE?exp=1&sig=${sig}`);
  assert.ok(!t.logs.join('').includes(sig));
});

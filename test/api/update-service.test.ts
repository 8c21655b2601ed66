// update_service (SPEC §4.3): the refusals, each with its error, that leave the data as it was; and
// a profile URL in the body instead of the svcId path segment, answered as with the svcId, while a
// URL that fits no service, or several, is refused and says why.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { updatePartner } from '../../src/repositories/partners.js';
import { errorCode, postForm, startTestApp, type TestApp } from '../helpers/app.js';
import { expectError, md5 } from './helpers.js';

let t: TestApp;
let P: Awaited<ReturnType<TestApp['partner']>>;
before(async () => {
  t = await startTestApp();
  P = await t.partner();
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

const person = 'url.person@example.org';
const call = (fields: Record<string, string>, path = '') =>
  postForm(
    `${t.baseUrl}/api/update_service/${P.apiKey}/${encodeURIComponent(person)}${path}`,
    { api_token: P.apiToken, ...fields },
    { accept: 'application/json' },
  );

test('a profile URL names the service and identifier, answered as with the svcId', async () => {
  const res = await call({ url: 'https://www.github.com/Alice-Url/?tab=repositories' });
  assert.equal(res.status, 200);
  assert.deepEqual(await res.json(), { service: { svcId: 'github', usrSvcId: 'Alice-Url' } });
  const xml = await postForm(`${t.baseUrl}/api/update_service/${P.apiKey}/${encodeURIComponent(person)}/`, {
    api_token: P.apiToken,
    url: 'news.ycombinator.com/user?id=pg',
  });
  assert.equal(xml.status, 200);
  assert.match(await xml.text(), /<service><svcId>hackernews<\/svcId><usrSvcId>pg<\/usrSvcId><\/service>/);
  const services = await P.client.returnServices(person);
  assert.deepEqual(
    services.map((s) => [s.svcId, s.usrSvcId, s.url]),
    [
      ['github', 'Alice-Url', 'https://www.github.com/Alice-Url'],
      ['hackernews', 'pg', 'https://news.ycombinator.com/user?id=pg'],
    ],
  );
});

test('a URL that fits no service is not_found; one that fits several says which', async () => {
  const none = await call({ url: 'https://unknown.example/someone' });
  assert.equal(none.status, 404);
  assert.deepEqual(await none.json(), { error: { code: 'not_found', message: 'Service Not Found' } });
  const ambiguous = await call({ url: 'https://chaos.social/@bob' });
  assert.equal(ambiguous.status, 400);
  const body = (await ambiguous.json()) as { error: { code: string; message: string } };
  assert.equal(body.error.code, 'invalid_request');
  assert.match(body.error.message, /chaos, chaossocial/);
});

test('url and svcId are one or the other; the token is still required', async () => {
  const both = await call({ url: 'https://github.com/alice' }, '/github');
  assert.equal(both.status, 400);
  const withId = await call({ url: 'https://github.com/alice', usrSvcId: 'bob' });
  assert.equal(withId.status, 400);
  const neither = await call({});
  assert.equal(neither.status, 400);
  assert.match(((await neither.json()) as { error: { message: string } }).error.message, /svcId is missing/);
  const noToken = await postForm(`${t.baseUrl}/api/update_service/${P.apiKey}/${encodeURIComponent(person)}`, { url: 'https://github.com/alice' });
  assert.equal(noToken.status, 401);
  // Nothing changed by any refused call.
  assert.deepEqual(
    (await P.client.returnServices(person)).map((s) => s.usrSvcId),
    ['Alice-Url', 'pg'],
  );
});

test('the OpenAPI document describes the url form', async () => {
  const doc = (await (await fetch(`${t.baseUrl}/api/openapi.json`)).json()) as { paths: Record<string, { post?: { requestBody?: unknown } }> };
  const op = doc.paths['/api/update_service/{api_key}/{user_identifier}'];
  assert.ok(op?.post, 'the path without svcId is documented');
  assert.match(JSON.stringify(op.post.requestBody), /"url"/);
});

test('@idsvc/client sends the url= form: updateServiceFromUrl', async () => {
  const who = 'client.url@example.org';
  assert.deepEqual(await P.client.updateServiceFromUrl(who, 'https://gitlab.com/Client-Url'), { svcId: 'gitlab', usrSvcId: 'Client-Url' });
  assert.deepEqual(
    (await P.client.returnServices(who)).map((s) => [s.svcId, s.usrSvcId]),
    [['gitlab', 'Client-Url']],
  );
  assert.equal(await errorCode(P.client.updateServiceFromUrl(who, 'https://unknown.example/someone')), 'not_found');
  assert.equal(await errorCode(P.client.updateServiceFromUrl(who, 'https://chaos.social/@bob')), 'invalid_request');
});

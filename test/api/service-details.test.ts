// service_details (SPEC §4.2): the catalogue, whole or one service, in three orders and with a limit;
// its errors, its ETag and conditional GETs, an operator's change shown without a restart, GET and POST.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { XMLParser, XMLValidator } from 'fast-xml-parser';
import { startTestApp, type TestApp } from '../helpers/app.js';

let t: TestApp;
let key: string;
before(async () => {
  t = await startTestApp();
  key = (await t.partner()).apiKey;
});
after(() => t.close());

const FIELDS = ['svcId', 'svcName', 'svcURL', 'svcLeftURL', 'svcRightURL', 'svcMobileURL', 'svcIphoneURL', 'svcFavicon', 'svcIcon', 'svcIphoneIcon'];
const parser = new XMLParser({ isArray: (name) => name === 'service' });

async function get(path: string, headers: Record<string, string> = {}) {
  const res = await fetch(`${t.baseUrl}${path}`, { headers });
  return { res, body: await res.text() };
}

test('all services: 450 entries (the enabled ones), each with the ten fields in order, sorted by name', async () => {
  const { res, body } = await get(`/api/service_details/${key}`);
  assert.equal(res.status, 200);
  assert.match(res.headers.get('content-type') ?? '', /^application\/xml; charset=utf-8/);
  assert.ok(body.startsWith('<?xml version="1.0" encoding="UTF-8"?>'));
  assert.equal(XMLValidator.validate(body), true);
  const services = parser.parse(body).services.service as Record<string, string>[];
  assert.equal(services.length, 450);
  const first = body.slice(body.indexOf('<service>'), body.indexOf('</service>'));
  const order = [...first.matchAll(/<(\w+)[ />]/g)].map((m) => m[1]).filter((n) => n !== 'service');
  assert.deepEqual(order, FIELDS);
  const names = services.map((s) => String(s.svcName).toLowerCase());
  assert.deepEqual(
    names,
    [...names].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)),
  );
  assert.equal(res.headers.get('x-idsvc-api-version'), '1');
  assert.ok(res.headers.get('x-request-id'));
  assert.ok(res.headers.get('ratelimit-limit'));
});

test('one service, and its JSON twin', async () => {
  const { body } = await get(`/api/service_details/${key}/github`);
  const svc = parser.parse(body).services.service[0];
  assert.equal(svc.svcId, 'github');
  assert.equal(svc.svcName, 'GitHub');
  const json = await (await fetch(`${t.baseUrl}/api/service_details/${key}/github?format=json`)).json();
  assert.deepEqual(Object.keys(json.services[0]), FIELDS);
  assert.equal(json.services[0].svcLeftURL, 'https://www.github.com/');
  const viaAccept = await (await fetch(`${t.baseUrl}/api/service_details/${key}/github`, { headers: { accept: 'application/json' } })).json();
  assert.deepEqual(viaAccept, json);
});

test('orders and limits', async () => {
  const c = (await t.partner()).client;
  assert.equal((await c.serviceDetails({ order: 'popularity', limit: 5 })).length, 5);
  // Popularity counts opted-in users: give one service two users and another one.
  const p = await t.partner();
  await t.user({ email: 'a@example.org', userId: 'aaa' });
  await t.user({ email: 'b@example.org', userId: 'bbb' });
  await t.user({ email: 'c@example.org', userId: 'ccc', optedIn: false });
  for (const [who, pw] of [
    ['a@example.org', 'aaa'],
    ['b@example.org', 'bbb'],
    ['c@example.org', 'ccc'],
  ] as const) {
    await p.client.updateService(who, 'twitter', pw);
    await p.client.syncUser(who, { email: who, password: 'correct horse battery' });
  }
  await p.client.updateService('a@example.org', 'youtube', 'x');
  await p.client.updateService('c@example.org', 'youtube', 'x');
  await p.client.updateService('c@example.org', 'reddit', 'x');
  const top = await c.serviceDetails({ order: 'popularity', limit: 3 });
  // Then, with no users, the shipped order of what people most often have (catalogue/popularity.json).
  assert.deepEqual(
    top.map((s) => s.svcId),
    ['twitter', 'youtube', 'instagram'],
  );
  const combined = await c.serviceDetails({ order: 'combined' });
  assert.equal(combined.length, 450);
  assert.deepEqual(
    combined.slice(0, 2).map((s) => s.svcId),
    ['twitter', 'youtube'],
  );
  assert.equal(
    combined[10]?.svcName,
    (await c.serviceDetails({ order: 'alphanumeric' })).filter((s) => !combined.slice(0, 10).some((x) => x.svcId === s.svcId))[0]?.svcName,
  );
  assert.equal((await c.serviceDetails({ order: 'alphanumeric', limit: 1000 })).length, 450);
});

test('errors: status and code in XML and JSON', async () => {
  const cases: [string, number, string][] = [
    [`/api/service_details/${key}/alphanumeric/0`, 400, 'invalid_request'],
    [`/api/service_details/${key}/alphanumeric/1001`, 400, 'invalid_request'],
    [`/api/service_details/${key}/alphanumeric/x`, 400, 'invalid_request'],
    [`/api/service_details/${key}/github/5`, 400, 'invalid_request'],
    [`/api/service_details/${key}/sideways/5`, 400, 'invalid_request'],
    [`/api/service_details/${key}/nosuchsvc`, 404, 'not_found'],
    [`/api/service_details/badkey/github`, 401, 'invalid_api_key'],
    [`/api/service_details/${'z'.repeat(32)}/github`, 401, 'invalid_api_key'],
  ];
  for (const [path, status, code] of cases) {
    const xml = await get(path);
    assert.equal(xml.res.status, status, path);
    assert.equal(XMLValidator.validate(xml.body), true);
    assert.equal(new XMLParser().parse(xml.body).error.code, code, path);
    assert.ok(xml.res.headers.get('x-request-id'));
    const json = await get(path, { accept: 'application/json' });
    assert.equal(json.res.status, status);
    assert.equal(JSON.parse(json.body).error.code, code);
  }
});

test('ETag and conditional requests', async () => {
  const { res } = await get(`/api/service_details/${key}`);
  const etag = res.headers.get('etag');
  assert.ok(etag);
  const again = await get(`/api/service_details/${key}`, { 'if-none-match': etag! });
  assert.equal(again.res.status, 304);
});

test('an operator change to the catalogue shows without a restart', async () => {
  const { setServiceDisabled } = await import('../../src/repositories/catalogue.js');
  await t.ctx.db.write((w) => setServiceDisabled(w, 'github', true, t.clock.now()));
  assert.equal((await get(`/api/service_details/${key}/github`)).res.status, 404);
  const all = parser.parse((await get(`/api/service_details/${key}`)).body).services.service;
  assert.equal(all.length, 449);
  await t.ctx.db.write((w) => setServiceDisabled(w, 'github', false, t.clock.now()));
  assert.equal((await get(`/api/service_details/${key}/github`)).res.status, 200);
});

test('GET and POST, trailing slash, form and JSON bodies', async () => {
  const p = await t.partner();
  assert.equal((await get(`/api/service_details/${p.apiKey}/github/`)).res.status, 200);
  const form = await fetch(`${t.baseUrl}/api/service_details/${p.apiKey}/github`, { method: 'POST', body: new URLSearchParams({ api_token: p.apiToken }) });
  assert.equal(form.status, 200);
  const json = await fetch(`${t.baseUrl}/api/service_details/${p.apiKey}/github`, {
    method: 'POST',
    body: JSON.stringify({ api_token: p.apiToken }),
    headers: { 'content-type': 'application/json' },
  });
  assert.equal(json.status, 200);
  const wrong = await fetch(`${t.baseUrl}/api/service_details/${p.apiKey}/github`, { method: 'POST', body: new URLSearchParams({ api_token: 'nope' }) });
  assert.equal(wrong.status, 401);
});

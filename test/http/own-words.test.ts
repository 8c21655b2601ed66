// Every answer in the API's own words (issue 20): whatever layer refuses a request (the router, a
// body parser, Node's HTTP parser), the client gets the API's error document on /api paths (XML, or
// JSON by SPEC §8's rules), the widget's error script on the widget's path, the site's error page
// elsewhere, always with X-Request-Id, and nothing of what it sent echoed back.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { rawRequest, type RawAnswer } from '../helpers/raw-http.js';
import { assertWellFormed, errorOf, type AnswerKind } from '../helpers/well-formed.js';

const EMAIL = 'alice@example.org';
const LONG = `${'x'.repeat(2100)}${EMAIL}`;
const REQUEST_ID = /^[A-Za-z0-9._-]{1,64}$/;

let t: TestApp;
let key: string;
before(async () => {
  t = await startTestApp();
  key = (await t.partner()).apiKey;
});
after(() => t.close());

interface Expected {
  kind: AnswerKind;
  status: number;
  /** The SPEC §6 code (XML and JSON answers), or the code the widget script reports. */
  code: string;
  /** An /api answer that went through the request counting (RateLimit-*). */
  counted?: boolean;
}

const req = (method: string, target: string, headers: Record<string, string> = {}) =>
  `${method} ${target} HTTP/1.1\r\nHost: localhost\r\n${Object.entries({ Connection: 'close', ...headers })
    .map(([k, v]) => `${k}: ${v}\r\n`)
    .join('')}\r\n`;

function check(name: string, a: RawAnswer, e: Expected): void {
  const where = `${name}: ${a.status} ${a.headers['content-type']} ${a.body.slice(0, 200)}`;
  assert.ok(a.complete, `${name}: the answer is incomplete (${a.error ?? 'no error'})`);
  assert.equal(a.status, e.status, where);
  const { kind, parsed } = assertWellFormed(a.headers['content-type'], a.status, a.body);
  assert.equal(kind, e.kind, where);
  assert.match(a.headers['x-request-id'] ?? '', REQUEST_ID, `${name}: no X-Request-Id`);
  assert.equal(a.headers['x-content-type-options'], 'nosniff', where);
  if (kind === 'xml' || kind === 'json') assert.equal(errorOf(kind, parsed)?.code, e.code, where);
  if (kind === 'script') assert.ok(a.body.includes(`"${e.code}"`) && a.body.includes('console.error'), where);
  if (kind === 'html') assert.ok(a.headers['content-security-policy'], `${name}: a site page without its security headers`);
  if (kind !== 'html') {
    assert.equal(a.headers['x-idsvc-api-version'], '1', `${name}: no X-Idsvc-Api-Version`);
    if (e.counted !== false)
      for (const h of ['ratelimit-limit', 'ratelimit-remaining', 'ratelimit-reset']) assert.match(a.headers[h] ?? '', /^\d+$/, `${name}: no ${h}`);
  }
  // Nothing the client sent comes back: not the address, not the filler.
  const everything = `${JSON.stringify(a.headers)}${a.body}`;
  assert.ok(
    !everything.includes(EMAIL) && !everything.includes('alice%40') && !everything.includes('x'.repeat(64)) && !everything.includes('y'.repeat(64)),
    `${name} echoes input: ${everything.slice(0, 400)}`,
  );
}

test('a path segment over the router limit: 400 invalid_request in the format of its path', async () => {
  const api = `/api/return_services/${key}/${LONG}`;
  check('414 xml', await rawRequest(t.baseUrl, req('GET', api)), { kind: 'xml', status: 400, code: 'invalid_request' });
  check('414 json by Accept', await rawRequest(t.baseUrl, req('GET', api, { Accept: 'application/json' })), {
    kind: 'json',
    status: 400,
    code: 'invalid_request',
  });
  check('414 json by ?format', await rawRequest(t.baseUrl, req('GET', `${api}?format=json`)), { kind: 'json', status: 400, code: 'invalid_request' });
  check('414 POST', await rawRequest(t.baseUrl, `${req('POST', api, { 'Content-Type': 'application/x-www-form-urlencoded', 'Content-Length': '3' })}a=b`), {
    kind: 'xml',
    status: 400,
    code: 'invalid_request',
  });
  check('414 widget', await rawRequest(t.baseUrl, req('GET', `/api/service_collection_widget/${key}/${LONG}/TRUE`)), {
    kind: 'script',
    status: 400,
    code: 'invalid_request',
  });
  check('414 site', await rawRequest(t.baseUrl, req('GET', `/u/${LONG}`)), { kind: 'html', status: 400, code: 'invalid_request' });
  const said = await rawRequest(t.baseUrl, req('GET', api));
  assert.match(said.body, /path segment is longer than 256 characters/);
});

test('a malformed percent-encoding: 400 invalid_request in the format of its path', async () => {
  check('bad url xml', await rawRequest(t.baseUrl, req('GET', `/api/return_services/${key}/%E0%A4%A-${EMAIL}`)), {
    kind: 'xml',
    status: 400,
    code: 'invalid_request',
  });
  check('bad url json', await rawRequest(t.baseUrl, req('GET', `/api/return_services/${key}/%E0%A4%A-${EMAIL}?format=json`)), {
    kind: 'json',
    status: 400,
    code: 'invalid_request',
  });
  check('bad url widget', await rawRequest(t.baseUrl, req('GET', `/api/service_collection_widget/${key}/%E0%A4%A-${EMAIL}/TRUE`)), {
    kind: 'script',
    status: 400,
    code: 'invalid_request',
  });
  check('bad url site', await rawRequest(t.baseUrl, req('GET', `/u/%E0%A4%A-${EMAIL}`)), { kind: 'html', status: 400, code: 'invalid_request' });
});

test("what Node's HTTP parser refuses is answered in the API's words with a fresh request id", async () => {
  const fill = { 'X-Fill': `${'y'.repeat(20_000)}${EMAIL}` };
  const api = `/api/return_services/${key}/alice`;
  const parserLevel = { counted: false } as const;
  check('431 xml', await rawRequest(t.baseUrl, req('GET', api, fill)), { kind: 'xml', status: 400, code: 'invalid_request', ...parserLevel });
  check('431 json', await rawRequest(t.baseUrl, req('GET', api, { Accept: 'application/json', ...fill })), {
    kind: 'json',
    status: 400,
    code: 'invalid_request',
    ...parserLevel,
  });
  check('431 json by ?format', await rawRequest(t.baseUrl, req('GET', `${api}?format=json`, fill)), {
    kind: 'json',
    status: 400,
    code: 'invalid_request',
    ...parserLevel,
  });
  check('431 widget', await rawRequest(t.baseUrl, req('GET', `/api/service_collection_widget/${key}/alice/TRUE`, fill)), {
    kind: 'script',
    status: 400,
    code: 'invalid_request',
    ...parserLevel,
  });
  check('431 site', await rawRequest(t.baseUrl, req('GET', '/login', fill)), { kind: 'html', status: 400, code: 'invalid_request' });
  const said = await rawRequest(t.baseUrl, req('GET', api, fill));
  assert.match(said.body, /headers are larger than \d+ KiB/);
  check('bad Content-Length', await rawRequest(t.baseUrl, req('POST', api, { 'Content-Length': 'abc' })), {
    kind: 'xml',
    status: 400,
    code: 'invalid_request',
    ...parserLevel,
  });
  check('not HTTP', await rawRequest(t.baseUrl, `${EMAIL} what\r\n\r\n`), { kind: 'xml', status: 400, code: 'invalid_request', ...parserLevel });
  check('unknown method', await rawRequest(t.baseUrl, req('FROB', api)), { kind: 'xml', status: 400, code: 'invalid_request', ...parserLevel });
  check('CONNECT', await rawRequest(t.baseUrl, req('CONNECT', api)), { kind: 'xml', status: 400, code: 'invalid_request', ...parserLevel });
  check('CONNECT authority', await rawRequest(t.baseUrl, req('CONNECT', 'example.org:443')), {
    kind: 'xml',
    status: 400,
    code: 'invalid_request',
    ...parserLevel,
  });
});

test('body parser refusals on the API: the API error document, counted, never echoing the type or the body', async () => {
  const api = `/api/update_service/${key}/alice/github`;
  const post = (headers: Record<string, string>, body: string) =>
    rawRequest(t.baseUrl, req('POST', api, { 'Content-Length': String(Buffer.byteLength(body)), ...headers }) + body);
  check('unsupported type', await post({ 'Content-Type': `application/${EMAIL}` }, 'hello'), { kind: 'xml', status: 400, code: 'invalid_request' });
  check('multipart', await post({ 'Content-Type': 'multipart/form-data; boundary=x' }, '--x--'), { kind: 'xml', status: 400, code: 'invalid_request' });
  check('text', await post({ 'Content-Type': 'text/plain' }, EMAIL), { kind: 'xml', status: 400, code: 'invalid_request' });
  check('bad json', await post({ 'Content-Type': 'application/json' }, `{"api_token": "${EMAIL}`), { kind: 'xml', status: 400, code: 'invalid_request' });
  check('bad json, json', await post({ 'Content-Type': 'application/json', Accept: 'application/json' }, `{"api_token": "${EMAIL}`), {
    kind: 'json',
    status: 400,
    code: 'invalid_request',
  });
  check('json array', await post({ 'Content-Type': 'application/json' }, `["${EMAIL}"]`), { kind: 'xml', status: 400, code: 'invalid_request' });
  check(
    'bad json, widget',
    await rawRequest(
      t.baseUrl,
      `${req('POST', `/api/service_collection_widget/${key}/alice/TRUE`, { 'Content-Type': 'application/json', 'Content-Length': '2' })}{x`,
    ),
    { kind: 'script', status: 400, code: 'invalid_request' },
  );
  check('413', await post({ 'Content-Type': 'application/x-www-form-urlencoded' }, `a=${'y'.repeat(70_000)}`), {
    kind: 'xml',
    status: 413,
    code: 'payload_too_large',
  });
  check('unknown method', await rawRequest(t.baseUrl, req('DELETE', api)), { kind: 'xml', status: 404, code: 'not_found' });
  check('no such operation', await rawRequest(t.baseUrl, req('GET', `/api/nope/${EMAIL}`)), { kind: 'xml', status: 404, code: 'not_found' });
  const text = await post({ 'Content-Type': 'text/plain' }, EMAIL);
  assert.match(text.body, /send application\/x-www-form-urlencoded or application\/json/);
});

test('the site answers its own error page for parser refusals on its forms', async () => {
  const post = (path: string, headers: Record<string, string>, body: string) =>
    rawRequest(t.baseUrl, req('POST', path, { 'Content-Length': String(Buffer.byteLength(body)), ...headers }) + body);
  check('site bad json', await post('/login', { 'Content-Type': 'application/json' }, `{"email": "${EMAIL}`), {
    kind: 'html',
    status: 400,
    code: 'invalid_request',
  });
  check('site 413', await post('/signup', { 'Content-Type': 'application/x-www-form-urlencoded' }, `a=${'y'.repeat(70_000)}`), {
    kind: 'html',
    status: 413,
    code: 'payload_too_large',
  });
  check('site unknown page', await rawRequest(t.baseUrl, req('GET', `/nope/${EMAIL}`)), { kind: 'html', status: 404, code: 'not_found' });
});

test('the e-mail address in an over-long path stays out of the logs', async () => {
  await rawRequest(t.baseUrl, req('GET', `/api/return_services/${key}/${LONG}`));
  await rawRequest(t.baseUrl, req('GET', `/api/return_services/${key}/alice`, { 'X-Fill': `${'y'.repeat(20_000)}${EMAIL}` }));
  assert.ok(!t.logs.join('').includes(EMAIL));
});

test('a NUL character in a path, query or body is invalid_request on both databases (PostgreSQL answered 500)', async () => {
  const P = await t.partner();
  const api = (path: string, init?: RequestInit) => fetch(`${t.baseUrl}/api/${path}`, init);
  const cases: [string, Promise<Response>, AnswerKind][] = [
    ['public profile', fetch(`${t.baseUrl}/u/alice%00`), 'html'],
    ['reverse_lookup path', api(`reverse_lookup/${P.apiKey}/github/a%00`), 'xml'],
    [
      'reverse_lookup body',
      api(`reverse_lookup/${P.apiKey}/github/a`, { method: 'POST', body: new URLSearchParams({ api_token: P.apiToken, usrSvcId: 'a\u0000' }) }),
      'xml',
    ],
    ['query', api(`service_details/${P.apiKey}/github?format=x%00`), 'xml'],
    [
      'JSON body, json answer',
      api(`return_contacts/${P.apiKey}/alice?format=json`, {
        method: 'POST',
        body: JSON.stringify({ api_token: P.apiToken, contacts: 'a\u0000@example.org' }),
        headers: { 'content-type': 'application/json' },
      }),
      'json',
    ],
    ['widget', api(`service_collection_widget/${P.apiKey}/a%00/TRUE`), 'script'],
    ['site form', fetch(`${t.baseUrl}/login`, { method: 'POST', body: new URLSearchParams({ login: 'a\u0000', password: 'x'.repeat(10) }) }), 'html'],
  ];
  for (const [what, call, kind] of cases) {
    const res = await call;
    const body = await res.text();
    assert.equal(res.status, 400, `${what}: ${body.slice(0, 200)}`);
    const answer = assertWellFormed(res.headers.get('content-type'), res.status, body);
    assert.equal(answer.kind, kind, what);
    if (kind === 'xml' || kind === 'json') assert.equal(errorOf(answer.kind, answer.parsed)?.code, 'invalid_request', what);
    assert.match(body, /NUL character/, what);
  }
});

test('a deeply nested JSON body is invalid_request, with no error in the log (it overflowed the stack: 500)', async () => {
  const P = await t.partner();
  const nestedArray = `${'['.repeat(30_000)}${']'.repeat(30_000)}`;
  const nestedObject = `${'{"a":'.repeat(10_000)}1${'}'.repeat(10_000)}`;
  const logsBefore = t.logs.length;
  const json = { 'content-type': 'application/json' };
  const cases: [string, Promise<Response>, AnswerKind][] = [
    ['API, arrays', fetch(`${t.baseUrl}/api/return_services/${P.apiKey}/alice`, { method: 'POST', body: nestedArray, headers: json }), 'xml'],
    [
      'API, objects, json answer',
      fetch(`${t.baseUrl}/api/return_contacts/${P.apiKey}/alice?format=json`, { method: 'POST', body: nestedObject, headers: json }),
      'json',
    ],
    ['site form', fetch(`${t.baseUrl}/signup`, { method: 'POST', body: nestedObject, headers: json }), 'html'],
  ];
  for (const [what, call, kind] of cases) {
    const res = await call;
    const body = await res.text();
    assert.equal(res.status, 400, `${what}: ${body.slice(0, 200)}`);
    const answer = assertWellFormed(res.headers.get('content-type'), res.status, body);
    assert.equal(answer.kind, kind, what);
    if (kind === 'xml' || kind === 'json') assert.equal(errorOf(answer.kind, answer.parsed)?.code, 'invalid_request', what);
    assert.match(body, /nested more than 16 levels/, what);
  }
  const errors = t.logs.slice(logsBefore).filter((line) => (JSON.parse(line) as { level: number }).level >= 50);
  assert.deepEqual(errors, []);
});

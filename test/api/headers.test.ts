// Issue 14.16: every answer under /api carries RateLimit-* and X-Idsvc-Api-Version, the refusals
// too (schema 400s, unknown-route 404s, 413s), and every one of them counts against the limits.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { updatePartner } from '../../src/repositories/partners.js';
import { startTestApp, postForm, type TestApp } from '../helpers/app.js';

let t: TestApp;
before(async () => {
  t = await startTestApp({ RATE_LIMIT_PER_ADDRESS: '1000' });
});
after(() => t.close());

function assertApiHeaders(res: Response, what: string): { limit: number; remaining: number } {
  assert.equal(res.headers.get('x-idsvc-api-version'), '1', `${what}: X-Idsvc-Api-Version`);
  assert.match(res.headers.get('x-request-id') ?? '', /^[A-Za-z0-9._-]{1,64}$/, `${what}: X-Request-Id`);
  for (const h of ['ratelimit-limit', 'ratelimit-remaining', 'ratelimit-reset'])
    assert.match(res.headers.get(h) ?? '', /^\d+$/, `${what}: ${h} is ${res.headers.get(h)}`);
  return { limit: Number(res.headers.get('ratelimit-limit')), remaining: Number(res.headers.get('ratelimit-remaining')) };
}

test('refusals on the API carry RateLimit-* and X-Idsvc-Api-Version', async () => {
  const P = await t.partner();
  const base = `${t.baseUrl}/api`;
  const cases: [string, Promise<Response>, number][] = [
    [
      'schema 400 (unknown body field)',
      postForm(`${base}/update_service/${P.apiKey}/alice/github`, { api_token: P.apiToken, usrSvcId: 'a', verified: 'TRUE' }),
      400,
    ],
    ['schema 400 (unknown query field)', fetch(`${base}/service_details/${P.apiKey}/github?nope=1`), 400],
    ['schema 400 (segment over 256)', fetch(`${base}/return_services/${P.apiKey}/${'a'.repeat(300)}`), 400],
    ['unknown-route 404', fetch(`${base}/no_such_operation/${P.apiKey}`), 404],
    ['unknown method 404', fetch(`${base}/service_details/${P.apiKey}/github`, { method: 'PUT' }), 404],
    ['413', postForm(`${base}/update_service/${P.apiKey}/alice/github`, { api_token: P.apiToken, usrSvcId: 'x'.repeat(70_000) }), 413],
    ['bad JSON', fetch(`${base}/update_service/${P.apiKey}/alice/github`, { method: 'POST', body: '{', headers: { 'content-type': 'application/json' } }), 400],
    [
      'unsupported Content-Type',
      fetch(`${base}/update_service/${P.apiKey}/alice/github`, { method: 'POST', body: 'x', headers: { 'content-type': 'application/octet-stream' } }),
      400,
    ],
    ['credentials in the query', fetch(`${base}/service_details/${P.apiKey}/github?api_token=x`), 400],
    ['over-long segment', fetch(`${base}/return_services/${P.apiKey}/${'a'.repeat(3000)}`), 400],
    ['malformed URL', fetch(`${base}/return_services/${P.apiKey}/%E0%A4%A`), 400],
    ['widget without display_sync', fetch(`${base}/service_collection_widget/${P.apiKey}/alice`), 400],
    ['invalid api_key', fetch(`${base}/service_details/${'x'.repeat(32)}/github`), 401],
    ['the OpenAPI document', fetch(`${base}/openapi.json`), 200],
    ['success', fetch(`${base}/service_details/${P.apiKey}/github`), 200],
  ];
  for (const [what, call, status] of cases) {
    const res = await call;
    await res.arrayBuffer();
    assert.equal(res.status, status, what);
    assertApiHeaders(res, what);
  }
});

test("a proven partner's schema 400 counts against its own key, like its other calls", async () => {
  const P = await t.partner();
  await t.ctx.db.write((w) => updatePartner(w, P.id, { rateLimitPerMinute: 77 }, t.clock.now()));
  const bad = () => postForm(`${t.baseUrl}/api/update_service/${P.apiKey}/alice/github`, { api_token: P.apiToken, usrSvcId: 'a', verified: 'TRUE' });
  const first = assertApiHeaders(await bad(), 'first');
  const second = assertApiHeaders(await bad(), 'second');
  assert.equal(first.limit, 77);
  assert.equal(second.remaining, first.remaining - 1);
});

test('requests that reach no operation count against the address limit and meet 429 past it', async () => {
  const small = await startTestApp({ RATE_LIMIT_PER_ADDRESS: '3' });
  try {
    const statuses: number[] = [];
    let last: Response | undefined;
    for (let i = 0; i < 4; i++) {
      last = await fetch(`${small.baseUrl}/api/no_such_operation/${i}`);
      await last.arrayBuffer();
      statuses.push(last.status);
      assert.equal(assertApiHeaders(last, `request ${i}`).limit, 3);
    }
    assert.deepEqual(statuses, [404, 404, 404, 429]);
    assert.ok(Number(last!.headers.get('retry-after')) > 0);
    assert.equal(last!.headers.get('ratelimit-remaining'), '0');
  } finally {
    await small.close();
  }
});

test('the OpenAPI document names these headers on every answer of every operation', async () => {
  type Responses = Record<string, { headers?: Record<string, unknown> }>;
  const doc = (await (await fetch(`${t.baseUrl}/api/openapi.json`)).json()) as { paths: Record<string, Record<string, { responses: Responses }>> };
  let checked = 0;
  for (const [path, ops] of Object.entries(doc.paths)) {
    // The partner API's operations; the Gravatar-compatible routes answer in Gravatar's headers.
    if (!path.startsWith('/api/')) continue;
    for (const [method, op] of Object.entries(ops)) {
      for (const [status, response] of Object.entries(op.responses)) {
        const names = Object.keys(response.headers ?? {});
        for (const h of ['X-Request-Id', 'X-Idsvc-Api-Version', 'RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset'])
          assert.ok(names.includes(h), `${method} ${path} ${status}: ${h}`);
        if (status === '429' || status === '503') assert.ok(names.includes('Retry-After'), `${method} ${path} ${status}: Retry-After`);
      }
      checked++;
    }
  }
  // Each of the nine operations once, service_details at its three URL shapes, update_service at two.
  assert.equal(checked, 12);
});

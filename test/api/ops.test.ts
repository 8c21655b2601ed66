import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { Validator } from '@seriousme/openapi-schema-validator';
import { startTestApp, type TestApp } from '../helpers/app.js';

let t: TestApp;
const METRICS_TOKEN = 'ops-test-metrics-token-0123';
before(async () => {
  t = await startTestApp({ METRICS_TOKEN });
});
after(() => t.close());

test('/api/openapi.json validates as OpenAPI 3.1 and lists every operation', async () => {
  const res = await fetch(`${t.baseUrl}/api/openapi.json`);
  assert.equal(res.status, 200);
  const doc = (await res.json()) as { openapi: string; paths: Record<string, Record<string, { operationId?: string }>> };
  assert.equal(doc.openapi, '3.1.0');
  const validator = new Validator();
  const result = await validator.validate(doc);
  assert.equal(result.valid, true, JSON.stringify(result.errors, null, 2));
  assert.equal(validator.version, '3.1');
  const ids = Object.values(doc.paths).flatMap((p) => Object.values(p).map((o) => o.operationId));
  for (const op of [
    'return_services',
    'service_details',
    'update_service',
    'sync_user',
    'unsync_user',
    'return_profile',
    'reverse_lookup',
    'return_contacts',
  ]) {
    assert.ok(ids.includes(op), op);
  }
  // Every operation documents the outage answer (SPEC §6 `unavailable`).
  const operations = Object.values(doc.paths).flatMap((p) => Object.values(p)) as { responses?: Record<string, { description?: string }> }[];
  assert.ok(operations.every((o) => /unavailable/.test(o.responses?.['503']?.description ?? '')));
  const docs = await fetch(`${t.baseUrl}/docs`, { redirect: 'follow' });
  assert.equal(docs.status, 200);
  assert.match(await docs.text(), /swagger/i);
});

test('health, readiness and metrics', async () => {
  assert.equal((await fetch(`${t.baseUrl}/healthz`)).status, 200);
  const ready = await fetch(`${t.baseUrl}/readyz`);
  assert.equal(ready.status, 200);
  assert.deepEqual(await ready.json(), { status: 'ready', database: 'up' });
  const P = await t.partner();
  await fetch(`${t.baseUrl}/api/service_details/${P.apiKey}/github`);
  await fetch(`${t.baseUrl}/api/service_details/${P.apiKey}/no-such-service`);
  await fetch(`${t.baseUrl}/api/service_details/${P.apiKey}/no-such-service`, { method: 'POST' });
  await fetch(`${t.baseUrl}/no/such/page`);
  const metrics = await (await fetch(`${t.baseUrl}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } })).text();
  assert.match(metrics, /idsvc_http_requests_total\{route="\/api\/service_details\/:api_key\/:order_or_svcId",method="GET",status="200"\} 1/);
  // Each method and status of a route is its own series; paths that match no route count as one.
  assert.match(metrics, /idsvc_http_requests_total\{route="\/api\/service_details\/:api_key\/:order_or_svcId",method="GET",status="404"\} 1/);
  assert.match(metrics, /idsvc_http_requests_total\{route="\/api\/service_details\/:api_key\/:order_or_svcId",method="POST",status="404"\} 1/);
  assert.match(metrics, /idsvc_http_requests_total\{route="unmatched",method="GET",status="404"\} 1/);
  assert.match(metrics, /idsvc_http_request_duration_seconds_count\{route="\/api\/service_details\/:api_key\/:order_or_svcId",method="GET"\} 2/);
  // A Prometheus histogram: TYPE line, cumulative buckets ending in +Inf = count, and a sum.
  assert.match(metrics, /^# TYPE idsvc_http_request_duration_seconds histogram$/m);
  assert.match(metrics, /^# TYPE idsvc_http_requests_total counter$/m);
  const route = 'route="/api/service_details/:api_key/:order_or_svcId",method="GET"';
  const buckets = [...metrics.matchAll(/^idsvc_http_request_duration_seconds_bucket\{le="([^"]+)",(.*)\} (\d+)$/gm)].filter((m) => m[2] === route);
  assert.deepEqual(
    buckets.map((m) => m[1]),
    ['0.001', '0.0025', '0.005', '0.01', '0.025', '0.05', '0.1', '0.25', '0.5', '1', '2.5', '+Inf'],
  );
  const counts = buckets.map((m) => Number(m[3]));
  assert.ok(
    counts.every((n, i) => i === 0 || n >= counts[i - 1]!),
    `buckets are cumulative: ${counts.join(' ')}`,
  );
  assert.equal(counts.at(-1), 2);
  const sum = metrics.match(new RegExp(`^idsvc_http_request_duration_seconds_sum\\{${route.replace(/[/.*+?^${}()|[\]\\]/g, '\\$&')}\\} (\\S+)$`, 'm'));
  assert.ok(sum && Number(sum[1]) > 0 && Number(sum[1]) < 60, `a duration sum in seconds: ${sum?.[1]}`);
  assert.ok(!metrics.includes(P.apiKey), 'metrics carry route patterns, not keys');
});

test('every answer carries a request id; a sane incoming one is kept', async () => {
  const res = await fetch(`${t.baseUrl}/api/nothing-here`, { headers: { 'x-request-id': 'abc-123' } });
  assert.equal(res.status, 404);
  assert.equal(res.headers.get('x-request-id'), 'abc-123');
  const odd = await fetch(`${t.baseUrl}/healthz`, { headers: { 'x-request-id': 'bad id with spaces' } });
  assert.match(odd.headers.get('x-request-id') ?? '', /^[0-9a-f-]{36}$/);
});

test('a fault answers internal_error with only the request id, and is logged', async () => {
  const { buildApp } = await import('../../src/app.js');
  const lines: string[] = [];
  const { Writable } = await import('node:stream');
  const logStream = new Writable({
    write: (c: Buffer, _e, cb) => {
      lines.push(c.toString());
      cb();
    },
  });
  const app = await buildApp(t.ctx, { logStream });
  app.get('/api/boom/:x', { config: { kind: 'api' } }, async () => {
    throw new Error('secret internals');
  });
  const res = await app.inject({ url: '/api/boom/1', headers: { 'x-request-id': 'req-1' } });
  assert.equal(res.statusCode, 500);
  assert.equal(
    res.body,
    '<?xml version="1.0" encoding="UTF-8"?>\n<error><code>internal_error</code><message>Internal error (request req-1)</message></error>\n',
  );
  assert.ok(lines.join('').includes('secret internals'), 'the fault itself is in the log for operators');
  const logged = lines.map((l) => JSON.parse(l) as { reqId?: string; err?: { message?: string } }).find((l) => l.err?.message === 'secret internals');
  assert.equal(logged?.reqId, 'req-1', 'the line names the request it came from');
  await app.close();
});

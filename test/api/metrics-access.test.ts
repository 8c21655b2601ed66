// Issue 14.15: /metrics is not public. On the public port it needs METRICS_TOKEN as a bearer
// token; METRICS_PORT serves it on loopback only; with neither there is no /metrics at all.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { ConfigError, loadConfig } from '../../src/config.js';
import { startTestApp, type TestApp } from '../helpers/app.js';

const TOKEN = 'metrics-token-0123456789abcdef';

/** The address the metrics listener logged when it started. */
function metricsUrl(t: TestApp): string {
  const line = t.logs.map((l) => JSON.parse(l) as { metricsUrl?: string }).find((l) => l.metricsUrl);
  assert.ok(line?.metricsUrl, 'the metrics listener logs its address');
  return line.metricsUrl;
}

test('with neither METRICS_TOKEN nor METRICS_PORT, /metrics is not served', async () => {
  const t = await startTestApp();
  try {
    for (const method of ['GET', 'HEAD', 'POST']) {
      const res = await fetch(`${t.baseUrl}/metrics`, { method, headers: { authorization: `Bearer ${TOKEN}` } });
      assert.equal(res.status, 404, method);
      await res.arrayBuffer();
    }
    assert.ok(!t.logs.some((l) => l.includes('metricsUrl')), 'no metrics listener');
  } finally {
    await t.close();
  }
});

test('METRICS_TOKEN: only a request bearing the token reads /metrics', async () => {
  const t = await startTestApp({ METRICS_TOKEN: TOKEN });
  try {
    const P = await t.partner();
    await fetch(`${t.baseUrl}/api/service_details/${P.apiKey}/github`);
    const refused: Record<string, string>[] = [
      {},
      { authorization: 'Bearer' },
      { authorization: 'Bearer wrong-token-0123456789abcdef' },
      { authorization: `Bearer ${TOKEN}x` },
      { authorization: `Bearer ${TOKEN.slice(0, -1)}` },
      { authorization: `Basic ${Buffer.from(`metrics:${TOKEN}`).toString('base64')}` },
      { authorization: `Bearer ${TOKEN} extra` },
    ];
    for (const headers of refused) {
      const res = await fetch(`${t.baseUrl}/metrics`, { headers });
      assert.equal(res.status, 401, JSON.stringify(headers));
      assert.equal(res.headers.get('www-authenticate'), 'Bearer realm="metrics"');
      const body = await res.text();
      assert.ok(!body.includes('idsvc_'), 'no metric in a refusal');
      assert.ok(!body.includes(TOKEN), 'the token is not echoed');
    }
    for (const scheme of ['Bearer', 'bearer']) {
      const res = await fetch(`${t.baseUrl}/metrics`, { headers: { authorization: `${scheme} ${TOKEN}` } });
      assert.equal(res.status, 200, scheme);
      assert.match(res.headers.get('content-type') ?? '', /^text\/plain/);
      assert.match(await res.text(), /idsvc_http_requests_total\{route="\/api\/service_details\/:api_key\/:order_or_svcId",method="GET",status="200"\} 1/);
    }
    assert.ok(!t.logs.join('').includes(TOKEN), 'the token is not logged');
  } finally {
    await t.close();
  }
});

test('METRICS_PORT: /metrics on a loopback listener, without a token, and not on the public port', async () => {
  const t = await startTestApp({ METRICS_PORT: '0' });
  let url: string;
  try {
    url = metricsUrl(t);
    assert.match(url, /^http:\/\/127\.0\.0\.1:\d+\/metrics$/, 'bound to loopback');
    assert.notEqual(new URL(url).port, new URL(t.baseUrl).port);
    const P = await t.partner();
    await fetch(`${t.baseUrl}/api/service_details/${P.apiKey}/github`);
    assert.equal((await fetch(`${t.baseUrl}/metrics`)).status, 404, 'not on the public port');
    const res = await fetch(url);
    assert.equal(res.status, 200);
    assert.match(await res.text(), /idsvc_http_requests_total\{route="\/api\/service_details\/:api_key\/:order_or_svcId",method="GET",status="200"\} 1/);
    const head = await fetch(url, { method: 'HEAD' });
    assert.equal(head.status, 200);
    // The listener serves metrics and nothing else.
    for (const other of ['/', '/healthz', `/api/service_details/${P.apiKey}/github`]) {
      assert.equal((await fetch(new URL(other, url))).status, 404, other);
    }
    assert.equal((await fetch(url, { method: 'POST' })).status, 404);
  } finally {
    await t.close();
  }
  // It closes with the app.
  const { port } = new URL(url);
  const refused = await new Promise<boolean>((resolve) => {
    const socket = net.connect(Number(port), '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', () => resolve(true));
  });
  assert.equal(refused, true, 'the metrics port is closed with the app');
});

test('METRICS_TOKEN and METRICS_PORT together: the token guards the public port, loopback needs none', async () => {
  const t = await startTestApp({ METRICS_TOKEN: TOKEN, METRICS_PORT: '0' });
  try {
    assert.equal((await fetch(`${t.baseUrl}/metrics`)).status, 401);
    assert.equal((await fetch(`${t.baseUrl}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } })).status, 200);
    assert.equal((await fetch(metricsUrl(t))).status, 200);
  } finally {
    await t.close();
  }
});

test('a weak METRICS_TOKEN or a bad METRICS_PORT stops start-up naming it', () => {
  for (const [env, name] of [
    [{ METRICS_TOKEN: 'short' }, 'METRICS_TOKEN'],
    [{ METRICS_TOKEN: 'has a space in it 0123456789' }, 'METRICS_TOKEN'],
    [{ METRICS_PORT: 'ninety' }, 'METRICS_PORT'],
    [{ METRICS_PORT: '70000' }, 'METRICS_PORT'],
  ] as const) {
    assert.throws(
      () => loadConfig(env),
      (e: unknown) => e instanceof ConfigError && e.variable === name,
      JSON.stringify(env),
    );
  }
  assert.equal(loadConfig({}).metricsToken, null);
  assert.equal(loadConfig({}).metricsPort, null);
  assert.equal(loadConfig({ METRICS_PORT: '9464' }).metricsPort, 9464);
});

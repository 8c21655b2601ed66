// `idsvc partner usage`: what the API counted for a partner, by day, operation, status class and
// budget, before the dashboard shows it.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { runCli } from '../helpers/cli.js';

let t: TestApp;
let P: Awaited<ReturnType<TestApp['partner']>>;
let other: Awaited<ReturnType<TestApp['partner']>>;

async function call(url: string, init: RequestInit = {}): Promise<number> {
  const res = await fetch(url, init);
  await res.arrayBuffer();
  return res.status;
}

before(async () => {
  t = await startTestApp({ USAGE_FLUSH_SECONDS: '3600', RATE_LIMIT_PER_KEY: '100', RATE_LIMIT_PER_KEY_UNPROVEN: '200' });
  // The command reads the last days up to the real time: the server counts on the same calendar.
  t.clock.advance(Date.now() - t.clock.now());
  P = await t.partner({ name: 'Acme' });
  other = await t.partner({ name: 'Other' });
  await t.user({ email: 'bo@example.org', userId: 'bobby' });
  const api = `${t.baseUrl}/api`;
  for (let i = 0; i < 3; i++) assert.equal(await call(`${api}/return_services/${P.apiKey}/bobby/public`), 200);
  assert.equal(
    await call(`${api}/update_service/${P.apiKey}/bobby/github/bo-gh`, { method: 'POST', body: new URLSearchParams({ api_token: P.apiToken }) }),
    200,
  );
  assert.equal(await call(`${api}/service_details/${P.apiKey}/nothing-like-this`), 404);
  assert.equal(await call(`${api}/service_details/${other.apiKey}/github`), 200);
  await t.ctx.usage.flush();
});
after(() => t.close());

/** The day (UTC) the server counted the calls on. */
const countedOn = () => new Date(t.clock.now()).toISOString().slice(0, 10);

interface Point {
  start: string;
  requests: Record<string, number>;
  total: number;
  statuses: Record<string, number>;
  budgets: { proven: { used: number; limit: number }; unproven: { used: number; limit: number } };
}

test('--json gives the days and hours with the counts the API calls made', async () => {
  const r = await runCli(t, ['--json', 'partner', 'usage', P.apiKey, '--days', '2']);
  assert.equal(r.code, 0, r.stderr);
  const u = JSON.parse(r.stdout) as { api_key: string; days: number; operations: string[]; totals: Point; daily: Point[]; hourly: Point[] };
  assert.equal(u.api_key, P.apiKey);
  assert.deepEqual(u.operations, ['return_services', 'service_details', 'update_service']);
  assert.equal(u.daily.length, 2);
  assert.equal(u.hourly.length, 48);
  // Found by date, not position: the real clock may pass an hour or midnight between the calls and the command.
  const day = u.daily.find((d) => d.start === `${countedOn()}T00:00:00.000Z`)!;
  const hour = u.hourly.find((h) => h.start === new Date(t.clock.now() - (t.clock.now() % 3_600_000)).toISOString())!;
  assert.deepEqual(u.totals.requests, { return_services: 3, service_details: 1, update_service: 1 });
  assert.deepEqual(u.totals.statuses, { '2xx': 4, '3xx': 0, '4xx': 1, '429': 0, '5xx': 0 });
  assert.equal(u.totals.total, 5);
  assert.equal(day.total, 5);
  assert.equal(hour.total, 5);
  assert.deepEqual(day.budgets, { proven: { used: 1, limit: 100 }, unproven: { used: 4, limit: 200 } });
});

test('the text form is a table of days with a total, and names the partner', async () => {
  const r = await runCli(t, ['partner', 'usage', String(P.id)]);
  assert.equal(r.code, 0, r.stderr);
  const lines = r.stdout.trim().split('\n');
  assert.match(lines[0]!, /^partner \d+ \(Acme\): the last 7 days$/);
  assert.match(
    lines[1]!,
    /^day \(UTC\)\s+requests\s+return_services\s+service_details\s+update_service\s+2xx\s+3xx\s+4xx\s+429\s+5xx\s+proven budget\s+key-only budget$/,
  );
  assert.equal(lines.length, 2 + 7 + 1);
  const today = lines.find((l) => l.startsWith(countedOn()))!.split(/\s{2,}/);
  assert.deepEqual(today, [countedOn(), '5', '3', '1', '1', '4', '0', '1', '0', '0', '1/100 (1.0 %)', '4/200 (2.0 %)']);
  assert.deepEqual(lines.at(-1)!.split(/\s{2,}/), ['total', '5', '3', '1', '1', '4', '0', '1', '0', '0']);
});

test('bad --days and unknown keys are refused with a message', async () => {
  for (const days of ['0', '31', 'two']) {
    const r = await runCli(t, ['partner', 'usage', P.apiKey, '--days', days]);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /--days must be a whole number from 1 to 30/);
  }
  const r = await runCli(t, ['partner', 'usage', 'z'.repeat(32)]);
  assert.equal(r.code, 1);
  assert.match(r.stderr, /no partner with api_key or id/);
});

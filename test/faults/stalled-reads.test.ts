// Reads on a stalled PostgreSQL (a network that holds every packet, answering nothing): each read
// answers 503 `unavailable` within DATABASE_TIMEOUT_MS, not twice that (the answer cache's reading of
// its change feed and the render must not each wait the whole timeout), and /readyz says "down"
// within a second (docs/operations.md, "When a dependency fails").
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { once } from 'node:events';
import pg from 'pg';
import { pastFeedLag, startTestApp, PG_URL, TEST_DB, type TestApp } from '../helpers/app.js';
import { TcpProxy } from '../helpers/tcp-proxy.js';

const TIMEOUT_MS = 2000;
const skip = TEST_DB !== 'postgres' && 'PostgreSQL only (a SQLite read does not wait on a network)';
const schema = `stall_${process.pid}_${Math.random().toString(36).slice(2, 8)}`;
let proxy: TcpProxy | undefined;
let t: TestApp | undefined;

before(async () => {
  if (skip) return;
  const target = new URL(PG_URL);
  proxy = await TcpProxy.start(target.hostname, Number(target.port || 5432));
  // The catalogue is loaded once and not checked again (the test's clock stands still), so what a
  // read waits for during the stall is the answer cache and the view, as between two checks.
  t = await startTestApp(
    { DATABASE_URL: proxy.via(PG_URL), DATABASE_SCHEMA: schema, DATABASE_TIMEOUT_MS: String(TIMEOUT_MS) },
    {},
    { catalogueCheckMs: 60_000 },
  );
  if (!t.ctx.partners.caching) await once(t.ctx.partners, 'live');
});

after(async () => {
  await t?.close();
  await proxy?.close();
  if (skip) return;
  const c = new pg.Client({ connectionString: PG_URL });
  await c.connect();
  await c.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  await c.end();
});

async function timed(url: string, init?: RequestInit): Promise<{ status: number; body: string; ms: number }> {
  const started = performance.now();
  const res = await fetch(url, init);
  const body = await res.text();
  return { status: res.status, body, ms: performance.now() - started };
}

test('a stalled PostgreSQL: reads through the answer cache answer 503 within the timeout; /readyz says down within a second', { skip }, async () => {
  const app = t!;
  const P = await app.partner();
  await app.user({ email: 'stella@example.org', userId: 'stella' });
  await P.client.updateService('stella', 'github', 'stella-gh');
  const publicUrl = `${app.baseUrl}/api/return_services/${P.apiKey}/stella/public?format=json`;
  // Asked twice, so the answers are kept: the stall must not be hidden by an answer from memory either.
  for (let i = 0; i < 2; i++) {
    assert.equal((await timed(publicUrl)).status, 200);
    assert.deepEqual(
      (await P.client.returnServices('stella')).map((s) => s.usrSvcId),
      ['stella-gh'],
    );
  }

  proxy!.freeze();
  // A public view may be served from memory while the last reading of the feed is MAX_LAG_MS old
  // or less (docs/operations.md, "The answer cache"); past that it needs a reading of its own.
  await pastFeedLag();
  try {
    // Three at once: the first starts the feed's reading, the others wait for the next one.
    const reads = await Promise.all([
      timed(publicUrl),
      timed(publicUrl),
      timed(`${app.baseUrl}/api/return_services/${P.apiKey}/stella?format=json`, { method: 'POST', body: new URLSearchParams({ api_token: P.apiToken }) }),
    ]);
    for (const r of reads) {
      assert.equal(r.status, 503, r.body);
      assert.equal((JSON.parse(r.body) as { error: { code: string } }).error.code, 'unavailable');
      // Before, the feed's wait and the render's wait came one after the other: about 2 × TIMEOUT_MS.
      assert.ok(r.ms < TIMEOUT_MS * 1.5, `answered within the timeout, not twice it (${Math.round(r.ms)} ms)`);
    }
    const ready = await timed(`${app.baseUrl}/readyz`);
    assert.equal(ready.status, 503);
    assert.deepEqual(JSON.parse(ready.body), { status: 'unavailable', database: 'down' });
    assert.ok(ready.ms < 1000, `/readyz answered within a second (${Math.round(ready.ms)} ms)`);
  } finally {
    await proxy!.restore();
  }
  // Back: the same process serves fresh answers again.
  for (let i = 0; i < 100 && (await timed(`${app.baseUrl}/readyz`)).status !== 200; i++) await new Promise((r) => setTimeout(r, 100));
  await P.client.updateService('stella', 'github', 'stella-after');
  assert.deepEqual(
    (await P.client.returnServices('stella')).map((s) => s.usrSvcId),
    ['stella-after'],
    'the write after the stall is read back, not an answer kept from before',
  );
});

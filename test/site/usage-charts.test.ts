// The usage charts: what a partner's real API calls were counted as, drawn and tabled with the same
// numbers, readable without the picture (an image with a title and summary, tables with a caption
// and headers that say what each cell is).
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { DomUtils, parseDocument } from 'htmlparser2';
import { h } from 'preact';
import { render } from 'preact-render-to-string';
import { updatePartner } from '../../src/repositories/partners.js';
import { partnerUsage, type UsageSeries } from '../../src/services/usage.js';
import { UsageCharts } from '../../src/site/views/UsageCharts.js';
import { startTestApp, type TestApp } from '../helpers/app.js';

let t: TestApp;
let usage: UsageSeries;
let doc: ReturnType<typeof parseDocument>;

async function call(url: string, init: RequestInit = {}): Promise<number> {
  const res = await fetch(url, init);
  await res.arrayBuffer();
  return res.status;
}

type Element = ReturnType<typeof DomUtils.getElementsByTagName>[number];

const text = (e: Element) => DomUtils.textContent(e).trim();
const all = (name: string, root: Parameters<typeof DomUtils.getElementsByTagName>[1] = doc) => DomUtils.getElementsByTagName(name, root, true);

/** A table's rows as header cell → cell text, found by its caption's start. */
function table(caption: string): Record<string, string>[] {
  const t = all('table').find((x) => text(all('caption', x)[0]!).startsWith(caption));
  assert.ok(t, `a table captioned "${caption}…"`);
  const head = all('th', all('thead', t)[0]!).map(text);
  return all('tr', all('tbody', t)[0]!).map((tr) =>
    Object.fromEntries(
      DomUtils.getChildren(tr)
        .filter((c): c is Element => c.type === 'tag')
        .map((c, i) => [head[i]!, text(c)]),
    ),
  );
}

before(async () => {
  t = await startTestApp({ USAGE_FLUSH_SECONDS: '3600', RATE_LIMIT_PER_KEY_UNPROVEN: '1000' });
  const P = await t.partner({ name: 'Charted' });
  // Five a minute: the key's calls without proof run out after five.
  await t.ctx.db.write((w) => updatePartner(w, P.id, { rateLimitPerMinute: 5 }, t.clock.now()));
  await t.user({ email: 'cy@example.org', userId: 'cyrus' });
  const api = `${t.baseUrl}/api`;
  const expected: number[] = [];
  for (let i = 0; i < 3; i++) expected.push(await call(`${api}/return_services/${P.apiKey}/cyrus/public`));
  for (const svc of ['github', 'gitlab']) {
    expected.push(await call(`${api}/update_service/${P.apiKey}/cyrus/${svc}/cy`, { method: 'POST', body: new URLSearchParams({ api_token: P.apiToken }) }));
  }
  expected.push(await call(`${api}/service_details/${P.apiKey}/not-a-service`));
  for (let i = 0; i < 3; i++) expected.push(await call(`${api}/service_details/${P.apiKey}/github`));
  assert.deepEqual(expected, [200, 200, 200, 200, 200, 404, 200, 429, 429]);
  await t.ctx.usage.flush();
  usage = await partnerUsage(t.ctx.db, P.id, t.clock.now());
  doc = parseDocument(render(h(UsageCharts, { usage })));
});
after(() => t.close());

const today = () => new Date(t.clock.now()).toISOString().slice(0, 10);

test('the tables hold the counts of the calls made, by operation, status and budget', () => {
  const days = table('Requests per operation per day');
  assert.equal(days.length, 30);
  assert.deepEqual(days.at(-1), { Day: today(), return_services: '3', service_details: '4', update_service: '2', All: '9' });
  assert.ok(days.slice(0, -1).every((d) => d.All === '0'));
  const hours = table('Requests per operation per hour');
  assert.equal(hours.length, 48);
  assert.deepEqual(hours.at(-1), {
    Hour: `${today()} ${new Date(t.clock.now()).toISOString().slice(11, 13)}:00`,
    return_services: '3',
    service_details: '4',
    update_service: '2',
    All: '9',
  });
  assert.deepEqual(table('Answers by status').at(-1), { Day: today(), '2xx': '6', '3xx': '0', '4xx': '1', '429': '2', '5xx': '0' });
  assert.deepEqual(table('Peak use of each rate-limit budget').at(-1), {
    Day: today(),
    'With proof': '2 of 5 (40.0 %)',
    'Public key alone': '5 of 5 (100.0 %)',
  });
});

test('the charts draw the same numbers: each bar says its value, and its height follows it', () => {
  const chart = (id: string) => all('svg').find((s) => s.attribs['data-chart'] === id)!;
  const bars = (id: string) =>
    all('rect', chart(id)).map((r) => ({ label: text(all('title', r)[0]!), height: Number(r.attribs.height), y: Number(r.attribs.y) }));
  const daily = bars('usage-daily');
  assert.deepEqual(
    daily.map((b) => b.label),
    [`${today()}: return_services 3`, `${today()}: service_details 4`, `${today()}: update_service 2`],
  );
  // Stacked on one scale: heights in proportion to the counts, each on top of the one before.
  const [rs, sd, us] = daily;
  assert.ok(Math.abs(rs!.height / sd!.height - 3 / 4) < 0.01);
  assert.ok(Math.abs(us!.height / sd!.height - 2 / 4) < 0.01);
  assert.ok(Math.abs(sd!.y + sd!.height - rs!.y) < 0.02);
  assert.deepEqual(
    bars('usage-status').map((b) => b.label),
    [`${today()}: 2xx success 6`, `${today()}: 4xx refused 1`, `${today()}: 429 over the limit 2`],
  );
  const budget = bars('usage-budget');
  assert.deepEqual(
    budget.map((b) => b.label),
    [`${today()}: with proof (api_token or signed URL) 40.0 %`, `${today()}: with the public key alone 100.0 %`],
  );
  assert.ok(Math.abs(budget[0]!.height / budget[1]!.height - 0.4) < 0.01);
  // The descriptions a screen reader reads in place of the picture carry the totals too.
  assert.match(
    text(all('desc', chart('usage-daily'))[0]!),
    /^9 requests in the last 30 days \(UTC\); the busiest, \d{4}-\d\d-\d\d, had 9\. return_services: 3, service_details: 4, update_service: 2\.$/,
  );
  assert.match(text(all('desc', chart('usage-status'))[0]!), /2xx success: 6, 3xx not modified: 0, 4xx refused: 1, 429 over the limit: 2, 5xx server error: 0/);
});

test('every chart is an image named by its title and description; every table has a caption and scoped headers', () => {
  const svgs = all('svg').filter((s) => s.attribs.role === 'img');
  assert.equal(svgs.length, 4);
  for (const svg of svgs) {
    const ids = svg.attribs['aria-labelledby']!.split(' ');
    assert.deepEqual(
      ids.map((id) => DomUtils.getElementById(id, doc)?.name),
      ['title', 'desc'],
    );
    assert.ok(text(DomUtils.getElementById(ids[0]!, doc)!).length > 0);
  }
  // The legends' swatches are decoration: their names are the text beside them.
  assert.ok(
    all('svg')
      .filter((s) => s.attribs.role !== 'img')
      .every((s) => s.attribs['aria-hidden'] === 'true'),
  );
  const tables = all('table');
  assert.equal(tables.length, 4);
  for (const tbl of tables) {
    assert.ok(text(all('caption', tbl)[0]!).length > 0);
    assert.ok(all('th', all('thead', tbl)[0]!).every((th) => th.attribs.scope === 'col'));
    assert.ok(all('tr', all('tbody', tbl)[0]!).every((tr) => all('th', tr)[0]?.attribs.scope === 'row'));
  }
  const ids = all('*').flatMap((e) => (e.attribs.id ? [e.attribs.id] : []));
  assert.equal(new Set(ids).size, ids.length, 'ids are unique');
});

test('a partner without calls sees empty charts and says so', async () => {
  const Q = await t.partner({ name: 'Quiet' });
  const quiet = parseDocument(render(h(UsageCharts, { usage: await partnerUsage(t.ctx.db, Q.id, t.clock.now()), idPrefix: 'quiet' })));
  assert.match(DomUtils.textContent(quiet), /No calls in the last 30 days \(UTC\)\./);
  // Only the legends' swatches: no bar is drawn.
  assert.equal(DomUtils.getElementsByTagName('rect', quiet, true).filter((r) => r.attribs.width !== '10').length, 0);
});

// Issue 16: the API reference at /docs, in a real Chromium. Everything it loads comes from this
// idsvc (every request is recorded, and the CSP forbids anything else), it shows the document at
// /api/openapi.json, each operation once, and the curl examples with form bodies.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Browser } from 'playwright-core';
import { DOCS_CSP } from '../../src/http/docs-page.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { launchChromium } from '../helpers/chromium.js';

let t: TestApp;
let browser: Browser;

before(async () => {
  t = await startTestApp();
  browser = await launchChromium();
});
after(async () => {
  await browser?.close();
  await t?.close();
});

test('the CSP of /docs allows this idsvc only', async () => {
  const res = await fetch(`${t.baseUrl}/docs`);
  await res.arrayBuffer();
  const csp = res.headers.get('content-security-policy') ?? '';
  assert.equal(csp, DOCS_CSP);
  for (const directive of csp.split(';').map((d) => d.trim())) {
    const sources = directive.split(/\s+/).slice(1);
    assert.ok(
      sources.every((s) => s.startsWith("'") || s === 'data:'),
      `${directive}: only 'self'-like sources`,
    );
  }
});

test('/docs loads only from this idsvc, reads /api/openapi.json, and lists each operation once with its curl example', async () => {
  const page = await browser.newPage();
  const requested: string[] = [];
  const problems: string[] = [];
  page.on('request', (r) => requested.push(r.url()));
  page.on('pageerror', (e) => problems.push(`script error: ${e.message}`));
  page.on('console', (m) => {
    if (m.type() === 'error') problems.push(`console: ${m.text()}`);
  });
  await page.goto(`${t.baseUrl}/docs`);
  await page.waitForSelector('.opblock-summary', { timeout: 60_000 });
  const origin = new URL(t.baseUrl).origin;
  assert.ok(requested.length > 3, requested.join('\n'));
  assert.deepEqual(
    requested.filter((u) => !u.startsWith(`${origin}/`) && !u.startsWith('data:')),
    [],
    'no request leaves this idsvc',
  );
  assert.ok(requested.includes(`${origin}/api/openapi.json`), 'the page reads the served document');
  assert.ok(!requested.includes(`${origin}/docs/json`), 'directly, not through /docs/json');
  // The link to the document under the title is the documented address.
  assert.equal(await page.$eval('.info a.link', (a) => a.getAttribute('href')), `${origin}/api/openapi.json`);
  assert.deepEqual(problems, []);

  const entries = await page.$$eval('.opblock-summary', (els) =>
    els.map((e) => `${e.querySelector('.opblock-summary-method')?.textContent} ${e.querySelector('.opblock-summary-path')?.getAttribute('data-path')}`),
  );
  const partnerApi = entries.filter((e) => / \/api\//.test(e));
  assert.equal(partnerApi.length, 12, partnerApi.join('\n'));
  assert.equal(new Set(partnerApi.map((e) => e.split('/')[2])).size, 9, 'nine operations, service_details at its three URL shapes, update_service at two');

  // Open one operation: its description carries the curl example with a form body.
  await page.click('.opblock-summary-path[data-path="/api/return_services/{api_key}/{user_identifier}"]');
  const code = await page.waitForSelector('.opblock-description-wrapper pre code, .opblock-description-wrapper pre', { timeout: 30_000 });
  const text = (await code.textContent()) ?? '';
  assert.match(text, /curl "http[^"]+\/api\/return_services\/\$API_KEY\/alice\?format=json"/);
  assert.match(text, /--data-urlencode "api_token=\$API_TOKEN"/);
  await page.close();
});

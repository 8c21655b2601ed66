// The client package runs in a browser (issue 16): bundled for the browser platform, where a Node
// built-in would not even resolve, it signs widget URLs that the live service accepts and verifies
// Standard Webhooks signatures, inside real Chromium.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { build } from 'esbuild';
import type { Browser, Page } from 'playwright-core';
import { Webhook } from 'standardwebhooks';
import type { TestApp } from '../helpers/app.js';
import { projectRoot } from '../../src/paths.js';
import { launchChromium, startIdsvc, startPageServer } from '../e2e/harness.js';

const entry = path.join(projectRoot, 'packages/client/src/index.ts');

let t: TestApp;
let browser: Browser;
let pages: Awaited<ReturnType<typeof startPageServer>>;
let page: Page;

before(async () => {
  // platform "browser": an import of node:crypto (or any Node built-in) fails the build.
  const bundle = await build({
    entryPoints: [entry],
    bundle: true,
    platform: 'browser',
    format: 'iife',
    globalName: 'IdsvcPackage',
    target: 'es2022',
    write: false,
    logLevel: 'silent',
  });
  const code = bundle.outputFiles[0]!.text;
  t = await startIdsvc();
  pages = await startPageServer();
  pages.pages.set('client', `<!doctype html><html><body><script>${code.replace(/<\/script/gi, '<\\/script')}</script></body></html>`);
  browser = await launchChromium();
  page = await browser.newPage();
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  await page.goto(`${pages.origin}/client`);
  assert.deepEqual(errors, []);
  assert.equal(await page.evaluate(() => typeof (window as unknown as { IdsvcPackage?: unknown }).IdsvcPackage), 'object');
});

after(async () => {
  await browser?.close();
  await pages?.close();
  await t?.close();
});

type Pkg = typeof import('@idsvc/client');

test('a widget URL signed in the browser gives the private view, like one signed in Node', async () => {
  const P = await t.partner();
  await P.client.updateService('bea', 'github', 'bea-gh');
  const now = Date.now();
  const inBrowser = await page.evaluate(
    async ({ baseUrl, apiKey, apiToken, now }) => {
      const pkg = (window as unknown as { IdsvcPackage: Pkg }).IdsvcPackage;
      return new pkg.IdsvcClient({ baseUrl, apiKey, apiToken }).widgetUrl('bea', { now, expiresInSeconds: 600 });
    },
    { baseUrl: t.baseUrl, apiKey: P.apiKey, apiToken: P.apiToken, now },
  );
  assert.equal(inBrowser, await P.client.widgetUrl('bea', { now, expiresInSeconds: 600 }));
  const script = await (await fetch(inBrowser)).text();
  assert.match(script, /"view":"private","warning":null/);
  assert.match(script, /"usrSvcId":"bea-gh"/, 'what this partner pushed');
});

test('verifyWebhook in the browser: what standardwebhooks signed passes, a changed body does not', async () => {
  const secret = `whsec_${Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString('base64')}`;
  const body = JSON.stringify({ type: 'ping', timestamp: new Date().toISOString(), data: { n: 'é✓' } });
  const seconds = Math.floor(Date.now() / 1000);
  const headers = {
    'webhook-id': 'msg_browser',
    'webhook-timestamp': String(seconds),
    'webhook-signature': new Webhook(secret).sign('msg_browser', new Date(seconds * 1000), body),
  };
  const verdicts = await page.evaluate(
    async ({ secret, headers, body }) => {
      const pkg = (window as unknown as { IdsvcPackage: Pkg }).IdsvcPackage;
      const ok = await pkg.verifyWebhook(secret, new Headers(headers), body);
      const tampered = await pkg.verifyWebhook(secret, headers, `${body} `).then(
        () => 'accepted',
        (e: unknown) => String(e),
      );
      return { ok, tampered };
    },
    { secret, headers, body },
  );
  assert.deepEqual(verdicts.ok, JSON.parse(body));
  assert.match(verdicts.tampered, /invalid webhook signature/);
});

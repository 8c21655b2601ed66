// End-to-end pieces for the browser tests: a real idsvc (test app on its real address, so the URLs it
// writes into boot scripts work), the example partner site in front of it, a plain page server for
// pages the example site does not have, and Chromium (Debian's package, driven by playwright-core).
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser, BrowserContext, Locator, Page } from 'playwright-core';
import { createPartnerSite } from '../../examples/partner-site/site.js';
import { buildWidget } from '../../scripts/build-widget.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { unusedPort } from '../verification/servers.js';

// Callbacks passed to page.evaluate run in the page; these names exist there, not in Node.
declare const window: any;

export { launchChromium } from '../helpers/chromium.js';
export const ALICE = { name: 'Alice Example', email: 'alice@example.com' } as const;

let built: Promise<unknown> | undefined;

/** The bundle the server serves is built from the current widget source, once per test process. */
export function freshBundle(): Promise<unknown> {
  built ??= buildWidget();
  return built;
}

export async function startIdsvc(): Promise<TestApp> {
  await freshBundle();
  const port = await unusedPort();
  const t = await startTestApp({ PORT: String(port), BASE_URL: `http://127.0.0.1:${port}` });
  // Pages sign widget URLs with the real clock: let the service's clock agree.
  t.clock.advance(Date.now() - t.clock.now());
  return t;
}

export interface Served {
  server: http.Server;
  port: number;
  /** http://127.0.0.1:port; the same server is also reachable as http://localhost:port (another origin). */
  origin: string;
  close(): Promise<void>;
}

export async function serve(server: http.Server): Promise<Served> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    server,
    port,
    origin: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export function startExampleSite(t: TestApp, partner: { apiKey: string; apiToken: string }, user: { name: string; email: string } = ALICE): Promise<Served> {
  return serve(createPartnerSite({ idsvcUrl: t.baseUrl, apiKey: partner.apiKey, apiToken: partner.apiToken, user }));
}

/** Serves whatever HTML is put in `pages` at /{name}. */
export async function startPageServer(): Promise<Served & { pages: Map<string, string> }> {
  const pages = new Map<string, string>();
  const served = await serve(
    http.createServer((req, res) => {
      const html = pages.get((req.url ?? '/').slice(1));
      res.writeHead(html === undefined ? 404 : 200, { 'Content-Type': 'text/html; charset=utf-8' });
      res.end(html ?? 'not found');
    }),
  );
  return Object.assign(served, { pages });
}

export interface Opened {
  page: Page;
  context: BrowserContext;
  /** Console messages, as "type text". */
  console: string[];
  /** Uncaught exceptions in the page. */
  errors: string[];
  /** alert/confirm/prompt texts: any at all means script ran that should not have. */
  dialogs: string[];
  /** Every URL the page requested. */
  requests: string[];
}

export async function openPage(browser: Browser, url: string): Promise<Opened> {
  const context = await browser.newContext({ viewport: { width: 900, height: 1000 } });
  context.setDefaultTimeout(10_000);
  // Only the local servers: the real catalogue's favicons fail fast instead of leaving the machine.
  await context.route('**/*', (route) => (/^http:\/\/(127\.0\.0\.1|localhost):/.test(route.request().url()) ? route.continue() : route.abort()));
  const page = await context.newPage();
  const opened: Opened = { page, context, console: [], errors: [], dialogs: [], requests: [] };
  page.on('console', (m) => opened.console.push(`${m.type()} ${m.text()}`));
  page.on('pageerror', (e) => opened.errors.push(String(e)));
  page.on('dialog', (d) => {
    opened.dialogs.push(d.message());
    void d.dismiss();
  });
  page.on('request', (r) => opened.requests.push(r.url()));
  await page.goto(url);
  return opened;
}

/** Console lines other than failed favicon loads (the test network refuses them on purpose). */
export function problems(o: Opened): string[] {
  return o.console.filter((line) => /^(error|warning) /.test(line) && !/Failed to load resource: net::ERR_FAILED/.test(line));
}

export function widget(page: Page, index = 0): Locator {
  return page.locator('idsvc-widget').nth(index);
}

export async function rendered(page: Page, count = 1): Promise<void> {
  for (let i = 0; i < count; i++) await widget(page, i).locator('section h2').waitFor();
}

/** Names of the services the widget lists, in order. */
export function listed(w: Locator): Promise<string[]> {
  return w.locator('section > ul > li .name').allTextContents();
}

/** Resolves when the page's console has a line matching `pattern` (console events arrive asynchronously). */
export async function consoleLine(o: Opened, pattern: RegExp, timeoutMs = 10_000): Promise<string> {
  const found = () => o.console.find((l) => pattern.test(l));
  const now = found();
  if (now) return now;
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      o.page.off('console', listener);
      reject(new Error(`no console line matched ${pattern}; got:\n${o.console.join('\n')}`));
    }, timeoutMs);
    const listener = () => {
      const line = found();
      if (!line) return;
      clearTimeout(timer);
      o.page.off('console', listener);
      resolve(line);
    };
    o.page.on('console', listener);
  });
}

/** The example site's activity log: waits until it has `n` entries and returns them. */
export async function activity(page: Page, n: number): Promise<string[]> {
  await page
    .locator('#activity li')
    .nth(n - 1)
    .waitFor();
  const all = await page.locator('#activity li').allTextContents();
  assert.equal(all.length, n, all.join('\n'));
  return all;
}

/** The element focused, looking through shadow roots. */
export async function waitFocused(page: Page, locator: Locator): Promise<void> {
  const handle = await locator.elementHandle();
  await page.waitForFunction((el) => {
    let a = window.document.activeElement;
    while (a?.shadowRoot?.activeElement) a = a.shadowRoot.activeElement;
    return a === el;
  }, handle);
}

export async function pressTabUntil(page: Page, target: Locator, max = 60): Promise<void> {
  const handle = await target.elementHandle();
  for (let i = 0; i < max; i++) {
    await page.keyboard.press('Tab');
    const reached = await page.evaluate((el) => {
      let a = window.document.activeElement;
      while (a?.shadowRoot?.activeElement) a = a.shadowRoot.activeElement;
      return a === el;
    }, handle);
    if (reached) return;
  }
  assert.fail('Tab never reached the target');
}

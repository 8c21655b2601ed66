// The widget in a real Chromium: a partner page on one origin embeds per-user boot scripts from
// the "service" origin, which also serves the bundle and the catalogue (so CORS is exercised).
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Browser, BrowserContext, Locator, Page } from 'playwright-core';
import { launchChromium } from '../helpers/chromium.js';
import { projectRoot } from '../../src/paths.js';
import { buildWidget, WIDGET_GZIP_BUDGET, type WidgetManifest } from '../../scripts/build-widget.js';
import { renderWidgetBootScript, renderWidgetErrorScript, type WidgetBootConfig, type WidgetService } from '../../src/widget/boot-script.js';

// Callbacks passed to page.evaluate run in the page; these names exist there, not in Node.
declare const window: any;
declare const document: any;

const ROOT = projectRoot;

interface CatalogueItem {
  svcId: string;
  svcName: string;
  svcLeftURL: string;
  svcRightURL: string;
  regexCheck: string | null;
  urlBuilder: string | null;
  svcFavicon: string;
}

let browser: Browser;
let manifest: WidgetManifest;
let bundleDir: string;
let pageServer: http.Server;
let serviceServer: http.Server;
let pageOrigin = '';
let svc = ''; // the service's origin
let catalogue: CatalogueItem[] = [];
const pages = new Map<string, string>();
const bootScripts = new Map<string, string>();
const hits = new Map<string, number>();
let nextId = 0;

/** The services the assertions rely on, first (as the "combined" order puts popular ones first). */
function fixtureCatalogue(): CatalogueItem[] {
  const icon = (id: string) => `${svc}/favicon/${id}.svg`;
  return [
    {
      svcId: 'github',
      svcName: 'GitHub',
      svcLeftURL: 'https://github.com/',
      svcRightURL: '',
      regexCheck: '^[a-zA-Z0-9](?:[a-zA-Z0-9]|-(?=[a-zA-Z0-9])){0,38}$',
      urlBuilder: null,
      svcFavicon: icon('github'),
    },
    {
      svcId: 'twitter',
      svcName: 'Twitter',
      svcLeftURL: 'https://x.com/',
      svcRightURL: '',
      regexCheck: '^[a-zA-Z0-9_]{1,15}$',
      urlBuilder: null,
      svcFavicon: icon('twitter'),
    },
    {
      svcId: 'mastodon',
      svcName: 'Mastodon',
      svcLeftURL: '',
      svcRightURL: '',
      regexCheck: null,
      urlBuilder: 'mastodon',
      svcFavicon: icon('mastodon'),
    },
    {
      svcId: 'gitlab',
      svcName: 'GitLab',
      svcLeftURL: 'https://gitlab.com/',
      svcRightURL: '',
      regexCheck: null,
      urlBuilder: null,
      svcFavicon: icon('gitlab'),
    },
    {
      svcId: 'tumblr',
      svcName: 'Tumblr',
      svcLeftURL: 'https://',
      svcRightURL: '.tumblr.com/',
      regexCheck: null,
      urlBuilder: null,
      svcFavicon: icon('tumblr'),
    },
    {
      svcId: 'offlineclub',
      svcName: 'Offline Club', // no public pages: no template, no URL
      svcLeftURL: '',
      svcRightURL: '',
      regexCheck: '^[a-z0-9]+$',
      urlBuilder: null,
      svcFavicon: '',
    },
    {
      svcId: 'keybase',
      svcName: 'Keybase',
      svcLeftURL: 'https://keybase.io/',
      svcRightURL: '',
      regexCheck: null,
      urlBuilder: null,
      svcFavicon: icon('keybase'),
    },
  ];
}

/** The fixture, then the project's own catalogue (when generated) for a realistically long list. */
function buildCatalogue(): CatalogueItem[] {
  const items = fixtureCatalogue();
  const file = path.join(ROOT, 'catalogue', 'services.json');
  if (!existsSync(file)) return items;
  const parsed = JSON.parse(readFileSync(file, 'utf8')) as unknown;
  const rows = (Array.isArray(parsed) ? parsed : (parsed as { services?: unknown[] }).services) ?? [];
  const taken = new Set(items.map((i) => i.svcId));
  const names = new Set(items.map((i) => i.svcName.toLowerCase()));
  for (const row of rows as Record<string, unknown>[]) {
    const id = String(row.svcId ?? '');
    const name = String(row.svcName ?? '');
    if (!id || !name || row.disabled || taken.has(id) || names.has(name.toLowerCase())) continue;
    taken.add(id);
    items.push({
      svcId: id,
      svcName: name,
      svcLeftURL: String(row.svcLeftURL ?? ''),
      svcRightURL: String(row.svcRightURL ?? ''),
      regexCheck: typeof row.regexCheck === 'string' ? row.regexCheck : null,
      urlBuilder: typeof row.urlBuilder === 'string' ? row.urlBuilder : null,
      svcFavicon: String(row.svcFavicon ?? ''),
    });
  }
  return items;
}

const ICON_COLOURS: Record<string, string> = {
  github: '#24292f',
  twitter: '#1d9bf0',
  mastodon: '#6364ff',
  gitlab: '#fc6d26',
  keybase: '#33a0ff',
};

function faviconSvg(id: string): string {
  const colour = ICON_COLOURS[id] ?? '#64748b';
  const letter = (id[0] ?? '?').toUpperCase();
  return (
    `<svg xmlns="http://www.w3.org/2000/svg" width="32" height="32" viewBox="0 0 32 32">` +
    `<rect width="32" height="32" rx="7" fill="${colour}"/>` +
    `<text x="16" y="22" font-family="sans-serif" font-size="17" font-weight="700" fill="#fff" text-anchor="middle">${letter}</text></svg>`
  );
}

function handle(req: http.IncomingMessage, res: http.ServerResponse) {
  const url = new URL(req.url ?? '/', 'http://x');
  hits.set(url.pathname, (hits.get(url.pathname) ?? 0) + 1);
  const send = (status: number, type: string, body: string | Buffer, headers: Record<string, string> = {}) => {
    res.writeHead(status, { 'Content-Type': type, 'X-Content-Type-Options': 'nosniff', ...headers });
    res.end(body);
  };
  const page = /^\/page\/(\w+)$/.exec(url.pathname);
  if (page && pages.has(page[1]!)) {
    return send(200, 'text/html; charset=utf-8', pages.get(page[1]!)!);
  }
  const boot = /^\/boot\/(\w+)\.js$/.exec(url.pathname);
  if (boot && bootScripts.has(boot[1]!)) {
    return send(200, 'text/javascript; charset=utf-8', bootScripts.get(boot[1]!)!, { 'Cache-Control': 'private, no-store' });
  }
  if (url.pathname === `/widget/${manifest.file}`) {
    void readFile(path.join(bundleDir, manifest.file)).then((code) =>
      send(200, 'text/javascript; charset=utf-8', code, { 'Cache-Control': 'public, max-age=31536000, immutable' }),
    );
    return;
  }
  if (url.pathname === '/catalogue.json') {
    return send(200, 'application/json', JSON.stringify(catalogue), { 'Access-Control-Allow-Origin': '*' });
  }
  // Fails its first request, then works: for the retry path.
  if (url.pathname === '/flaky-catalogue.json') {
    if (hits.get(url.pathname) === 1) return send(503, 'application/json', '[]', { 'Access-Control-Allow-Origin': '*' });
    return send(200, 'application/json', JSON.stringify(catalogue), { 'Access-Control-Allow-Origin': '*' });
  }
  const favicon = /^\/favicon\/(\w+)\.svg$/.exec(url.pathname);
  if (favicon) {
    return send(200, 'image/svg+xml', faviconSvg(favicon[1]!));
  }
  send(404, 'text/plain', 'not found');
}

async function listen(): Promise<[http.Server, string]> {
  const server = http.createServer(handle);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return [server, `http://127.0.0.1:${(server.address() as AddressInfo).port}`];
}

const PREFILLED: WidgetService[] = [
  {
    svcId: 'github',
    svcName: 'GitHub',
    usrSvcId: 'octo-alice',
    url: 'https://github.com/octo-alice',
    verified: true,
    svcFavicon: '', // filled in before()
  },
  {
    svcId: 'mastodon',
    svcName: 'Mastodon',
    usrSvcId: 'alice@mastodon.social',
    url: 'https://mastodon.social/@alice',
    verified: false,
    svcFavicon: '',
  },
  {
    svcId: 'twitter',
    svcName: 'Twitter',
    usrSvcId: null, // the public view of an ordinary partner: no identifier, only the URL
    url: 'https://x.com/alice_t',
    verified: false,
    svcFavicon: '',
  },
];

function config(overrides: Partial<WidgetBootConfig> = {}): WidgetBootConfig {
  return {
    apiBase: svc,
    apiKey: 'k'.repeat(32),
    userIdentifier: 'alice',
    displaySync: false,
    lang: 'en',
    view: 'private',
    warning: null,
    services: PREFILLED.map((s) => ({ ...s, svcFavicon: `${svc}/favicon/${s.svcId}.svg` })),
    siteName: 'Example ID',
    signUpUrl: `${svc}/signup`,
    catalogueUrl: `${svc}/catalogue.json`,
    bundleUrl: `${svc}/widget/${manifest.file}`,
    ...overrides,
  };
}

/** `<script src>` for a boot script served by the service origin, as a partner page embeds it. */
function widgetScript(cfg: WidgetBootConfig): string {
  const id = `b${nextId++}`;
  bootScripts.set(id, renderWidgetBootScript(cfg));
  return `<script src="${svc}/boot/${id}.js"></script>`;
}

const PAGE_HEAD = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Partner</title>
<style>body{margin:24px;font-family:Georgia,serif;background:#f3f4f6}</style>
<script>
window.calls = []; window.syncCalls = [];
window.service_change_callback_idsvc = function () { calls.push(Array.prototype.slice.call(arguments)); };
window.init_sync_user_idsvc = function () { syncCalls.push(Array.prototype.slice.call(arguments)); };
window.__deepActive = function () {
  var el = document.activeElement;
  while (el && el.shadowRoot && el.shadowRoot.activeElement) el = el.shadowRoot.activeElement;
  return el;
};
</script>`;

interface Opened {
  page: Page;
  context: BrowserContext;
  messages: { type: string; text: string }[];
  errors: string[];
}

const open_: BrowserContext[] = [];

async function openPage(body: string, head = ''): Promise<Opened> {
  const id = `p${nextId++}`;
  pages.set(id, `${PAGE_HEAD}${head}</head><body><h1>Partner settings</h1>${body}</body></html>`);
  const context = await browser.newContext({ viewport: { width: 760, height: 900 } });
  open_.push(context);
  context.setDefaultTimeout(10_000);
  // Only the two local origins: favicons of real catalogue entries fail fast instead of leaving.
  await context.route('**/*', (route) => (route.request().url().startsWith('http://127.0.0.1:') ? route.continue() : route.abort()));
  const page = await context.newPage();
  const messages: Opened['messages'] = [];
  const errors: string[] = [];
  page.on('console', (msg) => messages.push({ type: msg.type(), text: msg.text() }));
  page.on('pageerror', (err) => errors.push(String(err)));
  await page.goto(`${pageOrigin}/page/${id}`);
  return { page, context, messages, errors };
}

function widget(page: Page, index = 0): Locator {
  return page.locator('idsvc-widget').nth(index);
}

async function rendered(page: Page, count = 1): Promise<void> {
  for (let i = 0; i < count; i++) await widget(page, i).locator('section h2').waitFor();
}

async function waitFocused(page: Page, locator: Locator): Promise<void> {
  const handle = await locator.elementHandle();
  await page.waitForFunction((el) => window.__deepActive() === el, handle);
}

/** An input's value, once the widget has written it: Preact may paint the hint before the field. */
async function valueOnceSet(page: Page, locator: Locator, expected: string): Promise<string> {
  const handle = await locator.elementHandle();
  await page.waitForFunction(([el, want]) => (el as HTMLInputElement).value === want, [handle, expected] as const, { timeout: 5000 }).catch(() => undefined);
  return locator.inputValue();
}

async function callsOnce(page: Page, name = 'calls'): Promise<string[][]> {
  await page.waitForFunction((n) => window[n].length > 0, name);
  return page.evaluate((n) => window[n], name);
}

async function pressTabUntil(page: Page, target: Locator, max = 40): Promise<void> {
  const handle = await target.elementHandle();
  for (let i = 0; i < max; i++) {
    await page.keyboard.press('Tab');
    if (await page.evaluate((el) => window.__deepActive() === el, handle)) return;
  }
  assert.fail('Tab never reached the target');
}

before(async () => {
  [pageServer, pageOrigin] = await listen();
  [serviceServer, svc] = await listen();
  catalogue = buildCatalogue();
  bundleDir = await mkdtemp(path.join(os.tmpdir(), 'idsvc-widget-'));
  manifest = await buildWidget(bundleDir);
  browser = await launchChromium();
});

after(async () => {
  await Promise.all(open_.map((c) => c.close().catch(() => {})));
  await browser?.close();
  pageServer?.close();
  serviceServer?.close();
  if (bundleDir) await rm(bundleDir, { recursive: true, force: true });
});

describe('widget bundle', () => {
  test('is content-hashed and within its size budget', () => {
    assert.match(manifest.file, /^widget\.[0-9a-f]{8}\.js$/);
    assert.ok(manifest.gzipBytes <= WIDGET_GZIP_BUDGET, `${manifest.gzipBytes} bytes gzip`);
    assert.ok(manifest.bytes > manifest.gzipBytes);
  });
});

describe('widget in Chromium', () => {
  test('renders the pre-filled identities into the page placeholder', async () => {
    const { page, errors, messages } = await openPage(
      `<p>before</p>${widgetScript(config({ displaySync: true }))}<p>between</p><div id="idsvc-widget">Loading…</div><p>after</p>`,
    );
    await rendered(page);
    const w = widget(page);
    assert.equal(await page.evaluate(() => document.querySelector('#idsvc-widget > idsvc-widget') !== null), true);
    assert.equal(await page.evaluate(() => document.querySelector('#idsvc-widget').childNodes.length), 1);
    assert.equal(await w.locator('section h2').textContent(), 'Your identities');
    const items = w.locator('section > ul > li');
    assert.equal(await items.count(), 3);
    assert.deepEqual(await items.locator('.name').allTextContents(), ['GitHub', 'Mastodon', 'Twitter']);
    const links = w.locator('section > ul').getByRole('link');
    assert.deepEqual(await links.evaluateAll((as) => as.map((a: any) => [a.getAttribute('href'), a.firstChild.textContent, a.rel])), [
      ['https://github.com/octo-alice', 'octo-alice', 'noopener noreferrer'],
      ['https://mastodon.social/@alice', 'alice@mastodon.social', 'noopener noreferrer'],
      ['https://x.com/alice_t', 'https://x.com/alice_t', 'noopener noreferrer'], // no usrSvcId: the URL
    ]);
    // The verified mark, only where verified, and named for screen readers.
    assert.equal(await items.nth(0).locator('.badge').textContent(), '✓ Verified');
    assert.equal(await items.nth(1).locator('.badge').count(), 0);
    assert.equal(await w.getByRole('button', { name: 'Change GitHub' }).count(), 1);
    assert.equal(await w.getByRole('button', { name: 'Remove Twitter' }).count(), 1);
    assert.equal(await items.nth(0).locator('img').getAttribute('src'), `${svc}/favicon/github.svg`);
    assert.equal(await page.evaluate(() => document.querySelector('idsvc-widget').shadowRoot !== null), true);
    assert.deepEqual(errors, []);
    assert.deepEqual(
      messages.filter((m) => m.type === 'error' || m.type === 'warning'),
      [],
    );
    await screenshotIfAsked(page);
  });

  test('renders right after its script tag when the page has no placeholder', async () => {
    const { page } = await openPage(`<p id="a">before</p>${widgetScript(config())}<p id="b">after</p>`);
    await rendered(page);
    assert.equal(
      await page
        .evaluate(() => {
          const host = document.querySelector('idsvc-widget');
          return [host.previousElementSibling.tagName, host.nextElementSibling.id];
        })
        .then((v: string[]) => v.join()),
      'SCRIPT,b',
    );
  });

  test('renders only http(s) URLs as links; anything else is plain text', async () => {
    const bad = [
      'javascript:window.__pwned=1',
      ' JaVaScRiPt:window.__pwned=1',
      'data:text/html,<script>window.__pwned=1</script>',
      'vbscript:x',
      '//evil.example/relative',
    ];
    const services: WidgetService[] = bad.map((url, i) => ({
      svcId: `bad${i}`,
      svcName: `Bad ${i}`,
      usrSvcId: null,
      url,
      verified: false,
      svcFavicon: 'javascript:window.__pwned=1',
    }));
    const { page, errors } = await openPage(widgetScript(config({ services, signUpUrl: 'javascript:window.__pwned=1' })));
    await rendered(page);
    const w = widget(page);
    assert.equal(await w.getByRole('link').count(), 0);
    assert.equal(await w.locator('img').count(), 0, 'no favicon from a non-http URL');
    assert.deepEqual(await w.locator('.ident').allTextContents(), bad);
    await w.locator('.ident').first().click();
    assert.equal(await page.evaluate(() => window.__pwned), undefined);
    assert.deepEqual(errors, []);
  });

  test('reports a warning once with console.warn', async () => {
    const warning = 'invalid or expired signature; showing the public view';
    const { page, messages } = await openPage(widgetScript(config({ warning, view: 'public' })));
    await rendered(page);
    await page.evaluate(() => new Promise((r) => setTimeout(r, 0))); // flush pending console events
    assert.deepEqual(
      messages.filter((m) => m.type === 'warning'),
      [{ type: 'warning', text: `idsvc widget: ${warning}` }],
    );
  });

  test('adds an identity with the keyboard alone', async () => {
    const { page, errors } = await openPage(widgetScript(config()));
    await rendered(page);
    const w = widget(page);
    const addButton = w.getByRole('button', { name: 'Add an identity' });
    await pressTabUntil(page, addButton);
    await page.keyboard.press('Enter');
    const combo = w.getByRole('combobox', { name: 'Service' });
    await waitFocused(page, combo);
    assert.equal(await combo.getAttribute('aria-expanded'), 'false');

    await page.keyboard.type('gitl');
    await w.getByRole('option', { name: 'GitLab' }).waitFor();
    assert.equal(await combo.getAttribute('aria-expanded'), 'true');
    const listbox = w.getByRole('listbox');
    assert.equal(await combo.getAttribute('aria-controls'), await listbox.getAttribute('id'));
    const names = await w.getByRole('option').allTextContents();
    assert.ok(
      names.every((n) => n.toLowerCase().includes('gitl')),
      names.join(),
    );

    await page.keyboard.press('ArrowDown');
    const first = w.getByRole('option').first();
    await page.waitForFunction(({ c, o }) => c.getAttribute('aria-activedescendant') === o.id && o.getAttribute('aria-selected') === 'true', {
      c: await combo.elementHandle(),
      o: await first.elementHandle(),
    });
    assert.equal(await first.textContent(), 'GitLab');
    await page.keyboard.press('Enter');

    const ident = w.getByRole('textbox', { name: 'Your username on GitLab' });
    await waitFocused(page, ident);
    assert.equal(await combo.inputValue(), 'GitLab');
    await page.keyboard.type('alice-gl');
    await w.getByText('https://gitlab.com/alice-gl', { exact: true }).waitFor();
    await page.keyboard.press('Enter');

    assert.deepEqual(await callsOnce(page), [['alice', 'gitlab', 'GitLab', 'alice-gl', 'https://gitlab.com/alice-gl']]);
    const row = w.locator('section > ul > li').nth(3);
    await row.getByRole('link', { name: /alice-gl/ }).waitFor();
    assert.equal(await row.locator('.name').textContent(), 'GitLab');
    await waitFocused(page, addButton);
    assert.equal(await w.locator('[role=status].sr').textContent(), 'GitLab added.');
    assert.deepEqual(errors, []);
  });

  test('a pasted profile URL picks the service and fills in the name; Add confirms it (issue 18)', async () => {
    const { page, errors } = await openPage(widgetScript(config()));
    await rendered(page);
    const w = widget(page);
    await w.getByRole('button', { name: 'Add an identity' }).click();
    const paste = w.getByRole('textbox', { name: 'Or paste the address of your profile' });
    await paste.fill('https://www.gitlab.com/Alice-GL/?tab=projects');
    await w.getByText('That is Alice-GL on GitLab. Check it, then press Add.').waitFor();
    assert.equal(await valueOnceSet(page, w.getByRole('combobox', { name: 'Service' }), 'GitLab'), 'GitLab');
    assert.equal(await valueOnceSet(page, w.getByRole('textbox', { name: 'Your username on GitLab' }), 'Alice-GL'), 'Alice-GL');
    assert.deepEqual(await page.evaluate(() => window.calls), [], 'nothing is reported before the user confirms');
    await w.getByRole('button', { name: 'Add', exact: true }).click();
    assert.deepEqual(await callsOnce(page), [['alice', 'gitlab', 'GitLab', 'Alice-GL', 'https://gitlab.com/Alice-GL']]);

    // An address no service has is the person's own site: offered as their Website, still not added.
    await w.getByRole('button', { name: 'Add an identity' }).click();
    const pasteAgain = w.getByRole('textbox', { name: 'Or paste the address of your profile' });
    await pasteAgain.fill('https://nowhere.example/alice');
    await w.getByText('That is https://nowhere.example/alice on Website. Check it, then press Add.').waitFor();
    assert.equal(await valueOnceSet(page, w.getByRole('combobox', { name: 'Service' }), 'Website'), 'Website');
    // Only an https address: an http one is no service's and no website's.
    await pasteAgain.fill('http://nowhere.example/alice');
    await w.getByText('No service we know has addresses like that. Choose the service instead.').waitFor();
    // Typed as the Website itself, an http address is flagged with what the field takes.
    await w.getByRole('textbox', { name: 'Your username on Website' }).fill('http://nowhere.example/alice');
    await w.getByText('Enter the https address of your site, e.g. https://example.com/blog.').waitFor();
    await w.getByRole('textbox', { name: 'Your username on Website' }).fill('nowhere.example/alice');
    await w.getByText('https://nowhere.example/alice', { exact: true }).waitFor();
    assert.equal((await page.evaluate(() => window.calls)).length, 1, 'only the GitLab identity was reported');
    assert.deepEqual(errors, []);
  });

  test('the picker: Escape closes it, then clears it, then closes the form', async () => {
    const { page } = await openPage(widgetScript(config()));
    await rendered(page);
    const w = widget(page);
    await w.getByRole('button', { name: 'Add an identity' }).click();
    const combo = w.getByRole('combobox', { name: 'Service' });
    await waitFocused(page, combo);
    await page.keyboard.type('mast');
    await w
      .getByRole('option', { name: /^Mastodon/ })
      .first()
      .waitFor();
    assert.equal(await w.getByRole('option').first().locator('.hint').textContent(), 'added');
    await page.keyboard.press('Escape');
    await page.waitForFunction((c) => c.getAttribute('aria-expanded') === 'false', await combo.elementHandle());
    assert.equal(await combo.inputValue(), 'mast');
    await page.keyboard.press('Escape');
    assert.equal(await combo.inputValue(), '');
    await page.keyboard.press('Escape');
    await waitFocused(page, w.getByRole('button', { name: 'Add an identity' }));
    assert.equal(await w.getByRole('combobox').count(), 0);

    // Saving without a service says so instead of calling back.
    await w.getByRole('button', { name: 'Add an identity' }).click();
    await waitFocused(page, combo);
    await w.getByRole('button', { name: 'Add', exact: true }).click();
    await w.getByText('Choose a service from the list.').waitFor();
    assert.equal(await combo.getAttribute('aria-invalid'), 'true');
    await waitFocused(page, combo);
    assert.deepEqual(await page.evaluate(() => window.calls), []);
  });

  test('previews the profile URL and flags an identifier that fails the pattern', async () => {
    const { page } = await openPage(widgetScript(config({ services: [] })));
    await rendered(page);
    const w = widget(page);
    assert.equal(await w.locator('.empty').textContent(), 'No identities yet.');
    await w.getByRole('button', { name: 'Add an identity' }).click();
    await page.keyboard.type('Twitter');
    await w.getByRole('option', { name: 'Twitter' }).click();
    const ident = w.getByRole('textbox', { name: 'Your username on Twitter' });
    await waitFocused(page, ident);

    await ident.fill('far_too_long_for_twitter');
    const warning = w.getByText(
      'This is not a username Twitter allows. Names on Twitter use only letters (a–z), digits and underscores (_), at most 15 characters.',
    );
    await warning.waitFor();
    await w.getByText('https://x.com/far_too_long_for_twitter', { exact: true }).waitFor();
    assert.equal(await ident.getAttribute('aria-invalid'), 'true');
    const describedBy = (await ident.getAttribute('aria-describedby'))!.split(' ');
    assert.ok(describedBy.includes((await warning.getAttribute('id'))!));
    // The server refuses such a name, so the widget does not report it to the page.
    await ident.press('Enter');
    await warning.waitFor();
    assert.deepEqual(await page.evaluate(() => window.calls), [], 'a name the pattern refuses is not saved');

    await ident.fill('alice_t');
    await w.getByText('https://x.com/alice_t', { exact: true }).waitFor();
    assert.equal(await warning.count(), 0);
    assert.equal(await ident.getAttribute('aria-invalid'), 'false');

    // An identifier cannot leave its place in the URL.
    await ident.fill('a/../b?c#d');
    await w.getByText('https://x.com/a%2F..%2Fb%3Fc%23d', { exact: true }).waitFor();

    // Mastodon builds the URL from the handle.
    const combo = w.getByRole('combobox', { name: 'Service' });
    await combo.fill('Masto');
    await w.getByRole('option', { name: 'Mastodon', exact: true }).click();
    const handle = w.getByRole('textbox', { name: 'Your username on Mastodon' });
    await handle.fill('alice');
    await w.getByText('Enter it as user@instance, e.g. alice@mastodon.social.').waitFor();
    assert.equal(await w.locator('.url').count(), 0);
    await w.getByRole('button', { name: 'Add', exact: true }).click();
    assert.deepEqual(await page.evaluate(() => window.calls), [], 'no URL, no save');
    await handle.fill('@alice@Fosstodon.ORG');
    await w.getByText('https://fosstodon.org/@alice', { exact: true }).waitFor();
    await handle.press('Enter');
    assert.deepEqual(await callsOnce(page), [['alice', 'mastodon', 'Mastodon', '@alice@Fosstodon.ORG', 'https://fosstodon.org/@alice']]);
  });

  test('a host-position template refuses what cannot be a host name; no template gives no URL', async () => {
    const { page } = await openPage(widgetScript(config({ services: [] })));
    await rendered(page);
    const w = widget(page);
    await w.getByRole('button', { name: 'Add an identity' }).click();
    const combo = w.getByRole('combobox', { name: 'Service' });
    await combo.fill('Tumblr');
    // Enter picks the first suggestion shown: wait for it, as a person would (the catalogue loads on its own).
    await w
      .getByRole('option', { name: /^Tumblr/ })
      .first()
      .waitFor();
    await combo.press('Enter');
    const blog = w.getByRole('textbox', { name: 'Your username on Tumblr' });
    await blog.fill('my blog');
    await w.getByText('This username contains characters that are not allowed.').waitFor();
    assert.equal(await w.locator('.url').count(), 0);
    await blog.fill('my-blog');
    await w.getByText('https://my-blog.tumblr.com/', { exact: true }).waitFor();

    await combo.fill('Offline');
    await w
      .getByRole('option', { name: /^Offline Club/ })
      .first()
      .waitFor();
    await combo.press('Enter');
    const member = w.getByRole('textbox', { name: 'Your username on Offline Club' });
    await member.fill('Member 42');
    await w.getByText('This is not a username Offline Club allows. Names on Offline Club use only lowercase letters (a–z) and digits.').waitFor();
    await member.fill('member42');
    await member.press('Enter');
    assert.deepEqual(await callsOnce(page), [['alice', 'offlineclub', 'Offline Club', 'member42', '']]);
    await w.locator('li .ident', { hasText: 'member42' }).waitFor();
    assert.equal(await w.locator('section > ul').getByRole('link').count(), 0);
  });

  test('changes an identity', async () => {
    const { page } = await openPage(widgetScript(config()));
    await rendered(page);
    const w = widget(page);
    const change = w.getByRole('button', { name: 'Change GitHub' });
    await change.click();
    const ident = w.getByRole('textbox', { name: 'Your username on GitHub' });
    await waitFocused(page, ident);
    assert.equal(await ident.inputValue(), 'octo-alice');
    await ident.fill('octo-bob');
    await w.getByText('https://github.com/octo-bob', { exact: true }).waitFor();
    await w.getByRole('button', { name: 'Save' }).click();
    assert.deepEqual(await callsOnce(page), [['alice', 'github', 'GitHub', 'octo-bob', 'https://github.com/octo-bob']]);
    const row = w.locator('section > ul > li').first();
    await row.getByRole('link', { name: /octo-bob/ }).waitFor();
    assert.equal(await row.getByRole('link').getAttribute('href'), 'https://github.com/octo-bob');
    assert.equal(await row.locator('.badge').count(), 0, 'a changed identity is no longer verified');
    await waitFocused(page, change);

    // Without usrSvcId in the view, the identifier is read back from the URL; Escape cancels.
    await w.getByRole('button', { name: 'Change Twitter' }).click();
    const twitter = w.getByRole('textbox', { name: 'Your username on Twitter' });
    await waitFocused(page, twitter);
    assert.equal(await twitter.inputValue(), 'alice_t');
    await page.keyboard.press('Escape');
    await waitFocused(page, w.getByRole('button', { name: 'Change Twitter' }));

    // Saving an empty identifier is refused (removal is its own button).
    await w.getByRole('button', { name: 'Change Mastodon' }).click();
    const masto = w.getByRole('textbox', { name: 'Your username on Mastodon' });
    await masto.fill('   ');
    await masto.press('Enter');
    await w.getByText('Enter your username.').waitFor();
    assert.equal((await page.evaluate(() => window.calls)).length, 1);
  });

  test('adding on a service that already has an identity asks before replacing it, naming the old one', async () => {
    const { page, errors } = await openPage(widgetScript(config()));
    await rendered(page);
    const w = widget(page);
    await w.getByRole('button', { name: 'Add an identity' }).click();
    const combo = w.getByRole('combobox', { name: 'Service' });
    await combo.fill('GitHub');
    await w
      .getByRole('option', { name: /^GitHub/ })
      .first()
      .click();
    const ident = w.getByRole('textbox', { name: 'Your username on GitHub' });
    await ident.fill('octo-bob');
    await w.getByRole('button', { name: 'Add', exact: true }).click();
    const question = w.getByRole('alert').filter({ hasText: 'You already have octo-alice on GitHub. Replace it with octo-bob?' });
    await question.waitFor();
    assert.deepEqual(await page.evaluate(() => window.calls), [], 'nothing is replaced before the user says so');
    // Editing the name withdraws the question; asking again names the new one.
    await ident.fill('octo-carol');
    assert.equal(await question.count(), 0);
    await w.getByRole('button', { name: 'Add', exact: true }).click();
    await w.getByText('You already have octo-alice on GitHub. Replace it with octo-carol?').waitFor();
    await w.getByRole('button', { name: 'Replace', exact: true }).click();
    assert.deepEqual(await callsOnce(page), [['alice', 'github', 'GitHub', 'octo-carol', 'https://github.com/octo-carol']]);
    await w
      .locator('section > ul > li')
      .first()
      .getByRole('link', { name: /octo-carol/ })
      .waitFor();
    assert.equal(await w.locator('li .name', { hasText: 'GitHub' }).count(), 1, 'replaced, not added twice');
    assert.deepEqual(errors, []);
  });

  test('says in one line what the service is, links to sign up, and the sync form names the account', async () => {
    const { page } = await openPage(widgetScript(config({ displaySync: true })) + widgetScript(config({ lang: 'de', displaySync: true })));
    await rendered(page, 2);
    const w = widget(page);
    assert.equal(
      await w.locator('p.about').textContent(),
      'Example ID keeps your identities on other sites in one place, shared only when you choose. Sign up for Example ID (opens in a new tab)',
    );
    const signUp = w.getByRole('link', { name: 'Sign up for Example ID (opens in a new tab)' });
    assert.equal(await signUp.getAttribute('href'), `${svc}/signup`);
    assert.equal(await w.locator('form.sync h3').textContent(), 'Sync with your Example ID account');
    assert.equal(await w.getByRole('form', { name: 'Sync with your Example ID account' }).count(), 1);
    const de = widget(page, 1);
    assert.equal(await de.locator('form.sync h3').textContent(), 'Mit Ihrem Example ID-Konto synchronisieren');
    assert.equal(await de.getByRole('link', { name: /^Bei Example ID registrieren/ }).getAttribute('href'), `${svc}/signup`);
  });

  test('removes an identity', async () => {
    const { page } = await openPage(widgetScript(config()));
    await rendered(page);
    const w = widget(page);
    await w.getByRole('button', { name: 'Remove Mastodon' }).click();
    assert.deepEqual(await callsOnce(page), [['alice', 'mastodon', 'Mastodon', '', '']]);
    await page.waitForFunction(() => document.querySelector('idsvc-widget').shadowRoot.querySelectorAll('li').length === 2);
    assert.deepEqual(await w.locator('li .name').allTextContents(), ['GitHub', 'Twitter']);
    assert.equal(await w.locator('[role=status].sr').textContent(), 'Mastodon removed.');
    await waitFocused(page, w.getByRole('button', { name: 'Change Twitter' })); // focus is not lost
  });

  test('the sync form calls init_sync_user_idsvc and shows the answer', async () => {
    const { page, errors } = await openPage(widgetScript(config({ displaySync: true })));
    await rendered(page);
    const w = widget(page);
    const email = w.getByRole('textbox', { name: 'E-mail address' });
    const password = w.getByLabel('Password');
    await email.fill(' alice@example.com ');
    await password.fill('s3cret pw');
    await password.press('Enter');
    assert.deepEqual(await callsOnce(page, 'syncCalls'), [['alice', 'alice@example.com', 's3cret pw']]);
    const status = w.locator('form.sync [role=status]');
    assert.equal(await status.getAttribute('aria-live'), 'polite');
    assert.equal(await status.textContent(), 'Syncing…');

    const xml =
      '<?xml version="1.0" encoding="UTF-8"?>\n<error><code>invalid_credentials</code>' +
      '<message>Wrong e-mail address or password &lt;img src=x onerror=window.__pwned=1&gt;</message></error>';
    assert.equal(await page.evaluate((x) => window.handle_sync_results_idsvc(x), xml), false);
    await page.waitForFunction(
      (s) => s.textContent === 'Sync failed: Wrong e-mail address or password <img src=x onerror=window.__pwned=1>',
      await status.elementHandle(),
    );
    assert.equal(await status.locator('img').count(), 0, 'the message is text');
    assert.equal(await password.inputValue(), '', 'the password is cleared');
    assert.equal(await email.inputValue(), 'alice@example.com');

    assert.equal(await page.evaluate(() => window.handle_sync_results_idsvc('<?xml version="1.0"?><result>true</result>')), true);
    await page.waitForFunction((s) => s.textContent === 'Synced with your account.', await status.elementHandle());

    // The JSON forms and the bare values.
    const outcomes: [unknown, string][] = [
      ['{"error":{"code":"rate_limited","message":"Too many attempts"}}', 'Sync failed: Too many attempts'],
      ['true', 'Synced with your account.'],
      ['<error><code>x</code></error>', 'Sync failed.'],
      [true, 'Synced with your account.'],
      ['garbage', 'Sync failed.'],
      ['{"result":"true"}', 'Synced with your account.'],
    ];
    for (const [input, shown] of outcomes) {
      await page.evaluate((v) => window.handle_sync_results_idsvc(v), input);
      await page.waitForFunction(([s, t]) => s.textContent === t, [await status.elementHandle(), shown] as const);
    }
    assert.equal(await page.evaluate(() => window.__pwned), undefined);
    assert.deepEqual(errors, []);
  });

  test('sync answers go to the widget that started the sync, else to every sync form', async () => {
    const { page } = await openPage(
      widgetScript(config({ displaySync: true, userIdentifier: 'alice' })) +
        widgetScript(config({ displaySync: false, userIdentifier: 'bob' })) +
        widgetScript(config({ displaySync: true, userIdentifier: 'carol' })),
    );
    await rendered(page, 3);
    const status = (i: number) => widget(page, i).locator('form.sync [role=status]');
    assert.equal(await widget(page, 1).locator('form.sync').count(), 0, 'no sync form without display_sync');

    await page.evaluate(() => window.handle_sync_results_idsvc('true'));
    await page.waitForFunction(() =>
      Array.from(document.querySelectorAll('idsvc-widget')).every(
        (h: any) =>
          !h.shadowRoot.querySelector('form.sync') || h.shadowRoot.querySelector('form.sync [role=status]').textContent === 'Synced with your account.',
      ),
    );

    const carol = widget(page, 2);
    await carol.getByRole('textbox', { name: 'E-mail address' }).fill('carol@example.com');
    await carol.getByLabel('Password').fill('pw');
    await carol.getByRole('button', { name: 'Sync', exact: true }).click();
    assert.deepEqual(await callsOnce(page, 'syncCalls'), [['carol', 'carol@example.com', 'pw']]);
    await page.evaluate(() => window.handle_sync_results_idsvc('<error><code>invalid_credentials</code><message>Nope</message></error>'));
    await page.waitForFunction((s) => s.textContent === 'Sync failed: Nope', await status(2).elementHandle());
    assert.equal(await status(0).textContent(), 'Synced with your account.');
  });

  test('two widgets on one page, before and after the bundle has loaded', async () => {
    const { page, errors } = await openPage(
      `<div id="idsvc-widget"></div>${widgetScript(config({ userIdentifier: 'alice' }))}` +
        `<p id="mid">mid</p>${widgetScript(config({ userIdentifier: 'bob', services: [] }))}<p id="end">end</p>`,
    );
    await rendered(page, 2);
    assert.deepEqual(
      await page.evaluate(() =>
        Array.from(document.querySelectorAll('idsvc-widget')).map((h: any) => [
          h.parentElement.id || h.parentElement.tagName,
          h.nextElementSibling ? h.nextElementSibling.id : null,
        ]),
      ),
      [
        ['idsvc-widget', null],
        ['BODY', 'end'],
      ],
    );
    // A third one, added by script once everything has loaded, goes straight to the bundle.
    const third = widgetScript(config({ userIdentifier: 'carol' })).match(/src="([^"]+)"/)![1]!;
    await page.evaluate((src) => {
      const s = document.createElement('script');
      s.src = src;
      document.getElementById('mid').after(s);
    }, third);
    await rendered(page, 3);
    assert.equal(await page.evaluate(() => document.querySelector('#mid').nextElementSibling.nextElementSibling.tagName), 'IDSVC-WIDGET');
    assert.equal(await page.evaluate(() => document.querySelectorAll('script[src*="/widget/widget."]').length), 1);

    // In document order: alice (placeholder), carol (after #mid), bob (after its own script).
    for (const [i, user] of [
      [0, 'alice'],
      [1, 'carol'],
    ] as const) {
      await widget(page, i).getByRole('button', { name: 'Remove GitHub' }).click();
      await page.waitForFunction((n) => window.calls.length === n, i + 1);
      assert.deepEqual((await page.evaluate(() => window.calls)).at(-1), [user, 'github', 'GitHub', '', '']);
    }
    assert.equal(await widget(page, 2).locator('.empty').textContent(), 'No identities yet.');
    assert.equal(await widget(page, 0).locator('li').count(), 2);
    assert.equal(await widget(page, 1).locator('li').count(), 2);
    assert.deepEqual(errors, []);
  });

  test("the page's CSS cannot restyle the widget", async () => {
    const { page } = await openPage(`<div class="box">${widgetScript(config({ displaySync: true }))}</div>`);
    await rendered(page);
    const probe = () => page.evaluate(STYLE_PROBE) as Promise<{ host: string; hostSize: boolean[]; inner: string[] }>;
    const before = await probe();
    assert.ok(!before.inner.some((s: string) => s.endsWith('missing')), before.inner.join('\n'));
    await page.addStyleTag({
      content: `
        body * , body *::before, body *::after {
          color: red !important; background: yellow !important; font: italic 30px/3 "Comic Sans MS", cursive !important;
          letter-spacing: 4px !important; text-transform: uppercase !important; padding: 20px !important;
          margin: 13px !important; border: 5px dashed lime !important; width: 50px !important; height: 50px !important;
          opacity: .3 !important; outline: 3px solid orange !important; box-sizing: content-box !important;
          visibility: hidden !important; display: none !important;
        }
        .box { display: block !important; visibility: visible !important; width: auto !important; height: auto !important;
          padding: 0 !important; margin: 0 !important; border: 0 !important; } /* the widget's box stays the same size */
        idsvc-widget, idsvc-widget * { display: none !important; all: unset !important; }
        section, h2, li, a, button, input { display: none !important; color: red !important; }`,
    });
    const afterCss = await probe();
    assert.deepEqual(afterCss, before);
    assert.deepEqual(before.hostSize, [true, true]);
  });

  test('nasty strings in the data neither break the script nor execute', async () => {
    const nasty = `</script><script>window.__pwned=1</script><!--\u2028\u2029"'<img src=x onerror="window.__pwned=1">&amp;`;
    const services: WidgetService[] = [
      {
        svcId: 'github',
        svcName: `GitHub ${nasty}`,
        usrSvcId: nasty,
        url: `https://github.com/${encodeURIComponent(nasty)}`,
        verified: true,
        svcFavicon: `${svc}/favicon/github.svg"><img src=x onerror=window.__pwned=1>`,
      },
    ];
    const cfg = config({ userIdentifier: nasty, services, warning: nasty, displaySync: true });
    // Inline in the page, where `</script>` and `<!--` would matter most, and as an external script.
    const { page, errors, messages } = await openPage(
      `<script>${renderWidgetBootScript(cfg)}</script><p>between</p>${widgetScript(cfg)}<p id="end">end</p>` +
        `<script>${renderWidgetErrorScript('forbidden', nasty)}</script>`,
    );
    await rendered(page, 2);
    await page.evaluate(() => new Promise((r) => setTimeout(r, 0)));
    assert.equal(await page.evaluate(() => document.getElementById('end').textContent), 'end');
    for (const i of [0, 1]) {
      const w = widget(page, i);
      assert.equal(await w.locator('.ident a').evaluate((a: any) => a.firstChild.textContent), nasty);
      assert.equal(await w.locator('.name').textContent(), `GitHub ${nasty}`);
      // Nothing but the widget's own markup: no script, no element with an event handler attribute.
      assert.equal(
        await page.evaluate(
          (n) =>
            Array.from(document.querySelectorAll('idsvc-widget')[n].shadowRoot.querySelectorAll('*')).filter(
              (el: any) => el.tagName === 'SCRIPT' || Array.from(el.attributes).some((a: any) => /^on/i.test(a.name)),
            ).length,
          i,
        ),
        0,
      );
    }
    await widget(page, 1)
      .getByRole('button', { name: /^Remove/ })
      .click();
    assert.deepEqual(await callsOnce(page), [[nasty, 'github', `GitHub ${nasty}`, '', '']]);
    const sync = widget(page, 0);
    await sync.getByRole('textbox', { name: 'E-mail address' }).fill('a@example.com');
    await sync.getByLabel('Password').fill('pw');
    await sync.getByRole('button', { name: 'Sync', exact: true }).click();
    assert.deepEqual(await callsOnce(page, 'syncCalls'), [[nasty, 'a@example.com', 'pw']]);
    assert.equal(await page.evaluate(() => window.__pwned), undefined);
    assert.deepEqual(errors, []);
    const texts = messages.map((m) => `${m.type} ${m.text}`).sort();
    assert.deepEqual(texts, [`error idsvc widget: forbidden: ${nasty}`, `warning idsvc widget: ${nasty}`, `warning idsvc widget: ${nasty}`]);
  });

  test('speaks the language asked for, falling back to English', async () => {
    const { page } = await openPage(
      widgetScript(config({ lang: 'de', displaySync: true })) +
        widgetScript(config({ lang: 'fr-CA' })) +
        widgetScript(config({ lang: 'es' })) +
        widgetScript(config({ lang: 'xx' })),
    );
    await rendered(page, 4);
    const title = (i: number) => widget(page, i).locator('h2').first().textContent();
    assert.deepEqual(await Promise.all([0, 1, 2, 3].map(title)), ['Ihre Identitäten', 'Vos identités', 'Tus identidades', 'Your identities']);
    const de = widget(page, 0);
    assert.equal(await de.locator('section').getAttribute('lang'), 'de');
    assert.equal(await de.getByRole('button', { name: 'GitHub ändern' }).count(), 1);
    assert.equal(await de.getByRole('button', { name: 'Mit Ihrem Konto synchronisieren' }).count(), 0);
    assert.equal(await de.getByRole('button', { name: 'Synchronisieren' }).count(), 1);
    await de.getByRole('button', { name: 'Identität hinzufügen' }).click();
    await de.getByRole('combobox', { name: 'Dienst' }).waitFor();
    // The rule in words is English only; other languages show a name the pattern accepts.
    await de.getByRole('combobox', { name: 'Dienst' }).fill('Twitter');
    await de.getByRole('option', { name: 'Twitter' }).click();
    await de.getByRole('textbox', { name: 'Ihr Benutzername bei Twitter' }).fill('far_too_long_for_twitter');
    await de.getByText('Diesen Benutzernamen erlaubt Twitter nicht. Benutzernamen dort sehen so aus: „alice“.').waitFor();
  });

  test('a catalogue that fails to load can be retried', async () => {
    const { page } = await openPage(widgetScript(config({ catalogueUrl: `${svc}/flaky-catalogue.json` })));
    await rendered(page);
    const w = widget(page);
    await w.getByRole('button', { name: 'Add an identity' }).click();
    await w.getByText('Could not load the list of services.').waitFor();
    await w.getByRole('button', { name: 'Try again' }).click();
    await w.getByRole('combobox', { name: 'Service' }).fill('Keyb');
    await w.getByRole('option', { name: 'Keybase' }).waitFor();
  });
});

// A string, not a function: tsx would wrap the inner arrow functions in a helper the page lacks.
const STYLE_PROBE = `(() => {
  const host = document.querySelector('idsvc-widget');
  const props = ['display', 'visibility', 'color', 'background-color', 'font-family', 'font-size', 'font-weight',
    'line-height', 'letter-spacing', 'text-transform', 'padding-top', 'margin-top', 'border-top-width',
    'border-top-color', 'width', 'height', 'opacity', 'outline-style', 'box-sizing'];
  const pick = (el) => { const cs = getComputedStyle(el); return props.map((p) => p + '=' + cs.getPropertyValue(p)).join(';'); };
  const rect = host.getBoundingClientRect();
  return {
    host: pick(host),
    hostSize: [rect.width > 100, rect.height > 100],
    inner: ['section', 'h2', 'li', '.name', 'a', 'button', '.btn.add', 'input', 'label', '.badge'].map((sel) => {
      const el = host.shadowRoot.querySelector(sel);
      return el ? sel + ': ' + pick(el) : sel + ': missing';
    }),
  };
})()`;

/** WIDGET_SCREENSHOT=/tmp/widget.png: a picture of the first widget, with the picker open. */
async function screenshotIfAsked(page: Page): Promise<void> {
  const file = process.env.WIDGET_SCREENSHOT;
  if (!file) return;
  const w = widget(page);
  await w.getByRole('button', { name: 'Add an identity' }).click();
  await page.keyboard.type('git');
  await w.getByRole('option').first().waitFor();
  await page.keyboard.press('ArrowDown');
  await page.keyboard.press('ArrowDown');
  await page.screenshot({ path: file, fullPage: true });
}

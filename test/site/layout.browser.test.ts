// Every page of the site in a real Chromium at phone, tablet and desktop widths: none is wider than
// the screen (so nothing scrolls sideways), and every visible form control has a visible label
// beside it (a checkbox on the same line as its words). Signed out, signed in with an account that
// has identities, checks, a finished "Find my identities", a connected site and a profile, and the
// widget as a partner page embeds it.
import assert from 'node:assert/strict';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { after, before, describe, test } from 'node:test';
import { signWidget } from '@idsvc/client';
import type { Browser, BrowserContext, ConsoleMessage, Page, Request, Response } from 'playwright-core';
import { centralIdentityIdOf } from '../../src/repositories/central-identities.js';
import { findUserByUserId } from '../../src/repositories/users.js';
import { saveProfile } from '../../src/services/accounts.js';
import { setCentralIdentity } from '../../src/services/central.js';
import { runDueDiscoveries, startDiscovery } from '../../src/services/discovery.js';
import { ACCOUNT_PAGES } from '../../src/site/views/AccountNav.js';
import { verifyIdentity } from '../../src/verification/verify.js';
import { launchChromium, screenshot } from '../helpers/chromium.js';
import { lastMailTo, linkIn } from '../helpers/mailbox.js';
import type { TestApp } from '../helpers/app.js';
import { startServer, type LocalServer } from '../verification/servers.js';
import { addSitesOnOneServer, startSiteApp } from './helpers.js';

const WIDTHS = [320, 390, 768, 1280] as const;
const SHOT_WIDTHS: readonly number[] = [390, 1280];
const EMAIL = 'layout.person@example.org';
const USER_ID = 'layout_person';
const PASSWORD = 'seven lanterns over the bay';
// Long values are where a layout breaks: a name with no place to wrap, a long page address.
const LONG_NAME = 'a-rather-long-name-with-no-spaces-at-all-anywhere';

let t: TestApp;
let web: LocalServer;
let browser: Browser;
let signedIn: BrowserContext;
let signedOut: BrowserContext;
let widgetPage = '';
const partnerPages = new Map<string, string>();

before(async () => {
  t = await startSiteApp();
  const profile = `${t.config.baseUrl}/u/${USER_ID}`;
  web = await startServer((req: IncomingMessage, res: ServerResponse) => {
    const body = partnerPages.get(req.url ?? '/');
    res.writeHead(body === undefined ? 404 : 200, { 'content-type': 'text/html; charset=utf-8' });
    res.end(body ?? 'not found');
  });
  const o = web.origin;
  partnerPages.set(
    '/home',
    `<a rel="me" href="${profile}">me</a><a rel="me" href="${o}/alpha/${LONG_NAME}">alpha</a><a rel="me" href="${o}/beta/me">beta</a><a rel="me" href="${o}/gone">gone</a>`,
  );
  partnerPages.set(`/alpha/${LONG_NAME}`, `<a rel="me" href="${o}/home">home</a>`);
  partnerPages.set('/beta/me', '<p>no link back</p>');
  await addSitesOnOneServer(t, o, ['alpha', 'beta']);
  await t.user({ email: EMAIL, userId: USER_ID, password: PASSWORD, optedIn: true });
  const user = (await findUserByUserId(t.ctx.db, USER_ID))!;
  const snap = await t.ctx.catalogue.get();
  for (const [svcId, name] of [
    ['beta', 'me'],
    ['github', 'layout-person'],
  ] as const) {
    await t.ctx.db.write((tx) => setCentralIdentity(tx, user, snap.byId.get(svcId)!, name, { partnerId: null }, t.clock.now()));
  }
  // A failed check with its reason, so "Recent checks" has a long "Why".
  await verifyIdentity(t.ctx, (await centralIdentityIdOf(t.ctx.db, user.id, 'beta'))!);
  await saveProfile(t.ctx, user, { nickname: 'Lay', firstName: 'Layla', city: 'Porto', bio: 'Draws maps of places that do not exist.' }, [
    'nickname',
    'firstName',
    'bio',
  ]);
  // A finished search, whose results the identities page lists to tick.
  const started = await startDiscovery(t.ctx, user, `${o}/home`);
  assert.ok(started.started);
  while ((await runDueDiscoveries(t.ctx, 1)) > 0) {
    // runs until the walk is done
  }
  // A connected site, and the widget as its page embeds it.
  const partner = await t.partner({ name: 'Cartographers Guild' });
  await partner.client.syncUser(EMAIL, { email: EMAIL, password: PASSWORD });
  const exp = Math.floor(t.clock.now() / 1000) + 3600;
  const sig = await signWidget(partner.apiKey, EMAIL, exp, partner.apiToken);
  const script = `${t.baseUrl}/api/service_collection_widget/${partner.apiKey}/${encodeURIComponent(EMAIL)}/TRUE?exp=${exp}&sig=${sig}`;
  partnerPages.set(
    '/partner',
    `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>Partner</title></head><body><h1>Your settings</h1><div id="idsvc-widget"></div><script src="${script}"></script></body></html>`,
  );
  widgetPage = `${o}/partner`;

  browser = await launchChromium();
  signedOut = await browser.newContext();
  signedIn = await browser.newContext();
  const page = await signedIn.newPage();
  await page.goto(`${t.baseUrl}/login`);
  await page.getByLabel('E-mail address or userId').fill(USER_ID);
  await page.getByLabel('Password', { exact: true }).fill(PASSWORD);
  await page.getByRole('button', { name: 'Log in' }).click();
  await page.waitForURL(/\/account/);
  await page.close();
});

after(async () => {
  await browser?.close();
  await web?.close();
  await t?.close();
});

/**
 * What is wrong with the page's layout as the browser lays it out now: wider than the screen, or a
 * visible form control (in the page or in a shadow root) without a visible label beside it.
 */
function layoutProblems(): string[] {
  const problems: string[] = [];
  const doc = document.documentElement;
  if (doc.scrollWidth > window.innerWidth) {
    // Name the innermost elements that stick out, or whose text does, so a failure says where to look.
    const out = Array.from(document.body.querySelectorAll('*')).filter(
      (el) => el.getBoundingClientRect().right > window.innerWidth + 0.5 || el.scrollWidth > window.innerWidth,
    );
    const innermost = out.filter((el) => !out.some((o) => o !== el && el.contains(o)));
    const names = innermost.slice(0, 4).map((el) => {
      const r = el.getBoundingClientRect();
      const classes = typeof el.className === 'string' && el.className.trim() !== '' ? `.${el.className.trim().split(/\s+/).join('.')}` : '';
      return `${el.tagName.toLowerCase()}${el.id ? `#${el.id}` : ''}${classes} at ${Math.round(r.left)}–${Math.round(r.right)} px`;
    });
    problems.push(`the page is ${doc.scrollWidth} px wide in a ${window.innerWidth} px window (sticking out: ${names.join(', ')})`);
  }
  // Laid out, not hidden by CSS, and not inside a closed disclosure (whose content Chromium keeps
  // laid out but does not paint).
  const shown = (el: Element): boolean => {
    const r = el.getBoundingClientRect();
    return r.width >= 2 && r.height >= 2 && el.checkVisibility({ checkOpacity: true, checkVisibilityCSS: true, contentVisibilityAuto: true });
  };
  const text = (el: Element) => ((el as HTMLElement).innerText ?? el.textContent ?? '').trim();
  // A checkbox's or radio's words on its line; any other field's label on its line or above it, with
  // at most a hint between them (no other field's label).
  const allLabels = Array.from(document.querySelectorAll('label'));
  const beside = (control: Element, label: Element): boolean => {
    if (label.contains(control)) return true;
    const a = control.getBoundingClientRect();
    const b = label.getBoundingClientRect();
    const dx = Math.max(0, b.left - a.right, a.left - b.right);
    const dy = Math.max(0, b.top - a.bottom, a.top - b.bottom);
    const type = (control as HTMLInputElement).type;
    if (type === 'checkbox' || type === 'radio') return dy === 0 && dx <= 32;
    if (dy === 0) return dx <= 32;
    if (b.bottom > a.top || dx > 0 || dy > 160) return false;
    return !allLabels.some((other) => {
      if (other === label || !shown(other)) return false;
      const o = other.getBoundingClientRect();
      return o.top >= b.bottom && o.bottom <= a.top && o.right > a.left && o.left < a.right;
    });
  };
  const roots: (Document | ShadowRoot)[] = [document];
  for (let i = 0; i < roots.length; i++) {
    for (const el of Array.from(roots[i]!.querySelectorAll('*'))) if (el.shadowRoot) roots.push(el.shadowRoot);
  }
  for (const root of roots) {
    for (const control of Array.from(
      root.querySelectorAll<HTMLInputElement | HTMLSelectElement | HTMLTextAreaElement>('input:not([type="hidden"]), select, textarea'),
    )) {
      if (!shown(control)) continue;
      if ((control.getAttribute('aria-label') ?? '').trim() !== '') continue;
      const labels: Element[] = Array.from(control.labels ?? []);
      for (const id of (control.getAttribute('aria-labelledby') ?? '').split(/\s+/).filter(Boolean)) {
        const found = (control.getRootNode() as Document | ShadowRoot).getElementById(id);
        if (found) labels.push(found);
      }
      if (!labels.some((l) => shown(l) && text(l) !== '' && beside(control, l))) {
        problems.push(
          `${control.tagName.toLowerCase()}${control.id ? `#${control.id}` : ''}[name=${control.getAttribute('name') ?? ''}] has no visible label beside it`,
        );
      }
    }
  }
  return problems;
}

async function check(context: BrowserContext, url: string, name: string, ready?: (page: Page) => Promise<void>): Promise<void> {
  const page = await context.newPage();
  const errors: string[] = [];
  page.on('pageerror', (err) => errors.push(err.message));
  const problems: string[] = [];
  try {
    for (const width of WIDTHS) {
      await page.setViewportSize({ width, height: 800 });
      const res = await page.goto(url);
      assert.equal(res?.status(), 200, `${url} answers`);
      if (ready) await ready(page);
      for (const p of await page.evaluate(layoutProblems)) problems.push(`${width} px: ${p}`);
      if (SHOT_WIDTHS.includes(width) && name.startsWith('account')) {
        await screenshot(page, `${name}-${width}.png`);
      }
    }
  } finally {
    await page.close();
  }
  assert.deepEqual(errors, [], 'no script errors');
  assert.deepEqual(problems, [], `${url}:\n${problems.join('\n')}`);
}

describe('signed out', () => {
  for (const [name, p] of [
    ['home', '/'],
    ['sign-up', '/signup'],
    ['log-in', '/login'],
    ['forgot', '/forgot'],
    ['forgot-sent', '/forgot/sent'],
    ['public profile', `/u/${USER_ID}`],
  ] as const) {
    test(`${name} (${p}) fits every width and labels every field`, () => check(signedOut, `${t.baseUrl}${p}`, name));
  }
  test('the reset page fits every width and labels every field', async () => {
    // The page a reset link opens, with a token the server gave (the one in the mail).
    const page = await signedOut.newPage();
    await page.goto(`${t.baseUrl}/forgot`);
    await page.getByLabel('E-mail address').fill(EMAIL);
    await page.getByRole('button', { name: 'Mail me a link' }).click();
    await page.waitForURL(/\/forgot\/sent/);
    await page.close();
    await check(signedOut, `${t.baseUrl}${linkIn(await lastMailTo(t, EMAIL), '/reset?token=')}`, 'reset');
  });
});

describe('signed in, with identities, checks, search results, a connected site and a profile', () => {
  for (const { page: name, path: p } of ACCOUNT_PAGES) {
    test(`${p} fits every width and labels every field`, () => check(signedIn, `${t.baseUrl}${p}`, `account-${name}`));
  }
  test('/account/proofs fits every width and labels every field', () => check(signedIn, `${t.baseUrl}/account/proofs`, 'account-proofs'));
  test('/account/photo fits every width and labels every field', () => check(signedIn, `${t.baseUrl}/account/photo`, 'account-photo'));

  test('the identities page shows the search results and the checks', async () => {
    const page = await signedIn.newPage();
    await page.setViewportSize({ width: 390, height: 800 });
    await page.goto(`${t.baseUrl}/account`);
    // Each result's box is on the line of its words.
    await page
      .locator('[data-found="alpha"]')
      .getByRole('checkbox', { name: /Site alpha/ })
      .waitFor();
    // On a phone each check is a stack of labelled lines, and every column is on screen.
    const row = page.locator('#checks tbody tr').first();
    for (const heading of ['When', 'Service', 'Result', 'Why']) {
      const cell = row.locator(`td[data-label="${heading}"]`);
      const box = await cell.boundingBox();
      assert.ok(box && box.width > 200 && box.x >= 0 && box.x + box.width <= 390, `${heading} is on screen as its own line (${JSON.stringify(box)})`);
    }
    await page.close();
  });
});

/** The server's log lines of every widget request and every refusal (the log holds no secrets: its URLs are redacted). */
function widgetRequestLogs(): string[] {
  const reqIdOf = (line: string): string | undefined => {
    try {
      return (JSON.parse(line) as { reqId?: string }).reqId;
    } catch {
      return undefined;
    }
  };
  const ids = new Set(t.logs.filter((line) => line.includes('service_collection_widget')).map(reqIdOf));
  ids.delete(undefined);
  // A refusal written straight on a connection has a request id of its own and no path.
  return t.logs.filter((line) => ids.has(reqIdOf(line)) || line.includes('"refused"'));
}

describe('the widget in a partner page', () => {
  test('fits every width and labels every field', async () => {
    // What the browser and the server heard, for the message when the widget never shows: the
    // console (the boot script reports an error answer there), every answer that was not a success
    // or failed to load, and the server's log of the widget's requests.
    const heard: string[] = [];
    const onConsole = (m: ConsoleMessage) => heard.push(`console.${m.type()}: ${m.text()}`);
    const onResponse = (r: Response) => {
      if (r.status() >= 400) heard.push(`${r.status()} ${r.url()}`);
    };
    const onFailed = (r: Request) => heard.push(`failed ${r.url()}: ${r.failure()?.errorText ?? ''}`);
    signedOut.on('console', onConsole).on('response', onResponse).on('requestfailed', onFailed);
    try {
      await check(signedOut, widgetPage, 'widget', async (page) => {
        try {
          await page.locator('idsvc-widget').locator('section h2').waitFor();
        } catch (err) {
          throw new Error(
            `the widget did not show: ${(err as Error).message}\n${heard.join('\n') || '(nothing heard)'}\nwhat the server logged of it:\n${widgetRequestLogs().join('') || '(no widget request reached it)'}`,
          );
        }
      });
    } finally {
      signedOut.off('console', onConsole).off('response', onResponse).off('requestfailed', onFailed);
    }
  });
});

// The whole flow a partner builds, in real Chromium: the example partner site (examples/partner-site)
// embeds the widget from a real idsvc; the widget's callbacks go to the site's server, which calls
// update_service and sync_user with the client library; return_services shows the result.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Browser } from 'playwright-core';
import { userIdentifierOf } from '../../examples/partner-site/site.js';
import type { TestApp } from '../helpers/app.js';

// Callbacks passed to page.evaluate run in the page; this name exists there, not in Node.
declare const window: any;
import {
  activity,
  ALICE,
  launchChromium,
  listed,
  openPage,
  pressTabUntil,
  problems,
  rendered,
  startExampleSite,
  startIdsvc,
  startPageServer,
  waitFocused,
  widget,
  type Opened,
  type Served,
} from './harness.js';

let t: TestApp;
let browser: Browser;
let account: { id: number; password: string };
const closing: (() => Promise<unknown>)[] = [];
const uid = userIdentifierOf(ALICE.email);

before(async () => {
  t = await startIdsvc();
  browser = await launchChromium();
  // Alice's account on idsvc, which the widget's sync form links to.
  account = await t.user({ email: ALICE.email, userId: 'alice', password: 'alice has a long password' });
});

after(async () => {
  for (const close of closing.reverse()) await close().catch(() => {});
  await browser?.close();
  await t?.close();
});

/** A partner of its own and the example site in front of it, per test. */
async function exampleSite(): Promise<{ partner: Awaited<ReturnType<TestApp['partner']>>; site: Served }> {
  const partner = await t.partner({ name: 'Example partner' });
  const site = await startExampleSite(t, partner);
  closing.push(site.close);
  return { partner, site };
}

async function open(url: string): Promise<Opened> {
  const o = await openPage(browser, url);
  closing.push(() => o.context.close());
  return o;
}

test('add, change and remove an identity; return_services sees each step', async () => {
  const { partner, site } = await exampleSite();
  const o = await open(`${site.origin}/`);
  await rendered(o.page);
  const w = widget(o.page);
  assert.equal(await o.page.locator('#idsvc-widget > idsvc-widget').count(), 1, 'rendered into the page placeholder');
  assert.equal(await w.locator('.empty').textContent(), 'No identities yet.');

  await w.getByRole('button', { name: 'Add an identity' }).click();
  await w.getByRole('combobox', { name: 'Service' }).fill('GitHub');
  await w.getByRole('option', { name: 'GitHub', exact: true }).click();
  await w.getByRole('textbox', { name: 'Your username on GitHub' }).fill('octo-alice');
  await w.getByText('https://www.github.com/octo-alice', { exact: true }).waitFor(); // the preview
  await w.getByRole('button', { name: 'Add', exact: true }).click();
  assert.deepEqual(await activity(o.page, 1), ['Saved GitHub: octo-alice (https://www.github.com/octo-alice)']);
  assert.deepEqual(await partner.client.returnServices(uid), [
    {
      svcId: 'github',
      svcName: 'GitHub',
      usrSvcId: 'octo-alice',
      url: 'https://www.github.com/octo-alice',
      verified: false,
      svcFavicon: 'https://www.github.com/favicon.ico',
    },
  ]);

  await w.getByRole('button', { name: 'Change GitHub' }).click();
  await w.getByRole('textbox', { name: 'Your username on GitHub' }).fill('octo-alice-2');
  await w.getByRole('button', { name: 'Save' }).click();
  assert.deepEqual((await activity(o.page, 2))[1], 'Saved GitHub: octo-alice-2 (https://www.github.com/octo-alice-2)');
  assert.deepEqual(
    (await partner.client.returnServices(uid)).map((s) => s.usrSvcId),
    ['octo-alice-2'],
  );

  // A fresh page load is pre-filled from idsvc: the signed URL gives this partner's private view.
  await o.page.reload();
  await rendered(o.page);
  assert.deepEqual(await listed(w), ['GitHub']);
  assert.equal(await w.getByRole('link', { name: /octo-alice-2/ }).getAttribute('href'), 'https://www.github.com/octo-alice-2');

  await w.getByRole('button', { name: 'Remove GitHub' }).click();
  assert.deepEqual(await activity(o.page, 1), ['Removed GitHub.']);
  assert.deepEqual(await partner.client.returnServices(uid), []);

  // Under the example page's Content-Security-Policy, with nothing refused or thrown.
  assert.deepEqual(problems(o), []);
  assert.deepEqual(o.errors, []);
});

test('sync with a wrong, then the right password; the widget says which', async () => {
  const { partner, site } = await exampleSite();
  await partner.client.updateService(uid, 'gitlab', 'alice-gl');
  const o = await open(`${site.origin}/`);
  await rendered(o.page);
  const w = widget(o.page);
  const status = w.locator('form.sync [role=status]');
  const password = w.getByLabel('Password');

  await w.getByRole('textbox', { name: 'E-mail address' }).fill(ALICE.email);
  await password.fill('not the password');
  await w.getByRole('button', { name: 'Sync', exact: true }).click();
  await status.filter({ hasText: 'Sync failed' }).waitFor();
  assert.equal(await status.textContent(), 'Sync failed: Invalid e-mail address or password');
  assert.equal(await password.inputValue(), '', 'the widget clears the password');
  assert.equal(await t.ctx.db.kysely.selectFrom('links').select('id').where('partner_id', '=', partner.id).executeTakeFirst(), undefined);

  await password.fill(account.password);
  await password.press('Enter');
  await status.filter({ hasText: 'Synced' }).waitFor();
  assert.equal(await status.textContent(), 'Synced with your account.');
  const link = await t.ctx.db.kysely.selectFrom('links').select('user_ref').where('partner_id', '=', partner.id).executeTakeFirstOrThrow();
  assert.equal(link.user_ref, account.id);
  // Linked: what the partner pushed flowed into Alice's central repository, so the public view has it.
  assert.deepEqual(
    (await partner.publicClient.returnServices(uid, { profileType: 'public' })).map((s) => s.url),
    ['https://gitlab.com/alice-gl'],
  );
  assert.deepEqual(o.errors, []);
});

test('a second widget on the same page works beside the first', async () => {
  const { partner, site } = await exampleSite();
  await partner.client.updateService(uid, 'keybase', 'alice-kb');
  const o = await open(`${site.origin}/two-widgets`);
  await rendered(o.page, 2);
  const [card, settings] = [widget(o.page, 0), widget(o.page, 1)];
  assert.deepEqual(await listed(card), ['Keybase']);
  assert.deepEqual(await listed(settings), ['Keybase']);
  assert.equal(await card.locator('form.sync').count(), 0, 'display_sync FALSE: no sync form');
  assert.equal(await settings.locator('form.sync').count(), 1);
  assert.equal(o.requests.filter((u) => /\/widget\/widget\.[0-9a-f]{8}\.js$/.test(u)).length, 1, 'the bundle is loaded once');

  await settings.getByRole('button', { name: 'Add an identity' }).click();
  await settings.getByRole('combobox', { name: 'Service' }).fill('Twitter');
  await settings.getByRole('option', { name: 'Twitter', exact: true }).click();
  await settings.getByRole('textbox', { name: 'Your username on Twitter' }).fill('alice_t');
  await settings.getByRole('button', { name: 'Add', exact: true }).click();
  await card.getByRole('button', { name: 'Remove Keybase' }).click();
  assert.deepEqual(await activity(o.page, 2), ['Saved Twitter: alice_t (https://x.com/alice_t)', 'Removed Keybase.']);
  assert.deepEqual(
    (await partner.client.returnServices(uid)).map((s) => [s.svcId, s.usrSvcId]),
    [['twitter', 'alice_t']],
  );
  // Each widget keeps its own state until the page reloads.
  assert.deepEqual(await listed(card), []);
  assert.deepEqual(await listed(settings), ['Keybase', 'Twitter']);
  await o.page.reload();
  await rendered(o.page, 2);
  assert.deepEqual(await listed(widget(o.page, 0)), ['Twitter']);
  assert.deepEqual(o.errors, []);
});

test('keyboard only: add, remove and sync', async () => {
  const { partner, site } = await exampleSite();
  const o = await open(`${site.origin}/`);
  await rendered(o.page);
  const w = widget(o.page);
  const { page } = o;

  await pressTabUntil(page, w.getByRole('button', { name: 'Add an identity' }));
  await page.keyboard.press('Enter');
  await waitFocused(page, w.getByRole('combobox', { name: 'Service' }));
  await page.keyboard.type('Keyb');
  await w.getByRole('option', { name: 'Keybase', exact: true }).waitFor();
  await page.keyboard.press('ArrowDown');
  await page.keyboard.press('Enter');
  await waitFocused(page, w.getByRole('textbox', { name: 'Your username on Keybase' }));
  await page.keyboard.type('alice-kb');
  await page.keyboard.press('Enter');
  assert.deepEqual(await activity(page, 1), ['Saved Keybase: alice-kb (https://keybase.io/alice-kb)']);
  assert.deepEqual(
    (await partner.client.returnServices(uid)).map((s) => s.usrSvcId),
    ['alice-kb'],
  );

  await pressTabUntil(page, w.getByRole('button', { name: 'Remove Keybase' }));
  await page.keyboard.press('Space');
  assert.deepEqual((await activity(page, 2))[1], 'Removed Keybase.');
  assert.deepEqual(await partner.client.returnServices(uid), []);
  await waitFocused(page, w.getByRole('button', { name: 'Add an identity' })); // focus is never dropped

  await pressTabUntil(page, w.getByRole('textbox', { name: 'E-mail address' }));
  await page.keyboard.type(ALICE.email);
  await page.keyboard.press('Tab');
  await page.keyboard.type(account.password);
  await page.keyboard.press('Enter');
  await w.locator('form.sync [role=status]', { hasText: 'Synced with your account.' }).waitFor();
  assert.deepEqual(o.errors, []);
});

test("the page's CSS cannot restyle the widget", async () => {
  const { partner, site } = await exampleSite();
  await partner.client.updateService(uid, 'github', 'octo-alice');
  // The same widget on a page without any CSS of its own...
  const plain = await startPageServer();
  closing.push(plain.close);
  plain.pages.set('plain', `<!doctype html><html><body><script src="${(await partner.client.widgetUrl(uid)).replace(/&/g, '&amp;')}"></script></body></html>`);
  const bare = await open(`${plain.origin}/plain`);
  await rendered(bare.page);
  const reference = (await bare.page.evaluate(STYLE_PROBE)) as Probe;
  assert.ok(!reference.inner.some((s) => s.endsWith('missing')), reference.inner.join('\n'));

  // ...looks the same on the example site, whose CSS styles body text, buttons and links,
  const o = await open(`${site.origin}/`);
  await rendered(o.page);
  const styled = (await o.page.evaluate(STYLE_PROBE)) as Probe;
  assert.deepEqual(styled.inner, reference.inner);

  // and after the page adds the most hostile rules it can (as a constructed sheet: the page's CSP
  // refuses inline <style>, and rightly so).
  await o.page.evaluate((css) => {
    const sheet = new window.CSSStyleSheet();
    sheet.replaceSync(css);
    window.document.adoptedStyleSheets = [...window.document.adoptedStyleSheets, sheet];
  }, HOSTILE_CSS);
  const attacked = (await o.page.evaluate(STYLE_PROBE)) as Probe;
  assert.deepEqual(attacked.inner, reference.inner);
  assert.deepEqual(attacked.visible, [true, true]);
});

const HOSTILE_CSS = `
  body *, body *::before, body *::after { color: red !important; background: yellow !important;
    font: italic 30px/3 "Comic Sans MS", cursive !important; letter-spacing: 4px !important;
    text-transform: uppercase !important; padding: 20px !important; margin: 13px !important;
    border: 5px dashed lime !important; opacity: .3 !important; box-sizing: content-box !important; }
  idsvc-widget, idsvc-widget * { display: none !important; visibility: hidden !important; all: unset !important; }
  section, h2, li, a, button, input, label { display: none !important; color: red !important; }
  /* The page may hide its own boxes, of course; keep the ones around the widget shown. */
  main, section.card, #idsvc-widget { display: block !important; }`;

interface Probe {
  inner: string[];
  visible: boolean[];
}

// A string, not a function: tsx would wrap inner arrow functions in a helper the page lacks.
const STYLE_PROBE = `(() => {
  const host = document.querySelector('idsvc-widget');
  const props = ['display', 'visibility', 'color', 'background-color', 'font-family', 'font-size', 'font-style',
    'font-weight', 'line-height', 'letter-spacing', 'text-transform', 'padding-top', 'margin-top',
    'border-top-width', 'border-top-style', 'opacity', 'box-sizing'];
  const pick = (el) => { const cs = getComputedStyle(el); return props.map((p) => p + '=' + cs.getPropertyValue(p)).join(';'); };
  const rect = host.getBoundingClientRect();
  return {
    visible: [rect.width > 100, rect.height > 100],
    inner: ['section', 'h2', 'li', '.name', 'a', 'button', '.btn.add', 'input', 'label'].map((sel) => {
      const el = host.shadowRoot.querySelector(sel);
      return el ? sel + ': ' + pick(el) : sel + ': missing';
    }),
  };
})()`;

// What the widget must refuse or survive, in real Chromium against a real idsvc (SPEC §5, §7): hostile
// strings in the data, pages on origins the partner did not list, and URLs that are unsigned,
// expired, or signed for someone else.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Browser } from 'playwright-core';
import { signWidget } from '@idsvc/client';
import { setCentralIdentity } from '../../src/services/central.js';
import type { TestApp } from '../helpers/app.js';
import { consoleLine, launchChromium, listed, openPage, rendered, startIdsvc, startPageServer, widget, type Opened, type Served } from './harness.js';
import { findUserByUserId } from '../../src/repositories/users.js';

// Callbacks passed to page.evaluate run in the page; this name exists there, not in Node.
declare const window: any;

type Partner = Awaited<ReturnType<TestApp['partner']>>;

let t: TestApp;
let browser: Browser;
let pages: Served & { pages: Map<string, string> };
const contexts: Opened[] = [];

before(async () => {
  t = await startIdsvc();
  browser = await launchChromium();
  pages = await startPageServer();
});

after(async () => {
  for (const o of contexts) await o.context.close().catch(() => {});
  await browser?.close();
  await pages?.close();
  await t?.close();
});

const attr = (s: string) => s.replace(/&/g, '&amp;').replace(/"/g, '&quot;');
let pageCount = 0;

/** Serves a page with these widget script URLs (and a recording service_change_callback_idsvc), and opens it. */
async function pageWith(srcs: string[], { head = '', origin = pages.origin, scriptAttrs = '' } = {}): Promise<Opened> {
  const name = `p${++pageCount}`;
  pages.pages.set(
    name,
    `<!doctype html><html><head><meta charset="utf-8">${head}<script>window.calls = [];
window.service_change_callback_idsvc = function () { calls.push(Array.prototype.slice.call(arguments)); };</script></head>
<body><h1>Partner page</h1><div id="idsvc-widget"></div>${srcs.map((s) => `<script ${scriptAttrs} src="${attr(s)}"></script>`).join('')}<p id="end">end</p></body></html>`,
  );
  const o = await openPage(browser, `${origin}/${name}`);
  contexts.push(o);
  return o;
}

async function central(userId: string, svcId: string, usrSvcId: string): Promise<void> {
  const user = (await findUserByUserId(t.ctx.db, userId))!;
  const svc = (await t.ctx.catalogue.get()).byId.get(svcId)!;
  await t.ctx.db.write((tx) => setCentralIdentity(tx, user, svc, usrSvcId, { partnerId: null }, t.clock.now()));
}

/** The console has had time to report everything the widget logged while rendering. */
async function settled(o: Opened): Promise<void> {
  await o.page.evaluate(() => new Promise((resolve) => window.setTimeout(resolve, 0)));
}

const bundleRequests = (o: Opened) => o.requests.filter((u) => /\/widget\/widget\.[0-9a-f]{8}\.js$/.test(u));

describe('hostile strings', () => {
  test('a user_identifier or stored usrSvcId with </script>, quotes, <!-- or U+2028 neither breaks the script nor runs', async () => {
    const P = await t.partner();
    const script = `</script><script>alert(1)</script>`;
    const nastyUid = `${script}"'<!--@evil.example`;
    const nastyId = `${script}"'<!--`;
    await P.client.updateService(nastyUid, 'github', nastyId);
    // update_service refuses U+2028 (SPEC §4.3); an older row may still hold one.
    const { subject_id } = await t.ctx.db.kysely.selectFrom('partner_identities').select('subject_id').where('partner_id', '=', P.id).executeTakeFirstOrThrow();
    const lineSep = `line\u2028sep\u2029<!--${script}`;
    await t.ctx.db.kysely
      .insertInto('partner_identities')
      .values({ partner_id: P.id, subject_id, svc_id: 'gitlab', usr_svc_id: lineSep, created_at: t.clock.now(), updated_at: t.clock.now() })
      .execute();

    const o = await pageWith([await P.client.widgetUrl(nastyUid), await P.client.widgetUrl(`x\u2028${script}@evil.example`)]);
    await rendered(o.page);
    await consoleLine(o, /status of 400/); // the second: not a user_identifier; reported, nothing rendered
    const w = widget(o.page);
    assert.deepEqual(await listed(w), ['GitHub', 'GitLab']);
    assert.deepEqual(await w.locator('.ident a').evaluateAll((as) => as.map((a: any) => a.firstChild.textContent)), [nastyId, lineSep]);
    assert.equal(await o.page.locator('#end').textContent(), 'end');
    assert.equal(await o.page.locator('idsvc-widget').count(), 1);
    assert.equal(
      await o.page.evaluate(() => window.document.querySelector('idsvc-widget').shadowRoot.querySelectorAll('script, [onerror], [onload]').length),
      0,
    );

    // The page's callback gets the user_identifier back exactly.
    await w.getByRole('button', { name: 'Remove GitHub' }).click();
    await o.page.waitForFunction(() => window.calls.length === 1);
    assert.deepEqual(await o.page.evaluate(() => window.calls), [[nastyUid, 'github', 'GitHub', '', '']]);
    assert.deepEqual(o.dialogs, [], 'no alert() ran');
    assert.deepEqual(o.errors, []);
  });
});

describe('allowed origins', () => {
  let P: Partner;
  before(async () => {
    P = await t.partner({ origins: [pages.origin] });
  });

  test('a page on a listed origin gets the widget', async () => {
    const o = await pageWith([await P.client.widgetUrl('listed_user')]);
    await rendered(o.page);
  });

  test('a page on another origin gets no widget', async () => {
    // The same server under another name is another origin.
    const o = await pageWith([await P.client.widgetUrl('listed_user')], { origin: `http://localhost:${pages.port}` });
    await consoleLine(o, /status of 403/);
    await settled(o);
    assert.equal(await o.page.locator('idsvc-widget').count(), 0);
    assert.deepEqual(bundleRequests(o), [], 'the bundle is not even fetched');
  });

  test('a page that sends no Referer gets no widget, unless its script tag sends one', async () => {
    const head = '<meta name="referrer" content="no-referrer">';
    const refused = await pageWith([await P.client.widgetUrl('listed_user')], { head });
    await consoleLine(refused, /status of 403/);
    assert.equal(await refused.page.locator('idsvc-widget').count(), 0);

    const fixed = await pageWith([await P.client.widgetUrl('listed_user')], { head, scriptAttrs: 'referrerpolicy="strict-origin-when-cross-origin"' });
    await rendered(fixed.page);
  });
});

describe('what the widget is pre-filled with', () => {
  let P: Partner;
  let Q: Partner;
  const warnings = (o: Opened) => o.console.filter((l) => l.startsWith('warning idsvc widget: '));

  before(async () => {
    P = await t.partner();
    Q = await t.partner();
    await t.user({ email: 'bob@example.com', userId: 'bob' });
    await central('bob', 'gitlab', 'bob-gl'); // public: Bob's own central repository
    await P.client.updateService('bob', 'github', 'bob-gh'); // private: what P pushed
  });

  test('unsigned: only the public view, without a warning', async () => {
    const o = await pageWith([await P.publicClient.widgetUrl('bob')]);
    await rendered(o.page);
    assert.deepEqual(await listed(widget(o.page)), ['GitLab']);
    await settled(o);
    assert.deepEqual(warnings(o), []);
  });

  test("a valid signature: the partner's private view", async () => {
    const o = await pageWith([await P.client.widgetUrl('bob')]);
    await rendered(o.page);
    assert.deepEqual(await listed(widget(o.page)), ['GitHub']);
    assert.equal(
      await widget(o.page)
        .locator('.ident a')
        .evaluate((a: any) => a.firstChild.textContent),
      'bob-gh',
    );
    await settled(o);
    assert.deepEqual(warnings(o), []);
  });

  const fallbacks: [string, () => Promise<string>, RegExp][] = [
    ['expired', async () => P.client.widgetUrl('bob', { now: Date.now() - 2 * 3600 * 1000, expiresInSeconds: 3600 }), /expired/],
    [
      'signed for another user_identifier',
      async () => (await P.client.widgetUrl('bob')).replace(/\?.*$/, new URL(await P.client.widgetUrl('alice')).search),
      /invalid signature/,
    ],
    ['signed for another api_key', async () => (await Q.client.widgetUrl('bob')).replace(Q.apiKey, P.apiKey), /invalid signature/],
    [
      'signed for more than a day',
      async () => {
        // The client library refuses to sign this far ahead; telling it the time is two days on gets past it.
        const exp = Math.floor(Date.now() / 1000) + 2 * 86400;
        return `${await P.publicClient.widgetUrl('bob')}?exp=${exp}&sig=${await signWidget(P.apiKey, 'bob', exp, P.apiToken, exp * 1000)}`;
      },
      /more than 24 hours ahead/,
    ],
  ];
  for (const [name, url, warning] of fallbacks) {
    test(`${name}: refused, the public view, and a console warning`, async () => {
      const o = await pageWith([await url()]);
      await rendered(o.page);
      assert.deepEqual(await listed(widget(o.page)), ['GitLab']);
      assert.match(await consoleLine(o, /^warning idsvc widget: /), warning);
      await settled(o);
      assert.equal(warnings(o).length, 1);
    });
  }
});

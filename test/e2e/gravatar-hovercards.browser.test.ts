// A client no one here wrote reads idsvc (issue 18.3): Gravatar's own hovercards library
// (@gravatar-com/hovercards, its published browser build) runs in Chromium on a page of Gravatar
// avatar images, a letter avatar and a photo among them. Its requests to api.gravatar.com and to Gravatar's avatar hosts are routed to a
// real idsvc with Playwright's request routing; everything else off this machine is refused.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { after, before, test } from 'node:test';
import type { ProfileData } from '@gravatar-com/hovercards';
import type { Browser, Route } from 'playwright-core';
import sharp from 'sharp';
import { emailHashes } from '../../src/domain/identifiers.js';
import { preparePhoto } from '../../src/gravatar/photos.js';
import { savePhoto } from '../../src/repositories/avatar-photos.js';
import { findCentralIdentity, setVerifiedMark } from '../../src/repositories/central-identities.js';
import { findUserByRef, setUserFlags, updateProfile } from '../../src/repositories/users.js';
import { setCentralIdentity } from '../../src/services/central.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { unusedPort } from '../verification/servers.js';
import { launchChromium, openPage, startPageServer, type Opened, type Served } from './harness.js';

// Callbacks passed to page.evaluate run in the page; these names exist there, not in Node.
declare const window: any;

const dist = path.dirname(createRequire(import.meta.url).resolve('@gravatar-com/hovercards'));
const library = readFileSync(path.join(dist, 'index.umd.js'), 'utf8');
const styles = readFileSync(path.join(dist, 'style.css'), 'utf8');

let t: TestApp;
let browser: Browser;
let pages: Served & { pages: Map<string, string> };
const opened: Opened[] = [];
const sha = (email: string) => emailHashes(email).sha256;

async function identity(userRef: number, svcId: string, usrSvcId: string, verified: boolean): Promise<void> {
  const user = (await findUserByRef(t.ctx.db, userRef))!;
  const svc = (await t.ctx.catalogue.get()).byId.get(svcId)!;
  await t.ctx.db.write((tx) => setCentralIdentity(tx, user, svc, usrSvcId, { partnerId: null }, t.clock.now()));
  if (verified) {
    const row = (await findCentralIdentity(t.ctx.db, userRef, svcId))!;
    await t.ctx.db.write((w) => setVerifiedMark(w, row.id, { verified: true, verified_by: 'operator', verified_at: t.clock.now() }));
  }
}

/** Sends a request for Gravatar to idsvc instead: same path and query, idsvc's answer as it is. */
async function toIdsvc(route: Route): Promise<void> {
  const url = new URL(route.request().url());
  const response = await route.fetch({ url: `${t.baseUrl}${url.pathname}${url.search}` });
  await route.fulfill({ response });
}

before(async () => {
  const port = await unusedPort();
  t = await startTestApp({ PORT: String(port), BASE_URL: `http://127.0.0.1:${port}` });
  browser = await launchChromium();
  pages = await startPageServer();
  const alice = await t.user({ email: 'alice@example.org', userId: 'alice' });
  await t.ctx.db.write((w) =>
    updateProfile(
      w,
      alice.id,
      { firstName: 'Alice', lastName: 'Example', city: 'Lyon', bio: 'Writes code.' },
      ['firstName', 'lastName', 'city', 'bio'],
      t.clock.now(),
    ),
  );
  await identity(alice.id, 'github', 'alice-gh', true);
  await identity(alice.id, 'gitlab', 'alicegl', true);
  await identity(alice.id, 'medium', 'alicemd', false);
  const pat = await t.user({ email: 'pat@example.org', userId: 'pat' });
  await t.ctx.db.write((w) => updateProfile(w, pat.id, { firstName: 'Pat' }, ['firstName'], t.clock.now()));
  const photo = await sharp({ create: { width: 300, height: 300, channels: 3, background: '#22aa44' } })
    .jpeg()
    .toBuffer();
  const prepared = await preparePhoto(photo);
  await t.ctx.db.write((w) => savePhoto(w, pat.id, prepared, t.clock.now()));
  const hidden = await t.user({ email: 'hidden@example.org', userId: 'hidden' });
  await t.ctx.db.write((w) => setUserFlags(w, hidden.id, { optedIn: false }, t.clock.now()));
  pages.pages.set(
    'comments',
    `<!doctype html><html><head><meta charset="utf-8"><style>${styles}</style><script>${library}</script></head><body>
<p><img id="alice" width="40" height="40" alt="" src="https://www.gravatar.com/avatar/${sha('alice@example.org')}?s=40"> Alice wrote a comment.</p>
<p style="margin-top:400px"><img id="pat" width="40" height="40" alt="" src="https://www.gravatar.com/avatar/${sha('pat@example.org')}?s=40"> Pat replied.</p>
<p style="margin-top:400px"><img id="hidden" width="40" height="40" alt="" src="https://secure.gravatar.com/avatar/${sha('hidden@example.org')}?s=40"> Someone else did.</p>
<script>
window.fetched = [];
new Gravatar.Hovercards({ delayToShow: 0, onFetchProfileSuccess: (hash, profile) => window.fetched.push(profile) }).attach(document.body);
</script></body></html>`,
  );
});

after(async () => {
  for (const o of opened) await o.context.close().catch(() => {});
  await browser?.close();
  await pages?.close();
  await t?.close();
});

async function openComments(): Promise<Opened> {
  // openPage's context refuses every host but this machine; these routes, on the page, come first.
  const o = await openPage(browser, 'about:blank');
  opened.push(o);
  await o.page.route('https://api.gravatar.com/v3/profiles/**', toIdsvc);
  await o.page.route(/^https:\/\/([a-z0-9]+\.)?gravatar\.com\/avatar\//, toIdsvc);
  await o.page.goto(`${pages.origin}/comments`);
  return o;
}

test("Gravatar's hovercards library renders an idsvc user's card, verified accounts included", async () => {
  const o = await openComments();
  const { page } = o;
  // The page's own Gravatar image came from idsvc: a letter avatar.
  assert.ok(await page.locator('#alice').evaluate((img: any) => img.complete && img.naturalWidth === 40));
  await page.hover('#alice');
  const card = page.locator('.gravatar-hovercard').filter({ has: page.locator('.gravatar-hovercard__name') });
  await card.waitFor();
  assert.equal(await card.locator('.gravatar-hovercard__name').textContent(), 'Alice Example');
  assert.equal(await card.locator('.gravatar-hovercard__location').textContent(), 'Lyon');
  assert.equal(await card.locator('.gravatar-hovercard__description').textContent(), 'Writes code.');
  // Verified accounts only, as the library shows them: the service's icon linking to the profile.
  const services = await card
    .locator('.gravatar-hovercard__social-link')
    .evaluateAll((links: any[]) => links.map((a) => [a.dataset.serviceName, a.getAttribute('href')]));
  assert.deepEqual(services.slice(1), [
    ['github', 'https://www.github.com/alice-gh'],
    ['gitlab', 'https://gitlab.com/alicegl'],
  ]);
  assert.equal(await card.locator('.gravatar-hovercard__profile-url').getAttribute('title'), `${t.baseUrl}/u/alice`);
  // Its avatar is idsvc's letter avatar, at the size the library asks for.
  const avatar = card.locator('img.gravatar-hovercard__avatar');
  assert.equal(await avatar.getAttribute('src'), `${t.baseUrl}/avatar/${sha('alice@example.org')}?s=256`);
  await page.waitForFunction((img: any) => img.complete && img.naturalWidth > 0, await avatar.elementHandle());
  // What the library made of idsvc's answer, in its own terms.
  const profiles: ProfileData[] = await page.evaluate(() => window.fetched);
  assert.equal(profiles.length, 1);
  assert.equal(profiles[0]?.hash, sha('alice@example.org'));
  assert.equal(profiles[0]?.displayName, 'Alice Example');
  assert.deepEqual(
    profiles[0]?.verifiedAccounts?.map((a) => a.type),
    ['github', 'gitlab'],
  );
  assert.deepEqual(o.errors, []);
});

test('a hidden user gets the library\'s "not found" card, and nothing about them', async () => {
  const o = await openComments();
  const { page } = o;
  await page.hover('#hidden');
  const card = page.locator('.gravatar-hovercard--error');
  await card.waitFor();
  assert.match((await card.textContent()) ?? '', /Gravatar not found/);
  assert.doesNotMatch((await card.textContent()) ?? '', /hidden/i);
  assert.deepEqual(await page.evaluate(() => window.fetched), []);
});

test("a user's photo is the page's Gravatar image and the card's avatar", async () => {
  const o = await openComments();
  const { page } = o;
  assert.ok(await page.locator('#pat').evaluate((img: any) => img.complete && img.naturalWidth === 40));
  const cardAvatar = page.waitForResponse((r) => r.url() === `${t.baseUrl}/avatar/${sha('pat@example.org')}?s=256`);
  await page.locator('#pat').scrollIntoViewIfNeeded();
  await page.hover('#pat');
  const card = page.locator('.gravatar-hovercard').filter({ has: page.locator('.gravatar-hovercard__name') });
  await card.waitFor();
  assert.equal(await card.locator('.gravatar-hovercard__name').textContent(), 'Pat');
  const answer = await cardAvatar;
  assert.equal(answer.status(), 200);
  assert.equal(answer.headers()['content-type'], 'image/jpeg');
  const avatar = card.locator('img.gravatar-hovercard__avatar');
  await page.waitForFunction((img: any) => img.complete && img.naturalWidth === 256, await avatar.elementHandle());
  assert.deepEqual(o.errors, []);
});

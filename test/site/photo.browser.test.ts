// The photo page in a real Chromium, on a phone-sized screen: the profile page links to it, the
// browser's own file input sends the picture (multipart, as browsers build it), the page then shows
// the photo and fits the screen; a file that is no picture is refused in words beside the form;
// removing it brings the initials back.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import sharp from 'sharp';
import { launchChromium, screenshot } from '../helpers/chromium.js';
import type { TestApp } from '../helpers/app.js';
import { startSiteApp } from './helpers.js';

let t: TestApp;
let browser: Browser;
let page: Page;

before(async () => {
  t = await startSiteApp();
  await t.user({ email: 'phone@example.org', userId: 'phone_user' });
  browser = await launchChromium();
  page = await (await browser.newContext({ viewport: { width: 390, height: 844 } })).newPage();
  page.on('pageerror', (err) => assert.fail(`script error on the page: ${err.message}`));
});

after(async () => {
  await browser?.close();
  await t?.close();
});

const pageWidth = () => page.evaluate(() => document.documentElement.scrollWidth);

test("upload a photo from the account page with the browser's file input, see it, remove it", async () => {
  await page.goto(`${t.baseUrl}/login`);
  await page.getByLabel('E-mail address or userId').fill('phone_user');
  await page.getByLabel('Password', { exact: true }).fill('correct horse battery');
  await page.getByRole('button', { name: 'Log in' }).click();
  await page.waitForURL(/\/account/);
  await page.getByRole('navigation', { name: 'Your account' }).getByRole('link', { name: 'Profile' }).click();
  await page.getByRole('link', { name: 'Your photo' }).click();
  await page.getByRole('heading', { name: 'Your photo' }).waitFor();
  assert.ok((await pageWidth()) <= 390, 'the page fits a phone');

  // Not a picture: refused, said beside the form.
  await page.getByLabel('Picture').setInputFiles({ name: 'notes.png', mimeType: 'image/png', buffer: Buffer.from('just some text') });
  await page.getByRole('button', { name: 'Upload' }).click();
  await page.getByRole('alert').filter({ hasText: 'That file is not a picture idsvc can use. Choose a JPEG, PNG or WebP picture.' }).waitFor();

  const photo = await sharp({ create: { width: 640, height: 480, channels: 3, background: '#2266cc' } })
    .jpeg()
    .toBuffer();
  await page.getByLabel('Picture').setInputFiles({ name: 'me.jpg', mimeType: 'image/jpeg', buffer: photo });
  await page.getByRole('button', { name: 'Upload' }).click();
  await page.waitForURL(/\/account\/photo\?msg=saved/);
  await page.getByText('Your photo is saved.').waitFor();
  const preview = page.locator('img.avatar.photo');
  await page.waitForFunction((img) => (img as HTMLImageElement).complete && (img as HTMLImageElement).naturalWidth === 160, await preview.elementHandle());
  assert.ok((await pageWidth()) <= 390, 'the page with the photo fits a phone');
  await screenshot(page, 'site-photo-390.png');

  await page.getByRole('button', { name: 'Remove photo' }).click();
  await page.getByText('Your photo is removed.').waitFor();
  assert.equal(await page.locator('img.avatar.photo').count(), 0);
  await page.getByRole('img', { name: 'Your letter avatar' }).waitFor();
});

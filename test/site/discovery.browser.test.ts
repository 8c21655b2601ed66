// Issue 18 in a real Chromium on the account page: a pasted profile URL fills in service and name
// (the user confirms), and "Find my identities" shows its progress, then what it found to tick.
import assert from 'node:assert/strict';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { after, before, test } from 'node:test';
import { chromium, type Browser, type Page } from 'playwright-core';
import type { TestApp } from '../helpers/app.js';
import { startServer, type LocalServer } from '../verification/servers.js';
import { addSitesOnOneServer, startSiteApp } from './helpers.js';

const USER_ID = 'browser_walker';
const PASSWORD = 'a fine long password';
let t: TestApp;
let web: LocalServer;
let browser: Browser;
let page: Page;

before(async () => {
  // Background jobs on: the walk runs as it would for a real user.
  t = await startSiteApp({ BACKGROUND_JOBS: '1' });
  const profile = `${t.config.baseUrl}/u/${USER_ID}`;
  const pages: Record<string, string> = {};
  web = await startServer((req: IncomingMessage, res: ServerResponse) => {
    const body = pages[req.url ?? '/'];
    res.writeHead(body === undefined ? 404 : 200, { 'content-type': 'text/html' });
    res.end(body ?? 'not found');
  });
  const o = web.origin;
  pages['/home'] = `<a rel="me" href="${profile}">me</a><a rel="me" href="${o}/alpha/me">alpha</a><a rel="me" href="${o}/beta/me">beta</a>`;
  pages['/alpha/me'] = `<a rel="me" href="${o}/home">home</a>`;
  pages['/beta/me'] = '<p>no link back</p>';
  await addSitesOnOneServer(t, o, ['alpha', 'beta']);
  await t.user({ email: 'browser.walker@example.org', userId: USER_ID, password: PASSWORD });
  browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking'],
  });
  page = await (await browser.newContext({ viewport: { width: 1100, height: 900 } })).newPage();
  page.on('pageerror', (err) => assert.fail(`script error on the page: ${err.message}`));
  await page.goto(`${t.baseUrl}/login`);
  await page.getByLabel('E-mail address or userId').fill(USER_ID);
  await page.getByLabel('Password', { exact: true }).fill(PASSWORD);
  await page.getByRole('button', { name: 'Log in' }).click();
  await page.waitForURL(/\/account/);
});

after(async () => {
  await browser?.close();
  await web?.close();
  await t?.close();
});

test("a pasted profile URL fills in the service and the name; adding is the user's press", async () => {
  await page.getByLabel('Paste the address of your profile').fill('https://www.github.com/Octo-Cat/?tab=repositories');
  await page.getByText('That is Octo-Cat on GitHub.').waitFor();
  assert.equal(await page.locator('#svc_id').inputValue(), 'github');
  assert.equal(await page.locator('#usr_svc_id').inputValue(), 'Octo-Cat');
  await page.getByText('Your profile address will be https://www.github.com/Octo-Cat').waitFor();
  assert.equal(await page.locator('#identity-github').count(), 0, 'nothing is added before the user confirms');
  await page.getByRole('button', { name: 'Add identity' }).click();
  await page.getByText('Identity saved.').waitFor();
  assert.match(await page.locator('#identity-github').innerText(), /github\.com\/Octo-Cat/);

  // No service has such addresses: it is offered as the person's website, with its address previewed.
  await page.getByLabel('Paste the address of your profile').fill('https://nowhere.example/someone');
  await page.getByText('That is https://nowhere.example/someone on Website.').waitFor();
  assert.equal(await page.locator('#svc_id').inputValue(), 'website');
  await page.getByText('Your profile address will be https://nowhere.example/someone').waitFor();
  // Only https: an http address is no service's and no website's.
  await page.getByLabel('Paste the address of your profile').fill('http://nowhere.example/someone');
  await page.getByText('We know no service with profile addresses like that.').waitFor();
});

test('Find my identities shows progress, then proposals; ticked ones are added, proven ones verified', async () => {
  await page.getByLabel('Your page').fill(`${web.origin}/home`);
  await page.getByRole('button', { name: 'Find my identities' }).click();
  // Progress, then the page turns to the results by itself.
  await page.getByText('Tick the identities to add').waitFor({ timeout: 60_000 });
  const alpha = page.locator('[data-found="alpha"]');
  const beta = page.locator('[data-found="beta"]');
  assert.match(await alpha.innerText(), /Links back: added verified/);
  assert.match(await beta.innerText(), /No link back: added unverified/);
  await alpha.getByRole('checkbox').check();
  await beta.getByRole('checkbox').check();
  await page.getByRole('button', { name: 'Add ticked identities' }).click();
  await page.getByText('The identities you ticked are added.').waitFor();
  assert.match(await page.locator('#identity-alpha').innerText(), /Verified/);
  assert.match(await page.locator('#identity-beta').innerText(), /Not verified/);
});

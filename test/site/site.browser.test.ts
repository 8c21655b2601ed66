// A newcomer's walk through the site in a real Chromium: sign up, confirm the address from the
// mail, log in, opt in, add three identities,
// verify two against local profile pages (one links back with rel="me", one does not), see a
// partner's link and end it, download the data, delete the account.
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { after, before, describe, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { launchChromium, screenshot } from '../helpers/chromium.js';
import { listOutbox } from '../../src/repositories/outbox.js';
import type { TestApp } from '../helpers/app.js';
import { lastMailTo, linkIn } from '../helpers/mailbox.js';
import { addLocalService, assertLogsClean, pageWithBacklink, pageWithoutBacklink, startProfilePages, startSiteApp, type ProfilePages } from './helpers.js';

const EMAIL = 'newcomer.walk@example.org';
const USER_ID = 'newcomer';
const PASSWORD = 'violet kettle drums at dawn';

let t: TestApp;
let remote: ProfilePages;
let browser: Browser;
let page: Page;
let partnerToken = '';

before(async () => {
  t = await startSiteApp();
  remote = await startProfilePages();
  await addLocalService(t, 'homepage', 'Homepage', remote.origin);
  await addLocalService(t, 'notebook', 'Notebook', remote.origin);
  remote.pages.set('neil', pageWithBacklink(`${t.config.baseUrl}/u/${USER_ID}`));
  remote.pages.set('neil-notes', pageWithoutBacklink);
  browser = await launchChromium();
  const context = await browser.newContext({ viewport: { width: 1100, height: 900 }, acceptDownloads: true });
  page = await context.newPage();
  page.on('pageerror', (err) => assert.fail(`script error on the page: ${err.message}`));
});

after(async () => {
  await browser?.close();
  await remote?.close();
  await t?.close();
});

const identity = (svcId: string) => page.locator(`#identity-${svcId}`);
/** Opens one of the account pages from the account area's navigation, as a person would. */
async function accountNav(label: string): Promise<void> {
  await page.getByRole('navigation', { name: 'Your account' }).getByRole('link', { name: label, exact: true }).click();
  await page.locator('.account-nav a[aria-current="page"]', { hasText: label }).waitFor();
}

describe('a newcomer on the site', () => {
  test('signs up without opting in', async () => {
    await page.goto(`${t.baseUrl}/`);
    await page.getByRole('link', { name: 'Create an account' }).click();
    await page.getByLabel('E-mail address').fill(EMAIL);
    await page.getByLabel('Choose a userId').fill(USER_ID);
    await page.getByLabel('Password', { exact: true }).fill('password1');
    await screenshot(page, 'site-signup.png');
    await page.getByRole('button', { name: 'Create account' }).click();
    // A guessable password is refused, with the reason and advice next to the field and in the summary.
    await page
      .getByRole('alert')
      .filter({ hasText: 'The password is too easy to guess. This is a commonly used password. Add more words that are less common.' })
      .waitFor();
    assert.equal(await page.getByLabel('E-mail address').inputValue(), EMAIL);
    await page.getByLabel('Password', { exact: true }).fill(PASSWORD);
    await page.getByRole('button', { name: 'Show password' }).click();
    assert.equal(await page.getByLabel('Password', { exact: true }).getAttribute('type'), 'text');
    await page.getByRole('button', { name: 'Create account' }).click();
    await page.waitForURL(/\/signup\/sent/);
    await page.getByRole('heading', { name: 'Check your inbox' }).waitFor();
    // The link from the mail (written as an .eml file: no SMTP_URL here) opens a page with a button.
    await page.goto(`${t.baseUrl}${linkIn(await lastMailTo(t, EMAIL), '/confirm?token=')}`);
    // Confirmed in the browser that signed up: it continues signed in.
    await page.getByRole('button', { name: 'Confirm my address' }).click();
    await page.waitForURL(/\/account\?msg=confirmed/);
    await page.getByText('Your e-mail address is confirmed.').waitFor();
    await accountNav('Sharing');
    await page.getByText('You are hidden.').waitFor();
    assert.equal(await page.locator('[data-opted-in]').getAttribute('data-opted-in'), 'no');
    // Hidden users have no public page.
    const res = await page.request.get(`${t.baseUrl}/u/${USER_ID}`);
    assert.equal(res.status(), 404);
  });

  test('opts in', async () => {
    await page.getByRole('button', { name: 'Opt in' }).click();
    await page.getByText('You are now visible to partner sites').waitFor();
    assert.equal(await page.locator('[data-opted-in]').getAttribute('data-opted-in'), 'yes');
  });

  test('adds three identities, seeing each profile address before saving', async () => {
    await accountNav('Identities');
    await page.getByLabel('Service', { exact: true }).selectOption('homepage');
    await page.getByLabel('Your name there').fill('neil');
    await page.locator('#url-preview').getByText(`${remote.origin}/neil`).waitFor();
    await page.getByRole('button', { name: 'Add identity' }).click();
    await page.getByText('Identity saved.').waitFor();

    await page.getByLabel('Service', { exact: true }).selectOption('notebook');
    await page.getByLabel('Your name there').fill('neil-notes');
    await page.getByRole('button', { name: 'Add identity' }).click();
    await page.getByText('Identity saved.').waitFor();

    // The filter narrows the long list and picks the match; a name that does not fit the service's
    // pattern is flagged in the preview, saying what the service allows, and refused on saving.
    await page.getByLabel('Filter the list of services').fill('github');
    assert.equal(await page.getByLabel('Service', { exact: true }).inputValue(), 'github');
    await page.getByLabel('Your name there').fill('neil--simon');
    await page.locator('#url-preview').getByText('This is not a name GitHub allows. Names on GitHub look like “alice”.').waitFor();
    await page.getByRole('button', { name: 'Add identity' }).click();
    await page.locator('#add-error').getByText('“neil--simon” is not a name GitHub allows. Names on GitHub look like “alice”.').waitFor();
    await page.getByLabel('Filter the list of services').fill('github');
    await page.getByLabel('Your name there').fill('neilsimon');
    await page.locator('#url-preview').getByText('https://www.github.com/neilsimon').waitFor();
    await page.getByRole('button', { name: 'Add identity' }).click();
    await page.getByText('Identity saved.').waitFor();

    assert.equal(await page.locator('.identity').count(), 3);
    for (const svc of ['homepage', 'notebook', 'github']) assert.match(await identity(svc).innerText(), /Not verified/);
  });

  test('"verify now" marks the page that links back as verified', async () => {
    await identity('homepage').getByRole('button', { name: 'Verify Homepage now' }).click();
    await page.waitForURL(/checked=homepage/);
    const item = identity('homepage');
    await item.getByText('Checked just now').waitFor();
    assert.equal(await item.locator('[data-check-result]').getAttribute('data-check-result'), 'verified');
    assert.match(await item.locator('.badge').first().innerText(), /Verified/);
  });

  test('"verify now" explains why a page without the link does not verify', async () => {
    await identity('notebook').getByRole('button', { name: 'Verify Notebook now' }).click();
    await page.waitForURL(/checked=notebook/);
    const item = identity('notebook');
    assert.equal(await item.locator('[data-check-result]').getAttribute('data-check-result'), 'absent');
    assert.match(
      await item.locator('[data-check-result]').innerText(),
      /Proof not found \(a rel="me" link back to your profile\) — looked for a rel="me" link to .*: no rel="me" link found on the page/,
    );
    assert.match(await item.locator('.badge').first().innerText(), /Not verified/);
    // Both checks are listed under "Recent checks".
    const rows = page.locator('#checks tbody tr');
    assert.equal(await rows.count(), 2);
  });

  test('fills in the profile and shows it on the public page', async () => {
    await accountNav('Profile');
    await page.getByLabel('First name', { exact: true }).fill('Neil');
    await page.getByLabel('Last name', { exact: true }).fill('Simon');
    await page.getByLabel('City', { exact: true }).fill('Lyon');
    await page.getByLabel('About you', { exact: true }).fill('Plays the cello badly.');
    await page.getByRole('checkbox', { name: 'public (First name)' }).check();
    await page.getByRole('checkbox', { name: 'public (Last name)' }).check();
    await page.getByRole('checkbox', { name: 'public (About you)' }).check();
    await page.getByRole('button', { name: 'Save profile' }).click();
    await page.getByText('Your profile is saved.').waitFor();
    await screenshot(page, 'site-account.png');

    await page.getByRole('link', { name: 'Public profile' }).click();
    await page.getByRole('heading', { name: 'Neil Simon' }).waitFor();
    const text = await page.locator('main').innerText();
    assert.match(text, /Plays the cello badly/);
    assert.doesNotMatch(text, /Lyon/, 'a private field is not shown');
    assert.equal(await page.locator('a[rel="me"]').count(), 3);
    assert.equal(await page.locator('head link[rel="me"]').count(), 3);
    assert.equal(await page.locator('.public-identities .badge.verified').count(), 1);
    await screenshot(page, 'site-profile.png');
  });

  test('sees a partner link and ends it, removing what the partner added', async () => {
    const partner = await t.partner({ name: 'Cello Club' });
    partnerToken = partner.apiToken;
    await partner.client.updateService(EMAIL, 'gitlab', 'neil-gl');
    await partner.client.syncUser(EMAIL, { email: EMAIL, password: PASSWORD });

    await page.goto(`${t.baseUrl}/account`);
    assert.match(await identity('gitlab').innerText(), /Added by Cello Club/);
    await accountNav('Connected sites');
    const link = page.locator('.link-item', { hasText: 'Cello Club' });
    await link.waitFor();
    assert.match(await link.innerText(), /Connected on \d+ \w+ \d{4}/);

    await link.getByRole('checkbox', { name: /Also remove the identity Cello Club added/ }).check();
    await link.getByRole('button', { name: 'End link with Cello Club' }).click();
    await page.getByText('The link has ended').waitFor();
    assert.equal(await page.locator('.link-item').count(), 0);
    await accountNav('Identities');
    assert.equal(await identity('gitlab').count(), 0, 'the entry the partner added is gone');
    assert.equal(await identity('homepage').count(), 1, "the user's own entries stay");

    const events = (await listOutbox(t.ctx.db, partner.id)).map((e) => e.event_type);
    assert.ok(events.includes('link.removed'), `link.removed written for the partner (got ${events.join(', ')})`);
    assert.equal(await partner.client.returnServices(EMAIL).then((s) => s.some((x) => x.svcId === 'homepage')), false, 'no longer merged');
  });

  test('downloads all their data', async () => {
    await accountNav('Your data');
    const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Download my data' }).click()]);
    assert.match(download.suggestedFilename(), /^idsvc-newcomer-\d{4}-\d{2}-\d{2}\.json$/);
    const raw = await readFile((await download.path())!, 'utf8');
    const data = JSON.parse(raw);
    assert.equal(data.account.userId, USER_ID);
    assert.equal(data.account.email, EMAIL);
    assert.equal(data.account.optedIn, true);
    assert.deepEqual(data.identities.map((i: { svcId: string }) => i.svcId).sort(), ['github', 'homepage', 'notebook']);
    assert.equal(data.identities.find((i: { svcId: string }) => i.svcId === 'homepage').verified, true);
    assert.equal(data.profile.firstName.value, 'Neil');
    assert.equal(data.profile.firstName.public, true);
    assert.equal(data.profile.city.public, false);
    assert.equal(data.verificationAttempts.length, 2);
    assert.deepEqual(data.links, []);
    assert.equal(data.partnerEntries[0].partner, 'Cello Club');
    assert.doesNotMatch(raw, /argon2|password_hash|csrf/i);
  });

  test('deletes the account after typing their userId', async () => {
    await page.getByText('Delete your account').click();
    const button = page.getByRole('button', { name: 'Delete my account' });
    assert.equal(await button.isDisabled(), true, 'disabled until the userId is typed');
    await page.getByLabel(/To confirm, type your userId/).fill(USER_ID);
    await button.click();
    await page.getByText('Your account is deleted').waitFor();
    assert.equal((await page.request.get(`${t.baseUrl}/u/${USER_ID}`)).status(), 404);
    assert.equal((await page.request.get(`${t.baseUrl}/account`, { maxRedirects: 0 })).status(), 303);
    const users = await t.ctx.db.kysely.selectFrom('users').select('id').execute();
    assert.equal(users.length, 0);
    assert.equal((await t.ctx.db.kysely.selectFrom('central_identities').select('id').execute()).length, 0);
  });

  test('left no password, token or address in the logs', () => {
    assertLogsClean(t, [EMAIL, PASSWORD, 'password1', partnerToken]);
  });
});

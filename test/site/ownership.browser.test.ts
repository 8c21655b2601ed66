// Proof of ownership as a person lives it, in a real Chromium with mail through a real SMTP server:
// sign up opted in, stay invisible to partners, read the mail, follow its link, press the button,
// log in, and be visible; then reset a forgotten password the same way.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { launchChromium, screenshot } from '../helpers/chromium.js';
import { sendDueMail } from '../../src/jobs/mail.js';
import { errorCode, type TestApp } from '../helpers/app.js';
import { SMTP_PASSWORD, SMTP_USER, startSmtp, type TestSmtp } from '../helpers/smtp.js';
import { assertLogsClean, startSiteApp } from './helpers.js';

const EMAIL = 'dora.explorer@example.org';
const USER_ID = 'dora';
const PASSWORD = 'maps backpacks and a monkey';

let t: TestApp;
let smtp: TestSmtp;
let browser: Browser;
let page: Page;

before(async () => {
  smtp = await startSmtp();
  t = await startSiteApp({ SMTP_URL: smtp.url, SMTP_USER, SMTP_PASSWORD, SITE_NAME: 'Dora IDs' });
  browser = await launchChromium();
  page = await (await browser.newContext({ viewport: { width: 1000, height: 850 } })).newPage();
  page.on('pageerror', (err) => assert.fail(`script error on the page: ${err.message}`));
});

after(async () => {
  await browser?.close();
  await t?.close();
  await smtp?.stop();
});

test('sign up, read the mail from the SMTP server, follow the link: the user becomes visible to partners', async () => {
  const partner = await t.partner({ name: 'Explorer club' });
  await partner.client.updateService(EMAIL, 'github', 'dora-gh');

  await page.goto(`${t.baseUrl}/signup`);
  await page.getByLabel('E-mail address').fill(EMAIL);
  await page.getByLabel('Choose a userId').fill(USER_ID);
  await page.getByLabel('Password', { exact: true }).fill(PASSWORD);
  await page.getByLabel('Show my identities and public profile on my public page, and to anyone who knows my userId or my email').check();
  await page.getByRole('button', { name: 'Create account' }).click();
  await page.waitForURL(/\/signup\/sent$/);
  await page.getByRole('heading', { name: 'Check your inbox' }).waitFor();
  await screenshot(page, 'site-check-inbox.png');

  // Opted in, but unproven: partners see nobody, and the account page says why.
  assert.equal(await errorCode(partner.publicClient.returnServices(USER_ID, { profileType: 'public' })), 'not_found');
  await page.goto(`${t.baseUrl}/login`);
  await page.getByLabel('E-mail address or userId').fill(EMAIL);
  await page.getByLabel('Password', { exact: true }).fill(PASSWORD);
  await page.getByRole('button', { name: 'Log in' }).click();
  await page.waitForURL(/\/account$/);
  await page.getByRole('heading', { name: 'Confirm your e-mail address' }).waitFor();
  await page.getByRole('navigation', { name: 'Your account' }).getByRole('link', { name: 'Sharing' }).click();
  // The reminder to confirm is on every account page.
  await page.getByRole('heading', { name: 'Confirm your e-mail address' }).waitFor();
  assert.equal(await page.locator('[data-visible]').getAttribute('data-visible'), 'no');
  await page.getByText('You will be visible once you confirm your e-mail address.').waitFor();
  await screenshot(page, 'site-account-unconfirmed.png');

  // The mail job hands the message to the SMTP server; the recipient reads it.
  assert.equal(await sendDueMail(t.ctx, t.app.log), 1);
  const [mail] = await smtp.waitFor(1);
  assert.deepEqual(mail!.rcptTo, [EMAIL]);
  assert.equal(mail!.parsed.subject, 'Confirm your e-mail address for Dora IDs');
  const html = String(mail!.parsed.html);
  const href = /href="([^"]*\/confirm\?token=[^"]+)"/.exec(html)?.[1]?.replace(/&amp;/g, '&');
  assert.ok(href, 'the HTML part has the link');
  assert.ok(mail!.parsed.text?.includes(href), 'the text part has the same link');

  await page.goto(href);
  await page.getByText(`Confirm that this address belongs to the account ${USER_ID}`).waitFor();
  await screenshot(page, 'site-confirm.png');
  await page.getByRole('button', { name: 'Confirm my address' }).click();
  await page.waitForURL(/\/account\?msg=confirmed/);
  await page.getByText('Your e-mail address is confirmed.').waitFor();
  assert.equal(await page.locator('[data-unconfirmed]').count(), 0);
  await page.getByRole('navigation', { name: 'Your account' }).getByRole('link', { name: 'Sharing' }).click();
  await page.waitForURL(/\/account\/sharing$/);
  assert.equal(await page.locator('[data-visible]').getAttribute('data-visible'), 'yes');

  // Visible now: the partner's earlier push is the user's, and the public view answers.
  assert.deepEqual(await partner.publicClient.returnServices(USER_ID, { profileType: 'public' }), []);
  assert.deepEqual(
    (await partner.client.returnServices(USER_ID)).map((s) => s.usrSvcId),
    ['dora-gh'],
  );
  assert.equal((await page.request.get(`${t.baseUrl}/u/${USER_ID}`)).status(), 200);
  assertLogsClean(t, [EMAIL, PASSWORD, new URL(href).searchParams.get('token')!]);
});

test('a forgotten password is reset the same way: the mail from the SMTP server, its link, a new password', async () => {
  const NEW_PASSWORD = 'a brand new map of the jungle';
  await page.context().clearCookies();
  await page.goto(`${t.baseUrl}/login`);
  await page.getByRole('link', { name: 'Forgot your password?' }).click();
  await page.getByLabel('E-mail address').fill(EMAIL);
  await page.getByRole('button', { name: 'Mail me a link' }).click();
  await page.waitForURL(/\/forgot\/sent$/);
  await page.getByRole('heading', { name: 'Check your inbox' }).waitFor();

  const before = smtp.received.length;
  // The link is made and mailed after the answer (services/after-answer.ts).
  await t.ctx.afterAnswer.idle();
  assert.equal(await sendDueMail(t.ctx, t.app.log), 1);
  const mail = (await smtp.waitFor(before + 1)).at(-1)!;
  assert.equal(mail.parsed.subject, 'Set a new password for Dora IDs');
  const href = /href="([^"]*\/reset\?token=[^"]+)"/.exec(String(mail.parsed.html))?.[1]?.replace(/&amp;/g, '&');
  assert.ok(href);

  await page.goto(href);
  await page.getByLabel('New password').fill(NEW_PASSWORD);
  await screenshot(page, 'site-reset.png');
  await page.getByRole('button', { name: 'Set the new password' }).click();
  await page.waitForURL(/\/login\?msg=password_reset/);
  await page.getByLabel('E-mail address or userId').fill(USER_ID);
  await page.getByLabel('Password', { exact: true }).fill(NEW_PASSWORD);
  await page.getByRole('button', { name: 'Log in' }).click();
  await page.waitForURL(/\/account$/);
  await page.locator('.account-hello', { hasText: `Hello, ${USER_ID}` }).waitFor();

  await sendDueMail(t.ctx, t.app.log);
  const notice = (await smtp.waitFor(before + 2)).at(-1)!;
  assert.equal(notice.parsed.subject, 'Your Dora IDs password was changed');
  assertLogsClean(t, [EMAIL, NEW_PASSWORD, new URL(href).searchParams.get('token')!]);
});

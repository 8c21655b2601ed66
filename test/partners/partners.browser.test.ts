// The whole path in a real Chromium, at a phone's width: a person signs up and proves the address,
// applies for keys, an operator (another browser context) approves, the applicant issues the keys
// and the test calls the API with them, sets a webhook to a receiver the test owns, sees a delivery
// succeed and one fail with its retry, rotates the token and sees the old one refused after the
// grace period. axe-core checks every new page against WCAG 2.2 AA, and no page scrolls sideways.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { IdsvcClient, IdsvcError } from '@idsvc/client';
import axe from 'axe-core';
import type { Browser, Page } from 'playwright-core';
import { deliverDueWebhooks } from '../../src/jobs/webhooks.js';
import type { TestApp } from '../helpers/app.js';
import { launchChromium } from '../helpers/chromium.js';
import { runCli } from '../helpers/cli.js';
import { lastMailTo, linkIn } from '../helpers/mailbox.js';
import { startSiteApp } from '../site/helpers.js';
import { startServer, type LocalServer } from '../verification/servers.js';

const EMAIL = 'amara.applies@example.org';
const PASSWORD = 'violet kettle drums at dawn';
const OP_EMAIL = 'omar.operator@example.org';
const GRACE = 3600;

let t: TestApp;
let browser: Browser;
let applicant: Page;
let operator: Page;
let receiver: LocalServer;
let answer = 200;
let apiKey = '';
let apiToken = '';
let partnerPath = '';

before(async () => {
  t = await startSiteApp({ TOKEN_GRACE_SECONDS: String(GRACE) });
  receiver = await startServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(answer, { 'content-type': 'text/plain' });
      res.end(answer === 200 ? 'received' : 'down for maintenance');
    });
  });
  browser = await launchChromium();
  const phone = { viewport: { width: 390, height: 844 } };
  applicant = await (await browser.newContext(phone)).newPage();
  operator = await (await browser.newContext(phone)).newPage();
  for (const p of [applicant, operator]) p.on('pageerror', (err) => assert.fail(`script error on the page: ${err.message}`));
  const op = await t.user({ email: OP_EMAIL, userId: 'omar_op', password: PASSWORD });
  assert.equal((await runCli(t, ['user', 'set-role', 'omar_op', 'operator'])).code, 0);
  void op;
});

after(async () => {
  await browser?.close();
  await receiver?.close();
  await t?.close();
});

/** axe-core on the page as it is: no WCAG 2.0–2.2 A/AA violation; and nothing wider than the screen. */
async function checkPage(page: Page): Promise<void> {
  await page.evaluate(axe.source);
  const violations = await page.evaluate(async () => {
    const axe = (globalThis as unknown as { axe: { run: (o: unknown) => Promise<{ violations: { id: string; nodes: { target: string[] }[] }[] }> } }).axe;
    const r = await axe.run({ runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'wcag22aa'] } });
    return r.violations.map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
  });
  assert.deepEqual(violations, [], `axe on ${page.url()}`);
  const wide = await page.evaluate(() => document.documentElement.scrollWidth);
  assert.ok(wide <= 390, `${page.url()} is ${wide}px wide at 390px`);
}

async function logIn(page: Page, email: string): Promise<void> {
  await page.goto(`${t.baseUrl}/login`);
  await page.getByLabel('E-mail address or userId').fill(email);
  await page.getByLabel('Password', { exact: true }).fill(PASSWORD);
  await page.getByRole('button', { name: 'Log in' }).click();
  await page.waitForURL(/\/account/);
}

describe('applying for keys and running the partner', () => {
  test('a person proves their address and applies', async () => {
    await applicant.goto(`${t.baseUrl}/signup`);
    await applicant.getByLabel('E-mail address').fill(EMAIL);
    await applicant.getByLabel('Choose a userId').fill('amara');
    await applicant.getByLabel('Password', { exact: true }).fill(PASSWORD);
    await applicant.getByRole('button', { name: 'Create account' }).click();
    await applicant.waitForURL(/\/signup\/sent/);
    await applicant.goto(`${t.baseUrl}${linkIn(await lastMailTo(t, EMAIL), '/confirm?token=')}`);
    await applicant.getByRole('button', { name: 'Confirm my address' }).click();
    await applicant.waitForURL(/\/account\?msg=confirmed/);

    await applicant.goto(`${t.baseUrl}/partners`);
    await checkPage(applicant);
    await applicant.getByRole('link', { name: 'Apply for keys' }).click();
    await checkPage(applicant);
    await applicant.getByLabel("Your application's name").fill('Amara Forum');
    await applicant.getByLabel('Its site').fill('https://forum.example.com');
    await applicant.getByLabel("What it will do with people's identities").fill('Show members their linked identities on forum profiles.');
    await applicant.getByLabel('Origins that will embed the widget').fill('https://forum.example.com');
    await applicant.getByLabel('Contact').fill('Amara, forum admin');
    await applicant.getByRole('button', { name: 'Send the application' }).click();
    await applicant.getByText('Your application is sent.').waitFor();
    await applicant.getByText('Waiting for review').waitFor();
    await checkPage(applicant);
  });

  test('the operator, in another browser, approves it', async () => {
    await logIn(operator, OP_EMAIL);
    await operator.goto(`${t.baseUrl}${linkIn(await lastMailTo(t, OP_EMAIL), '/console/applications/')}`);
    await operator.getByText('Show members their linked identities').waitFor();
    await checkPage(operator);
    await operator.getByRole('button', { name: 'Approve' }).click();
    await operator.getByText('Approved: the partner exists').waitFor();
    await checkPage(operator);
    for (const path of [
      '/console/partners',
      '/console/people?q=amara',
      '/console/people/amara',
      '/console/catalogue?q=github',
      '/console/queues',
      '/console/audit',
    ]) {
      await operator.goto(`${t.baseUrl}${path}`);
      await checkPage(operator);
    }
    await operator.goto(`${t.baseUrl}/console/partners?q=Amara`);
    await operator.getByRole('link', { name: 'Amara Forum' }).click();
    await checkPage(operator);
  });

  test('the applicant sees the keys, issues the token once, and the API takes them', async () => {
    await applicant.goto(`${t.baseUrl}/partners`);
    await applicant.getByRole('link', { name: 'Amara Forum' }).click();
    partnerPath = new URL(applicant.url()).pathname;
    apiKey = (await applicant.locator('[data-api-key]').textContent()) ?? '';
    assert.match(apiKey, /^[a-z0-9]{32}$/);
    await checkPage(applicant);
    await applicant.getByRole('button', { name: 'Issue the api_token' }).click();
    apiToken = (await applicant.locator('[data-secret="api_token"]').textContent()) ?? '';
    assert.match(apiToken, /^[a-z0-9]{40}$/);
    await checkPage(applicant);
    const client = new IdsvcClient({ baseUrl: t.baseUrl, apiKey, apiToken });
    assert.deepEqual(await client.updateService('reader@example.org', 'github', 'reader'), { svcId: 'github', usrSvcId: 'reader' });
    await applicant.goto(`${t.baseUrl}${partnerPath}`);
    assert.equal((await applicant.content()).includes(apiToken), false, 'never shown again');
  });

  test('sets a webhook and sees one delivery succeed and one fail with its retry', async () => {
    await applicant.getByRole('navigation', { name: 'Partner' }).getByRole('link', { name: 'Webhook' }).click();
    await applicant.getByLabel('Webhook URL').fill(`${receiver.origin}/hooks`);
    await applicant.getByRole('button', { name: 'Save endpoint' }).click();
    await applicant.locator('[data-secret="webhook secret"]').waitFor();
    await applicant.getByRole('button', { name: 'Send a test ping' }).click();
    await applicant.getByText('Answer: received').waitFor();
    await checkPage(applicant);

    const reader = await t.user({ email: 'reader@example.org', userId: 'reader', password: PASSWORD });
    const ours = new IdsvcClient({ baseUrl: t.baseUrl, apiKey, apiToken });
    await ours.syncUser('reader@example.org', { email: 'reader@example.org', password: reader.password });
    const other = await t.partner({ name: 'Another site' });
    await other.client.syncUser('reader@example.org', { email: 'reader@example.org', password: reader.password });
    answer = 200;
    await other.client.updateService('reader@example.org', 'gitlab', 'reader');
    await deliverDueWebhooks(t.ctx);
    answer = 503;
    await other.client.updateService('reader@example.org', 'codeberg', 'reader');
    await deliverDueWebhooks(t.ctx);
    await applicant.reload();
    await applicant.locator('tr[data-state="delivered"]').first().waitFor();
    const failed = applicant.locator('tr[data-state="failed, will retry"]');
    await failed.getByText('HTTP 503').waitFor();
    await failed.locator('td[data-label="Next retry"] time').waitFor();
    await checkPage(applicant);
    answer = 200;
    await failed.getByRole('button', { name: /Retry now/ }).click();
    await applicant.getByText('The delivery is due again').waitFor();
    await deliverDueWebhooks(t.ctx);
    await applicant.reload();
    assert.equal(await applicant.locator('tr[data-state="failed, will retry"]').count(), 0);

    // The calls made with the partner's keys reach the usage page at the counter's next flush.
    await t.ctx.usage.flush();
    for (const label of ['Members', 'Linked users', 'Usage']) {
      await applicant.getByRole('navigation', { name: 'Partner' }).getByRole('link', { name: label }).click();
      await applicant.locator('.account-nav a[aria-current="page"]', { hasText: label }).waitFor();
      await checkPage(applicant);
    }
    const counted = Number(await applicant.locator('.usage').getAttribute('data-usage-total'));
    assert.ok(counted >= 1, `the usage page counts the calls made with the keys (${counted})`);
    await applicant.locator('.usage table').getByText('sync_user').first().waitFor({ state: 'attached' });
  });

  test('rotates the token; the old one is refused after the grace period', async () => {
    await applicant.goto(`${t.baseUrl}${partnerPath}`);
    await applicant.getByRole('button', { name: 'Rotate the api_token' }).click();
    const fresh = (await applicant.locator('[data-secret="api_token"]').textContent()) ?? '';
    assert.match(fresh, /^[a-z0-9]{40}$/);
    await applicant.getByText('The previous api_token keeps working for 1 hour,').waitFor();
    const old = new IdsvcClient({ baseUrl: t.baseUrl, apiKey, apiToken });
    assert.ok(await old.updateService('reader@example.org', 'github', 'reader2'));
    t.clock.advance((GRACE + 1) * 1000);
    await assert.rejects(
      old.updateService('reader@example.org', 'github', 'reader3'),
      (e: unknown) => e instanceof IdsvcError && e.code === 'invalid_api_token',
    );
    const client = new IdsvcClient({ baseUrl: t.baseUrl, apiKey, apiToken: fresh });
    assert.ok(await client.updateService('reader@example.org', 'github', 'reader3'));
  });
});

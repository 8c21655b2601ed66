// The example partner site's webhook receiver (examples/partner-site/webhooks.ts), in real
// Chromium: the operator sets the site's endpoint with the real CLI and hands over the secret it
// prints; a `ping` from `partner test-webhook` and a real event from the outbox reach the site,
// are verified with @idsvc/client, and appear on its /events page as they arrive; a forged one is
// refused and never shown.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Browser } from 'playwright-core';
import { Webhook } from 'standardwebhooks';
import { createPartnerSite, userIdentifierOf, type PartnerSiteOptions } from '../../examples/partner-site/site.js';
import { deliverDueWebhooks } from '../../src/jobs/webhooks.js';
import type { TestApp } from '../helpers/app.js';
import { runCli } from '../helpers/cli.js';
import { ALICE, launchChromium, openPage, problems, serve, startIdsvc, type Opened, type Served } from './harness.js';

let t: TestApp;
let browser: Browser;
let site: Served;
let events: Opened;
let partner: Awaited<ReturnType<TestApp['partner']>>;
const siteOptions: PartnerSiteOptions = { idsvcUrl: '', apiKey: '', apiToken: '', user: ALICE };
const ALICE_PASSWORD = 'alice has a long password';

before(async () => {
  t = await startIdsvc();
  browser = await launchChromium();
  partner = await t.partner({ name: 'Example partner' });
  Object.assign(siteOptions, { idsvcUrl: t.baseUrl, apiKey: partner.apiKey, apiToken: partner.apiToken });
  site = await serve(createPartnerSite(siteOptions));
  await t.user({ email: ALICE.email, userId: 'alice', password: ALICE_PASSWORD });
});

after(async () => {
  await events?.context.close();
  await site?.close();
  await browser?.close();
  await t?.close();
});

const shown = (type: string) => events.page.locator(`#events li[data-type="${type}"]`);

test('the operator sets the endpoint; the secret it prints verifies a ping, shown on /events as it arrives', async () => {
  // The endpoint is on this machine: only FETCH_ALLOW_PRIVATE lets idsvc call it.
  const set = await runCli(t, ['--json', 'partner', 'set', partner.apiKey, '--webhook', `${site.origin}/idsvc/webhooks`], {
    env: { FETCH_ALLOW_PRIVATE: '1' },
  });
  assert.equal(set.code, 0, set.stderr);
  siteOptions.webhookSecret = (JSON.parse(set.stdout) as { webhook_secret: string }).webhook_secret;

  events = await openPage(browser, `${site.origin}/events`);
  await events.page.locator('#no-events').waitFor();
  const ping = await runCli(t, ['partner', 'test-webhook', partner.apiKey], { env: { FETCH_ALLOW_PRIVATE: '1' } });
  assert.equal(ping.code, 0, ping.stderr + ping.stdout);
  assert.match(ping.stdout, /204/);
  await shown('ping').waitFor();
  assert.equal(await events.page.locator('#no-events').isVisible(), false);
  assert.deepEqual(problems(events), []);
});

test('an event from the outbox (another partner links Alice) reaches the page; a repeat is shown once', async () => {
  const uid = userIdentifierOf(ALICE.email);
  await partner.client.syncUser(uid, { email: ALICE.email, password: ALICE_PASSWORD, endUserIp: '192.0.2.10' });
  const other = await t.partner({ name: 'Other app' });
  await other.client.syncUser('alice', { email: ALICE.email, password: ALICE_PASSWORD, endUserIp: '192.0.2.10' });
  assert.ok((await deliverDueWebhooks(t.ctx)) >= 1);
  const item = shown('link.created');
  await item.waitFor();
  assert.match((await item.textContent()) ?? '', /Other app/);

  // The same delivery again (at-least-once): acknowledged, not shown twice.
  const secret = siteOptions.webhookSecret!;
  const body = JSON.stringify({ type: 'link.created', timestamp: new Date().toISOString(), data: { partner: 'Repeat' } });
  const headers = (id: string) => {
    const ts = new Date();
    return {
      'content-type': 'application/json',
      'webhook-id': id,
      'webhook-timestamp': String(Math.floor(ts.getTime() / 1000)),
      'webhook-signature': new Webhook(secret).sign(id, ts, body),
    };
  };
  for (let i = 0; i < 2; i++)
    assert.equal((await fetch(`${site.origin}/idsvc/webhooks`, { method: 'POST', headers: headers('msg_repeat'), body })).status, 204);
  await events.page.locator('#events li', { hasText: 'Repeat' }).waitFor();
  assert.equal(await events.page.locator('#events li', { hasText: 'Repeat' }).count(), 1);
});

test('a forged or altered event is refused (400) and never shown', async () => {
  const body = JSON.stringify({ type: 'user.deleted', timestamp: new Date().toISOString(), data: { userId: 'forged' } });
  const forgedSecret = `whsec_${Buffer.from('not the partner secret, 32 bytes').toString('base64')}`;
  const ts = new Date();
  const forged = await fetch(`${site.origin}/idsvc/webhooks`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'webhook-id': 'msg_forged',
      'webhook-timestamp': String(Math.floor(ts.getTime() / 1000)),
      'webhook-signature': new Webhook(forgedSecret).sign('msg_forged', ts, body),
    },
    body,
  });
  assert.equal(forged.status, 400);
  // A real ping after it shows the page is live; the forged event is still not there.
  assert.equal((await runCli(t, ['partner', 'test-webhook', partner.apiKey], { env: { FETCH_ALLOW_PRIVATE: '1' } })).code, 0);
  await events.page.waitForFunction(() => document.querySelectorAll('#events li[data-type="ping"]').length === 2);
  assert.equal(await shown('user.deleted').count(), 0);
});

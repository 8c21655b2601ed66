// Passkeys as a person uses them, in a real Chromium with its virtual authenticator (DevTools
// protocol WebAuthn: CTAP2, internal transport, resident keys, user verification): sign up and
// confirm, add a passkey, log out, log in with it; an assertion the browser sent, replayed, is
// refused; a clone of the authenticator (its key copied with a lower signature counter) is refused;
// the passkey removed no longer logs in.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Browser, BrowserContext, CDPSession, Page } from 'playwright-core';
import { launchChromium, screenshot } from '../helpers/chromium.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { lastMailTo, linkIn, mailsTo } from '../helpers/mailbox.js';
import { unusedPort } from '../verification/servers.js';
import { passkeysOfUser } from '../../src/repositories/passkeys.js';
import { findUserByUserId } from '../../src/repositories/users.js';
import { assertLogsClean, SiteClient } from './helpers.js';

const EMAIL = 'pat.keys@example.org';
const USER_ID = 'patkeys';
const PASSWORD = 'seven lanterns over the quiet harbour';
const PASSKEY = 'This browser';
const REFUSED = 'That passkey did not log you in. Try again, or log in with your password.';

let t: TestApp;
let site: string;
let browser: Browser;
let context: BrowserContext;
let page: Page;
let cdp: CDPSession;
let authenticatorId: string;
/** The bodies the page posted to /login/passkey, as the browser sent them. */
const assertionsSent: string[] = [];

/** A tab with a virtual authenticator of its own, as a phone or laptop with a screen lock would be. */
async function tabWithAuthenticator(ctx: BrowserContext): Promise<{ page: Page; cdp: CDPSession; authenticatorId: string }> {
  const p = await ctx.newPage();
  p.on('pageerror', (err) => assert.fail(`script error on the page: ${err.message}`));
  const session = await ctx.newCDPSession(p);
  await session.send('WebAuthn.enable');
  const added = await session.send('WebAuthn.addVirtualAuthenticator', {
    options: {
      protocol: 'ctap2',
      transport: 'internal',
      hasResidentKey: true,
      hasUserVerification: true,
      isUserVerified: true,
      automaticPresenceSimulation: true,
    },
  });
  return { page: p, cdp: session, authenticatorId: added.authenticatorId };
}

before(async () => {
  // WebAuthn wants a domain name: localhost is one browsers trust over plain http.
  const port = await unusedPort();
  site = `http://localhost:${port}`;
  t = await startTestApp({ PORT: String(port), BASE_URL: site });
  browser = await launchChromium();
  context = await browser.newContext({ viewport: { width: 1000, height: 850 } });
  ({ page, cdp, authenticatorId } = await tabWithAuthenticator(context));
  page.on('request', (r) => {
    if (r.method() === 'POST' && new URL(r.url()).pathname === '/login/passkey') assertionsSent.push(r.postData() ?? '');
  });
});

after(async () => {
  await browser?.close();
  await t?.close();
});

async function logOut(p: Page): Promise<void> {
  await p.getByRole('button', { name: 'Log out' }).click();
  await p.waitForURL(/\/\?msg=logged_out$/);
}

async function logInWithPasskey(p: Page): Promise<void> {
  await p.goto(`${site}/login`);
  // The password form stays as it was; the passkey button comes after it.
  await p.getByLabel('E-mail address or userId').waitFor();
  await p.getByRole('button', { name: 'Log in with a passkey' }).click();
}

describe('passkeys in Chromium', () => {
  test('sign up and confirm, then add a passkey: it is listed, kept by the authenticator, and mailed', async () => {
    await page.goto(`${site}/signup`);
    await page.getByLabel('E-mail address').fill(EMAIL);
    await page.getByLabel('Choose a userId').fill(USER_ID);
    await page.getByLabel('Password', { exact: true }).fill(PASSWORD);
    await page.getByRole('button', { name: 'Create account' }).click();
    await page.waitForURL(/\/signup\/sent$/);
    await page.goto(`${site}${linkIn(await lastMailTo(t, EMAIL), '/confirm?token=')}`);
    await page.getByRole('button', { name: 'Confirm my address' }).click();
    await page.waitForURL(/\/account\?msg=confirmed/);

    await page.getByRole('navigation', { name: 'Your account' }).getByRole('link', { name: 'Security' }).click();
    await page.getByRole('link', { name: 'Your passkeys' }).click();
    await page.waitForURL(/\/account\/passkeys$/);
    await page.getByText('You have no passkeys yet.').waitFor();
    await page.getByLabel('Name of this passkey').fill(PASSKEY);
    await page.getByRole('button', { name: 'Add a passkey' }).click();
    await page.waitForURL(/\/account\/passkeys\?msg=added$/);
    await page.getByText('Your passkey is added.').waitFor();
    const item = page.locator(`[data-passkey="${PASSKEY}"]`);
    await item.waitFor();
    assert.match(await item.innerText(), /never used yet/);
    await screenshot(page, 'site-passkeys.png');
    // On a phone's width the list, its buttons and the form stay within the screen.
    await page.setViewportSize({ width: 320, height: 700 });
    assert.ok(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth), 'the passkeys page fits 320 px');
    await page.setViewportSize({ width: 1000, height: 850 });

    const { credentials } = await cdp.send('WebAuthn.getCredentials', { authenticatorId });
    assert.equal(credentials.length, 1);
    assert.equal(credentials[0]!.isResidentCredential, true);
    assert.equal(credentials[0]!.rpId, 'localhost');
    assert.equal((await lastMailTo(t, EMAIL)).subject, 'A passkey was added to your idsvc account');
  });

  test('log out, then log in with the passkey: no password typed', async () => {
    await logOut(page);
    await logInWithPasskey(page);
    await page.waitForURL(/\/account$/);
    await page.locator('.account-hello', { hasText: `Hello, ${USER_ID}` }).waitFor();
    // The server keeps the counter the authenticator signed, to refuse any later signature that is not past it.
    const { credentials } = await cdp.send('WebAuthn.getCredentials', { authenticatorId });
    const [stored] = await passkeysOfUser(t.ctx.db, (await findUserByUserId(t.ctx.db, USER_ID))!.id);
    assert.ok(credentials[0]!.signCount > 0);
    assert.equal(stored!.counter, credentials[0]!.signCount);
    await page.goto(`${site}/account/passkeys`);
    assert.match(await page.locator(`[data-passkey="${PASSKEY}"]`).innerText(), /last used/);
    assert.equal(assertionsSent.length, 1);
  });

  test('the assertion the browser sent, replayed by someone else, is refused', async () => {
    const sent = JSON.parse(assertionsSent[0]!) as { response: unknown };
    const thief = new SiteClient(t.baseUrl);
    const csrf = await thief.csrf('/login');
    assert.equal((await thief.postJson('/login/passkey/options', { _csrf: csrf })).res.status, 200);
    const replay = await thief.postJson('/login/passkey', { _csrf: csrf, response: sent.response });
    assert.equal(replay.res.status, 400);
    assert.deepEqual(replay.json, { error: REFUSED });
    assert.equal(thief.cookies.has('idsvc_session'), false);
  });

  test('a clone of the authenticator, its key copied with a lower counter, is refused', async () => {
    const { credentials } = await cdp.send('WebAuthn.getCredentials', { authenticatorId });
    const original = credentials[0]!;
    const other = await browser.newContext();
    try {
      const clone = await tabWithAuthenticator(other);
      await clone.cdp.send('WebAuthn.addCredential', { authenticatorId: clone.authenticatorId, credential: { ...original, signCount: 0 } });
      await logInWithPasskey(clone.page);
      await clone.page.getByRole('alert').filter({ hasText: REFUSED }).waitFor();
      assert.equal(new URL(clone.page.url()).pathname, '/login');
      // A copy that is ahead of the original is a fresh signature the server has not seen: that
      // one is the key's holder, whoever it is, and it logs in.
      await clone.cdp.send('WebAuthn.removeCredential', { authenticatorId: clone.authenticatorId, credentialId: original.credentialId });
      await clone.cdp.send('WebAuthn.addCredential', { authenticatorId: clone.authenticatorId, credential: { ...original, signCount: 5 } });
      await logInWithPasskey(clone.page);
      await clone.page.waitForURL(/\/account$/);
    } finally {
      await other.close();
    }
    // The original's counter is now behind what the server saw: it is refused until ahead again.
    await logOut(page);
    await logInWithPasskey(page);
    await page.getByRole('alert').filter({ hasText: REFUSED }).waitFor();
  });

  test('remove the passkey: mailed, and it no longer logs in', async () => {
    await page.goto(`${site}/login`);
    await page.getByLabel('E-mail address or userId').fill(USER_ID);
    await page.getByLabel('Password', { exact: true }).fill(PASSWORD);
    await page.getByRole('button', { name: 'Log in', exact: true }).click();
    await page.waitForURL(/\/account$/);
    await page.goto(`${site}/account/passkeys`);
    await page.getByRole('button', { name: `Remove the passkey ${PASSKEY}` }).click();
    await page.waitForURL(/\/account\/passkeys\?msg=removed$/);
    await page.getByText('You have no passkeys yet.').waitFor();
    const mails = await mailsTo(t, EMAIL);
    assert.equal(mails.at(-1)!.subject, 'A passkey was removed from your idsvc account');

    await logOut(page);
    // The authenticator still holds the key; the site no longer accepts it.
    assert.equal((await cdp.send('WebAuthn.getCredentials', { authenticatorId })).credentials.length, 1);
    await logInWithPasskey(page);
    await page.getByRole('alert').filter({ hasText: REFUSED }).waitFor();
    await screenshot(page, 'site-passkey-refused.png');
    assert.equal(new URL(page.url()).pathname, '/login');
    assertLogsClean(t, [EMAIL, PASSWORD]);
  });
});

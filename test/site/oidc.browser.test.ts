// The generic OpenID Connect path as a person lives it, in a real Chromium against a real OpenID
// Connect server on loopback (the `oidc-provider` package, with its development log-in and consent
// pages): sign-up, log-in, connecting while logged in, disconnecting, an address the provider has
// not verified, an address that is another account's (no takeover), and a tampered `state`.
import assert from 'node:assert/strict';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { after, before, test } from 'node:test';
import Provider from 'oidc-provider';
import type { Browser, Page } from 'playwright-core';
import { connectionsOfUser } from '../../src/repositories/provider-connections.js';
import { findUserByUserId } from '../../src/repositories/users.js';
import type { TestApp } from '../helpers/app.js';
import { launchChromium } from '../helpers/chromium.js';
import { startServer, unusedPort, type LocalServer } from '../verification/servers.js';
import { assertLogsClean, startSiteApp } from './helpers.js';

const CLIENT_ID = 'idsvc-test';
const CLIENT_SECRET = 'a-client-secret-for-the-loopback-provider';
/** The people of the provider: the development log-in page takes any login and password. */
const PEOPLE: Record<string, { email: string; email_verified: boolean }> = {
  kim: { email: 'kim@example.org', email_verified: true },
  lee_kc: { email: 'lee.kc@example.org', email_verified: true },
  nov: { email: 'nov@example.org', email_verified: false },
  gina_kc: { email: 'gina@example.org', email_verified: true },
  tam: { email: 'tam@example.org', email_verified: true },
};

let t: TestApp;
let op: LocalServer;
let browser: Browser;
let handler: (req: IncomingMessage, res: ServerResponse) => void = (_req, res) => res.end();

before(async () => {
  op = await startServer((req, res) => handler(req, res));
  const appPort = await unusedPort();
  const baseUrl = `http://127.0.0.1:${appPort}`;
  const provider = new Provider(op.origin, {
    clients: [
      {
        client_id: CLIENT_ID,
        client_secret: CLIENT_SECRET,
        redirect_uris: [`${baseUrl}/auth/keycloak/callback`],
        grant_types: ['authorization_code'],
        response_types: ['code'],
      },
    ],
    claims: { openid: ['sub'], email: ['email', 'email_verified'] },
    findAccount: async (_ctx, id) => ({ accountId: id, claims: async () => ({ sub: id, ...(PEOPLE[id] ?? {}) }) }),
    cookies: { keys: ['loopback-test-cookie-key'] },
    pkce: { required: () => true },
  });
  handler = provider.callback();
  t = await startSiteApp({
    PORT: String(appPort),
    BASE_URL: baseUrl,
    OIDC_PROVIDERS: 'keycloak',
    OIDC_KEYCLOAK_ISSUER: op.origin,
    OIDC_KEYCLOAK_CLIENT_ID: CLIENT_ID,
    OIDC_KEYCLOAK_CLIENT_SECRET: CLIENT_SECRET,
    OIDC_KEYCLOAK_NAME: 'Keycloak',
  });
  browser = await launchChromium();
});

after(async () => {
  await browser?.close();
  await t?.close();
  await op?.close();
});

async function newPage(): Promise<Page> {
  const page = await (await browser.newContext()).newPage();
  page.on('pageerror', (err) => assert.fail(`script error on the page: ${err.message}`));
  return page;
}

/** At the provider: its log-in page (any password), then its consent page. */
async function signInAtProvider(page: Page, login: string): Promise<void> {
  await page.locator('input[name="login"]').waitFor();
  await page.locator('input[name="login"]').fill(login);
  await page.locator('input[name="password"]').fill('whatever');
  await page.getByRole('button', { name: 'Sign-in' }).click();
  await page.getByRole('button', { name: 'Continue' }).click();
}

async function logInWithPassword(page: Page, login: string, password: string): Promise<void> {
  await page.goto(`${t.baseUrl}/login`);
  await page.getByLabel('E-mail address or userId').fill(login);
  await page.getByLabel('Password', { exact: true }).fill(password);
  await page.getByRole('button', { name: 'Log in', exact: true }).click();
  await page.waitForURL(/\/account$/);
}

test('sign up with the provider, then log in with it in another browser', async () => {
  const page = await newPage();
  await page.goto(`${t.baseUrl}/signup`);
  await page.getByRole('button', { name: 'Sign up with Keycloak' }).click();
  await signInAtProvider(page, 'kim');
  await page.waitForURL(/\/auth\/signup$/);
  await page.getByText('Your e-mail address, verified by Keycloak').waitFor();
  await page.getByLabel('userId').fill('kim');
  await page.getByRole('button', { name: 'Create account' }).click();
  await page.waitForURL(/\/account$/);
  const user = await findUserByUserId(t.ctx.db, 'kim');
  assert.equal(user?.email, 'kim@example.org');
  assert.ok(user?.email_proven_at, 'the verified address counts as proven');
  await page.context().close();

  const again = await newPage();
  await again.goto(`${t.baseUrl}/login`);
  await again.getByRole('button', { name: 'Log in with Keycloak' }).click();
  await signInAtProvider(again, 'kim');
  await again.waitForURL(/\/account$/);
  await again.getByText('Hello,').waitFor();
  assert.match(await again.locator('.account-hello').innerText(), /kim/);
  await again.context().close();
});

test('connect while logged in, then disconnect; both are mailed', async () => {
  const lee = await t.user({ email: 'lee@example.org', userId: 'lee' });
  const page = await newPage();
  await logInWithPassword(page, 'lee', lee.password);
  await page.goto(`${t.baseUrl}/account/security`);
  await page.getByRole('button', { name: 'Connect Keycloak' }).click();
  await signInAtProvider(page, 'lee_kc');
  await page.waitForURL(/\/account\/security\?msg=provider_connected/);
  await page.getByText('The provider is connected').waitFor();
  assert.equal((await connectionsOfUser(t.ctx.db, lee.id)).length, 1);
  await page.getByRole('button', { name: 'Disconnect Keycloak' }).click();
  await page.waitForURL(/msg=provider_disconnected/);
  assert.equal((await connectionsOfUser(t.ctx.db, lee.id)).length, 0);
  const subjects = (await t.ctx.db.kysely.selectFrom('mail_queue').select(['subject']).execute()).map((m) => m.subject);
  assert.ok(subjects.includes('Keycloak was connected to your idsvc account'));
  assert.ok(subjects.includes('Keycloak was disconnected from your idsvc account'));
  await page.context().close();
});

test('an address the provider has not verified is not used: the person gives one to confirm', async () => {
  const page = await newPage();
  await page.goto(`${t.baseUrl}/login`);
  await page.getByRole('button', { name: 'Log in with Keycloak' }).click();
  await signInAtProvider(page, 'nov');
  await page.waitForURL(/\/auth\/signup$/);
  assert.equal(await page.getByText('nov@example.org').count(), 0);
  await page.getByLabel('E-mail address').fill('nov.typed@example.org');
  await page.getByLabel('userId').fill('nov');
  await page.getByRole('button', { name: 'Create account' }).click();
  await page.waitForURL(/\/signup\/sent$/);
  const user = await findUserByUserId(t.ctx.db, 'nov');
  assert.equal(user?.email, 'nov.typed@example.org');
  assert.equal(user?.email_proven_at, null);
  await page.context().close();
});

test("an address that is another account's never attaches the connection (no takeover)", async () => {
  const gina = await t.user({ email: 'gina@example.org', userId: 'gina' });
  const page = await newPage();
  await page.goto(`${t.baseUrl}/login`);
  await page.getByRole('button', { name: 'Log in with Keycloak' }).click();
  await signInAtProvider(page, 'gina_kc');
  await page.getByRole('heading', { name: 'Log in to your account first' }).waitFor();
  assert.deepEqual(await connectionsOfUser(t.ctx.db, gina.id), []);
  await page.goto(`${t.baseUrl}/account`);
  await page.waitForURL(/\/login$/);
  await page.context().close();
});

test('a tampered state is refused', async () => {
  const page = await newPage();
  // The state the provider is sent (and so sends back) is not the one this browser's flow holds.
  await page.route(`${op.origin}/auth?*`, (route) => {
    const url = new URL(route.request().url());
    url.searchParams.set('state', 'forged-state');
    return route.continue({ url: url.href });
  });
  await page.goto(`${t.baseUrl}/login`);
  await page.getByRole('button', { name: 'Log in with Keycloak' }).click();
  await signInAtProvider(page, 'tam');
  await page.getByRole('heading', { name: 'The sign-in did not complete' }).waitFor();
  assert.equal(await findUserByUserId(t.ctx.db, 'tam'), undefined);
  await page.goto(`${t.baseUrl}/account`);
  await page.waitForURL(/\/login$/);
  await page.context().close();
});

test('nothing secret reaches the logs', () => {
  assertLogsClean(t, [CLIENT_SECRET]);
});

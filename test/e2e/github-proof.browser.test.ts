// A GitHub identity proven by a proof text, end to end in real Chromium: a person signs in, adds
// their GitHub account, copies the proof text from the proofs page with its copy button, and the
// (local) GitHub API answers with it in the bio; "Verify now" marks it verified by `proof`, the
// public profile says how and since when, and the partner linked to the person gets the method and
// times in its JSON answer and an `identity.verified` webhook. Then the proof leaves the bio: the
// person's check only warns, the mark stays until the re-check after VERIFY_CONFIRM_AFTER_SECONDS
// still misses it, and then it goes and the partner's receiver gets `identity.unverified` with the
// reason. GitHub's API and profile pages are local servers answering in GitHub's shape, put in
// place of https://api.github.com and https://www.github.com by IDSVC_TEST_PROOF_ORIGINS.
import assert from 'node:assert/strict';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { after, before, describe, test } from 'node:test';
import { verifyWebhook, type WebhookEvent } from '@idsvc/client';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { deliverDueWebhooks } from '../../src/jobs/webhooks.js';
import { reverifyDue } from '../../src/jobs/reverify.js';
import { findWebhookTarget } from '../../src/repositories/partners.js';
import type { TestApp } from '../helpers/app.js';
import { launchChromium } from '../helpers/chromium.js';
import { startSiteApp } from '../site/helpers.js';
import { startServer, type LocalServer } from '../verification/servers.js';

const USER_ID = 'alice_proof';
const EMAIL = 'alice.proof@example.org';
const PASSWORD = 'seven lanterns over the harbour';
const LOGIN = 'alice-codes';
/** The partner's own name for the person. */
const MEMBER = 'member_42';
const PROFILE_URL = `https://www.github.com/${LOGIN}`;

/** GitHub's public profile, as GET https://api.github.com/users/{login} answers it. */
interface GitHubUser {
  login: string;
  id: number;
  name: string | null;
  bio: string | null;
  blog: string;
}

let githubApi: LocalServer & { users: Map<string, GitHubUser>; asked: { path: string; userAgent: string; accept: string }[] };
let githubWeb: LocalServer;
let receiver: LocalServer & { events: WebhookEvent[]; refused: string[] };
let t: TestApp;
let browser: Browser;
let context: BrowserContext;
let page: Page;
let partner: Awaited<ReturnType<TestApp['partner']>>;
let secret: string;
let proofText = '';
let verifiedAt = 0;

/** The REST API's answer shape (docs.github.com/rest/users/users#get-a-user), for the fields the check reads and the usual others. */
function userJson(u: GitHubUser) {
  return {
    login: u.login,
    id: u.id,
    node_id: 'MDQ6VXNlcjU4MzIzMQ==',
    avatar_url: `https://avatars.githubusercontent.com/u/${u.id}?v=4`,
    gravatar_id: '',
    url: `https://api.github.com/users/${u.login}`,
    html_url: `https://github.com/${u.login}`,
    type: 'User',
    site_admin: false,
    name: u.name,
    company: null,
    blog: u.blog,
    location: 'Lyon',
    email: null,
    hireable: null,
    bio: u.bio,
    twitter_username: null,
    public_repos: 8,
    public_gists: 1,
    followers: 20,
    following: 3,
    created_at: '2014-03-02T10:00:00Z',
    updated_at: '2026-01-01T00:00:00Z',
  };
}

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'x-github-media-type': 'github.v3; format=json' });
  res.end(JSON.stringify(body));
}

async function startGitHubApi(): Promise<typeof githubApi> {
  const users = new Map<string, GitHubUser>();
  const asked: { path: string; userAgent: string; accept: string }[] = [];
  const server = await startServer((req: IncomingMessage, res: ServerResponse) => {
    const path = req.url ?? '/';
    asked.push({ path, userAgent: req.headers['user-agent'] ?? '', accept: req.headers.accept ?? '' });
    // GitHub refuses API requests without a user agent.
    if (!req.headers['user-agent']) {
      res.writeHead(403, { 'content-type': 'text/plain' });
      res.end('Request forbidden by administrative rules. Please make sure your request has a User-Agent header.');
      return;
    }
    const m = /^\/users\/([A-Za-z0-9-]{1,39})$/.exec(path);
    // Logins are case-insensitive on GitHub.
    const user = m ? [...users.values()].find((u) => u.login.toLowerCase() === m[1]!.toLowerCase()) : undefined;
    if (!user) return sendJson(res, 404, { message: 'Not Found', documentation_url: 'https://docs.github.com/rest/users/users#get-a-user', status: '404' });
    sendJson(res, 200, userJson(user));
  });
  return Object.assign(server, { users, asked });
}

/** GitHub's profile page: the bio as text, the website link with rel="nofollow me" (none here), no link to idsvc. */
async function startGitHubWeb(): Promise<LocalServer> {
  return startServer((req: IncomingMessage, res: ServerResponse) => {
    const login = decodeURIComponent((req.url ?? '/').slice(1));
    const user = githubApi.users.get(login);
    if (!user) {
      res.writeHead(404, { 'content-type': 'text/html; charset=utf-8' });
      res.end('<!doctype html><title>Page not found · GitHub</title>');
      return;
    }
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    const bio = (user.bio ?? '').replace(/&/g, '&amp;').replace(/</g, '&lt;');
    res.end(`<!doctype html><html><head><title>${user.login} · GitHub</title></head><body><div class="user-profile-bio"><div>${bio}</div></div></body></html>`);
  });
}

/** The partner's webhook endpoint: keeps each event whose signature verifies with the partner's secret. */
async function startReceiver(): Promise<typeof receiver> {
  const events: WebhookEvent[] = [];
  const refused: string[] = [];
  const server = await startServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      // The receiver's clock is the service's: the test moves it past the confirmation delay.
      verifyWebhook(secret, req.headers, body, { now: t.clock.now() }).then(
        (event) => {
          events.push(event);
          res.writeHead(204).end();
        },
        (e: unknown) => {
          refused.push(String(e));
          res.writeHead(400).end();
        },
      );
    });
  });
  return Object.assign(server, { events, refused });
}

const iso = (ms: number) => new Date(ms).toISOString();
const identity = () => page.locator('#identity-github');

/** What the receiver got of one type about the person, after a delivery pass. */
async function delivered(type: string): Promise<Record<string, unknown>[]> {
  await deliverDueWebhooks(t.ctx);
  assert.deepEqual(receiver.refused, [], 'every delivery verifies');
  return receiver.events.filter((e) => e.type === type).map((e) => e.data as Record<string, unknown>);
}

/** The partner's JSON answer for the person's GitHub entry (return_services, private, with the token). */
async function partnerGitHubEntry(): Promise<Record<string, unknown>> {
  const res = await fetch(`${t.baseUrl}/api/return_services/${partner.apiKey}/${MEMBER}/private`, {
    method: 'POST',
    headers: { accept: 'application/json', 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ api_token: partner.apiToken }).toString(),
  });
  assert.equal(res.status, 200);
  const body = (await res.json()) as { services: Record<string, unknown>[] };
  const entry = body.services.find((s) => s.svcId === 'github');
  assert.ok(entry, JSON.stringify(body));
  return entry;
}

before(async () => {
  githubApi = await startGitHubApi();
  githubWeb = await startGitHubWeb();
  receiver = await startReceiver();
  // The app on its real address (BASE_URL), so the proof text names the server the browser uses.
  t = await startSiteApp({ IDSVC_TEST_PROOF_ORIGINS: `https://api.github.com=${githubApi.origin},https://www.github.com=${githubWeb.origin}` });
  partner = await t.partner({ name: 'Proof partner', webhookUrl: `${receiver.origin}/idsvc/webhooks` });
  secret = (await findWebhookTarget(t.ctx.db, partner.id))!.webhook_secret!;
  await t.user({ email: EMAIL, userId: USER_ID, password: PASSWORD });
  // The person linked the partner earlier: it hears of their identities from now on.
  await partner.client.syncUser(MEMBER, { email: EMAIL, password: PASSWORD });
  githubApi.users.set(LOGIN, { login: LOGIN, id: 583231, name: 'Alice', bio: 'Cats and code.', blog: '' });

  browser = await launchChromium();
  context = await browser.newContext({ viewport: { width: 1100, height: 900 } });
  context.setDefaultTimeout(15_000);
  // The copy button writes to the clipboard; the test reads it back as a paste would.
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: t.baseUrl });
  page = await context.newPage();
  page.on('pageerror', (err) => assert.fail(`script error on the page: ${err.message}`));
});

after(async () => {
  await browser?.close();
  await t?.close();
  await receiver?.close();
  await githubWeb?.close();
  await githubApi?.close();
});

describe('a GitHub identity proven by the proof text in the bio', () => {
  test('the person signs in and adds their GitHub account', async () => {
    await page.goto(`${t.baseUrl}/login`);
    await page.getByLabel('E-mail address or userId').fill(USER_ID);
    await page.getByLabel('Password', { exact: true }).fill(PASSWORD);
    await page.getByRole('button', { name: 'Log in' }).click();
    await page.waitForURL(/\/account/);

    await page.getByLabel('Service', { exact: true }).selectOption('github');
    await page.getByLabel('Your name there').fill(LOGIN);
    await page.locator('#url-preview').getByText(PROFILE_URL).waitFor();
    await page.getByRole('button', { name: 'Add identity' }).click();
    await page.getByText('Identity saved.').waitFor();
    assert.match(await identity().innerText(), /Not verified/);
  });

  test('opens the proof steps for GitHub and copies the proof text with the copy button', async () => {
    await page.getByRole('link', { name: 'What to do on each of your services' }).click();
    await page.waitForURL(/\/account\/proofs$/);
    const github = page.locator('#proof-github');
    await github.getByText('Add the proof text to your GitHub bio').waitFor();
    assert.match(await github.locator('h3').innerText(), new RegExp(`GitHub: ${LOGIN}`));

    const copy = page.locator('#proof-text').getByRole('button', { name: 'Copy' }).first();
    await copy.click();
    // The clipboard is written asynchronously after the click.
    await page.waitForFunction(async () => (await navigator.clipboard.readText()) !== '');
    proofText = await page.evaluate(() => navigator.clipboard.readText());
    // The copied text is the one the page shows, and it names this account.
    assert.equal(proofText, await page.locator('#proof-text code[data-proof-text="url"]').textContent());
    assert.equal(proofText, `${t.config.baseUrl}/u/${USER_ID}`);
  });

  test('with the proof in the GitHub bio, "Verify now" marks it verified by the proof text', async () => {
    githubApi.users.get(LOGIN)!.bio = `Cats and code. ${proofText}`;
    const askedBefore = githubApi.asked.length;
    await page.getByRole('navigation', { name: 'Your account' }).getByRole('link', { name: 'Identities' }).click();
    await page.waitForURL(/\/account/);
    verifiedAt = t.clock.now();
    await identity().getByRole('button', { name: 'Verify GitHub now' }).click();
    await page.waitForURL(/checked=github/);

    const item = identity();
    await item.getByText('Checked just now').waitFor();
    const result = item.locator('[data-check-result]');
    assert.equal(await result.count(), 1, 'only the method that verified is shown');
    assert.equal(await result.getAttribute('data-check-result'), 'verified');
    assert.equal(await result.getAttribute('data-method'), 'proof');
    assert.match(await result.innerText(), /Verified \(your proof text on the service\)/);
    assert.match(await item.locator('.badge').first().innerText(), /Verified/);
    const evidence = item.locator('p.evidence[data-verified-by="proof"]');
    assert.match(await evidence.innerText(), new RegExp(`Verified by your proof text on the service since .*evidence: ${githubApi.origin}/users/${LOGIN}`));
    assert.equal(await evidence.locator('time').first().getAttribute('datetime'), iso(verifiedAt));

    // GitHub's API was asked once for this account, naming idsvc, as GitHub's JSON.
    const asked = githubApi.asked.slice(askedBefore);
    assert.deepEqual(
      asked.map((a) => a.path),
      [`/users/${LOGIN}`],
    );
    assert.equal(asked[0]!.userAgent, `idsvc/0.1 (identity verification; +${t.config.baseUrl})`);
    assert.match(asked[0]!.accept, /application\/vnd\.github\+json/);
  });

  test('the public profile says how the GitHub identity was verified and since when', async () => {
    const visitor = await browser.newContext();
    try {
      const p = await visitor.newPage();
      await p.goto(`${t.baseUrl}/u/${USER_ID}`);
      const item = p.locator('.public-identities li', { hasText: 'GitHub' });
      await item.waitFor();
      assert.equal(await item.locator('a[rel="me"]').getAttribute('href'), PROFILE_URL);
      assert.match(await item.locator('.badge.verified').innerText(), /Verified/);
      const mark = item.locator('.evidence[data-verified-by="proof"]');
      assert.match(await mark.innerText(), /by a proof text on the service naming this page, since/);
      assert.equal(await mark.locator('time').getAttribute('datetime'), iso(verifiedAt));
    } finally {
      await visitor.close();
    }
  });

  test('the linked partner gets the method and times in its JSON answer, and identity.verified', async () => {
    const evidence = { verifiedBy: 'proof', verifiedAt: iso(verifiedAt), lastCheckedAt: iso(verifiedAt), evidenceUrl: `${githubApi.origin}/users/${LOGIN}` };
    const entry = await partnerGitHubEntry();
    assert.equal(entry.verified, true);
    assert.equal(entry.url, PROFILE_URL);
    assert.deepEqual(
      { verifiedBy: entry.verifiedBy, verifiedAt: entry.verifiedAt, lastCheckedAt: entry.lastCheckedAt, evidenceUrl: entry.evidenceUrl },
      evidence,
    );

    const verified = await delivered('identity.verified');
    assert.deepEqual(verified, [{ user_identifier: MEMBER, userId: USER_ID, svcId: 'github', url: PROFILE_URL, verified: true, ...evidence }]);
    assert.deepEqual(await delivered('identity.unverified'), []);
  });

  test("the proof leaves the bio: the person's check warns, the mark stays until the delay has passed", async () => {
    // A few minutes later the person takes the proof out of their bio, and checks.
    t.clock.advance(5 * 60_000);
    githubApi.users.get(LOGIN)!.bio = 'Cats and code.';
    await page.goto(`${t.baseUrl}/account`);
    const negativeAt = t.clock.now();
    await identity().getByRole('button', { name: 'Verify GitHub now' }).click();
    await page.waitForURL(/checked=github/);

    const item = identity();
    // Each method asked is listed: rel="me" on the profile page, then the proof in the API's answer.
    assert.deepEqual(
      await item.locator('[data-check-result]').evaluateAll((els) => els.map((e) => `${e.getAttribute('data-method')} ${e.getAttribute('data-check-result')}`)),
      ['rel-me absent', 'proof absent'],
    );
    assert.match(await item.locator('.check-list').innerText(), /^Checked just now:/);
    assert.match(await item.locator('.badge').first().innerText(), /Verified/, 'one negative does not take the mark');
    const pending = item.locator('[data-pending-removal="true"]');
    assert.match(await pending.innerText(), /The last check did not find the proof/);
    assert.equal(await pending.locator('time').getAttribute('datetime'), iso(negativeAt + t.config.verifyConfirmAfterMs));
    const proofResult = item.locator('[data-check-result][data-method="proof"]');
    assert.equal(await proofResult.getAttribute('data-check-result'), 'absent');
    assert.match(await proofResult.innerText(), new RegExp(`Proof not found .*Looked for ${proofText.replace(/[.]/g, '\\.')} .*"bio".*GitHub's answer`));

    assert.equal((await partnerGitHubEntry()).verified, true);
    assert.deepEqual(await delivered('identity.unverified'), [], 'partners hear nothing yet');

    // Before the delay has passed the re-check job has nothing to confirm.
    t.clock.advance(t.config.verifyConfirmAfterMs / 2);
    assert.equal(await reverifyDue(t.ctx), 0);
    assert.equal((await partnerGitHubEntry()).verified, true);
  });

  test('the re-check after the delay still misses it: the mark goes and the partner hears identity.unverified with the reason', async () => {
    t.clock.advance(t.config.verifyConfirmAfterMs / 2);
    const askedBefore = githubApi.asked.length;
    assert.equal(await reverifyDue(t.ctx), 1);
    assert.deepEqual(
      githubApi.asked.slice(askedBefore).map((a) => a.path),
      [`/users/${LOGIN}`],
      'the re-check read GitHub again',
    );

    await page.goto(`${t.baseUrl}/account`);
    const item = identity();
    assert.match(await item.locator('.badge').first().innerText(), /Not verified/);
    assert.equal(await item.locator('[data-pending-removal]').count(), 0);
    assert.equal(await item.locator('p.evidence').count(), 0);
    assert.equal(await item.locator('[data-check-result][data-method="proof"]').getAttribute('data-check-result'), 'absent');

    const unverified = await delivered('identity.unverified');
    assert.equal(unverified.length, 1);
    const event = unverified[0]!;
    assert.deepEqual(
      { user_identifier: event.user_identifier, userId: event.userId, svcId: event.svcId, url: event.url, verified: event.verified },
      { user_identifier: MEMBER, userId: USER_ID, svcId: 'github', url: PROFILE_URL, verified: false },
    );
    assert.equal(event.verifiedBy, undefined, 'no evidence on a mark that is gone');
    const reason = event.reason as { method: string; detail: string; evidenceUrl: string; status: number };
    assert.equal(reason.method, 'proof');
    assert.equal(reason.evidenceUrl, `${githubApi.origin}/users/${LOGIN}`);
    assert.equal(reason.status, 200);
    assert.match(reason.detail, new RegExp(`Looked for ${proofText.replace(/[.]/g, '\\.')} .*"bio".*GitHub's answer`));

    const entry = await partnerGitHubEntry();
    assert.equal(entry.verified, false);
    assert.equal(entry.verifiedBy, undefined);

    await page.goto(`${t.baseUrl}/u/${USER_ID}`);
    const pub = page.locator('.public-identities li', { hasText: 'GitHub' });
    assert.match(await pub.innerText(), /Unverified/);
    assert.equal(await pub.locator('.evidence').count(), 0);
  });
});

// Which providers are offered and how their settings are checked at start-up, and the limits and
// form protections of the provider routes, on SQLite and PostgreSQL.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ConfigError, loadConfig } from '../../src/config.js';
import type { TestApp } from '../helpers/app.js';
import { startFakeGitHub, type FakeProvider } from '../helpers/oauth-servers.js';
import { SiteClient, startSiteApp } from '../site/helpers.js';
import { throughProvider } from './helpers.js';

describe('provider settings', () => {
  test('nothing configured: no provider', () => {
    assert.deepEqual(loadConfig({}).providers, []);
  });

  test('each provider with its credentials, in a fixed order, with its callback slug', () => {
    const c = loadConfig({
      GITHUB_CLIENT_ID: 'g',
      GITHUB_CLIENT_SECRET: 's',
      GOOGLE_CLIENT_ID: 'o',
      GOOGLE_CLIENT_SECRET: 's',
      GITLAB_CLIENT_ID: 'l',
      GITLAB_CLIENT_SECRET: 's',
      GITLAB_URL: 'https://gitlab.example.org/',
      OIDC_PROVIDERS: 'keycloak, authentik',
      OIDC_KEYCLOAK_ISSUER: 'https://sso.example.org/realms/main',
      OIDC_KEYCLOAK_CLIENT_ID: 'k',
      OIDC_KEYCLOAK_CLIENT_SECRET: 's',
      OIDC_KEYCLOAK_NAME: 'Company SSO',
      OIDC_AUTHENTIK_ISSUER: 'https://auth.example.org/application/o/idsvc/',
      OIDC_AUTHENTIK_CLIENT_ID: 'a',
      OIDC_AUTHENTIK_CLIENT_SECRET: 's',
      MASTODON_CONNECT: 'on',
    });
    assert.deepEqual(
      c.providers.map((p) => [p.key, p.slug, p.name, p.issuer, p.provesSvcId]),
      [
        ['github', 'github', 'GitHub', 'https://github.com', 'github'],
        // Another GitLab instance signs in, but its accounts are not gitlab.com's identities.
        ['gitlab', 'gitlab', 'GitLab', 'https://gitlab.example.org', null],
        ['google', 'google', 'Google', 'https://accounts.google.com', null],
        ['oidc:keycloak', 'keycloak', 'Company SSO', 'https://sso.example.org/realms/main', null],
        ['oidc:authentik', 'authentik', 'Authentik', 'https://auth.example.org/application/o/idsvc', null],
        // Mastodon's server is named by the person: its key and issuer are the server's (mastodon:<server>).
        ['mastodon', 'mastodon', 'Mastodon', '', 'mastodon'],
      ],
    );
    assert.equal(loadConfig({ GITLAB_CLIENT_ID: 'l', GITLAB_CLIENT_SECRET: 's' }).providers[0]?.provesSvcId, 'gitlab');
  });

  test('a half-set or unsafe provider stops start-up, naming the variable', () => {
    const refused = (env: Record<string, string>, variable: string) =>
      assert.throws(
        () => loadConfig(env),
        (e: unknown) => e instanceof ConfigError && e.variable === variable,
      );
    refused({ GITHUB_CLIENT_ID: 'g' }, 'GITHUB_CLIENT_SECRET');
    refused({ GOOGLE_CLIENT_SECRET: 's' }, 'GOOGLE_CLIENT_ID');
    refused({ OIDC_PROVIDERS: 'keycloak' }, 'OIDC_KEYCLOAK_CLIENT_ID');
    refused({ OIDC_PROVIDERS: 'keycloak', OIDC_KEYCLOAK_CLIENT_ID: 'k', OIDC_KEYCLOAK_CLIENT_SECRET: 's' }, 'OIDC_KEYCLOAK_ISSUER');
    refused({ OIDC_PROVIDERS: 'github' }, 'OIDC_PROVIDERS');
    refused({ OIDC_PROVIDERS: 'Key-Cloak' }, 'OIDC_PROVIDERS');
    refused({ MASTODON_CONNECT: 'yes please' }, 'MASTODON_CONNECT');
    refused({ OIDC_PROVIDERS: 'mastodon' }, 'OIDC_PROVIDERS');
    // Codes and secrets travel to the issuer: only over TLS in production.
    refused(
      { NODE_ENV: 'production', OIDC_PROVIDERS: 'kc', OIDC_KC_ISSUER: 'http://sso.example.org', OIDC_KC_CLIENT_ID: 'k', OIDC_KC_CLIENT_SECRET: 's' },
      'OIDC_KC_ISSUER',
    );
    refused({ NODE_ENV: 'production', GITLAB_CLIENT_ID: 'l', GITLAB_CLIENT_SECRET: 's', GITLAB_URL: 'http://gitlab.example.org' }, 'GITLAB_URL');
  });
});

describe('the provider routes', () => {
  let t: TestApp;
  let gh: FakeProvider;
  before(async () => {
    gh = await startFakeGitHub();
    t = await startSiteApp({
      GITHUB_CLIENT_ID: gh.clientId,
      GITHUB_CLIENT_SECRET: gh.clientSecret,
      IDSVC_TEST_PROOF_ORIGINS: `https://github.com=${gh.origin},https://api.github.com=${gh.origin}`,
    });
  });
  after(async () => {
    await t.close();
    await gh.close();
  });

  test('connecting needs a session; disconnecting needs the CSRF token', async () => {
    const anonymous = new SiteClient(t.baseUrl);
    const start = await anonymous.post('/auth/github/start', { _csrf: await anonymous.csrf('/login'), purpose: 'connect' });
    assert.equal(start.res.status, 303);
    assert.equal(start.res.headers.get('location'), '/login');

    const u = await t.user({ email: 'set_hana@example.org', userId: 'set_hana' });
    gh.signedIn = { id: 9001, login: 'hana', email: 'hana@example.org', emailVerified: true };
    const client = new SiteClient(t.baseUrl);
    assert.equal((await client.logIn('set_hana', u.password)).status, 303);
    assert.equal((await throughProvider(client, 'github', 'connect')).res.status, 303);
    const connection = await t.ctx.db.kysely.selectFrom('provider_connections').select('id').where('user_ref', '=', u.id).executeTakeFirstOrThrow();
    const forged = await client.post('/account/connections/remove', { connection_id: String(connection.id) });
    assert.equal(forged.res.status, 403);
    assert.equal((await t.ctx.db.kysely.selectFrom('provider_connections').select('id').where('user_ref', '=', u.id).execute()).length, 1);
  });

  test('a provider account connected to one account is not connected to another', async () => {
    const other = await t.user({ email: 'set_ivan@example.org', userId: 'set_ivan' });
    const client = new SiteClient(t.baseUrl);
    assert.equal((await client.logIn('set_ivan', other.password)).status, 303);
    const res = await throughProvider(client, 'github', 'connect');
    assert.equal(res.res.headers.get('location'), '/account/security?msg=provider_elsewhere#connections');
    assert.equal((await t.ctx.db.kysely.selectFrom('provider_connections').select('id').where('user_ref', '=', other.id).execute()).length, 0);
  });

  // Last: the limiter counts in real time, and this uses up the minute's allowance.
  test('starting is limited per client address', async () => {
    const client = new SiteClient(t.baseUrl, { 'x-test': 'limits' });
    const csrf = await client.csrf('/login');
    const statuses: number[] = [];
    for (let i = 0; i < 21; i++) statuses.push((await client.post('/auth/github/start', { _csrf: csrf, purpose: 'login' })).res.status);
    // The tests before used some of this address's 20 a minute (starts and callbacks alike).
    const first = statuses.indexOf(429);
    assert.ok(first > 0 && first <= 20, `refused from the ${first + 1}th start on`);
    assert.ok(statuses.slice(0, first).every((s) => s === 200));
    assert.ok(statuses.slice(first).every((s) => s === 429));
  });
});

// Talking to a provider, through openid-client: the authorization request (code flow with PKCE,
// `state`, and `nonce` where there is an ID token), then the code's exchange and who the account
// is. OpenID Connect providers (an operator's, GitLab, Google) are read from their discovery
// document; GitHub and Mastodon are plain OAuth 2 with their documented endpoints (a Mastodon server's
// app and requests: connections/mastodon.ts). Provider tokens are used for this one exchange and kept
// nowhere.
import * as client from 'openid-client';
import type { AppContext } from '../context.js';
import { testOriginOf } from '../verification/polite-fetch.js';
import { MASTODON_SCOPES, mastodonAccount, mastodonFetch } from './mastodon.js';
import { callbackUrl, type ProviderSettings } from './providers.js';

/** Who the provider says the person is. */
export interface ProviderAccount {
  /** The provider's stable id of the account (`sub`, GitHub's numeric id). */
  subject: string;
  /** The account's name there (a login, a handle), when it has one. */
  username: string | null;
  email: string | null;
  /** The provider says it checked that the person holds `email`. */
  emailVerified: boolean;
}

/** Answers from a provider are small; a larger one is refused rather than read. */
const MAX_ANSWER_BYTES = 256 * 1024;
/** Seconds openid-client waits for a provider's answer. */
const TIMEOUT_SECONDS = 10;

const SCOPES: Record<ProviderSettings['kind'], string> = {
  oidc: 'openid email',
  google: 'openid email',
  // GitLab names the account (`nickname`) under `profile`; its identity is what a connection proves.
  gitlab: 'openid profile email',
  // The public profile needs no scope; `user:email` lists the addresses GitHub has verified.
  github: 'user:email',
  mastodon: MASTODON_SCOPES,
};

export class ProviderError extends Error {}

/**
 * fetch for provider requests: the documented address, or in tests and development the local
 * server IDSVC_TEST_PROOF_ORIGINS stands in for it; never longer than the timeout.
 */
export function providerFetch(ctx: AppContext): client.CustomFetch {
  return (url, options) =>
    fetch(testOriginOf(ctx, url), {
      ...(options as RequestInit),
      redirect: 'manual',
      signal: AbortSignal.timeout(TIMEOUT_SECONDS * 1000),
    });
}

const configurations = new WeakMap<AppContext, Map<string, Promise<client.Configuration>>>();

function discover(ctx: AppContext, p: ProviderSettings): Promise<client.Configuration> {
  const options: client.DiscoveryRequestOptions = {
    [client.customFetch]: providerFetch(ctx),
    timeout: TIMEOUT_SECONDS,
    // Only a development or test set-up may name an http issuer (connections/providers.ts).
    ...(p.issuer.startsWith('http:') ? { execute: [client.allowInsecureRequests] } : {}),
  };
  if (p.kind === 'mastodon') {
    const config = new client.Configuration(
      { issuer: p.issuer, authorization_endpoint: `${p.issuer}/oauth/authorize`, token_endpoint: `${p.issuer}/oauth/token` },
      p.clientId,
      p.clientSecret,
    );
    config[client.customFetch] = mastodonFetch(ctx);
    return Promise.resolve(config);
  }
  if (p.kind === 'github') {
    const config = new client.Configuration(
      {
        issuer: p.issuer,
        authorization_endpoint: 'https://github.com/login/oauth/authorize',
        token_endpoint: 'https://github.com/login/oauth/access_token',
      },
      p.clientId,
      p.clientSecret,
    );
    config[client.customFetch] = providerFetch(ctx);
    return Promise.resolve(config);
  }
  return client.discovery(new URL(p.issuer), p.clientId, p.clientSecret, undefined, options);
}

async function configurationOf(ctx: AppContext, p: ProviderSettings): Promise<client.Configuration> {
  let byKey = configurations.get(ctx);
  if (!byKey) {
    byKey = new Map();
    configurations.set(ctx, byKey);
  }
  // A Mastodon server's configuration is made from its app each time: people name servers without end.
  if (p.kind === 'mastodon') return discover(ctx, p);
  let config = byKey.get(p.key);
  if (!config) {
    config = discover(ctx, p);
    // A provider that could not be reached is asked again next time.
    config.catch(() => byKey.delete(p.key));
    byKey.set(p.key, config);
  }
  return config;
}

export interface AuthorizationRequest {
  url: string;
  state: string;
  codeVerifier: string;
  nonce: string | null;
}

export async function authorizationRequest(ctx: AppContext, p: ProviderSettings): Promise<AuthorizationRequest> {
  const config = await configurationOf(ctx, p);
  const codeVerifier = client.randomPKCECodeVerifier();
  const state = client.randomState();
  const nonce = SCOPES[p.kind].startsWith('openid') ? client.randomNonce() : null;
  const url = client.buildAuthorizationUrl(config, {
    redirect_uri: callbackUrl(ctx.config.baseUrl, p),
    scope: SCOPES[p.kind],
    response_type: 'code',
    code_challenge: await client.calculatePKCECodeChallenge(codeVerifier),
    code_challenge_method: 'S256',
    state,
    ...(nonce ? { nonce } : {}),
  });
  return { url: testOriginOf(ctx, url.href), state, codeVerifier, nonce };
}

async function readJson(res: Response, what: string): Promise<unknown> {
  if (!res.ok) throw new ProviderError(`${what} answered HTTP ${res.status}`);
  const text = await res.text();
  if (text.length > MAX_ANSWER_BYTES) throw new ProviderError(`${what} answered more than ${MAX_ANSWER_BYTES} bytes`);
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new ProviderError(`${what} did not answer JSON`);
  }
}

const str = (v: unknown): string | null => (typeof v === 'string' && v.length > 0 && v.length <= 320 ? v : null);

async function githubAccount(ctx: AppContext, accessToken: string): Promise<ProviderAccount> {
  const get = (path: string) =>
    providerFetch(ctx)(`https://api.github.com${path}`, {
      method: 'GET',
      headers: { authorization: `Bearer ${accessToken}`, accept: 'application/vnd.github+json', 'user-agent': 'idsvc' },
      body: undefined,
    } as unknown as client.CustomFetchOptions);
  const user = (await readJson(await get('/user'), 'GitHub /user')) as Record<string, unknown>;
  const id = typeof user.id === 'number' && Number.isSafeInteger(user.id) ? String(user.id) : null;
  const login = str(user.login);
  if (!id || !login) throw new ProviderError('GitHub /user named no account');
  const emails = await readJson(await get('/user/emails'), 'GitHub /user/emails');
  const primary = Array.isArray(emails)
    ? (emails as Record<string, unknown>[]).find((e) => e !== null && typeof e === 'object' && e.primary === true && e.verified === true)
    : undefined;
  const email = primary ? str(primary.email) : null;
  return { subject: id, username: login, email, emailVerified: email !== null };
}

function oidcAccount(p: ProviderSettings, claims: Record<string, unknown>): ProviderAccount {
  const subject = str(claims.sub);
  if (!subject) throw new ProviderError('the provider named no account');
  const email = str(claims.email);
  const username = p.kind === 'gitlab' ? (str(claims.nickname) ?? str(claims.preferred_username)) : str(claims.preferred_username);
  return { subject, username, email, emailVerified: email !== null && claims.email_verified === true };
}

/**
 * The callback: checks `state` (and the ID token's `nonce`), exchanges the code with its PKCE
 * verifier, and reads who the account is. Throws ProviderError, or openid-client's errors, when the
 * provider refused or anything does not match; the message names no secret.
 */
export async function accountFromCallback(
  ctx: AppContext,
  p: ProviderSettings,
  query: string,
  expected: { state: string; codeVerifier: string; nonce: string | null },
): Promise<ProviderAccount> {
  const config = await configurationOf(ctx, p);
  const currentUrl = new URL(`${callbackUrl(ctx.config.baseUrl, p)}?${query}`);
  const tokens = await client.authorizationCodeGrant(config, currentUrl, {
    pkceCodeVerifier: expected.codeVerifier,
    expectedState: expected.state,
    ...(expected.nonce ? { expectedNonce: expected.nonce, idTokenExpected: true } : {}),
  });
  if (p.kind === 'github') return githubAccount(ctx, tokens.access_token);
  if (p.kind === 'mastodon') return mastodonAccount(ctx, p, tokens.access_token);
  const idClaims = tokens.claims() as Record<string, unknown> | undefined;
  if (!idClaims) throw new ProviderError('the provider sent no ID token');
  let claims: Record<string, unknown> = { ...idClaims };
  // Some providers put the address and name in the UserInfo answer only.
  if ((claims.email === undefined || (p.kind === 'gitlab' && claims.nickname === undefined)) && config.serverMetadata().userinfo_endpoint) {
    const info = await client.fetchUserInfo(config, tokens.access_token, String(idClaims.sub));
    claims = { ...info, ...claims, ...(claims.email === undefined ? { email: info.email, email_verified: info.email_verified } : {}) };
  }
  return oidcAccount(p, claims);
}

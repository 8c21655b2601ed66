// Local servers answering in sign-in providers' documented shapes, for the connection tests:
// GitHub's OAuth app endpoints (github.com/login/oauth/authorize and access_token, api.github.com's
// /user, /user/emails and /user/{id}) and an OpenID Connect provider as GitLab and Google document
// theirs (discovery, authorize, token with a signed ID token, UserInfo, JWKS, and GitLab's
// /api/v4/users/{id}), and a Mastodon server (POST /api/v1/apps, /oauth/authorize, /oauth/token,
// /api/v1/accounts/verify_credentials and /api/v1/accounts/{id}). Each checks what a real one checks: the client's credentials, the
// redirect_uri, and the PKCE verifier against the challenge.
import { createHash, randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { exportJWK, generateKeyPair, SignJWT } from 'jose';
import { startServer, type LocalServer } from '../verification/servers.js';

export interface ProviderUser {
  id: number;
  login: string;
  email: string;
  emailVerified: boolean;
}

interface Grant {
  user: ProviderUser;
  challenge: string;
  redirectUri: string;
  nonce: string | null;
}

export interface FakeProvider extends LocalServer {
  /** Who signs in at the authorize endpoint next (the person at the provider). */
  signedIn: ProviderUser | null;
  /** Accounts by id, as /user/{id} and /api/v4/users/{id} read them; delete one to make it gone. */
  accounts: Map<number, ProviderUser>;
  clientId: string;
  clientSecret: string;
  /** Token requests refused (bad credentials, code or verifier). */
  refused: number;
  /** Every code and token handed out: secrets no log may hold. */
  issued: string[];
}

const s256 = (v: string) => createHash('sha256').update(v).digest('base64url');

async function body(req: IncomingMessage): Promise<URLSearchParams> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
}

function json(res: ServerResponse, status: number, value: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(value));
}

/** The client's credentials from HTTP Basic or the form, as both kinds of provider accept them. */
function clientOf(req: IncomingMessage, form: URLSearchParams): { id: string; secret: string } {
  const auth = req.headers.authorization ?? '';
  if (auth.startsWith('Basic ')) {
    const [id = '', secret = ''] = Buffer.from(auth.slice(6), 'base64').toString('utf8').split(':');
    return { id: decodeURIComponent(id), secret: decodeURIComponent(secret) };
  }
  return { id: form.get('client_id') ?? '', secret: form.get('client_secret') ?? '' };
}

function authorize(p: FakeProvider, grants: Map<string, Grant>, url: URL, res: ServerResponse): void {
  const q = url.searchParams;
  const redirectUri = q.get('redirect_uri') ?? '';
  if (q.get('client_id') !== p.clientId || q.get('code_challenge_method') !== 'S256' || !q.get('code_challenge') || !p.signedIn) {
    res.writeHead(400).end('bad authorization request');
    return;
  }
  const code = randomBytes(16).toString('hex');
  p.issued.push(code);
  grants.set(code, { user: p.signedIn, challenge: q.get('code_challenge') ?? '', redirectUri, nonce: q.get('nonce') });
  const back = new URL(redirectUri);
  back.searchParams.set('code', code);
  back.searchParams.set('state', q.get('state') ?? '');
  res.writeHead(302, { location: back.href }).end();
}

async function redeem(p: FakeProvider, grants: Map<string, Grant>, req: IncomingMessage): Promise<Grant | null> {
  const form = await body(req);
  const client = clientOf(req, form);
  const code = form.get('code') ?? '';
  const grant = grants.get(code);
  grants.delete(code);
  if (
    !grant ||
    client.id !== p.clientId ||
    client.secret !== p.clientSecret ||
    form.get('redirect_uri') !== grant.redirectUri ||
    s256(form.get('code_verifier') ?? '') !== grant.challenge
  ) {
    p.refused += 1;
    return null;
  }
  return grant;
}

function base(clientId: string, clientSecret: string) {
  return { signedIn: null, accounts: new Map<number, ProviderUser>(), clientId, clientSecret, refused: 0, issued: [] as string[] };
}

/** github.com and api.github.com in one server (IDSVC_TEST_PROOF_ORIGINS maps both origins to it). */
export async function startFakeGitHub(): Promise<FakeProvider> {
  const grants = new Map<string, Grant>();
  const tokens = new Map<string, ProviderUser>();
  const state = base('gh-client', 'gh-secret');
  const server = await startServer(async (req, res) => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    if (url.pathname === '/login/oauth/authorize') return authorize(p, grants, url, res);
    if (url.pathname === '/login/oauth/access_token' && req.method === 'POST') {
      const grant = await redeem(p, grants, req);
      if (!grant) return json(res, 200, { error: 'bad_verification_code', error_description: 'The code passed is incorrect or expired.' });
      const token = `gho_${randomBytes(12).toString('hex')}`;
      tokens.set(token, grant.user);
      p.issued.push(token);
      return json(res, 200, { access_token: token, token_type: 'bearer', scope: 'user:email' });
    }
    const bearer = (req.headers.authorization ?? '').replace(/^Bearer /, '');
    if (url.pathname === '/user') {
      const u = tokens.get(bearer);
      return u ? json(res, 200, { id: u.id, login: u.login, type: 'User' }) : json(res, 401, { message: 'Requires authentication' });
    }
    if (url.pathname === '/user/emails') {
      const u = tokens.get(bearer);
      if (!u) return json(res, 401, { message: 'Requires authentication' });
      return json(res, 200, [{ email: u.email, primary: true, verified: u.emailVerified, visibility: 'private' }]);
    }
    const byId = /^\/user\/(\d+)$/.exec(url.pathname);
    if (byId) {
      const u = p.accounts.get(Number(byId[1]));
      return u ? json(res, 200, { id: u.id, login: u.login, type: 'User' }) : json(res, 404, { message: 'Not Found' });
    }
    res.writeHead(404).end('not found');
  });
  const p: FakeProvider = Object.assign(server, state);
  return p;
}

/**
 * An OpenID Connect provider standing in for `issuer` (https://gitlab.com, https://accounts.google.com):
 * every address it publishes is on that origin, which IDSVC_TEST_PROOF_ORIGINS maps to this server.
 */
export async function startFakeOidc(issuer: string, shape: 'gitlab' | 'google'): Promise<FakeProvider> {
  const grants = new Map<string, Grant>();
  const tokens = new Map<string, ProviderUser>();
  const { publicKey, privateKey } = await generateKeyPair('RS256');
  const jwk = { ...(await exportJWK(publicKey)), kid: 'k1', alg: 'RS256', use: 'sig' };
  const paths =
    shape === 'gitlab'
      ? { authorize: '/oauth/authorize', token: '/oauth/token', userinfo: '/oauth/userinfo', jwks: '/oauth/discovery/keys' }
      : { authorize: '/o/oauth2/v2/auth', token: '/token', userinfo: '/v1/userinfo', jwks: '/oauth2/v3/certs' };
  const state = base(`${shape}-client`, `${shape}-secret`);
  const claimsOf = (u: ProviderUser) => ({
    sub: String(u.id),
    email: u.email,
    email_verified: u.emailVerified,
    ...(shape === 'gitlab' ? { nickname: u.login, preferred_username: u.login } : {}),
  });
  const server = await startServer(async (req, res) => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    if (url.pathname === '/.well-known/openid-configuration') {
      return json(res, 200, {
        issuer,
        authorization_endpoint: `${issuer}${paths.authorize}`,
        token_endpoint: `${issuer}${paths.token}`,
        userinfo_endpoint: `${issuer}${paths.userinfo}`,
        jwks_uri: `${issuer}${paths.jwks}`,
        response_types_supported: ['code'],
        subject_types_supported: ['public'],
        id_token_signing_alg_values_supported: ['RS256'],
        code_challenge_methods_supported: ['S256'],
        token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post'],
      });
    }
    if (url.pathname === paths.authorize) return authorize(p, grants, url, res);
    if (url.pathname === paths.jwks) return json(res, 200, { keys: [jwk] });
    if (url.pathname === paths.token && req.method === 'POST') {
      const grant = await redeem(p, grants, req);
      if (!grant) return json(res, 400, { error: 'invalid_grant' });
      const token = randomBytes(16).toString('hex');
      tokens.set(token, grant.user);
      p.issued.push(token);
      const now = Math.floor(Date.now() / 1000);
      const idToken = await new SignJWT({ ...claimsOf(grant.user), ...(grant.nonce ? { nonce: grant.nonce } : {}) })
        .setProtectedHeader({ alg: 'RS256', kid: 'k1' })
        .setIssuer(issuer)
        .setAudience(p.clientId)
        .setIssuedAt(now)
        .setExpirationTime(now + 300)
        .sign(privateKey);
      return json(res, 200, { access_token: token, token_type: 'Bearer', expires_in: 300, id_token: idToken, scope: 'openid email' });
    }
    if (url.pathname === paths.userinfo) {
      const u = tokens.get((req.headers.authorization ?? '').replace(/^Bearer /, ''));
      return u ? json(res, 200, claimsOf(u)) : json(res, 401, { error: 'invalid_token' });
    }
    const byId = /^\/api\/v4\/users\/(\d+)$/.exec(url.pathname);
    if (byId && shape === 'gitlab') {
      const u = p.accounts.get(Number(byId[1]));
      return u ? json(res, 200, { id: u.id, username: u.login, state: 'active' }) : json(res, 404, { message: '404 User Not Found' });
    }
    res.writeHead(404).end('not found');
  });
  const p: FakeProvider = Object.assign(server, state);
  return p;
}

export interface FakeMastodon extends LocalServer {
  /** Who signs in at the authorize endpoint next; `login` is the username, `id` the account id. */
  signedIn: ProviderUser | null;
  /** Accounts by id, as /api/v1/accounts/{id} reads them; delete one to make it gone. */
  accounts: Map<number, ProviderUser>;
  /** Apps registered through POST /api/v1/apps, by client id. */
  apps: Map<string, { secret: string; redirectUris: string[]; scopes: string[] }>;
  /** Accounts the server suspended: their public record says `suspended: true`. */
  suspended: Set<number>;
  /** Answer POST /api/v1/apps with this status instead (a server that is not Mastodon, or is down). */
  appsStatus: number | null;
  refused: number;
  issued: string[];
}

/** A Mastodon server as its API documentation describes the endpoints an OAuth app uses. */
export async function startFakeMastodon(): Promise<FakeMastodon> {
  const grants = new Map<string, Grant & { clientId: string }>();
  const tokens = new Map<string, ProviderUser>();
  const account = (u: ProviderUser) => ({
    id: String(u.id),
    username: u.login,
    acct: u.login,
    display_name: u.login,
    url: `https://social.example/@${u.login}`,
    ...(m.suspended.has(u.id) ? { suspended: true } : {}),
  });
  const server = await startServer(async (req, res) => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    if (url.pathname === '/api/v1/apps' && req.method === 'POST') {
      if (m.appsStatus !== null) return json(res, m.appsStatus, { error: 'not here' });
      const form = await body(req);
      const redirectUris = (form.get('redirect_uris') ?? '').split(/\s+/).filter(Boolean);
      if (!form.get('client_name') || redirectUris.length === 0) return json(res, 422, { error: 'Validation failed' });
      const id = randomBytes(8).toString('hex');
      const secret = randomBytes(16).toString('hex');
      m.apps.set(id, { secret, redirectUris, scopes: (form.get('scopes') ?? 'read').split(/\s+/) });
      m.issued.push(secret);
      return json(res, 200, { id: '1', name: form.get('client_name'), client_id: id, client_secret: secret, redirect_uri: redirectUris.join('\n') });
    }
    if (url.pathname === '/oauth/authorize') {
      const q = url.searchParams;
      const app = m.apps.get(q.get('client_id') ?? '');
      const scopes = (q.get('scope') ?? '').split(/\s+/);
      const redirectUri = q.get('redirect_uri') ?? '';
      if (
        !app?.redirectUris.includes(redirectUri) ||
        !scopes.every((x) => app.scopes.includes(x)) ||
        q.get('code_challenge_method') !== 'S256' ||
        !m.signedIn
      ) {
        res.writeHead(400).end('bad authorization request');
        return;
      }
      const code = randomBytes(16).toString('hex');
      m.issued.push(code);
      grants.set(code, { user: m.signedIn, challenge: q.get('code_challenge') ?? '', redirectUri, nonce: null, clientId: q.get('client_id') ?? '' });
      const back = new URL(redirectUri);
      back.searchParams.set('code', code);
      back.searchParams.set('state', q.get('state') ?? '');
      res.writeHead(302, { location: back.href }).end();
      return;
    }
    if (url.pathname === '/oauth/token' && req.method === 'POST') {
      const form = await body(req);
      const client = clientOf(req, form);
      const code = form.get('code') ?? '';
      const grant = grants.get(code);
      grants.delete(code);
      const app = m.apps.get(client.id);
      if (
        !grant ||
        !app ||
        app.secret !== client.secret ||
        grant.clientId !== client.id ||
        form.get('grant_type') !== 'authorization_code' ||
        form.get('redirect_uri') !== grant.redirectUri ||
        s256(form.get('code_verifier') ?? '') !== grant.challenge
      ) {
        m.refused += 1;
        return json(res, 400, { error: 'invalid_grant', error_description: 'The provided authorization grant is invalid.' });
      }
      const token = randomBytes(20).toString('base64url');
      tokens.set(token, grant.user);
      m.issued.push(token);
      return json(res, 200, { access_token: token, token_type: 'Bearer', scope: 'read:accounts', created_at: Math.floor(Date.now() / 1000) });
    }
    if (url.pathname === '/api/v1/accounts/verify_credentials') {
      const u = tokens.get((req.headers.authorization ?? '').replace(/^Bearer /, ''));
      return u ? json(res, 200, account(u)) : json(res, 401, { error: 'The access token is invalid' });
    }
    const byId = /^\/api\/v1\/accounts\/(\d+)$/.exec(url.pathname);
    if (byId) {
      const u = m.accounts.get(Number(byId[1]));
      return u ? json(res, 200, account(u)) : json(res, 404, { error: 'Record not found' });
    }
    res.writeHead(404).end('not found');
  });
  const m: FakeMastodon = Object.assign(server, {
    signedIn: null,
    accounts: new Map<number, ProviderUser>(),
    suspended: new Set<number>(),
    apps: new Map<string, { secret: string; redirectUris: string[]; scopes: string[] }>(),
    appsStatus: null,
    refused: 0,
    issued: [] as string[],
  });
  return m;
}

// Mastodon on any server (docs/site.md "Sign-in providers"). The person names their server; idsvc
// registers an app there on first use (POST /api/v1/apps), keeps its client id and secret for that
// server's next person, and then signs in as with any OAuth 2 provider: the authorization code with
// PKCE and `state`, the token exchange, and GET /api/v1/accounts/verify_credentials for who the
// account is. The server is named by a person, not an operator, so every request to it goes through
// the outbound address policy (verification/safe-fetch.ts), as a crawled page does.
import net from 'node:net';
import type * as client from 'openid-client';
import type { AppContext } from '../context.js';
import { findMastodonApp, keepMastodonApp } from '../repositories/mastodon-apps.js';
import { testOriginOf, verificationUserAgent } from '../verification/polite-fetch.js';
import { safeFetch } from '../verification/safe-fetch.js';
import { callbackUrl, mastodonAt, type ProviderSettings } from './providers.js';

/** What idsvc asks of a Mastodon account: to read who it is, nothing more. */
export const MASTODON_SCOPES = 'read:accounts';

const MAX_ANSWER_BYTES = 64 * 1024;
const TIMEOUT_MS = 10_000;

export class MastodonServerError extends Error {}

/**
 * The server a person typed: `mastodon.social`, `https://mastodon.social/`, a profile's address
 * `https://mastodon.social/@anna`, `@anna@mastodon.social` or `anna@mastodon.social` all name
 * mastodon.social. Null unless it is a DNS name with a dot (no
 * address, port, path or credentials).
 */
export function parseMastodonServer(input: string): string | null {
  let s = input.trim();
  if (s.length === 0 || s.length > 300) return null;
  if (/^https?:\/\//i.test(s)) {
    let u: URL;
    try {
      u = new URL(s);
    } catch {
      return null;
    }
    // The server's address, or a profile's on it (https://mastodon.social/@anna), as people paste them.
    if (u.username || u.password || u.port || u.search || u.hash || !/^\/(?:@[A-Za-z0-9_]{1,30}\/?)?$/.test(u.pathname)) return null;
    s = u.hostname;
  } else {
    // A handle names its server after the last @; a bare name may end in a slash.
    s = s.slice(s.lastIndexOf('@') + 1).replace(/\/$/, '');
  }
  if (!/^[^\s/\\?#:@]+$/.test(s)) return null;
  let host: string;
  try {
    host = new URL(`https://${s}`).hostname;
  } catch {
    return null;
  }
  host = host.replace(/\.$/, '');
  if (host.length > 253 || !host.includes('.') || net.isIP(host) !== 0 || host.startsWith('[')) return null;
  const labels = host.split('.');
  if (!labels.every((l) => /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/.test(l))) return null;
  // A top-level label is never all digits: 10.0.0.300 is no name.
  if (/^\d+$/.test(labels[labels.length - 1]!)) return null;
  return host;
}

/** One request to a Mastodon server: under the address policy, in tests to the local stand-in. */
async function request(ctx: AppContext, url: string, init: { method: 'GET' | 'POST'; headers?: Record<string, string>; body?: string }) {
  return safeFetch(testOriginOf(ctx, url), {
    allowPrivate: ctx.config.fetchAllowPrivate,
    method: init.method,
    maxBytes: MAX_ANSWER_BYTES,
    timeoutMs: TIMEOUT_MS,
    maxRedirects: 0,
    userAgent: verificationUserAgent(ctx),
    ...(init.headers ? { headers: init.headers } : {}),
    ...(init.body !== undefined ? { body: init.body } : {}),
  });
}

function bodyText(body: client.CustomFetchOptions['body']): string | undefined {
  if (body === undefined || body === null) return undefined;
  if (typeof body === 'string') return body;
  if (body instanceof URLSearchParams) return body.toString();
  if (body instanceof Uint8Array) return Buffer.from(body).toString('utf8');
  if (body instanceof ArrayBuffer) return Buffer.from(body).toString('utf8');
  throw new MastodonServerError('a streamed request body is not sent to a Mastodon server');
}

/** fetch for openid-client's requests to a Mastodon server (the token exchange). */
export function mastodonFetch(ctx: AppContext): client.CustomFetch {
  return async (url, options) => {
    const body = bodyText(options.body);
    const res = await request(ctx, url, {
      method: options.method === 'POST' ? 'POST' : 'GET',
      headers: options.headers,
      ...(body !== undefined ? { body } : {}),
    });
    if (!res.ok || res.truncated) throw new MastodonServerError(`the Mastodon server could not be read (${res.ok ? 'answer too large' : res.reason})`);
    return new Response(res.status === 204 || res.status === 304 ? null : res.body, { status: res.status, headers: res.headers });
  };
}

function jsonOf(res: Awaited<ReturnType<typeof request>>, what: string): Record<string, unknown> {
  if (!res.ok) throw new MastodonServerError(`${what}: ${res.reason}`);
  if (res.status < 200 || res.status > 299) throw new MastodonServerError(`${what} answered HTTP ${res.status}`);
  if (res.truncated) throw new MastodonServerError(`${what} answered more than ${MAX_ANSWER_BYTES} bytes`);
  let doc: unknown;
  try {
    doc = JSON.parse(res.body) as unknown;
  } catch {
    throw new MastodonServerError(`${what} did not answer JSON`);
  }
  if (doc === null || typeof doc !== 'object' || Array.isArray(doc)) throw new MastodonServerError(`${what} did not answer an object`);
  return doc as Record<string, unknown>;
}

const str = (v: unknown, max = 500): string | null => (typeof v === 'string' && v.length > 0 && v.length <= max ? v : null);

/**
 * Mastodon on `server`, with idsvc's app there: the one kept, or one registered now (only when a
 * flow starts: the callback finishes a flow with the app it started with, or not at all).
 */
export async function mastodonProvider(ctx: AppContext, server: string, { register = true }: { register?: boolean } = {}): Promise<ProviderSettings> {
  const redirectUri = callbackUrl(ctx.config.baseUrl, { slug: 'mastodon' });
  const kept = await findMastodonApp(ctx.db, server, redirectUri);
  if (kept) return mastodonAt(server, kept);
  if (!register) throw new MastodonServerError('no app is kept for this server');
  const form = new URLSearchParams({ client_name: ctx.config.siteName, redirect_uris: redirectUri, scopes: MASTODON_SCOPES, website: ctx.config.baseUrl });
  const res = await request(ctx, `https://${server}/api/v1/apps`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
    body: form.toString(),
  });
  const doc = jsonOf(res, 'registering the app');
  const clientId = str(doc.client_id);
  const clientSecret = str(doc.client_secret);
  if (!clientId || !clientSecret) throw new MastodonServerError('registering the app gave no client id and secret');
  await ctx.db.write((w) => keepMastodonApp(w, server, redirectUri, { clientId, clientSecret }, ctx.clock.now()));
  // Of two registrations at once the first kept wins; read it back so this flow uses that one.
  const app = await findMastodonApp(ctx.db, server, redirectUri);
  if (!app) throw new MastodonServerError('the registered app was not kept');
  return mastodonAt(server, app);
}

/** The account the access token belongs to: its id on the server, and `username@server`. */
export async function mastodonAccount(ctx: AppContext, p: ProviderSettings, accessToken: string) {
  const res = await request(ctx, `${p.issuer}/api/v1/accounts/verify_credentials`, {
    method: 'GET',
    headers: { authorization: `Bearer ${accessToken}`, accept: 'application/json' },
  });
  const doc = jsonOf(res, 'verify_credentials');
  const id = str(doc.id, 100);
  const handle = mastodonHandle(doc.username, new URL(p.issuer).hostname);
  if (!id || !handle) throw new MastodonServerError('verify_credentials named no account');
  return { subject: id, username: handle, email: null, emailVerified: false };
}

/** An account's `username` field as its handle `username@server`, as the catalogue's mastodon identity names it; null when it is no username. */
export function mastodonHandle(username: unknown, server: string): string | null {
  const name = str(username, 100);
  return name && /^[A-Za-z0-9_]+$/.test(name) ? `${name}@${server}` : null;
}

// The typed client of the idsvc partner API (`import { IdsvcClient } from '@idsvc/client'`).
// One method per operation; answers parsed into typed objects; errors thrown as IdsvcError with the
// API's error code. Runs on the partner's server: it holds the api_token.
// Only platform APIs (fetch, Web Crypto, TextEncoder, atob/btoa): the same file runs in Node 20+,
// Deno, Bun and browsers, and installs with no dependencies. Web Crypto is asynchronous, so every
// function that hashes or signs returns a Promise.

/** The API's error codes, as the server lists them (src/domain/errors.ts; test/client/error-codes.test.ts keeps them equal). */
export const ERROR_CODES = [
  'invalid_request',
  'credentials_in_query',
  'invalid_api_key',
  'invalid_api_token',
  'invalid_credentials',
  'forbidden',
  'not_found',
  'payload_too_large',
  'rate_limited',
  'internal_error',
  'unavailable',
] as const;

export type ErrorCode = (typeof ERROR_CODES)[number];

/** A code this client knows; a newer server's unknown code is reported as `internal_error`, its message kept. */
function errorCodeOf(code: unknown): ErrorCode {
  return ERROR_CODES.find((known) => known === code) ?? 'internal_error';
}

export class IdsvcError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly status: number,
    readonly requestId: string | null,
    /** Seconds to wait before retrying (rate_limited, unavailable). */
    readonly retryAfter: number | null,
  ) {
    super(message);
    this.name = 'IdsvcError';
  }
}

export interface CatalogueService {
  svcId: string;
  svcName: string;
  svcURL: string;
  svcLeftURL: string;
  svcRightURL: string;
  svcMobileURL: string;
  svcIphoneURL: string;
  svcFavicon: string;
  svcIcon: string;
  svcIphoneIcon: string;
}

/** How a mark was earned. */
export type VerificationMethod = 'rel-me' | 'proof' | 'dns' | 'atproto' | 'oauth' | 'operator';

/** The evidence behind a verified entry (docs/verification.md). */
export interface VerificationEvidence {
  verifiedBy: VerificationMethod;
  /** ISO 8601: when the mark was first earned. */
  verifiedAt: string;
  /** ISO 8601: the last check that kept it. */
  lastCheckedAt?: string;
  /** What was read: a URL, or `dns:TXT:<name>`; absent for the operator's mark. */
  evidenceUrl?: string;
}

export interface UserService {
  svcId: string;
  svcName: string;
  /** Present only for trusted partners, pro users, or the partner's own pushes. */
  usrSvcId?: string;
  url: string;
  verified: boolean;
  svcFavicon: string;
  /** On a verified entry: how and when it was proven. */
  evidence?: VerificationEvidence;
}

export interface Profile {
  userId: string;
  url: string;
  nickname?: string;
  firstName?: string;
  lastName?: string;
  street?: string;
  city?: string;
  region?: string;
  country?: string;
  bio?: string;
}

export interface ReverseLookupUser {
  userId: string;
  url: string;
  verified: boolean;
}

export interface Contact {
  identifier: string;
  userId: string;
  services: UserService[];
}

export type ProfileType = 'public' | 'private';
export type Order = 'popularity' | 'alphanumeric' | 'combined';

export interface ClientOptions {
  /** The service's address, e.g. https://id.example.org */
  baseUrl: string;
  apiKey: string;
  /** Needed for private views and every write; keep it on your server. */
  apiToken?: string;
  fetch?: typeof fetch;
}

type Json = Record<string, unknown>;

function seg(s: string): string {
  return encodeURIComponent(s);
}

function toUserService(raw: Json): UserService {
  const s: UserService = {
    svcId: String(raw.svcId),
    svcName: String(raw.svcName),
    url: String(raw.url ?? ''),
    // A boolean in JSON answers; servers before that change sent the strings "TRUE"/"FALSE".
    verified: raw.verified === true || raw.verified === 'TRUE',
    svcFavicon: String(raw.svcFavicon ?? ''),
  };
  if (typeof raw.usrSvcId === 'string') s.usrSvcId = raw.usrSvcId;
  if (typeof raw.verifiedBy === 'string' && typeof raw.verifiedAt === 'string') {
    s.evidence = {
      verifiedBy: raw.verifiedBy as VerificationMethod,
      verifiedAt: raw.verifiedAt,
      ...(typeof raw.lastCheckedAt === 'string' ? { lastCheckedAt: raw.lastCheckedAt } : {}),
      ...(typeof raw.evidenceUrl === 'string' ? { evidenceUrl: raw.evidenceUrl } : {}),
    };
  }
  return s;
}

export class IdsvcClient {
  private readonly base: string;
  private readonly fetchImpl: typeof fetch;

  constructor(private readonly options: ClientOptions) {
    this.base = withoutTrailingSlashes(options.baseUrl);
    this.fetchImpl = options.fetch ?? fetch;
  }

  private async call(path: string, body: Record<string, string | undefined> = {}, query: Record<string, string> = {}): Promise<Json> {
    const form = new URLSearchParams();
    if (this.options.apiToken) form.set('api_token', this.options.apiToken);
    for (const [k, v] of Object.entries(body)) if (v !== undefined) form.set(k, v);
    const qs = new URLSearchParams(query).toString();
    const res = await this.fetchImpl(`${this.base}/api/${path}${qs ? `?${qs}` : ''}`, {
      method: 'POST',
      headers: { accept: 'application/json', 'content-type': 'application/x-www-form-urlencoded' },
      body: form.toString(),
    });
    const text = await res.text();
    let json: Json;
    try {
      json = JSON.parse(text) as Json;
    } catch {
      throw new IdsvcError('internal_error', `unexpected answer (HTTP ${res.status})`, res.status, res.headers.get('x-request-id'), null);
    }
    if (!res.ok || 'error' in json) {
      const err = (json.error ?? {}) as Json;
      const retry = res.headers.get('retry-after');
      throw new IdsvcError(
        errorCodeOf(err.code),
        String(err.message ?? `HTTP ${res.status}`),
        res.status,
        res.headers.get('x-request-id'),
        retry ? Number(retry) : null,
      );
    }
    return json;
  }

  private get key(): string {
    return seg(this.options.apiKey);
  }

  /** service_details: all services, one, or ordered and limited. */
  async serviceDetails(opts: { svcId?: string; order?: Order; limit?: number } = {}): Promise<CatalogueService[]> {
    let path = `service_details/${this.key}`;
    if (opts.svcId !== undefined) path += `/${seg(opts.svcId)}`;
    else if (opts.order !== undefined) path += `/${opts.order}${opts.limit !== undefined ? `/${opts.limit}` : ''}`;
    else if (opts.limit !== undefined) path += `/alphanumeric/${opts.limit}`;
    const json = await this.call(path);
    return (json.services as CatalogueService[]) ?? [];
  }

  /** return_services: the identities of a person, as this partner may see them. */
  async returnServices(userIdentifier: string, opts: { profileType?: ProfileType } = {}): Promise<UserService[]> {
    const json = await this.call(`return_services/${this.key}/${seg(userIdentifier)}/${opts.profileType ?? 'private'}`);
    return ((json.services as Json[]) ?? []).map(toUserService);
  }

  /** update_service: set (or, with an empty usrSvcId, remove) the person's identifier on a service. */
  async updateService(userIdentifier: string, svcId: string, usrSvcId: string): Promise<{ svcId: string; usrSvcId: string }> {
    // The identifier travels in the body so that any character (a slash, a question mark) is safe.
    const json = await this.call(`update_service/${this.key}/${seg(userIdentifier)}/${seg(svcId)}`, { usrSvcId });
    const s = json.service as Json;
    return { svcId: String(s.svcId), usrSvcId: String(s.usrSvcId ?? '') };
  }

  /**
   * update_service with a profile URL (`https://github.com/alice`) in place of svcId and usrSvcId:
   * idsvc reads the service and the identifier from it and answers what it stored. A URL that fits
   * no service is `not_found`; one that fits several is `invalid_request`, naming them.
   */
  async updateServiceFromUrl(userIdentifier: string, url: string): Promise<{ svcId: string; usrSvcId: string }> {
    const json = await this.call(`update_service/${this.key}/${seg(userIdentifier)}`, { url });
    const s = json.service as Json;
    return { svcId: String(s.svcId), usrSvcId: String(s.usrSvcId ?? '') };
  }

  /** sync_user: link this partner's repository for the person to their account. */
  async syncUser(userIdentifier: string, creds: { email: string; password: string; endUserIp?: string }): Promise<true> {
    await this.call(`sync_user/${this.key}/${seg(userIdentifier)}`, { email_address: creds.email, password: creds.password, end_user_ip: creds.endUserIp });
    return true;
  }

  /** The raw XML answer of sync_user, to hand to the widget's handle_sync_results_idsvc. */
  async syncUserForWidget(
    userIdentifier: string,
    creds: { email: string; password: string; endUserIp?: string },
  ): Promise<{ ok: boolean; xml: string; status: number }> {
    const form = new URLSearchParams({ email_address: creds.email, password: creds.password });
    if (this.options.apiToken) form.set('api_token', this.options.apiToken);
    if (creds.endUserIp) form.set('end_user_ip', creds.endUserIp);
    const res = await this.fetchImpl(`${this.base}/api/sync_user/${this.key}/${seg(userIdentifier)}`, {
      method: 'POST',
      headers: { accept: 'application/xml', 'content-type': 'application/x-www-form-urlencoded' },
      body: form.toString(),
    });
    return { ok: res.ok, xml: await res.text(), status: res.status };
  }

  /** unsync_user: end the link; returns the unlinked user's userId. */
  async unsyncUser(userIdentifier: string, creds: { email?: string; password?: string } = {}): Promise<string> {
    const json = await this.call(`unsync_user/${this.key}/${seg(userIdentifier)}`, { email_address: creds.email, password: creds.password });
    return String(json.user_identifier);
  }

  /** return_profile: the person's profile fields that this partner may see. */
  async returnProfile(userIdentifier: string, opts: { profileType?: ProfileType } = {}): Promise<Profile> {
    const json = await this.call(`return_profile/${this.key}/${seg(userIdentifier)}/${opts.profileType ?? 'private'}`);
    return json.profile as Profile;
  }

  /** reverse_lookup: which opted-in users claim this identity. */
  async reverseLookup(svcId: string, usrSvcId: string): Promise<ReverseLookupUser[]> {
    const json = await this.call(`reverse_lookup/${this.key}/${seg(svcId)}/${seg(usrSvcId)}`);
    return ((json.users as Json[]) ?? []).map((u) => ({
      userId: String(u.userId),
      url: String(u.url),
      verified: u.verified === true || u.verified === 'TRUE',
    }));
  }

  /** return_contacts: which of a linked user's contacts are on the service, with their public identities. */
  async returnContacts(userIdentifier: string, contacts: string[]): Promise<Contact[]> {
    const json = await this.call(`return_contacts/${this.key}/${seg(userIdentifier)}`, { contacts: contacts.join('\n') });
    return ((json.contacts as Json[]) ?? []).map((c) => ({
      identifier: String(c.identifier),
      userId: String(c.userId),
      services: ((c.services as Json[]) ?? []).map(toUserService),
    }));
  }

  /**
   * The widget's script URL, signed so that it pre-fills this partner's private view (SPEC §7).
   * Build it on your server and put it in the page; it expires after `expiresInSeconds` (default
   * an hour; a whole number from 1 to 86400, since the service refuses signatures that live longer
   * than a day: the Promise rejects with a RangeError otherwise).
   */
  async widgetUrl(userIdentifier: string, opts: { displaySync?: boolean; expiresInSeconds?: number; lang?: string; now?: number } = {}): Promise<string> {
    const path = `${this.base}/api/service_collection_widget/${this.key}/${seg(userIdentifier)}/${opts.displaySync === false ? 'FALSE' : 'TRUE'}`;
    const params = new URLSearchParams();
    if (this.options.apiToken) {
      const lifetime = opts.expiresInSeconds ?? 3600;
      if (!Number.isInteger(lifetime) || lifetime < 1 || lifetime > MAX_WIDGET_URL_LIFETIME_SECONDS) {
        throw new RangeError(`expiresInSeconds must be a whole number from 1 to ${MAX_WIDGET_URL_LIFETIME_SECONDS} (a day), got ${lifetime}`);
      }
      const now = opts.now ?? Date.now();
      const exp = Math.floor(now / 1000) + lifetime;
      params.set('exp', String(exp));
      params.set('sig', await signWidget(this.options.apiKey, userIdentifier, exp, this.options.apiToken, now));
    }
    if (opts.lang) params.set('lang', opts.lang);
    const qs = params.toString();
    return qs ? `${path}?${qs}` : path;
  }
}

/**
 * The longest a signed widget URL may live: the service treats an `exp` further ahead than this as
 * a bad signature (public view, console warning), so that a leaked URL is useful for a day at most.
 */
export const MAX_WIDGET_URL_LIFETIME_SECONDS = 24 * 3600;

/**
 * The `sig` of a signed widget URL (SPEC §7): hex HMAC-SHA256 over "{api_key}:{user_identifier}:{exp}".
 * The service stores only the SHA-256 of an api_token, so the HMAC key is that digest — the 64
 * lowercase hex characters of sha256(api_token), used as ASCII bytes — never the raw token.
 * `userIdentifier` is signed exactly as it goes into the URL path (before percent-encoding).
 * `exp` (Unix seconds) more than a day after `now` (milliseconds, default the current time) is a
 * RangeError: the service would refuse it.
 */
export async function signWidget(apiKey: string, userIdentifier: string, exp: number, apiToken: string, now: number = Date.now()): Promise<string> {
  if (!Number.isInteger(exp)) throw new RangeError(`exp must be a whole number of Unix seconds, got ${exp}`);
  if (exp * 1000 > now + MAX_WIDGET_URL_LIFETIME_SECONDS * 1000) {
    throw new RangeError(`exp is more than ${MAX_WIDGET_URL_LIFETIME_SECONDS / 3600} hours ahead; the service refuses such signatures`);
  }
  const key = await hmacKey(utf8(await widgetSigningKey(apiToken)), 'sign');
  return toHex(await crypto.subtle.sign('HMAC', key, utf8(`${apiKey}:${userIdentifier}:${exp}`)));
}

/** The widget-signing key of an api_token: lowercase hex SHA-256 of the token. */
export async function widgetSigningKey(apiToken: string): Promise<string> {
  return toHex(await crypto.subtle.digest('SHA-256', utf8(apiToken)));
}

/** What a webhook's headers may come as: a fetch `Headers` (Deno, Bun, workers) or Node's plain object. */
export type WebhookHeaders = { get(name: string): string | null } | Record<string, string | string[] | undefined>;

/** A verified webhook event (Standard Webhooks payload). */
export interface WebhookEvent {
  type: string;
  timestamp: string;
  data: Record<string, unknown>;
}

/**
 * Checks a webhook from idsvc (Standard Webhooks): the signature over "{id}.{timestamp}.{body}" with
 * your `whsec_` secret, and a timestamp within `toleranceSeconds` (default 300) of now. Pass the raw
 * body text. Resolves to the parsed event, or rejects. Use `webhook-id` to drop duplicates: delivery
 * is at least once. Accepts exactly what the `standardwebhooks` package accepts, so either can check
 * the same delivery; several space-separated signatures (a secret being rotated) pass if one matches.
 */
export async function verifyWebhook(
  secret: string,
  headers: WebhookHeaders,
  body: string,
  opts: { toleranceSeconds?: number; now?: number } = {},
): Promise<WebhookEvent> {
  const h = (name: string): string | undefined => {
    if (typeof headers.get === 'function') return (headers as { get(name: string): string | null }).get(name) ?? undefined;
    const record = headers as Record<string, string | string[] | undefined>;
    const found = Object.keys(record).find((k) => k.toLowerCase() === name);
    const v = found === undefined ? undefined : record[found];
    return Array.isArray(v) ? v[0] : v;
  };
  const id = h('webhook-id');
  const ts = h('webhook-timestamp');
  const sigs = h('webhook-signature');
  if (!id || !ts || !sigs) throw new Error('missing webhook headers');
  const now = Math.floor((opts.now ?? Date.now()) / 1000);
  if (!/^\d+$/.test(ts) || Math.abs(now - Number(ts)) > (opts.toleranceSeconds ?? 300)) throw new Error('webhook timestamp outside the tolerance');
  const secretBytes = fromBase64(secret.replace(/^whsec_/, ''));
  if (!secretBytes || secretBytes.length === 0) throw new Error('the webhook secret is not base64 (whsec_…)');
  const key = await hmacKey(secretBytes, 'verify');
  // standardwebhooks signs the timestamp as a number (parseInt), so "0123" is signed as "123".
  const signed = utf8(`${id}.${Number(ts)}.${body}`);
  for (const s of sigs.split(' ')) {
    const [version, value] = s.split(',');
    if (version !== 'v1' || !value) continue;
    const given = fromBase64(value);
    // subtle.verify compares in constant time.
    if (given && (await crypto.subtle.verify('HMAC', key, given, signed))) {
      return JSON.parse(body) as WebhookEvent;
    }
  }
  throw new Error('invalid webhook signature');
}

function utf8(s: string): Uint8Array<ArrayBuffer> {
  return new TextEncoder().encode(s) as Uint8Array<ArrayBuffer>;
}

function hmacKey(raw: Uint8Array<ArrayBuffer>, usage: 'sign' | 'verify') {
  return crypto.subtle.importKey('raw', raw, { name: 'HMAC', hash: 'SHA-256' }, false, [usage]);
}

function toHex(buf: ArrayBuffer): string {
  return Array.from(new Uint8Array(buf), (b) => b.toString(16).padStart(2, '0')).join('');
}

/** Standard base64 to bytes; null when it is not base64. */
function fromBase64(b64: string): Uint8Array<ArrayBuffer> | null {
  try {
    return Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
  } catch {
    return null;
  }
}

// A loop, not /\/+$/, which is quadratic on a run of slashes that does not end the text.
function withoutTrailingSlashes(url: string): string {
  let end = url.length;
  while (end > 0 && url.charCodeAt(end - 1) === 0x2f) end--;
  return url.slice(0, end);
}

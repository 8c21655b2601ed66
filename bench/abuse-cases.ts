// The worst requests known for each route, built from the routes' own schemas: every string field
// at its largest accepted size, filled with the inputs that have made matchers and regexes slow
// (runs of slashes or spaces that do not end the value, l33t symbols, random text), plus the known
// worst cases of whole requests (a deeply nested JSON body, a 1,024-character password with an
// invalid address, a WebFinger resource of 15,500 slashes, a long Accept-Encoding q value, photo uploads
// that declare 42 megapixels or fill the 5 MB with what no decoder reads). Used by the CPU test
// (test/http/abuse.test.ts) and by `npm run abuse` (bench/abuse.ts), which times the event loop.

import zlib from 'node:zlib';

/** The part of a route's JSON schema the cases are built from. */
export interface FieldSchema {
  type?: string;
  properties?: Record<string, FieldSchema>;
  required?: string[];
  maxLength?: number;
  pattern?: string;
  anyOf?: FieldSchema[];
  const?: unknown;
  items?: FieldSchema;
  maxItems?: number;
}

export interface RouteInfo {
  method: string;
  url: string;
  schema?: { body?: FieldSchema; querystring?: FieldSchema; params?: FieldSchema };
}

/** What the requests need to get past the checks in front of the work: keys, a session, tokens. */
export interface Target {
  baseUrl: string;
  apiKey: string;
  apiToken: string;
  user: { userId: string; email: string; password: string };
  /** A logged-in session: its cookies and CSRF token. */
  session: { cookie: string; csrf: string };
  /** An anonymous visitor's cookies and CSRF token (sign-up, log-in, recovery forms). */
  anonymous: { cookie: string; csrf: string };
  /** A page whose one rel="me" link is a URL of 40,000 slashes followed by something else. */
  slashPage: string;
}

export interface AbuseRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: string | Uint8Array<ArrayBuffer>;
}

export interface AbuseCase {
  /** "METHOD /route/:pattern" */
  route: string;
  label: string;
  /** Built just before it is sent: an earlier case may have changed the account's password. */
  build(target: Target): AbuseRequest;
  /** Sees the status, so a password change by one case is known to the next. */
  answered?(target: Target, status: number, request: AbuseRequest): void;
}

const L33T = '4@8(<{[3691!|70$5+%2';
/** Router and header limits: no path segment is longer than this however its schema reads. */
const PARAM_MAX = 256;
/** Under the 64 KiB body limit once form-encoded, with room for the other fields. */
const BODY_FIELD_MAX = 60_000;
/** Past the 16 KiB header limit a query string never reaches the app. */
const QUERY_FIELD_MAX = 15_000;

/** A fixed pseudo-random generator (mulberry32), so every run sends the same bytes. */
function random(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

let addressCounter = 0;
function nextAddress(): string {
  addressCounter++;
  return `10.${(addressCounter >> 16) & 255}.${(addressCounter >> 8) & 255}.${addressCounter & 255}`;
}

/** The end of a value, cut so that its form encoding fits in `bytes`. */
function fitEncoded(value: string, bytes: number): string {
  const size = (v: string) => new URLSearchParams({ v }).toString().length - 2;
  let v = value;
  for (let encoded = size(v); encoded > bytes; encoded = size(v)) {
    v = v.slice(v.length - Math.floor((v.length * bytes) / encoded) + 1);
  }
  return v;
}

function cycle(alphabet: string, n: number): string {
  return alphabet.repeat(Math.ceil(n / alphabet.length)).slice(0, n);
}

/** Values of exactly n characters that have made matchers or regexes slow. */
export function fillers(n: number): [string, string][] {
  const next = random(n);
  const printable = Array.from({ length: n }, () => String.fromCharCode(33 + Math.floor(next() * 94))).join('');
  const url = 'https://idsvc.example/';
  return [
    ['slashes', `${'/'.repeat(n - 1)}x`],
    ['url of slashes', `${url}${'/'.repeat(Math.max(0, n - url.length - 1))}x`.slice(0, n)],
    ['spaces', `${' '.repeat(n - 1)}x`],
    ['l33t symbols', cycle(L33T, n)],
    ['random', printable],
    ['dots and at signs', `${cycle('a.@', n - 1)}!`],
    ['digits', cycle('1234567890', n)],
    ['one letter', 'a'.repeat(n)],
  ];
}

/** A valid value for a field the case is not about, when one is known. */
function knownValue(name: string, t: Target): string | undefined {
  const byName: Record<string, string> = {
    api_key: t.apiKey,
    api_token: t.apiToken,
    user_identifier: t.user.userId,
    userId: t.user.userId,
    profileIdentifier: t.user.userId,
    avatarId: t.user.userId,
    svcId: 'github',
    end_user_ip: '192.0.2.1',
    order_or_svcId: 'github',
    order: 'popularity',
    limit: '10',
    usrSvcId: 'someone',
    usr_svc_id: 'someone',
    svc_id: 'github',
    profile_type: 'public',
    display_sync: 'FALSE',
    email: 'new.person@example.org',
    email_address: t.user.email,
    login: t.user.email,
    new_email: 'new.address@example.org',
    password: 'teapot dormouse riddle',
    current_password: t.user.password,
    new_password: 'short',
    user_id: 'new_person',
    confirm_user_id: 'not_me',
    token: 'no-such-token',
    contacts: 'bob@example.org',
    url: 'https://example.org/someone',
    resource: `acct:${t.user.userId}@idsvc.example`,
    run_id: '1',
    partner_id: '1',
    opt_in: '1',
    recognise: '1',
    discoverable: '1',
  };
  return byName[name];
}

function baseline(name: string, t: Target): string {
  return knownValue(name, t) ?? 'x';
}

/** A value the schema accepts for a field with no length to stretch (a pattern, a choice). */
function fixedValue(name: string, s: FieldSchema, t: Target): string | string[] | undefined {
  if (s.const !== undefined) return String(s.const);
  if (s.anyOf) return fixedValue(name, s.anyOf[0]!, t);
  if (s.type === 'array' && s.items) return Array.from({ length: s.maxItems ?? 1 }, () => String(fixedValue(name, s.items!, t) ?? 'x'));
  const digits = s.pattern === undefined ? null : /^\^\[0-9\]\{1,(\d+)\}\$$/.exec(s.pattern);
  if (digits) return '9'.repeat(Number(digits[1]));
  return undefined;
}

function form(fields: Record<string, string | string[]>): string {
  const p = new URLSearchParams();
  for (const [k, v] of Object.entries(fields)) for (const one of Array.isArray(v) ? v : [v]) p.append(k, one);
  return p.toString();
}

function fill(pattern: string, params: Record<string, string>): string {
  return pattern.replace(/:([A-Za-z_]+)/g, (_m, name: string) => encodeURIComponent(params[name] ?? 'x')).replace(/\*$/, params['*'] ?? 'x');
}

function isSite(url: string): boolean {
  return !url.startsWith('/api/') && !url.startsWith('/v3/') && !url.startsWith('/avatar/') && !url.startsWith('/.well-known/');
}

/** Cookies and CSRF token for a site form: the session on account pages, the visitor elsewhere. */
function siteAuth(url: string, t: Target): { cookie: string; csrf: string } {
  return url.startsWith('/account') ? t.session : t.anonymous;
}

function request(
  r: RouteInfo,
  t: Target,
  values: { params?: Record<string, string>; query?: Record<string, string | string[]>; body?: Record<string, string | string[]> },
): AbuseRequest {
  const params: Record<string, string> = {};
  for (const name of Object.keys(r.schema?.params?.properties ?? {})) params[name] = baseline(name, t);
  for (const m of r.url.matchAll(/:([A-Za-z_]+)/g)) params[m[1]!] ??= baseline(m[1]!, t);
  Object.assign(params, values.params);
  const query = new URLSearchParams(form(values.query ?? {})).toString();
  const path = `${fill(r.url, params)}${query ? `?${query}` : ''}`;
  // Each request from an address of its own: the per-address limits would otherwise answer a cheap
  // 429 in place of the work this is about (the server trusts X-Forwarded-For here).
  const headers: Record<string, string> = { 'x-forwarded-for': nextAddress() };
  if (isSite(r.url)) headers.cookie = siteAuth(r.url, t).cookie;
  if (r.method !== 'POST') return { method: r.method, path, headers };
  const body: Record<string, string | string[]> = {};
  // Required fields and those with a known valid value get one; the API's url only when the case is
  // about it, since it excludes svcId in the path.
  const required = new Set(r.schema?.body?.required ?? []);
  for (const [name, s] of Object.entries(r.schema?.body?.properties ?? {})) {
    if (name === 'url' && !isSite(r.url)) continue;
    const value = fixedValue(name, s, t) ?? knownValue(name, t);
    if (value !== undefined) body[name] = value;
    else if (required.has(name)) body[name] = 'x';
  }
  if (isSite(r.url)) body._csrf = siteAuth(r.url, t).csrf;
  else body.api_token = t.apiToken;
  Object.assign(body, values.body);
  return { method: 'POST', path, headers: { ...headers, 'content-type': 'application/x-www-form-urlencoded' }, body: form(body) };
}

function lengthsFor(maxLength: number | undefined, cap: number): number[] {
  const n = Math.min(maxLength ?? cap, cap);
  // A password field takes 4,096 characters but only 1,024 bytes pass the length check: both.
  return n > 1024 ? [n, 1024] : [n];
}

/** The routes a case list must cover: every GET and POST the app registered. */
export function routeKey(r: { method: string; url: string }): string {
  return `${r.method} ${r.url}`;
}

export function abuseCases(routes: RouteInfo[]): AbuseCase[] {
  const cases: AbuseCase[] = [];
  for (const r of routes) {
    const route = routeKey(r);
    cases.push({ route, label: 'plain', build: (t) => request(r, t, {}) });
    const where: [keyof NonNullable<RouteInfo['schema']>, 'params' | 'query' | 'body', number][] = [
      ['params', 'params', PARAM_MAX],
      ['querystring', 'query', QUERY_FIELD_MAX],
      ['body', 'body', BODY_FIELD_MAX],
    ];
    for (const [schemaPart, part, cap] of where) {
      if (part === 'body' && r.method !== 'POST') continue;
      for (const [name, s] of Object.entries(r.schema?.[schemaPart]?.properties ?? {})) {
        if (name === '_csrf' || name === 'api_key' || name === 'api_token') continue;
        const stretchable = s.type === 'string' && s.pattern === undefined && s.const === undefined;
        if (!stretchable) continue;
        for (const n of lengthsFor(s.maxLength, cap)) {
          for (const [kind, filler] of fillers(n)) {
            const value = part === 'body' ? fitEncoded(filler, BODY_FIELD_MAX) : filler;
            cases.push({
              route,
              label: `${name}: ${value.length} characters, ${kind}`,
              build: (t) => request(r, t, { [part]: { [name]: value } }),
              ...(name === 'new_password'
                ? {
                    answered: (t: Target, status: number) => {
                      if (status === 303) t.user.password = value;
                    },
                  }
                : {}),
            });
          }
        }
      }
    }
    if (r.method === 'POST') {
      cases.push({
        route,
        label: 'JSON nested 30,000 deep',
        build: (t) => {
          const plain = request(r, t, {});
          return { ...plain, headers: { ...plain.headers, 'content-type': 'application/json' }, body: `${'['.repeat(30_000)}${']'.repeat(30_000)}` };
        },
      });
    }
  }
  cases.push(...knownWorst(routes));
  return cases;
}

/** Whole requests that were slow before, beyond one stretched field. */
function knownWorst(routes: RouteInfo[]): AbuseCase[] {
  const byKey = new Map(routes.map((r) => [routeKey(r), r]));
  const out: AbuseCase[] = [];
  const add = (key: string, label: string, values: Parameters<typeof request>[2]) => {
    const r = byKey.get(key);
    if (r) out.push({ route: key, label, build: (t) => request(r, t, values) });
  };
  const random1024 = fillers(1024).find(([k]) => k === 'random')![1];
  add('POST /signup', 'random 1,024-character password, invalid e-mail', { body: { email: 'not an address', password: random1024 } });
  add('POST /signup', '16 l33t symbols, invalid e-mail', { body: { email: 'not an address', password: L33T.slice(0, 16) } });
  add('POST /signup', '1,024 l33t symbols, valid e-mail', { body: { password: cycle(L33T, 1024) } });
  add('GET /.well-known/webfinger', 'resource of 15,500 slashes after the host', { query: { resource: `https://idsvc.example/${'/'.repeat(15_500)}x` } });
  for (const key of ['GET /widget/catalogue.json', 'GET /widget/:file']) {
    const r = byKey.get(key);
    if (!r) continue;
    out.push({
      route: key,
      label: 'Accept-Encoding with a 15,000-digit q',
      build: (t) => {
        const plain = request(r, t, {});
        return { ...plain, headers: { ...plain.headers, 'accept-encoding': `gzip;q=0.${'1'.repeat(15_000)}x` } };
      },
    });
  }
  const discover = byKey.get('POST /account/discover');
  if (discover)
    out.push({
      route: 'POST /account/discover',
      label: 'a page whose rel="me" link has 40,000 slashes',
      build: (t) => request(discover, t, { body: { url: t.slashPage } }),
    });
  if (byKey.has('POST /account/photo')) {
    out.push({ route: 'POST /account/photo', label: 'a PNG of a few kilobytes declaring 7000 × 6000 pixels', build: (t) => photoUpload(t, pngBomb()) });
    out.push({
      route: 'POST /account/photo',
      label: '5 MB of a JPEG header and zeros',
      build: (t) => photoUpload(t, Buffer.concat([Buffer.from([0xff, 0xd8, 0xff, 0xe0]), Buffer.alloc(5 * 1024 * 1024 - 4)])),
    });
  }
  return out;
}

/** The photo form as a browser sends it: multipart, the session's CSRF token, one file. */
function photoUpload(t: Target, bytes: Uint8Array): AbuseRequest {
  const boundary = `----abuse${Date.now()}`;
  const head = `--${boundary}\r\nContent-Disposition: form-data; name="_csrf"\r\n\r\n${t.session.csrf}\r\n--${boundary}\r\nContent-Disposition: form-data; name="photo"; filename="p"\r\nContent-Type: application/octet-stream\r\n\r\n`;
  const body = new Uint8Array(Buffer.concat([Buffer.from(head), bytes, Buffer.from(`\r\n--${boundary}--\r\n`)]));
  return {
    method: 'POST',
    path: '/account/photo',
    headers: { 'x-forwarded-for': nextAddress(), cookie: t.session.cookie, 'content-type': `multipart/form-data; boundary=${boundary}` },
    body,
  };
}

/** A PNG whose header declares 7000 × 6000 grey pixels (42 megapixels) of zeros, deflated to a few kilobytes: refused before decoding. */
export function pngBomb(): Buffer {
  const width = 7000;
  const height = 6000;
  const chunk = (type: string, data: Buffer) => {
    const body = Buffer.concat([Buffer.from(type, 'latin1'), data]);
    const head = Buffer.alloc(4);
    head.writeUInt32BE(data.length);
    const crc = Buffer.alloc(4);
    crc.writeUInt32BE(zlib.crc32(body));
    return Buffer.concat([head, body, crc]);
  };
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr.writeUInt8(8, 8);
  const idat = zlib.deflateSync(Buffer.alloc(height * (width + 1)), { level: 9 });
  return Buffer.concat([Buffer.from('\x89PNG\r\n\x1a\n', 'latin1'), chunk('IHDR', ihdr), chunk('IDAT', idat), chunk('IEND', Buffer.alloc(0))]);
}

/** Reads the cookies a response sets into a Cookie header (no attributes, last one wins). */
function cookiesOf(res: Response, jar: Map<string, string>): string {
  for (const c of res.headers.getSetCookie()) {
    const pair = c.split(';')[0] ?? '';
    const eq = pair.indexOf('=');
    if (eq > 0) jar.set(pair.slice(0, eq).trim(), pair.slice(eq + 1).trim());
  }
  return [...jar].map(([k, v]) => `${k}=${v}`).join('; ');
}

async function csrfOf(baseUrl: string, path: string, jar: Map<string, string>): Promise<string> {
  const res = await fetch(baseUrl + path, { redirect: 'manual', headers: { cookie: cookiesOf(new Response(), jar) } });
  cookiesOf(res, jar);
  const m = /name="_csrf" value="([^"]+)"/.exec(await res.text());
  if (!m?.[1]) throw new Error(`no CSRF token on ${path}`);
  return m[1];
}

/** Logs the account in over HTTP and takes a visitor's CSRF pair: what the site's forms need. */
export async function siteCredentials(baseUrl: string, user: Target['user']): Promise<Pick<Target, 'session' | 'anonymous'>> {
  const visitor = new Map<string, string>();
  const anonymousCsrf = await csrfOf(baseUrl, '/login', visitor);
  const anonymous = { cookie: cookiesOf(new Response(), visitor), csrf: anonymousCsrf };
  const jar = new Map<string, string>();
  const loginCsrf = await csrfOf(baseUrl, '/login', jar);
  const res = await fetch(`${baseUrl}/login`, {
    method: 'POST',
    redirect: 'manual',
    headers: { cookie: cookiesOf(new Response(), jar), 'content-type': 'application/x-www-form-urlencoded' },
    body: form({ _csrf: loginCsrf, login: user.email, password: user.password }),
  });
  cookiesOf(res, jar);
  if (res.status !== 303) throw new Error(`log-in failed: ${res.status}`);
  const csrf = await csrfOf(baseUrl, '/account', jar);
  return { session: { cookie: cookiesOf(new Response(), jar), csrf }, anonymous };
}

/** A page whose rel="me" link is 40,000 slashes that do not end the URL. */
export function slashPageHtml(): string {
  return `<!doctype html><html><body><a rel="me" href="https://idsvc.example/${'/'.repeat(40_000)}x">me</a></body></html>`;
}

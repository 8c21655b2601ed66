// Property-based fuzzing of the whole HTTP surface (issue 20): every API operation the OpenAPI
// document lists (GET and POST, form and JSON bodies), the widget's paths and the site's forms,
// with random path segments (unicode, huge, empty, malformed %-encodings), query strings, headers
// and bodies, sent as raw bytes so that nothing fetch() would refuse is left out. Whatever comes
// in, the answer arrives whole, is no 5xx, is well formed for its content type and carries
// X-Request-Id. FUZZ_RUNS sets the number of requests per property (default bounded for CI);
// FUZZ_SEED replays a failure that fast-check reported.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { Parser } from 'htmlparser2';
import type { TestApp } from '../helpers/app.js';
import { rawRequest, type RawAnswer } from '../helpers/raw-http.js';
import { assertWellFormed } from '../helpers/well-formed.js';
import { SiteClient, startSiteApp } from '../site/helpers.js';
import { ACCOUNT_PAGES } from '../../src/site/views/AccountNav.js';

const RUNS = Number(process.env.FUZZ_RUNS ?? 4000);
const SEED = process.env.FUZZ_SEED === undefined ? {} : { seed: Number(process.env.FUZZ_SEED) };
const REQUEST_ID = /^[A-Za-z0-9._-]{1,64}$/;
const EMAIL = 'fuzz@example.org';
const PASSWORD = 'correct horse battery';

let t: TestApp;
let apiKey: string;
let apiToken: string;
let sessionCookie: string;
let sessionCsrf: string;
/** OpenAPI path templates and the body fields each operation names. */
let operations: { path: string; fields: string[] }[];
/** The site's forms, as its pages show them: where each posts and the fields it has. */
let forms: { action: string; fields: string[] }[];

/** Forms (action and field names) of an HTML page. */
function formsOf(html: string): { action: string; fields: string[] }[] {
  const found: { action: string; fields: string[] }[] = [];
  const parser = new Parser({
    onopentag(name, attrs) {
      if (name === 'form' && (attrs.method ?? '').toLowerCase() === 'post') found.push({ action: attrs.action ?? '', fields: [] });
      else if (['input', 'select', 'textarea'].includes(name) && attrs.name && found.length > 0) found.at(-1)!.fields.push(attrs.name);
    },
  });
  parser.end(html);
  return found;
}

before(async () => {
  // Limits high enough that the fuzz reaches the operations rather than a wall of 429s.
  t = await startSiteApp({ RATE_LIMIT_PER_ADDRESS: '10000000', RATE_LIMIT_PER_KEY: '10000000' });
  const partner = await t.partner({ trusted: true });
  apiKey = partner.apiKey;
  apiToken = partner.apiToken;
  await t.user({ email: EMAIL, userId: 'fuzzer', password: PASSWORD });
  await partner.client.updateService('fuzzer', 'github', 'fuzzer');
  // The site's forms are fuzzed as another user, whose names the generators never produce: a
  // generated form can then not delete the account whose session the other forms use.
  await t.user({ email: 'visitor@example.org', userId: 'visitor', password: PASSWORD });
  await partner.client.syncUser('visitor', { email: 'visitor@example.org', password: PASSWORD });
  const browser = new SiteClient(t.baseUrl);
  assert.equal((await browser.logIn('visitor@example.org', PASSWORD)).status, 303);
  assert.equal((await browser.submit('/account/identities', { svc_id: 'gitlab', usr_svc_id: 'fuzzer' })).res.status, 303);
  sessionCookie = [...browser.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
  sessionCsrf = await browser.csrf('/account');
  // With an identity and a link, the account pages show every form they have. Not fuzzed: log-out
  // (it would end the session the other forms use) and "verify now" (it fetches profile pages
  // on the internet).
  const accountPages = [...ACCOUNT_PAGES.map((p) => p.path), '/account/proofs', '/account/photo'];
  const pages = await Promise.all(
    [...accountPages, '/login', '/signup'].map(async (p) => (await browser.get(p, p.startsWith('/account') ? {} : { cookie: '' })).body),
  );
  forms = pages.flatMap(formsOf).filter((f) => f.action !== '/logout' && !f.action.endsWith('/verify'));
  assert.ok(forms.length >= 9, `the pages show their forms: ${forms.map((f) => f.action).join(' ')}`);
  const doc = (await (await fetch(`${t.baseUrl}/api/openapi.json`)).json()) as {
    paths: Record<string, Record<string, { requestBody?: { content?: Record<string, { schema?: { properties?: object } }> } }>>;
  };
  operations = Object.entries(doc.paths).map(([path, ops]) => ({
    path,
    fields: [...new Set(Object.values(ops).flatMap((op) => Object.keys(op.requestBody?.content?.['application/json']?.schema?.properties ?? {})))],
  }));
  assert.ok(operations.length >= 9, 'the OpenAPI document lists the operations');
});
after(() => t.close());

const md5 = createHash('md5').update(EMAIL).digest('hex');
const sha256 = createHash('sha256').update(EMAIL).digest('hex');

// Text of every sort: the values the API and the site know (so that requests also get past
// validation), printable ASCII, any Unicode, control characters, and long runs past every limit.
const known = fc.constantFrom(
  'fuzzer',
  EMAIL,
  md5,
  sha256,
  'github',
  'gitlab',
  'twitter',
  'public',
  'private',
  'TRUE',
  'FALSE',
  'combined',
  'popularity',
  'alphanumeric',
  '10',
  '1',
);
const text = fc.oneof(
  { weight: 4, arbitrary: known },
  {
    weight: 2,
    arbitrary: fc.constantFrom(
      '',
      '.',
      '..',
      '0',
      '-1',
      '1001',
      'null',
      '[]',
      '{}',
      '<x/>',
      '\'"&<>',
      ']]>',
      'a'.repeat(255),
      'a'.repeat(257),
      '\u2028',
      '\uFEFF',
    ),
  },
  { weight: 3, arbitrary: fc.string({ maxLength: 30 }) },
  { weight: 2, arbitrary: fc.string({ unit: 'grapheme', maxLength: 20 }) },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 20 }) },
  { weight: 1, arbitrary: fc.string({ unit: 'binary-ascii', maxLength: 20 }) },
  { weight: 1, arbitrary: fc.integer({ min: 250, max: 5000 }).map((n) => 'x'.repeat(n)) },
);

/** A path segment as a client might put it on the wire: encoded, raw, or with a broken %-escape. */
const segment = fc.oneof(
  { weight: 8, arbitrary: text.map(encodeURIComponent) },
  { weight: 1, arbitrary: fc.string({ unit: 'grapheme-ascii', maxLength: 20 }).map((s) => s.replace(/[\s?#/]/g, '')) },
  {
    weight: 1,
    arbitrary: fc.tuple(text, fc.constantFrom('%', '%E0%A4%A', '%ZZ', '%00', '%C0%AF', '%2F', '%25')).map(([s, bad]) => encodeURIComponent(s) + bad),
  },
);

const pair = fc.tuple(
  fc.oneof(
    { weight: 4, arbitrary: fc.constantFrom('format', 'profile_type', 'lang', 'exp', 'sig', 'msg', 'checked', 'resource', 'rel') },
    { weight: 1, arbitrary: fc.constantFrom('api_token', 'API_TOKEN', 'password', 'email_address') },
    { weight: 1, arbitrary: fc.string({ maxLength: 10 }) },
  ),
  fc.oneof(
    { weight: 2, arbitrary: fc.constantFrom('json', 'xml', 'JSON', 'public', 'de', '1', '', 'acct:fuzzer@127.0.0.1', `mailto:${EMAIL}`) },
    { weight: 2, arbitrary: text },
  ),
);
const queryString = fc.oneof(
  { weight: 5, arbitrary: fc.constant('') },
  { weight: 3, arbitrary: fc.constantFrom('?format=json', '?format=xml', '?format=json&profile_type=public', '?lang=de') },
  {
    weight: 2,
    arbitrary: fc
      .array(pair, { minLength: 1, maxLength: 4 })
      .map((pairs) => `?${pairs.map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`).join('&')}`),
  },
);

/** A header value: printable, or with bytes Node's parser refuses (controls, Latin-1), or past its size limit. */
const headerValue = fc.oneof(
  { weight: 30, arbitrary: fc.string({ unit: 'grapheme-ascii', maxLength: 40 }) },
  { weight: 1, arbitrary: fc.string({ unit: 'binary-ascii', maxLength: 40 }).map((s) => s.replace(/[\r\n]/g, '')) },
  { weight: 1, arbitrary: fc.integer({ min: 100, max: 20_000 }).map((n) => 'h'.repeat(n)) },
);

const headers = fc.record(
  {
    accept: fc.constantFrom('application/json', 'application/xml', 'text/html', '*/*', 'application/json;q=0.1, application/xml', 'nonsense'),
    origin: fc.oneof(fc.constantFrom('https://partner.example', 'null', 'not a url'), headerValue),
    referer: fc.oneof(fc.constantFrom('https://partner.example/page', '::'), headerValue),
    'x-request-id': fc.oneof(fc.constantFrom('fuzz-1', 'a'.repeat(65), 'bad id!'), headerValue),
    'x-forwarded-for': fc.constantFrom('203.0.113.9', 'garbage', '::1, 10.0.0.1'),
    'x-fuzz': headerValue,
    cookie: fc.oneof(fc.constant('__SESSION__'), headerValue),
    'if-none-match': fc.oneof(fc.constant('*'), headerValue),
  },
  { requiredKeys: [] },
);

interface Body {
  contentType?: string;
  bytes: string;
  chunked: boolean;
}

function formOf(fields: [string, string][]): string {
  return fields.map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`).join('&');
}

/** A body built from `names` (plus strangers): a form, JSON (objects and not), or anything at all. */
function body(names: string[]): fc.Arbitrary<Body> {
  const name = fc.oneof({ weight: 8, arbitrary: fc.constantFrom(...names) }, { weight: 1, arbitrary: fc.string({ maxLength: 12 }) });
  const value = fc.oneof({ weight: 2, arbitrary: fc.constantFrom('__TOKEN__', '__CSRF__', EMAIL, PASSWORD, '1', '0') }, { weight: 3, arbitrary: text });
  // The secret fields first, mostly right, so that a share of the requests is authorised.
  const proofs = fc.oneof(
    {
      weight: 6,
      arbitrary: fc.constant<[string, string][]>([
        ['api_token', '__TOKEN__'],
        ['_csrf', '__CSRF__'],
      ]),
    },
    { weight: 1, arbitrary: fc.constant<[string, string][]>([]) },
  );
  const fields = fc
    .tuple(proofs, fc.uniqueArray(fc.tuple(name, value), { maxLength: 4, selector: ([k]) => k }))
    .map(([p, f]) => [...p.filter(([k]) => names.includes(k)), ...f.filter(([k]) => !p.some(([pk]) => pk === k))]);
  const chunked = fc.boolean();
  return fc.oneof(
    { weight: 6, arbitrary: fc.record({ contentType: fc.constant('application/x-www-form-urlencoded'), bytes: fields.map(formOf), chunked }) },
    {
      weight: 3,
      arbitrary: fc.record({ contentType: fc.constant('application/json'), bytes: fields.map((f) => JSON.stringify(Object.fromEntries(f))), chunked }),
    },
    { weight: 1, arbitrary: fc.record({ contentType: fc.constant('application/json'), bytes: fc.oneof(fc.json({ maxDepth: 3 }), text), chunked }) },
    {
      weight: 1,
      arbitrary: fc.record({
        contentType: fc.constantFrom(
          'text/plain',
          'multipart/form-data; boundary=x',
          'application/octet-stream',
          'application/xml',
          'form',
          '',
          'application/json; charset=latin1',
        ),
        bytes: text,
        chunked,
      }),
    },
    { weight: 1, arbitrary: fc.record({ bytes: fc.oneof(fc.constant(''), text), chunked: fc.constant(false) }) },
    {
      weight: 1,
      arbitrary: fc.record({
        contentType: fc.constant('application/x-www-form-urlencoded'),
        bytes: fc.integer({ min: 60_000, max: 200_000 }).map((n) => `a=${'b'.repeat(n)}`),
        chunked,
      }),
    },
  );
}

/** Fills the placeholders a generated value may hold with this run's secrets. */
const real = (s: string) => s.replaceAll('__TOKEN__', apiToken).replaceAll('__CSRF__', sessionCsrf).replaceAll('__SESSION__', sessionCookie);

function wire(method: string, target: string, hdrs: Record<string, string>, b: Body | null): { head: string; body: Buffer } {
  const lines = [`${method} ${target} HTTP/1.1`, 'Host: 127.0.0.1', 'Connection: close'];
  for (const [k, v] of Object.entries(hdrs)) lines.push(`${k}: ${real(v)}`);
  let payload = Buffer.alloc(0);
  if (b) {
    const bytes = Buffer.from(real(b.bytes), 'utf8');
    if (b.contentType !== undefined) lines.push(`Content-Type: ${b.contentType}`);
    if (b.chunked) {
      lines.push('Transfer-Encoding: chunked');
      payload =
        bytes.length === 0 ? Buffer.from('0\r\n\r\n') : Buffer.concat([Buffer.from(`${bytes.length.toString(16)}\r\n`), bytes, Buffer.from('\r\n0\r\n\r\n')]);
    } else {
      lines.push(`Content-Length: ${bytes.length}`);
      payload = bytes;
    }
  }
  return { head: `${lines.join('\r\n')}\r\n\r\n`, body: payload };
}

/** Answers by status class, so a run can show it reached the operations, not only their refusals. */
type Tally = Map<string, number>;
const count = (tally: Tally, a: RawAnswer) => tally.set(`${Math.floor(a.status / 100)}xx`, (tally.get(`${Math.floor(a.status / 100)}xx`) ?? 0) + 1);

function assertAnswer(what: string, method: string, a: RawAnswer, apiPath: boolean): void {
  assert.ok(a.status > 0, `${what}: no answer (${a.error ?? 'closed'})`);
  assert.ok(a.complete, `${what}: the answer was cut short (${a.error ?? 'no error'})`);
  assert.ok(a.status < 500, `${what}: ${a.status} ${a.body.slice(0, 300)}`);
  assert.match(a.headers['x-request-id'] ?? '', REQUEST_ID, `${what}: no X-Request-Id`);
  if (apiPath) assert.equal(a.headers['x-idsvc-api-version'], '1', `${what}: no X-Idsvc-Api-Version`);
  if (method === 'HEAD' || (a.status >= 300 && a.status < 400 && a.body === '')) return;
  // WebFinger's JSON has its own media type.
  const type = a.headers['content-type']?.replace(/^application\/jrd\+json/, 'application/json');
  try {
    assertWellFormed(type, a.status, a.body);
  } catch (e) {
    throw new assert.AssertionError({ message: `${what}: ${(e as Error).message}` });
  }
}

/** Values each path parameter accepts, so that most requests reach their operation. */
function validFor(name: string): fc.Arbitrary<string> {
  const values: Record<string, string[]> = {
    user_identifier: ['fuzzer', encodeURIComponent(EMAIL), md5, sha256, 'nobody'],
    svcId: ['github', 'gitlab', 'twitter', 'GitHub'],
    usrSvcId: ['fuzzer', 'someone_else'],
    profile_type: ['public', 'private'],
    order_or_svcId: ['github', 'combined', 'popularity', 'alphanumeric'],
    order: ['popularity', 'alphanumeric', 'combined'],
    limit: ['1', '10', '1000'],
    display_sync: ['TRUE', 'FALSE', 'true'],
  };
  return values[name] ? fc.constantFrom(...values[name]!) : segment;
}
const parameter = (name: string) =>
  name === 'api_key'
    ? fc.oneof({ weight: 8, arbitrary: fc.constant('__KEY__') }, { weight: 1, arbitrary: segment })
    : fc.oneof({ weight: 4, arbitrary: validFor(name) }, { weight: 1, arbitrary: segment });

const method = fc.oneof(
  { weight: 8, arbitrary: fc.constantFrom('GET', 'POST') },
  { weight: 1, arbitrary: fc.constantFrom('HEAD', 'PUT', 'DELETE', 'OPTIONS', 'PATCH') },
);

test('every API operation, fuzzed: whole answers, no 5xx, well formed, with X-Request-Id', async (tc) => {
  // The Gravatar-compatible routes are in the document too: fuzzed alike, without the partner API's own headers.
  const templates = [
    ...operations,
    { path: '/api/service_collection_widget/{api_key}/{user_identifier}', fields: ['api_token', 'email_address', 'password'] },
    { path: '/api/{op}', fields: [] },
    { path: '/api/{op}/{api_key}', fields: [] },
  ];
  const request = fc.constantFrom(...templates).chain((op) =>
    fc.record({
      path: fc.tuple(...[...op.path.matchAll(/\{([a-z_]+)\}/gi)].map((m) => parameter(m[1]!))).map((values) => {
        let i = 0;
        return op.path.replace(/\{([a-z_]+)\}/gi, () => values[i++]!);
      }),
      extra: fc.oneof({ weight: 8, arbitrary: fc.constant('') }, { weight: 1, arbitrary: fc.constantFrom('/', '//', '/extra') }),
      query: queryString,
      method,
      headers,
      body: fc.option(body([...op.fields, 'api_token']), { freq: 4 }),
    }),
  );
  const tally: Tally = new Map();
  await fc.assert(
    fc.asyncProperty(request, async (r) => {
      const path = r.path.replaceAll('__KEY__', apiKey) + r.extra;
      // Bodies on GET and HEAD only when over the limit (a 413); smaller ones are ignored anyway.
      const sent = r.method === 'GET' || r.method === 'HEAD' ? (r.body && r.body.bytes.length > 60_000 ? r.body : null) : r.body;
      const { head, body: bytes } = wire(r.method, path + r.query, r.headers, sent);
      const a = await rawRequest(t.baseUrl, head, { body: bytes });
      count(tally, a);
      assertAnswer(`${r.method} ${path.slice(0, 200)}${r.query.slice(0, 100)}`, r.method, a, path.startsWith('/api/'));
    }),
    { numRuns: RUNS, endOnFailure: true, ...SEED },
  );
  tc.diagnostic(`answers: ${JSON.stringify(Object.fromEntries(tally))}`);
  // A fuzz that never gets past validation tests only the refusals.
  assert.ok((tally.get('2xx') ?? 0) >= RUNS * 0.02, `too few requests reached an operation: ${JSON.stringify(Object.fromEntries(tally))}`);
});

test("the site's pages and forms, fuzzed: whole answers, no 5xx, well formed, with X-Request-Id", async (tc) => {
  const formRequest = fc.constantFrom(...forms).chain((form) =>
    fc.record({
      // Forms, mostly with the session and its CSRF token so that they get past the CSRF check.
      path: fc.constant(form.action),
      method: fc.oneof({ weight: 8, arbitrary: fc.constant('POST') }, { weight: 1, arbitrary: method }),
      query: fc.oneof({ weight: 4, arbitrary: fc.constant('') }, { weight: 1, arbitrary: queryString }),
      headers: fc.record(
        {
          cookie: fc.oneof({ weight: 6, arbitrary: fc.constant('__SESSION__') }, { weight: 1, arbitrary: headerValue }),
          origin: fc.oneof({ weight: 4, arbitrary: fc.constant(t.baseUrl) }, { weight: 1, arbitrary: fc.constant('https://evil.example') }),
          'x-fuzz': headerValue,
        },
        { requiredKeys: ['cookie'] },
      ),
      body: fc.option(body(form.fields), { freq: 10 }),
    }),
  );
  const pageRequest = fc.record({
    // Pages: the public profile, WebFinger, the home page, unknown paths, static assets.
    path: fc.oneof(
      segment.map((s) => `/u/${s}`),
      fc.constant('/.well-known/webfinger'),
      fc.constantFrom('/', '/login', '/signup', '/account', '/assets/nope.css', '/widget/nope.js', '/widget/catalogue.json', '/healthz', '/docs'),
      segment.map((s) => `/${s}`),
    ),
    method,
    query: queryString,
    headers,
    body: fc.option(body(['msg']), { freq: 5 }),
  });
  const tally: Tally = new Map();
  await fc.assert(
    fc.asyncProperty(fc.oneof({ weight: 3, arbitrary: formRequest }, { weight: 1, arbitrary: pageRequest }), async (r) => {
      const { head, body: bytes } = wire(r.method, r.path + r.query, r.headers, r.method === 'GET' || r.method === 'HEAD' ? null : r.body);
      const a = await rawRequest(t.baseUrl, head, { body: bytes });
      count(tally, a);
      assertAnswer(`${r.method} ${r.path.slice(0, 200)}${r.query.slice(0, 100)}`, r.method, a, false);
    }),
    { numRuns: RUNS, endOnFailure: true, ...SEED },
  );
  tc.diagnostic(`answers: ${JSON.stringify(Object.fromEntries(tally))}`);
  const through = (tally.get('2xx') ?? 0) + (tally.get('3xx') ?? 0);
  assert.ok(through >= RUNS * 0.02, `too few requests got past the site's checks: ${JSON.stringify(Object.fromEntries(tally))}`);
});

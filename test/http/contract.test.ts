// Issue 16: the API description is a contract. Every operation's real answers, XML and JSON, success
// and each error it gives, are checked against what the served document declares for that
// operation, status and content type: an undeclared status, content type or header fails, and so
// does a body outside the declared schema (ajv; XML is read back into the tree its schema's `xml`
// names describe). The reference page's curl examples are run as they are written.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { XMLParser } from 'fast-xml-parser';
import SQLite from 'better-sqlite3';
import { startTestApp, TEST_DB, type TestApp } from '../helpers/app.js';

type Json = Record<string, unknown>;
interface Operation {
  operationId: string;
  responses: Record<string, { headers?: Record<string, Json>; content?: Record<string, { schema: Json }> }>;
  'x-codeSamples': { source: string }[];
}
interface Document {
  servers: { url: string }[];
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, Json>; headers: Record<string, Json> };
}

const run = promisify(execFile);
const PASSWORD = 'correct horse battery';
let t: TestApp;
let doc: Document;
let P: Awaited<ReturnType<TestApp['partner']>>;
const ajv = new Ajv2020({ strict: false, allErrors: true });
/** operationId → statuses and content types seen, to show each operation's answers were all met. */
const seen = new Map<string, Set<string>>();

before(async () => {
  t = await startTestApp();
  doc = (await (await fetch(`${t.baseUrl}/api/openapi.json`)).json()) as Document;
  ajv.addSchema({ $id: 'https://idsvc.test/openapi.json', components: doc.components });
  P = await t.partner({ name: 'Contract partner' });
  await t.user({ email: 'alice@example.org', userId: 'alice', password: PASSWORD, discoverable: true });
  await t.user({ email: 'bob@example.org', userId: 'bob', discoverable: true });
  await t.user({ email: 'dora@example.org', userId: 'dora', password: PASSWORD, proven: false });
});
after(() => t.close());

function operation(operationId: string): Operation {
  for (const item of Object.values(doc.paths)) for (const op of Object.values(item)) if (op.operationId === operationId) return op;
  throw new Error(`the document has no operation ${operationId}`);
}

/** A schema of the document, with its references resolvable. */
function compile(schema: Json) {
  const rooted = JSON.parse(JSON.stringify(schema).replaceAll('"#/components/', '"https://idsvc.test/openapi.json#/components/')) as Json;
  return ajv.compile(rooted);
}

function resolve(schema: Json): Json {
  const ref = schema.$ref;
  if (typeof ref !== 'string') return schema;
  const name = ref.replace('#/components/schemas/', '');
  const target = doc.components.schemas[name];
  assert.ok(target, `unresolved ${ref}`);
  return { ...target, ...schema, $ref: undefined, xml: schema.xml ?? target.xml };
}

const xmlName = (schema: Json) => (resolve(schema).xml as { name?: string } | undefined)?.name;

type XmlNode = Record<string, unknown>;
const parser = new XMLParser({ preserveOrder: true, ignoreAttributes: false, parseTagValue: false, trimValues: false, processEntities: true });

function nameOf(node: XmlNode): string {
  return Object.keys(node).find((k) => k !== ':@')!;
}

/** The XML tree as the JSON its schema describes: arrays from repeated item elements, objects from child elements. */
function fromXml(schema: Json, children: XmlNode[]): unknown {
  const s = resolve(schema);
  const elements = children.filter((c) => !('#text' in c));
  const text = children
    .filter((c) => '#text' in c)
    .map((c) => String(c['#text']))
    .join('');
  if (s.type === 'array') {
    const items = s.items as Json;
    if (text.trim() !== '') return { unexpectedText: text };
    return elements.map((e) => (nameOf(e) === xmlName(items) ? fromXml(items, e[nameOf(e)] as XmlNode[]) : { unexpectedElement: nameOf(e) }));
  }
  if (s.type === 'object') {
    if (text.trim() !== '') return { '#text': text };
    const out: Record<string, unknown> = {};
    for (const e of elements) {
      const name = nameOf(e);
      const property = (s.properties as Record<string, Json> | undefined)?.[name];
      out[name in out ? `${name} (again)` : name] = fromXml(property ?? {}, e[name] as XmlNode[]);
    }
    return out;
  }
  if (elements.length > 0) return { unexpectedElements: elements.map(nameOf) };
  // XML writes a boolean as TRUE or FALSE; anything else stays text, which the schema refuses.
  if (s.type === 'boolean') return text === 'TRUE' ? true : text === 'FALSE' ? false : text;
  return text;
}

function parseXml(schema: Json, body: string): unknown {
  const top = (parser.parse(body) as XmlNode[]).filter((n) => !('?xml' in n) && !('#text' in n && String(n['#text']).trim() === ''));
  assert.equal(top.length, 1, 'one root element');
  const root = top[0]!;
  assert.equal(nameOf(root), xmlName(schema), 'the root element is the one the schema names');
  return fromXml(schema, root[nameOf(root)] as XmlNode[]);
}

/** Checks one real answer against the document; returns the body as the schema reads it. */
async function conforms(operationId: string, res: Response, what: string): Promise<unknown> {
  const op = operation(operationId);
  const label = `${operationId} ${what}: ${res.status}`;
  const declared = op.responses[String(res.status)];
  const body = await res.text();
  assert.ok(declared, `${label} is not a status the document declares (${body.slice(0, 200)})`);
  for (const [name, h] of Object.entries(declared.headers ?? {})) {
    const header = typeof h.$ref === 'string' ? doc.components.headers[h.$ref.replace('#/components/headers/', '')]! : h;
    const value = res.headers.get(name);
    if (value === null) {
      assert.ok(!header.required, `${label}: the declared header ${name} is missing`);
      continue;
    }
    const validate = compile(header.schema as Json);
    assert.ok(validate(value), `${label}: header ${name}=${value} ${ajv.errorsText(validate.errors)}`);
  }
  // Every answer this test provokes was counted against the limits (the HTTP parser's refusals are not).
  for (const name of ['RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset']) assert.ok(res.headers.has(name), `${label}: ${name}`);
  const media = (res.headers.get('content-type') ?? '').split(';')[0]!.trim();
  const kinds = seen.get(operationId) ?? new Set<string>();
  seen.set(operationId, kinds);
  kinds.add(`${res.status} ${media || '-'}`);
  if (!declared.content) {
    assert.equal(body, '', `${label}: a body where the document declares none`);
    return undefined;
  }
  const content = declared.content[media];
  assert.ok(content, `${label}: content type "${media}" is not declared (declared: ${Object.keys(declared.content).join(', ')})`);
  const value = media === 'application/json' ? JSON.parse(body) : media === 'application/xml' ? parseXml(content.schema, body) : body;
  const validate = compile(content.schema);
  assert.ok(validate(value), `${label} ${media}: ${ajv.errorsText(validate.errors)} in ${JSON.stringify(value).slice(0, 400)}`);
  return value;
}

const api = (path: string) => `${t.baseUrl}/api/${path}`;
const form = (fields: Record<string, string>) => ({ method: 'POST', body: new URLSearchParams(fields) });
const json = (fields: Record<string, string>) => ({
  method: 'POST',
  body: JSON.stringify(fields),
  headers: { 'content-type': 'application/json', accept: 'application/json' },
});

/** The same request as XML and as JSON; both must conform, and both must have the expected status. */
async function both(operationId: string, url: string, init: RequestInit, status: number, what: string): Promise<void> {
  for (const format of ['xml', 'json']) {
    const res = await fetch(`${url}${url.includes('?') ? '&' : '?'}format=${format}`, init);
    assert.equal(res.status, status, `${operationId} ${what} (${format})`);
    await conforms(operationId, res, `${what} (${format})`);
  }
}

const UNKNOWN_KEY = 'a'.repeat(32);
const BIG = { padding: 'x'.repeat(70 * 1024) };

/** The paths of each operation (with the values the scenario makes work) and what it needs. */
function calls() {
  const k = P.apiKey;
  return [
    { id: 'service_details', path: `service_details/${k}/github`, token: false },
    { id: 'return_services', path: `return_services/${k}/alice`, token: false },
    { id: 'update_service', path: `update_service/${k}/alice/github`, token: true },
    { id: 'sync_user', path: `sync_user/${k}/alice`, token: true, body: { email_address: 'alice@example.org', password: PASSWORD } },
    { id: 'unsync_user', path: `unsync_user/${k}/alice`, token: true },
    { id: 'return_profile', path: `return_profile/${k}/alice`, token: false },
    { id: 'reverse_lookup', path: `reverse_lookup/${k}/github/alice-codes`, token: false },
    { id: 'return_contacts', path: `return_contacts/${k}/alice`, token: true },
  ];
}

test("every operation's successes, XML and JSON, conform to the document", async () => {
  const token = P.apiToken;
  const k = P.apiKey;
  await both('sync_user', api(`sync_user/${k}/alice`), form({ api_token: token, email_address: 'alice@example.org', password: PASSWORD }), 200, 'link');
  await both('update_service', api(`update_service/${k}/alice/github`), json({ api_token: token, usrSvcId: 'alice-codes' }), 200, 'push');
  await both('update_service', api(`update_service/${k}/alice/gitlab/alice-labs`), form({ api_token: token }), 200, 'push at the alias path');
  await both(
    'update_service_3',
    api(`update_service/${k}/alice`),
    form({ api_token: token, url: 'https://github.com/alice-codes' }),
    200,
    'push by profile URL',
  );
  await both(
    'update_service_3',
    api(`update_service/${k}/alice`),
    form({ api_token: token, url: 'https://nowhere.example/alice' }),
    404,
    'a URL no service has',
  );
  await both('update_service_3', api(`update_service/${k}/alice`), form({ api_token: token }), 400, 'neither svcId nor url');
  await both('return_services', api(`return_services/${k}/alice`), form({ api_token: token }), 200, 'private view');
  await both('return_services', api(`return_services/${k}/alice/public`), { method: 'GET' }, 200, 'public view on GET, alias path');
  await both('return_services', api(`return_services/${k}/nobody/public`), { method: 'GET' }, 404, 'unknown user');
  const profileRes = await fetch(api(`return_profile/${k}/alice?profile_type=public&format=json`));
  assert.deepEqual(await conforms('return_profile', profileRes, 'public'), { profile: { userId: 'alice', url: `${t.config.baseUrl}/u/alice` } });
  await both('return_profile', api(`return_profile/${k}/alice`), form({ api_token: token }), 200, 'private');
  await both('reverse_lookup', api(`reverse_lookup/${k}/github/alice-codes`), { method: 'GET' }, 200, 'a claim');
  await both('reverse_lookup', api(`reverse_lookup/${k}/no-such-service/x`), { method: 'GET' }, 404, 'unknown service');
  await both('return_contacts', api(`return_contacts/${k}/alice`), form({ api_token: token, contacts: 'bob@example.org, carol@example.org' }), 200, 'contacts');
  await both('return_contacts', api(`return_contacts/${k}/bob`), form({ api_token: token, contacts: 'alice' }), 403, 'a user who did not link');
  await both(
    'sync_user',
    api(`sync_user/${k}/dora`),
    form({ api_token: token, email_address: 'dora@example.org', password: PASSWORD }),
    403,
    'address not confirmed',
  );
  await both(
    'sync_user',
    api(`sync_user/${k}/alice`),
    form({ api_token: token, email_address: 'alice@example.org', password: 'wrong password' }),
    401,
    'wrong password',
  );
  for (const format of ['xml', 'json']) {
    const link = await fetch(api(`sync_user/${k}/alice`), form({ api_token: token, email_address: 'alice@example.org', password: PASSWORD }));
    assert.equal(link.status, 200);
    const res = await fetch(api(`unsync_user/${k}/alice?format=${format}`), form({ api_token: token }));
    assert.equal(res.status, 200, `unsync_user ${format}`);
    await conforms('unsync_user', res, `unlink (${format})`);
  }
  await both('unsync_user', api(`service_collection_widget/${k}/alice`), form({ api_token: token }), 404, 'no link any more, at the alias path');

  // The catalogue at its three URL shapes, and the ETag's 304.
  await both('service_details', api(`service_details/${k}`), { method: 'GET' }, 200, 'whole');
  await both('service_details_2', api(`service_details/${k}/github`), { method: 'GET' }, 200, 'one');
  await both('service_details_3', api(`service_details/${k}/popularity/10`), { method: 'GET' }, 200, 'first ten');
  await both('service_details_2', api(`service_details/${k}/no-such-service`), { method: 'GET' }, 404, 'unknown service');
  await both('service_details_3', api(`service_details/${k}/popularity/5000`), { method: 'GET' }, 400, 'limit too high');
  const first = await fetch(api(`service_details/${k}/github`));
  await first.arrayBuffer();
  const notModified = await fetch(api(`service_details/${k}/github`), { headers: { 'if-none-match': first.headers.get('etag')! } });
  assert.equal(notModified.status, 304);
  await conforms('service_details_2', notModified, 'If-None-Match');

  // The widget answers scripts, for errors too.
  const widget = (path: string) => fetch(api(`service_collection_widget/${path}`));
  const script = await widget(`${k}/alice/FALSE?lang=de`);
  assert.equal(script.status, 200);
  assert.match(String(await conforms('service_collection_widget', script, 'script')), /alice|services/);
  for (const [path, status] of [
    [`${UNKNOWN_KEY}/alice/FALSE`, 401],
    [`${k}/alice/MAYBE`, 400],
    [`${k}/alice/FALSE?nope=1`, 400],
  ] as const) {
    const res = await widget(path);
    assert.equal(res.status, status, path);
    await conforms('service_collection_widget', res, path);
  }
});

test("every operation's refusals conform to the document, XML and JSON", async () => {
  const elsewhere = await t.partner({ name: 'Listed origins', origins: ['https://partner.example'] });
  for (const c of calls()) {
    const id = c.id === 'service_details' ? 'service_details_2' : c.id;
    const fields: Record<string, string> = ('body' in c && c.body) || {};
    await both(id, api(c.path.replace(P.apiKey, UNKNOWN_KEY)), form(fields), 401, 'unknown api_key');
    await both(id, api(c.path), form({ ...fields, api_token: P.apiToken, no_such_field: 'x' }), 400, 'unknown body field');
    await both(id, api(c.path), form({ ...fields, api_token: 'wrong' }), 401, 'wrong api_token');
    await both(id, api(`${c.path}?api_token=${P.apiToken}`), { method: 'GET' }, 400, 'a secret in the URL');
    await both(id, api(c.path), form(BIG), 413, 'a body over 64 KiB');
    await both(id, api(c.path), { method: 'POST', body: 'x', headers: { 'content-type': 'text/plain' } }, 400, 'a body that is no form');
    await both(
      id,
      api(c.path.replace(P.apiKey, elsewhere.apiKey)),
      { method: 'GET', headers: { origin: 'https://elsewhere.example' } },
      403,
      'an origin the partner did not list',
    );
    if (c.token && !('body' in c)) await both(id, api(c.path), { method: 'GET' }, 401, 'no api_token');
  }
});

test('rate-limited answers conform, with Retry-After and RateLimit-*', async () => {
  const small = await startTestApp({ RATE_LIMIT_PER_ADDRESS: '1' });
  try {
    const Q = await small.partner();
    const spent = await fetch(`${small.baseUrl}/api/service_details/${Q.apiKey}/github`);
    await spent.arrayBuffer();
    for (const c of [...calls(), { id: 'service_collection_widget', path: `service_collection_widget/${P.apiKey}/alice/FALSE` }]) {
      const path = c.path.replace(P.apiKey, Q.apiKey);
      for (const format of ['xml', 'json']) {
        const res = await fetch(`${small.baseUrl}/api/${path}?format=${format}`);
        assert.equal(res.status, 429, `${c.id} ${format}`);
        await conforms(c.id === 'service_details' ? 'service_details_2' : c.id, res, `rate limited (${format})`);
      }
    }
  } finally {
    await small.close();
  }
});

test("the reference page's curl examples work as written", async () => {
  const before = await t.partner({ name: 'Curl partner' });
  const env = { ...process.env, API_KEY: before.apiKey, API_TOKEN: before.apiToken, PASSWORD };
  // The order a partner would follow: link, push, read, unlink.
  const order = [
    'sync_user',
    'update_service',
    'update_service_3',
    'return_services',
    'return_profile',
    'reverse_lookup',
    'return_contacts',
    'service_details',
    'service_details_2',
    'service_details_3',
    'service_collection_widget',
    'unsync_user',
  ];
  const documented = Object.entries(doc.paths)
    .filter(([path]) => path.startsWith('/api/'))
    .flatMap(([, item]) => Object.values(item).map((op) => op.operationId));
  assert.deepEqual([...order].sort(), [...documented].sort(), 'every documented operation has its example run');
  for (const id of order) {
    const source = operation(id)['x-codeSamples'][0]!.source.replaceAll(doc.servers[0]!.url, t.baseUrl);
    assert.match(source, /^curl /);
    const { stdout } = await run('bash', ['-c', `${source} -s -i`], { env });
    const [head, ...rest] = stdout.split('\r\n\r\n');
    const status = Number(/^HTTP\/[\d.]+ (\d+)/.exec(head!)?.[1]);
    const headers = new Headers(
      head!
        .split('\r\n')
        .slice(1)
        .map((l) => [l.slice(0, l.indexOf(':')), l.slice(l.indexOf(':') + 1).trim()] as [string, string]),
    );
    assert.equal(status, 200, `${id}: ${source}\n${rest.join('')}`);
    await conforms(id, new Response(rest.join('\r\n\r\n'), { status, headers }), 'curl example');
  }
});

test('an outage answer conforms, with Retry-After', {
  skip: TEST_DB !== 'sqlite' && 'SQLite only: a lock another process holds; on PostgreSQL the outage tests in test/faults/ cover the same answer',
}, async () => {
  const other = new SQLite(t.cliEnv.DATABASE_URL!.slice('sqlite:'.length));
  other.exec('BEGIN IMMEDIATE'); // another process holds the write lock beyond busy_timeout
  try {
    await both('update_service', api(`update_service/${P.apiKey}/alice/github`), form({ api_token: P.apiToken, usrSvcId: 'during' }), 503, 'database locked');
  } finally {
    other.exec('ROLLBACK');
    other.close();
  }
});

test('each operation met the answers it documents: 200 in XML and JSON, and its errors', () => {
  for (const [id, kinds] of seen) {
    const op = operation(id);
    const media = id === 'service_collection_widget' ? ['text/javascript'] : ['application/xml', 'application/json'];
    for (const m of media) assert.ok(kinds.has(`200 ${m}`) || !op.responses['200'], `${id}: 200 ${m}`);
  }
  const statuses = new Set([...seen.values()].flatMap((k) => [...k].map((s) => s.split(' ')[0])));
  for (const s of ['200', '304', '400', '401', '403', '404', '413', '429', ...(TEST_DB === 'sqlite' ? ['503'] : [])])
    assert.ok(statuses.has(s), `some answer was ${s}`);
  assert.equal(seen.size, 12, [...seen.keys()].join(', '));
});

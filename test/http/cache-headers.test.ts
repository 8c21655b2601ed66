// What a cache in front of idsvc may keep (src/http/cache-headers.ts), through HTTP on SQLite and
// PostgreSQL: public views asked for without proof carry Cache-Control public with max-age and
// stale-while-revalidate, a strong ETag of the bytes (the same while the data is, another once it
// changes), 304 without a body on If-None-Match, and Vary; answers with proof (api_token, a signed
// widget URL, a session) are private, no-store, and so is every error. A hidden person's public
// answer is never served by idsvc itself after the change, whatever ETag the client holds.
import assert from 'node:assert/strict';
import { createHash, createHmac } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { findUserByUserId } from '../../src/repositories/users.js';
import { setOptIn } from '../../src/services/accounts.js';
import { setCentralIdentity } from '../../src/services/central.js';
import { cacheDelay } from '../../src/site/views/consent.js';
import { etagOf, publicCacheControl, TaggedBody } from '../../src/http/cache-headers.js';
import { SiteClient } from '../site/helpers.js';
import { startTestApp, type TestApp } from '../helpers/app.js';

const PUBLIC = 'public, max-age=60, stale-while-revalidate=60';
const PRIVATE = 'private, no-store';
const ETAG = /^"[A-Za-z0-9_-]{27}"$/;

let t: TestApp;
let P: { apiKey: string; apiToken: string };
before(async () => {
  t = await startTestApp();
  P = await t.partner();
  await t.user({ email: 'alice@example.org', userId: 'alice', password: 'alice has a long password' });
  await central('alice', 'github', 'alice-gh');
  await t.user({ email: 'hilda@example.org', userId: 'hilda' });
  await central('hilda', 'gitlab', 'hilda-gl');
});
after(() => t.close());

async function central(userId: string, svcId: string, usrSvcId: string): Promise<void> {
  const user = (await findUserByUserId(t.ctx.db, userId))!;
  const svc = (await t.ctx.catalogue.get()).byId.get(svcId)!;
  await t.ctx.db.write((tx) => setCentralIdentity(tx, user, svc, usrSvcId, { partnerId: null }, t.clock.now()));
}

async function get(path: string, headers: Record<string, string> = {}): Promise<{ res: Response; body: string }> {
  const res = await fetch(`${t.baseUrl}${path}`, { headers });
  return { res, body: await res.text() };
}

async function post(path: string, fields: Record<string, string>): Promise<{ res: Response; body: string }> {
  const res = await fetch(`${t.baseUrl}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(fields),
  });
  return { res, body: await res.text() };
}

/** Asserts a shared cache may keep it, and returns its ETag. */
function assertPublic(res: Response, vary: string | null): string {
  assert.equal(res.status, 200);
  assert.equal(res.headers.get('cache-control'), PUBLIC);
  assert.equal(res.headers.get('vary'), vary);
  const etag = res.headers.get('etag') ?? '';
  assert.match(etag, ETAG);
  return etag;
}

function assertPrivate(res: Response): void {
  assert.equal(res.headers.get('cache-control'), PRIVATE);
}

/** Asserts the answer to the same GET with its ETag is 304, without a body, and with the same validators. */
async function assertRevalidates(path: string, etag: string, headers: Record<string, string> = {}): Promise<void> {
  const again = await get(path, { ...headers, 'if-none-match': etag });
  assert.equal(again.res.status, 304, path);
  assert.equal(again.body, '');
  assert.equal(again.res.headers.get('etag'), etag);
  assert.equal(again.res.headers.get('cache-control'), PUBLIC);
  // A list, and the weak form of the same tag, match too (RFC 9110's weak comparison).
  assert.equal((await get(path, { ...headers, 'if-none-match': `"other", W/${etag}` })).res.status, 304);
  assert.equal((await get(path, { ...headers, 'if-none-match': '"other"' })).res.status, 200);
}

describe('return_services', () => {
  const path = () => `/api/return_services/${P.apiKey}/alice/public`;

  test('the public view without proof: public, a stable strong ETag from the first read to the kept answer, 304, Vary Accept and Origin', async () => {
    const etags = new Set<string>();
    const bodies = new Set<string>();
    // The first read renders (and the answer cache, with room, keeps it), the others are served from memory.
    for (let i = 0; i < 3; i++) {
      const { res, body } = await get(path());
      etags.add(assertPublic(res, 'Accept, Origin'));
      bodies.add(body);
      assert.equal(res.headers.get('etag'), `"${createHash('sha1').update(body).digest('base64url')}"`, 'the ETag is a hash of the bytes sent');
    }
    assert.equal(etags.size, 1);
    assert.equal(bodies.size, 1);
    const [etag] = etags;
    await assertRevalidates(path(), etag!);
    // JSON (by Accept) is another answer with another ETag, and its own 304.
    const json = await get(path(), { accept: 'application/json' });
    const jsonTag = assertPublic(json.res, 'Accept, Origin');
    assert.notEqual(jsonTag, etag);
    await assertRevalidates(path(), jsonTag, { accept: 'application/json' });
  });

  test('a change to the person gives another ETag, and the old one no 304', async () => {
    const before = assertPublic((await get(path())).res, 'Accept, Origin');
    await central('alice', 'gitlab', 'alice-gl');
    const after = await get(path(), { 'if-none-match': before });
    assert.equal(after.res.status, 200);
    assert.match(after.body, /alice-gl/);
    assert.notEqual(assertPublic(after.res, 'Accept, Origin'), before);
  });

  test('with the api_token (POST), a POST without it, and the private view: private, no-store', async () => {
    const proven = await post(path(), { api_token: P.apiToken });
    assert.equal(proven.res.status, 200);
    assertPrivate(proven.res);
    assert.equal((await post(path(), {})).res.status, 200);
    assertPrivate((await post(path(), {})).res);
    const own = await post(`/api/return_services/${P.apiKey}/alice/private`, { api_token: P.apiToken });
    assert.equal(own.res.status, 200);
    assertPrivate(own.res);
    // No cache may keep these answers, so none is given a validator.
    for (const res of [proven.res, own.res]) assert.equal(res.headers.get('etag'), null);
    // Even with the ETag of the public answer, a proven call gets its own answer, whole.
    const etag = assertPublic((await get(path())).res, 'Accept, Origin');
    const res = await fetch(`${t.baseUrl}${path()}`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', 'if-none-match': etag },
      body: `api_token=${P.apiToken}`,
    });
    assert.equal(res.status, 200);
    assert.ok((await res.text()).length > 0);
  });

  test('errors are no-store and carry no ETag', async () => {
    for (const { res } of [
      await get(`/api/return_services/${P.apiKey}/nobody/public`),
      await get(`/api/return_services/${P.apiKey}/alice/private`),
      await get(`/api/return_services/${'x'.repeat(32)}/alice/public`),
    ]) {
      assert.ok(res.status >= 400, String(res.status));
      assert.equal(res.headers.get('cache-control'), 'no-store');
      assert.equal(res.headers.get('etag'), null);
    }
  });
});

describe('publicCacheControl: worked out again only for another configuration than the last', () => {
  test('each configuration gets its own value, asked for in any order', () => {
    const a = Object.freeze({ publicCacheMaxAgeSeconds: 60, publicCacheStaleSeconds: 30 });
    const b = Object.freeze({ publicCacheMaxAgeSeconds: 0, publicCacheStaleSeconds: 30 });
    const c = Object.freeze({ publicCacheMaxAgeSeconds: 10, publicCacheStaleSeconds: 0 });
    for (let round = 0; round < 2; round++) {
      assert.equal(publicCacheControl(a), 'public, max-age=60, stale-while-revalidate=30');
      assert.equal(publicCacheControl(b), 'public, no-cache');
      assert.equal(publicCacheControl(a), 'public, max-age=60, stale-while-revalidate=30');
      assert.equal(publicCacheControl(c), 'public, max-age=10');
    }
  });
});

describe('TaggedBody: the ETag of a rendered body, made when first asked for', () => {
  test('a SHA-1 of the UTF-8 bytes, the same every time it is asked for, another for any other body', () => {
    const body = '<services><service><svcName>Zoë</svcName></service></services>';
    const tagged = new TaggedBody(body);
    assert.equal(tagged.etag, `"${createHash('sha1').update(Buffer.from(body, 'utf8')).digest('base64url')}"`);
    assert.equal(tagged.etag, etagOf(body));
    assert.equal(tagged.etag, tagged.etag);
    assert.match(tagged.etag, ETAG);
    // Bodies of the same length that differ in one character, and a Buffer of the same bytes.
    const others = ['<services><service><svcName>Zoe</svcName></service></services>', `${body.slice(0, -1)}X`, ''];
    const tags = new Set([tagged.etag, ...others.map((o) => new TaggedBody(o).etag)]);
    assert.equal(tags.size, 1 + others.length);
    assert.equal(etagOf(Buffer.from(body, 'utf8')), tagged.etag);
  });

  test('its bytes are the UTF-8 of the text, encoded once, in memory of their own; the text reads the same', () => {
    const body = '<services><service><svcName>Zoë 🦊</svcName></service></services>';
    const tagged = new TaggedBody(body);
    const bytes = tagged.payload;
    assert.ok(Buffer.isBuffer(bytes));
    assert.deepEqual(bytes, Buffer.from(body, 'utf8'));
    // The same Buffer every time: a kept answer is encoded once, not once per request.
    assert.equal(tagged.payload, bytes);
    // Not a slice of Node's shared pool, which a kept answer would hold whole.
    assert.equal(bytes.byteOffset, 0);
    assert.equal(bytes.buffer.byteLength, bytes.length);
    // The budget counts bytes, not characters: four characters of two bytes each count four more than four of one.
    assert.equal(new TaggedBody('éééé').size - new TaggedBody('eeee').size, 4);
    assert.ok(tagged.size >= Buffer.byteLength(body));
    assert.equal(tagged.body, body);
    assert.equal(tagged.etag, etagOf(body));
    assert.equal((new TaggedBody('').payload as Buffer).length, 0);
  });

  test('a body the answer cache will not keep is sent as its text, under the same ETag as its bytes', () => {
    const body = '<services><service><svcName>Zoë 🦊</svcName></service></services>';
    const once = new TaggedBody(body, false);
    // No bytes of its own made for one request: Node writes the text after the headers.
    assert.equal(once.payload, body);
    assert.equal(once.body, body);
    assert.equal(once.etag, new TaggedBody(body).etag);
    assert.equal(once.etag, etagOf(Buffer.from(body, 'utf8')));
  });
});

describe('return_profile and service_details', () => {
  test('return_profile: public without proof, private with the api_token', async () => {
    const path = `/api/return_profile/${P.apiKey}/alice/public`;
    const etag = assertPublic((await get(path)).res, 'Accept, Origin');
    await assertRevalidates(path, etag);
    const proven = await post(path, { api_token: P.apiToken });
    assert.equal(proven.res.status, 200);
    assertPrivate(proven.res);
  });

  test('service_details: public on GET, its ETag kept with the rendered catalogue; private on POST', async () => {
    const path = `/api/service_details/${P.apiKey}/github`;
    const first = assertPublic((await get(path)).res, 'Accept, Origin');
    assert.equal(assertPublic((await get(path)).res, 'Accept, Origin'), first);
    await assertRevalidates(path, first);
    assertPrivate((await post(path, { api_token: P.apiToken })).res);
  });
});

describe('the widget', () => {
  test('signed or not, its answer is private, no-store', async () => {
    const exp = Math.floor(t.clock.now() / 1000) + 600;
    const key = createHash('sha256').update(P.apiToken).digest('hex');
    const sig = createHmac('sha256', key).update(`${P.apiKey}:alice:${exp}`).digest('hex');
    for (const query of [`?exp=${exp}&sig=${sig}`, '']) {
      const { res } = await get(`/api/service_collection_widget/${P.apiKey}/alice/TRUE${query}`);
      assert.equal(res.status, 200, query);
      assertPrivate(res);
      assert.equal(res.headers.get('etag'), null);
    }
  });
});

describe('Gravatar-compatible reads and the public profile page', () => {
  test('/v3/profiles and /avatar: public with an ETag and 304; a Bearer token makes the profile private', async () => {
    const sha = createHash('sha256').update('alice@example.org').digest('hex');
    const profile = `/v3/profiles/${sha}`;
    await assertRevalidates(profile, assertPublic((await get(profile)).res, 'Authorization'));
    const proven = await get(profile, { authorization: `Bearer ${P.apiToken}` });
    assert.equal(proven.res.status, 200);
    assertPrivate(proven.res);
    const avatar = `/avatar/${sha}?s=64`;
    await assertRevalidates(avatar, assertPublic((await get(avatar)).res, null));
  });

  test('/u/{userId}: public for anyone without a session (Vary: Cookie), private, no-store with one', async () => {
    const first = await get('/u/alice');
    const etag = assertPublic(first.res, 'Cookie');
    assert.equal(first.res.headers.getSetCookie().length, 0, 'a page a cache keeps sets no cookie');
    await assertRevalidates('/u/alice', etag);
    const client = new SiteClient(t.baseUrl);
    assert.equal((await client.logIn('alice@example.org', 'alice has a long password')).status, 303);
    const own = await client.get('/u/alice');
    assert.equal(own.res.status, 200);
    assertPrivate(own.res);
    assert.equal(own.res.headers.get('etag'), null);
    assert.match(own.body, /alice/);
    // Where she can opt out (the account's Sharing page), it says how long caches may still show her.
    const account = await client.get('/account/sharing');
    assert.equal(account.res.status, 200);
    assert.match(account.body, /copies that web caches in between \(a CDN, a proxy\) made of your public answers may still be shown for up to 2 minutes\./);
  });
});

describe('a person who hides', () => {
  test('is not answered from idsvc after the change, whatever the client holds; errors are not stored', async () => {
    const sha = createHash('sha256').update('hilda@example.org').digest('hex');
    const reads: [string, string][] = [
      [`/api/return_services/${P.apiKey}/hilda/public`, 'Accept, Origin'],
      [`/api/return_profile/${P.apiKey}/hilda/public`, 'Accept, Origin'],
      [`/v3/profiles/${sha}`, 'Authorization'],
      ['/u/hilda', 'Cookie'],
    ];
    const held = new Map<string, string>();
    for (const [path, vary] of reads) {
      // Read until the answer cache keeps and serves it: the change must reach memory too.
      for (let i = 0; i < 3; i++) held.set(path, assertPublic((await get(path)).res, vary));
    }
    const avatar = `/avatar/${sha}?s=64`;
    const avatarTag = assertPublic((await get(avatar)).res, null);
    await setOptIn(t.ctx, (await findUserByUserId(t.ctx.db, 'hilda'))!, false);
    for (const [path] of reads) {
      const { res, body } = await get(path, { 'if-none-match': held.get(path)! });
      assert.equal(res.status, 404, path);
      assert.equal(res.headers.get('cache-control'), 'no-store', path);
      assert.equal(res.headers.get('etag'), null, path);
      assert.doesNotMatch(body, /hilda-gl/);
    }
    // The avatar falls back to the neutral picture: another answer, so the held ETag is no 304.
    const after = await get(avatar, { 'if-none-match': avatarTag });
    assert.equal(after.res.status, 200);
    assert.notEqual(assertPublic(after.res, null), avatarTag);
  });
});

describe('settings', () => {
  test('PUBLIC_CACHE_MAX_AGE and PUBLIC_CACHE_STALE set the header; a max-age of 0 makes every cache ask first', async () => {
    for (const [env, expected] of [
      [{ PUBLIC_CACHE_MAX_AGE: '30', PUBLIC_CACHE_STALE: '0' }, 'public, max-age=30'],
      [{ PUBLIC_CACHE_MAX_AGE: '0' }, 'public, no-cache'],
    ] as const) {
      const other = await startTestApp(env);
      try {
        const key = (await other.partner()).apiKey;
        const res = await fetch(`${other.baseUrl}/api/service_details/${key}/github`);
        assert.equal(res.status, 200);
        assert.equal(res.headers.get('cache-control'), expected);
        assert.match(res.headers.get('etag') ?? '', ETAG);
      } finally {
        await other.close();
      }
    }
    // What the account page says follows the settings.
    assert.match(cacheDelay(30), /for up to 30 seconds\.$/);
    assert.match(cacheDelay(180), /for up to 3 minutes\.$/);
    assert.match(cacheDelay(0), /must ask us first, so they stop too\.$/);
  });
});

// Gravatar-compatible profiles through HTTP (issue 18.3), on SQLite and PostgreSQL: Gravatar's field
// names and types, the visibility rules of the partner API, what authentication adds, caching,
// CORS and the request budget.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { emailHashes } from '../../src/domain/identifiers.js';
import type { ProfileField } from '../../src/domain/profile.js';
import { findCentralIdentity, setVerifiedMark } from '../../src/repositories/central-identities.js';
import { updatePartner } from '../../src/repositories/partners.js';
import { setProvenEmail, setUserFlags, updateProfile, findUserByRef } from '../../src/repositories/users.js';
import { setCentralIdentity } from '../../src/services/central.js';
import { startTestApp, type TestApp } from '../helpers/app.js';

let t: TestApp;
let partner: Awaited<ReturnType<TestApp['partner']>>;

const sha = (email: string) => emailHashes(email).sha256;
const md5 = (email: string) => emailHashes(email).md5;

async function identity(userRef: number, svcId: string, usrSvcId: string, verified: boolean): Promise<void> {
  const user = (await findUserByRef(t.ctx.db, userRef))!;
  const svc = (await t.ctx.catalogue.get()).byId.get(svcId)!;
  await t.ctx.db.write((tx) => setCentralIdentity(tx, user, svc, usrSvcId, { partnerId: null }, t.clock.now()));
  if (!verified) return;
  const row = (await findCentralIdentity(t.ctx.db, userRef, svcId))!;
  await t.ctx.db.write((w) => setVerifiedMark(w, row.id, { verified: true, verified_by: 'operator', verified_at: t.clock.now() }));
}

async function profile(t: TestApp, id: string, headers: Record<string, string> = {}): Promise<{ res: Response; body: Record<string, unknown> }> {
  const res = await fetch(`${t.baseUrl}/v3/profiles/${id}?source=hovercard`, { headers });
  return { res, body: (await res.json()) as Record<string, unknown> };
}

const bearer = () => ({ Authorization: `Bearer ${partner.apiToken}` });

let alice: { id: number; userId: string };

before(async () => {
  t = await startTestApp();
  partner = await t.partner();
  alice = await t.user({ email: 'Alice@Example.org', userId: 'alice' });
  const publicFields: ProfileField[] = ['firstName', 'city', 'country', 'bio'];
  await t.ctx.db.write((w) =>
    updateProfile(
      w,
      alice.id,
      {
        firstName: 'Alice',
        lastName: 'Secretname',
        nickname: 'ally',
        street: '1 Hidden Road',
        city: 'Lyon',
        region: 'Rhône',
        country: 'France',
        bio: 'Writes code.',
      },
      publicFields,
      t.clock.now(),
    ),
  );
  // Five verified identities (one more than Gravatar lists without authentication) and two unverified.
  for (const [svcId, usr] of [
    ['twitter', 'alice_tw'],
    ['github', 'alice-gh'],
    ['gitlab', 'alicegl'],
    ['keybase', 'alicekb'],
    ['reddit', 'alice_rd'],
  ] as const) {
    await identity(alice.id, svcId, usr, true);
  }
  await identity(alice.id, 'medium', 'alicemd', false);
  await identity(alice.id, 'npm', 'alicenpm', false);
});

after(async () => {
  await t?.close();
});

describe('the profile', () => {
  test("carries Gravatar's required fields with Gravatar's types, from the public fields only", async () => {
    const { res, body } = await profile(t, sha('alice@example.org'));
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('content-type'), 'application/json; charset=utf-8');
    // Gravatar's v3 Profile schema: these are required, all strings but the array.
    const strings = [
      'hash',
      'display_name',
      'profile_url',
      'avatar_url',
      'avatar_alt_text',
      'location',
      'description',
      'job_title',
      'company',
      'pronunciation',
      'pronouns',
    ];
    for (const k of strings) assert.equal(typeof body[k], 'string', k);
    assert.ok(Array.isArray(body.verified_accounts));
    assert.deepEqual(Object.keys(body).sort(), [...strings, 'verified_accounts'].sort(), 'no authenticated-only field without authentication');
    assert.equal(body.hash, sha('alice@example.org'));
    assert.equal(body.display_name, 'Alice');
    assert.equal(body.profile_url, `${t.config.baseUrl}/u/alice`);
    assert.equal(body.avatar_url, `${t.config.baseUrl}/avatar/${sha('alice@example.org')}`);
    assert.equal(body.location, 'Lyon, France');
    assert.equal(body.description, 'Writes code.');
    for (const k of ['job_title', 'company', 'pronunciation', 'pronouns']) assert.equal(body[k], '', k);
    const text = JSON.stringify(body);
    for (const secret of ['Secretname', 'Hidden Road', 'Rhône', 'ally', 'alice@example.org', 'alicemd']) assert.ok(!text.includes(secret), secret);
  });

  test('lists at most 4 verified accounts without authentication, by service name, in VerifiedAccount form', async () => {
    const { body } = await profile(t, sha('alice@example.org'));
    const accounts = body.verified_accounts as Record<string, unknown>[];
    assert.deepEqual(
      accounts.map((a) => a.service_type),
      ['github', 'gitlab', 'keybase', 'reddit'],
    );
    // Gravatar's fields, then idsvc's evidence (an operator's mark: no evidence URL, never checked).
    assert.deepEqual(accounts[0], {
      service_type: 'github',
      service_label: 'GitHub',
      service_icon: 'https://www.github.com/favicon.ico',
      url: 'https://www.github.com/alice-gh',
      is_hidden: false,
      verified_by: 'operator',
      verified_at: '2026-01-01T00:00:00.000Z',
    });
  });

  test("a partner's api_token as Bearer lists every verified account and adds the authenticated fields", async () => {
    const { res, body } = await profile(t, sha('alice@example.org'), bearer());
    assert.equal(res.status, 200);
    assert.deepEqual(
      (body.verified_accounts as { service_type: string }[]).map((a) => a.service_type),
      ['github', 'gitlab', 'keybase', 'reddit', 'twitter'],
    );
    assert.equal(body.number_verified_accounts, 5);
    assert.deepEqual(body.links, [
      { label: 'Medium', url: 'https://medium.com/@alicemd' },
      { label: 'npm', url: 'https://www.npmjs.com/~alicenpm' },
    ]);
    assert.equal(body.first_name, 'Alice');
    assert.equal('last_name' in body, false, 'a private field stays private');
    assert.equal(body.last_profile_edit, null);
    assert.equal(body.registration_date, '2026-01-01T00:00:00Z');
    assert.equal(res.headers.get('cache-control'), 'private, no-store');
    assert.ok(!t.logs.join('').includes(partner.apiToken), 'the token is never logged');
  });

  test('by MD5 and by userId; the address hash only for a user who is discoverable by address', async () => {
    assert.equal((await profile(t, md5('alice@example.org'))).body.hash, sha('alice@example.org'));
    const byUserId = (await profile(t, 'alice')).body;
    assert.equal(byUserId.display_name, 'Alice');
    assert.equal(byUserId.hash, '');
    assert.equal(byUserId.avatar_url, `${t.config.baseUrl}/avatar/alice`);
    await t.user({ email: 'dora@example.org', userId: 'dora', discoverable: true });
    const dora = (await profile(t, 'dora')).body;
    assert.equal(dora.hash, sha('dora@example.org'));
    assert.equal(dora.display_name, 'dora');
    assert.deepEqual(dora.verified_accounts, []);
  });

  test('unknown, hidden, unproven and malformed identifiers answer the same 404, with or without authentication', async () => {
    const hidden = await t.user({ email: 'hidden@example.org', userId: 'hiddenuser' });
    await t.ctx.db.write((w) => setUserFlags(w, hidden.id, { optedIn: false }, t.clock.now()));
    await t.user({ email: 'unproven@example.org', userId: 'unproven', proven: false });
    const ids = [
      sha('nobody@example.org'),
      'nobody',
      sha('hidden@example.org'),
      md5('hidden@example.org'),
      'hiddenuser',
      sha('unproven@example.org'),
      'unproven',
      'NOT*AN*ID',
    ];
    for (const headers of [{}, bearer()]) {
      for (const id of ids) {
        const { res, body } = await profile(t, id, headers);
        assert.equal(res.status, 404, id);
        assert.deepEqual(body, { error: 'Profile not found', code: 'not_found' }, id);
        assert.equal(res.headers.get('access-control-allow-origin'), '*');
        assert.equal(res.headers.get('cache-control'), 'no-store');
      }
    }
  });

  test('follows an e-mail change: the new address hash names the user, the old one nobody', async () => {
    const bob = await t.user({ email: 'bob@example.org', userId: 'bob' });
    assert.equal((await profile(t, sha('bob@example.org'))).res.status, 200);
    await t.ctx.db.write((tx) => setProvenEmail(tx, bob.id, 'Robert@Example.org', t.clock.now()));
    assert.equal((await profile(t, sha('bob@example.org'))).res.status, 404);
    const now = await profile(t, sha('robert@example.org'));
    assert.equal(now.res.status, 200);
    assert.equal(now.body.hash, sha('robert@example.org'));
  });

  test('a token that is not a valid api_token is refused; a suspended partner is forbidden', async () => {
    for (const header of ['Bearer not-a-token', 'Basic abc', `Bearer ${partner.apiKey}`]) {
      const { res, body } = await profile(t, sha('alice@example.org'), { Authorization: header });
      assert.equal(res.status, 401, header);
      assert.equal(body.code, 'invalid_api_token');
    }
    const other = await t.partner();
    await t.ctx.db.write((w) => updatePartner(w, other.id, { suspended: true }, t.clock.now()));
    const { res, body } = await profile(t, sha('alice@example.org'), { Authorization: `Bearer ${other.apiToken}` });
    assert.equal(res.status, 403);
    assert.equal(body.code, 'forbidden');
  });
});

describe('caching and CORS', () => {
  test('a short public cache with an ETag; If-None-Match gives 304; a change gives a new ETag', async () => {
    const id = sha('alice@example.org');
    const first = await fetch(`${t.baseUrl}/v3/profiles/${id}`);
    assert.equal(first.headers.get('cache-control'), 'public, max-age=60, stale-while-revalidate=60');
    assert.equal(first.headers.get('vary'), 'Authorization');
    const etag = first.headers.get('etag');
    assert.match(etag ?? '', /^"[A-Za-z0-9_-]+"$/);
    const again = await fetch(`${t.baseUrl}/v3/profiles/${id}`, { headers: { 'If-None-Match': etag! } });
    assert.equal(again.status, 304);
    assert.equal(await again.text(), '');
    assert.equal(again.headers.get('etag'), etag);
    const weak = await fetch(`${t.baseUrl}/v3/profiles/${id}`, { headers: { 'If-None-Match': `"other", W/${etag}` } });
    assert.equal(weak.status, 304);
    await t.ctx.db.write((w) => updateProfile(w, alice.id, { bio: 'Writes more code.' }, undefined, t.clock.now()));
    const changed = await fetch(`${t.baseUrl}/v3/profiles/${id}`, { headers: { 'If-None-Match': etag! } });
    assert.equal(changed.status, 200);
    assert.notEqual(changed.headers.get('etag'), etag);
    assert.equal(((await changed.json()) as { description: string }).description, 'Writes more code.');
  });

  test('readable from any origin, with a preflight for the Authorization header', async () => {
    const res = await fetch(`${t.baseUrl}/v3/profiles/alice`, { headers: { Origin: 'https://any.example' } });
    assert.equal(res.headers.get('access-control-allow-origin'), '*');
    assert.match(res.headers.get('access-control-expose-headers') ?? '', /X-RateLimit-Remaining/);
    const pre = await fetch(`${t.baseUrl}/v3/profiles/alice`, {
      method: 'OPTIONS',
      headers: { Origin: 'https://any.example', 'Access-Control-Request-Method': 'GET', 'Access-Control-Request-Headers': 'authorization' },
    });
    assert.equal(pre.status, 204);
    assert.equal(pre.headers.get('access-control-allow-origin'), '*');
    assert.match(pre.headers.get('access-control-allow-headers') ?? '', /Authorization/i);
  });
});

describe('the request budget', () => {
  let limited: TestApp;
  before(async () => {
    limited = await startTestApp({ RATE_LIMIT_PER_ADDRESS: '3' });
    await limited.user({ email: 'carol@example.org', userId: 'carol' });
  });
  after(async () => {
    await limited?.close();
  });

  test("per client address without a token: X-RateLimit-* on every answer, then 429 in Gravatar's form", async () => {
    const before = Math.floor(Date.now() / 1000);
    const seen: [number, string | null][] = [];
    for (const id of [sha('carol@example.org'), 'nobody', 'carol']) {
      const { res } = await profile(limited, id);
      seen.push([res.status, res.headers.get('x-ratelimit-remaining')]);
      assert.equal(res.headers.get('x-ratelimit-limit'), '3');
    }
    assert.deepEqual(seen, [
      [200, '2'],
      [404, '1'],
      [200, '0'],
    ]);
    const { res, body } = await profile(limited, 'carol');
    assert.equal(res.status, 429);
    assert.deepEqual(body, { error: 'Too many requests; retry later', code: 'rate_limit_exceeded' });
    assert.equal(res.headers.get('x-ratelimit-remaining'), '0');
    const reset = Number(res.headers.get('x-ratelimit-reset'));
    assert.ok(Number.isInteger(reset) && reset >= before && reset <= Math.ceil(Date.now() / 1000) + 60, String(reset));
    assert.ok(Number(res.headers.get('retry-after')) >= 1);
    assert.equal(res.headers.get('access-control-allow-origin'), '*');
  });

  test("with a token, the partner's own budget, not the address's", async () => {
    const p = await limited.partner({ rateLimitPerMinute: 2 });
    const auth = { Authorization: `Bearer ${p.apiToken}` };
    // The address's budget is used up by the test before; the partner's is not.
    const statuses: number[] = [];
    for (let i = 0; i < 3; i++) statuses.push((await profile(limited, 'carol', auth)).res.status);
    assert.deepEqual(statuses, [200, 200, 429]);
  });
});

// The letter avatars behind a Gravatar-compatible profile's avatar_url (issue 18.3), through HTTP on
// SQLite and PostgreSQL: initials, sizes, d=404, and nothing told about users who are not visible.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { emailHashes } from '../../src/domain/identifiers.js';
import { setUserFlags, updateProfile } from '../../src/repositories/users.js';
import { startTestApp, type TestApp } from '../helpers/app.js';

let t: TestApp;
const sha = (email: string) => emailHashes(email).sha256;

async function avatar(path: string, headers: Record<string, string> = {}): Promise<{ res: Response; text: string }> {
  const res = await fetch(`${t.baseUrl}/avatar/${path}`, { headers });
  return { res, text: await res.text() };
}

before(async () => {
  t = await startTestApp();
  const alice = await t.user({ email: 'alice@example.org', userId: 'alice' });
  await t.ctx.db.write((w) => updateProfile(w, alice.id, { firstName: 'Alice', lastName: 'Example' }, ['firstName', 'lastName'], t.clock.now()));
  const odd = await t.user({ email: 'odd@example.org', userId: 'odd' });
  await t.ctx.db.write((w) => updateProfile(w, odd.id, { nickname: '<b>&co' }, ['nickname'], t.clock.now()));
  const hidden = await t.user({ email: 'hidden@example.org', userId: 'hidden' });
  await t.ctx.db.write((w) => setUserFlags(w, hidden.id, { optedIn: false }, t.clock.now()));
  await t.user({ email: 'unproven@example.org', userId: 'unproven', proven: false });
});

after(async () => {
  await t?.close();
});

test("an SVG of the initials of the user's public name, 80 pixels unless s= says otherwise", async () => {
  const { res, text } = await avatar(sha('alice@example.org'));
  assert.equal(res.status, 200);
  assert.equal(res.headers.get('content-type'), 'image/svg+xml');
  assert.match(text, /^<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg" width="80" height="80"/);
  assert.match(text, />AE<\/text>/);
  assert.equal(res.headers.get('access-control-allow-origin'), '*');
  assert.equal(res.headers.get('cross-origin-resource-policy'), 'cross-origin');
  for (const [query, size] of [
    ['s=256', 256],
    ['size=40', 40],
    ['s=5000', 2048],
    ['s=0', 1],
    ['s=big', 80],
  ] as const) {
    const sized = await avatar(`${sha('alice@example.org')}?${query}&d=retro&r=pg&initials=zz`);
    assert.match(sized.text, new RegExp(`width="${size}" height="${size}"`), query);
  }
  // By userId and by MD5, and with an image suffix, the same picture.
  for (const path of ['alice', emailHashes('alice@example.org').md5, `${sha('alice@example.org')}.png`]) {
    assert.equal((await avatar(path)).text, text, path);
  }
});

test('initials are text, never markup', async () => {
  const { text } = await avatar(sha('odd@example.org'));
  assert.match(text, />&#60;<\/text>/);
  assert.match(text, /aria-label="&#60;b&#62;&#38;co"/);
  assert.ok(!text.includes('<b>'));
});

test('d=404: 404 for unknown, hidden and unproven alike; otherwise one neutral picture for all of them', async () => {
  const nobody = [sha('nobody@example.org'), sha('hidden@example.org'), 'hidden', sha('unproven@example.org'), 'unproven', 'not*valid'];
  const answers = new Set<string>();
  for (const id of nobody) {
    const missing = await avatar(`${id}?d=404`);
    assert.equal(missing.res.status, 404, id);
    assert.deepEqual(JSON.parse(missing.text), { error: 'Profile not found', code: 'not_found' });
    const neutral = await avatar(`${id}?s=100`);
    assert.equal(neutral.res.status, 200, id);
    answers.add(`${neutral.res.headers.get('etag')} ${neutral.res.headers.get('cache-control')} ${neutral.text}`);
    assert.equal((await avatar(`${id}?default=404`)).res.status, 404);
  }
  assert.equal(answers.size, 1, 'every one of them gets the same bytes and headers');
  assert.doesNotMatch([...answers][0]!, /<text/);
  // A visible user's avatar is there whatever d= says.
  assert.equal((await avatar(`${sha('alice@example.org')}?d=404`)).res.status, 200);
});

test('cacheable for a minute (and another stale while revalidating) with an ETag; If-None-Match gives 304', async () => {
  const first = await avatar(`${sha('alice@example.org')}?s=64`);
  assert.equal(first.res.headers.get('cache-control'), 'public, max-age=60, stale-while-revalidate=60');
  const etag = first.res.headers.get('etag')!;
  const again = await avatar(`${sha('alice@example.org')}?s=64`, { 'If-None-Match': etag });
  assert.equal(again.res.status, 304);
  assert.equal(again.text, '');
  const otherSize = await avatar(`${sha('alice@example.org')}?s=65`, { 'If-None-Match': etag });
  assert.equal(otherSize.res.status, 200);
});

test('avatars have their own per-address budget, with 429 and X-RateLimit-* headers', async () => {
  const limited = await startTestApp({ RATE_LIMIT_PER_ADDRESS: '2' });
  try {
    const statuses: [number, string | null][] = [];
    for (let i = 0; i < 3; i++) {
      const res = await fetch(`${limited.baseUrl}/avatar/${sha('x@example.org')}`);
      statuses.push([res.status, res.headers.get('x-ratelimit-remaining')]);
      await res.arrayBuffer();
    }
    assert.deepEqual(statuses, [
      [200, '1'],
      [200, '0'],
      [429, '0'],
    ]);
    // Profiles count separately: a page of avatars does not use up its hovercards.
    assert.equal((await fetch(`${limited.baseUrl}/v3/profiles/nobody`)).status, 404);
  } finally {
    await limited.close();
  }
});

// Photo avatars, through HTTP on SQLite and PostgreSQL: a picture uploaded on the site's photo page
// is decoded, cropped square, stripped of metadata and served at /avatar/{hash} in Gravatar's sizes
// with a strong ETag, only while the account is visible; every `d=` default answers alike for
// unknown and hidden accounts; bad uploads (not a picture, broken, too large, a decompression bomb)
// are refused with a message that says why, and nothing is stored.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import sharp from 'sharp';
import { emailHashes } from '../../src/domain/identifiers.js';
import { PHOTO_UPLOAD_MAX_BYTES } from '../../src/gravatar/photos.js';
import { setUserFlags } from '../../src/repositories/users.js';
import type { TestApp } from '../helpers/app.js';
import { SiteClient, startSiteApp } from './../site/helpers.js';
import { pngBomb } from '../../bench/abuse-cases.js';

let t: TestApp;
let alice: { id: number };
const sha = (email: string) => emailHashes(email).sha256;
const ALICE = sha('alice@example.org');

async function get(path: string, headers: Record<string, string> = {}) {
  const res = await fetch(`${t.baseUrl}${path}`, { headers });
  return { res, bytes: Buffer.from(await res.arrayBuffer()) };
}

/** The photo page's form as a browser sends it: multipart, with the session's cookie and CSRF token. */
async function upload(client: SiteClient, bytes: Buffer, type: string, options: { csrf?: boolean } = {}) {
  const form = new FormData();
  if (options.csrf !== false) form.append('_csrf', await client.csrf('/account/photo'));
  form.append('photo', new Blob([new Uint8Array(bytes)], { type }), 'picture');
  const cookie = [...client.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
  const res = await fetch(`${t.baseUrl}/account/photo`, { method: 'POST', body: form, redirect: 'manual', headers: { cookie } });
  return { res, body: await res.text() };
}

/** A 300 × 200 picture: red, green and blue thirds from left to right, with EXIF that must not survive. */
function stripes(): Promise<Buffer> {
  const third = (r: number, g: number, b: number) => ({ input: { create: { width: 100, height: 200, channels: 3 as const, background: { r, g, b } } } });
  return sharp({ create: { width: 300, height: 200, channels: 3, background: '#000' } })
    .composite([
      { ...third(255, 0, 0), left: 0, top: 0 },
      { ...third(0, 255, 0), left: 100, top: 0 },
      { ...third(0, 0, 255), left: 200, top: 0 },
    ])
    .jpeg()
    .withExif({ IFD0: { Copyright: 'secret-camera-owner', Make: 'SecretCam' } })
    .toBuffer();
}

async function pixel(image: Buffer, x: number, y: number): Promise<number[]> {
  const { data, info } = await sharp(image).raw().toBuffer({ resolveWithObject: true });
  const at = (y * info.width + x) * info.channels;
  return [...data.subarray(at, at + 3)];
}

const near = (actual: number[], expected: number[]) => actual.every((v, i) => Math.abs(v - expected[i]!) < 40);

async function loggedIn(email: string, userId: string): Promise<SiteClient> {
  const client = new SiteClient(t.baseUrl);
  const res = await client.logIn(email, 'correct horse battery');
  assert.equal(res.status, 303, `${userId} logs in`);
  return client;
}

before(async () => {
  t = await startSiteApp();
  alice = await t.user({ email: 'alice@example.org', userId: 'alice' });
  await t.user({ email: 'bob@example.org', userId: 'bob' });
  await t.user({ email: 'carol@example.org', userId: 'carol' });
});

after(async () => {
  await t?.close();
});

test('an uploaded JPEG is served square, re-encoded without metadata, at Gravatar sizes, with a strong ETag', async () => {
  const client = await loggedIn('alice@example.org', 'alice');
  const page = await client.get('/account/photo');
  assert.equal(page.res.status, 200);
  assert.match(page.body, /enctype="multipart\/form-data"/);
  assert.match(page.body, /<label for="photo">Picture<\/label>/);
  assert.doesNotMatch(page.body, /Remove photo/);

  const profile = async () => (await (await fetch(`${t.baseUrl}/v3/profiles/${ALICE}`)).json()) as { avatar_url: string; avatar_alt_text: string };
  assert.equal((await profile()).avatar_alt_text, "alice's initials");
  const { res } = await upload(client, await stripes(), 'image/jpeg');
  assert.equal(res.status, 303);
  assert.deepEqual(await profile(), { ...(await profile()), avatar_url: `${t.baseUrl}/avatar/${ALICE}`, avatar_alt_text: "alice's photo" });
  assert.equal(res.headers.get('location'), '/account/photo?msg=saved');
  const saved = await client.get('/account/photo?msg=saved');
  assert.match(saved.body, /Your photo is saved/);
  assert.match(saved.body, /Remove photo/);

  const { res: avatarRes, bytes } = await get(`/avatar/${ALICE}`);
  assert.equal(avatarRes.status, 200);
  assert.equal(avatarRes.headers.get('content-type'), 'image/jpeg');
  assert.equal(avatarRes.headers.get('cache-control'), 'public, max-age=60, stale-while-revalidate=60');
  assert.equal(avatarRes.headers.get('access-control-allow-origin'), '*');
  const meta = await sharp(bytes).metadata();
  assert.deepEqual([meta.format, meta.width, meta.height], ['jpeg', 80, 80]);
  assert.equal(meta.exif, undefined, 'no EXIF');
  assert.ok(!bytes.toString('latin1').includes('secret-camera-owner'));
  // Cropped from the centre of 300 × 200: red at the left edge, green in the middle, blue at the right.
  assert.ok(near(await pixel(bytes, 3, 40), [255, 0, 0]), 'left edge red');
  assert.ok(near(await pixel(bytes, 40, 40), [0, 255, 0]), 'centre green');
  assert.ok(near(await pixel(bytes, 76, 40), [0, 0, 255]), 'right edge blue');

  for (const [query, size] of [
    ['s=32', 32],
    ['size=200', 200],
    ['s=5000', 2048],
    ['s=nonsense', 80],
  ] as const) {
    const sized = await get(`/avatar/${ALICE}.jpg?${query}`);
    assert.equal(sized.res.status, 200, query);
    const m = await sharp(sized.bytes).metadata();
    assert.deepEqual([m.width, m.height], [size, size], query);
  }
  // The public page shows it as the h-card's photo.
  assert.match((await client.get('/u/alice')).body, new RegExp(`<img class="avatar photo u-photo" src="${t.baseUrl}/avatar/alice\\?s=160"`));
  // By userId and MD5 too, and whatever d= says: a visible user's photo.
  for (const id of ['alice', emailHashes('alice@example.org').md5, `${ALICE}?d=404`, `${ALICE}?d=identicon`]) {
    assert.deepEqual((await get(`/avatar/${id}`)).bytes, bytes, id);
  }

  const etag = avatarRes.headers.get('etag')!;
  assert.match(etag, /^"[^"]+"$/, 'a strong ETag');
  const again = await get(`/avatar/${ALICE}`, { 'If-None-Match': etag });
  assert.equal(again.res.status, 304);
  assert.equal(again.bytes.length, 0);
  assert.equal((await get(`/avatar/${ALICE}?s=81`, { 'If-None-Match': etag })).res.status, 200);

  // A new photo changes the bytes and the ETag at once: no answer from an old cached size.
  const png = await sharp({ create: { width: 64, height: 64, channels: 4, background: { r: 0, g: 0, b: 0, alpha: 0 } } })
    .png()
    .toBuffer();
  assert.equal((await upload(client, png, 'image/png')).res.status, 303);
  const after = await get(`/avatar/${ALICE}`, { 'If-None-Match': etag });
  assert.equal(after.res.status, 200);
  assert.notEqual(after.res.headers.get('etag'), etag);
  assert.ok(near(await pixel(after.bytes, 40, 40), [255, 255, 255]), 'transparency is flattened onto white');
});

test('WebP is accepted; remove goes back to the letter avatar', async () => {
  const client = await loggedIn('bob@example.org', 'bob');
  const webp = await sharp({ create: { width: 120, height: 90, channels: 3, background: '#00aa00' } })
    .webp()
    .toBuffer();
  assert.equal((await upload(client, webp, 'image/webp')).res.status, 303);
  const photo = await get(`/avatar/${sha('bob@example.org')}?s=90`);
  assert.equal(photo.res.headers.get('content-type'), 'image/jpeg');
  assert.deepEqual([(await sharp(photo.bytes).metadata()).width], [90]);

  const removed = await client.submit('/account/photo/remove');
  assert.equal(removed.res.status, 303);
  assert.equal(removed.res.headers.get('location'), '/account/photo?msg=removed');
  const letter = await get(`/avatar/${sha('bob@example.org')}`);
  assert.equal(letter.res.headers.get('content-type'), 'image/svg+xml');
  assert.match(letter.bytes.toString(), /<text[^>]*>B<\/text>/);
  assert.doesNotMatch((await client.get('/account/photo')).body, /Remove photo/);
});

test('d= defaults: 404, mp, identicon and blank, answered alike for unknown and hidden users; f=y forces them', async () => {
  const client = await loggedIn('carol@example.org', 'carol');
  const jpeg = await sharp({ create: { width: 50, height: 50, channels: 3, background: '#123456' } })
    .jpeg()
    .toBuffer();
  assert.equal((await upload(client, jpeg, 'image/jpeg')).res.status, 303);
  const carol = sha('carol@example.org');
  assert.equal((await get(`/avatar/${carol}`)).res.headers.get('content-type'), 'image/jpeg');
  // Carol opts out: her photo is gone from /avatar, which answers exactly as for an address nobody has.
  const carolRow = await t.ctx.db.kysely.selectFrom('users').select('id').where('user_id', '=', 'carol').executeTakeFirstOrThrow();
  await t.ctx.db.write((w) => setUserFlags(w, carolRow.id, { optedIn: false }, t.clock.now()));
  // Her own preview on the photo page still shows it.
  const preview = await client.get('/account/photo/image');
  assert.equal(preview.res.status, 200);
  assert.equal(preview.res.headers.get('content-type'), 'image/jpeg');
  assert.match(preview.res.headers.get('cache-control') ?? '', /no-store/);

  const unknownSameShape = sha('nobody@example.org');
  const answer = async (id: string, query: string) => {
    const { res, bytes } = await get(`/avatar/${id}?${query}`);
    return {
      status: res.status,
      type: res.headers.get('content-type'),
      cache: res.headers.get('cache-control'),
      etag: res.headers.get('etag'),
      body: bytes.toString(),
    };
  };
  for (const query of ['', 's=120', 'd=mp', 'd=identicon&s=40', 'default=identicon', 'd=blank', 'd=404', 'd=retro', 'd=https%3A%2F%2Fevil.example%2Fx.png']) {
    const hidden = await answer(carol, query);
    const unknown = await answer(unknownSameShape, query);
    if (query.includes('identicon') || query.includes('retro')) {
      // Drawn from the identifier: the same kind of answer, a different pattern per address.
      assert.equal(hidden.type, 'image/svg+xml', query);
      assert.match(hidden.body, /aria-label="Identicon"/, query);
      assert.deepEqual({ ...hidden, body: '', etag: '' }, { ...unknown, body: '', etag: '' }, query);
      assert.notEqual(hidden.body, unknown.body, query);
      // …and the same pattern every time for one address.
      assert.equal((await answer(carol, query)).body, hidden.body, query);
    } else {
      assert.deepEqual(hidden, unknown, query);
    }
    if (query === 'd=404') assert.equal(hidden.status, 404);
    else assert.equal(hidden.status, 200, query);
  }
  assert.doesNotMatch((await answer(carol, 'd=blank')).body, /<rect|<path|<circle/);
  assert.match((await answer(carol, 'd=mp')).body, /<circle/);
  // Hidden and unknown userIds alike too.
  assert.deepEqual({ ...(await answer('carol', 'd=identicon')), body: '', etag: '' }, { ...(await answer('nobody', 'd=identicon')), body: '', etag: '' });

  // f=y: a visible user's picture is replaced by the default asked for.
  const forced = await answer(ALICE, 'f=y&d=identicon');
  assert.match(forced.body, /aria-label="Identicon"/);
  assert.equal((await answer(ALICE, 'forcedefault=y&d=404')).status, 404);
  await t.ctx.db.write((w) => setUserFlags(w, carolRow.id, { optedIn: true }, t.clock.now()));
  assert.equal((await get(`/avatar/${carol}`)).res.headers.get('content-type'), 'image/jpeg');
});

test('not a picture, a broken one, one too large or a decompression bomb: refused with a message, nothing stored', async () => {
  const user = await t.user({ email: 'dave@example.org', userId: 'dave' });
  const client = await loggedIn('dave@example.org', 'dave');
  const dave = sha('dave@example.org');
  const jpeg = await stripes();
  const cases: [string, Buffer, string, number, RegExp][] = [
    ['text', Buffer.from('hello, this is not a picture'), 'image/png', 400, /That file is not a picture idsvc can use\. Choose a JPEG, PNG or WebP picture\./],
    ['gif', Buffer.from('GIF89a\x01\x00\x01\x00\x00\x00\x00;', 'latin1'), 'image/gif', 400, /not a picture idsvc can use/],
    ['truncated JPEG', jpeg.subarray(0, 200), 'image/jpeg', 400, /could not be read as a JPEG picture/],
    ['bomb', pngBomb(), 'image/png', 413, /7000 × 6000 pixels \(42 megapixels\); at most 40 megapixels are accepted/],
    ['too large', Buffer.concat([jpeg, Buffer.alloc(PHOTO_UPLOAD_MAX_BYTES)]), 'image/jpeg', 413, /The picture is larger than 5 MB\. Choose a smaller one\./],
    // Far larger: refused from its Content-Length before it is parsed, the answer still whole.
    ['far too large', Buffer.alloc(12 * 1024 * 1024), 'image/jpeg', 413, /The picture is larger than 5 MB\. Choose a smaller one\./],
    ['empty', Buffer.alloc(0), 'image/jpeg', 400, /The file is empty/],
  ];
  for (const [name, bytes, type, status, message] of cases) {
    const { res, body } = await upload(client, bytes, type);
    assert.equal(res.status, status, `${name}: ${body.slice(0, 200)}`);
    assert.match(body, message, name);
    // Beside the form; the one refused unread gets the site's error page, saying the same.
    if (name !== 'far too large') assert.match(body, /role="alert"/, name);
  }
  assert.ok(pngBomb().length < 200_000, 'the bomb is small on the wire');
  const row = await t.ctx.db.kysely.selectFrom('avatar_photos').select('user_ref').where('user_ref', '=', user.id).executeTakeFirst();
  assert.equal(row, undefined, 'nothing stored');
  assert.equal((await get(`/avatar/${dave}`)).res.headers.get('content-type'), 'image/svg+xml');
});

test('the upload is a site form: without its CSRF token it is refused, and logged out it leads to the log-in page', async () => {
  const client = await loggedIn('alice@example.org', 'alice');
  const before = (await get(`/avatar/${ALICE}`)).res.headers.get('etag');
  const jpeg = await sharp({ create: { width: 40, height: 40, channels: 3, background: '#ff00ff' } })
    .jpeg()
    .toBuffer();
  const forged = await upload(client, jpeg, 'image/jpeg', { csrf: false });
  assert.equal(forged.res.status, 403);
  assert.match(forged.body, /did not come from this site/);
  assert.equal((await get(`/avatar/${ALICE}`)).res.headers.get('etag'), before);
  assert.equal((await new SiteClient(t.baseUrl).get('/account/photo')).res.headers.get('location'), '/login');
  assert.equal((await new SiteClient(t.baseUrl).get('/account/photo/image')).res.headers.get('location'), '/login');
  // The export carries the photo as stored: the re-encoded JPEG, no metadata.
  const exported = JSON.parse((await client.submit('/account/export')).body) as { photo: { dataUrl: string } | null };
  const stored = Buffer.from(exported.photo!.dataUrl.replace(/^data:image\/jpeg;base64,/, ''), 'base64');
  // Her last photo was 64 pixels square, so that size is the stored picture itself.
  assert.deepEqual(stored, (await get(`/avatar/${ALICE}?s=64`)).bytes);
  // Deleting the account deletes the photo.
  const rows = () => t.ctx.db.kysely.selectFrom('avatar_photos').select('user_ref').where('user_ref', '=', alice.id).execute();
  assert.equal((await rows()).length, 1);
  assert.equal((await client.submit('/account/delete', { confirm_user_id: 'alice' })).res.status, 303);
  assert.equal((await rows()).length, 0);
});

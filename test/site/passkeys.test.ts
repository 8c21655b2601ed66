// Passkeys through HTTP, on both databases, with a software authenticator standing in for the
// browser's: adding one (and the mail), logging in with it, every refusal reading alike (unknown
// passkey, replayed or cloned assertion, foreign origin), CSRF on each call, the limits, and removal
// (one's own only, mailed).
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { mailsTo } from '../helpers/mailbox.js';
import { SoftAuthenticator, type RegistrationOptions, type RequestOptions } from '../helpers/soft-authenticator.js';
import { unusedPort } from '../verification/servers.js';
import { insertPasskey, passkeysOfUser } from '../../src/repositories/passkeys.js';
import { relyingParty } from '../../src/services/passkeys.js';
import { findUserByUserId } from '../../src/repositories/users.js';
import { assertLogsClean, SiteClient, signUpConfirmed, startSiteApp } from './helpers.js';

const REFUSED = { error: 'That passkey did not log you in. Try again, or log in with your password.' };

let t: TestApp;
let origin: string;

before(async () => {
  const port = await unusedPort();
  origin = `http://localhost:${port}`;
  t = await startTestApp({ PORT: String(port), BASE_URL: origin, TRUST_PROXY: 'true' });
});
after(async () => t?.close());

let ips = 0;
/** A browser at an address of its own, so that one test's use of the limits per address leaves the others alone. */
const browser = () => new SiteClient(t.baseUrl, { 'x-forwarded-for': `10.30.${Math.floor(++ips / 250)}.${ips % 250}` });

let n = 0;
async function person(): Promise<{ client: SiteClient; email: string; userId: string; password: string }> {
  n++;
  const p = { email: `key.person${n}@example.org`, userId: `keyperson${n}`, password: `a long passphrase number ${n}` };
  const client = browser();
  const res = await signUpConfirmed(t, client, { email: p.email, user_id: p.userId, password: p.password });
  assert.equal(res.status, 303);
  return { client, ...p };
}

async function addPasskey(client: SiteClient, name: string, auth = new SoftAuthenticator('localhost', origin)) {
  const csrf = await client.csrf('/account/passkeys');
  const start = await client.postJson('/account/passkeys/options', { _csrf: csrf, name });
  assert.equal(start.res.status, 200, JSON.stringify(start.json));
  const done = await client.postJson('/account/passkeys/add', { _csrf: csrf, response: auth.register(start.json.options as RegistrationOptions) });
  return { auth, done };
}

async function logInWith(auth: SoftAuthenticator, p: { counter?: number; origin?: string } = {}, client = browser()) {
  const csrf = await client.csrf('/login');
  const start = await client.postJson('/login/passkey/options', { _csrf: csrf });
  assert.equal(start.res.status, 200);
  const response = auth.assert(start.json.options as RequestOptions, p);
  const answer = await client.postJson('/login/passkey', { _csrf: csrf, response });
  return { client, csrf, response, answer };
}

async function userRef(userId: string): Promise<number> {
  return (await findUserByUserId(t.ctx.db, userId))!.id;
}

describe('adding a passkey', () => {
  test('is kept with its name and time, shown on the page, and mailed to the account', async () => {
    const me = await person();
    const { auth, done } = await addPasskey(me.client, '  Work\tlaptop  ');
    assert.equal(done.res.status, 200);
    assert.deepEqual(done.json, { redirect: '/account/passkeys?msg=added' });
    const [stored] = await passkeysOfUser(t.ctx.db, await userRef(me.userId));
    assert.equal(stored!.name, 'Work laptop');
    assert.equal(stored!.credentialId, auth.id);
    assert.equal(stored!.createdAt, t.clock.now());
    assert.equal(stored!.lastUsedAt, null);
    const page = await me.client.get('/account/passkeys');
    assert.match(page.body, /<strong>Work laptop<\/strong>/);
    assert.match(page.body, /never used yet/);
    const security = await me.client.get('/account/security');
    assert.match(security.body, /You have one passkey\./);
    const mail = (await mailsTo(t, me.email)).at(-1)!;
    assert.equal(mail.subject, 'A passkey was added to your idsvc account');
    assert.match(mail.text ?? '', /A passkey named "Work laptop" was just added to your account "keyperson\d+"/);
    assertLogsClean(t, [me.email, me.password, me.client.cookies.get('idsvc_session')!]);
  });

  test('needs a name, and an answer to this session’s own challenge, once', async () => {
    const me = await person();
    const csrf = await me.client.csrf('/account/passkeys');
    const blank = await me.client.postJson('/account/passkeys/options', { _csrf: csrf, name: ' \u0007 ' });
    assert.equal(blank.res.status, 400);
    assert.match(String(blank.json.error), /name/);
    // No challenge asked for: nothing to answer.
    const auth = new SoftAuthenticator('localhost', origin);
    const unasked = await me.client.postJson('/account/passkeys/add', {
      _csrf: csrf,
      response: auth.register({ challenge: 'AAAA', rp: {}, user: { id: 'AAAA' } }),
    });
    assert.equal(unasked.res.status, 400);
    // Another session's challenge does not count for this one.
    const other = await person();
    const otherCsrf = await other.client.csrf('/account/passkeys');
    const theirs = await other.client.postJson('/account/passkeys/options', { _csrf: otherCsrf, name: 'Theirs' });
    const stolen = await me.client.postJson('/account/passkeys/add', { _csrf: csrf, response: auth.register(theirs.json.options as RegistrationOptions) });
    assert.equal(stolen.res.status, 400);
    // The right challenge, but answered for another site.
    const start = await me.client.postJson('/account/passkeys/options', { _csrf: csrf, name: 'Phone' });
    const foreign = await me.client.postJson('/account/passkeys/add', {
      _csrf: csrf,
      response: auth.register(start.json.options as RegistrationOptions, 'http://localhost:1'),
    });
    assert.equal(foreign.res.status, 400);
    // The challenge was spent by that refusal: a good answer to it now is too late.
    const late = await me.client.postJson('/account/passkeys/add', { _csrf: csrf, response: auth.register(start.json.options as RegistrationOptions) });
    assert.equal(late.res.status, 400);
    assert.equal((await passkeysOfUser(t.ctx.db, await userRef(me.userId))).length, 0);
  });

  test('a credential already registered, to this account or another, is refused', async () => {
    const first = await person();
    const { auth } = await addPasskey(first.client, 'Shared key');
    const second = await person();
    const again = await addPasskey(second.client, 'Same key', auth);
    assert.equal(again.done.res.status, 400);
    assert.deepEqual(again.done.json, { error: 'That passkey is already registered.' });
    assert.equal((await passkeysOfUser(t.ctx.db, await userRef(second.userId))).length, 0);
    assert.equal((await passkeysOfUser(t.ctx.db, await userRef(first.userId)))[0]!.name, 'Shared key');
  });

  test('an expired challenge is refused', async () => {
    const me = await person();
    const csrf = await me.client.csrf('/account/passkeys');
    const start = await me.client.postJson('/account/passkeys/options', { _csrf: csrf, name: 'Slow' });
    t.clock.advance(5 * 60_000 + 1);
    const auth = new SoftAuthenticator('localhost', origin);
    const done = await me.client.postJson('/account/passkeys/add', { _csrf: csrf, response: auth.register(start.json.options as RegistrationOptions) });
    assert.equal(done.res.status, 400);
    assert.match(String(done.json.error), /took too long/);
  });
});

describe('logging in with a passkey', () => {
  test('starts a session for the passkey’s account and records the use', async () => {
    const me = await person();
    const { auth } = await addPasskey(me.client, 'Phone');
    const { client, answer } = await logInWith(auth);
    assert.equal(answer.res.status, 200);
    assert.deepEqual(answer.json, { redirect: '/account' });
    const account = await client.get('/account');
    assert.equal(account.res.status, 200);
    assert.match(account.body, new RegExp(`Hello, <span class="user-id">${me.userId}</span>`));
    const [stored] = await passkeysOfUser(t.ctx.db, await userRef(me.userId));
    assert.equal(stored!.lastUsedAt, t.clock.now());
    assert.equal(stored!.counter, 1);
    // The password still works.
    assert.equal((await browser().logIn(me.userId, me.password)).status, 303);
  });

  test('a replayed assertion is refused, with the same answer as an unknown passkey', async () => {
    const me = await person();
    const { auth } = await addPasskey(me.client, 'Phone');
    const first = await logInWith(auth);
    assert.equal(first.answer.res.status, 200);

    // The same bytes again from the same browser (now logged in, so with its session's token): the challenge is spent.
    const again = await first.client.postJson('/login/passkey', { _csrf: await first.client.csrf('/login'), response: first.response });
    assert.equal(again.res.status, 400);
    assert.deepEqual(again.json, REFUSED);

    // The same bytes on a fresh attempt: they answer the old challenge, not this one.
    const thief = browser();
    const csrf = await thief.csrf('/login');
    await thief.postJson('/login/passkey/options', { _csrf: csrf });
    const replay = await thief.postJson('/login/passkey', { _csrf: csrf, response: first.response });
    assert.equal(replay.res.status, 400);
    assert.deepEqual(replay.json, REFUSED);
    assert.equal(thief.cookies.has('idsvc_session'), false);

    const stranger = await logInWith(new SoftAuthenticator('localhost', origin));
    assert.equal(stranger.answer.res.status, 400);
    assert.deepEqual(stranger.answer.json, REFUSED);
  });

  test('a cloned authenticator, whose counter is behind, is refused', async () => {
    const me = await person();
    const { auth } = await addPasskey(me.client, 'Key');
    assert.equal((await logInWith(auth)).answer.res.status, 200);
    assert.equal((await logInWith(auth)).answer.res.status, 200);
    // The clone signs a fresh challenge correctly, but with a counter the server has already seen.
    const clone = await logInWith(auth, { counter: 1 });
    assert.equal(clone.answer.res.status, 400);
    assert.deepEqual(clone.answer.json, REFUSED);
    const same = await logInWith(auth, { counter: 2 });
    assert.equal(same.answer.res.status, 400);
    const [stored] = await passkeysOfUser(t.ctx.db, await userRef(me.userId));
    assert.equal(stored!.counter, 2);
  });

  test('an assertion made for another origin is refused', async () => {
    const me = await person();
    const { auth } = await addPasskey(me.client, 'Phone');
    const phished = await logInWith(auth, { origin: 'https://idsvc.example.net' });
    assert.equal(phished.answer.res.status, 400);
    assert.deepEqual(phished.answer.json, REFUSED);
  });

  test('without the attempt cookie the assertion is refused', async () => {
    const me = await person();
    const { auth } = await addPasskey(me.client, 'Phone');
    const client = browser();
    const csrf = await client.csrf('/login');
    const start = await client.postJson('/login/passkey/options', { _csrf: csrf });
    client.cookies.delete('idsvc_passkey_login');
    const answer = await client.postJson('/login/passkey', { _csrf: csrf, response: auth.assert(start.json.options as RequestOptions) });
    assert.equal(answer.res.status, 400);
    assert.deepEqual(answer.json, REFUSED);
  });

  test('failures count against the log-in throttle of the passkey’s account', async () => {
    const me = await person();
    const { auth } = await addPasskey(me.client, 'Phone');
    const guesser = browser();
    for (let i = 0; i < 10; i++) {
      const bad = await logInWith(auth, { origin: 'https://idsvc.example.net' }, guesser);
      assert.equal(bad.answer.res.status, 400);
    }
    // Throttled before any signature is checked: even the right passkey waits.
    const blocked = await logInWith(auth, {}, guesser);
    assert.equal(blocked.answer.res.status, 429);
    assert.ok(Number(blocked.answer.res.headers.get('retry-after')) > 0);
    // The same counters as the password form's.
    assert.equal((await guesser.logIn(me.userId, me.password)).status, 429);
    t.clock.advance(15 * 60_000 + 1000);
    assert.equal((await logInWith(auth, {}, guesser)).answer.res.status, 200);
  });
});

describe('removing a passkey', () => {
  test('removes one’s own, mails the account, and the passkey no longer logs in', async () => {
    const me = await person();
    const { auth } = await addPasskey(me.client, 'Old phone');
    const [stored] = await passkeysOfUser(t.ctx.db, await userRef(me.userId));
    const removed = await me.client.submit('/account/passkeys/remove', { id: String(stored!.id) });
    assert.equal(removed.res.status, 303);
    assert.equal(removed.res.headers.get('location'), '/account/passkeys?msg=removed');
    assert.equal((await passkeysOfUser(t.ctx.db, await userRef(me.userId))).length, 0);
    const mail = (await mailsTo(t, me.email)).at(-1)!;
    assert.equal(mail.subject, 'A passkey was removed from your idsvc account');
    assert.match(mail.text ?? '', /The passkey named "Old phone" was just removed/);
    const after = await logInWith(auth);
    assert.equal(after.answer.res.status, 400);
    assert.deepEqual(after.answer.json, REFUSED);
  });

  test('another account’s passkey is refused and stays, unmailed', async () => {
    const owner = await person();
    await addPasskey(owner.client, 'Mine');
    const [theirs] = await passkeysOfUser(t.ctx.db, await userRef(owner.userId));
    const mailsBefore = (await mailsTo(t, owner.email)).length;
    const other = await person();
    const refused = await other.client.submit('/account/passkeys/remove', { id: String(theirs!.id) });
    assert.equal(refused.res.status, 303);
    assert.equal(refused.res.headers.get('location'), '/account/passkeys?msg=not_found');
    assert.equal((await passkeysOfUser(t.ctx.db, await userRef(owner.userId))).length, 1);
    assert.equal((await mailsTo(t, owner.email)).length, mailsBefore);
    const page = await other.client.get('/account/passkeys?msg=not_found');
    assert.match(page.body, /That passkey is not one of yours/);
  });
});

describe('the account’s data', () => {
  test('the export lists each passkey’s name and times, never its key; deleting the account deletes its passkeys and challenges', async () => {
    const me = await person();
    const { auth } = await addPasskey(me.client, 'Laptop');
    const ref = await userRef(me.userId);
    const exported = await me.client.submit('/account/export');
    const data = JSON.parse(exported.body) as { passkeys: unknown[] };
    assert.deepEqual(data.passkeys, [{ name: 'Laptop', addedAt: new Date(t.clock.now()).toISOString(), lastUsedAt: null }]);
    assert.equal(exported.body.includes(auth.id), false);
    // A challenge asked for and never answered.
    const csrf = await me.client.csrf('/account/passkeys');
    await me.client.postJson('/account/passkeys/options', { _csrf: csrf, name: 'Never finished' });
    const challenges = () => t.ctx.db.kysely.selectFrom('passkey_challenges').select('binding').where('user_ref', '=', ref).execute();
    assert.equal((await challenges()).length, 1);
    const deleted = await me.client.submit('/account/delete', { confirm_user_id: me.userId });
    assert.equal(deleted.res.status, 303);
    assert.equal((await passkeysOfUser(t.ctx.db, ref)).length, 0);
    assert.equal((await challenges()).length, 0);
    assert.equal((await logInWith(auth)).answer.res.status, 400);
  });
});

describe('the largest answers accepted', () => {
  const b64 = (bytes: Buffer, max: number) => bytes.toString('base64url').slice(0, max);
  /** CPU of the app (it runs in this process) over one call. */
  async function cpuMs(call: () => Promise<unknown>): Promise<number> {
    const start = process.cpuUsage();
    await call();
    const used = process.cpuUsage(start);
    return (used.user + used.system) / 1000;
  }

  test('cost little CPU each, and are refused', async () => {
    const me = await person();
    const csrf = await me.client.csrf('/account/passkeys');
    const challengeJson = async () => {
      const start = await me.client.postJson('/account/passkeys/options', { _csrf: csrf, name: 'Big' });
      return Buffer.from(JSON.stringify({ type: 'webauthn.create', challenge: (start.json.options as RegistrationOptions).challenge, origin }));
    };
    const nested = Buffer.alloc(12_000, 0x81); // CBOR: an array holding an array holding …
    const registrations = {
      random: { clientDataJSON: b64(Buffer.from(JSON.stringify({ type: 'x' })), 4096), attestationObject: b64(randomBytes(12_288), 16_384) },
      'CBOR nested 12,000 deep': { attestationObject: b64(nested, 16_384) },
      'CBOR map of 4,000 entries': { attestationObject: b64(Buffer.concat([Buffer.from([0xb9, 0x0f, 0xa0]), Buffer.alloc(8000, 0x00)]), 16_384) },
    };
    const costs: Record<string, number> = {};
    for (const [label, fields] of Object.entries(registrations)) {
      const clientDataJSON = b64(await challengeJson(), 4096);
      const response = { id: 'AAAA', rawId: 'AAAA', type: 'public-key', response: { clientDataJSON, ...fields }, clientExtensionResults: {} };
      let status = 0;
      costs[`add: ${label}`] = await cpuMs(async () => {
        status = (await me.client.postJson('/account/passkeys/add', { _csrf: csrf, response })).res.status;
      });
      assert.equal(status, 400, label);
    }
    const { auth } = await addPasskey(me.client, 'Real');
    const client = browser();
    const loginCsrf = await client.csrf('/login');
    for (const [label, make] of Object.entries({
      'random at every size': () => ({
        clientDataJSON: b64(randomBytes(3072), 4096),
        authenticatorData: b64(randomBytes(6144), 8192),
        signature: b64(randomBytes(6144), 8192),
      }),
      'a known credential, 6 KiB of authenticator data': () => ({
        clientDataJSON: b64(randomBytes(3072), 4096),
        authenticatorData: b64(Buffer.concat([createHash('sha256').update('localhost').digest(), Buffer.from([0x85]), randomBytes(6000)]), 8192),
        signature: b64(randomBytes(6144), 8192),
      }),
    })) {
      await client.postJson('/login/passkey/options', { _csrf: loginCsrf });
      const response = { id: auth.id, rawId: auth.id, type: 'public-key', response: make(), clientExtensionResults: {} };
      let status = 0;
      costs[`log in: ${label}`] = await cpuMs(async () => {
        status = (await client.postJson('/login/passkey', { _csrf: loginCsrf, response })).res.status;
      });
      assert.equal(status, 400, label);
    }
    process.stdout.write(
      `# CPU per call: ${Object.entries(costs)
        .map(([k, v]) => `${k} ${v.toFixed(1)} ms`)
        .join('; ')}\n`,
    );
    for (const [label, ms] of Object.entries(costs)) assert.ok(ms < 200, `${label}: ${ms} ms`);
  });
});

describe('CSRF and limits', () => {
  test('every passkey call without the form’s token, or from another origin, is refused', async () => {
    const me = await person();
    const csrf = await me.client.csrf('/account/passkeys');
    const anon = browser();
    const anonCsrf = await anon.csrf('/login');
    const calls: [SiteClient, string, Record<string, unknown>, string][] = [
      [anon, '/login/passkey/options', {}, anonCsrf],
      [anon, '/login/passkey', { response: new SoftAuthenticator('localhost', origin).assert({ challenge: 'AAAA' }) }, anonCsrf],
      [me.client, '/account/passkeys/options', { name: 'Phone' }, csrf],
      [
        me.client,
        '/account/passkeys/add',
        { response: new SoftAuthenticator('localhost', origin).register({ challenge: 'AAAA', rp: {}, user: { id: 'AAAA' } }) },
        csrf,
      ],
      [me.client, '/account/passkeys/remove', { id: '1' }, csrf],
    ];
    for (const [client, path, body, token] of calls) {
      const missing = await client.postJson(path, body);
      assert.equal(missing.res.status, 403, `${path} without a token`);
      const wrong = await client.postJson(path, { ...body, _csrf: `${token.slice(0, -2)}xx` });
      assert.equal(wrong.res.status, 403, `${path} with a wrong token`);
      const forged = await client.postJson(path, { ...body, _csrf: token }, { origin: 'https://evil.example' });
      assert.equal(forged.res.status, 403, `${path} from another origin`);
    }
    // The anonymous token is not the session's: a logged-in call with it is refused.
    const crossed = await me.client.postJson('/account/passkeys/options', { _csrf: anonCsrf, name: 'Phone' });
    assert.equal(crossed.res.status, 403);
  });

  test('log-in challenges are limited per client address', async () => {
    const client = browser();
    const csrf = await client.csrf('/login');
    const statuses: number[] = [];
    for (let i = 0; i < 31; i++) statuses.push((await client.postJson('/login/passkey/options', { _csrf: csrf })).res.status);
    assert.deepEqual(statuses, [...Array(30).fill(200), 429]);
    // Another address is not held back.
    const other = browser();
    assert.equal((await other.postJson('/login/passkey/options', { _csrf: await other.csrf('/login') })).res.status, 200);
  });

  test('passkey changes are limited per account', async () => {
    const me = await person();
    const csrf = await me.client.csrf('/account/passkeys');
    const statuses: number[] = [];
    for (let i = 0; i < 11; i++) statuses.push((await me.client.postJson('/account/passkeys/options', { _csrf: csrf, name: `Key ${i}` })).res.status);
    assert.deepEqual(statuses, [...Array(10).fill(200), 429]);
    const removal = await me.client.submit('/account/passkeys/remove', { id: '1' });
    assert.equal(removal.res.headers.get('location'), '/account/passkeys?msg=too_many');
  });
});

describe('an installation whose address is not https or localhost', () => {
  test('has no relying party: browsers offer WebAuthn only to a secure origin named by a domain', () => {
    const rp = (baseUrl: string) => relyingParty({ baseUrl, siteName: 'IDs' });
    assert.deepEqual(rp('https://ids.example.org'), { id: 'ids.example.org', origin: 'https://ids.example.org', name: 'IDs' });
    assert.deepEqual(rp('https://ids.example.org:8443/base'), { id: 'ids.example.org', origin: 'https://ids.example.org:8443', name: 'IDs' });
    assert.deepEqual(rp('http://localhost:8080'), { id: 'localhost', origin: 'http://localhost:8080', name: 'IDs' });
    assert.equal(rp('http://ids.localhost:8080')?.id, 'ids.localhost');
    for (const none of ['http://ids.example.org', 'http://127.0.0.1:8080', 'https://192.0.2.7', 'https://[2001:db8::1]', 'http://[::1]:8080']) {
      assert.equal(rp(none), null, none);
    }
  });

  test('offers no passkeys: no button, no calls', async () => {
    const plain = await startSiteApp();
    try {
      const client = new SiteClient(plain.baseUrl);
      const login = await client.get('/login');
      assert.doesNotMatch(login.body, /Log in with a passkey/);
      const csrf = await client.csrf('/login');
      assert.equal((await client.postJson('/login/passkey/options', { _csrf: csrf })).res.status, 404);
    } finally {
      await plain.close();
    }
  });
});

test('one credential registered twice at once is kept once, the second registration refused without an error', async () => {
  const p = await person();
  const user = (await findUserByUserId(t.ctx.db, p.userId))!;
  const passkey = (name: string) => ({
    userRef: user.id,
    credentialId: 'the-same-credential',
    publicKey: new Uint8Array([1, 2, 3]),
    counter: 0,
    userHandle: 'handle',
    transports: [],
    name,
  });
  const ids = await Promise.all(['first', 'second'].map((name) => t.ctx.db.write((w) => insertPasskey(w, passkey(name), t.clock.now()))));
  assert.equal(ids.filter((id) => id === null).length, 1, `${ids}`);
  assert.equal((await passkeysOfUser(t.ctx.db, user.id)).length, 1);
});

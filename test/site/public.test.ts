// The public face of a user, read by third-party parsers: the profile page by microformats-parser
// (h-card, rel="me") and the WebFinger answers by webfinger.js, plus the RFC 7033 details.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { mf2 } from 'microformats-parser';
import WebFinger from 'webfinger.js';
import { setServiceDisabled } from '../../src/repositories/catalogue.js';
import type { TestApp } from '../helpers/app.js';
import {
  addLocalService,
  assertLogsClean,
  pageWithBacklink,
  SiteClient,
  signUpConfirmed,
  startProfilePages,
  startSiteApp,
  type ProfilePages,
} from './helpers.js';

const EMAIL = 'alice.liddell@example.org';
const PASSWORD = 'looking glass tea party';
let t: TestApp;
let remote: ProfilePages;
let alice: SiteClient;
let profileUrl = '';
let host = '';

before(async () => {
  t = await startSiteApp();
  host = new URL(t.config.baseUrl).host;
  profileUrl = `${t.config.baseUrl}/u/alice`;
  remote = await startProfilePages();
  await addLocalService(t, 'wonderblog', 'Wonderblog', remote.origin);
  // Shipped disabled; its own URL builder is worth reading through.
  await t.ctx.db.write((w) => setServiceDisabled(w, 'mastodon', false, t.clock.now()));
  remote.pages.set('alice', pageWithBacklink(profileUrl));
  alice = new SiteClient(t.baseUrl);
  assert.equal((await signUpConfirmed(t, alice, { email: EMAIL, user_id: 'alice', password: PASSWORD, opt_in: true })).status, 303);
  for (const [svc_id, usr_svc_id] of [
    ['github', 'alice'],
    ['mastodon', '@alice@social.example'],
    ['wonderblog', 'alice'],
  ]) {
    assert.equal((await alice.submit('/account/identities', { svc_id: svc_id!, usr_svc_id: usr_svc_id! })).res.status, 303);
  }
  await alice.submit('/account/identities/verify', { svc_id: 'wonderblog' });
  await alice.submit('/account/profile', {
    nickname: 'ali',
    public_nickname: '1',
    firstName: 'Alice',
    public_firstName: '1',
    lastName: 'Liddell',
    public_lastName: '1',
    city: 'Oxford',
    public_city: '1',
    street: '1 Secret Lane',
    country: 'Hidden Kingdom',
    bio: 'Curious, and getting curiouser.',
    public_bio: '1',
  });
});

after(async () => {
  await remote.close();
  await t.close();
});

const IDENTITY_URLS = ['https://social.example/@alice', 'https://www.github.com/alice'];

describe('the profile page, read by microformats-parser', () => {
  test('is an h-card of the public fields only, with the identities as rel="me"', async () => {
    const res = await fetch(profileUrl.replace(t.config.baseUrl, t.baseUrl));
    assert.equal(res.status, 200);
    const html = await res.text();
    const parsed = mf2(html, { baseUrl: profileUrl });
    const cards = parsed.items.filter((i) => i.type?.includes('h-card'));
    assert.equal(cards.length, 1);
    const p = cards[0]!.properties;
    assert.deepEqual(p.name, ['Alice Liddell']);
    assert.deepEqual(p['given-name'], ['Alice']);
    assert.deepEqual(p['family-name'], ['Liddell']);
    assert.deepEqual(p.nickname, ['ali']);
    assert.deepEqual(p.locality, ['Oxford']);
    assert.deepEqual(p.note, ['Curious, and getting curiouser.']);
    assert.deepEqual(p.uid, [profileUrl]);
    const blog = `${remote.origin}/alice`;
    assert.deepEqual([...(p.url as string[])].sort(), [profileUrl, blog, ...IDENTITY_URLS].sort());
    assert.equal(p['street-address'], undefined);
    assert.equal(p['country-name'], undefined);
    assert.doesNotMatch(html, /Secret Lane|Hidden Kingdom|alice\.liddell/);
    assert.deepEqual([...parsed.rels.me!].sort(), [blog, ...IDENTITY_URLS].sort());
    // In <head> too, for parsers that read only that.
    assert.equal((html.match(/<link rel="me" href=/g) ?? []).length, 3);
    // The verified mark sits with the entry that links back.
    assert.match(html, /Wonderblog<\/span><a class="u-url" rel="me" href="[^"]+">[^<]+<\/a><\/span><span class="verified-mark"><span class="badge verified"/);
  });

  test('answers 404 alike for unknown users and for users who have not opted in', async () => {
    const hidden = new SiteClient(t.baseUrl);
    await signUpConfirmed(t, hidden, { email: 'hidden.hatter@example.org', user_id: 'hatter', password: 'a mad tea party forever' });
    const unknown = await fetch(`${t.baseUrl}/u/nobody_here`);
    const notOptedIn = await fetch(`${t.baseUrl}/u/hatter`);
    assert.equal(unknown.status, 404);
    assert.equal(notOptedIn.status, 404);
    assert.equal(await unknown.text(), await notOptedIn.text());
  });
});

describe('WebFinger', () => {
  const wf = (query: string, headers: Record<string, string> = {}) => fetch(`${t.baseUrl}/.well-known/webfinger?${query}`, { headers });

  test('webfinger.js looks up acct:alice@host and finds the profile page, the name and the identities', async () => {
    const client = new WebFinger({ tls_only: false, allow_private_addresses: true, uri_fallback: false });
    const result = await client.lookup(`alice@${host}`);
    assert.equal(result.object.subject, `acct:alice@${host}`);
    assert.equal(result.idx.links.profile?.[0]?.href, profileUrl);
    assert.equal(result.idx.properties.name, 'Alice Liddell');
    const me = result.object.links.filter((l) => l.rel === 'me').map((l) => l.href);
    assert.deepEqual([...me].sort(), [`${remote.origin}/alice`, ...IDENTITY_URLS].sort());
    await assert.rejects(client.lookup(`nobody@${host}`), /resource not found/);
  });

  test('answers a JRD readable from any origin', async () => {
    const res = await wf(`resource=${encodeURIComponent(`acct:alice@${host}`)}`, { origin: 'https://elsewhere.example' });
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /^application\/jrd\+json(;\s*charset=utf-8)?$/);
    assert.equal(res.headers.get('access-control-allow-origin'), '*');
    const jrd = await res.json();
    assert.deepEqual(jrd.aliases, [profileUrl]);
    assert.deepEqual(jrd.links[0], { rel: 'http://webfinger.net/rel/profile-page', type: 'text/html', href: profileUrl });
    assert.deepEqual(
      jrd.links.find((l: { href: string }) => l.href === 'https://www.github.com/alice'),
      { rel: 'me', href: 'https://www.github.com/alice', titles: { und: 'GitHub' } },
    );
    assert.doesNotMatch(JSON.stringify(jrd), /Secret Lane|Hidden Kingdom|alice\.liddell/);
  });

  test('finds the same user by mailto: (while discoverable) and by the profile URL', async () => {
    await alice.submit('/account/discoverable', { discoverable: '1' });
    for (const resource of [
      `mailto:${EMAIL}`,
      `mailto:${EMAIL.toUpperCase()}`,
      profileUrl,
      `${profileUrl}/`,
      profileUrl.replace('http://127.0.0.1', 'HTTP://127.0.0.1'),
    ]) {
      const res = await wf(`resource=${encodeURIComponent(resource)}`);
      assert.equal(res.status, 200, resource);
      assert.equal((await res.json()).subject, `acct:alice@${host}`);
    }
    await alice.submit('/account/discoverable', {});
    assert.equal((await wf(`resource=${encodeURIComponent(`mailto:${EMAIL}`)}`)).status, 404, 'not findable by address any more');
    assert.equal((await wf(`resource=${encodeURIComponent(`acct:alice@${host}`)}`)).status, 200, 'still by acct:');
    await alice.submit('/account/discoverable', { discoverable: '1' });
  });

  test('filters links by one or more rel parameters and keeps the rest of the JRD (RFC 7033 4.3)', async () => {
    const resource = `resource=${encodeURIComponent(`acct:alice@${host}`)}`;
    const rels = async (q: string) => ((await (await wf(`${resource}${q}`)).json()).links as { rel: string }[]).map((l) => l.rel);
    assert.deepEqual(await rels('&rel=me'), ['me', 'me', 'me']);
    assert.deepEqual(await rels(`&rel=${encodeURIComponent('http://webfinger.net/rel/profile-page')}`), ['http://webfinger.net/rel/profile-page']);
    assert.deepEqual(await rels(`&rel=me&rel=${encodeURIComponent('http://webfinger.net/rel/profile-page')}`), [
      'http://webfinger.net/rel/profile-page',
      'me',
      'me',
      'me',
    ]);
    const none = await (await wf(`${resource}&rel=http%3A%2F%2Fexample.org%2Fnothing`)).json();
    assert.deepEqual(none.links, []);
    assert.equal(none.subject, `acct:alice@${host}`);
    assert.deepEqual(none.aliases, [profileUrl]);
  });

  test('400 without a resource, 404 for other hosts, unknown and hidden users', async () => {
    for (const q of ['', 'resource=', 'rel=me', `resource=a&resource=b`]) {
      const res = await wf(q);
      assert.equal(res.status, 400, q);
      assert.equal(res.headers.get('access-control-allow-origin'), '*');
    }
    for (const resource of [
      `acct:alice@elsewhere.example`,
      `acct:nobody@${host}`,
      'acct:alice',
      'mailto:nobody@example.org',
      'https://elsewhere.example/u/alice',
      `${t.config.baseUrl}/u/`,
      'urn:x:alice',
      `acct:hatter@${host}`,
    ]) {
      assert.equal((await wf(`resource=${encodeURIComponent(resource)}`)).status, 404, resource);
    }
    await alice.submit('/account/opt-in', { opt_in: '0' });
    assert.equal((await wf(`resource=${encodeURIComponent(`acct:alice@${host}`)}`)).status, 404, 'opted out');
    assert.equal((await fetch(profileUrl.replace(t.config.baseUrl, t.baseUrl))).status, 404);
    await alice.submit('/account/opt-in', { opt_in: '1' });
    assert.equal((await wf(`resource=${encodeURIComponent(`acct:alice@${host}`)}`)).status, 200);
  });

  test('logs none of the addresses or passwords used', () => {
    assertLogsClean(t, [EMAIL, PASSWORD, 'hidden.hatter@example.org', 'a mad tea party forever']);
  });
});

// The account pages and their forms, through HTTP, and what partners see and hear of each change:
// the pages and their navigation, opt in/out, profile and public flags, identities, ending links,
// export and deletion.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { listOutbox } from '../../src/repositories/outbox.js';
import { ACCOUNT_PAGES } from '../../src/site/views/AccountNav.js';
import type { TestApp } from '../helpers/app.js';
import { assertLogsClean, SiteClient, signUpConfirmed, startSiteApp } from './helpers.js';

let t: TestApp;
const secrets: string[] = [];
let n = 0;

before(async () => {
  // Each simulated person comes from an address of their own (X-Forwarded-For).
  t = await startSiteApp({ TRUST_PROXY: 'true' });
});
after(() => t.close());

async function person(optIn = true) {
  n += 1;
  const email = `member.${n}@example.org`;
  const password = `seven silver spoons ${n}`;
  const userId = `member_${n}`;
  secrets.push(email, password);
  const client = new SiteClient(t.baseUrl, { 'x-forwarded-for': `10.1.0.${n}` });
  assert.equal((await signUpConfirmed(t, client, { email, user_id: userId, password, opt_in: optIn })).status, 303);
  return { client, email, password, userId };
}

async function linkedPartner(name: string, who: { email: string; password: string }) {
  const p = await t.partner({ name });
  secrets.push(p.apiToken);
  await p.client.syncUser(who.email, { email: who.email, password: who.password });
  return p;
}

const eventsOf = async (partnerId: number) =>
  (await listOutbox(t.ctx.db, partnerId)).map((e) => ({ type: e.event_type, data: JSON.parse(e.payload).data as Record<string, unknown> }));

describe('the account pages', () => {
  // Which forms each page holds: every form is on exactly one page.
  const FORMS: Record<string, string[]> = {
    '/account': ['/account/identities', '/account/discover', '/account/identities/remove', '/account/identities/verify'],
    '/account/sharing': ['/account/opt-in', '/account/discoverable'],
    '/account/profile': ['/account/profile'],
    '/account/sites': ['/account/links/end'],
    '/account/security': ['/account/email', '/account/password'],
    '/account/data': ['/account/export', '/account/delete'],
  };
  const allForms = Object.values(FORMS).flat();

  test('each page has the navigation, marks itself in it, and holds only its own forms', async () => {
    const me = await person();
    await me.client.submit('/account/identities', { svc_id: 'github', usr_svc_id: 'paged' });
    await linkedPartner('Paged partner', me);
    for (const { path, title } of ACCOUNT_PAGES) {
      const { res, body } = await me.client.get(path);
      assert.equal(res.status, 200, path);
      assert.match(body, new RegExp(`<h1>${title}</h1>`), path);
      for (const other of ACCOUNT_PAGES)
        assert.match(body, new RegExp(`<a href="${other.path}"${other.path === path ? ' aria-current="page"' : ''}>`), `${path} links ${other.path}`);
      const actions = [...body.matchAll(/<form method="post" action="([^"]+)"/g)].map((m) => m[1]!).filter((a) => allForms.includes(a));
      assert.deepEqual([...new Set(actions)].sort(), [...FORMS[path]!].sort(), `${path} holds its forms`);
    }
  });

  test('a refused form is answered on its own page, beside what was typed', async () => {
    const me = await person();
    const cases: [string, Record<string, string>, string, RegExp][] = [
      [
        '/account/password',
        { current_password: 'not it', new_password: 'a new long passphrase' },
        'Password and address',
        /Your current password is not right/,
      ],
      ['/account/email', { current_password: 'not it', new_email: 'new.place@example.org' }, 'Password and address', /value="new\.place@example\.org"/],
      ['/account/profile', { nickname: 'two\nlines' }, 'Your profile', /cannot contain control characters/],
      ['/account/delete', { confirm_user_id: 'nobody' }, 'Your data', /exactly to confirm/],
      ['/account/identities', { svc_id: 'github', usr_svc_id: '   ' }, 'Your identities', /Type your name on GitHub/],
      ['/account/discover', { url: 'not a page' }, 'Your identities', /Enter the address of a web page/],
    ];
    for (const [action, fields, title, message] of cases) {
      const { res, body } = await me.client.submit(action, fields);
      assert.ok(res.status >= 400, action);
      assert.match(body, new RegExp(`<h1>${title}</h1>`), action);
      assert.match(body, message, action);
      assert.match(body, new RegExp(`action="${action}"`), `${action}: the form is on the page`);
    }
  });

  test('the pages are for the logged-in person only', async () => {
    for (const { path } of ACCOUNT_PAGES) {
      const res = await fetch(`${t.baseUrl}${path}`, { redirect: 'manual' });
      assert.equal(res.status, 303, path);
      assert.equal(res.headers.get('location'), '/login');
    }
  });
});

describe('opting in and out', () => {
  test('opting out hides the user from every partner at once and tells linked ones', async () => {
    const me = await person();
    const linked = await linkedPartner('Linked one', me);
    const stranger = await t.partner({ name: 'Stranger' });
    await linked.client.updateService(me.email, 'github', 'own-push');
    assert.equal((await stranger.publicClient.returnServices(me.userId, { profileType: 'public' })).length, 1);

    const { res } = await me.client.submit('/account/opt-in', { opt_in: '0' });
    assert.equal(res.headers.get('location'), '/account/sharing?msg=opted_out');
    assert.match((await me.client.get('/account/sharing?msg=opted_out')).body, /You are now hidden from every partner site/);
    await assert.rejects(stranger.publicClient.returnServices(me.userId, { profileType: 'public' }), /User Not Found/);
    const events = await eventsOf(linked.id);
    assert.equal(events.at(-1)?.type, 'user.hidden');
    // The linked partner still sees what it pushed itself (SPEC §3 rule 1, rule 7).
    assert.deepEqual(
      (await linked.client.returnServices(me.email)).map((s) => s.usrSvcId),
      ['own-push'],
    );

    await me.client.submit('/account/opt-in', { opt_in: '1' });
    assert.equal((await stranger.publicClient.returnServices(me.userId, { profileType: 'public' })).length, 1);
  });
});

describe('profile', () => {
  test('fields are saved, and only the public ones are public', async () => {
    const me = await person();
    const partner = await t.partner({ name: 'Reader' });
    const { res } = await me.client.submit('/account/profile', {
      nickname: '  Nico  ',
      public_nickname: '1',
      city: 'Ghent',
      bio: 'Line one\r\nLine two',
      public_bio: '1',
    });
    assert.equal(res.status, 303);
    assert.equal(res.headers.get('location'), '/account/profile?msg=profile#profile');
    const profile = await partner.publicClient.returnProfile(me.userId, { profileType: 'public' });
    assert.equal(profile.nickname, 'Nico');
    assert.equal(profile.bio, 'Line one\nLine two');
    assert.equal(profile.city, undefined);
    const { body } = await me.client.get('/account/profile');
    assert.match(body, /name="city" value="Ghent"/);
    assert.match(body, /name="public_nickname" value="1" checked/);
    assert.doesNotMatch(body, /name="public_city" value="1" checked/);
    const bad = await me.client.submit('/account/profile', { nickname: 'two\nlines' });
    assert.equal(bad.res.status, 400);
    assert.match(bad.body, /cannot contain control characters/);
    assert.equal((await partner.publicClient.returnProfile(me.userId, { profileType: 'public' })).nickname, 'Nico');
  });
});

describe('identities', () => {
  test('adding, changing and removing are announced to linked partners and reach their merged view', async () => {
    const me = await person();
    const partner = await linkedPartner('Merger', me);
    await me.client.submit('/account/identities', { svc_id: 'github', usr_svc_id: 'first-name' });
    assert.deepEqual(
      (await partner.client.returnServices(me.email)).map((s) => s.url),
      ['https://www.github.com/first-name'],
    );
    await me.client.submit('/account/identities', { svc_id: 'github', usr_svc_id: 'second-name', replace: '1' });
    const { body } = await me.client.get('/account');
    assert.equal((body.match(/id="identity-github"/g) ?? []).length, 1, 'a change replaces, never duplicates');
    assert.match(body, /www\.github\.com\/second-name/);
    const { res } = await me.client.submit('/account/identities/remove', { svc_id: 'github' });
    assert.equal(res.headers.get('location'), '/account?msg=identity_removed#identities');
    assert.deepEqual(await partner.client.returnServices(me.email), []);
    const events = await eventsOf(partner.id);
    assert.deepEqual(
      events.filter((e) => e.type.startsWith('identity.')).map((e) => [e.type, e.data.url ?? e.data.svcId]),
      [
        ['identity.updated', 'https://www.github.com/first-name'],
        ['identity.updated', 'https://www.github.com/second-name'],
        ['identity.removed', 'github'],
      ],
    );
  });

  test('adding on a service that already has an identity asks first, naming the old one', async () => {
    const me = await person();
    await me.client.submit('/account/identities', { svc_id: 'twitter', usr_svc_id: 'old_name' });
    const asked = await me.client.submit('/account/identities', { svc_id: 'twitter', usr_svc_id: 'new_name' });
    assert.equal(asked.res.status, 200);
    assert.match(asked.body, /id="replace-question"/);
    assert.match(asked.body, /You already have “old_name” on Twitter/);
    assert.match(asked.body, /Replace it with “new_name”\?/);
    assert.match(asked.body, /<input type="hidden" name="replace" value="1"\/><button type="submit" class="button small">Replace with “new_name”/);
    let page = (await me.client.get('/account')).body;
    assert.match(page, /x\.com\/old_name/, 'nothing is replaced before the person says so');
    assert.doesNotMatch(page, /new_name/);
    // The same name again is no replacement, so it is not asked about.
    assert.equal((await me.client.submit('/account/identities', { svc_id: 'twitter', usr_svc_id: 'old_name' })).res.status, 303);
    const replaced = await me.client.submit('/account/identities', { svc_id: 'twitter', usr_svc_id: 'new_name', replace: '1' });
    assert.equal(replaced.res.status, 303);
    page = (await me.client.get('/account')).body;
    assert.match(page, /x\.com\/new_name/);
    assert.doesNotMatch(page, /old_name/);
  });

  test('a name the service pattern refuses is refused, saying what is allowed', async () => {
    const me = await person();
    const cases: [Record<string, string>, RegExp][] = [
      [
        { svc_id: 'twitter', usr_svc_id: 'bad name!!' },
        /“bad name!!” is not a name Twitter allows\. Names on Twitter use only letters \(a–z\), digits and underscores \(_\), at most 15 characters\./,
      ],
      [{ svc_id: 'github', usr_svc_id: 'bad name!!' }, /“bad name!!” is not a name GitHub allows\. Names on GitHub look like “alice”\./],
    ];
    for (const [fields, message] of cases) {
      const { res, body } = await me.client.submit('/account/identities', fields);
      assert.equal(res.status, 400, JSON.stringify(fields));
      assert.match(body, message);
    }
    assert.match((await me.client.get('/account')).body, /No identities yet/);
    assert.equal((await me.client.submit('/account/identities', { svc_id: 'twitter', usr_svc_id: 'good_name' })).res.status, 303);
  });

  test('a Website is any https address, a page on a shared host included, and a pasted unknown address is offered as one', async () => {
    const me = await person();
    const partner = await linkedPartner('Web reader', me);
    // Pasted: no known service has such addresses, so it is offered as the person's website, not added.
    const offered = await me.client.submit('/account/identities', { profile_url: 'https://Alice.GitHub.io/blog/#latest', recognise: '1' });
    assert.equal(offered.res.status, 200);
    assert.match(offered.body, /That is https:\/\/alice\.github\.io\/blog\/ on Website\./);
    assert.match((await me.client.get('/account')).body, /No identities yet/);
    const recognised = await me.client.get(`/account/identities/recognise?url=${encodeURIComponent('example.com/~alice')}`);
    assert.deepEqual(JSON.parse(recognised.body), { kind: 'match', svcId: 'website', svcName: 'Website', usrSvcId: 'https://example.com/~alice' });

    assert.equal((await me.client.submit('/account/identities', { svc_id: 'website', usr_svc_id: 'https://example.com/~alice' })).res.status, 303);
    assert.match((await me.client.get('/account')).body, /https:\/\/example\.com\/~alice/);
    assert.deepEqual(
      (await partner.client.returnServices(me.email)).map((s) => [s.svcId, s.url]),
      [['website', 'https://example.com/~alice']],
    );
    // A bare domain, as the website service took before, still names its site.
    await me.client.submit('/account/identities', { svc_id: 'website', usr_svc_id: 'alice.example', replace: '1' });
    assert.deepEqual(
      (await partner.client.returnServices(me.email)).map((s) => s.url),
      ['https://alice.example/'],
    );
    // Only https addresses of a named host.
    for (const refused of ['http://example.com/~alice', 'https://127.0.0.1/', 'https://me:pw@example.com/', 'ftp://example.com/']) {
      const { res, body } = await me.client.submit('/account/identities', { svc_id: 'website', usr_svc_id: refused, replace: '1' });
      assert.equal(res.status, 400, refused);
      assert.match(body, /is not an https address of a site/, refused);
    }
  });

  test('bad input is explained next to the form, and nothing is saved', async () => {
    const me = await person();
    const cases: [Record<string, string>, RegExp][] = [
      [{ svc_id: '', usr_svc_id: 'x' }, /Choose a service from the list/],
      [{ svc_id: 'nosuchservice', usr_svc_id: 'x' }, /That service is not in the list/],
      [{ svc_id: 'github', usr_svc_id: '   ' }, /Type your name on GitHub/],
      [{ svc_id: 'github', usr_svc_id: 'x'.repeat(256) }, /must be at most 255 characters/],
      [{ svc_id: 'github', usr_svc_id: 'a\u0007b' }, /must not contain control characters/],
      [{ svc_id: 'blogger', usr_svc_id: 'not a host/name' }, /does not give a valid address on Blogger/],
    ];
    for (const [fields, message] of cases) {
      const { res, body } = await me.client.submit('/account/identities', fields);
      assert.equal(res.status, 400, JSON.stringify(fields));
      assert.match(body, message);
    }
    const { body } = await me.client.get('/account');
    assert.match(body, /No identities yet/);
  });
});

describe('links', () => {
  test('ending a link tells that partner and the others, and keeps what it added unless asked', async () => {
    const me = await person();
    const keeper = await t.partner({ name: 'Keeper' });
    await keeper.client.updateService(me.email, 'gitlab', 'kept-entry');
    await keeper.client.syncUser(me.email, { email: me.email, password: me.password });
    const other = await linkedPartner('Other', me);
    const { body } = await me.client.get('/account/sites');
    assert.match(body, /<h3>Keeper<\/h3>/);
    assert.match(body, /Also remove the identity Keeper added/);

    const { res } = await me.client.submit('/account/links/end', { partner_id: String(keeper.id) });
    assert.equal(res.headers.get('location'), '/account/sites?msg=link_ended#links');
    const after = (await me.client.get('/account/sites?msg=link_ended')).body;
    assert.match(after, /The link has ended/);
    assert.doesNotMatch(after, /<h3>Keeper<\/h3>/);
    assert.match((await me.client.get('/account')).body, /gitlab\.com\/kept-entry/, 'kept: the box was not ticked');
    const toKeeper = (await eventsOf(keeper.id)).at(-1)!;
    assert.equal(toKeeper.type, 'link.removed');
    assert.equal(toKeeper.data.userId, me.userId);
    assert.equal((await eventsOf(other.id)).at(-1)?.type, 'link.removed');
    // The link is gone for the API too: the partner's view is its own pushes again.
    assert.deepEqual(
      (await keeper.client.returnServices(me.email)).map((s) => s.usrSvcId),
      ['kept-entry'],
    );
    await assert.rejects(keeper.client.unsyncUser(me.email), /not found/i);
  });

  test('with the box ticked, unverified entries that partner added go; verified and own ones stay', async () => {
    const me = await person();
    const p = await t.partner({ name: 'Remover' });
    await p.client.updateService(me.email, 'gitlab', 'from-partner');
    await p.client.updateService(me.email, 'keybase', 'proven-one');
    await p.client.updateService(me.email, 'github', 'partner-gh');
    await me.client.submit('/account/identities', { svc_id: 'github', usr_svc_id: 'mine' });
    await p.client.syncUser(me.email, { email: me.email, password: me.password });
    await t.ctx.db.kysely
      .updateTable('central_identities')
      .set({ verified: 1, verified_by: 'rel-me' })
      .where('svc_id', '=', 'keybase')
      .where('usr_svc_id', '=', 'proven-one')
      .execute();
    const other = await linkedPartner('Bystander', me);

    await me.client.submit('/account/links/end', { partner_id: String(p.id), remove_added: '1' });
    const { body } = await me.client.get('/account');
    assert.doesNotMatch(body, /from-partner/);
    assert.match(body, /keybase\.io\/proven-one/);
    assert.match(body, /github\.com\/mine/);
    const toOther = await eventsOf(other.id);
    assert.deepEqual(
      toOther.slice(-2).map((e) => [e.type, e.data.svcId ?? null]),
      [
        ['link.removed', null],
        ['identity.removed', 'gitlab'],
      ],
    );
  });

  test('a user can end only their own links', async () => {
    const me = await person();
    const someoneElse = await person();
    const p = await linkedPartner('Not yours', someoneElse);
    const { res } = await me.client.submit('/account/links/end', { partner_id: String(p.id) });
    assert.equal(res.status, 404);
    assert.equal((await eventsOf(p.id)).filter((e) => e.type === 'link.removed').length, 0);
  });
});

describe('export and deletion', () => {
  test('the export is a JSON download of everything, without secrets', async () => {
    const me = await person();
    await me.client.submit('/account/identities', { svc_id: 'github', usr_svc_id: 'exported' });
    const p = await linkedPartner('Exported partner', me);
    const { res, body } = await me.client.submit('/account/export');
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /^application\/json/);
    assert.match(res.headers.get('content-disposition') ?? '', /^attachment; filename="idsvc-member_\d+-2026-01-01\.json"$/);
    assert.equal(res.headers.get('cache-control'), 'no-store');
    const data = JSON.parse(body);
    assert.deepEqual(Object.keys(data), [
      'format',
      'exportedAt',
      'account',
      'profile',
      'identities',
      'links',
      'verificationAttempts',
      'partnerEntries',
      'sessions',
      'passkeys',
      'provenPages',
      'discoveryRuns',
      'partnerApplications',
      'partnerMemberships',
      'photo',
      'providerConnections',
    ]);
    assert.equal(data.account.email, me.email);
    assert.equal(data.identities[0].url, 'https://www.github.com/exported');
    assert.equal(data.links[0].partner, 'Exported partner');
    assert.equal(data.sessions.length, 1);
    for (const secret of [me.password, p.apiToken, me.client.cookies.get('idsvc_session')!, '$argon2id']) assert.equal(body.includes(secret), false);
  });

  test('deletion needs the userId typed, then erases the account and tells linked partners', async () => {
    const me = await person();
    await me.client.submit('/account/identities', { svc_id: 'github', usr_svc_id: 'soon-gone' });
    const p = await linkedPartner('Told partner', me);
    await p.client.updateService(me.email, 'gitlab', 'partner-own');

    const wrong = await me.client.submit('/account/delete', { confirm_user_id: 'someone_else' });
    assert.equal(wrong.res.status, 400);
    assert.match(wrong.body, new RegExp(`Type ${me.userId} exactly to confirm`));
    assert.equal((await p.publicClient.returnServices(me.userId, { profileType: 'public' })).length, 2);

    const { res } = await me.client.submit('/account/delete', { confirm_user_id: me.userId });
    assert.equal(res.headers.get('location'), '/?msg=deleted');
    assert.equal((await eventsOf(p.id)).at(-1)?.type, 'user.deleted');
    await assert.rejects(p.publicClient.returnServices(me.userId, { profileType: 'public' }), /User Not Found/);
    // What the partner pushed itself stays its own (SPEC §3 rule 1).
    assert.deepEqual(
      (await p.client.returnServices(me.email)).map((s) => s.usrSvcId),
      ['partner-own'],
    );
    assert.equal((await me.client.get('/account')).res.status, 303, 'logged out');
    assert.equal((await new SiteClient(t.baseUrl).logIn(me.email, me.password)).status, 400);
    const db = t.ctx.db.kysely;
    assert.equal((await db.selectFrom('users').select('id').where('user_id', '=', me.userId).execute()).length, 0);
    // The userId is free again, the address too.
    const again = new SiteClient(t.baseUrl, { 'x-forwarded-for': '10.1.9.9' });
    assert.equal((await again.signUp({ email: me.email, user_id: me.userId, password: me.password })).status, 303);
  });
});

test('the logs hold none of the addresses, passwords or tokens used', () => {
  assertLogsClean(t, secrets);
});

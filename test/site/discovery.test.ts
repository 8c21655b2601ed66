// "Find my identities" (issue 18 part 2) through HTTP against a small web of local pages: what the
// walk proposes, what ends verified (transitive rel="me"), its limits, and one run at a time.
import assert from 'node:assert/strict';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { after, before, test } from 'node:test';
import { runDueDiscoveries } from '../../src/services/discovery.js';
import { verifyIdentity } from '../../src/verification/verify.js';
import type { TestApp } from '../helpers/app.js';
import { startServer, type LocalServer } from '../verification/servers.js';
import { addSitesOnOneServer, SiteClient, startSiteApp } from './helpers.js';

const SERVICES = ['alice', 'bob', 'carol', 'dave', 'erin', 'frank', 'grace', 'big', 'deep', 'wide'];
let t: TestApp;
let web: LocalServer;
/** path → [status, headers, body] */
const routes = new Map<string, () => [number, Record<string, string>, string]>();

const html = (...relMe: string[]) =>
  `<!doctype html><html><head><title>p</title></head><body>${relMe.map((h) => `<a rel="me" href="${h}">x</a>`).join('')}</body></html>`;
const page =
  (body: string, headers: Record<string, string> = {}) =>
  () =>
    [200, { 'content-type': 'text/html; charset=utf-8', ...headers }, body] as [number, Record<string, string>, string];

before(async () => {
  t = await startSiteApp();
  web = await startServer((req: IncomingMessage, res: ServerResponse) => {
    const route = routes.get(req.url ?? '/');
    const [status, headers, body] = route ? route() : [404, {}, 'not found'];
    res.writeHead(status, headers);
    res.end(body);
  });
  // One service per name, with profiles at ${origin}/{name}/{id}; every other page is a homepage.
  const o = web.origin;
  await addSitesOnOneServer(t, o, SERVICES);
});
after(async () => {
  await web.close();
  await t.close();
});

async function loggedIn(userId: string): Promise<SiteClient> {
  await t.user({ email: `${userId}@example.org`, userId, password: 'a fine long password' });
  const me = new SiteClient(t.baseUrl);
  assert.equal((await me.logIn(userId, 'a fine long password')).status, 303);
  return me;
}

function buildWeb(prefix: string, userId: string) {
  const o = web.origin;
  const profile = `${t.config.baseUrl}/u/${userId}`;
  const p = (name: string) => `${o}/${name}/${prefix}me`;
  const home = `${o}/${prefix}home`;
  routes.set(
    `/${prefix}home`,
    page(`${html(profile, p('alice'), `${o}/go/${prefix}carol`, p('dave'), p('big'), `${o}/${prefix}loop-a`)}<link rel="me" href="${p('bob')}">`, {
      link: `<${p('erin')}>; rel="me"`,
    }),
  );
  routes.set(`/alice/${prefix}me`, page(html(profile))); // links back to the profile page
  routes.set(`/bob/${prefix}me`, page(html(home))); // links back to the homepage, which is proven
  routes.set(`/go/${prefix}carol`, () => [302, { location: `/carol/${prefix}me` }, '']); // a redirect
  routes.set(`/carol/${prefix}me`, page(html(p('frank')))); // links to one that links back
  routes.set(`/frank/${prefix}me`, page(html(home)));
  routes.set(`/dave/${prefix}me`, page(html(p('grace')))); // two strangers linking to each other
  routes.set(`/grace/${prefix}me`, page(html(p('dave'))));
  // Over 1 MiB: the backlink sits past the part that is read.
  routes.set(`/big/${prefix}me`, page(`<!doctype html><html><body><p>${'x'.repeat(1024 * 1024 + 100)}</p>${html(profile)}</body></html>`));
  routes.set(`/erin/${prefix}me`, page('<p>no links in the markup</p>', { link: `<${profile}>; rel="me"` })); // Link: header
  routes.set(`/${prefix}loop-a`, page(html(home, `${o}/${prefix}loop-b`))); // back to the start: a loop
  routes.set(`/${prefix}loop-b`, page(html(`${o}/${prefix}loop-a`, p('deep')))); // depth 2: its links are not followed
  routes.set(`/deep/${prefix}me`, page(html(profile)));
  return { home, p };
}

const csrfOf = (body: string) => /name="_csrf" value="([^"]+)"/.exec(body)![1]!;

test('the walk proposes what it finds and proves what links back, directly or through proven pages', async () => {
  const me = await loggedIn('walker');
  const { home } = buildWeb('w-', 'walker');
  const started = await me.submit('/account/discover', { url: home });
  assert.equal(started.res.status, 303, started.body.slice(0, 300));
  assert.equal(started.res.headers.get('location'), '/account#discover');

  const running = await me.get('/account');
  assert.match(running.body, /data-discovery-poll="\/account\/discover\/status"/);
  const status = JSON.parse((await me.get('/account/discover/status')).body);
  assert.deepEqual(status, { status: 'queued', pagesFetched: 0 });

  assert.equal(await runDueDiscoveries(t.ctx), 1);
  assert.deepEqual(JSON.parse((await me.get('/account/discover/status')).body), { status: 'done', pagesFetched: 11 });

  const done = await me.get('/account');
  const found = [...done.body.matchAll(/data-found="(\w+)" data-links-back="(yes|no)">.*?<strong>Site \w+<\/strong>: ([^<]+)</g)].map((m) => [
    m[1],
    m[3],
    m[2],
  ]);
  assert.deepEqual(found.sort(), [
    ['alice', 'w-me', 'yes'],
    ['big', 'w-me', 'no'],
    ['bob', 'w-me', 'yes'],
    ['carol', 'w-me', 'yes'],
    ['dave', 'w-me', 'no'],
    ['erin', 'w-me', 'yes'],
    ['frank', 'w-me', 'yes'],
    ['grace', 'w-me', 'no'],
  ]);
  assert.doesNotMatch(done.body, /deep\/w-me/, 'depth 3 is not reached');
  assert.match(done.body, /only the first 1 MiB was read/);
  assert.match(done.body, /redirected to http:\/\/127\.0\.0\.1:\d+\/carol\/w-me/);
  assert.match(done.body, /data-other="homepage">[^<]*w-home — a homepage, not a service we know \(links back to you\)/);

  // Every fetch is recorded; the loop is read once.
  const pages = await t.ctx.db.kysely.selectFrom('discovery_pages').select(['url', 'fetched', 'outcome']).execute();
  const homeReads = pages.filter((p) => p.url === home);
  assert.equal(homeReads.length, 1);
  assert.equal(pages.filter((p) => p.fetched === 1).length, 11);
  // The summary and the list of pages count the same pages.
  const read = pages.filter((p) => p.outcome === 'fetched').length;
  const unreachable = pages.filter((p) => p.outcome === 'unreachable').length;
  const notRead = pages.length - read - unreachable;
  const plural = (n: number) => `${n} page${n === 1 ? '' : 's'}`;
  const counts = [`${plural(read)} read`, unreachable ? `${plural(unreachable)} could not be read` : '', notRead ? `${plural(notRead)} not read` : '']
    .filter(Boolean)
    .join(', ');
  assert.ok(read > 0 && notRead > 0, counts);
  assert.match(done.body, new RegExp(`<p role="status">Done, from ${home}: ${counts}\\. </p>`));
  assert.match(done.body, new RegExp(`<summary>Pages looked at \\(${pages.length}\\): ${counts}</summary>`));
  assert.equal((done.body.match(/<li data-outcome=/g) ?? []).length, pages.length);

  // Tick three: two proven, one not.
  const ids = Object.fromEntries(
    [...done.body.matchAll(/data-found="(\w+)"[^>]*><input type="checkbox" name="page" value="(\d+)"/g)].map((m) => [m[1]!, m[2]!]),
  );
  const body = new URLSearchParams({ _csrf: csrfOf(done.body), run_id: /name="run_id" value="(\d+)"/.exec(done.body)![1]! });
  for (const name of ['alice', 'bob', 'dave']) body.append('page', ids[name]!);
  const res = await fetch(`${t.baseUrl}/account/discover/add`, {
    method: 'POST',
    body,
    redirect: 'manual',
    headers: { cookie: [...me.cookies].map(([k, v]) => `${k}=${v}`).join('; ') },
  });
  assert.equal(res.status, 303);
  assert.equal(res.headers.get('location'), '/account?msg=discovered#identities');

  const rows = await t.ctx.db.kysely
    .selectFrom('central_identities')
    .select(['id', 'svc_id', 'usr_svc_id', 'verified', 'verified_by', 'last_checked_at'])
    .orderBy('svc_id')
    .execute();
  assert.deepEqual(
    rows.map((r) => [r.svc_id, r.usr_svc_id, r.verified, r.verified_by]),
    [
      ['alice', 'w-me', 1, 'rel-me'],
      ['bob', 'w-me', 1, 'rel-me'],
      ['dave', 'w-me', 0, null],
    ],
  );
  assert.equal(rows.find((r) => r.svc_id === 'dave')!.last_checked_at, null, 'the unproven one is checked as usual');
  const attempts = await t.ctx.db.kysely.selectFrom('verification_attempts').select(['svc_id', 'outcome', 'detail']).execute();
  assert.equal(attempts.length, 2);
  assert.ok(attempts.every((a) => a.outcome === 'verified' && /Find my identities/.test(a.detail)));

  // The daily check keeps bob verified: his page links to the homepage, proven by the walk.
  const bob = rows.find((r) => r.svc_id === 'bob')!;
  const again = await verifyIdentity(t.ctx, bob.id);
  assert.equal(again?.outcome, 'verified');
  assert.match(again!.detail, /a page already proven yours/);
  // The user's export holds the run, every page it read, and the homepages proven theirs: the start
  // (links to /u/), loop-a (links to the start) and loop-b (links to loop-a).
  const exported = JSON.parse((await me.submit('/account/export')).body) as {
    provenPages: string[];
    discoveryRuns: { startUrl: string; pages: { url: string }[] }[];
  };
  assert.deepEqual(exported.provenPages, [home, `${web.origin}/w-loop-a`, `${web.origin}/w-loop-b`]);
  assert.equal(exported.discoveryRuns[0]?.startUrl, home);
  assert.equal(exported.discoveryRuns[0]?.pages.length, pages.length);
  // And a page linking to a stranger's page proves nothing.
  const dave = rows.find((r) => r.svc_id === 'dave')!;
  assert.equal((await verifyIdentity(t.ctx, dave.id))?.outcome, 'absent');
});

test('a start page that cannot be read is said plainly, with why, and never reported as done', async () => {
  const me = await loggedIn('lost_walker');
  const gone = `${web.origin}/nowhere-home`; // the local server answers 404
  assert.equal((await me.submit('/account/discover', { url: gone })).res.status, 303);
  await runDueDiscoveries(t.ctx);
  const { body } = await me.get('/account');
  assert.match(
    body,
    new RegExp(`<p class="alert error" role="alert">Nothing could be read: ${gone} could not be fetched \\(HTTP 404\\)\\. So nothing was found\\.`),
  );
  assert.doesNotMatch(body, /Done, from/);
  assert.doesNotMatch(body, /Check that your page marks its links with rel="me"/);
  assert.doesNotMatch(body, /<details><summary>Pages looked at/, 'the reason is not tucked away in a collapsed list');
});

test('one run at a time per user, a few a minute, and only web addresses', async () => {
  const me = await loggedIn('busy_walker');
  const { home } = buildWeb('b-', 'busy_walker');
  const bad = await me.submit('/account/discover', { url: 'javascript:alert(1)' });
  assert.equal(bad.res.status, 400);
  assert.match(bad.body, /Enter the address of a web page/);
  assert.equal((await me.submit('/account/discover', { url: home })).res.status, 303);
  const second = await me.submit('/account/discover', { url: home });
  assert.equal(second.res.status, 409);
  assert.match(second.body, /A search is already running/);
  await runDueDiscoveries(t.ctx);
  assert.equal((await me.submit('/account/discover', { url: home })).res.status, 303);
  await runDueDiscoveries(t.ctx);
  assert.equal((await me.submit('/account/discover', { url: home })).res.status, 303);
  await runDueDiscoveries(t.ctx);
  const throttled = await me.submit('/account/discover', { url: home });
  assert.equal(throttled.res.status, 429);
  assert.ok(Number(throttled.res.headers.get('retry-after')) > 0);
});

test('the walk stops at 25 pages and lists the rest unread', async () => {
  const me = await loggedIn('wide_walker');
  const o = web.origin;
  const many = Array.from({ length: 30 }, (_, i) => `${o}/wide/wide-${i}`);
  routes.set('/wide-home', page(html(...many)));
  for (const u of many) routes.set(new URL(u).pathname, page(html()));
  assert.equal((await me.submit('/account/discover', { url: `${o}/wide-home` })).res.status, 303);
  await runDueDiscoveries(t.ctx);
  const run = await t.ctx.db.kysely.selectFrom('discovery_runs').selectAll().orderBy('id', 'desc').executeTakeFirstOrThrow();
  assert.equal(run.pages_fetched, 25);
  assert.equal(run.stopped_by, 'page_limit');
  const unread = await t.ctx.db.kysely.selectFrom('discovery_pages').select('outcome').where('run_id', '=', run.id).where('fetched', '=', 0).execute();
  assert.equal(unread.length, 6);
  const { body } = await me.get('/account');
  assert.match(body, /It stopped at 25 pages/);
});

test("another user's run cannot be added from, and deleting the account erases the runs", async () => {
  const owner = await loggedIn('run_owner');
  const { home } = buildWeb('o-', 'run_owner');
  await owner.submit('/account/discover', { url: home });
  await runDueDiscoveries(t.ctx);
  const run = await t.ctx.db.kysely.selectFrom('discovery_runs').select('id').orderBy('id', 'desc').executeTakeFirstOrThrow();
  const pageId = (
    await t.ctx.db.kysely.selectFrom('discovery_pages').select('id').where('run_id', '=', run.id).where('kind', '=', 'identity').executeTakeFirstOrThrow()
  ).id;
  const thief = await loggedIn('run_thief');
  const res = await thief.submit('/account/discover/add', { run_id: String(run.id), page: String(pageId) });
  assert.equal(res.res.headers.get('location'), '/account?msg=discovered_none#identities');
  const thiefRef = (await t.ctx.db.kysely.selectFrom('users').select('id').where('user_id', '=', 'run_thief').executeTakeFirstOrThrow()).id;
  assert.equal((await t.ctx.db.kysely.selectFrom('central_identities').select('id').where('user_ref', '=', thiefRef).execute()).length, 0);

  assert.equal((await owner.submit('/account/delete', { confirm_user_id: 'run_owner' })).res.status, 303);
  assert.equal((await t.ctx.db.kysely.selectFrom('discovery_runs').select('id').where('id', '=', run.id).execute()).length, 0);
  assert.equal((await t.ctx.db.kysely.selectFrom('discovery_pages').select('id').where('run_id', '=', run.id).execute()).length, 0);
});

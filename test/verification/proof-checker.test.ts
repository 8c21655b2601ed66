// The proof checker against local servers that answer in each service's documented shape: the
// definitions' real origins are replaced by them through IDSVC_TEST_PROOF_ORIGINS, a test-only
// setting. Identities and proof addresses are real rows, on SQLite and PostgreSQL.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type http from 'node:http';
import type { CatalogueEntry } from '../../src/catalogue/catalogue-file.js';
import { listCatalogue, upsertServices } from '../../src/repositories/catalogue.js';
import { proofUrlOf, setProofUrl } from '../../src/repositories/proof-urls.js';
import { findUserByUserId, type User } from '../../src/repositories/users.js';
import { setCentralIdentity } from '../../src/services/central.js';
import { CHECKERS } from '../../src/verification/checkers.js';
import type { CheckOutcome } from '../../src/verification/methods.js';
import { checkProof, proofChecker } from '../../src/verification/proof-checker.js';
import { verifyIdentity } from '../../src/verification/verify.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { startServer, unusedPort, type LocalServer } from './servers.js';

interface Reply {
  status?: number;
  json?: unknown;
  body?: string;
  type?: string;
  headers?: Record<string, string>;
  /** Never answer: the checker's deadline must end the wait. */
  hang?: boolean;
}

const ORIGINS = [
  'https://api.github.com',
  'https://gitlab.com',
  'https://codeberg.org',
  'https://gitee.com',
  'https://mastodon.social',
  'https://fosstodon.org',
  'https://pixelfed.social',
  'https://lemmy.world',
  'https://public.api.bsky.app',
  'https://hacker-news.firebaseio.com',
  'https://lobste.rs',
  'https://www.reddit.com',
  'https://dev.to',
  'https://forum.rclone.org',
  'https://api.stackexchange.com',
  'https://pub.orcid.org',
  'https://keybase.io',
  'https://lichess.org',
  'https://api.launchpad.net',
  'https://t.me',
  'https://en.wikipedia.org',
  'https://steamcommunity.com',
  'https://en.gravatar.com',
  'https://public-api.wordpress.com',
  'https://www.youtube.com',
];

const servers = new Map<string, LocalServer>();
const answers = new Map<string, Map<string, Reply>>();
const seen = new Map<string, { url: string; accept: string; userAgent: string }[]>();
let t: TestApp;
let deadPort: number;
let users = 0;

function handler(origin: string): http.RequestListener {
  return (req, res) => {
    seen.get(origin)!.push({ url: req.url ?? '', accept: String(req.headers.accept ?? ''), userAgent: String(req.headers['user-agent'] ?? '') });
    const reply = answers.get(origin)!.get(req.url ?? '') ?? { status: 404, json: { message: 'Not Found' } };
    if (reply.hang) return;
    const body = reply.body ?? JSON.stringify(reply.json);
    res.writeHead(reply.status ?? 200, {
      'content-type': reply.type ?? (reply.body === undefined ? 'application/json; charset=utf-8' : 'text/html; charset=utf-8'),
      ...reply.headers,
    });
    res.end(body);
  };
}

before(async () => {
  for (const origin of ORIGINS) {
    answers.set(origin, new Map());
    seen.set(origin, []);
    servers.set(origin, await startServer(handler(origin)));
  }
  deadPort = await unusedPort();
  const map = [...servers].map(([origin, s]) => `${origin}=${s.origin}`);
  // Gitea's own instance points at a port where nothing listens: a network failure.
  map.push(`https://gitea.com=http://127.0.0.1:${deadPort}`);
  // A short deadline keeps the hanging server's test short; local answers take milliseconds.
  t = await startTestApp({ BASE_URL: 'https://idsvc.example', IDSVC_TEST_PROOF_ORIGINS: map.join(','), VERIFY_TIMEOUT_MS: '3000' });
  const all = await listCatalogue(t.ctx.db, true);
  // Shipped disabled: enabled as an operator would.
  const enabled: CatalogueEntry[] = all.filter((s) => ['mastodon', 'stackoverflow', 'orcid'].includes(s.svcId)).map((s) => ({ ...s, disabled: false }));
  assert.equal(enabled.length, 3);
  await t.ctx.db.write((w) => upsertServices(w, enabled, t.clock.now()));
});

after(async () => {
  await t.close();
  for (const s of servers.values()) await s.close();
});

async function newUser(): Promise<User> {
  users += 1;
  const u = await t.user({ email: `proof.${users}@example.org`, userId: `proof_${users}` });
  return (await findUserByUserId(t.ctx.db, u.userId))!;
}

interface Case {
  svcId: string;
  usrSvcId: string;
  proofUrl?: string;
  /** What the services answer, by origin and path; the proof text's forms are put in by `proof(...)`. */
  replies: [origin: string, path: string, reply: Reply][];
}

/** Adds the identity as a person would (a central entry, and its proof address) and checks it. */
async function check(c: Case, user?: User): Promise<{ outcome: CheckOutcome; user: User }> {
  const owner = user ?? (await newUser());
  for (const [origin, path, reply] of c.replies) answers.get(origin)!.set(path, reply);
  const svc = (await t.ctx.catalogue.get()).byId.get(c.svcId)!;
  assert.ok(svc, `${c.svcId} is in the catalogue`);
  const { row } = await t.ctx.db.write((tx) => setCentralIdentity(tx, owner, svc, c.usrSvcId, { partnerId: null }, t.clock.now()));
  const proofUrl = c.proofUrl;
  if (proofUrl !== undefined) assert.ok(await t.ctx.db.write((w) => setProofUrl(w, owner.id, c.svcId, proofUrl)));
  const outcome = await checkProof(t.ctx, {
    identityId: row.id,
    userRef: owner.id,
    userId: owner.user_id,
    svc,
    usrSvcId: c.usrSvcId,
    profilePageUrl: `${t.config.baseUrl}/u/${owner.user_id}`,
    proofUrl: await proofUrlOf(t.ctx.db, row.id),
  });
  return { outcome, user: owner };
}

const url = (u: User) => `https://idsvc.example/u/${u.user_id}`;
const short = (u: User) => `idsvc:idsvc.example:${u.user_id}`;

/** One service, one person: what the person's own proof in the right place gives, and what each way of getting it wrong gives. */
interface ProviderCase {
  svcId: string;
  usrSvcId: string;
  origin: string;
  path: string;
  accept?: RegExp;
  /** The service's answer with `text` where the person put their words, in the field the definition reads. */
  right: (text: string) => Reply;
  /** The same answer with `text` in a field the definition does not read. */
  wrongField: (text: string) => Reply;
  /** The answer about another account (renamed, or the name taken by someone else). */
  renamed?: (text: string) => Reply;
  extra?: [origin: string, path: string, reply: Reply][];
}

const GH = 'https://api.github.com';
const PROVIDERS: ProviderCase[] = [
  {
    svcId: 'github',
    usrSvcId: 'octocat',
    origin: GH,
    path: '/users/octocat',
    accept: /application\/vnd\.github\+json/,
    right: (x) => ({ json: { login: 'octocat', id: 1, bio: `Cats. ${x}`, blog: '' } }),
    wrongField: (x) => ({ json: { login: 'octocat', name: x, bio: '', blog: '' } }),
    renamed: (x) => ({ json: { login: 'octocat-new', bio: x } }),
  },
  {
    svcId: 'gitlab',
    usrSvcId: 'jane',
    origin: 'https://gitlab.com',
    path: '/api/v4/users/42',
    extra: [
      [
        'https://gitlab.com',
        '/api/v4/users?username=jane',
        { json: [{ id: 42, username: 'jane', name: 'Jane', state: 'active', avatar_url: '', web_url: 'https://gitlab.com/jane' }] },
      ],
    ],
    right: (x) => ({ json: { id: 42, username: 'jane', name: 'Jane', bio: x, website_url: '', public_email: '' } }),
    wrongField: (x) => ({ json: { id: 42, username: 'jane', name: x, bio: '', website_url: '' } }),
    renamed: (x) => ({ json: { id: 42, username: 'jane2', bio: x } }),
  },
  {
    svcId: 'codeberg',
    usrSvcId: 'alice',
    origin: 'https://codeberg.org',
    path: '/api/v1/users/alice',
    right: (x) => ({ json: { id: 7, login: 'alice', full_name: 'Alice', description: x, website: '' } }),
    wrongField: (x) => ({ json: { id: 7, login: 'alice', full_name: x, description: '' } }),
    renamed: (x) => ({ json: { id: 7, login: 'bob', description: x } }),
  },
  {
    svcId: 'gitee',
    usrSvcId: 'alice',
    origin: 'https://gitee.com',
    path: '/api/v5/users/alice',
    right: (x) => ({ json: { id: 1, login: 'alice', name: 'A', bio: x, blog: '' } }),
    wrongField: (x) => ({ json: { id: 1, login: 'alice', name: x, bio: '' } }),
  },
  {
    svcId: 'mastodon',
    usrSvcId: 'alice@mastodon.social',
    origin: 'https://mastodon.social',
    path: '/users/alice',
    accept: /application\/activity\+json/,
    right: (x) => ({
      type: 'application/activity+json; charset=utf-8',
      json: {
        type: 'Person',
        preferredUsername: 'alice',
        name: 'Alice',
        summary: '<p>Hi</p>',
        attachment: [
          {
            type: 'PropertyValue',
            name: 'idsvc',
            value: `<a href="${x}" rel="me nofollow noopener" target="_blank"><span class="invisible">https://</span><span class="">${x.replace('https://', '')}</span><span class="invisible"></span></a>`,
          },
        ],
      },
    }),
    wrongField: (x) => ({ json: { type: 'Person', preferredUsername: 'alice', name: x, summary: '<p>Hi</p>', attachment: [] } }),
    renamed: (x) => ({ json: { type: 'Person', preferredUsername: 'alice_moved', summary: x } }),
  },
  {
    svcId: 'fosstodon',
    usrSvcId: 'alice',
    origin: 'https://fosstodon.org',
    path: '/users/alice',
    right: (x) => ({ json: { type: 'Person', preferredUsername: 'alice', summary: `<p>${x.replace(/:/g, '&#58;')}</p>` } }),
    wrongField: (x) => ({ json: { type: 'Person', preferredUsername: 'alice', name: x, summary: '' } }),
  },
  {
    svcId: 'pixelfedsocial',
    usrSvcId: 'alice',
    origin: 'https://pixelfed.social',
    path: '/users/alice',
    right: (x) => ({ json: { type: 'Person', preferredUsername: 'alice', summary: x } }),
    wrongField: (x) => ({ json: { type: 'Person', preferredUsername: 'alice', name: x, summary: '' } }),
  },
  {
    svcId: 'lemmyworld',
    usrSvcId: 'alice',
    origin: 'https://lemmy.world',
    path: '/u/alice',
    right: (x) => ({ json: { type: 'Person', preferredUsername: 'alice', summary: `<p>${x}</p>`, source: { content: x, mediaType: 'text/markdown' } } }),
    wrongField: (x) => ({ json: { type: 'Person', preferredUsername: 'alice', name: x } }),
  },
  {
    svcId: 'bluesky',
    usrSvcId: 'alice',
    origin: 'https://public.api.bsky.app',
    path: '/xrpc/app.bsky.actor.getProfile?actor=alice.bsky.social',
    right: (x) => ({ json: { did: 'did:plc:abc', handle: 'alice.bsky.social', displayName: 'Alice', description: `hello\n${x}`, followersCount: 3 } }),
    wrongField: (x) => ({ json: { did: 'did:plc:abc', handle: 'alice.bsky.social', displayName: x, description: '' } }),
    renamed: (x) => ({ json: { did: 'did:plc:abc', handle: 'handle.invalid', description: x } }),
  },
  {
    svcId: 'hackernews',
    usrSvcId: 'pg',
    origin: 'https://hacker-news.firebaseio.com',
    path: '/v0/user/pg.json',
    // The API escapes slashes as &#x2F; in `about`.
    right: (x) => ({ json: { about: `Bug fixer.<p>${x.replace(/\//g, '&#x2F;')}`, created: 1160418092, id: 'pg', karma: 155111 } }),
    wrongField: (x) => ({ json: { about: '', id: 'pg', karma: 1, submitted: [x] } }),
  },
  {
    svcId: 'lobsters',
    usrSvcId: 'alice',
    origin: 'https://lobste.rs',
    path: '/~alice.json',
    right: (x) => ({ json: { username: 'alice', created_at: '2020-01-01T00:00:00.000-06:00', about: `<p><a href="${x}" rel="ugc">${x}</a></p>`, karma: 3 } }),
    wrongField: (x) => ({ json: { username: 'alice', about: '', github_username: x } }),
  },
  {
    svcId: 'reddit',
    usrSvcId: 'spez',
    origin: 'https://www.reddit.com',
    path: '/user/spez/about.json',
    right: (x) => ({
      json: { kind: 't2', data: { name: 'spez', is_suspended: false, subreddit: { display_name: 'u_spez', public_description: x, title: 'spez' } } },
    }),
    wrongField: (x) => ({ json: { kind: 't2', data: { name: 'spez', subreddit: { public_description: '', title: x } } } }),
    renamed: (x) => ({ json: { kind: 't2', data: { name: 'spez2', subreddit: { public_description: x } } } }),
  },
  {
    svcId: 'devcommunity',
    usrSvcId: 'ben',
    origin: 'https://dev.to',
    path: '/api/users/by_username?url=ben',
    right: (x) => ({ json: { type_of: 'user', id: 1, username: 'ben', name: 'Ben', summary: x, website_url: null } }),
    wrongField: (x) => ({ json: { type_of: 'user', id: 1, username: 'ben', name: x, summary: '' } }),
  },
  {
    svcId: 'rcloneforum',
    usrSvcId: 'alice',
    origin: 'https://forum.rclone.org',
    path: '/u/alice.json',
    right: (x) => ({
      json: {
        user_badges: [],
        user: { id: 5, username: 'alice', name: 'Alice', bio_cooked: `<p><a href="${x}" rel="noopener nofollow ugc">${x}</a></p>`, website: null },
      },
    }),
    wrongField: (x) => ({ json: { user_badges: [], user: { id: 5, username: 'alice', name: x, bio_cooked: '' } } }),
  },
  {
    svcId: 'stackoverflow',
    usrSvcId: '22656',
    origin: 'https://api.stackexchange.com',
    path: '/2.3/users/22656?site=stackoverflow',
    right: (x) => ({
      json: {
        items: [{ user_id: 22656, display_name: 'Jon Skeet', website_url: x, link: 'https://stackoverflow.com/users/22656/jon-skeet' }],
        has_more: false,
        quota_max: 300,
        quota_remaining: 299,
      },
    }),
    wrongField: (x) => ({ json: { items: [{ user_id: 22656, display_name: x, website_url: '' }], has_more: false } }),
  },
  {
    svcId: 'orcid',
    usrSvcId: '0000-0002-1825-0097',
    origin: 'https://pub.orcid.org',
    path: '/v3.0/0000-0002-1825-0097/person',
    right: (x) => ({
      json: {
        name: { path: '0000-0002-1825-0097' },
        biography: null,
        'researcher-urls': { 'researcher-url': [{ 'url-name': 'idsvc', url: { value: x } }] },
        path: '/0000-0002-1825-0097/person',
      },
    }),
    wrongField: (x) => ({
      json: { name: { 'given-names': { value: x } }, biography: null, 'researcher-urls': { 'researcher-url': [] }, path: '/0000-0002-1825-0097/person' },
    }),
  },
  {
    svcId: 'keybase',
    usrSvcId: 'chris',
    origin: 'https://keybase.io',
    path: '/_/api/1.0/user/lookup.json?usernames=chris&fields=basics,profile',
    right: (x) => ({ json: { status: { code: 0, name: 'OK' }, them: [{ id: 'x', basics: { username: 'chris' }, profile: { full_name: 'Chris', bio: x } }] } }),
    wrongField: (x) => ({ json: { status: { code: 0, name: 'OK' }, them: [{ id: 'x', basics: { username: 'chris' }, profile: { full_name: x, bio: '' } }] } }),
  },
  {
    svcId: 'lichess',
    usrSvcId: 'thibault',
    origin: 'https://lichess.org',
    path: '/api/user/thibault',
    right: (x) => ({ json: { id: 'thibault', username: 'thibault', profile: { bio: x } } }),
    wrongField: (x) => ({ json: { id: 'thibault', username: 'thibault', profile: { firstName: x } } }),
  },
  {
    svcId: 'launchpad',
    usrSvcId: 'alice',
    origin: 'https://api.launchpad.net',
    path: '/devel/~alice',
    right: (x) => ({ json: { name: 'alice', display_name: 'Alice', description: x } }),
    wrongField: (x) => ({ json: { name: 'alice', display_name: x, description: '' } }),
  },
  {
    svcId: 'telegram',
    usrSvcId: 'durov',
    origin: 'https://t.me',
    path: '/durov',
    right: (x) => ({
      body: `<!DOCTYPE html><html><head><title>Telegram: Contact @durov</title></head><body><div class="tgme_page"><div class="tgme_page_title"><span dir="auto">Pavel</span></div><div class="tgme_page_extra">@durov</div><div class="tgme_page_description">${x.replace(/:/g, '&#58;')}</div></div></body></html>`,
    }),
    wrongField: (x) => ({
      body: `<html><head><meta property="og:description" content="${x}"></head><body><div class="tgme_page_description">Hi</div></body></html>`,
    }),
  },
  {
    svcId: 'steamcommunityuser',
    usrSvcId: 'gabelogannewell',
    origin: 'https://steamcommunity.com',
    path: '/id/gabelogannewell/?xml=1',
    right: (x) => ({
      type: 'text/xml; charset=utf-8',
      body: `<?xml version="1.0" encoding="UTF-8" standalone="yes"?><profile><steamID64>76561197960287930</steamID64><steamID><![CDATA[Rabscuttle]]></steamID><customURL><![CDATA[gabelogannewell]]></customURL><summary><![CDATA[Hi<br><a class="bb_link" href="https://steamcommunity.com/linkfilter/?u=${encodeURIComponent(x)}" rel="noreferrer">${x}</a>]]></summary></profile>`,
    }),
    wrongField: (x) => ({
      type: 'text/xml; charset=utf-8',
      body: `<?xml version="1.0"?><profile><steamID><![CDATA[${x}]]></steamID><customURL><![CDATA[gabelogannewell]]></customURL><summary><![CDATA[Hi]]></summary></profile>`,
    }),
    renamed: (x) => ({
      type: 'text/xml; charset=utf-8',
      body: `<?xml version="1.0"?><profile><customURL><![CDATA[someoneelse]]></customURL><summary><![CDATA[${x}]]></summary></profile>`,
    }),
  },
  {
    svcId: 'gravatar',
    usrSvcId: 'beau',
    origin: 'https://en.gravatar.com',
    path: '/beau.json',
    right: (x) => ({
      json: { entry: [{ id: '1', hash: '22bd03ace6f176bfe0c593650bcf45d8', preferredUsername: 'beau', displayName: 'Beau', aboutMe: x, urls: [] }] },
    }),
    wrongField: (x) => ({ json: { entry: [{ id: '1', preferredUsername: 'beau', displayName: x, aboutMe: '', urls: [] }] } }),
    renamed: (x) => ({ json: { entry: [{ id: '1', preferredUsername: 'beau2', aboutMe: x }] } }),
  },
  {
    svcId: 'wordpress',
    usrSvcId: 'alice',
    origin: 'https://public-api.wordpress.com',
    path: '/rest/v1.1/sites/alice.wordpress.com',
    right: (x) => ({ json: { ID: 1, name: 'Alice', description: x, URL: 'https://alice.wordpress.com' } }),
    wrongField: (x) => ({ json: { ID: 1, name: x, description: '', URL: 'https://alice.wordpress.com' } }),
  },
  {
    svcId: 'youtube',
    usrSvcId: 'alice',
    origin: 'https://www.youtube.com',
    path: '/@alice',
    right: (x) => ({
      body: `<!DOCTYPE html><html><head><title>Alice - YouTube</title><meta name="description" content="Videos. ${x.replace(/:/g, '&#58;')}"></head><body></body></html>`,
    }),
    wrongField: (x) => ({ body: `<html><head><title>${x}</title><meta name="description" content="Videos."></head><body></body></html>` }),
  },
  {
    svcId: 'wikipedia',
    usrSvcId: 'Jimbo Wales',
    origin: 'https://en.wikipedia.org',
    path: '/w/index.php?title=User:Jimbo%20Wales&action=raw',
    right: (x) => ({ type: 'text/x-wiki; charset=UTF-8', body: `{{User page}}\nElsewhere: ${x}\n` }),
    wrongField: () => ({ type: 'text/x-wiki; charset=UTF-8', body: 'A user page without it.\n' }),
  },
];

describe('each provider, against a server answering in its shape', () => {
  for (const pc of PROVIDERS) {
    test(`${pc.svcId}: the proof where it must be verifies; elsewhere, another account’s, renamed or gone does not`, async () => {
      const base = { svcId: pc.svcId, usrSvcId: pc.usrSvcId };
      const reply = (r: Reply): Case['replies'] => [...(pc.extra ?? []), [pc.origin, pc.path, r]];

      const person = await newUser();
      const before = seen.get(pc.origin)!.length;
      const { outcome } = await check({ ...base, replies: reply(pc.right(url(person))) }, person);
      assert.equal(outcome.result, 'verified', `${pc.svcId}: ${outcome.detail}`);
      assert.equal(outcome.method, 'proof');
      assert.equal(outcome.evidenceUrl, `${servers.get(pc.origin)!.origin}${pc.path}`);
      assert.match(outcome.detail, /^Found (https:\/\/idsvc\.example\/u\/|idsvc:idsvc\.example:)/);
      const asked = seen.get(pc.origin)!.slice(before).at(-1)!;
      assert.match(asked.userAgent, /idsvc.*https:\/\/idsvc\.example/, 'the user agent names the service and its address');
      if (pc.accept) assert.match(asked.accept, pc.accept);

      const shortForm = await newUser();
      assert.equal((await check({ ...base, replies: reply(pc.right(short(shortForm))) }, shortForm)).outcome.result, 'verified', 'the short form counts too');

      const other = await newUser();
      const stranger = await newUser();
      const theirs = await check({ ...base, replies: reply(pc.right(url(stranger))) }, other);
      assert.equal(theirs.outcome.result, 'absent', 'another account’s proof does not count');
      assert.match(theirs.outcome.detail, /Looked for https:\/\/idsvc\.example\/u\/proof_\d+ or idsvc:idsvc\.example:proof_\d+/);

      const prefixed = await newUser();
      // proof_1 must not be proven by proof_10's text: the userId may not run on.
      assert.equal(
        (await check({ ...base, replies: reply(pc.right(`${url(prefixed)}0`)) }, prefixed)).outcome.result,
        'absent',
        'a longer userId is another account',
      );

      const wrong = await newUser();
      assert.equal(
        (await check({ ...base, replies: reply(pc.wrongField(url(wrong))) }, wrong)).outcome.result,
        'absent',
        'the proof in a field that is not read',
      );

      if (pc.renamed) {
        const renamed = await newUser();
        const r = await check({ ...base, replies: reply(pc.renamed(url(renamed))) }, renamed);
        assert.equal(r.outcome.result, 'absent', 'an answer about another name');
        assert.match(r.outcome.detail, /gone or renamed/);
      }

      const gone = await newUser();
      const g = await check({ ...base, replies: reply({ status: 404, json: { message: 'Not Found' } }) }, gone);
      assert.equal(g.outcome.result, 'absent', 'the account is gone');
      assert.equal(g.outcome.status, 404);
    });
  }
});

describe('a service that cannot be read', () => {
  const github = (reply: Reply): Case => ({ svcId: 'github', usrSvcId: 'downcat', replies: [[GH, '/users/downcat', reply]] });

  test('503, and any 5xx, is transient', async () => {
    const { outcome } = await check(github({ status: 503, body: 'Service Unavailable', type: 'text/plain' }));
    assert.equal(outcome.result, 'transient');
    assert.equal(outcome.status, 503);
    assert.match(outcome.detail, /HTTP 503/);
  });

  test('429 is transient, with the wait Retry-After asks for', async () => {
    const { outcome } = await check(github({ status: 429, json: { message: 'API rate limit exceeded' }, headers: { 'retry-after': '120' } }));
    assert.equal(outcome.result, 'transient');
    assert.equal(outcome.result === 'transient' ? outcome.retryAfterMs : undefined, 120_000);
  });

  test('a 403 refusal says nothing of the proof: transient', async () => {
    const { outcome } = await check(github({ status: 403, json: { message: 'API rate limit exceeded for 127.0.0.1' } }));
    assert.equal(outcome.result, 'transient');
  });

  test('an answer that is not JSON is transient', async () => {
    const { outcome } = await check(github({ status: 200, body: '<html>maintenance</html>' }));
    assert.equal(outcome.result, 'transient');
  });

  test('a network failure is transient', async () => {
    const { outcome } = await check({ svcId: 'gitea', usrSvcId: 'alice', replies: [] });
    assert.equal(outcome.result, 'transient');
    assert.equal(outcome.evidenceUrl, `http://127.0.0.1:${deadPort}/api/v1/users/alice`);
    assert.match(outcome.detail, /could not connect/);
  });

  test('a service that does not answer in time is transient', async () => {
    const { outcome } = await check(github({ hang: true }));
    assert.equal(outcome.result, 'transient');
    assert.match(outcome.detail, /did not answer in time/);
  });

  test('a request the polite fetcher defers (the host’s budget, or its Retry-After) is transient, with the wait', async () => {
    const person = await newUser();
    const svc = (await t.ctx.catalogue.get()).byId.get('github')!;
    let asked = 0;
    const outcome = await checkProof(t.ctx, {
      identityId: 0,
      userRef: person.id,
      userId: person.user_id,
      svc,
      usrSvcId: 'octocat',
      profilePageUrl: url(person),
      proofUrl: null,
      fetch: async () => {
        asked += 1;
        return { ok: false, reason: 'deferred', detail: 'api.github.com had its share of requests this minute', retryAfterMs: 30_000 };
      },
    });
    assert.equal(asked, 1, 'the check went through the fetcher it was given');
    assert.equal(outcome.result, 'transient');
    assert.equal(outcome.result === 'transient' ? outcome.retryAfterMs : undefined, 30_000);
  });

  test('Bluesky’s documented 400 for a missing profile is a definite no', async () => {
    const { outcome } = await check({
      svcId: 'bluesky',
      usrSvcId: 'nobody',
      replies: [
        [
          'https://public.api.bsky.app',
          '/xrpc/app.bsky.actor.getProfile?actor=nobody.bsky.social',
          { status: 400, json: { error: 'InvalidRequest', message: 'Profile not found' } },
        ],
      ],
    });
    assert.equal(outcome.result, 'absent');
  });

  test('Hacker News answers null for a user who does not exist', async () => {
    const { outcome } = await check({
      svcId: 'hackernews',
      usrSvcId: 'nobody',
      replies: [['https://hacker-news.firebaseio.com', '/v0/user/nobody.json', { body: 'null', type: 'application/json' }]],
    });
    assert.equal(outcome.result, 'absent');
    assert.match(outcome.detail, /names no account/);
  });
});

describe('a proof at an address the person gives (a GitHub gist)', () => {
  const GIST = 'aa5a315d61ae9438b18d';
  const gist = (owner: string, content: string): Reply => ({
    json: { id: GIST, description: '', owner: { login: owner }, files: { 'idsvc.md': { filename: 'idsvc.md', content } } },
  });

  test('a gist of the identity’s account with the proof verifies, even when the bio does not', async () => {
    const person = await newUser();
    const { outcome } = await check(
      {
        svcId: 'github',
        usrSvcId: 'gister',
        proofUrl: `https://gist.github.com/gister/${GIST}`,
        replies: [
          [GH, '/users/gister', { json: { login: 'gister', bio: '' } }],
          [GH, `/gists/${GIST}`, gist('gister', `This is me: ${url(person)}`)],
        ],
      },
      person,
    );
    assert.equal(outcome.result, 'verified', outcome.detail);
    assert.equal(outcome.evidenceUrl, `${servers.get(GH)!.origin}/gists/${GIST}`);
  });

  test('a gist another account owns does not count, whatever its address says', async () => {
    const person = await newUser();
    const { outcome } = await check(
      {
        svcId: 'github',
        usrSvcId: 'gister2',
        proofUrl: `https://gist.github.com/gister2/${GIST}`,
        replies: [
          [GH, '/users/gister2', { json: { login: 'gister2', bio: '' } }],
          [GH, `/gists/${GIST}`, gist('mallory', url(person))],
        ],
      },
      person,
    );
    assert.equal(outcome.result, 'absent');
  });

  test('an address that is not a gist is never fetched', async () => {
    const person = await newUser();
    const target = servers.get('https://lobste.rs')!;
    const before = target.requests.length;
    const { outcome } = await check(
      {
        svcId: 'github',
        usrSvcId: 'gister3',
        proofUrl: `${target.origin}/gister3/${GIST}`,
        replies: [[GH, '/users/gister3', { json: { login: 'gister3', bio: '' } }]],
      },
      person,
    );
    assert.equal(outcome.result, 'absent');
    assert.equal(target.requests.length, before, 'nothing was asked of the address given');
  });
});

describe('the checker', () => {
  test('is in CHECKERS as the proof method, and applies to the services its definitions name', () => {
    assert.ok(CHECKERS.includes(proofChecker));
    assert.equal(proofChecker.method, 'proof');
  });

  test('applies where a definition reads the identity, and nowhere else', async () => {
    const byId = new Map((await listCatalogue(t.ctx.db, true)).map((s) => [s.svcId, s]));
    assert.equal(proofChecker.appliesTo(byId.get('github')!, 'octocat'), true);
    assert.equal(proofChecker.appliesTo(byId.get('mastodon')!, 'alice@mastodon.social'), true);
    assert.equal(proofChecker.appliesTo(byId.get('mastodon')!, 'not a handle'), false);
    assert.equal(proofChecker.appliesTo(byId.get('1337x')!, 'alice'), false);
  });
});

describe('through verify.ts, as "Verify now" and the daily re-check run it', () => {
  test('a bio proof verifies by the proof method, and a gist address kept with the identity is read', async () => {
    const person = await newUser();
    const svc = (await t.ctx.catalogue.get()).byId.get('github')!;
    answers.get(GH)!.set('/users/throughbio', { json: { login: 'throughbio', bio: `me: ${url(person)}` } });
    const { row } = await t.ctx.db.write((tx) => setCentralIdentity(tx, person, svc, 'throughbio', { partnerId: null }, t.clock.now()));
    const result = await verifyIdentity(t.ctx, row.id);
    assert.equal(result?.verified, true, JSON.stringify(result?.outcomes));
    assert.equal(result?.method, 'proof');
    const stored = await t.ctx.db.kysely
      .selectFrom('central_identities')
      .select(['verified', 'verified_by', 'evidence_url'])
      .where('id', '=', row.id)
      .executeTakeFirstOrThrow();
    assert.equal(stored.verified, 1);
    assert.equal(stored.verified_by, 'proof');
    assert.equal(stored.evidence_url, `${servers.get(GH)!.origin}/users/throughbio`);

    const gister = await newUser();
    const GIST = 'bb5a315d61ae9438b18d';
    answers.get(GH)!.set('/users/throughgist', { json: { login: 'throughgist', bio: '' } });
    answers
      .get(GH)!
      .set(`/gists/${GIST}`, { json: { id: GIST, owner: { login: 'throughgist' }, description: '', files: { 'a.md': { content: url(gister) } } } });
    const added = await t.ctx.db.write((tx) => setCentralIdentity(tx, gister, svc, 'throughgist', { partnerId: null }, t.clock.now()));
    const before = await verifyIdentity(t.ctx, added.row.id);
    assert.equal(before?.verified, false, 'no address given yet, and the bio is empty');
    assert.ok(await t.ctx.db.write((w) => setProofUrl(w, gister.id, 'github', `https://gist.github.com/throughgist/${GIST}`)));
    const after = await verifyIdentity(t.ctx, added.row.id);
    assert.equal(after?.verified, true, JSON.stringify(after?.outcomes));
    assert.equal(after?.method, 'proof');
  });
});

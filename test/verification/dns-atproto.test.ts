// The `dns` and `atproto` methods against a real DNS server on loopback (dgram and dns-packet, test/verification/dns-server.ts) and a local DID
// directory and PDS, on SQLite and PostgreSQL: each positive and negative, and transient failures
// (SERVFAIL, no answer, a directory that is down) told apart from definite negatives.
import assert from 'node:assert/strict';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { after, before, describe, test } from 'node:test';
import { upsertServices } from '../../src/repositories/catalogue.js';
import { findUserByUserId, type User } from '../../src/repositories/users.js';
import { setCentralIdentity } from '../../src/services/central.js';
import { atprotoChecker, handleOf } from '../../src/verification/atproto-checker.js';
import { dnsChecker } from '../../src/verification/dns-checker.js';
import type { CheckSubject } from '../../src/verification/methods.js';
import { shortProofText } from '../../src/verification/proof-text.js';
import { verifyIdentity } from '../../src/verification/verify.js';
import type { TestApp } from '../helpers/app.js';
import { startSiteApp } from '../site/helpers.js';
import { startDns, type LocalDns } from './dns-server.js';
import { startServer, type LocalServer } from './servers.js';

let t: TestApp;
let dns: LocalDns;
/** The PLC directory, the PDS and the Bluesky profile pages in one local server. */
let remote: LocalServer;
const didDocs = new Map<string, unknown>();
const descriptions = new Map<string, string>();
let plcDown = false;
let users = 0;

const DID_A = 'did:plc:aaaaaaaaaaaaaaaaaaaaaaaa';
const DID_B = 'did:plc:bbbbbbbbbbbbbbbbbbbbbbbb';

before(async () => {
  dns = await startDns();
  remote = await startServer((req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? '/', 'http://x');
    const json = (status: number, body: unknown) => void res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    if (url.pathname.startsWith('/plc/')) {
      if (plcDown) return json(503, { message: 'maintenance' });
      const doc = didDocs.get(decodeURIComponent(url.pathname.slice(5)));
      return doc ? json(200, doc) : json(404, { message: 'DID not registered' });
    }
    if (url.pathname === '/xrpc/com.atproto.repo.getRecord') {
      const description = descriptions.get(url.searchParams.get('repo') ?? '');
      if (description === undefined || url.searchParams.get('collection') !== 'app.bsky.actor.profile' || url.searchParams.get('rkey') !== 'self') {
        return json(400, { error: 'RecordNotFound', message: 'Could not locate record' });
      }
      return json(200, {
        uri: `at://${url.searchParams.get('repo')}/app.bsky.actor.profile/self`,
        cid: 'bafyreia',
        value: { $type: 'app.bsky.actor.profile', displayName: 'Someone', description },
      });
    }
    // The Bluesky profile pages the catalogue's URL points to: no rel="me" links there.
    res.writeHead(404, { 'content-type': 'text/html' }).end('not found');
  });
  // Wide enough for a busy machine: a check answered late there counts as transient (400 ms failed
  // one in CI); only the one silent-server case waits it out.
  t = await startSiteApp({ DNS_SERVERS: dns.server, PLC_DIRECTORY_URL: `${remote.origin}/plc`, VERIFY_TIMEOUT_MS: '2000' });
  const now = t.clock.now();
  const base = { svcMobileURL: '', svcIphoneURL: '', svcFavicon: '', svcIcon: '', svcIphoneIcon: '', regexCheck: null, urlBuilder: null, disabled: false };
  await t.ctx.db.write((w) =>
    upsertServices(
      w,
      [
        // `website`, a person's own domain, is the shipped catalogue's own: the tests below use it as shipped.
        { ...base, svcId: 'bluesky', svcName: 'Bluesky', svcURL: 'https://bsky.app/', svcLeftURL: `${remote.origin}/profile/`, svcRightURL: '.bsky.social' },
      ],
      now,
    ),
  );
});
after(async () => {
  await t.close();
  await remote.close();
  await dns.close();
});

async function newUser(): Promise<User> {
  users += 1;
  const u = await t.user({ email: `dnsat.${users}@example.org`, userId: `dnsat_${users}` });
  return (await findUserByUserId(t.ctx.db, u.userId))!;
}

async function subjectFor(user: User, svcId: string, usrSvcId: string): Promise<CheckSubject & { id: number }> {
  const svc = (await t.ctx.catalogue.get()).byId.get(svcId)!;
  const { row } = await t.ctx.db.write((tx) => setCentralIdentity(tx, user, svc, usrSvcId, { partnerId: null }, t.clock.now()));
  return {
    id: row.id,
    identityId: row.id,
    userRef: user.id,
    userId: user.user_id,
    svc,
    usrSvcId,
    profilePageUrl: `${t.config.baseUrl}/u/${user.user_id}`,
    proofUrl: null,
  };
}

const entry = (id: number) => t.ctx.db.kysely.selectFrom('central_identities').selectAll().where('id', '=', id).executeTakeFirstOrThrow();

describe("dns: a TXT record on the person's own domain", () => {
  test('the profile URL at _idsvc.<domain> verifies, through the configured DNS server', async () => {
    const user = await newUser();
    const domain = `${user.user_id.replace('_', '-')}.test`;
    dns.txt.set(`_idsvc.${domain}`, ['v=something-else', `${t.config.baseUrl}/u/${user.user_id}`]);
    const s = await subjectFor(user, 'website', domain);
    assert.ok(dnsChecker.appliesTo(s.svc, s.usrSvcId));
    const result = await verifyIdentity(t.ctx, s.id);
    assert.equal(result?.verified, true);
    assert.equal(result?.method, 'dns');
    const row = await entry(s.id);
    assert.equal(row.verified_by, 'dns');
    assert.equal(row.evidence_url, `dns:TXT:_idsvc.${domain}`);
    assert.ok(dns.queries.includes(`_idsvc.${domain}`));
  });

  test('the short form at the apex verifies too', async () => {
    const user = await newUser();
    const domain = `apex-${user.user_id.replace('_', '-')}.test`;
    dns.txt.set(domain, [shortProofText(t.ctx, user.user_id)]);
    const outcome = await dnsChecker.check(t.ctx, await subjectFor(user, 'website', domain));
    assert.equal(outcome.result, 'verified');
    assert.equal(outcome.evidenceUrl, `dns:TXT:${domain}`);
  });

  test("another account's proof, a longer userId, or no record at all is a definite negative", async () => {
    const user = await newUser();
    const other = `other-${user.user_id.replace('_', '-')}.test`;
    dns.txt.set(`_idsvc.${other}`, [`${t.config.baseUrl}/u/${user.user_id}x`, `${t.config.baseUrl}/u/someone_else`]);
    dns.txt.set(other, ['google-site-verification=abc']);
    const wrong = await dnsChecker.check(t.ctx, await subjectFor(user, 'website', other));
    assert.equal(wrong.result, 'absent');
    assert.match(wrong.detail, /2 TXT record\(s\), none with the proof text/);
    const none = await dnsChecker.check(t.ctx, await subjectFor(user, 'website', `nothing-${user.user_id.replace('_', '-')}.test`));
    assert.equal(none.result, 'absent');
    assert.match(none.detail, /the name does not exist/);
  });

  test('SERVFAIL or no answer is transient, and leaves a mark alone', async () => {
    const user = await newUser();
    const domain = `flaky-${user.user_id.replace('_', '-')}.test`;
    dns.txt.set(`_idsvc.${domain}`, [`${t.config.baseUrl}/u/${user.user_id}`]);
    const s = await subjectFor(user, 'website', domain);
    assert.equal((await verifyIdentity(t.ctx, s.id))?.verified, true);
    dns.failing.add(`_idsvc.${domain}`);
    dns.failing.add(domain);
    const failed = await dnsChecker.check(t.ctx, s);
    assert.equal(failed.result, 'transient');
    assert.match(failed.detail, /failed to answer/);
    assert.equal((await verifyIdentity(t.ctx, s.id))?.verified, true);
    dns.failing.clear();
    dns.silent.add(`_idsvc.${domain}`);
    const silent = await dnsChecker.check(t.ctx, s);
    assert.equal(silent.result, 'transient');
    assert.equal((await verifyIdentity(t.ctx, s.id))?.verified, true);
    assert.equal((await entry(s.id)).negative_since, null);
    dns.silent.clear();
  });

  test("a website given as its https address verifies by DNS at the domain's root, and not below it", async () => {
    const user = await newUser();
    const domain = `root-${user.user_id.replace('_', '-')}.test`;
    dns.txt.set(`_idsvc.${domain}`, [`${t.config.baseUrl}/u/${user.user_id}`]);
    const root = await subjectFor(user, 'website', `https://${domain.toUpperCase()}/#about`);
    assert.ok(dnsChecker.appliesTo(root.svc, root.usrSvcId));
    const result = await verifyIdentity(t.ctx, root.id);
    assert.equal(result?.verified, true);
    assert.equal(result?.method, 'dns');
    assert.equal((await entry(root.id)).evidence_url, `dns:TXT:_idsvc.${domain}`);

    // The same domain's DNS does not speak for a page below its root (a shared host's user pages).
    for (const page of [`https://${domain}/~alice`, `${domain}/blog/`, `https://${domain}/?u=alice`]) {
      const s = await subjectFor(user, 'website', page);
      assert.equal(dnsChecker.appliesTo(s.svc, s.usrSvcId), false, page);
      const asked = dns.queries.length;
      const outcome = await dnsChecker.check(t.ctx, s);
      assert.equal(outcome.result, 'absent', page);
      assert.equal(dns.queries.length, asked, `${page}: no DNS query`);
    }
  });

  test('applies only to own-domain services and to domain names', async () => {
    const snap = await t.ctx.catalogue.get();
    assert.equal(dnsChecker.appliesTo(snap.byId.get('website')!, 'not a domain'), false);
    assert.equal(dnsChecker.appliesTo(snap.byId.get('github')!, 'example.org'), false);
  });
});

describe('atproto: a Bluesky handle, its DID document, and the account', () => {
  const docFor = (did: string, handle: string) => ({
    '@context': ['https://www.w3.org/ns/did/v1'],
    id: did,
    alsoKnownAs: [`at://${handle}`],
    verificationMethod: [],
    service: [{ id: '#atproto_pds', type: 'AtprotoPersonalDataServer', serviceEndpoint: remote.origin }],
  });

  test('handle → DID by _atproto TXT, the DID document names the handle back, the PDS profile holds the proof', async () => {
    const user = await newUser();
    const handle = `${user.user_id.replace('_', '-')}.test`;
    dns.txt.set(`_atproto.${handle}`, [`did=${DID_A}`]);
    didDocs.set(DID_A, docFor(DID_A, handle));
    descriptions.set(DID_A, `Hi! My identities: ${t.config.baseUrl}/u/${user.user_id}`);
    const s = await subjectFor(user, 'bluesky', handle);
    const result = await verifyIdentity(t.ctx, s.id);
    assert.equal(result?.verified, true);
    assert.equal(result?.method, 'atproto');
    const row = await entry(s.id);
    assert.equal(row.verified_by, 'atproto');
    assert.equal(
      row.evidence_url,
      `${remote.origin}/xrpc/com.atproto.repo.getRecord?repo=${encodeURIComponent(DID_A)}&collection=app.bsky.actor.profile&rkey=self`,
    );
  });

  test('a name without a dot is a bsky.social handle', async () => {
    assert.equal(handleOf('alice'), 'alice.bsky.social');
    assert.equal(handleOf('@Alice.Example.com'), 'alice.example.com');
    const user = await newUser();
    const name = user.user_id.replace('_', '-');
    dns.txt.set(`_atproto.${name}.bsky.social`, [`did=${DID_B}`]);
    didDocs.set(DID_B, docFor(DID_B, `${name}.bsky.social`));
    descriptions.set(DID_B, shortProofText(t.ctx, user.user_id));
    assert.equal((await atprotoChecker.check(t.ctx, await subjectFor(user, 'bluesky', name))).result, 'verified');
  });

  test('definite negatives: the DID document names another handle; the profile lacks the proof', async () => {
    const user = await newUser();
    const handle = `neg-${user.user_id.replace('_', '-')}.test`;
    const did = 'did:plc:cccccccccccccccccccccccc';
    dns.txt.set(`_atproto.${handle}`, [`did=${did}`]);
    didDocs.set(did, docFor(did, 'someone-else.test'));
    descriptions.set(did, `${t.config.baseUrl}/u/${user.user_id}`);
    const s = await subjectFor(user, 'bluesky', handle);
    const renamed = await atprotoChecker.check(t.ctx, s);
    assert.equal(renamed.result, 'absent');
    assert.match(renamed.detail, new RegExp(`does not name at://${handle.replace(/[.]/g, '\\.')} in alsoKnownAs`));
    didDocs.set(did, docFor(did, handle));
    descriptions.set(did, `${t.config.baseUrl}/u/${user.user_id}_impostor and idsvc:elsewhere.example:${user.user_id}`);
    const noProof = await atprotoChecker.check(t.ctx, s);
    assert.equal(noProof.result, 'absent');
    assert.match(noProof.detail, /profile description .* does not hold/);
    descriptions.delete(did);
    assert.equal((await atprotoChecker.check(t.ctx, s)).result, 'absent', 'no profile record');
  });

  test('a DID directory that is down or a DNS failure is transient', async () => {
    const user = await newUser();
    const handle = `down-${user.user_id.replace('_', '-')}.test`;
    const did = 'did:plc:dddddddddddddddddddddddd';
    dns.txt.set(`_atproto.${handle}`, [`did=${did}`]);
    didDocs.set(did, docFor(did, handle));
    descriptions.set(did, `${t.config.baseUrl}/u/${user.user_id}`);
    const s = await subjectFor(user, 'bluesky', handle);
    plcDown = true;
    try {
      const down = await atprotoChecker.check(t.ctx, s);
      assert.equal(down.result, 'transient');
      assert.equal(down.status, 503);
    } finally {
      plcDown = false;
    }
    dns.failing.add(`_atproto.${handle}`);
    const failed = await atprotoChecker.check(t.ctx, s);
    assert.equal(failed.result, 'transient');
    dns.failing.clear();
    assert.equal((await atprotoChecker.check(t.ctx, s)).result, 'verified');
    // No _atproto record: the handle's own https://<handle>/.well-known/atproto-did is asked, and a
    // host that cannot be reached says nothing about the handle.
    dns.txt.delete(`_atproto.${handle}`);
    const unreachable = await atprotoChecker.check(t.ctx, s);
    assert.equal(unreachable.result, 'transient');
    assert.equal(unreachable.evidenceUrl, `https://${handle}/.well-known/atproto-did`);
  });
});

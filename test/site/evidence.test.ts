// The evidence behind a verified mark, everywhere it shows, on SQLite and PostgreSQL: the partner
// API's JSON (XML unchanged), /v3/profiles (Gravatar's fields kept, ours added), webhook events
// (identity.verified with the evidence, identity.unverified with the reason), the public profile
// and the account page; and nowhere for a person who is not opted in.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { listOutbox } from '../../src/repositories/outbox.js';
import { findUserByUserId, setUserFlags, type User } from '../../src/repositories/users.js';
import { setCentralIdentity } from '../../src/services/central.js';
import { verifyIdentity } from '../../src/verification/verify.js';
import type { TestApp } from '../helpers/app.js';
import { addLocalService, pageWithBacklink, pageWithoutBacklink, SiteClient, startProfilePages, startSiteApp, type ProfilePages } from './helpers.js';

const HOUR = 3600_000;
let t: TestApp;
let remote: ProfilePages;
let partner: Awaited<ReturnType<TestApp['partner']>>;

before(async () => {
  t = await startSiteApp();
  remote = await startProfilePages();
  await addLocalService(t, 'pages', 'Pages', remote.origin);
  partner = await t.partner({ name: 'Evidence partner' });
});
after(async () => {
  await remote.close();
  await t.close();
});

/** A user whose `pages` identity is verified by rel="me" and who linked the partner. */
async function verifiedUser(userId: string): Promise<{ user: User; id: number; verifiedAt: number }> {
  await t.user({ email: `${userId}@example.org`, userId });
  const user = (await findUserByUserId(t.ctx.db, userId))!;
  await partner.client.syncUser(userId, { email: user.email, password: 'correct horse battery' });
  remote.pages.set(userId, pageWithBacklink(`${t.config.baseUrl}/u/${userId}`));
  const svc = (await t.ctx.catalogue.get()).byId.get('pages')!;
  const { row } = await t.ctx.db.write((tx) => setCentralIdentity(tx, user, svc, userId, { partnerId: null }, t.clock.now()));
  const verifiedAt = t.clock.now();
  assert.equal((await verifyIdentity(t.ctx, row.id))?.verified, true);
  return { user, id: row.id, verifiedAt };
}

const iso = (ms: number) => new Date(ms).toISOString();
const events = async (type: string) =>
  (await listOutbox(t.ctx.db, partner.id)).filter((e) => e.event_type === type).map((e) => JSON.parse(e.payload).data as Record<string, unknown>);

describe('a verified entry shows how and when', () => {
  let verifiedAt: number;
  let checkedAt: number;
  before(async () => {
    ({ verifiedAt } = await verifiedUser('evi_alice'));
    // A later check that confirms the mark moves "last checked", not "first verified".
    t.clock.advance(24 * HOUR);
    const row = await t.ctx.db.kysely.selectFrom('central_identities').select('id').where('usr_svc_id', '=', 'evi_alice').executeTakeFirstOrThrow();
    await verifyIdentity(t.ctx, row.id);
    checkedAt = t.clock.now();
  });

  test('JSON answers add verifiedBy, verifiedAt, lastCheckedAt and evidenceUrl; XML answers are as they were', async () => {
    const json = await fetch(`${t.baseUrl}/api/return_services/${partner.apiKey}/evi_alice/public?format=json`);
    assert.equal(json.status, 200);
    const body = (await json.json()) as { services: Record<string, string | boolean>[] };
    assert.deepEqual(body.services[0], {
      svcId: 'pages',
      svcName: 'Pages',
      url: `${remote.origin}/evi_alice`,
      verified: true,
      svcFavicon: `${remote.origin}/favicon.ico`,
      verifiedBy: 'rel-me',
      verifiedAt: iso(verifiedAt),
      lastCheckedAt: iso(checkedAt),
      evidenceUrl: `${remote.origin}/evi_alice`,
    });
    const xml = await (await fetch(`${t.baseUrl}/api/return_services/${partner.apiKey}/evi_alice/public`)).text();
    assert.equal(
      xml,
      `<?xml version="1.0" encoding="UTF-8"?>\n<services><service><svcId>pages</svcId><svcName>Pages</svcName><url>${remote.origin}/evi_alice</url><verified>TRUE</verified><svcFavicon>${remote.origin}/favicon.ico</svcFavicon></service></services>\n`,
    );
  });

  test('the client package reads the evidence', async () => {
    const [entry] = await partner.client.returnServices('evi_alice', { profileType: 'public' });
    assert.equal(entry?.verified, true, 'the JSON boolean is read as verified');
    assert.deepEqual(entry?.evidence, {
      verifiedBy: 'rel-me',
      verifiedAt: iso(verifiedAt),
      lastCheckedAt: iso(checkedAt),
      evidenceUrl: `${remote.origin}/evi_alice`,
    });
  });

  test("/v3/profiles keeps Gravatar's fields and adds ours", async () => {
    const res = await fetch(`${t.baseUrl}/v3/profiles/evi_alice`);
    assert.equal(res.status, 200);
    const body = (await res.json()) as { verified_accounts: Record<string, unknown>[] };
    assert.deepEqual(body.verified_accounts, [
      {
        service_type: 'pages',
        service_label: 'Pages',
        service_icon: `${remote.origin}/favicon.ico`,
        url: `${remote.origin}/evi_alice`,
        is_hidden: false,
        verified_by: 'rel-me',
        verified_at: iso(verifiedAt),
        last_checked_at: iso(checkedAt),
        evidence_url: `${remote.origin}/evi_alice`,
      },
    ]);
  });

  test('the linked partner heard identity.verified with the evidence, once', async () => {
    const verified = (await events('identity.verified')).filter((d) => d.userId === 'evi_alice');
    assert.equal(verified.length, 1);
    assert.deepEqual(verified[0], {
      user_identifier: 'evi_alice',
      userId: 'evi_alice',
      svcId: 'pages',
      url: `${remote.origin}/evi_alice`,
      verified: true,
      verifiedBy: 'rel-me',
      verifiedAt: iso(verifiedAt),
      lastCheckedAt: iso(verifiedAt),
      evidenceUrl: `${remote.origin}/evi_alice`,
    });
  });

  test('the public profile says how and since when', async () => {
    const res = await fetch(`${t.baseUrl}/u/evi_alice`);
    const html = await res.text();
    assert.match(
      html,
      /<span class="evidence" data-verified-by="rel-me"> by a rel=(&quot;|")me(&quot;|") link back to this page, since <time datetime="2026-01-01T00:00:00.000Z">/,
    );
  });

  test('the account page shows the method, the dates and the evidence next to the identity', async () => {
    const client = new SiteClient(t.baseUrl);
    assert.equal((await client.logIn('evi_alice', 'correct horse battery')).status, 303);
    const { body } = await client.get('/account');
    const item = body.slice(body.indexOf('id="identity-pages"'));
    assert.match(
      item,
      /<p class="evidence" data-verified-by="rel-me">Verified by a rel=(&quot;|")me(&quot;|") link back to your profile since <time datetime="2026-01-01T00:00:00.000Z">/,
    );
    assert.match(item, /last checked <time datetime="2026-01-02T00:00:00.000Z">/);
    assert.ok(item.includes(`evidence: <a href="${remote.origin}/evi_alice"`));
    // How to verify by DNS or Bluesky, with the short proof text.
    const short = `idsvc:${new URL(t.config.baseUrl).host}:evi_alice`;
    assert.ok(new RegExp(`<code>${short.replace(/[.]/g, '\\.')}</code>`).test(body), body.slice(body.indexOf('Other ways'), body.indexOf('Other ways') + 600));
  });
});

test('a lost proof: the account page warns before the mark goes; the partner hears identity.unverified with the reason', async () => {
  const { id } = await verifiedUser('evi_bob');
  remote.pages.set('evi_bob', pageWithoutBacklink);
  t.clock.advance(24 * HOUR);
  await verifyIdentity(t.ctx, id);
  const client = new SiteClient(t.baseUrl);
  await client.logIn('evi_bob', 'correct horse battery');
  const { body } = await client.get('/account');
  assert.match(body, /data-pending-removal="true">The last check did not find the proof\. It is checked again after <time datetime="[^"]+">/);
  assert.match(body, /data-check-result="absent" data-method="rel-me">.*no rel=(&quot;|")me(&quot;|") link found on the page \(HTTP 200\)/);
  assert.equal((await events('identity.unverified')).filter((d) => d.userId === 'evi_bob').length, 0, 'not yet');

  t.clock.advance(HOUR);
  assert.equal((await verifyIdentity(t.ctx, id))?.verified, false);
  const lost = (await events('identity.unverified')).filter((d) => d.userId === 'evi_bob');
  assert.equal(lost.length, 1);
  assert.equal(lost[0]!.verified, false);
  assert.deepEqual(lost[0]!.reason, {
    method: 'rel-me',
    detail: `looked for a rel="me" link to ${t.config.baseUrl}/u/evi_bob on ${remote.origin}/evi_bob: no rel="me" link found on the page`,
    evidenceUrl: `${remote.origin}/evi_bob`,
    status: 200,
  });
  const json = (await (await fetch(`${t.baseUrl}/api/return_services/${partner.apiKey}/evi_bob/public?format=json`)).json()) as {
    services: Record<string, string>[];
  };
  assert.deepEqual(Object.keys(json.services[0]!), ['svcId', 'svcName', 'url', 'verified', 'svcFavicon'], 'no evidence on an entry that is not verified');
});

test('a person who is not opted in shows no evidence anywhere, and partners hear nothing of it', async () => {
  await t.user({ email: 'evi_carol@example.org', userId: 'evi_carol' });
  const user = (await findUserByUserId(t.ctx.db, 'evi_carol'))!;
  await partner.client.syncUser('evi_carol', { email: user.email, password: 'correct horse battery' });
  await t.ctx.db.write((w) => setUserFlags(w, user.id, { optedIn: false }, t.clock.now()));
  remote.pages.set('evi_carol', pageWithBacklink(`${t.config.baseUrl}/u/evi_carol`));
  const svc = (await t.ctx.catalogue.get()).byId.get('pages')!;
  const { row } = await t.ctx.db.write((tx) => setCentralIdentity(tx, user, svc, 'evi_carol', { partnerId: null }, t.clock.now()));
  assert.equal((await verifyIdentity(t.ctx, row.id))?.verified, true);

  const json = await fetch(`${t.baseUrl}/api/return_services/${partner.apiKey}/evi_carol/public?format=json`);
  assert.equal(json.status, 404);
  assert.equal((await fetch(`${t.baseUrl}/v3/profiles/evi_carol`)).status, 404);
  assert.equal((await fetch(`${t.baseUrl}/u/evi_carol`)).status, 404);
  assert.equal((await events('identity.verified')).filter((d) => d.userId === 'evi_carol').length, 0);
});

// Opting in and being discoverable are two consents (issue 14.10). Opted in, partners that know a
// user's e-mail address (or its hash) or userId see her identities; only a discoverable user is
// also found by reverse_lookup, return_contacts and WebFinger mailto:. Discoverable is off until
// she turns it on, for new accounts and (migration 006) for accounts from before.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, before, test } from 'node:test';
import type { Kysely } from 'kysely';
import { discoverableOffMigration } from '../../src/db/migrations/006-discoverable-off.js';
import type { TestApp } from '../helpers/app.js';
import { assertLogsClean, SiteClient, signUpConfirmed, startSiteApp } from './helpers.js';

const EMAIL = 'dora.explorer@example.org';
const PASSWORD = 'compass backpack jungle river';
let t: TestApp;
let dora: SiteClient;
let P: Awaited<ReturnType<TestApp['partner']>>;
let host = '';

before(async () => {
  t = await startSiteApp();
  host = new URL(t.config.baseUrl).host;
  P = await t.partner({ name: 'Address book' });
  // The partner's user who shares an address book: linked, so return_contacts may run for her.
  const owner = await t.user({ email: 'nina.owner@example.org', userId: 'nina' });
  await P.client.syncUser('nina', { email: 'nina.owner@example.org', password: owner.password });
  dora = new SiteClient(t.baseUrl);
  assert.equal((await signUpConfirmed(t, dora, { email: EMAIL, user_id: 'dora', password: PASSWORD, opt_in: true })).status, 303);
  assert.equal((await dora.submit('/account/identities', { svc_id: 'github', usr_svc_id: 'dora-gh' })).res.status, 303);
});
after(() => t.close());

const webfinger = (resource: string) => fetch(`${t.baseUrl}/.well-known/webfinger?resource=${encodeURIComponent(resource)}`);

/** What each way of finding someone without knowing her address answers for Dora right now. */
async function findings() {
  return {
    reverseLookup: (await P.publicClient.reverseLookup('github', 'dora-gh')).map((u) => u.userId),
    contacts: (await P.client.returnContacts('nina', [EMAIL, 'dora'])).map((c) => c.userId),
    mailto: (await webfinger(`mailto:${EMAIL}`)).status,
  };
}

const NOT_FOUND = { reverseLookup: [], contacts: [], mailto: 404 };
const FOUND = { reverseLookup: ['dora'], contacts: ['dora'], mailto: 200 };

test('a new, opted-in account is seen by those who know her, and found by nobody else', async () => {
  assert.deepEqual(await findings(), NOT_FOUND);
  // Opting in is enough for partners that know her address, its hashes or her userId.
  const md5 = createHash('md5').update(EMAIL).digest('hex');
  for (const id of [EMAIL, md5, 'dora']) {
    assert.deepEqual(
      (await P.publicClient.returnServices(id, { profileType: 'public' })).map((s) => s.svcId),
      ['github'],
      id,
    );
  }
  assert.equal((await webfinger(`acct:dora@${host}`)).status, 200, 'her userId is hers to give');
  const { body } = await dora.get('/account/sharing');
  assert.match(body, /data-discoverable="no"/);
  assert.match(body, /You are not discoverable\./);
});

test('the account page says what each consent means, in two parts, each with its own control', async () => {
  const { body } = await dora.get('/account/sharing');
  const section = /<section[^>]*id="visibility"[\s\S]*?<\/section>/.exec(body)?.[0] ?? '';
  const text = section.replace(/<[^>]+>/g, ' ').replace(/\s+/g, ' ');
  assert.match(
    text,
    /Opt-in You are opted in\. Opting in means: anyone who knows your e-mail address \(or its MD5 or SHA-256 hash\) or your userId sees your identities/,
  );
  assert.match(
    text,
    /Discoverable You are not discoverable\. Discoverable adds more ways to find you: .*reverse lookup.*contact matching.*WebFinger finds your page by your plain e-mail address \(mailto:\).* It is off until you turn it on/,
  );
  const forms = section.match(/<form\b[\s\S]*?<\/form>/g) ?? [];
  assert.deepEqual(
    forms.map((f) => /action="([^"]+)"/.exec(f)?.[1]),
    ['/account/opt-in', '/account/discoverable'],
  );
  assert.match(forms[1]!, /Make me discoverable/);
});

test('turned on, every way finds her; turned off or opted out, none does', async () => {
  const on = await dora.submit('/account/discoverable', { discoverable: '1' });
  assert.equal(on.res.headers.get('location'), '/account/sharing?msg=discoverable_on#visibility');
  assert.deepEqual(await findings(), FOUND);
  const page = (await dora.get('/account/sharing')).body;
  assert.match(page, /data-discoverable="yes"/);
  assert.match(page, /Stop being discoverable/);

  await dora.submit('/account/opt-in', { opt_in: '0' });
  assert.deepEqual(await findings(), NOT_FOUND, 'discoverable applies only while opted in');
  await dora.submit('/account/opt-in', { opt_in: '1' });
  assert.deepEqual(await findings(), FOUND);

  await dora.submit('/account/discoverable', {});
  assert.deepEqual(await findings(), NOT_FOUND);
  assert.equal((await P.publicClient.returnServices('dora', { profileType: 'public' })).length, 1, 'still opted in');
});

test('migration 006: an account from before, discoverable by the old default, is not any more', async () => {
  await dora.submit('/account/discoverable', { discoverable: '1' });
  assert.deepEqual(await findings(), FOUND);
  // Back to the state before 006: the flag as the old default left it, the migration not yet run.
  // Later migrations ran after it, so it is run again on its own rather than through the migrator.
  await discoverableOffMigration(t.ctx.db.dialect).up(t.ctx.db.kysely as unknown as Kysely<unknown>);
  assert.deepEqual(await findings(), NOT_FOUND);
  const row = await t.ctx.db.kysely.selectFrom('users').select(['opted_in', 'discoverable']).where('user_id', '=', 'dora').executeTakeFirstOrThrow();
  assert.deepEqual(row, { opted_in: 1, discoverable: 0 }, 'her opt-in is kept; only discoverability starts over');
});

test('logs none of the addresses or passwords used', () => {
  assertLogsClean(t, [EMAIL, PASSWORD, 'nina.owner@example.org']);
});

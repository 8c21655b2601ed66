// Issue 14.14: a svcId is matched in any case everywhere one is taken — every API operation, the
// site's identity forms and the CLI — so `GitHub` never works in one place and 404s in another.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import type { TestApp } from '../helpers/app.js';
import { addLocalService, pageWithBacklink, SiteClient, startProfilePages, startSiteApp } from '../site/helpers.js';
import { runCli } from '../helpers/cli.js';

let t: TestApp;
before(async () => {
  t = await startSiteApp();
});
after(() => t.close());

const cli = (args: string[]) => runCli(t, args);

test('service_details finds a service and an order in any case', async () => {
  const P = await t.partner();
  for (const given of ['GitHub', 'GITHUB', ' github']) {
    const res = await fetch(`${t.baseUrl}/api/service_details/${P.apiKey}/${encodeURIComponent(given)}?format=json`);
    assert.equal(res.status, 200, given);
    const body = (await res.json()) as { services: { svcId: string }[] };
    assert.deepEqual(
      body.services.map((s) => s.svcId),
      ['github'],
      given,
    );
  }
  assert.deepEqual(
    (await P.client.serviceDetails({ svcId: 'GitHub' })).map((s) => s.svcId),
    ['github'],
  );
  // Order names share the segment, so they are read the same way.
  const ordered = await fetch(`${t.baseUrl}/api/service_details/${P.apiKey}/Popularity/3?format=json`);
  assert.equal(ordered.status, 200);
  assert.equal(((await ordered.json()) as { services: unknown[] }).services.length, 3);
  assert.equal((await fetch(`${t.baseUrl}/api/service_details/${P.apiKey}/NoSuchService`)).status, 404);
});

test('update_service and reverse_lookup take a svcId in any case, and answer it lower-cased', async () => {
  const P = await t.partner();
  await t.user({ email: 'case@example.org', userId: 'case_user', discoverable: true });
  await P.client.syncUser('case_user', { email: 'case@example.org', password: 'correct horse battery' });
  assert.deepEqual(await P.client.updateService('case_user', 'GitHub', 'Case-Person'), { svcId: 'github', usrSvcId: 'Case-Person' });
  assert.deepEqual(
    (await P.client.returnServices('case_user')).map((s) => s.svcId),
    ['github'],
  );
  const found = await P.publicClient.reverseLookup('GITHUB', 'case-person');
  assert.deepEqual(
    found.map((u) => u.userId),
    ['case_user'],
  );
});

test("the site's identity forms take a svcId in any case", async () => {
  // A service whose profile pages are local, so "verify now" fetches nothing from the internet.
  const remote = await startProfilePages();
  try {
    await addLocalService(t, 'pages', 'Pages', remote.origin);
    remote.pages.set('site-case', pageWithBacklink(`${t.config.baseUrl}/u/site_case`));
    const me = new SiteClient(t.baseUrl);
    await t.user({ email: 'site.case@example.org', userId: 'site_case', password: 'a fine long password' });
    assert.equal((await me.logIn('site_case', 'a fine long password')).status, 303);
    const P = await t.partner();
    const entries = async () => (await P.publicClient.returnServices('site_case', { profileType: 'public' })).map((s) => [s.svcId, s.url, s.verified]);

    const added = await me.submit('/account/identities', { svc_id: 'Pages', usr_svc_id: 'site-case' });
    assert.equal(added.res.status, 303, added.body);
    assert.equal(added.res.headers.get('location'), '/account?msg=identity_saved#identity-pages');
    assert.deepEqual(await entries(), [['pages', `${remote.origin}/site-case`, false]]);

    // "Verify now" finds the entry (it would answer 404 looking for "PAGES").
    const checked = await me.submit('/account/identities/verify', { svc_id: 'PAGES' });
    assert.equal(checked.res.status, 303, checked.body);
    assert.equal(checked.res.headers.get('location'), '/account?checked=pages#identity-pages');
    assert.deepEqual(await entries(), [['pages', `${remote.origin}/site-case`, true]]);

    const removed = await me.submit('/account/identities/remove', { svc_id: 'PAGES' });
    assert.equal(removed.res.status, 303);
    assert.deepEqual(await entries(), []);
  } finally {
    await remote.close();
  }
});

test('the catalogue commands take a svcId in any case', async () => {
  const P = await t.partner();
  const disabled = await cli(['--json', 'catalogue', 'disable', 'GitHub']);
  assert.equal(disabled.code, 0, disabled.stderr);
  assert.deepEqual(JSON.parse(disabled.stdout), { svcId: 'github', disabled: true });
  assert.equal((await fetch(`${t.baseUrl}/api/service_details/${P.apiKey}/github`)).status, 404);
  assert.equal((await cli(['catalogue', 'disable', 'GITHUB', '--enable'])).code, 0);

  const renamed = await cli(['catalogue', 'set', 'GitHub', '--name', 'GitHub (renamed)']);
  assert.equal(renamed.code, 0, renamed.stderr);
  assert.equal(renamed.stdout, 'updated github\n', 'the existing service, not a new one');
  assert.equal((await P.client.serviceDetails({ svcId: 'github' }))[0]?.svcName, 'GitHub (renamed)');
  assert.equal((await cli(['catalogue', 'set', 'github', '--name', 'GitHub'])).code, 0);
});

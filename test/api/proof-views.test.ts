// Issue 14.2: an answer without proof is the public view, exactly. The api_key is public, so the
// key alone — whoever it belongs to — never brings a usrSvcId out of the central repository: not
// for a trusted partner, not for a pro user, not for entries the key's partner once pushed, not in
// the unsigned widget. With proof (the api_token, a widget signature) SPEC §3 rule 5 holds; a
// legacy_open_reads partner's private view keeps it too (the partner chose that view on its key).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { buildWidget } from '../../scripts/build-widget.js';
import { findUserByUserId, setUserFlags } from '../../src/repositories/users.js';
import type { WidgetBootConfig } from '../../src/widget/boot-script.js';
import { postForm, startTestApp, type TestApp } from '../helpers/app.js';
import { bootConfig } from '../helpers/widget.js';
import { addCentralIdentity } from './helpers.js';

let t: TestApp;
type Partner = Awaited<ReturnType<TestApp['partner']>>;
let trusted: Partner;
let source: Partner;
let other: Partner;
let legacy: Partner;

const central = (userId: string, svcId: string, usrSvcId: string) => addCentralIdentity(t, userId, svcId, usrSvcId);

before(async () => {
  await buildWidget();
  t = await startTestApp({ RATE_LIMIT_PER_KEY: '1000000', RATE_LIMIT_PER_KEY_UNPROVEN: '1000000', RATE_LIMIT_PER_ADDRESS: '1000000' });
  trusted = await t.partner({ name: 'Trusted', trusted: true });
  source = await t.partner({ name: 'Source' });
  other = await t.partner({ name: 'Other' });
  legacy = await t.partner({ name: 'Legacy', legacyOpenReads: true });
  // ada: opted in, one entry of her own, one that `source` pushed and that flowed in at her link.
  const ada = await t.user({ email: 'ada@example.org', userId: 'ada' });
  await central('ada', 'gitlab', 'ada-gl');
  await source.client.updateService('ada', 'github', 'ada-gh');
  await source.client.syncUser('ada', { email: 'ada@example.org', password: ada.password });
  // pia: a pro user with one entry of her own.
  const pia = await t.user({ email: 'pia@example.org', userId: 'pia' });
  await t.ctx.db.write((w) => setUserFlags(w, pia.id, { pro: true }, t.clock.now()));
  await central('pia', 'gitlab', 'pia-gl');
});
after(() => t.close());

/** return_services …/public by GET, with the key alone, in both formats: the raw bodies. */
async function publicByKey(apiKey: string, uid: string): Promise<{ xml: string; json: string }> {
  const xml = await fetch(`${t.baseUrl}/api/return_services/${apiKey}/${uid}/public`);
  const json = await fetch(`${t.baseUrl}/api/return_services/${apiKey}/${uid}/public?format=json`);
  assert.equal(xml.status, 200);
  assert.equal(json.status, 200);
  return { xml: await xml.text(), json: await json.text() };
}

const usrSvcIds = (services: { svcId: string; usrSvcId?: string | null }[]) => Object.fromEntries(services.map((s) => [s.svcId, s.usrSvcId ?? null]));

describe('return_services', () => {
  test('the key alone gives no usrSvcId, for a trusted partner, a pro user or the partner that pushed the entry', async () => {
    for (const [who, p, uid] of [
      ['trusted partner', trusted, 'ada'],
      ["the entry's source partner", source, 'ada'],
      ['pro user', other, 'pia'],
      ['legacy_open_reads partner, public view', legacy, 'ada'],
    ] as const) {
      const { xml, json } = await publicByKey(p.apiKey, uid);
      assert.match(xml, /<url>/, who);
      assert.doesNotMatch(xml, /usrSvcId/, who);
      assert.doesNotMatch(json, /usrSvcId/, who);
      // The client library without a token makes the same call by POST.
      assert.ok(
        (await p.publicClient.returnServices(uid, { profileType: 'public' })).every((s) => s.usrSvcId === undefined),
        who,
      );
    }
  });

  test('a wrong api_token is still refused, never taken for the public view', async () => {
    const res = await postForm(`${t.baseUrl}/api/return_services/${trusted.apiKey}/ada/public`, { api_token: 'x'.repeat(40) });
    assert.equal(res.status, 401);
    assert.match(await res.text(), /invalid_api_token/);
  });

  test('with the api_token: SPEC §3 rule 5 (trusted partner, pro user, own contribution)', async () => {
    assert.deepEqual(usrSvcIds(await trusted.client.returnServices('ada', { profileType: 'public' })), { github: 'ada-gh', gitlab: 'ada-gl' });
    assert.deepEqual(usrSvcIds(await source.client.returnServices('ada', { profileType: 'public' })), { github: 'ada-gh', gitlab: null });
    assert.deepEqual(usrSvcIds(await other.client.returnServices('ada', { profileType: 'public' })), { github: null, gitlab: null });
    assert.deepEqual(usrSvcIds(await other.client.returnServices('pia', { profileType: 'public' })), { gitlab: 'pia-gl' });
  });

  test("a legacy_open_reads partner's private view on the key alone keeps rule 5, as it chose", async () => {
    const lou = await t.user({ email: 'lou@example.org', userId: 'lou' });
    await central('lou', 'gitlab', 'lou-gl');
    await legacy.client.updateService('lou', 'twitter', 'lou_tw');
    await legacy.client.syncUser('lou', { email: 'lou@example.org', password: lou.password });
    const res = await fetch(`${t.baseUrl}/api/return_services/${legacy.apiKey}/lou?format=json`);
    assert.equal(res.status, 200);
    const services = ((await res.json()) as { services: { svcId: string; usrSvcId?: string }[] }).services;
    assert.deepEqual(usrSvcIds(services), { gitlab: null, twitter: 'lou_tw' });
  });
});

async function widget(p: Partner, uid: string, init: RequestInit = {}, query = ''): Promise<WidgetBootConfig> {
  const res = await fetch(`${t.baseUrl}/api/service_collection_widget/${p.apiKey}/${uid}/TRUE${query}`, init);
  const body = await res.text();
  assert.equal(res.status, 200, body);
  return bootConfig(body);
}

describe('service_collection_widget', () => {
  test('unsigned: no usrSvcId, whoever the key belongs to', async () => {
    for (const [who, p, uid] of [
      ['trusted partner', trusted, 'ada'],
      ["the entry's source partner", source, 'ada'],
      ['pro user', other, 'pia'],
    ] as const) {
      const c = await widget(p, uid);
      assert.equal(c.view, 'public', who);
      assert.ok(c.services.length > 0, who);
      assert.deepEqual(
        c.services.map((s) => s.usrSvcId),
        c.services.map(() => null),
        who,
      );
    }
  });

  test('signed, or with the api_token: the private view with rule 5', async () => {
    const signed = await widget(source, 'ada', {}, new URL(await source.client.widgetUrl('ada', { now: t.clock.now() })).search);
    assert.equal(signed.view, 'private');
    assert.deepEqual(usrSvcIds(signed.services), { github: 'ada-gh', gitlab: null });
    const posted = await widget(source, 'ada', { method: 'POST', body: new URLSearchParams({ api_token: source.apiToken }) });
    assert.deepEqual(usrSvcIds(posted.services), { github: 'ada-gh', gitlab: null });
    // A trusted partner's signed widget: its private view (it holds nothing of ada's and has no link).
    const trustedSigned = await widget(trusted, 'ada', {}, new URL(await trusted.client.widgetUrl('ada', { now: t.clock.now() })).search);
    assert.deepEqual([trustedSigned.view, trustedSigned.services], ['private', []]);
  });
});

describe('return_contacts (always with the api_token)', () => {
  test("contacts' identities follow rule 5 for the proven partner", async () => {
    const owner = await t.user({ email: 'cleo@example.org', userId: 'cleo' });
    for (const uid of ['ada', 'pia']) {
      const ref = (await findUserByUserId(t.ctx.db, uid))!.id;
      await t.ctx.db.write((w) => setUserFlags(w, ref, { discoverable: true }, t.clock.now()));
    }
    for (const p of [trusted, other]) await p.client.syncUser('cleo', { email: 'cleo@example.org', password: owner.password });
    const byTrusted = await trusted.client.returnContacts('cleo', ['ada', 'pia']);
    assert.deepEqual(
      byTrusted.map((c) => [c.userId, usrSvcIds(c.services)]),
      [
        ['ada', { github: 'ada-gh', gitlab: 'ada-gl' }],
        ['pia', { gitlab: 'pia-gl' }],
      ],
    );
    const byOther = await other.client.returnContacts('cleo', ['ada', 'pia']);
    assert.deepEqual(
      byOther.map((c) => [c.userId, usrSvcIds(c.services)]),
      [
        ['ada', { github: null, gitlab: null }],
        ['pia', { gitlab: 'pia-gl' }],
      ],
    );
  });
});

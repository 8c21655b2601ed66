// service_collection_widget (SPEC §4.4, §5, §7) over HTTP: the per-user boot script, signed URLs and
// allowed origins. The widget's static files are in test/widget/assets.test.ts, its browser side in
// widget.browser.test.ts and test/e2e/.
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { signWidget, widgetSigningKey } from '@idsvc/client';
import { buildWidget, type WidgetManifest } from '../../scripts/build-widget.js';
import { rotatePartnerToken, updatePartner } from '../../src/repositories/partners.js';
import type { WidgetBootConfig } from '../../src/widget/boot-script.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { bootConfig, widgetError as errorScript } from '../helpers/widget.js';
import { addCentralIdentity, sha256 } from './helpers.js';

let t: TestApp;
let manifest: WidgetManifest;
type Partner = Awaited<ReturnType<TestApp['partner']>>;

before(async () => {
  manifest = await buildWidget();
  t = await startTestApp({ BASE_URL: 'https://id.example.org' });
});
after(() => t.close());

const widgetPath = (apiKey: string, uid: string, sync = 'TRUE', query = '') =>
  `/api/service_collection_widget/${apiKey}/${encodeURIComponent(uid)}/${sync}${query}`;

async function get(pathAndQuery: string, headers: Record<string, string> = {}) {
  const res = await fetch(`${t.baseUrl}${pathAndQuery}`, { headers });
  return { res, body: await res.text() };
}

async function widgetFor(pathAndQuery: string, headers: Record<string, string> = {}): Promise<WidgetBootConfig> {
  const { res, body } = await get(pathAndQuery, headers);
  assert.equal(res.status, 200, body);
  return bootConfig(body);
}

const nowSeconds = () => Math.floor(t.clock.now() / 1000);

/** A signed query string, built by hand (not by the client), so the scheme itself is pinned. */
function signedQuery(apiKey: string, uid: string, apiToken: string, exp = nowSeconds() + 600, key = sha256(apiToken)): string {
  const sig = createHmac('sha256', key).update(`${apiKey}:${uid}:${exp}`).digest('hex');
  return `?exp=${exp}&sig=${sig}`;
}

const widgetError = (pathAndQuery: string, status: number, headers: Record<string, string> = {}) => errorScript(t.baseUrl, pathAndQuery, status, headers);
const central = (userId: string, svcId: string, usrSvcId: string) => addCentralIdentity(t, userId, svcId, usrSvcId);

describe('the per-user boot script', () => {
  let P: Partner;
  before(async () => {
    P = await t.partner();
    await t.user({ email: 'wanda@example.com', userId: 'wanda' });
    await central('wanda', 'gitlab', 'wanda-gl');
    await P.client.updateService('wanda', 'github', 'wanda-gh');
  });

  test('is JavaScript that is never stored by shared caches and carries its own data', async () => {
    const { res, body } = await get(widgetPath(P.apiKey, 'Wanda@Example.COM', 'true', '?lang=de'));
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('content-type'), 'text/javascript; charset=utf-8');
    assert.equal(res.headers.get('cache-control'), 'private, no-store');
    assert.equal(res.headers.get('x-content-type-options'), 'nosniff');
    assert.equal(res.headers.get('cross-origin-resource-policy'), 'cross-origin');
    assert.equal(res.headers.get('x-idsvc-api-version'), '1');
    assert.equal(res.headers.get('etag'), null);
    const c = bootConfig(body);
    assert.deepEqual(c, {
      apiBase: 'https://id.example.org',
      apiKey: P.apiKey,
      userIdentifier: 'Wanda@Example.COM', // exactly as in the path: handed back to the page's callbacks
      displaySync: true,
      lang: 'de',
      view: 'public',
      warning: null,
      services: [
        {
          svcId: 'gitlab',
          svcName: 'GitLab',
          usrSvcId: null,
          url: 'https://gitlab.com/wanda-gl',
          verified: false,
          svcFavicon: 'https://gitlab.com/favicon.ico',
        },
      ],
      siteName: 'idsvc', // what the widget names in its line about the service and on its sync form
      signUpUrl: 'https://id.example.org/signup',
      catalogueUrl: 'https://id.example.org/widget/catalogue.json',
      bundleUrl: `https://id.example.org/widget/${manifest.file}`,
    });
  });

  test('display_sync is TRUE or FALSE in any case; anything else is an error script', async () => {
    for (const [v, expected] of [
      ['TRUE', true],
      ['true', true],
      ['False', false],
      ['FALSE', false],
    ] as const) {
      assert.equal((await widgetFor(widgetPath(P.apiKey, 'wanda', v))).displaySync, expected, v);
    }
    assert.equal(await widgetError(widgetPath(P.apiKey, 'wanda', 'yes'), 400), 'idsvc widget: invalid_request: display_sync must be TRUE or FALSE');
    assert.match(await widgetError(`/api/service_collection_widget/${P.apiKey}/wanda`, 400), /^idsvc widget: invalid_request: display_sync is missing/);
  });

  test('lang is passed on when it looks like a language tag, else English', async () => {
    assert.equal((await widgetFor(widgetPath(P.apiKey, 'wanda', 'TRUE', '?lang=fr-CA'))).lang, 'fr-CA');
    assert.equal((await widgetFor(widgetPath(P.apiKey, 'wanda', 'TRUE', '?lang=%3C%2Fscript%3E'))).lang, 'en');
    assert.equal((await widgetFor(widgetPath(P.apiKey, 'wanda'))).lang, 'en');
  });

  test('errors answer a script that reports them, with the status of SPEC §6', async () => {
    assert.equal(await widgetError(widgetPath('z'.repeat(32), 'wanda'), 401), 'idsvc widget: invalid_api_key: Invalid API key');
    assert.equal(await widgetError(widgetPath('short', 'wanda'), 401), 'idsvc widget: invalid_api_key: Invalid API key');
    assert.match(await widgetError(widgetPath(P.apiKey, 'not an identifier!'), 400), /^idsvc widget: invalid_request: user_identifier/);
    assert.equal(
      await widgetError(widgetPath(P.apiKey, 'wanda', 'TRUE', '?callback=x'), 400),
      'idsvc widget: invalid_request: unknown querystring field "callback"',
    );
    // The signature is checked before the query's schema; a field given twice is a 400 there, not a crash.
    for (const query of ['?exp=1&exp=2&sig=ab', '?exp=1&sig=ab&sig=cd']) {
      assert.match(
        await widgetError(widgetPath(P.apiKey, 'wanda', 'TRUE', query), 400),
        /^idsvc widget: invalid_request: querystring field "(exp|sig)" must be string$/,
        query,
      );
    }
    const leaked = await widgetError(widgetPath(P.apiKey, 'wanda', 'TRUE', '?api_token=s3cr3tvalue'), 400);
    assert.match(leaked, /^idsvc widget: credentials_in_query: /);
    assert.ok(!leaked.includes('s3cr3tvalue'));
    const S = await t.partner();
    await t.ctx.db.write((w) => updatePartner(w, S.id, { suspended: true }, t.clock.now()));
    assert.equal(await widgetError(widgetPath(S.apiKey, 'wanda'), 403), 'idsvc widget: forbidden: This partner is suspended');
  });

  test('an unknown or opted-out person gets an empty widget, like anyone with nothing to show', async () => {
    await t.user({ email: 'hidden@example.com', userId: 'hidden', optedIn: false });
    await central('hidden', 'gitlab', 'hidden-gl');
    for (const uid of ['nobody', 'hidden', 'hidden@example.com', 'f'.repeat(64)]) {
      const c = await widgetFor(widgetPath(P.apiKey, uid));
      assert.deepEqual([c.view, c.services, c.warning], ['public', [], null], uid);
      const signed = await widgetFor(widgetPath(P.apiKey, uid, 'TRUE', signedQuery(P.apiKey, uid, P.apiToken)));
      assert.deepEqual([signed.view, signed.services, signed.warning], ['private', [], null], uid);
    }
  });

  test("unsigned, even a trusted partner's widget shows no usrSvcId: the key alone is no proof", async () => {
    const T = await t.partner({ trusted: true });
    const c = await widgetFor(widgetPath(T.apiKey, 'wanda'));
    assert.deepEqual(
      c.services.map((s) => s.usrSvcId),
      [null],
    );
    const posted = await fetch(`${t.baseUrl}${widgetPath(T.apiKey, 'wanda')}`, { method: 'POST', body: new URLSearchParams({ api_token: T.apiToken }) });
    assert.deepEqual(bootConfig(await posted.text()).view, 'private');
  });

  test('a script kept in memory answers only requests like the one it was rendered for', async () => {
    const Q = await t.partner();
    await t.user({ email: 'kim@example.com', userId: 'kim' });
    await central('kim', 'gitlab', 'kïm-✓'); // bytes and characters differ: the services are read back by byte offsets
    const services = [
      {
        svcId: 'gitlab',
        svcName: 'GitLab',
        usrSvcId: null,
        url: 'https://gitlab.com/k%C3%AFm-%E2%9C%93',
        verified: false,
        svcFavicon: 'https://gitlab.com/favicon.ico',
      },
    ];
    const first = await get(widgetPath(P.apiKey, 'kim@example.com', 'TRUE', '?lang=de'));
    const hits = t.ctx.answers.hits;
    const again = await get(widgetPath(P.apiKey, 'kim@example.com', 'TRUE', '?lang=de'));
    assert.equal(t.ctx.answers.hits, hits + 1, 'the second ask is answered from memory');
    assert.equal(again.body, first.body);
    assert.equal(again.res.headers.get('content-length'), String(Buffer.byteLength(first.body)));
    // The same kept answer (one person, one view), asked for differently: each gets its own script.
    const asked = [
      [widgetPath(Q.apiKey, 'kim@example.com', 'TRUE', '?lang=de'), { apiKey: Q.apiKey }],
      [widgetPath(P.apiKey, 'Kim@Example.COM', 'TRUE', '?lang=de'), { userIdentifier: 'Kim@Example.COM' }],
      [widgetPath(P.apiKey, 'kim@example.com', 'FALSE', '?lang=de'), { displaySync: false }],
      [widgetPath(P.apiKey, 'kim@example.com', 'TRUE', '?lang=fr'), { lang: 'fr' }],
      [widgetPath(P.apiKey, 'kim@example.com', 'TRUE', '?lang=de&exp=1&sig=00'), { warning: 'malformed exp or sig; showing the public view' }],
    ] as const;
    for (const [path, differs] of asked) {
      const expected = { ...bootConfig(first.body), ...differs, services };
      assert.deepEqual(await widgetFor(path), expected, path);
    }
    assert.equal(t.ctx.answers.hits, hits + 1 + asked.length, 'all from the one kept answer');
    assert.equal((await get(widgetPath(P.apiKey, 'kim@example.com', 'TRUE', '?lang=de'))).body, first.body);
  });

  test('nothing in the data can end the script or open a comment', async () => {
    const nasty = `</script><script>alert(1)</script>"'<!--`;
    const uid = `${nasty}@x.example`;
    await P.client.updateService(uid, 'github', nasty);
    const { body } = await get(widgetPath(P.apiKey, uid, 'TRUE', signedQuery(P.apiKey, uid, P.apiToken)));
    assert.ok(!/<\/script|<!--|\u2028|\u2029/i.test(body), body);
    const c = bootConfig(body);
    assert.equal(c.userIdentifier, uid);
    assert.equal(c.services[0]?.usrSvcId, nasty);
    assert.match(await widgetError(widgetPath(P.apiKey, `a\u2028b@x.example`), 400), /^idsvc widget: invalid_request: /);
  });
});

describe('signed widget URLs', () => {
  let P: Partner;
  let Q: Partner;
  before(async () => {
    P = await t.partner();
    Q = await t.partner();
    await t.user({ email: 'sigrid@example.com', userId: 'sigrid' });
    await central('sigrid', 'gitlab', 'sigrid-gl');
    await P.client.updateService('sigrid', 'github', 'sigrid-gh');
  });

  const publicView = [
    { svcId: 'gitlab', svcName: 'GitLab', usrSvcId: null, url: 'https://gitlab.com/sigrid-gl', verified: false, svcFavicon: 'https://gitlab.com/favicon.ico' },
  ];
  const privateView = [
    {
      svcId: 'github',
      svcName: 'GitHub',
      usrSvcId: 'sigrid-gh',
      url: 'https://www.github.com/sigrid-gh',
      verified: false,
      svcFavicon: 'https://www.github.com/favicon.ico',
    },
  ];

  test('unsigned: the public view, without a warning', async () => {
    const c = await widgetFor(widgetPath(P.apiKey, 'sigrid'));
    assert.deepEqual([c.view, c.services, c.warning], ['public', publicView, null]);
  });

  test("signed by the client library: the partner's private view", async () => {
    const url = await P.client.widgetUrl('sigrid', { now: t.clock.now(), lang: 'es' });
    const c = await widgetFor(url.slice(t.baseUrl.length));
    assert.deepEqual([c.view, c.services, c.warning, c.lang], ['private', privateView, null, 'es']);
  });

  test('the key is the hex SHA-256 of the api_token, not the token itself', async () => {
    assert.equal(await widgetSigningKey(P.apiToken), sha256(P.apiToken), 'the client library derives the same key');
    assert.equal((await widgetFor(widgetPath(P.apiKey, 'sigrid', 'TRUE', signedQuery(P.apiKey, 'sigrid', P.apiToken)))).view, 'private');
    const rawKey = await widgetFor(widgetPath(P.apiKey, 'sigrid', 'TRUE', signedQuery(P.apiKey, 'sigrid', P.apiToken, nowSeconds() + 60, P.apiToken)));
    assert.equal(rawKey.view, 'public');
    // Upper-case hex is the same signature.
    const exp = nowSeconds() + 60;
    const upper = (await signWidget(P.apiKey, 'sigrid', exp, P.apiToken)).toUpperCase();
    assert.equal((await widgetFor(widgetPath(P.apiKey, 'sigrid', 'TRUE', `?exp=${exp}&sig=${upper}`))).view, 'private');
  });

  test('expired, tampered, for another person or another partner: the public view and a warning', async () => {
    const exp = nowSeconds() + 600;
    const good = await signWidget(P.apiKey, 'sigrid', exp, P.apiToken);
    const cases: [string, string, RegExp][] = [
      ['expired', signedQuery(P.apiKey, 'sigrid', P.apiToken, nowSeconds()), /expired/],
      ['expired long ago', signedQuery(P.apiKey, 'sigrid', P.apiToken, 1), /expired/],
      ['valid for more than a day', signedQuery(P.apiKey, 'sigrid', P.apiToken, nowSeconds() + 86400 + 1), /exp is more than 24 hours ahead/],
      ['valid for years', signedQuery(P.apiKey, 'sigrid', P.apiToken, nowSeconds() + 5 * 365 * 86400), /exp is more than 24 hours ahead/],
      ['exp moved', `?exp=${exp + 1}&sig=${good}`, /invalid signature/],
      ['another person', signedQuery(P.apiKey, 'someone_else', P.apiToken), /invalid signature/],
      ['another spelling of the person', signedQuery(P.apiKey, 'sigrid@example.com', P.apiToken), /invalid signature/],
      ["another partner's key and token", signedQuery(Q.apiKey, 'sigrid', Q.apiToken), /invalid signature/],
      ["this key, another partner's token", signedQuery(P.apiKey, 'sigrid', Q.apiToken), /invalid signature/],
      ['sig only', `?sig=${good}`, /needs both exp and sig/],
      ['exp only', `?exp=${exp}`, /needs both exp and sig/],
      ['malformed sig', `?exp=${exp}&sig=${good.slice(1)}`, /malformed/],
      ['malformed exp', `?exp=soon&sig=${good}`, /malformed/],
    ];
    for (const [name, query, warning] of cases) {
      const c = await widgetFor(widgetPath(P.apiKey, 'sigrid', 'TRUE', query));
      assert.deepEqual([c.view, c.services], ['public', publicView], name);
      assert.match(c.warning ?? '', warning, name);
      assert.match(c.warning ?? '', /showing the public view$/, name);
    }
  });

  test('a signature may live up to a day, not a second more', async () => {
    const day = signedQuery(P.apiKey, 'sigrid', P.apiToken, nowSeconds() + 86400);
    assert.deepEqual((await widgetFor(widgetPath(P.apiKey, 'sigrid', 'TRUE', day))).services, privateView);
    // The client library does not make such URLs: it refuses, rather than sign something the service will not take.
    for (const opts of [{}, { expiresInSeconds: 86400 }]) {
      const url = new URL(await P.client.widgetUrl('sigrid', { now: t.clock.now(), ...opts }));
      assert.ok(Number(url.searchParams.get('exp')) <= nowSeconds() + 86400);
      assert.equal((await widgetFor(`${url.pathname}${url.search}`)).view, 'private');
    }
    for (const expiresInSeconds of [86401, 7 * 86400, 0, -5, 1.5]) {
      await assert.rejects(P.client.widgetUrl('sigrid', { now: t.clock.now(), expiresInSeconds }), RangeError, String(expiresInSeconds));
    }
    await assert.rejects(signWidget(P.apiKey, 'sigrid', nowSeconds() + 86401, P.apiToken, t.clock.now()), RangeError);
    await assert.rejects(
      signWidget(P.apiKey, 'sigrid', Math.floor(Date.now() / 1000) + 2 * 86400, P.apiToken),
      RangeError,
      'by default against the current time',
    );
    assert.match(await signWidget(P.apiKey, 'sigrid', nowSeconds() + 86400, P.apiToken, t.clock.now()), /^[0-9a-f]{64}$/);
  });

  test('after a token rotation, the old token signs until its grace period ends', async () => {
    const R = await t.partner();
    await R.client.updateService('sigrid', 'github', 'r-gh');
    const oldQuery = signedQuery(R.apiKey, 'sigrid', R.apiToken, nowSeconds() + 86400);
    const newToken = await t.ctx.db.write((w) => rotatePartnerToken(w, R.id, 3600, t.clock.now()));
    const newQuery = signedQuery(R.apiKey, 'sigrid', newToken, nowSeconds() + 86400);
    assert.equal((await widgetFor(widgetPath(R.apiKey, 'sigrid', 'TRUE', oldQuery))).view, 'private');
    assert.equal((await widgetFor(widgetPath(R.apiKey, 'sigrid', 'TRUE', newQuery))).view, 'private');
    t.clock.advance(3600 * 1000);
    assert.match((await widgetFor(widgetPath(R.apiKey, 'sigrid', 'TRUE', oldQuery))).warning ?? '', /invalid signature/);
    assert.equal((await widgetFor(widgetPath(R.apiKey, 'sigrid', 'TRUE', newQuery))).view, 'private');
  });

  test('the api_token in a POST body, or legacy open reads, also give the private view', async () => {
    const res = await fetch(`${t.baseUrl}${widgetPath(P.apiKey, 'sigrid')}`, { method: 'POST', body: new URLSearchParams({ api_token: P.apiToken }) });
    assert.deepEqual(bootConfig(await res.text()).services, privateView);
    const L = await t.partner({ legacyOpenReads: true });
    await L.client.updateService('sigrid', 'github', 'sigrid-gh');
    const c = await widgetFor(widgetPath(L.apiKey, 'sigrid'));
    assert.deepEqual([c.view, c.services, c.warning], ['private', privateView, null]);
  });
});

describe('allowed origins', () => {
  let P: Partner;
  before(async () => {
    P = await t.partner({ origins: ['https://partner.example'] });
  });

  test('a listed origin, named by Referer (a <script src>) or Origin, gets the widget', async () => {
    await widgetFor(widgetPath(P.apiKey, 'wanda'), { referer: 'https://partner.example/account?tab=1' });
    await widgetFor(widgetPath(P.apiKey, 'wanda'), { referer: 'https://partner.example/' });
    await widgetFor(widgetPath(P.apiKey, 'wanda'), { origin: 'https://partner.example' });
  });

  test('another origin, or none at all, gets a forbidden script', async () => {
    const others: Record<string, string>[] = [
      { referer: 'https://evil.example/partner.example' },
      { referer: 'http://partner.example/' },
      { referer: 'https://partner.example.evil.example/' },
      { origin: 'null' },
      { referer: 'not a url' },
    ];
    for (const headers of others) {
      assert.equal(
        await widgetError(widgetPath(P.apiKey, 'wanda'), 403, headers),
        'idsvc widget: forbidden: Origin not allowed for this API key',
        JSON.stringify(headers),
      );
    }
    assert.match(
      await widgetError(widgetPath(P.apiKey, 'wanda'), 403),
      /^idsvc widget: forbidden: This partner allows its widget only on listed origins, and the request named none/,
    );
  });

  test('a partner without a list serves any page, and requests without a Referer', async () => {
    const open = await t.partner();
    await widgetFor(widgetPath(open.apiKey, 'wanda'));
    await widgetFor(widgetPath(open.apiKey, 'wanda'), { referer: 'https://anywhere.example/' });
  });
});

test('the OpenAPI document lists the widget operation', async () => {
  const doc = (await (await fetch(`${t.baseUrl}/api/openapi.json`)).json()) as { paths: Record<string, Record<string, { operationId?: string }>> };
  const ops = doc.paths['/api/service_collection_widget/{api_key}/{user_identifier}/{display_sync}'];
  assert.equal(ops?.get?.operationId, 'service_collection_widget');
});

test('a widget signature in the URL stays out of the logs', async () => {
  const P = await t.partner();
  // A value no other test here sends: some send 64 hex digits as a user_identifier, which is logged.
  const sig = '5e'.repeat(32);
  const from = t.logs.length;
  await fetch(`${t.baseUrl}/api/service_collection_widget/${P.apiKey}/someone/TRUE?exp=1&sig=${sig}`);
  assert.ok(t.logs.length > from, 'the request is logged');
  assert.ok(!t.logs.slice(from).join('').includes(sig));
});

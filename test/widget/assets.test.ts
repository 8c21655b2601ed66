// The widget's static files over HTTP (SPEC §7): the bundle and the picker's catalogue. The per-user
// boot script is service_collection_widget's (test/api/service-collection-widget.test.ts); the
// browser side is in widget.browser.test.ts and test/e2e/.
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { buildWidget, WIDGET_GZIP_BUDGET, type WidgetManifest } from '../../scripts/build-widget.js';
import { WIDGET_DIR } from '../../src/widget/bundle.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { widgetError as errorScript } from '../helpers/widget.js';

let t: TestApp;
let manifest: WidgetManifest;

before(async () => {
  manifest = await buildWidget();
  t = await startTestApp({ BASE_URL: 'https://id.example.org' });
});
after(() => t.close());

const widgetError = (pathAndQuery: string, status: number) => errorScript(t.baseUrl, pathAndQuery, status);

describe('the widget bundle', () => {
  test('is within its size budget', () => {
    assert.ok(manifest.gzipBytes <= WIDGET_GZIP_BUDGET, `${manifest.gzipBytes} bytes gzip`);
  });

  test('is served cached for a year, with an ETag, to pages on any origin', async () => {
    const url = `${t.baseUrl}/widget/${manifest.file}`;
    const res = await fetch(url, { headers: { 'accept-encoding': 'identity' } });
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('content-type'), 'text/javascript; charset=utf-8');
    assert.equal(res.headers.get('cache-control'), 'public, max-age=31536000, immutable');
    assert.equal(res.headers.get('x-content-type-options'), 'nosniff');
    assert.equal(res.headers.get('cross-origin-resource-policy'), 'cross-origin');
    assert.equal(res.headers.get('access-control-allow-origin'), '*');
    const etag = res.headers.get('etag');
    assert.match(etag ?? '', /^"[A-Za-z0-9_-]+"$/);
    assert.deepEqual(Buffer.from(await res.arrayBuffer()), await readFile(path.join(WIDGET_DIR, manifest.file)));
    const again = await fetch(url, { headers: { 'if-none-match': etag!, 'accept-encoding': 'identity' } });
    assert.equal(again.status, 304);
    assert.equal(again.headers.get('cache-control'), 'public, max-age=31536000, immutable');
    // Gzipped for clients that take it, under its own tag.
    const gz = await fetch(url); // fetch asks for gzip and unpacks it
    assert.equal(gz.headers.get('content-encoding'), 'gzip');
    assert.equal(gz.headers.get('etag'), etag!.replace(/"$/, '-gz"'));
    assert.equal((await gz.arrayBuffer()).byteLength, manifest.bytes);
  });

  test('is gzipped only when Accept-Encoding takes gzip with a q above 0, read in linear time', async () => {
    const url = `${t.baseUrl}/widget/${manifest.file}`;
    const encodingFor = async (acceptEncoding: string) => {
      const res = await fetch(url, { headers: { 'accept-encoding': acceptEncoding } });
      await res.arrayBuffer();
      return res.headers.get('content-encoding');
    };
    for (const taken of ['gzip', 'br, GZIP', 'deflate, gzip;q=0.5', 'gzip ; q=1.0', 'x, gzip;q=.001']) assert.equal(await encodingFor(taken), 'gzip', taken);
    for (const refused of ['identity', 'gzip;q=0', 'gzip;q=0.000', 'gzip;level=9', 'x-gzip', 'gzip;q=2'])
      assert.equal(await encodingFor(refused), null, refused);
    // One regex over the header was quadratic in a long q value that did not end the entry.
    const before = process.cpuUsage();
    assert.equal(await encodingFor(`gzip;q=0.${'1'.repeat(15_000)}x`), null);
    const used = process.cpuUsage(before);
    assert.ok(used.user + used.system < 200_000, `${(used.user + used.system) / 1000} ms of CPU`);
  });

  test('only bundle files are served', async () => {
    for (const name of ['widget.00000000.js', 'manifest.json', '..%2F..%2Fpackage.json', 'widget.c6ac0c96.js.map']) {
      assert.equal(await widgetError(`/widget/${name}`, 404), 'idsvc widget: not_found: No such widget bundle', name);
    }
  });
});

describe('the catalogue for the picker', () => {
  test('every enabled service, in combined order, with what the picker needs', async () => {
    const P = await t.partner();
    const res = await fetch(`${t.baseUrl}/widget/catalogue.json`);
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('content-type'), 'application/json; charset=utf-8');
    const entries = (await res.json()) as Record<string, unknown>[];
    const combined = await P.publicClient.serviceDetails({ order: 'combined' });
    assert.deepEqual(
      entries.map((e) => e.svcId),
      combined.map((e) => e.svcId),
    );
    assert.ok(!entries.some((e) => e.svcId === '1337x'), 'disabled services are left out');
    const github = entries.find((e) => e.svcId === 'github');
    assert.deepEqual(github, {
      svcId: 'github',
      svcName: 'GitHub',
      svcLeftURL: 'https://www.github.com/',
      svcRightURL: '',
      regexCheck: '^[a-zA-Z0-9](?:[a-zA-Z0-9]|-(?=[a-zA-Z0-9])){0,38}$',
      urlBuilder: null,
      svcFavicon: 'https://www.github.com/favicon.ico',
    });
  });

  test('any page may fetch it; shared caches may keep it for five minutes', async () => {
    const res = await fetch(`${t.baseUrl}/widget/catalogue.json`, { headers: { origin: 'https://anywhere.example' } });
    assert.equal(res.headers.get('access-control-allow-origin'), '*');
    assert.equal(res.headers.get('cache-control'), 'public, max-age=300');
    const etag = res.headers.get('etag')!;
    assert.ok(etag);
    const again = await fetch(`${t.baseUrl}/widget/catalogue.json`, { headers: { 'if-none-match': etag } });
    assert.equal(again.status, 304);
  });
});

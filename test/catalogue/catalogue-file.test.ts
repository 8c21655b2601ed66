import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import {
  CATALOGUE_ATTRIBUTION,
  CATALOGUE_FORMAT,
  type CatalogueEntry,
  DEFAULT_CATALOGUE_PATH,
  loadCatalogueFile,
  parseCatalogueFile,
  serialiseCatalogue,
} from '../../src/catalogue/catalogue-file.js';

function buildEntry(overrides: Partial<Record<keyof CatalogueEntry, unknown>> = {}): CatalogueEntry {
  return {
    svcId: 'example',
    svcName: 'Example',
    svcURL: 'https://example.com/',
    svcLeftURL: 'https://example.com/u/',
    svcRightURL: '/profile',
    svcMobileURL: '',
    svcIphoneURL: '',
    svcFavicon: 'https://example.com/favicon.ico',
    svcIcon: 'https://example.com/apple-touch-icon.png',
    svcIphoneIcon: 'https://example.com/apple-touch-icon.png',
    regexCheck: '^[a-z]+$',
    urlBuilder: null,
    disabled: false,
    ...overrides,
  } as CatalogueEntry;
}

const file = (services: unknown[]) => ({ format: CATALOGUE_FORMAT, attribution: CATALOGUE_ATTRIBUTION, services });

test('a valid file parses', () => {
  const entries = parseCatalogueFile(file([buildEntry(), buildEntry({ svcId: 'other', disabled: true })]));
  assert.equal(entries.length, 2);
  assert.deepEqual(entries[0], buildEntry());
  assert.equal(entries[1]!.disabled, true);
});

test('templates without a path and services without profile URLs are valid', () => {
  const entries = parseCatalogueFile(
    file([
      buildEntry({ svcId: 'hosted', svcLeftURL: 'https://', svcRightURL: '.example.com/' }),
      buildEntry({ svcId: 'nourl', svcLeftURL: '', svcRightURL: '', regexCheck: null }),
      buildEntry({ svcId: 'mastodon', svcLeftURL: '', svcRightURL: '', urlBuilder: 'mastodon' }),
    ]),
  );
  assert.equal(entries.length, 3);
});

const bad: [string, Partial<Record<keyof CatalogueEntry, unknown>>, RegExp][] = [
  ['upper-case svcId', { svcId: 'Example' }, /services\[1\]: svcId /],
  ['svcId not a string', { svcId: 7 }, /services\[1\]: svcId /],
  ['svcId with a dash', { svcId: 'ex-ample' }, /svcId /],
  ['empty svcId', { svcId: '' }, /svcId /],
  ['svcId over 64', { svcId: 'a'.repeat(65) }, /svcId /],
  ['reserved svcId', { svcId: 'popularity' }, /services\[1\] \(svcId "popularity"\): svcId "popularity" is reserved/],
  ['reserved svcId combined', { svcId: 'combined' }, /svcId "combined" is reserved/],
  ['empty svcName', { svcName: '' }, /\(svcId "example"\): svcName /],
  ['blank svcName', { svcName: '   ' }, /svcName /],
  ['long svcName', { svcName: 'x'.repeat(201) }, /svcName /],
  ['svcName with a newline', { svcName: 'a\nb' }, /svcName /],
  ['svcName not a string', { svcName: 3 }, /svcName /],
  ['javascript: svcURL', { svcURL: 'javascript:alert(1)' }, /svcURL /],
  ['relative svcFavicon', { svcFavicon: '/favicon.ico' }, /svcFavicon /],
  ['svcIcon with credentials', { svcIcon: 'https://user:pw@example.com/x.png' }, /svcIcon /],
  ['svcIphoneIcon null', { svcIphoneIcon: null }, /svcIphoneIcon /],
  ['svcMobileURL with a space', { svcMobileURL: 'https://example.com/ x' }, /svcMobileURL /],
  ['svcIphoneURL ftp', { svcIphoneURL: 'ftp://example.com/' }, /svcIphoneURL /],
  ['svcLeftURL javascript:', { svcLeftURL: 'javascript:alert(' }, /svcLeftURL /],
  ['svcLeftURL with a tab', { svcLeftURL: 'https://example.com/\t' }, /svcLeftURL /],
  ['svcLeftURL that never forms a URL', { svcLeftURL: 'https://exa mple' }, /svcLeftURL /],
  ['svcLeftURL with a bad host', { svcLeftURL: 'https://[', svcRightURL: '' }, /svcLeftURL /],
  ['svcRightURL without svcLeftURL', { svcLeftURL: '', svcRightURL: '/x' }, /svcRightURL /],
  ['svcRightURL with a newline', { svcRightURL: '/\n' }, /svcRightURL /],
  ['regexCheck that does not compile', { regexCheck: '([a-z' }, /regexCheck is not a valid/],
  ['regexCheck not a string', { regexCheck: 42 }, /regexCheck /],
  ['regexCheck too long', { regexCheck: 'a'.repeat(1001) }, /regexCheck /],
  ['unknown urlBuilder', { urlBuilder: 'bluesky' }, /urlBuilder must be null or one of "mastodon"/],
  ['disabled as a string', { disabled: 'false' }, /disabled /],
];

for (const [name, overrides, message] of bad) {
  test(`rejects ${name}`, () => {
    assert.throws(() => parseCatalogueFile(file([buildEntry({ svcId: 'first' }), buildEntry(overrides)])), message);
  });
}

test('rejects missing and unknown fields', () => {
  const { regexCheck: _omitted, ...missing } = buildEntry();
  assert.throws(() => parseCatalogueFile(file([missing])), /services\[0\] \(svcId "example"\): regexCheck is missing/);
  assert.throws(
    () => parseCatalogueFile(file([{ ...buildEntry(), regexcheck: '^a$' }])),
    /services\[0\] \(svcId "example"\): "regexcheck" is not a known field/,
  );
  assert.throws(() => parseCatalogueFile(JSON.parse(`{"format":"${CATALOGUE_FORMAT}","services":[{"__proto__":{}}]}`)), /"__proto__" is not a known field/);
  assert.throws(() => parseCatalogueFile(file([null])), /services\[0\]: entry must be an object/);
});

test('rejects duplicate svcIds', () => {
  assert.throws(() => parseCatalogueFile(file([buildEntry(), buildEntry({ svcName: 'Again' })])), /services\[1\] \(svcId "example"\): svcId is a duplicate/);
});

test('rejects a malformed file', () => {
  assert.throws(() => parseCatalogueFile([buildEntry()]), /must be a JSON object/);
  assert.throws(() => parseCatalogueFile({ services: [] }), /"format"/);
  assert.throws(() => parseCatalogueFile({ format: 'idsvc-catalogue/2', services: [] }), /"format"/);
  assert.throws(() => parseCatalogueFile({ format: CATALOGUE_FORMAT }), /"services"/);
  assert.throws(() => parseCatalogueFile({ format: CATALOGUE_FORMAT, attribution: 1, services: [] }), /"attribution"/);
  assert.throws(() => parseCatalogueFile({ format: CATALOGUE_FORMAT, services: [], extra: 1 }), /"extra"/);
  assert.deepEqual(parseCatalogueFile({ format: CATALOGUE_FORMAT, services: [] }), []);
});

test('serialise sorts by svcId, fixes the key order and drops unknown properties', () => {
  const row = { id: 7, ...buildEntry({ svcId: 'zed' }) } as CatalogueEntry;
  const reversed = Object.fromEntries(Object.entries(buildEntry({ svcId: 'alpha' })).reverse()) as unknown as CatalogueEntry;
  const text = serialiseCatalogue([row, reversed]);
  assert.ok(text.endsWith('}\n'));
  const json = JSON.parse(text) as { format: string; attribution: string; services: Record<string, unknown>[] };
  assert.deepEqual(Object.keys(json), ['format', 'attribution', 'services']);
  assert.equal(json.attribution, CATALOGUE_ATTRIBUTION);
  assert.deepEqual(
    json.services.map((s) => s.svcId),
    ['alpha', 'zed'],
  );
  assert.deepEqual(Object.keys(json.services[0]!), Object.keys(buildEntry()));
  assert.ok(!('id' in json.services[1]!));
  assert.equal(text, `${JSON.stringify(json, null, 2)}\n`);
});

test('serialise then parse gives the same entries, and the shipped file round-trips byte for byte', () => {
  const entries = [buildEntry({ svcId: 'b' }), buildEntry({ svcId: 'a', urlBuilder: 'mastodon', regexCheck: null })];
  assert.deepEqual(parseCatalogueFile(JSON.parse(serialiseCatalogue(entries))), [entries[1], entries[0]]);

  const shipped = readFileSync(DEFAULT_CATALOGUE_PATH, 'utf8');
  assert.equal(serialiseCatalogue(parseCatalogueFile(JSON.parse(shipped))), shipped);
  assert.equal(serialiseCatalogue(loadCatalogueFile()), shipped);
});

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import {
  baseSvcId,
  CURATED,
  DEFAULT_SHERLOCK_DATA,
  generateCatalogue,
  makeSvcIds,
  pythonPatternToJs,
  sherlockEntries,
} from '../../scripts/generate-catalogue.js';
import { DEFAULT_CATALOGUE_PATH, parseCatalogueFile } from '../../src/catalogue/catalogue-file.js';
import { projectRoot } from '../../src/paths.js';

const root = projectRoot;
const sherlockData = JSON.parse(readFileSync(DEFAULT_SHERLOCK_DATA, 'utf8')) as Record<string, Record<string, unknown>>;
const generated = generateCatalogue(sherlockData);
const entries = parseCatalogueFile(JSON.parse(generated));

test('459 Sherlock entries plus the curated ones', () => {
  assert.equal(sherlockEntries(sherlockData).length, 459);
  assert.equal(entries.length, 459 + CURATED.length);
  for (const curated of CURATED)
    assert.ok(
      entries.some((e) => e.svcId === curated.svcId),
      curated.svcId,
    );
});

test('NSFW sites and templates without {} are left out', () => {
  const names = new Set(entries.map((e) => e.svcName));
  const nsfw = Object.keys(sherlockData).filter((name) => sherlockData[name]!.isNSFW === true);
  assert.ok(nsfw.length > 0);
  for (const name of nsfw) assert.ok(!names.has(name), name);
  assert.ok(!names.has('Discord'), 'Discord has no {} in its url');
  assert.ok(!names.has('$schema'));
});

test('svcIds are unique, sorted, and every entry has exactly the file fields', () => {
  const ids = entries.map((e) => e.svcId);
  assert.equal(new Set(ids).size, ids.length);
  assert.deepEqual(ids, [...ids].sort());
  const fields = [
    'svcId',
    'svcName',
    'svcURL',
    'svcLeftURL',
    'svcRightURL',
    'svcMobileURL',
    'svcIphoneURL',
    'svcFavicon',
    'svcIcon',
    'svcIphoneIcon',
    'regexCheck',
    'urlBuilder',
    'disabled',
  ];
  for (const raw of (JSON.parse(generated) as { services: object[] }).services) {
    assert.deepEqual(Object.keys(raw), fields);
  }
});

test('the GitHub entry follows the data', () => {
  const github = entries.find((e) => e.svcId === 'github');
  assert.deepEqual(github, {
    svcId: 'github',
    svcName: 'GitHub',
    svcURL: 'https://www.github.com/',
    svcLeftURL: 'https://www.github.com/',
    svcRightURL: '',
    svcMobileURL: '',
    svcIphoneURL: '',
    svcFavicon: 'https://www.github.com/favicon.ico',
    svcIcon: 'https://www.github.com/apple-touch-icon.png',
    svcIphoneIcon: 'https://www.github.com/apple-touch-icon.png',
    regexCheck: '^[a-zA-Z0-9](?:[a-zA-Z0-9]|-(?=[a-zA-Z0-9])){0,38}$',
    urlBuilder: null,
    disabled: false,
  });
});

test('a template is split around {} and icons use the origin of urlMain', () => {
  const arduino = entries.find((e) => e.svcId === 'arduinoforum')!;
  assert.equal(arduino.svcLeftURL, 'https://forum.arduino.cc/u/');
  assert.equal(arduino.svcRightURL, '/summary');
  const cults = entries.find((e) => e.svcId === 'cults3d')!;
  assert.equal(cults.svcURL, 'https://cults3d.com/en');
  assert.equal(cults.svcFavicon, 'https://cults3d.com/favicon.ico');
  const tumblr = entries.find((e) => e.svcId === 'tumblr')!;
  assert.equal(tumblr.svcLeftURL, 'https://');
  assert.equal(tumblr.svcRightURL, '.tumblr.com/');
});

test('the mastodon entry uses its own URL builder', () => {
  const mastodon = entries.find((e) => e.svcId === 'mastodon')!;
  assert.equal(mastodon.urlBuilder, 'mastodon');
  assert.equal(mastodon.svcName, 'Mastodon');
  assert.equal(mastodon.svcURL, 'https://joinmastodon.org/');
  assert.equal(mastodon.svcLeftURL, '');
  assert.equal(mastodon.svcFavicon, 'https://joinmastodon.org/favicon.ico');
  assert.ok(entries.filter((e) => e.urlBuilder !== null).every((e) => CURATED.some((c) => c.svcId === e.svcId)));
});

test('svcIds: lower-cased a-z0-9, clashes get 2, 3, … in input order', () => {
  assert.equal(baseSvcId('Steam Community (User)'), 'steamcommunityuser');
  assert.equal(baseSvcId('osu!'), 'osu');
  assert.deepEqual(makeSvcIds(['Foo Bar', 'foo.bar', 'FOOBAR', 'foobar2', 'x']), ['foobar', 'foobar2', 'foobar3', 'foobar22', 'x']);
  assert.deepEqual(makeSvcIds(['Popularity', 'Combined']), ['popularity2', 'combined2'], 'order names are reserved');
  assert.deepEqual(makeSvcIds(['Mastodon'], ['mastodon']), ['mastodon2'], 'curated ids are taken first');
  assert.throws(() => makeSvcIds(['Ok', '!!!']), /"!!!"/);
});

test('Python-only pattern syntax is rewritten for JavaScript', () => {
  assert.equal(pythonPatternToJs('^[\\w-]{,34}$'), '^[\\w-]{0,34}$');
  assert.equal(pythonPatternToJs('^a{2,}b\\{,3}$'), '^a{2,}b\\{,3}$');
  assert.equal(entries.find((e) => e.svcId === 'hackenproofhackers')!.regexCheck, '^[\\w-]{0,34}$');
});

test('generation is deterministic', () => {
  assert.equal(generateCatalogue(sherlockData), generated);
  assert.equal(generateCatalogue(structuredClone(sherlockData)), generated);
});

test('the committed catalogue and licence match a fresh run (run `npm run catalogue:generate`)', () => {
  assert.equal(DEFAULT_CATALOGUE_PATH, path.join(root, 'catalogue', 'services.json'));
  assert.equal(readFileSync(DEFAULT_CATALOGUE_PATH, 'utf8'), generated);
  assert.deepEqual(readFileSync(path.join(root, 'catalogue', 'LICENSE.sherlock')), readFileSync(path.join(path.dirname(DEFAULT_SHERLOCK_DATA), 'LICENSE')));
});

test('the script writes identical bytes on every run', () => {
  const outDir = mkdtempSync(path.join(tmpdir(), 'idsvc-catalogue-'));
  try {
    const run = () => {
      execFileSync(process.execPath, ['--import', 'tsx', path.join(root, 'scripts', 'generate-catalogue.ts'), DEFAULT_SHERLOCK_DATA, '--out-dir', outDir], {
        cwd: root,
        stdio: 'pipe',
      });
      return readFileSync(path.join(outDir, 'services.json'), 'utf8');
    };
    const first = run();
    assert.equal(run(), first);
    assert.equal(first, generated);
    assert.ok(readFileSync(path.join(outDir, 'LICENSE.sherlock'), 'utf8').includes('MIT License'));
  } finally {
    rmSync(outDir, { recursive: true, force: true });
  }
});

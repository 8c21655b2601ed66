// The shipped order of the services people most often have (catalogue/popularity.json) breaks ties
// in the popularity order: a fresh install's "most used" follows it, opted-in users outrank it.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadCatalogueFile } from '../../src/catalogue/catalogue-file.js';
import { CURATED_POPULARITY_PATH, loadCuratedPopularity } from '../../src/catalogue/curated-popularity.js';
import { startTestApp, type TestApp } from '../helpers/app.js';

let t: TestApp;
before(async () => {
  t = await startTestApp();
});
after(() => t.close());

test('every service in the shipped order is in the shipped catalogue, once', () => {
  const ids = new Set(loadCatalogueFile().map((e) => e.svcId));
  const listed = (JSON.parse(fs.readFileSync(CURATED_POPULARITY_PATH, 'utf8')) as { services: string[] }).services;
  assert.deepEqual(
    listed.filter((id) => !ids.has(id)),
    [],
  );
  assert.equal(new Set(listed).size, listed.length);
  assert.equal(loadCuratedPopularity().size, listed.length);
});

test('a file that is not a popularity list is refused with its path and the field', () => {
  const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'idsvc-popularity-')), 'popularity.json');
  fs.writeFileSync(file, JSON.stringify({ format: 'idsvc-popularity/1', about: '', services: ['GitHub!'] }));
  assert.throws(
    () => loadCuratedPopularity(file),
    (e: Error) => e.message.startsWith(file) && e.message.includes('/services/0'),
  );
});

test("a fresh install's most used follow the shipped order; opted-in users come first", async () => {
  const { client } = await t.partner();
  const enabled = new Set((await client.serviceDetails({ order: 'alphanumeric', limit: 1000 })).map((s) => s.svcId));
  const shipped = [...loadCuratedPopularity().keys()].filter((id) => enabled.has(id));
  const fresh = await client.serviceDetails({ order: 'popularity', limit: 10 });
  assert.deepEqual(
    fresh.map((s) => s.svcId),
    shipped.slice(0, 10),
  );

  const p = await t.partner();
  await t.user({ email: 'a@example.org', userId: 'aaa' });
  await p.client.updateService('a@example.org', 'lobsters', 'aaa');
  await p.client.syncUser('a@example.org', { email: 'a@example.org', password: 'correct horse battery' });
  t.ctx.catalogue.invalidate();
  const used = await client.serviceDetails({ order: 'popularity', limit: 3 });
  assert.deepEqual(
    used.map((s) => s.svcId),
    ['lobsters', ...shipped.slice(0, 2)],
  );
});

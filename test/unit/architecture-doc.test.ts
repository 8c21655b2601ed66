// Docs that stay true. docs/ARCHITECTURE.md is the map a newcomer reads first: every path it names
// must exist, every folder of src/ must be on it, and its list of repositories must be the files in
// src/repositories/. docs/performance.md says where things stand now, with the results it rests on.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { projectRoot } from '../../src/paths.js';

const doc = fs.readFileSync(path.join(projectRoot, 'docs', 'ARCHITECTURE.md'), 'utf8');
const exists = (p: string) => fs.existsSync(path.join(projectRoot, p));

/** Folders of src/, as paths from the project root ("src/site/routes"). */
function srcFolders(dir = 'src'): string[] {
  return fs
    .readdirSync(path.join(projectRoot, dir), { withFileTypes: true })
    .filter((e) => e.isDirectory())
    .flatMap((e) => [`${dir}/${e.name}`, ...srcFolders(`${dir}/${e.name}`)]);
}

/**
 * Every path the document names, as written: a run of name characters with at least one slash whose
 * first segment is an entry of the project root or of src/ (the document also writes paths inside
 * src/ without it, as in `services/ownership.ts`). A placeholder such as `<table>.ts` ends the path
 * before it. URLs (`/u/{userId}`) and slashed words (`api_key/api_token`) name no such entry.
 */
function namedPaths(): string[] {
  const firsts = new Set([...fs.readdirSync(projectRoot), ...fs.readdirSync(path.join(projectRoot, 'src'))]);
  const found = new Set<string>();
  for (const m of doc.matchAll(/(?<![\w./{<-])[\w.-]{1,64}(?:\/[\w.-]{1,64}){0,8}\/?/g)) {
    const token = m[0];
    if (!token.includes('/') || !firsts.has(token.split('/')[0]!)) continue;
    found.add(token.replace(/\/$/, ''));
  }
  return [...found];
}

test('every path ARCHITECTURE.md names exists (from the project root, or inside src/)', () => {
  const paths = namedPaths();
  assert.ok(paths.length > 50, `only ${paths.length} paths found: the pattern no longer reads the document`);
  const missing = paths.filter((p) => !exists(p) && !exists(`src/${p}`));
  assert.deepEqual(missing, []);
});

test('every folder of src/ is named in ARCHITECTURE.md', () => {
  const named = new Set(namedPaths());
  const folders = srcFolders();
  assert.ok(folders.includes('src/site/routes'));
  assert.deepEqual(
    folders.filter((f) => !named.has(f)),
    [],
  );
});

test('the repository list in "Where a change goes" is the files of src/repositories/', () => {
  const row = doc.split('\n').find((line) => line.startsWith('| a SQL statement |'));
  assert.ok(row, 'no "a SQL statement" row');
  const listed = [...row.slice(row.indexOf(':')).matchAll(/`([a-z-]+)`/g)].map((m) => m[1]).sort();
  const files = fs
    .readdirSync(path.join(projectRoot, 'src', 'repositories'))
    .filter((f) => f.endsWith('.ts'))
    .map((f) => f.slice(0, -3))
    .sort();
  assert.deepEqual(listed, files);
});

test('docs/performance.md stays short, and the results it cites are the ones committed', () => {
  const perf = fs.readFileSync(path.join(projectRoot, 'docs', 'performance.md'), 'utf8');
  assert.ok(perf.trimEnd().split('\n').length <= 200, 'docs/performance.md is over 200 lines: history belongs in git');
  const cited = [...new Set([...perf.matchAll(/bench\/results\/([\w.-]+\.json)/g)].map((m) => m[1]))].sort();
  const committed = fs.readdirSync(path.join(projectRoot, 'bench', 'results')).sort();
  assert.deepEqual(cited, committed);
});

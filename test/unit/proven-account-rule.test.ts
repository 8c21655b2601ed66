// "An account names a person only once its address is proven" is stated once (src/domain/visibility.ts,
// and its Kysely form beside the users repository): a new query that wrote the condition again could
// drift from it, so any other place that tests email_proven_at against NULL fails here.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { projectRoot } from '../../src/paths.js';

const RESTATED = /email_proven_at\s+IS\s+(NOT\s+)?NULL|email_proven_at['"]\s*,\s*['"]is|\.email_proven_at\s*[!=]==?\s*null/i;
const HOMES = new Set(['src/domain/visibility.ts', 'src/repositories/users.ts']);

function sources(dir: string): string[] {
  return fs.readdirSync(path.join(projectRoot, dir), { withFileTypes: true }).flatMap((e) => {
    const rel = `${dir}/${e.name}`;
    if (e.isDirectory()) return rel === 'src/db/migrations' ? [] : sources(rel);
    return /\.tsx?$/.test(e.name) ? [rel] : [];
  });
}

test('the proven-account condition is written only where the rule lives', () => {
  const found = sources('src').filter((file) => !HOMES.has(file) && RESTATED.test(fs.readFileSync(path.join(projectRoot, file), 'utf8')));
  assert.deepEqual(found, []);
});

test('the check would see a restatement', () => {
  for (const line of ['WHERE u.email_proven_at IS NOT NULL AND', ".where('email_proven_at', 'is not', null)", 'if (user.email_proven_at !== null)'])
    assert.match(line, RESTATED);
});

// `idsvc serve` turns V8's allocation-site pretenuring off (src/ops/heap-settings.ts). V8 ignores a
// flag it does not know without a word, so the test also checks that this Node's V8 has it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { keepShortLivedObjectsYoung, PRETENURING_OFF } from '../../src/ops/heap-settings.js';

test('serving processes set the flag that turns allocation-site pretenuring off', () => {
  const set: string[] = [];
  keepShortLivedObjectsYoung((flags) => set.push(flags));
  assert.deepEqual(set, ['--no-allocation-site-pretenuring']);
});

test("this Node's V8 knows the flag, and a process started with it runs", () => {
  const options = spawnSync(process.execPath, ['--v8-options'], { encoding: 'utf8' }).stdout;
  assert.match(options, /--allocation-site-pretenuring\b/);
  const run = spawnSync(process.execPath, [PRETENURING_OFF, '-e', 'process.stdout.write("ok")'], { encoding: 'utf8' });
  assert.equal(run.stdout, 'ok', run.stderr);
});

// `idsvc serve` runs process.nextTick hot before it takes traffic (src/ops/tick-warmup.ts), so that
// V8 compiles it then. V8's own report on the function (natives syntax, in a process of its own)
// says whether that happened: not compiled before the warm-up, optimized by TurboFan after it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/** V8's OptimizationStatus bits (src/runtime/runtime.h). */
const OPTIMIZED = 1 << 4;
const TURBOFANNED = 1 << 6;

test('after the warm-up, V8 has compiled process.nextTick with TurboFan', () => {
  const module = fileURLToPath(import.meta.resolve('../../src/ops/tick-warmup.js'));
  const script = `
    const before = %GetOptimizationStatus(process.nextTick);
    import(${JSON.stringify(module)})
      .then((m) => m.warmNextTick())
      .then(() => process.stdout.write(JSON.stringify({ before, after: %GetOptimizationStatus(process.nextTick) })));`;
  const run = spawnSync(process.execPath, ['--allow-natives-syntax', '-e', script], { encoding: 'utf8' });
  assert.equal(run.status, 0, run.stderr);
  const { before, after } = JSON.parse(run.stdout) as { before: number; after: number };
  assert.equal(before & TURBOFANNED, 0, 'nextTick was not compiled before');
  assert.equal(after & (OPTIMIZED | TURBOFANNED), OPTIMIZED | TURBOFANNED, `status ${after.toString(2)}`);
});

// `idsvc serve` runs process.nextTick hot before it takes traffic (src/ops/tick-warmup.ts), so that
// V8 compiles it then, for every number of arguments Node's streams give it. V8's own report on the
// function (natives syntax, in a process of its own) says whether that happened: not compiled before
// the warm-up, optimized by TurboFan after it, and still after the calls with arguments that a
// server's start and its first requests make (a warm-up without them was thrown away there).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/** V8's OptimizationStatus bits (src/runtime/runtime.h). */
const OPTIMIZED = 1 << 4;
const TURBOFANNED = 1 << 6;

test('after the warm-up, V8 has compiled process.nextTick with TurboFan, and keeps it through calls with arguments', () => {
  const module = fileURLToPath(import.meta.resolve('../../src/ops/tick-warmup.js'));
  const script = `
    const status = () => %GetOptimizationStatus(process.nextTick);
    const before = status();
    const noop = () => {};
    const streamTicks = () => new Promise((resolve) => {
      for (let i = 0; i < 200; i++) {
        process.nextTick(noop, { a: i });
        process.nextTick(noop, [i], 'x');
        process.nextTick(noop, null, i, true);
      }
      setImmediate(resolve);
    });
    import(${JSON.stringify(module)})
      .then((m) => m.warmNextTick())
      .then(async () => {
        const warmed = status();
        await streamTicks();
        process.stdout.write(JSON.stringify({ before, warmed, after: status() }));
      });`;
  const run = spawnSync(process.execPath, ['--allow-natives-syntax', '-e', script], { encoding: 'utf8' });
  assert.equal(run.status, 0, run.stderr);
  const { before, warmed, after } = JSON.parse(run.stdout) as { before: number; warmed: number; after: number };
  assert.equal(before & TURBOFANNED, 0, 'nextTick was not compiled before');
  for (const [when, s] of [
    ['after the warm-up', warmed],
    ['after ticks with arguments', after],
  ] as const) {
    assert.equal(s & (OPTIMIZED | TURBOFANNED), OPTIMIZED | TURBOFANNED, `${when}: status ${s.toString(2)}`);
  }
});

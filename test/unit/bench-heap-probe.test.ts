// The benchmark's bytes per request (bench/heap-probe.mjs): a process that allocates a known amount
// between two readings reports that amount, within what the runtime itself adds, and a process
// without BENCH_HEAP_FILE is left alone.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { projectRoot } from '../../src/paths.js';

const PROBE = path.join(projectRoot, 'bench', 'heap-probe.mjs');

// Asks its own probe before and after allocating `n` arrays of 100 small integers (16 bytes of
// header and 8 per element for the elements, 32 for the array: 848 bytes each), keeping none.
const SCRIPT = `
const n = Number(process.argv[1]);
const read = () => new Promise((resolve) => { process.kill(process.pid, 'SIGUSR2'); setTimeout(resolve, 100); });
await read();
let keep = null;
for (let i = 0; i < n; i++) keep = new Array(100).fill(i & 0xff);
await read();
process.stdout.write(String(keep.length));
`;

function run(env: Record<string, string>, n: number): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', PROBE, '--input-type=module', '-e', SCRIPT, String(n)], {
      env: { PATH: process.env.PATH ?? '', ...env },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.on('error', reject);
    child.on('exit', (code) => resolve({ code, out }));
  });
}

function readings(file: string): number[] {
  return fs
    .readFileSync(file, 'utf8')
    .trim()
    .split('\n')
    .map((line) => {
      const m = /^allocated=(\d+)$/.exec(line);
      assert.ok(m, line);
      return Number(m[1]);
    });
}

test('the allocation between two readings is what the process allocated, garbage collected meanwhile included', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'heap-probe-'));
  try {
    const perArray = 848;
    const results: number[] = [];
    for (const n of [20_000, 200_000]) {
      const file = path.join(dir, `heap-${n}.txt`);
      const { code } = await run({ BENCH_HEAP_FILE: file }, n);
      assert.equal(code, 0);
      const [before, after] = readings(file);
      results.push((after! - before!) / n);
    }
    // Ten times the arrays: many collections happen in between, and what they freed is counted.
    for (const perItem of results) assert.ok(perItem > perArray * 0.95 && perItem < perArray * 1.15, `${perItem} bytes per array`);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('without BENCH_HEAP_FILE the probe installs nothing: SIGUSR2 keeps its default (the process ends)', async () => {
  const { code, out } = await run({}, 10);
  assert.notEqual(code, 0);
  assert.equal(out, '');
});

// What a benchmark run records of its host (bench/host-costs.ts): a system call's and a page fault's cost.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { measureHostCosts } from '../../bench/host-costs.js';
import { report, type BenchResult } from '../../bench/report.js';

test('both costs are measured as positive microseconds', () => {
  const costs = measureHostCosts(1);
  for (const [name, value] of Object.entries(costs)) assert.ok(Number.isFinite(value) && value > 0, `${name}: ${value}`);
});

const result = (host_costs?: BenchResult['machine']['host_costs']): BenchResult => ({
  users: 100,
  date: '2026-11-28T00:00:00.000Z',
  machine: { cpus: 2, model: 'test', memory_gb: 1, node: process.version, load_average: [0, 0, 0], ...(host_costs ? { host_costs } : {}) },
  settings: { closed: { connections: 64 } },
  runs: [],
});
const plain = (t: { head: string[]; rows: string[][] }) => [t.head, ...t.rows].map((r) => r.join(' ')).join('\n');

test('the report says what the host charged, when the run measured it', () => {
  assert.match(report(result({ syscall_us: 1.25, page_fault_us: 18.6 }), plain), /host: a system call 1\.25 µs, a page's first touch 18\.6 µs/);
  // Results written before the host was measured still print.
  assert.doesNotMatch(report(result(), plain), /host:/);
});

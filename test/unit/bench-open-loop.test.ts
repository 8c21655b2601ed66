// The open-loop generator (bench/open-loop.ts) against a local server: it sends exactly the
// schedule, and a server that stalls shows as latency on every request that came due meanwhile,
// not on one (no coordinated omission). The assertions are lower bounds set by the schedule itself,
// so a slow machine can only make them hold by a wider margin.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import { runJob } from '../../bench/open-loop.js';

async function withServer(stallFirstMs: number, body: (origin: string, received: () => number) => Promise<void>): Promise<void> {
  let received = 0;
  const server = http.createServer((req, res) => {
    const n = ++received;
    req.resume();
    req.on('end', () => {
      if (n === 1 && stallFirstMs > 0) setTimeout(() => res.end('late'), stallFirstMs);
      else res.end(req.method === 'POST' ? 'posted' : 'ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    await body(`http://127.0.0.1:${(server.address() as AddressInfo).port}`, () => received);
  } finally {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
}

const pool = [
  { method: 'GET' as const, path: '/a', body: null },
  { method: 'POST' as const, path: '/b', body: 'api_token=x' },
];

test('open loop: sends rate × duration requests and records every one after the warm-up', async () => {
  await withServer(0, async (origin, received) => {
    const r = await runJob({ label: 'local', origin, rate: 200, seed: 1 }, pool, { connections: 4, durationS: 0.5, warmupS: 0.1 });
    assert.equal(received(), 120, 'every request of the schedule, warm-up included, reached the server');
    assert.equal(r.count, 100, 'only the 0.5 s after the warm-up are recorded');
    assert.equal(r.errors + r.non_2xx + r.unfinished, 0);
    assert.equal(r.rate_offered, 200);
    assert.ok(r.p50_ms > 0 && r.p50_ms <= r.p99_ms && r.p99_ms <= r.p999_ms && r.p999_ms <= r.max_ms);
  });
});

test('open loop: a stalled server delays every request due during the stall, measured from its due time', async () => {
  // One connection, 200 requests a second, the first answer held 400 ms: the requests due in the
  // first 300 ms (61 of them) cannot be answered before 400 ms, so each waited at least 100 ms.
  // A closed-loop client timing from the send would have recorded one slow request.
  await withServer(400, async (origin) => {
    const r = await runJob({ label: 'stalled', origin, rate: 200, seed: 1 }, pool, { connections: 1, durationS: 0.6, warmupS: 0 });
    assert.equal(r.count, 120);
    assert.equal(r.errors + r.non_2xx + r.unfinished, 0);
    assert.ok(r.max_ms >= 400, `the held request waited its 400 ms: ${r.max_ms}`);
    // 61 of 120 requests waited ≥ 100 ms, so the median did too.
    assert.ok(r.p50_ms >= 100, `median ${r.p50_ms} ms: the stall shows on half the requests`);
  });
});

test('open loop: the generator sleeps between sends, leaving the load core to the processes it shares it with', async () => {
  // A generator that polled its schedule would use a whole core for the run, whatever the rate
  // (it did, and took PostgreSQL's backends' time on the load core). Sending 200 requests a second
  // to a server in this same process costs a few percent of a core; the bound is ten times that.
  await withServer(0, async (origin) => {
    const wallStart = performance.now();
    const cpuStart = process.cpuUsage();
    const r = await runJob({ label: 'sleeps', origin, rate: 200, seed: 1 }, pool, { connections: 4, durationS: 1, warmupS: 0 });
    const cpu = process.cpuUsage(cpuStart);
    const share = (cpu.user + cpu.system) / 1000 / (performance.now() - wallStart);
    assert.equal(r.count, 200);
    assert.equal(r.errors + r.non_2xx + r.unfinished, 0);
    assert.ok(share < 0.4, `generator and server together used ${(share * 100).toFixed(0)} % of a core`);
  });
});

test('open loop: a request sent ahead of its due time is timed from its send, so no latency is shorter than the server took', async () => {
  // The server holds every answer 20 ms: whatever the send offset, no recorded latency may be below that.
  let received = 0;
  const server = http.createServer((req, res) => {
    received++;
    req.resume();
    const arrived = performance.now();
    // Timers may fire a fraction of a millisecond early: hold until 20 ms have surely passed.
    const answer = () => (performance.now() - arrived >= 20 ? res.end('ok') : setTimeout(answer, 1));
    req.on('end', () => setTimeout(answer, 20));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const r = await runJob({ label: 'held', origin, rate: 1000, seed: 1 }, pool, { connections: 64, durationS: 0.3, warmupS: 0 });
    assert.equal(received, 300);
    assert.equal(r.errors + r.non_2xx + r.unfinished, 0);
    assert.ok(r.min_ms >= 20, `shortest latency ${r.min_ms} ms, under the 20 ms the server held each answer`);
  } finally {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});

test('open loop: a mixed pool reports latencies by operation and writes each request to the timeline', async () => {
  const HOLD_MS = 100;
  // The server holds every POST HOLD_MS and answers GETs at once: the tail belongs to the writes,
  // which the mix's overall percentiles alone cannot say. A hold long enough that a busy machine's
  // delays cannot make a read look as slow as a write.
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => (req.method === 'POST' ? setTimeout(() => res.end('posted'), HOLD_MS) : res.end('ok')));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'open-loop-'));
  try {
    const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const mixed = [
      { ...pool[0]!, operation: 'read' },
      { ...pool[1]!, operation: 'write' },
    ];
    const r = await runJob({ label: 'idsvc/mix', origin, rate: 200, seed: 1 }, mixed, { connections: 32, durationS: 0.5, warmupS: 0.1, timelineDir: dir });
    assert.equal(r.count, 100);
    assert.deepEqual(Object.keys(r.by_operation ?? {}).sort(), ['read', 'write']);
    assert.equal(r.by_operation!.read!.count + r.by_operation!.write!.count, 100);
    // A timer may fire up to a millisecond before its time as the clock is read.
    assert.ok(r.by_operation!.write!.min_ms >= HOLD_MS - 1, `every write waited its ${HOLD_MS} ms: ${r.by_operation!.write!.min_ms}`);
    assert.ok(r.by_operation!.read!.p50_ms < r.by_operation!.write!.min_ms, 'reads are not held');
    const lines = fs.readFileSync(path.join(dir, 'idsvc-mix-200.tsv'), 'utf8').trim().split('\n');
    assert.equal(lines[0], 'due_ms\tlatency_ms\toperation');
    assert.equal(lines.length, 101, 'one line per recorded request');
    const rows = lines.slice(1).map((l) => l.split('\t'));
    assert.equal(Number(rows[0]![0]), 0, 'due times start at the first recorded request');
    assert.ok(Number(rows[99]![0]) > Number(rows[0]![0]));
    for (const [, latency, op] of rows) if (op === 'write') assert.ok(Number(latency) >= HOLD_MS - 1);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});

test('open loop: a pool of one operation reports no breakdown', async () => {
  await withServer(0, async (origin) => {
    const r = await runJob({ label: 'one', origin, rate: 100, seed: 1 }, [{ ...pool[0]!, operation: 'read' }], { connections: 2, durationS: 0.2, warmupS: 0 });
    assert.equal(r.by_operation, undefined);
  });
});

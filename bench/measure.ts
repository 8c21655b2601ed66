// Measurement: the highest rate each server sustains (closed loop, wrk) and the latency of each at
// fixed arrival rates (open loop, bench/open-loop.ts), both from the load core.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import type { BenchSettings, Scenario } from './args.js';
import type { Sample } from './ceiling-server.js';
import { DATA_DIR, type Dataset } from './dataset.js';
import type { OpenLoopJob, OpenLoopResult, OpenLoopSettings } from './open-loop.js';
import {
  answerCacheLookups,
  asLoad,
  cpuSeconds,
  heapAllocated,
  log,
  minorFaults,
  postgresCpu,
  postgresCpuSecondsSince,
  ROOT,
  request,
  writeBytes,
  type Placement,
  type PostgresCpu,
  type Server,
} from './processes.js';
import { buildPool, operation, writePoolFile, type RequestSource } from './requests.js';
import { median } from './stats.js';

/** Scenarios whose least work differs from replaying bytes; service_details is a cached body. */
export const HAS_WORK_CEILING: ReadonlySet<Scenario> = new Set(['return_services_public', 'return_services_private', 'update_service', 'mixed']);

const md5Of = (src: RequestSource, user: number) => src.ids.toString('latin1', (user - 1) * 33, (user - 1) * 33 + 32);

/**
 * One answer of each kind from the real service: what the bytes ceiling and the host reference
 * replay. User 1 has its 8 central entries; user 4 also has two of the bench partner's pushes.
 */
export async function samples(base: string, src: RequestSource): Promise<Record<string, Sample>> {
  const partner = src.partners[0]!;
  const fixed = () => 0;
  const kinds = ['return_services_public', 'return_services_private', 'service_details_all', 'service_details_one', 'update_service', 'widget'];
  const out: Record<string, Sample> = {};
  for (const kind of kinds) {
    const r = operation(kind, src, partner, md5Of(src, kind === 'return_services_private' || kind === 'widget' ? 4 : 1), fixed);
    const s = await request(`${base}${r.path}`, r.method, r.body ?? undefined);
    if (s.status !== 200) throw new Error(`sample ${kind}: HTTP ${s.status}: ${s.body.slice(0, 300)}`);
    out[kind] = s;
  }
  return out;
}

/** The work ceiling must give the same answers as the service, or the ratio means nothing. */
export async function checkWorkCeiling(service: string, work: string, src: RequestSource): Promise<void> {
  for (const i of [1, 4, 10, 11, 20, 40, Math.floor(src.users / 2), src.users]) {
    for (const partner of src.partners) {
      for (const kind of ['return_services_public', 'return_services_private']) {
        const r = operation(kind, src, partner, md5Of(src, i), () => 0);
        const a = await request(`${service}${r.path}`, r.method, r.body ?? undefined);
        const c = await request(`${work}${r.path}`, r.method, r.body ?? undefined);
        if (a.body !== c.body)
          log(`WARNING: work ceiling differs from the service for user ${i} ${kind}:\n  service: ${a.body.slice(0, 400)}\n  ceiling: ${c.body.slice(0, 400)}`);
      }
    }
  }
}

interface WrkResult {
  requests: number;
  duration_us: number;
  non_2xx: number;
  socket_errors: number;
}

function wrk(base: string, poolFile: string, seconds: number, connections: number, where: Placement): Promise<WrkResult> {
  const [cmd, argv] = asLoad(where, 'wrk', [
    '-t1',
    `-c${connections}`,
    `-d${seconds}s`,
    '--timeout',
    '10s',
    '-s',
    path.join(import.meta.dirname, 'load.lua'),
    base,
    '--',
    poolFile,
  ]);
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, argv, { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.on('error', reject);
    child.on('exit', (code) => {
      const line = out.split('\n').find((l) => l.startsWith('WRK_JSON '));
      if (code !== 0 || !line) reject(new Error(`wrk failed (${code}): ${out}`));
      else resolve(JSON.parse(line.slice('WRK_JSON '.length)) as WrkResult);
    });
  });
}

export interface ClosedLoopFigures {
  rps: number;
  /** Requests per CPU-second of the server process: what the server costs, whatever else runs. */
  rps_per_cpu: number;
  /** CPU milliseconds every PostgreSQL process spent per request (near 0 on SQLite). */
  postgres_cpu_ms_per_req: number;
  non_2xx: number;
  /** Kilobytes written to storage by the server per request (SQLite: WAL and checkpoints). */
  disk_kb_per_req: number;
  /** Kilobytes the server's JavaScript heap allocated per request (bench/heap-probe.mjs); null when not measured. */
  heap_kb_per_req: number | null;
  /** Pages the server mapped for the first time per request (minor page faults): near 0 once its map and heap are warm. */
  faults_per_req: number;
  /** The share of the service's answer cache lookups answered from memory in the round; null for a reference server, or with no lookups. */
  cache_hit_share: number | null;
}

/** Where warm-up rounds' pool seeds start (after the seed's own): apart from the measured rounds', which number from 0. */
const WARM_UP_SEEDS = 500_000;

/** A server whose warm-up rounds fault in fewer pages than this per request reads what it has mapped already. */
export const WARM_FAULTS_PER_REQ = 0.1;

/**
 * Whether one more warm-up round is worth its time, given each round's page faults per request so
 * far. A server reads the database file through its memory map: the first read of each page is a
 * page fault, which costs a microsecond or so on bare metal and has cost 12–19 on this project's
 * virtual machines, and at 1 M users a lookup meets new pages for tens of thousands of lookups (after
 * 2 s of warm-up a server was still faulting more than once a request). The slower server, having
 * read less, would be measured colder: its ratio to the ceiling understated, the more so the more
 * the host charges for a fault. So warm-up goes on until faults are rare, or until two rounds in a
 * row did not bring them a fifth below the lowest before (what is left is the heap's own churn), or
 * until time is up.
 */
export function keepWarming(faultsPerReq: readonly number[], spentS: number, maxS: number): boolean {
  const last = faultsPerReq.at(-1);
  if (last === undefined) return true;
  if (spentS >= maxS || last < WARM_FAULTS_PER_REQ) return false;
  const stalled = (k: number) => k > 0 && faultsPerReq[k]! >= 0.8 * Math.min(...faultsPerReq.slice(0, k));
  const n = faultsPerReq.length;
  return !(stalled(n - 1) && stalled(n - 2));
}

/**
 * The highest rate each target sustains. The machine is shared and noisy, so the targets are
 * measured in interleaved rounds (service, bytes ceiling, work ceiling, again…) and each figure is
 * the median of its rounds: a burst of someone else's work then hits all of them alike. Every wrk
 * run gets a pool of its own (a new seed), so update_service never repeats a write.
 */
export async function closedLoop(
  targets: Server[],
  scenario: Scenario,
  src: RequestSource,
  settings: BenchSettings,
  where: Placement,
): Promise<ClosedLoopFigures[]> {
  const { connections, durationS, rounds, warmupS, warmupMaxS } = settings.closed;
  const poolFile = path.join(DATA_DIR, 'pool.tsv');
  // The measured rounds draw their pools in a fixed order whatever the warm-up took (it lasts as long as
  // the host makes it), so one seed offers the same measured traffic in every run.
  let measured = 0;
  let warming = 0;
  const run = async (t: Server, seconds: number, warmUp = false) => {
    const draw = warmUp ? WARM_UP_SEEDS + warming++ : measured++;
    writePoolFile(poolFile, buildPool(scenario, src, settings.seed * 1_000_003 + draw, 100_000));
    const pid = t.child.pid ?? 0;
    const heap0 = await heapAllocated(t);
    const lookups0 = await answerCacheLookups(t);
    const cpu0 = cpuSeconds(pid);
    const pg0 = postgresCpu();
    const written0 = writeBytes(pid);
    const faults0 = minorFaults(pid);
    const r = await wrk(t.url, poolFile, seconds, connections, where);
    const faults = minorFaults(pid) - faults0;
    const cpu = cpuSeconds(pid) - cpu0;
    const pgCpu = postgresCpuSecondsSince(pg0);
    const written = writeBytes(pid) - written0;
    const heap1 = await heapAllocated(t);
    const lookups1 = await answerCacheLookups(t);
    return {
      rps: Math.round(r.requests / (r.duration_us / 1e6)),
      rps_per_cpu: cpu > 0 ? Math.round(r.requests / cpu) : 0,
      postgres_cpu_ms_per_req: r.requests > 0 ? Math.round((pgCpu * 1e6) / r.requests) / 1000 : 0,
      non_2xx: r.non_2xx + r.socket_errors,
      disk_kb_per_req: r.requests > 0 ? Math.round((written / 1024 / r.requests) * 100) / 100 : 0,
      heap_kb_per_req: heap0 !== null && heap1 !== null && r.requests > 0 ? Math.round(((heap1 - heap0) / 1024 / r.requests) * 10) / 10 : null,
      faults_per_req: r.requests > 0 ? Math.round((faults / r.requests) * 100) / 100 : 0,
      cache_hit_share: hitShare(lookups0, lookups1),
    };
  };
  if (warmupS > 0) {
    for (const t of targets) {
      const trail: number[] = [];
      while (keepWarming(trail, trail.length * warmupS, warmupMaxS)) trail.push((await run(t, warmupS, true)).faults_per_req);
      log(`warm-up ${t.label}: ${trail.length} × ${warmupS} s, page faults a request ${trail.join(' → ')}`);
    }
  }
  const all: ClosedLoopFigures[][] = targets.map(() => []);
  for (let round = 0; round < rounds; round++) {
    for (const [i, t] of targets.entries()) {
      const m = await run(t, durationS);
      log(
        `closed ${t.label.padEnd(15)} ${scenario.padEnd(24)} ${String(m.rps).padStart(7)} req/s ${String(m.rps_per_cpu).padStart(7)} req/CPU-s ${String(m.postgres_cpu_ms_per_req).padStart(6)} PostgreSQL CPU ms/req ${String(m.faults_per_req).padStart(5)} faults/req${m.cache_hit_share === null ? '' : `  answer cache hits ${(m.cache_hit_share * 100).toFixed(1)} %`}${m.non_2xx ? `  ${m.non_2xx} ERRORS` : ''}`,
      );
      all[i]!.push(m);
    }
  }
  return all.map((ms) => ({
    rps: Math.round(median(ms.map((m) => m.rps))),
    rps_per_cpu: Math.round(median(ms.map((m) => m.rps_per_cpu))),
    postgres_cpu_ms_per_req: median(ms.map((m) => m.postgres_cpu_ms_per_req)),
    non_2xx: ms.reduce((n, m) => n + m.non_2xx, 0),
    disk_kb_per_req: median(ms.map((m) => m.disk_kb_per_req)),
    heap_kb_per_req: ms.every((m) => m.heap_kb_per_req !== null) ? median(ms.map((m) => m.heap_kb_per_req!)) : null,
    faults_per_req: median(ms.map((m) => m.faults_per_req)),
    cache_hit_share: ms.every((m) => m.cache_hit_share !== null) ? median(ms.map((m) => m.cache_hit_share!)) : null,
  }));
}

type Lookups = { hits: number; misses: number } | null;

/** The share of the lookups between two readings answered from memory; null without both readings or without lookups. */
export function hitShare(before: Lookups, after: Lookups): number | null {
  if (!before || !after) return null;
  const hits = after.hits - before.hits;
  const total = hits + after.misses - before.misses;
  return total > 0 ? Math.round((hits / total) * 1000) / 1000 : null;
}

/**
 * Each target at each rate, in one generator process on the load core: for every rate the targets
 * run one after another (service, work ceiling, host reference), so the noise of a minute hits the
 * three alike. Returns the results in job order: rate-major, then the targets' order.
 */
export function openLoop(
  targets: Server[],
  rates: number[],
  scenario: Scenario,
  ds: Dataset,
  widgetExpiry: number,
  settings: BenchSettings,
  where: Placement,
): Promise<OpenLoopResult[]> {
  const jobs: OpenLoopJob[] = [];
  for (const [k, rate] of rates.entries()) {
    for (const [j, t] of targets.entries()) jobs.push({ label: t.label, origin: t.url, rate, seed: settings.seed * 7919 + k * 31 + j });
  }
  const file = path.join(DATA_DIR, 'open-loop.json');
  const openSettings: OpenLoopSettings = {
    scenario,
    dataset: { users: ds.users, idsFile: ds.idsFile, services: ds.services, partners: ds.partners },
    widgetExpiry,
    connections: settings.open.connections,
    durationS: settings.open.durationS,
    warmupS: settings.open.warmupS,
    jobs,
    timelineDir: settings.open.timelineDir,
  };
  fs.writeFileSync(file, JSON.stringify(openSettings));
  const [cmd, argv] = asLoad(where, process.execPath, ['--import', 'tsx', path.join(import.meta.dirname, 'open-loop.ts'), file]);
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, argv, { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] });
    const results: OpenLoopResult[] = [];
    let buffered = '';
    // CPU seconds of the target being measured and of PostgreSQL when the running job started.
    let startedAt: { server: number; postgres: PostgresCpu } | null = null;
    const targetOf = (label: string) => targets.find((t) => t.label === label);
    child.stdout.on('data', (c: Buffer) => {
      buffered += c.toString();
      let nl = buffered.indexOf('\n');
      while (nl >= 0) {
        const line = buffered.slice(0, nl);
        buffered = buffered.slice(nl + 1);
        if (line.startsWith('OPEN_LOOP_START ')) {
          const pid = targetOf(line.slice('OPEN_LOOP_START '.length))?.child.pid;
          startedAt = pid === undefined ? null : { server: cpuSeconds(pid), postgres: postgresCpu() };
        } else if (line.startsWith('OPEN_LOOP_JSON ')) {
          const r = JSON.parse(line.slice('OPEN_LOOP_JSON '.length)) as OpenLoopResult;
          const pid = targetOf(r.label)?.child.pid;
          if (startedAt && pid !== undefined) {
            const sent = Math.round(r.rate_offered * (settings.open.warmupS + settings.open.durationS));
            r.server_cpu_ms_per_req = Math.round(((cpuSeconds(pid) - startedAt.server) * 1e6) / sent) / 1000;
            r.postgres_cpu_ms_per_req = Math.round((postgresCpuSecondsSince(startedAt.postgres) * 1e6) / sent) / 1000;
          }
          startedAt = null;
          results.push(r);
          const byOperation = Object.entries(r.by_operation ?? {}).map(([op, l]) => `${op} p50 ${l.p50_ms} p99 ${l.p99_ms} max ${l.max_ms}`);
          log(
            `open   ${r.label.padEnd(15)} ${scenario.padEnd(24)} ${String(r.rate_offered).padStart(7)} req/s offered  p50 ${r.p50_ms} p99 ${r.p99_ms} p99.9 ${r.p999_ms} max ${r.max_ms} ms  (send lag p99 ${r.send_lag_p99_ms} ms; CPU ms/req: server ${r.server_cpu_ms_per_req ?? '–'}, PostgreSQL ${r.postgres_cpu_ms_per_req ?? '–'}, generator ${r.generator_cpu_ms_per_req})${r.non_2xx + r.errors + r.unfinished ? `  ${r.non_2xx} non-2xx, ${r.errors} errors, ${r.unfinished} unanswered` : ''}`,
          );
          if (byOperation.length > 0) log(`       by operation: ${byOperation.join('; ')} ms`);
        }
        nl = buffered.indexOf('\n');
      }
    });
    child.on('error', reject);
    child.on('exit', (code) =>
      code === 0 && results.length === jobs.length ? resolve(results) : reject(new Error(`the open-loop generator failed (${code})`)),
    );
  });
}

// What a run reports: the result's shape (the JSON), its two tables (stdout, or Markdown for
// docs/performance.md through bench/table.ts), and where the JSON goes.
import fs from 'node:fs';
import path from 'node:path';
import type { Scenario } from './args.js';
import type { Backend } from './dataset.js';
import type { HostCosts } from './host-costs.js';
import type { HostReclaim } from './host-reclaim.js';
import type { OpenLoopResult } from './open-loop.js';

/** The open-loop targets (docs/performance.md), at half of the service's own highest rate, at 1 M users on SQLite. */
export const LATENCY_TARGET = { share: 0.5, p99_ms: 5, p999_ms: 20 } as const;

export interface OpenLoopRow {
  /** The offered rate as a share of the service's highest rate (closed loop). */
  share: number;
  rate_offered: number;
  service: OpenLoopResult;
  /** The work ceiling at the same absolute rate (scenarios that have one). */
  work_ceiling: OpenLoopResult | null;
  /** nginx at the same rate: the machine's and the generator's own latency, nothing of Node's. */
  host: OpenLoopResult | null;
}

export interface Run {
  scenario: Scenario;
  backend: Backend;
  /** Closed loop: the highest rate sustained (median of the rounds), and per CPU-second of the server. */
  rps: number;
  rps_per_cpu: number;
  bytes_ceiling_rps: number | null;
  work_ceiling_rps: number | null;
  ratio_bytes: number | null;
  ratio_work: number | null;
  ratio_bytes_cpu: number | null;
  ratio_work_cpu: number | null;
  open_loop: OpenLoopRow[];
  /** RssAnon of the service (all its processes) after the scenario: private memory, not the mapped file. */
  rss_anon_mb: number | null;
  /** SQLite: kilobytes the service wrote to storage per request (on PostgreSQL the server writes). */
  disk_kb_per_req: number | null;
  /**
   * Kilobytes the service's JavaScript heap allocated per request in the closed loop (median of the
   * rounds; bench/heap-probe.mjs), and the work ceiling's; null when not measured (--workers > 1).
   * Absent from results written before it was measured.
   */
  heap_kb_per_req?: number | null;
  work_ceiling_heap_kb_per_req?: number | null;
  /**
   * Pages the service, and the work ceiling, mapped for the first time per request in the closed loop
   * (minor page faults, median of the rounds): what warm-up left of the cold start (bench/measure.ts,
   * keepWarming). Absent from results written before it was measured.
   */
  faults_per_req?: number;
  work_ceiling_faults_per_req?: number | null;
  /**
   * The share of the service's answer cache lookups answered from memory in the closed loop (median
   * of the rounds; read from its /metrics); null when not measured (--workers > 1). Absent from
   * results written before it was measured.
   */
  cache_hit_share?: number | null;
  /** Non-2xx answers and socket errors over the whole scenario, both loops. */
  non_2xx: number;
}

export interface BenchResult {
  users: number;
  date: string;
  machine: {
    cpus: number;
    model: string;
    memory_gb: number;
    node: string;
    load_average: number[];
    proactive_reclaim?: HostReclaim;
    /** What the host charged for a system call and a page fault as the run began (bench/host-costs.ts); absent in older results. */
    host_costs?: HostCosts;
    /** PostgreSQL runs: the server's autovacuum setting (bench/pg-autovacuum.ts). */
    postgres_autovacuum?: string;
  };
  settings: Record<string, unknown>;
  runs: Run[];
}

export const ratio = (a: number, b: number | null) => (b ? Math.round((a / b) * 1000) / 1000 : null);

const pc = (x: number | null) => (x === null ? '–' : `${Math.round(x * 100)} %`);
const num = (x: number | null | undefined, digits = 0) =>
  x === null || x === undefined || Number.isNaN(x) ? '–' : x.toLocaleString('en-GB', { maximumFractionDigits: digits, minimumFractionDigits: digits });
const pair = (r: OpenLoopResult | null) => (r === null ? '–' : `${num(r.p99_ms, 2)} / ${num(r.p999_ms, 2)}`);

export function throughputRows(runs: Run[]): { head: string[]; rows: string[][] } {
  return {
    head: [
      'backend',
      'scenario',
      'req/s',
      'req/CPU-s',
      'bytes ceiling',
      'ratio',
      'work ceiling',
      'ratio',
      'ratio per CPU-s (work)',
      'RssAnon MB',
      'disk KB/req',
      'heap KB/req',
      'work ceiling heap KB/req',
      'faults/req',
      'work ceiling faults/req',
      'answer cache hits',
    ],
    rows: runs.map((r) => [
      r.backend,
      r.scenario,
      num(r.rps),
      num(r.rps_per_cpu),
      num(r.bytes_ceiling_rps),
      pc(r.ratio_bytes),
      num(r.work_ceiling_rps),
      pc(r.ratio_work),
      pc(r.ratio_work_cpu),
      num(r.rss_anon_mb, 1),
      num(r.disk_kb_per_req, 2),
      num(r.heap_kb_per_req, 1),
      num(r.work_ceiling_heap_kb_per_req, 1),
      num(r.faults_per_req, 2),
      num(r.work_ceiling_faults_per_req, 2),
      pc(r.cache_hit_share ?? null),
    ]),
  };
}

/** Whether the open-loop row at the target's share meets it; '' at other shares. */
export function verdict(row: OpenLoopRow): string {
  if (Math.abs(row.share - LATENCY_TARGET.share) > 1e-9) return '';
  const s = row.service;
  return s.p99_ms <= LATENCY_TARGET.p99_ms && s.p999_ms <= LATENCY_TARGET.p999_ms && s.errors + s.unfinished + s.non_2xx === 0 ? 'met' : 'missed';
}

export function latencyRows(runs: Run[]): { head: string[]; rows: string[][] } {
  const rows: string[][] = [];
  for (const r of runs) {
    for (const o of r.open_loop) {
      rows.push([
        r.backend,
        r.scenario,
        pc(o.share),
        num(o.rate_offered),
        num(o.service.throughput),
        num(o.service.p50_ms, 2),
        num(o.service.p99_ms, 2),
        num(o.service.p999_ms, 2),
        num(o.service.max_ms, 1),
        pair(o.work_ceiling),
        pair(o.host),
        o.service.errors + o.service.unfinished + o.service.non_2xx === 0 ? '' : String(o.service.errors + o.service.unfinished + o.service.non_2xx),
        verdict(o),
      ]);
    }
  }
  return {
    head: [
      'backend',
      'scenario',
      'of highest',
      'offered req/s',
      'answered req/s',
      'p50 ms',
      'p99 ms',
      'p99.9 ms',
      'max ms',
      'work ceiling p99 / p99.9',
      'host p99 / p99.9',
      'failed',
      'target',
    ],
    rows,
  };
}

/** Aligned plain text: the first two columns to the left, figures to the right. */
export function plainTable({ head, rows }: { head: string[]; rows: string[][] }): string {
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => (i < 2 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!)))
      .join('  ')
      .trimEnd();
  return [line(head), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n');
}

export function markdownTable({ head, rows }: { head: string[]; rows: string[][] }): string {
  return [`| ${head.join(' | ')} |`, `|${head.map((_, i) => (i < 2 ? '---' : '--:')).join('|')}|`, ...rows.map((r) => `| ${r.join(' | ')} |`)].join('\n');
}

export function report(result: BenchResult, render: (t: { head: string[]; rows: string[][] }) => string): string {
  const closed = result.settings.closed as { connections: number };
  return [
    `${result.users.toLocaleString('en-GB')} users; highest rate: closed loop, ${closed.connections} connections`,
    ...(result.machine.host_costs ? [hostCostsLine(result.machine.host_costs)] : []),
    '',
    render(throughputRows(result.runs)),
    '',
    `Latency at fixed arrival rates (open loop, from each request's due time); target at ${pc(LATENCY_TARGET.share)}: p99 ≤ ${LATENCY_TARGET.p99_ms} ms, p99.9 ≤ ${LATENCY_TARGET.p999_ms} ms`,
    '',
    render(latencyRows(result.runs)),
    '',
  ].join('\n');
}

/** The host's costs in words: they move several times between days on one kind of virtual machine. */
export function hostCostsLine(costs: HostCosts): string {
  return `host: a system call ${costs.syscall_us} µs, a page's first touch ${costs.page_fault_us} µs (bench/host-costs.ts)`;
}

/** bench/data/results/ (ignored by git): a result is committed only where a document cites it. */
export function defaultResultFile(dataDir: string, result: BenchResult, backends: Backend[]): string {
  const stamp = result.date.slice(0, 16).replace(/[:T]/g, '-');
  return path.join(dataDir, 'results', `${stamp}-${result.users}-${backends.join('-')}.json`);
}

export function writeResult(file: string, result: BenchResult): void {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, `${JSON.stringify(result, null, 2)}\n`);
}

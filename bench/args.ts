// `npm run bench -- [options]`: the command line, parsed into one settings object that the rest of
// the benchmark takes as an argument (docs/performance.md lists the options and why each default).
import path from 'node:path';
import { parseArgs } from 'node:util';
import type { Backend } from './dataset.js';

export const SCENARIOS = [
  'return_services_public',
  'return_services_private',
  'service_details_all',
  'service_details_one',
  'update_service',
  'mixed',
] as const;
export type Scenario = (typeof SCENARIOS)[number];

export interface ClosedLoopSettings {
  /** wrk's connections: enough to keep one core busy whatever the latency. */
  connections: number;
  durationS: number;
  rounds: number;
  /** One warm-up round's length; 0: none. */
  warmupS: number;
  /** Warm-up rounds repeat while the server still faults in new pages (bench/measure.ts), for at most this long in all. */
  warmupMaxS: number;
}

export interface OpenLoopSettings {
  /** Shares of the service's own highest rate to offer, e.g. [0.25, 0.5, 0.75, 0.9]; empty: none. */
  shares: number[];
  durationS: number;
  /** Sent at the rate before recording starts: connections opened, caches and JIT warm. */
  warmupS: number;
  /** The generator's connection pool: requests beyond it wait in the client, and that wait counts. */
  connections: number;
  /** Where each job writes every request's latency on a timeline (a TSV file a job); null: nowhere. */
  timelineDir: string | null;
  /** The rate the shares are of, instead of the service's own highest: the same offered rates for two builds. */
  baseRps: number | null;
}

export interface BenchSettings {
  users: number;
  backends: Backend[];
  scenarios: Scenario[];
  closed: ClosedLoopSettings;
  open: OpenLoopSettings;
  workers: number;
  ceilings: boolean;
  host: boolean;
  seed: number;
  quick: boolean;
  cpuProfDir: string | null;
  serviceDir: string | null;
  /** Where the JSON goes; null: a dated file under bench/data/results/. */
  out: string | null;
  serviceEnv: Record<string, string>;
  /** Options for the service's node (e.g. V8's GC flags), before its entry point. */
  serviceNodeArgs: string[];
  /** Where the service's standard output goes (its log, `--trace-gc`); null: nowhere. */
  serviceLog: string | null;
  /** Turn the host's proactive reclaim (DAMON pageout) off for the run (bench/host-reclaim.ts). */
  pauseReclaim: boolean;
  /** The load generators' niceness, 0 to 19 (bench/processes.ts, Placement.loadNice). */
  loadNice: number;
}

const FULL = { duration: 4, rounds: 3, warmup: 2, warmupMax: 60, openDuration: 4, openWarmup: 1, shares: '25,50,75,90' };
// A/B checks of one change: one round, one open-loop rate, minutes instead of a quarter of an hour.
const QUICK = { duration: 3, rounds: 1, warmup: 1, warmupMax: 30, openDuration: 3, openWarmup: 1, shares: '50' };

function loadNiceness(raw: string): number {
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 0 || n > 19) throw new Error(`--load-nice must be a whole number from 0 to 19, not ${raw}`);
  return n;
}

function positive(name: string, raw: string, integer: boolean): number {
  const n = Number(raw);
  if (!Number.isFinite(n) || n <= 0 || (integer && !Number.isInteger(n)))
    throw new Error(`--${name} must be a positive ${integer ? 'whole ' : ''}number, not ${raw}`);
  return n;
}

export function parseBenchArgs(argv: string[]): BenchSettings {
  const { values: a } = parseArgs({
    args: argv,
    options: {
      users: { type: 'string', default: '1000000' },
      postgres: { type: 'boolean', default: false },
      'no-sqlite': { type: 'boolean', default: false },
      quick: { type: 'boolean', default: false },
      duration: { type: 'string' },
      rounds: { type: 'string' },
      warmup: { type: 'string' },
      'warmup-max': { type: 'string' },
      connections: { type: 'string', default: '64' },
      'open-rates': { type: 'string' },
      'open-duration': { type: 'string' },
      'open-warmup': { type: 'string' },
      'open-connections': { type: 'string', default: '64' },
      'no-open': { type: 'boolean', default: false },
      scenarios: { type: 'string', default: SCENARIOS.join(',') },
      workers: { type: 'string', default: '1' },
      'no-ceilings': { type: 'boolean', default: false },
      'no-host': { type: 'boolean', default: false },
      seed: { type: 'string', default: '1' },
      'cpu-prof': { type: 'string' },
      'service-dir': { type: 'string' },
      out: { type: 'string' },
      env: { type: 'string', multiple: true, default: [] },
      'node-arg': { type: 'string', multiple: true, default: [] },
      'pause-reclaim': { type: 'boolean', default: false },
      'load-nice': { type: 'string', default: '0' },
      timeline: { type: 'string' },
      'open-base': { type: 'string' },
      'service-log': { type: 'string' },
    },
    strict: true,
    allowPositionals: false,
  });
  const d = a.quick ? QUICK : FULL;
  const users = positive('users', a.users, true);
  if (users < 100) throw new Error('--users must be a whole number ≥ 100');
  const backends: Backend[] = [...(a['no-sqlite'] ? [] : (['sqlite'] as const)), ...(a.postgres ? (['postgres'] as const) : [])];
  if (backends.length === 0) throw new Error('nothing to run: --no-sqlite without --postgres');
  const scenarios = a.scenarios.split(',').map((s) => s.trim()) as Scenario[];
  for (const s of scenarios) if (!SCENARIOS.includes(s)) throw new Error(`unknown scenario ${s}; one of ${SCENARIOS.join(', ')}`);
  const shares = a['no-open']
    ? []
    : (a['open-rates'] ?? d.shares).split(',').map((p) => {
        const share = positive('open-rates', p.trim(), false) / 100;
        if (share > 1.5) throw new Error(`--open-rates are percentages of the highest rate (up to 150), not ${p}`);
        return share;
      });
  const seed = Number(a.seed);
  if (!Number.isInteger(seed)) throw new Error(`--seed must be a whole number, not ${a.seed}`);
  const serviceEnv = Object.fromEntries(
    a.env.map((kv) => {
      const at = kv.indexOf('=');
      if (at < 1) throw new Error(`--env wants KEY=VALUE, not ${kv}`);
      return [kv.slice(0, at), kv.slice(at + 1)];
    }),
  );
  return {
    users,
    backends,
    scenarios,
    closed: {
      connections: positive('connections', a.connections, true),
      durationS: positive('duration', a.duration ?? String(d.duration), false),
      rounds: positive('rounds', a.rounds ?? String(d.rounds), true),
      warmupS: a.warmup === '0' ? 0 : positive('warmup', a.warmup ?? String(d.warmup), false),
      warmupMaxS: positive('warmup-max', a['warmup-max'] ?? String(d.warmupMax), false),
    },
    open: {
      shares,
      durationS: positive('open-duration', a['open-duration'] ?? String(d.openDuration), false),
      warmupS: a['open-warmup'] === '0' ? 0 : positive('open-warmup', a['open-warmup'] ?? String(d.openWarmup), false),
      connections: positive('open-connections', a['open-connections'], true),
      timelineDir: a.timeline ? path.resolve(a.timeline) : null,
      baseRps: a['open-base'] ? positive('open-base', a['open-base'], false) : null,
    },
    workers: positive('workers', a.workers, true),
    ceilings: !a['no-ceilings'],
    host: !a['no-ceilings'] && !a['no-host'],
    seed,
    quick: a.quick,
    cpuProfDir: a['cpu-prof'] ?? null,
    serviceDir: a['service-dir'] ?? null,
    out: a.out ?? null,
    serviceEnv,
    serviceNodeArgs: a['node-arg'],
    serviceLog: a['service-log'] ? path.resolve(a['service-log']) : null,
    pauseReclaim: a['pause-reclaim'],
    loadNice: loadNiceness(a['load-nice']),
  };
}

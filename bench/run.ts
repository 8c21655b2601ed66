// `npm run bench -- [--users N] [--postgres] [--no-sqlite] [--duration S] [--connections C]
//                   [--rounds N] [--scenarios a,b] [--workers N] [--warmup S] [--no-ceilings]
//                   [--no-host] [--service-dir DIR] [--out FILE] [--cpu-prof DIR] [--env KEY=VALUE…]`
//
// Builds (or reuses) the dataset, starts the real server, the two ceiling servers and, when nginx is
// installed, the host reference (bench/host-reference.ts), drives each
// with wrk (pinned to another core than the server where the machine has one), prints a table and
// writes bench/results/latest.json plus a dated copy. See docs/performance.md.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import type { CeilingSettings, Sample } from './ceiling-server.js';
import { ensureDataset, workingCopy, DATA_DIR, type Backend, type Dataset } from './dataset.js';
import { findNginx, startHostReference } from './host-reference.js';

const ROOT = path.resolve(import.meta.dirname, '..');
const RESULTS_DIR = path.join(import.meta.dirname, 'results');

const SCENARIOS = ['return_services_public', 'return_services_private', 'service_details_all', 'service_details_one', 'update_service'] as const;
type Scenario = (typeof SCENARIOS)[number];
/** Scenarios whose least-work answer differs from replaying bytes; service_details is a cached body. */
const HAS_WORK_CEILING: ReadonlySet<Scenario> = new Set(['return_services_public', 'return_services_private', 'update_service']);

const { values: args } = parseArgs({
  options: {
    users: { type: 'string', default: '1000000' },
    postgres: { type: 'boolean', default: false },
    'no-sqlite': { type: 'boolean', default: false },
    duration: { type: 'string', default: '5' },
    rounds: { type: 'string', default: '3' },
    warmup: { type: 'string', default: '2' },
    connections: { type: 'string', default: '64' },
    scenarios: { type: 'string', default: SCENARIOS.join(',') },
    workers: { type: 'string', default: '1' },
    'no-ceilings': { type: 'boolean', default: false },
    /** Leave out the host reference (nginx) even where it is installed. */
    'no-host': { type: 'boolean', default: false },
    'cpu-prof': { type: 'string' },
    /** Benchmark another checkout of the service (e.g. the code before an optimisation). */
    'service-dir': { type: 'string' },
    /** Where to write the results (default bench/results/latest.json and a dated copy). */
    out: { type: 'string' },
    /** A setting for the service, KEY=VALUE, repeatable (e.g. --env PARTNER_CACHE=0 to compare). */
    env: { type: 'string', multiple: true, default: [] },
  },
});

const serviceEnv = Object.fromEntries(
  args.env.map((kv) => {
    const at = kv.indexOf('=');
    if (at < 1) throw new Error(`--env wants KEY=VALUE, not ${kv}`);
    return [kv.slice(0, at), kv.slice(at + 1)];
  }),
);
const users = Number(args.users);
const duration = Number(args.duration);
const rounds = Number(args.rounds);
const warmup = Number(args.warmup);
const connections = Number(args.connections);
const workers = Number(args.workers);
const scenarios = args.scenarios.split(',').map((s) => s.trim()) as Scenario[];
for (const s of scenarios) if (!SCENARIOS.includes(s)) throw new Error(`unknown scenario ${s}; one of ${SCENARIOS.join(', ')}`);
if (!Number.isInteger(users) || users < 100) throw new Error('--users must be a whole number ≥ 100');

// With two or more cores the server gets core 0 and wrk the last one, so they never share a core.
const cores = os.availableParallelism();
const SERVER_CPUS = cores >= 2 ? (workers > 1 ? `0-${Math.min(workers, cores - 1) - 1}` : '0') : null;
const LOAD_CPUS = cores >= 2 ? String(cores - 1) : null;
// The reference servers are single processes: the service's first core, whatever --workers says.
const REFERENCE_CPUS = SERVER_CPUS === null ? null : '0';
const pinned = (cpus: string | null, cmd: string, argv: string[]): [string, string[]] => (cpus === null ? [cmd, argv] : ['taskset', ['-c', cpus, cmd, ...argv]]);

function log(msg: string): void {
  process.stderr.write(`[bench] ${msg}\n`);
}

// ---- processes ---------------------------------------------------------------------------------

async function waitForHttp(url: string, child: ChildProcess, timeoutMs = 120_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    if (child.exitCode !== null) throw new Error(`${url}: the process exited with ${child.exitCode}`);
    const ok = await new Promise<boolean>((resolve) => {
      const req = http.get(url, (res) => {
        res.resume();
        resolve((res.statusCode ?? 500) < 500);
      });
      req.on('error', () => resolve(false));
    });
    if (ok) return;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`${url} did not come up`);
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.pid === undefined) return;
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
  await exited;
  clearTimeout(timer);
}

/** A process and its children (cluster workers); empty once it has exited. */
function processTree(pid: number): number[] {
  const pids = [pid];
  try {
    for (const t of fs.readdirSync(`/proc/${pid}/task`)) {
      const kids = fs.readFileSync(`/proc/${pid}/task/${t}/children`, 'utf8').trim();
      if (kids) pids.push(...kids.split(/\s+/).map(Number));
    }
  } catch {
    return [];
  }
  return pids;
}

/** Sums a number read from each process of the tree; a process that exited meanwhile counts 0. */
function sumOverTree(pid: number, read: (p: number) => number): number | null {
  const pids = processTree(pid);
  if (pids.length === 0) return null;
  let total = 0;
  for (const p of pids) {
    try {
      total += read(p);
    } catch {
      // exited meanwhile
    }
  }
  return total;
}

/** Private memory of a process and its children (cluster workers), from /proc/PID/status. */
function rssAnonMb(pid: number): number | null {
  const kb = sumOverTree(pid, (p) => Number(/RssAnon:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${p}/status`, 'utf8'))?.[1] ?? 0));
  return kb === null ? null : Math.round(kb / 102.4) / 10;
}

/** CPU seconds (user + system) used so far by a process and its children (cluster workers). */
function cpuSeconds(pid: number): number {
  const ticks = sumOverTree(pid, (p) => {
    // Fields after the command name (which may hold spaces): utime and stime are the 12th and 13th.
    const stat = fs.readFileSync(`/proc/${p}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return Number(fields[11]) + Number(fields[12]);
  });
  return (ticks ?? 0) / CLOCK_TICKS;
}

/** Bytes the process tree has caused to be written to storage (/proc/PID/io): the WAL, on SQLite. */
function writeBytes(pid: number): number {
  return sumOverTree(pid, (p) => Number(/^write_bytes:\s+(\d+)/m.exec(fs.readFileSync(`/proc/${p}/io`, 'utf8'))?.[1] ?? 0)) ?? 0;
}
const CLOCK_TICKS = Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout.trim()) || 100;

/** The service, compiled once into bench/data/dist so it runs as in production (no tsx loader). */
function compiledEntry(): string {
  const dir = path.resolve(args['service-dir'] ?? ROOT);
  const out = dir === ROOT ? path.join(DATA_DIR, 'dist') : path.join(dir, 'bench-dist');
  log(`compiling the service in ${dir} (tsc -p tsconfig.build.json)…`);
  const r = spawnSync(path.join(ROOT, 'node_modules', '.bin', 'tsc'), ['-p', 'tsconfig.build.json', '--outDir', out, '--sourceMap', 'false'], { cwd: dir, encoding: 'utf8' });
  const entry = path.join(out, 'src', 'cli', 'main.js');
  // tsc emits even when another file in the tree has a type error; only a missing output is fatal.
  if (r.status !== 0) log(`tsc reported errors (output used anyway):\n${r.stdout.split('\n').slice(0, 10).join('\n')}`);
  if (!fs.existsSync(entry)) throw new Error('compilation produced no dist/src/cli/main.js');
  return entry;
}

interface Service {
  child: ChildProcess;
  url: string;
}

async function startService(entry: string, ds: Dataset, port: number): Promise<Service> {
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? '',
    HOME: process.env.HOME ?? '',
    NODE_ENV: 'production',
    LOG_LEVEL: 'warn',
    HOST: '127.0.0.1',
    PORT: String(port),
    DATABASE_URL: ds.databaseUrl,
    ...(ds.schema ? { DATABASE_SCHEMA: ds.schema } : {}),
    // The benchmark is one client hammering one api_key from one address: the default limits
    // (6,000 a minute per key, proven or not, 600 per address) would answer 429 within a second.
    RATE_LIMIT_PER_KEY: '100000000',
    RATE_LIMIT_PER_KEY_UNPROVEN: '100000000',
    RATE_LIMIT_PER_ADDRESS: '100000000',
    // The re-verification job would fetch 8 M profile pages from the internet.
    BACKGROUND_JOBS: '0',
    ...serviceEnv,
  };
  const nodeArgs = [...(args['cpu-prof'] ? ['--cpu-prof', `--cpu-prof-dir=${args['cpu-prof']}`] : []), entry, 'serve', '--workers', String(workers)];
  const [cmd, argv] = pinned(SERVER_CPUS, process.execPath, nodeArgs);
  const child = spawn(cmd, argv, { cwd: ROOT, env, stdio: ['ignore', 'ignore', 'inherit'] });
  const url = `http://127.0.0.1:${port}`;
  await waitForHttp(`${url}/readyz`, child);
  return { child, url };
}

async function startCeiling(settings: CeilingSettings): Promise<{ child: ChildProcess; url: string }> {
  const [cmd, argv] = pinned(REFERENCE_CPUS, process.execPath, ['--import', 'tsx', path.join(import.meta.dirname, 'ceiling-server.ts')]);
  // Settings go through a file: the samples are larger than an environment variable may be.
  const file = path.join(DATA_DIR, `ceiling-${settings.mode}.json`);
  fs.writeFileSync(file, JSON.stringify(settings));
  const child = spawn(cmd, argv, { cwd: ROOT, env: { ...process.env, BENCH_CEILING_FILE: file }, stdio: ['ignore', 'ignore', 'inherit'] });
  const url = `http://127.0.0.1:${settings.port}`;
  await waitForHttp(`${url}/`, child);
  return { child, url };
}

// ---- requests ----------------------------------------------------------------------------------

function request(url: string, method: 'GET' | 'POST', body?: string): Promise<Sample> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method, headers: body === undefined ? {} : { 'Content-Type': 'application/x-www-form-urlencoded' } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const headers: Record<string, string> = {};
        for (const [k, v] of Object.entries(res.headers)) {
          if (['date', 'connection', 'keep-alive', 'content-length', 'transfer-encoding'].includes(k) || v === undefined) continue;
          headers[k] = Array.isArray(v) ? v.join(', ') : v;
        }
        resolve({ status: res.statusCode ?? 0, headers, body: Buffer.concat(chunks).toString('utf8') });
      });
    });
    req.on('error', reject);
    req.end(body);
  });
}

const md5Of = (ds: Dataset, i: number) => fs.readFileSync(ds.idsFile, 'latin1').slice((i - 1) * 33, (i - 1) * 33 + 32);

/** One answer per scenario from the real service: what the bytes ceiling replays. */
async function samples(base: string, ds: Dataset): Promise<Record<Scenario, Sample>> {
  const token = `api_token=${ds.apiToken}`;
  // User 1 has its 8 central entries; user 4 also has two of the partner's pushes (the average view).
  const u1 = md5Of(ds, 1);
  const u4 = md5Of(ds, 4);
  const svc = ds.services[0]!;
  const out = {
    return_services_public: await request(`${base}/api/return_services/${ds.apiKey}/${u1}/public`, 'GET'),
    return_services_private: await request(`${base}/api/return_services/${ds.apiKey}/${u4}`, 'POST', token),
    service_details_all: await request(`${base}/api/service_details/${ds.apiKey}`, 'GET'),
    service_details_one: await request(`${base}/api/service_details/${ds.apiKey}/${svc}`, 'GET'),
    update_service: await request(`${base}/api/update_service/${ds.apiKey}/${u1}/${svc}/b42`, 'POST', token),
  };
  for (const [k, s] of Object.entries(out)) if (s.status !== 200) throw new Error(`sample ${k}: HTTP ${s.status}: ${s.body.slice(0, 300)}`);
  return out;
}

/** The work ceiling must give the same answers as the service, or the ratio means nothing. */
async function checkWorkCeiling(service: string, work: string, ds: Dataset): Promise<void> {
  for (const i of [1, 4, 10, 20, 40, Math.floor(ds.users / 2), ds.users]) {
    const u = md5Of(ds, i);
    for (const [p, m, b] of [[`/public`, 'GET', undefined], ['', 'POST', `api_token=${ds.apiToken}`]] as const) {
      const a = await request(`${service}/api/return_services/${ds.apiKey}/${u}${p}`, m, b);
      const c = await request(`${work}/api/return_services/${ds.apiKey}/${u}${p}`, m, b);
      if (a.body !== c.body) log(`WARNING: work ceiling differs from the service for user ${i} ${m}:\n  service: ${a.body.slice(0, 400)}\n  ceiling: ${c.body.slice(0, 400)}`);
    }
  }
}

interface WrkResult {
  requests: number;
  duration_us: number;
  bytes: number;
  non_2xx: number;
  socket_errors: number;
  p50_us: number;
  p90_us: number;
  p99_us: number;
  max_us: number;
  mean_us: number;
}

function wrk(base: string, scenario: Scenario, ds: Dataset, seconds: number): Promise<WrkResult> {
  const [cmd, argv] = pinned(LOAD_CPUS, 'wrk', [
    '-t1',
    `-c${connections}`,
    `-d${seconds}s`,
    '--timeout',
    '10s',
    '-s',
    path.join(import.meta.dirname, 'load.lua'),
    base,
    '--',
    scenario,
    ds.apiKey,
    ds.apiToken,
    ds.idsFile,
    ds.servicesFile,
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

/** Little's law: the mean latency, in ms, of `connections` kept busy at `rps` answers a second. */
const queueFloorMs = (rps: number) => (connections / rps) * 1000;

interface Measured {
  rps: number;
  /** Requests per CPU-second of the server process: what the server costs, whatever else runs. */
  rps_per_cpu: number;
  p50_ms: number;
  p99_ms: number;
  /**
   * wrk's mean latency over the floor (connections / rps). In a closed loop every connection has
   * one request out at a time, so the latencies of its requests add up to at most the run's length
   * and the mean cannot exceed the floor (Little's law). Above about 1.05 the recorded latencies
   * hold time no request spent waiting, and the p99 overstates the tail (docs/performance.md).
   */
  mean_over_floor: number;
  non_2xx: number;
  /** Kilobytes written to storage by the server per request (SQLite: WAL and checkpoints). */
  disk_kb_per_req: number;
}

async function measureOnce(base: string, pid: number, scenario: Scenario, ds: Dataset, label: string): Promise<Measured> {
  const cpu0 = cpuSeconds(pid);
  const written0 = writeBytes(pid);
  const r = await wrk(base, scenario, ds, duration);
  const cpu = cpuSeconds(pid) - cpu0;
  const written = writeBytes(pid) - written0;
  const rps = r.requests / (r.duration_us / 1e6);
  const m = {
    rps: Math.round(rps),
    rps_per_cpu: cpu > 0 ? Math.round(r.requests / cpu) : 0,
    p50_ms: Math.round(r.p50_us / 10) / 100,
    p99_ms: Math.round(r.p99_us / 10) / 100,
    mean_over_floor: rps > 0 ? Math.round((r.mean_us / 1000 / queueFloorMs(rps)) * 1000) / 1000 : 0,
    non_2xx: r.non_2xx + r.socket_errors,
    disk_kb_per_req: r.requests > 0 ? Math.round((written / 1024 / r.requests) * 100) / 100 : 0,
  };
  log(`${label.padEnd(14)} ${scenario.padEnd(24)} ${String(m.rps).padStart(7)} req/s ${String(m.rps_per_cpu).padStart(7)} req/CPU-s  p50 ${m.p50_ms} ms  p99 ${m.p99_ms} ms  mean/floor ${m.mean_over_floor.toFixed(2)}${m.non_2xx ? `  ${m.non_2xx} ERRORS` : ''}`);
  return m;
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};

/**
 * The machine is shared and noisy, so the servers of one scenario are measured in interleaved
 * rounds (bytes ceiling, work ceiling, service, again…) and each figure is the median of its rounds:
 * a burst of someone else's work then hits all three alike instead of one.
 */
async function measureInterleaved(targets: { label: string; base: string; pid: number }[], scenario: Scenario, ds: Dataset): Promise<Measured[]> {
  if (warmup > 0) for (const t of targets) await wrk(t.base, scenario, ds, warmup);
  const all: Measured[][] = targets.map(() => []);
  for (let r = 0; r < rounds; r++) {
    for (const [i, t] of targets.entries()) all[i]!.push(await measureOnce(t.base, t.pid, scenario, ds, t.label));
  }
  return all.map((ms) => ({
    rps: Math.round(median(ms.map((m) => m.rps))),
    rps_per_cpu: Math.round(median(ms.map((m) => m.rps_per_cpu))),
    p50_ms: median(ms.map((m) => m.p50_ms)),
    p99_ms: median(ms.map((m) => m.p99_ms)),
    mean_over_floor: median(ms.map((m) => m.mean_over_floor)),
    non_2xx: ms.reduce((n, m) => n + m.non_2xx, 0),
    disk_kb_per_req: median(ms.map((m) => m.disk_kb_per_req)),
  }));
}

// ---- one backend -------------------------------------------------------------------------------

export interface Run {
  name: Scenario;
  backend: Backend;
  rps: number;
  p50_ms: number;
  p99_ms: number;
  bytes_ceiling_rps: number | null;
  work_ceiling_rps: number | null;
  ratio_bytes: number | null;
  ratio_work: number | null;
  /**
   * The mean latency a closed loop of `connections` has at this throughput (Little's law:
   * connections / rps). No p99 can be much below it: a server must answer more than
   * connections / 10 ms requests a second before a p99 under 10 ms is possible at all.
   */
  queue_floor_ms: number;
  /** Median over the rounds of wrk's mean latency / the floor; see Measured.mean_over_floor. */
  mean_over_floor: number;
  bytes_ceiling_p99_ms: number | null;
  work_ceiling_p99_ms: number | null;
  /** The host reference (nginx sending the same body) in the same rounds: the machine's own tail. */
  host_rps: number | null;
  host_p50_ms: number | null;
  host_p99_ms: number | null;
  /** The same three, per CPU-second of each server process (steadier on a shared machine). */
  rps_per_cpu: number;
  ratio_bytes_cpu: number | null;
  ratio_work_cpu: number | null;
  rss_anon_mb: number | null;
  /** SQLite: kilobytes the service wrote to storage per request (on PostgreSQL the server writes). */
  disk_kb_per_req: number | null;
  non_2xx: number;
  connections: number;
  workers: number;
}

const ratio = (a: number, b: number | null) => (b ? Math.round((a / b) * 1000) / 1000 : null);

async function benchBackend(backend: Backend, entry: string): Promise<Run[]> {
  // The run writes (update_service) to a copy, so every run starts from the same data.
  const ds = await workingCopy(await ensureDataset(backend, users), 'run');
  const partnerId = await partnerIdOf(ds);
  const service = await startService(entry, ds, 18080);
  const children: ChildProcess[] = [service.child];
  try {
    const sample = await samples(service.url, ds);
    const bytesC = args['no-ceilings'] ? null : await startCeiling({ mode: 'bytes', port: 18081, samples: sample });
    if (bytesC) children.push(bytesC.child);
    const workC = args['no-ceilings'] ? null : await startCeiling({ mode: 'work', port: 18082, databaseUrl: ds.databaseUrl, schema: ds.schema, partnerId });
    if (workC) {
      children.push(workC.child);
      await checkWorkCeiling(service.url, workC.url, ds);
    }
    const host = await startHost(sample);
    if (host) children.push(host.child);
    const runs: Run[] = [];
    for (const scenario of scenarios) {
      const targets = [
        { label: `idsvc/${backend}`, base: service.url, pid: service.child.pid ?? 0 },
        ...(bytesC ? [{ label: 'bytes ceiling', base: bytesC.url, pid: bytesC.child.pid ?? 0 }] : []),
        ...(workC && HAS_WORK_CEILING.has(scenario) ? [{ label: 'work ceiling', base: workC.url, pid: workC.child.pid ?? 0 }] : []),
        ...(host ? [{ label: 'host (nginx)', base: host.url, pid: host.child.pid ?? 0 }] : []),
      ];
      const measured = await measureInterleaved(targets, scenario, ds);
      const of = (label: string) => {
        const i = targets.findIndex((t) => t.label === label);
        return i < 0 ? null : measured[i]!;
      };
      const m = measured[0]!;
      const bytes = of('bytes ceiling');
      const work = of('work ceiling');
      const hostM = of('host (nginx)');
      const rss = rssAnonMb(service.child.pid ?? 0);
      runs.push({
        name: scenario,
        backend,
        rps: m.rps,
        p50_ms: m.p50_ms,
        p99_ms: m.p99_ms,
        bytes_ceiling_rps: bytes?.rps ?? null,
        work_ceiling_rps: work?.rps ?? null,
        ratio_bytes: ratio(m.rps, bytes?.rps ?? null),
        ratio_work: ratio(m.rps, work?.rps ?? null),
        queue_floor_ms: m.rps > 0 ? Math.round(queueFloorMs(m.rps) * 100) / 100 : 0,
        mean_over_floor: m.mean_over_floor,
        bytes_ceiling_p99_ms: bytes?.p99_ms ?? null,
        work_ceiling_p99_ms: work?.p99_ms ?? null,
        host_rps: hostM?.rps ?? null,
        host_p50_ms: hostM?.p50_ms ?? null,
        host_p99_ms: hostM?.p99_ms ?? null,
        rps_per_cpu: m.rps_per_cpu,
        ratio_bytes_cpu: ratio(m.rps_per_cpu, bytes?.rps_per_cpu ?? null),
        ratio_work_cpu: ratio(m.rps_per_cpu, work?.rps_per_cpu ?? null),
        rss_anon_mb: rss,
        disk_kb_per_req: backend === 'sqlite' ? m.disk_kb_per_req : null,
        non_2xx: m.non_2xx,
        connections,
        workers,
      });
    }
    return runs;
  } finally {
    for (const c of children.reverse()) await stop(c);
  }
}

/** The host reference (bench/host-reference.ts), when nginx is installed and not left out. */
async function startHost(sample: Record<Scenario, Sample>): Promise<{ child: ChildProcess; url: string } | null> {
  if (args['no-ceilings'] || args['no-host']) return null;
  const nginx = findNginx();
  if (nginx === null) {
    log(`nginx is not installed: no host reference, so no host p99 to tell the host's tail from the service's (apt-get install -y nginx-light)`);
    return null;
  }
  const port = 18083;
  const child = startHostReference(nginx, path.join(DATA_DIR, 'nginx'), port, sample, (cmd, argv) => pinned(REFERENCE_CPUS, cmd, argv));
  const url = `http://127.0.0.1:${port}`;
  await waitForHttp(`${url}/`, child);
  return { child, url };
}

async function partnerIdOf(ds: Dataset): Promise<number> {
  if (ds.backend === 'sqlite') {
    const { default: SQLite } = await import('better-sqlite3');
    const db = new SQLite(ds.databaseUrl.slice('sqlite:'.length), { readonly: true });
    const row = db.prepare('SELECT id FROM partners WHERE api_key = ?').get(ds.apiKey) as { id: number };
    db.close();
    return row.id;
  }
  const { default: pg } = await import('pg');
  const c = new pg.Client({ connectionString: ds.databaseUrl, ...(ds.schema ? { options: `-c search_path=${ds.schema}` } : {}) });
  await c.connect();
  const r = await c.query('SELECT id FROM partners WHERE api_key = $1', [ds.apiKey]);
  await c.end();
  return Number(r.rows[0].id);
}

// ---- output ------------------------------------------------------------------------------------

function table(runs: Run[]): string {
  const head = ['backend', 'scenario', 'req/s', 'p50 ms', 'p99 ms', 'floor ms', 'mean/floor', 'bytes ceil', 'ratio', 'work ceil', 'ratio', 'req/CPU-s', 'cpu ratio b', 'cpu ratio w', 'p99 b/w/host', 'RssAnon MB', 'disk KB/req'];
  const pc = (x: number | null) => (x === null ? '–' : `${(x * 100).toFixed(0)} %`);
  const fmt = (n: number | null, d = 0) => (n === null ? '–' : n.toFixed(d));
  const rows = runs.map((r) => [
    r.backend,
    r.name,
    fmt(r.rps),
    fmt(r.p50_ms, 2),
    fmt(r.p99_ms, 2),
    fmt(r.queue_floor_ms, 2),
    fmt(r.mean_over_floor, 2),
    fmt(r.bytes_ceiling_rps),
    r.ratio_bytes === null ? '–' : `${(r.ratio_bytes * 100).toFixed(0)} %`,
    fmt(r.work_ceiling_rps),
    r.ratio_work === null ? '–' : `${(r.ratio_work * 100).toFixed(0)} %`,
    fmt(r.rps_per_cpu),
    pc(r.ratio_bytes_cpu),
    pc(r.ratio_work_cpu),
    [r.bytes_ceiling_p99_ms, r.work_ceiling_p99_ms, r.host_p99_ms].map((x) => fmt(x, 1)).join('/'),
    fmt(r.rss_anon_mb, 1),
    fmt(r.disk_kb_per_req, 2),
  ]);
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) => cells.map((c, i) => (i < 2 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ');
  return [line(head), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n');
}

async function main(): Promise<void> {
  const started = Date.now();
  const backends: Backend[] = [...(args['no-sqlite'] ? [] : (['sqlite'] as const)), ...(args.postgres ? (['postgres'] as const) : [])];
  if (backends.length === 0) throw new Error('nothing to run: --no-sqlite without --postgres');
  // Checked first, so a missing load generator does not surface after minutes of dataset building.
  if (spawnSync('wrk', ['--version']).error) throw new Error('wrk is not installed: apt-get install -y wrk (Debian/Ubuntu) or brew install wrk');
  log(`${users} users, ${connections} connections, ${rounds} rounds of ${duration} s per server, ${cores} cores (server on CPU ${SERVER_CPUS ?? 'any'}, wrk on CPU ${LOAD_CPUS ?? 'any'})`);
  const entry = compiledEntry();
  const runs: Run[] = [];
  for (const b of backends) runs.push(...(await benchBackend(b, entry)));
  const result = {
    users,
    date: new Date().toISOString(),
    machine: { cpus: cores, model: os.cpus()[0]?.model ?? '?', memory_gb: Math.round(os.totalmem() / 2 ** 30), node: process.version },
    settings: { connections, duration_s: duration, rounds, warmup_s: warmup, workers, server_cpus: SERVER_CPUS, load_cpus: LOAD_CPUS, env: serviceEnv },
    runs,
  };
  const json = `${JSON.stringify(result, null, 2)}\n`;
  if (args.out) {
    fs.writeFileSync(args.out, json);
  } else {
    fs.mkdirSync(RESULTS_DIR, { recursive: true });
    fs.writeFileSync(path.join(RESULTS_DIR, 'latest.json'), json);
    const stamp = result.date.slice(0, 16).replace(/[:T]/g, '-');
    fs.writeFileSync(path.join(RESULTS_DIR, `${stamp}-${users}-${backends.join('-')}.json`), json);
  }
  process.stdout.write(`\n${users} users, ${connections} connections\n${table(runs)}\n\n`);
  log(`done in ${((Date.now() - started) / 1000).toFixed(0)} s; results in ${args.out ?? 'bench/results/latest.json'}`);
  const failed = runs.filter((r) => r.non_2xx > 0);
  if (failed.length) {
    log(`non-2xx answers in: ${failed.map((r) => `${r.backend}/${r.name}`).join(', ')}`);
    process.exitCode = 1;
  }
}

await main();

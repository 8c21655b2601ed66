// The processes of a benchmark run: the service, the ceiling servers and the host reference,
// where each one runs (CPU pinning), when it is up, and what it costs (/proc).
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import type { BenchSettings } from './args.js';
import type { CeilingSettings, Sample } from './ceiling-server.js';
import { DATA_DIR, type Dataset } from './dataset.js';
import { findNginx, startHostReference } from './host-reference.js';

export const ROOT = path.resolve(import.meta.dirname, '..');
/**
 * The first of the four ports a run listens on (the service, the bytes and work ceilings, nginx);
 * BENCH_PORT moves them, so that two runs on one machine (two checkouts) do not answer each other's requests.
 */
export const BENCH_PORT = benchPort(process.env.BENCH_PORT);

function benchPort(raw: string | undefined): number {
  if (raw === undefined || raw === '') return 18080;
  const port = Number(raw);
  if (!Number.isInteger(port) || port < 1024 || port > 65_000) throw new Error(`BENCH_PORT must be a port from 1024 to 65000, not ${raw}`);
  return port;
}

export function log(msg: string): void {
  process.stderr.write(`[bench] ${msg}\n`);
}

/** Which cores the servers and the load generators run on. */
export interface Placement {
  cores: number;
  /** The service (all its workers); null: wherever the OS likes (one core only). */
  serverCpus: string | null;
  /** wrk and the open-loop generator: never a server's core. */
  loadCpus: string | null;
  /**
   * The generators' niceness (`--load-nice`, default 0). The load core is not theirs alone: the
   * database's backends run wherever the kernel puts them. Both generators sleep between sends
   * (wrk in epoll, the open-loop one on a timer), so they leave the backends the rest of the core;
   * at 19 they yield even what they need, and a request sent late because of that still counts
   * from its due time (its send lag is reported).
   */
  loadNice: number;
  /** The reference servers are single processes: the service's first core, whatever --workers says. */
  referenceCpus: string | null;
}

export function placement(workers: number, loadNice = 0, cores = os.availableParallelism()): Placement {
  if (cores < 2) return { cores, serverCpus: null, loadCpus: null, referenceCpus: null, loadNice };
  return { cores, serverCpus: workers > 1 ? `0-${Math.min(workers, cores - 1) - 1}` : '0', loadCpus: String(cores - 1), referenceCpus: '0', loadNice };
}

export function pinned(cpus: string | null, cmd: string, argv: string[]): [string, string[]] {
  return cpus === null ? [cmd, argv] : ['taskset', ['-c', cpus, cmd, ...argv]];
}

/** A load generator's command: on the load core, at the placement's niceness. */
export function asLoad(where: Placement, cmd: string, argv: string[]): [string, string[]] {
  const [c, a] = pinned(where.loadCpus, cmd, argv);
  return where.loadNice === 0 ? [c, a] : ['nice', ['-n', String(where.loadNice), c, ...a]];
}

export interface Server {
  label: string;
  child: ChildProcess;
  url: string;
  /** Where its heap probe writes (bench/heap-probe.mjs); null when its heap is not measured. */
  heapFile: string | null;
  /** The service's METRICS_TOKEN, for its answer cache's counts on /metrics; null for the reference servers. */
  metricsToken?: string | null;
}

/** Loaded into each measured server with `--import`: counts what its heap allocates. */
const HEAP_PROBE = path.join(import.meta.dirname, 'heap-probe.mjs');

/** A fresh file for a server's heap probe. */
function heapFileFor(name: string): string {
  const file = path.join(DATA_DIR, `heap-${name}.txt`);
  fs.rmSync(file, { force: true });
  return file;
}

/**
 * Bytes the server's JavaScript heap has allocated since it started (bench/heap-probe.mjs), or
 * null when it is not measured: asks the probe with SIGUSR2 and waits for its line.
 */
export async function heapAllocated(server: Server): Promise<number | null> {
  const { heapFile, child } = server;
  if (heapFile === null || child.pid === undefined || child.exitCode !== null) return null;
  const lines = () => (fs.existsSync(heapFile) ? fs.readFileSync(heapFile, 'utf8').split('\n').filter(Boolean) : []);
  const before = lines().length;
  child.kill('SIGUSR2');
  for (let waited = 0; waited < 5000; waited += 20) {
    const now = lines();
    if (now.length > before) return Number(/^allocated=(\d+)$/.exec(now[now.length - 1]!)?.[1] ?? Number.NaN);
    await new Promise((r) => setTimeout(r, 20));
  }
  return null;
}

/** The service's answer cache lookups so far (`idsvc_answer_cache_lookups` on /metrics); null for a server without them. */
export async function answerCacheLookups(server: Server): Promise<{ hits: number; misses: number } | null> {
  if (!server.metricsToken) return null;
  const res = await fetch(`${server.url}/metrics`, { headers: { authorization: `Bearer ${server.metricsToken}` } });
  if (!res.ok) return null;
  return parseAnswerCacheLookups(await res.text());
}

/** The hit and miss counts from a /metrics text; null when it has none. */
export function parseAnswerCacheLookups(text: string): { hits: number; misses: number } | null {
  const count = (outcome: string) => {
    const m = new RegExp(`^idsvc_answer_cache_lookups\\{outcome="${outcome}"\\} (\\d+)$`, 'm').exec(text);
    return m ? Number(m[1]) : null;
  };
  const hits = count('hit');
  const misses = count('miss');
  return hits === null || misses === null ? null : { hits, misses };
}

export async function waitForHttp(url: string, child: ChildProcess, timeoutMs = 120_000): Promise<void> {
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

export async function stop(child: ChildProcess): Promise<void> {
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

/** Private memory of a process and its children, from /proc/PID/status: not the SQLite file it maps. */
export function rssAnonMb(pid: number): number | null {
  const kb = sumOverTree(pid, (p) => Number(/RssAnon:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${p}/status`, 'utf8'))?.[1] ?? 0));
  return kb === null ? null : Math.round(kb / 102.4) / 10;
}

const CLOCK_TICKS = Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout.trim()) || 100;

/** CPU ticks (user + system) a process has used, from /proc/PID/stat; and its command name. */
function statTicks(pid: number | string): { command: string; ticks: number; minorFaults: number } {
  // Fields after the command name (which may hold spaces): minflt is the 8th, utime and stime the 12th and 13th.
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return {
    command: stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')')),
    ticks: Number(fields[11]) + Number(fields[12]),
    minorFaults: Number(fields[7]),
  };
}

/**
 * Page faults served without the disk so far by a process and its children: each page of the
 * database file a server reads through its map for the first time, and each page its heap grows by.
 */
export function minorFaults(pid: number): number {
  return sumOverTree(pid, (p) => statTicks(p).minorFaults) ?? 0;
}

/** CPU seconds (user + system) used so far by a process and its children. */
export function cpuSeconds(pid: number): number {
  return (sumOverTree(pid, (p) => statTicks(p).ticks) ?? 0) / CLOCK_TICKS;
}

/** CPU ticks of each PostgreSQL process of the machine (backends, writers, autovacuum), by pid. */
export type PostgresCpu = Map<number, number>;

export function postgresCpu(): PostgresCpu {
  const ticks: PostgresCpu = new Map();
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const { command, ticks: used } = statTicks(entry);
      if (command === 'postgres') ticks.set(Number(entry), used);
    } catch {
      // exited meanwhile
    }
  }
  return ticks;
}

/**
 * CPU seconds PostgreSQL spent since `before`: what the database did for a run, which the service's
 * own CPU leaves out. A process that exited meanwhile took its last ticks with it (the benchmark's
 * pooled backends live as long as their server).
 */
export function postgresCpuSecondsSince(before: PostgresCpu): number {
  let ticks = 0;
  for (const [pid, now] of postgresCpu()) ticks += now - (before.get(pid) ?? 0);
  return ticks / CLOCK_TICKS;
}

/** Bytes the process tree has caused to be written to storage (/proc/PID/io): the WAL, on SQLite. */
export function writeBytes(pid: number): number {
  return sumOverTree(pid, (p) => Number(/^write_bytes:\s+(\d+)/m.exec(fs.readFileSync(`/proc/${p}/io`, 'utf8'))?.[1] ?? 0)) ?? 0;
}

/** The service, compiled once into bench/data/dist so it runs as in production (no tsx loader). */
export function compiledEntry(serviceDir: string | null): string {
  const dir = path.resolve(serviceDir ?? ROOT);
  const out = dir === ROOT ? path.join(DATA_DIR, 'dist') : path.join(dir, 'bench-dist');
  log(`compiling the service in ${dir} (tsc -p tsconfig.build.json)…`);
  // Its build-info file beside its output: the one in dist/ also follows `npm run build`, and a tree
  // emptied or compiled from another checkout would otherwise be taken for up to date.
  const buildInfo = path.join(out, 'tsconfig.build.tsbuildinfo');
  const r = spawnSync(
    path.join(ROOT, 'node_modules', '.bin', 'tsc'),
    ['-p', 'tsconfig.build.json', '--outDir', out, '--tsBuildInfoFile', buildInfo, '--sourceMap', 'false'],
    {
      cwd: dir,
      encoding: 'utf8',
    },
  );
  const entry = path.join(out, 'src', 'cli', 'main.js');
  // tsc emits even when another file in the tree has a type error; only a missing output is fatal.
  if (r.status !== 0) log(`tsc reported errors (output used anyway):\n${r.stdout.split('\n').slice(0, 10).join('\n')}`);
  if (!fs.existsSync(entry)) throw new Error('compilation produced no dist/src/cli/main.js');
  // The compiled service serves the widget's bundle from public/widget/ and, unlike a tsx checkout,
  // cannot build it on first use (the mixed scenario calls the widget).
  if (!fs.existsSync(path.join(dir, 'public', 'widget', 'manifest.json'))) {
    log('building the widget bundle (scripts/build-widget.ts)…');
    const w = spawnSync(process.execPath, ['--import', 'tsx', path.join('scripts', 'build-widget.ts')], { cwd: dir, encoding: 'utf8' });
    if (w.status !== 0) throw new Error(`the widget bundle did not build:\n${w.stderr}`);
  }
  return entry;
}

export async function startService(entry: string, ds: Dataset, port: number, settings: BenchSettings, where: Placement): Promise<Server> {
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? '',
    HOME: process.env.HOME ?? '',
    NODE_ENV: 'production',
    LOG_LEVEL: 'warn',
    HOST: '127.0.0.1',
    PORT: String(port),
    DATABASE_URL: ds.databaseUrl,
    ...(ds.schema ? { DATABASE_SCHEMA: ds.schema } : {}),
    // The benchmark is one client hammering a few api_keys from one address: the default limits
    // (6,000 a minute per key, 600 per address) would answer 429 within a second.
    RATE_LIMIT_PER_KEY: '100000000',
    RATE_LIMIT_PER_KEY_UNPROVEN: '100000000',
    RATE_LIMIT_PER_ADDRESS: '100000000',
    // Likewise the connections from that one address (--connections may be set past the default cap).
    CONNECTIONS_PER_ADDRESS: '0',
    // The re-verification job would fetch 8 M profile pages from the internet.
    BACKGROUND_JOBS: '0',
    // Its answer cache's hits and misses are read from /metrics around each round (bench/measure.ts).
    METRICS_TOKEN: randomBytes(24).toString('hex'),
    ...settings.serviceEnv,
  };
  // The primary of --workers N serves nothing: its heap says nothing about the requests.
  const heapFile = settings.workers === 1 ? heapFileFor(`service-${port}`) : null;
  if (heapFile) env.BENCH_HEAP_FILE = heapFile;
  const nodeArgs = [
    ...(heapFile ? ['--import', HEAP_PROBE] : []),
    ...settings.serviceNodeArgs,
    ...(settings.cpuProfDir ? ['--cpu-prof', `--cpu-prof-dir=${settings.cpuProfDir}`] : []),
    entry,
    'serve',
    '--workers',
    String(settings.workers),
  ];
  const [cmd, argv] = pinned(where.serverCpus, process.execPath, nodeArgs);
  const out = settings.serviceLog ? fs.openSync(settings.serviceLog, 'a') : 'ignore';
  const child = spawn(cmd, argv, { cwd: ROOT, env, stdio: ['ignore', out, 'inherit'] });
  if (typeof out === 'number') fs.closeSync(out);
  const url = `http://127.0.0.1:${port}`;
  await waitForHttp(`${url}/readyz`, child);
  // Under --workers each worker counts its own lookups: one worker's /metrics says nothing of the rest.
  return { label: `idsvc/${ds.backend}`, child, url, heapFile, metricsToken: settings.workers === 1 ? env.METRICS_TOKEN! : null };
}

export async function startCeiling(settings: CeilingSettings, where: Placement): Promise<Server> {
  const [cmd, argv] = pinned(where.referenceCpus, process.execPath, [
    '--import',
    'tsx',
    '--import',
    HEAP_PROBE,
    path.join(import.meta.dirname, 'ceiling-server.ts'),
  ]);
  const heapFile = heapFileFor(`ceiling-${settings.mode}`);
  // Settings go through a file: the samples are larger than an environment variable may be.
  const file = path.join(DATA_DIR, `ceiling-${settings.mode}.json`);
  fs.writeFileSync(file, JSON.stringify(settings));
  const child = spawn(cmd, argv, {
    cwd: ROOT,
    env: { ...process.env, BENCH_CEILING_FILE: file, BENCH_HEAP_FILE: heapFile },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const url = `http://127.0.0.1:${settings.port}`;
  await waitForHttp(`${url}/`, child);
  return { label: `${settings.mode} ceiling`, child, url, heapFile };
}

/** The host reference (bench/host-reference.ts), or null when nginx is not installed. */
export async function startHost(samples: Record<string, Sample>, where: Placement): Promise<Server | null> {
  const nginx = findNginx();
  if (nginx === null) {
    log('nginx is not installed: no host reference, so no check of the load generator (apt-get install -y nginx-light)');
    return null;
  }
  const port = BENCH_PORT + 3;
  const child = startHostReference(nginx, path.join(DATA_DIR, 'nginx'), port, samples, (cmd, argv) => pinned(where.referenceCpus, cmd, argv));
  const url = `http://127.0.0.1:${port}`;
  await waitForHttp(`${url}/`, child);
  return { label: 'host (nginx)', child, url, heapFile: null };
}

export function request(url: string, method: 'GET' | 'POST', body?: string): Promise<Sample> {
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

// `npm run bench -- [options]` (bench/args.ts; docs/performance.md says what each one is for).
//
// For each backend: builds (or reuses) the dataset and a fresh working copy of it, starts the
// service, the two ceiling servers and, when nginx is installed, the host reference; then for each
// scenario finds the highest rate each sustains (closed loop, wrk) and measures the latency of the
// service, the work ceiling and the host reference at fixed shares of the service's highest rate
// (open loop, bench/open-loop.ts). Prints two tables and writes the JSON under bench/data/results/.
import { spawnSync } from 'node:child_process';
import os from 'node:os';
import { parseBenchArgs, type BenchSettings, type Scenario } from './args.js';
import { DATA_DIR, ensureDataset, PG_ADMIN_URL, workingCopy, type Backend, type Dataset } from './dataset.js';
import { checkWorkCeiling, closedLoop, HAS_WORK_CEILING, openLoop, samples } from './measure.js';
import { measureHostCosts } from './host-costs.js';
import { holdReclaim } from './host-reclaim.js';
import { holdAutovacuumOn } from './pg-autovacuum.js';
import { BENCH_PORT, compiledEntry, log, placement, rssAnonMb, startCeiling, startHost, startService, stop, type Placement, type Server } from './processes.js';
import { defaultResultFile, hostCostsLine, plainTable, ratio, report, writeResult, type BenchResult, type OpenLoopRow, type Run } from './report.js';
import { requestSource, type RequestSource } from './requests.js';

async function benchBackend(backend: Backend, entry: string, settings: BenchSettings, where: Placement): Promise<Run[]> {
  // The run writes (update_service) to a copy, so every run starts from the same data.
  const ds = await workingCopy(await ensureDataset(backend, settings.users), 'run');
  // Signed widget URLs stay valid for the whole run (at most 24 h ahead is accepted).
  const src = requestSource(ds, Math.floor(Date.now() / 1000) + 6 * 3600);
  const servers: Server[] = [];
  try {
    const service = await startService(entry, ds, BENCH_PORT, settings, where);
    servers.push(service);
    const sample = await samples(service.url, src);
    // A SQLite connection that sees another process's commit drops its whole memory map at its next
    // read, and faults every page back in: on one file, the service's commits (pushes, usage counts)
    // would send the work ceiling back to a cold map, and the ceiling's pushes the service. So on
    // SQLite the ceiling reads and writes a copy of its own, taken after the sample push above so
    // that both start from the same rows.
    const ceilingData = backend === 'sqlite' && settings.ceilings ? await workingCopy(ds, 'ceiling') : ds;
    const bytes = settings.ceilings ? await startCeiling({ mode: 'bytes', port: BENCH_PORT + 1, samples: sample }, where) : null;
    if (bytes) servers.push(bytes);
    const work = settings.ceilings
      ? await startCeiling({ mode: 'work', port: BENCH_PORT + 2, databaseUrl: ceilingData.databaseUrl, schema: ceilingData.schema }, where)
      : null;
    if (work) {
      servers.push(work);
      await checkWorkCeiling(service.url, work.url, src);
    }
    const host = settings.host ? await startHost(sample, where) : null;
    if (host) servers.push(host);
    const runs: Run[] = [];
    for (const scenario of settings.scenarios) runs.push(await benchScenario(scenario, { service, bytes, work, host }, ds, src, settings, where));
    return runs;
  } finally {
    for (const s of servers.reverse()) await stop(s.child);
  }
}

async function benchScenario(
  scenario: Scenario,
  s: { service: Server; bytes: Server | null; work: Server | null; host: Server | null },
  ds: Dataset,
  src: RequestSource,
  settings: BenchSettings,
  where: Placement,
): Promise<Run> {
  const work = s.work && HAS_WORK_CEILING.has(scenario) ? s.work : null;
  const closedTargets = [s.service, ...(s.bytes ? [s.bytes] : []), ...(work ? [work] : [])];
  const closed = await closedLoop(closedTargets, scenario, src, settings, where);
  const of = (t: Server | null) => (t === null ? null : (closed[closedTargets.indexOf(t)] ?? null));
  const m = closed[0]!;
  const b = of(s.bytes);
  const w = of(work);

  const openTargets = [s.service, ...(work ? [work] : []), ...(s.host ? [s.host] : [])];
  // --open-base: shares of a rate given, so that two builds are offered the same traffic.
  const highest = settings.open.baseRps ?? m.rps;
  const rates = settings.open.shares.map((share) => Math.max(1, Math.round(highest * share)));
  const open = rates.length > 0 && m.rps > 0 ? await openLoop(openTargets, rates, scenario, ds, src.widgetExpiry, settings, where) : [];
  const rows: OpenLoopRow[] = rates.map((rate, k) => {
    const at = (t: Server | null) => (t === null ? null : (open[k * openTargets.length + openTargets.indexOf(t)] ?? null));
    return { share: settings.open.shares[k]!, rate_offered: rate, service: at(s.service)!, work_ceiling: at(work), host: at(s.host) };
  });
  return {
    scenario,
    backend: ds.backend,
    rps: m.rps,
    rps_per_cpu: m.rps_per_cpu,
    bytes_ceiling_rps: b?.rps ?? null,
    work_ceiling_rps: w?.rps ?? null,
    ratio_bytes: ratio(m.rps, b?.rps ?? null),
    ratio_work: ratio(m.rps, w?.rps ?? null),
    ratio_bytes_cpu: ratio(m.rps_per_cpu, b?.rps_per_cpu ?? null),
    ratio_work_cpu: ratio(m.rps_per_cpu, w?.rps_per_cpu ?? null),
    open_loop: rows,
    rss_anon_mb: rssAnonMb(s.service.child.pid ?? 0),
    disk_kb_per_req: ds.backend === 'sqlite' ? m.disk_kb_per_req : null,
    heap_kb_per_req: m.heap_kb_per_req,
    work_ceiling_heap_kb_per_req: w?.heap_kb_per_req ?? null,
    faults_per_req: m.faults_per_req,
    work_ceiling_faults_per_req: w?.faults_per_req ?? null,
    cache_hit_share: m.cache_hit_share,
    non_2xx: m.non_2xx + rows.reduce((n, r) => n + r.service.non_2xx + r.service.errors + r.service.unfinished, 0),
  };
}

async function main(): Promise<void> {
  const started = Date.now();
  const settings = parseBenchArgs(process.argv.slice(2));
  const where = placement(settings.workers, settings.loadNice);
  // Checked first, so a missing load generator does not surface after minutes of dataset building.
  if (spawnSync('wrk', ['--version']).error) throw new Error('wrk is not installed: apt-get install -y wrk (Debian/Ubuntu) or brew install wrk');
  log(
    `${settings.users} users${settings.quick ? ', quick' : ''}; closed loop ${settings.closed.rounds} × ${settings.closed.durationS} s at ${settings.closed.connections} connections; open loop ${settings.open.durationS} s at ${settings.open.shares.map((x) => `${x * 100} %`).join(', ') || 'no rate'}; ${where.cores} cores (servers on CPU ${where.serverCpus ?? 'any'}, load on CPU ${where.loadCpus ?? 'any'})`,
  );
  // Before anything else runs: a dataset build or a server would be measured with it.
  const hostCosts = measureHostCosts();
  log(hostCostsLine(hostCosts));
  const entry = compiledEntry(settings.serviceDir);
  const host = holdReclaim(settings.pauseReclaim, log);
  const autovacuum = settings.backends.includes('postgres') ? await holdAutovacuumOn(PG_ADMIN_URL, log) : null;
  const runs: Run[] = [];
  try {
    for (const backend of settings.backends) runs.push(...(await benchBackend(backend, entry, settings, where)));
  } finally {
    host.resume();
    await autovacuum?.restore();
  }
  const result: BenchResult = {
    users: settings.users,
    date: new Date().toISOString(),
    machine: {
      cpus: where.cores,
      model: os.cpus()[0]?.model ?? '?',
      memory_gb: Math.round(os.totalmem() / 2 ** 30),
      node: process.version,
      load_average: os.loadavg().map((x) => Math.round(x * 100) / 100),
      proactive_reclaim: host.reclaim,
      host_costs: hostCosts,
      ...(autovacuum ? { postgres_autovacuum: autovacuum.turnedOn ? 'off, turned on for the run' : autovacuum.found } : {}),
    },
    settings: {
      quick: settings.quick,
      closed: settings.closed,
      open: settings.open,
      workers: settings.workers,
      seed: settings.seed,
      placement: where,
      env: settings.serviceEnv,
      nodeArgs: settings.serviceNodeArgs,
    },
    runs,
  };
  const file = settings.out ?? defaultResultFile(DATA_DIR, result, settings.backends);
  writeResult(file, result);
  process.stdout.write(`\n${report(result, plainTable)}\n`);
  log(`done in ${((Date.now() - started) / 1000).toFixed(0)} s; results in ${file}`);
  const failed = runs.filter((r) => r.non_2xx > 0);
  if (failed.length) {
    log(`non-2xx answers, errors or unanswered requests in: ${failed.map((r) => `${r.backend}/${r.scenario}`).join(', ')}`);
    process.exitCode = 1;
  }
}

await main();

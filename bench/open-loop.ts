// The open-loop load generator: sends requests at a constant arrival rate, whatever the server
// does, and measures each one's latency from the moment it was due (bench/stats.ts, dueAt). A
// closed loop (wrk) waits for an answer before it sends the next request, so a stalled server
// receives fewer requests and its stall hides in a few slow samples; here the requests keep coming
// due, and every one that waits shows its wait.
//
// Run by bench/measure.ts as its own process, pinned to the load core:
//   node --import tsx bench/open-loop.ts SETTINGS.json
// It runs the jobs of the settings file one after another and prints one OPEN_LOOP_JSON line each.
//
// The client is undici's Pool (keep-alive, no pipelining, `connections` sockets) driven through
// dispatch() with a bare handler: no promise, stream or body object per request. Latencies go into
// a typed array and the percentiles are exact (no histogram buckets).
//
// The generator sleeps between sends: a timer wakes it every millisecond or so (TICK_MS), and each
// wake sends every request due before the next one, up to a tick early. It must not poll: the load
// core is not its own, PostgreSQL's backends run there too, and a generator that polled its
// schedule with setImmediate kept that core busy: the backends a request waits on queued behind it,
// and the open loop had less of the machine than the closed loop it is compared with (wrk sleeps
// in epoll). Each request's latency runs from when it was due or, sent early, from when it was
// sent: never less than the server took, and a generator that falls behind its schedule shows as
// latency, as before.
import fs from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { Pool, type Dispatcher } from 'undici';
import type { Scenario } from './args.js';
import type { PartnerKeys } from './dataset.js';
import { buildPool, requestSource, type BenchRequest } from './requests.js';
import { dueAt, dueBy, summarise, type LatencySummary } from './stats.js';

export interface OpenLoopJob {
  label: string;
  origin: string;
  rate: number;
  seed: number;
}

export interface OpenLoopSettings {
  scenario: Scenario;
  dataset: { users: number; idsFile: string; services: string[]; partners: PartnerKeys[] };
  widgetExpiry: number;
  connections: number;
  durationS: number;
  warmupS: number;
  jobs: OpenLoopJob[];
  /** Where each job writes every recorded request's due time, latency and operation (a TSV file a job); null: nowhere. */
  timelineDir?: string | null;
}

export interface OpenLoopResult extends LatencySummary {
  label: string;
  rate_offered: number;
  /** Answers a second over the recorded part of the run (near the offered rate unless the server fell behind). */
  throughput: number;
  non_2xx: number;
  errors: number;
  /** Requests still unanswered 10 s after the schedule ended; counted with the wait they had then. */
  unfinished: number;
  /** How late the generator itself sent requests (send time - due time, 0 when sent early): its own share of the latency. */
  send_lag_p99_ms: number;
  send_lag_max_ms: number;
  /** CPU milliseconds per request sent (warm-up included): the generator's own, and (bench/measure.ts) the server's and PostgreSQL's. */
  generator_cpu_ms_per_req: number;
  server_cpu_ms_per_req?: number;
  postgres_cpu_ms_per_req?: number;
  /** In a mixed run, the latencies of each operation: which of them holds the tail. */
  by_operation?: Record<string, LatencySummary>;
}

const FORM = { 'content-type': 'application/x-www-form-urlencoded' };

/** How far apart the generator's wakes are meant to be, and how early a request may be sent. */
export const TICK_MS = 1;

export function runJob(
  job: OpenLoopJob,
  pool: BenchRequest[],
  settings: Pick<OpenLoopSettings, 'connections' | 'durationS' | 'warmupS' | 'timelineDir'>,
): Promise<OpenLoopResult> {
  const client = new Pool(job.origin, { connections: settings.connections, pipelining: 1, keepAliveTimeout: 60_000 });
  const total = Math.max(1, Math.round(job.rate * (settings.warmupS + settings.durationS)));
  const recordFrom = Math.min(total - 1, Math.round(job.rate * settings.warmupS));
  const recorded = total - recordFrom;
  const latencies = new Float64Array(recorded);
  const sendLag = new Float64Array(recorded);
  const finished = new Uint8Array(recorded);
  let answered = 0;
  let non2xx = 0;
  let errors = 0;
  let lastAnswerAt = 0;
  // A little ahead, so the first due request does not wait for the pool's first connection.
  const start = performance.now() + 20;

  const cpuAtStart = process.cpuUsage();
  return new Promise((resolve) => {
    let next = 0;
    let closed = false;
    const finish = () => {
      if (closed) return;
      closed = true;
      clearTimeout(deadline);
      const now = performance.now();
      let unfinished = 0;
      for (let r = 0; r < recorded; r++) {
        if (finished[r]) continue;
        unfinished++;
        latencies[r] = now - dueAt(start, job.rate, recordFrom + r);
      }
      const firstRecordedDue = dueAt(start, job.rate, recordFrom);
      const completedRecorded = recorded - unfinished;
      const lag = summarise(sendLag.subarray(0, Math.min(recorded, Math.max(0, next - recordFrom))));
      void client.destroy();
      // finish() may run inside undici's callbacks, which swallow what they throw: say it, and fail the run.
      try {
        if (settings.timelineDir)
          writeTimeline(settings.timelineDir, job, pool, recordFrom, latencies, (r) => dueAt(start, job.rate, recordFrom + r) - firstRecordedDue);
      } catch (err) {
        process.stderr.write(`the timeline could not be written: ${String(err)}\n`);
        process.exitCode = 1;
      }
      const byOperation = latenciesByOperation(pool, recordFrom, latencies);
      resolve({
        label: job.label,
        rate_offered: job.rate,
        ...summarise(latencies),
        throughput: lastAnswerAt > firstRecordedDue ? Math.round(completedRecorded / ((lastAnswerAt - firstRecordedDue) / 1000)) : 0,
        non_2xx: non2xx,
        errors,
        unfinished,
        send_lag_p99_ms: lag.p99_ms,
        send_lag_max_ms: lag.max_ms,
        generator_cpu_ms_per_req: perRequest(process.cpuUsage(cpuAtStart), total),
        ...(byOperation ? { by_operation: byOperation } : {}),
      });
    };
    const deadline = setTimeout(finish, (settings.warmupS + settings.durationS) * 1000 + 10_000);

    const send = (i: number, now: number) => {
      const req = pool[i % pool.length]!;
      const due = dueAt(start, job.rate, i);
      const from = Math.min(due, now);
      const r = i - recordFrom;
      if (r >= 0) sendLag[r] = Math.max(0, now - due);
      let status = 0;
      const done = (failed: boolean) => {
        const at = performance.now();
        if (failed) errors++;
        else if (status < 200 || status > 299) non2xx++;
        if (r >= 0 && !closed) {
          latencies[r] = at - from;
          finished[r] = 1;
          lastAnswerAt = at;
        }
        if (++answered === total) finish();
      };
      // The callback form that undici's Client itself takes (its controller form is wrapped into this).
      const handler: Dispatcher.DispatchHandler = {
        onConnect: () => {},
        onHeaders: (statusCode) => {
          status = statusCode;
          return true;
        },
        onData: () => true,
        onComplete: () => done(false),
        onError: () => done(true),
      };
      client.dispatch({ method: req.method, path: req.path, body: req.body, headers: req.body === null ? undefined : FORM }, handler);
    };

    const tick = () => {
      if (closed) return;
      const now = performance.now();
      const due = dueBy(start, job.rate, now + TICK_MS, total);
      while (next < due) send(next++, now);
      if (next >= total) return;
      // Timers fire late rather than early, so the wake is asked for a tick before the next send.
      const wait = dueAt(start, job.rate, next) - TICK_MS - performance.now();
      setTimeout(tick, Math.max(1, Math.floor(wait)));
    };
    setTimeout(tick, 1);
  });
}

/** The recorded requests' latencies grouped by operation; undefined when the pool holds one operation. */
export function latenciesByOperation(pool: BenchRequest[], recordFrom: number, latencies: Float64Array): Record<string, LatencySummary> | undefined {
  const operationOf = (r: number) => pool[(recordFrom + r) % pool.length]!.operation ?? '';
  const groups = new Map<string, number[]>();
  for (let r = 0; r < latencies.length; r++) {
    const op = operationOf(r);
    const group = groups.get(op);
    if (group) group.push(latencies[r]!);
    else groups.set(op, [latencies[r]!]);
  }
  if (groups.size < 2) return undefined;
  return Object.fromEntries([...groups].map(([op, xs]) => [op, summarise(Float64Array.from(xs))]));
}

/** One line per recorded request: ms from the first recorded due time, latency in ms, operation. */
function writeTimeline(dir: string, job: OpenLoopJob, pool: BenchRequest[], recordFrom: number, latencies: Float64Array, dueOf: (r: number) => number): void {
  const lines: string[] = ['due_ms\tlatency_ms\toperation'];
  for (let r = 0; r < latencies.length; r++) {
    lines.push(`${dueOf(r).toFixed(3)}\t${latencies[r]!.toFixed(3)}\t${pool[(recordFrom + r) % pool.length]!.operation ?? ''}`);
  }
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, timelineName(job)), `${lines.join('\n')}\n`);
}

/** The job's timeline file: its label made a file name ("idsvc/postgres" → "idsvc-postgres"), and its rate. */
export function timelineName(job: Pick<OpenLoopJob, 'label' | 'rate'>): string {
  return `${job.label.replace(/[^A-Za-z0-9._-]+/g, '-')}-${job.rate}.tsv`;
}

function perRequest(cpu: NodeJS.CpuUsage, requests: number): number {
  return Math.round(((cpu.user + cpu.system) / 1000 / requests) * 1000) / 1000;
}

async function main(): Promise<void> {
  const settings = JSON.parse(fs.readFileSync(process.argv[2] ?? '', 'utf8')) as OpenLoopSettings;
  const source = requestSource(settings.dataset, settings.widgetExpiry);
  for (const job of settings.jobs) {
    // Drawn before the clock starts; a pool holds the whole run up to 200,000 requests, then repeats.
    const size = Math.min(200_000, Math.max(1, Math.round(job.rate * (settings.warmupS + settings.durationS))));
    const pool = buildPool(settings.scenario, source, job.seed, size);
    // Tells bench/measure.ts when this job's clock starts, for the servers' CPU over it.
    process.stdout.write(`OPEN_LOOP_START ${job.label}\n`);
    const result = await runJob(job, pool, settings);
    process.stdout.write(`OPEN_LOOP_JSON ${JSON.stringify(result)}\n`);
  }
}

if (process.argv[1] === import.meta.filename) await main();

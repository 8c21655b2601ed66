// What the service waits on, for finding where an open-loop tail comes from: loaded into the
// service with `npm run bench -- --node-arg=--import=tsx --node-arg=--import=./bench/stall-probe.ts`
// (the service runs compiled, so TypeScript needs the loader; `--env STALL_PROBE_FILE=…` names the
// output; default bench/data/stall-probe.jsonl). It records, each with the wall-clock time it
// ended (ms since the epoch, to line up with the generator's and the database's logs):
// - `gc`: collector pauses of 2 ms or more (kind: minor, major, incremental, weak);
// - `loop`: turns of the event loop that held it 10 ms or more (a 2 ms timer that came late);
// - `pg`: statements whose answer took 10 ms or more from the call, waiting in the connection's
//   own queue included (name or first words of the SQL);
// - `statements`, once at exit: how many statements of each kind the process sent, to tell how many
//   round trips a request costs (divide by the requests the generator counted).
// Nothing is written until the process exits, so the probe adds no I/O while it measures.
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { PerformanceObserver, constants, performance } from 'node:perf_hooks';

const out = process.env.STALL_PROBE_FILE ?? path.resolve('bench/data/stall-probe.jsonl');
const events: string[] = [];
const wall = () => performance.timeOrigin + performance.now();

const GC_KINDS: Record<number, string> = {
  [constants.NODE_PERFORMANCE_GC_MINOR]: 'minor',
  [constants.NODE_PERFORMANCE_GC_MAJOR]: 'major',
  [constants.NODE_PERFORMANCE_GC_INCREMENTAL]: 'incremental',
  [constants.NODE_PERFORMANCE_GC_WEAKCB]: 'weak',
};
new PerformanceObserver((list) => {
  for (const e of list.getEntries()) {
    if (e.duration < 2) continue;
    const kind = GC_KINDS[(e as { detail?: { kind?: number } }).detail?.kind ?? -1] ?? 'other';
    events.push(JSON.stringify({ at: performance.timeOrigin + e.startTime + e.duration, what: 'gc', kind, ms: +e.duration.toFixed(2) }));
  }
}).observe({ entryTypes: ['gc'] });

let last = performance.now();
setInterval(() => {
  const now = performance.now();
  if (now - last >= 12) events.push(JSON.stringify({ at: wall(), what: 'loop', ms: +(now - last - 2).toFixed(2) }));
  last = now;
}, 2).unref();

// pg is CommonJS: the service's import of it and this require share one module.
const require = createRequire(path.resolve('package.json'));
const pg = require('pg') as { Client: { prototype: { query: (...args: unknown[]) => unknown } } };
const query = pg.Client.prototype.query;
const labelOf = (config: unknown): string => {
  if (typeof config === 'string') return config.slice(0, 60);
  const c = config as { name?: string; text?: string } | null;
  return [c?.name, c?.text?.replace(/\s+/g, ' ').slice(0, 60)].filter(Boolean).join(': ') || '?';
};
const counts = new Map<string, number>();
pg.Client.prototype.query = function (this: unknown, ...args: unknown[]) {
  const started = performance.now();
  const label = labelOf(args[0]);
  counts.set(label, (counts.get(label) ?? 0) + 1);
  const done = () => {
    const ms = performance.now() - started;
    if (ms >= 10) events.push(JSON.stringify({ at: wall(), what: 'pg', ms: +ms.toFixed(2), sql: label }));
  };
  const last = args.length - 1;
  if (typeof args[last] === 'function') {
    const cb = args[last] as (...a: unknown[]) => unknown;
    args[last] = (...a: unknown[]) => {
      done();
      return cb(...a);
    };
    return query.apply(this, args);
  }
  const result = query.apply(this, args) as { then?: (a: () => void, b: () => void) => unknown } | undefined;
  if (result && typeof result.then === 'function') result.then(done, done);
  return result;
};

process.on('exit', () => {
  events.push(JSON.stringify({ at: wall(), what: 'statements', counts: Object.fromEntries(counts) }));
  fs.mkdirSync(path.dirname(out), { recursive: true });
  fs.appendFileSync(out, events.length > 0 ? `${events.join('\n')}\n` : '');
});

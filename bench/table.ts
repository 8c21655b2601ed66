// Prints a results file (bench/results/*.json) as the Markdown table docs/performance.md uses.
// `node --import tsx bench/table.ts bench/results/latest.json`
import fs from 'node:fs';
import type { Run } from './run.js';

const file = process.argv[2] ?? 'bench/results/latest.json';
const result = JSON.parse(fs.readFileSync(file, 'utf8')) as { users: number; runs: Run[] };
const pc = (x: number | null) => (x === null ? '–' : `${Math.round(x * 100)} %`);
const n = (x: number | null) => (x === null ? '–' : x.toLocaleString('en-GB'));
process.stdout.write(`${result.users.toLocaleString('en-GB')} users\n\n`);
process.stdout.write('| backend | scenario | req/s | p50 ms | p99 ms | floor ms | mean/floor | bytes ceiling | ratio | work ceiling | ratio | ratio per CPU-s (work) | p99 ms bytes / work / host | RssAnon MB | disk KB/req |\n');
process.stdout.write('|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n');
// Results written before the floor and the host reference existed have neither.
const ms = (x: number | null | undefined) => (x === null || x === undefined ? '–' : String(x));
for (const r of result.runs) {
  process.stdout.write(
    `| ${r.backend} | ${r.name} | ${n(r.rps)} | ${r.p50_ms} | ${r.p99_ms} | ${ms(r.queue_floor_ms)} | ${ms(r.mean_over_floor)} | ${n(r.bytes_ceiling_rps)} | ${pc(r.ratio_bytes)} | ${n(r.work_ceiling_rps)} | ${pc(r.ratio_work)} | ${pc(r.ratio_work_cpu)} | ${[r.bytes_ceiling_p99_ms, r.work_ceiling_p99_ms, r.host_p99_ms].map(ms).join(' / ')} | ${r.rss_anon_mb ?? '–'} | ${r.disk_kb_per_req ?? '–'} |\n`,
  );
}

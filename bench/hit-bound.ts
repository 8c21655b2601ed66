// The best hit rate any answer cache could reach on the mixed scenario: the share of its reads whose
// answer was asked for before in the same run, as if the cache were unbounded and nothing were ever
// written. The measured rate (`idsvc_answer_cache_lookups` on /metrics) can only be lower.
//
// `node --import tsx bench/hit-bound.ts [DATASET] [SEED]` (default sqlite-1000000, seed 1).
import fs from 'node:fs';
import path from 'node:path';
import { DATA_DIR, type Dataset } from './dataset.js';
import { buildPool, requestSource } from './requests.js';

const [name = 'sqlite-1000000', seed = '1'] = process.argv.slice(2);
const meta = JSON.parse(fs.readFileSync(path.join(DATA_DIR, `${name}.meta.json`), 'utf8')) as Dataset;
const source = requestSource(meta, Math.floor(Date.now() / 1000) + 7200);

/** Path `/api/OPERATION/API_KEY/USER…`: the answer the service keeps for it (services/answer-cache.ts keys). */
function answerOf(requestPath: string): string | null {
  const [, , operation, apiKey, user] = requestPath.split('/');
  if (operation === 'update_service') return null;
  if (requestPath.endsWith('/public')) return `public|${user}`;
  return `${operation}|${apiKey}|${user}`;
}

for (const requests of [20_000, 100_000, 1_000_000]) {
  const seen = new Set<string>();
  let reads = 0;
  let repeats = 0;
  for (const r of buildPool('mixed', source, Number(seed), requests)) {
    const answer = answerOf(r.path);
    if (answer === null) continue;
    reads++;
    if (seen.has(answer)) repeats++;
    else seen.add(answer);
  }
  console.log(`${requests} requests: at best ${((100 * repeats) / reads).toFixed(1)} % of reads from memory; ${seen.size} distinct answers`);
}

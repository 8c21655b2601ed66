// The share of public lookups a CDN or caching proxy in front of idsvc answers itself, for the
// capacity model (docs/scaling.md): lookups of people drawn as the mixed scenario draws them (Zipf,
// s = 1, over USERS people), arriving at RATE a second, each answer kept MAX_AGE seconds from the
// lookup that fetched it (PUBLIC_CACHE_MAX_AGE; with stale-while-revalidate the origin sees a
// conditional request instead of a miss, once per MAX_AGE per person either way). Many edge
// locations each keeping their own copy are EDGES caches, each getting RATE / EDGES.
//
// `node --import tsx bench/cdn-hit-ratio.ts USERS RATE MAX_AGE [EDGES] [SECONDS]`
import { seededRandom, ZipfSampler } from './random.js';

export function cdnHitRatio(users: number, rate: number, maxAgeS: number, edges = 1, seconds = 600, seed = 1): number {
  const zipf = new ZipfSampler(users, 1);
  const pick = seededRandom(seed);
  const perEdge = rate / edges;
  // Simulate one edge: every edge sees the same distribution at its share of the rate.
  const fetchedAt = new Float64Array(users + 1).fill(Number.NEGATIVE_INFINITY);
  const total = Math.round(perEdge * seconds);
  // The first MAX_AGE seconds fill the cache from empty: counted from then on, as a cache that has run for a while.
  const warm = Math.min(total, Math.round(perEdge * maxAgeS));
  let hits = 0;
  for (let i = 0; i < total; i++) {
    const t = i / perEdge;
    const person = zipf.rank(pick());
    const hit = t - fetchedAt[person]! < maxAgeS;
    if (!hit) fetchedAt[person] = t;
    if (hit && i >= warm) hits++;
  }
  return hits / (total - warm);
}

if (process.argv[1] === import.meta.filename) {
  const [users, rate, maxAge, edges = 1, seconds = 600] = process.argv.slice(2).map(Number);
  if (!users || !rate || maxAge === undefined) throw new Error('usage: bench/cdn-hit-ratio.ts USERS RATE MAX_AGE [EDGES] [SECONDS]');
  const ratio = cdnHitRatio(users, rate, maxAge, edges, seconds);
  console.log(`${users} people, ${rate}/s, max-age ${maxAge} s, ${edges} edge(s): ${(100 * ratio).toFixed(1)} % of lookups answered by the cache`);
}

// The answer cache's admission (src/services/answer-cache.ts) simulated on the benchmark's request
// pools, replayed as wrk replays them: the share of reads answered from memory after the first
// round, and how many answers are stored (each replacing another once the cache is full: garbage
// for the collector) per 100 reads, for the second-ask rule alone (`lru2`) and with TinyLFU's
// frequency comparison (`tinylfu`). Answers are counted, not sized (CAPACITY of them); a push drops
// its partner's two private views of the person. A model to compare rules by, not a measurement.
//
//   node --import tsx bench/admission-sim.ts [SCENARIO] [CAPACITY] [ROUNDS] [ROW_BITS]
//   (defaults: mixed 16000 6 16; the dataset sqlite-1000000 must exist)
import fs from 'node:fs';
import path from 'node:path';
import { DATA_DIR, type Dataset } from './dataset.js';
import type { Scenario } from './args.js';
import { buildPool, requestSource } from './requests.js';

const [scenario = 'mixed', capArg = '16000', cyclesArg = '6', widthBits = '16'] = process.argv.slice(2);
const meta = JSON.parse(fs.readFileSync(path.join(DATA_DIR, 'sqlite-1000000.meta.json'), 'utf8')) as Dataset;
const pool = buildPool(scenario as Scenario, requestSource(meta, 1e10), 1, 100_000);
const C = Number(capArg);
type Op = { read: string } | { drop: string[] };
const ops: Op[] = pool.map((r) => {
  const [, , op, key, user] = r.path.split('/');
  if (op === 'update_service') return { drop: [`return_services|${key}|${user}`, `service_collection_widget|${key}|${user}`] };
  if (r.path.endsWith('/public')) return { read: `public|${user}` };
  return { read: `${op}|${key}|${user!.split('?')[0]}` };
});

function fnv(s: string, seed: number): number {
  let h = seed;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193);
  return h >>> 0;
}

class Asked {
  slots = new Int32Array(1 << 16);
  fp = 0;
  slot(k: string) {
    this.fp = fnv(k, 0x9747b28c) | 1;
    return fnv(k, 0x811c9dc5) & (this.slots.length - 1);
  }
  askedBefore(k: string) {
    const s = this.slot(k);
    if (this.slots[s] === this.fp) {
      this.slots[s] = 0;
      return true;
    }
    this.slots[s] = this.fp;
    return false;
  }
  remember(k: string) {
    this.slots[this.slot(k)] = this.fp;
  }
}

class Sketch {
  rows: Uint8Array[];
  mask: number;
  adds = 0;
  reset: number;
  constructor(bits: number, reset: number) {
    this.rows = [0, 1, 2, 3].map(() => new Uint8Array(1 << bits));
    this.mask = (1 << bits) - 1;
    this.reset = reset;
  }
  idx(k: string) {
    const a = fnv(k, 0x811c9dc5),
      b = fnv(k, 0x5bd1e995) | 1;
    return [0, 1, 2, 3].map((i) => (a + Math.imul(i, b)) & this.mask);
  }
  add(k: string) {
    const ix = this.idx(k);
    for (let r = 0; r < 4; r++) if (this.rows[r]![ix[r]!]! < 255) this.rows[r]![ix[r]!]!++;
    if (++this.adds >= this.reset) {
      this.adds = 0;
      for (const row of this.rows) for (let i = 0; i < row.length; i++) row[i] = row[i]! >> 1;
    }
  }
  freq(k: string) {
    const ix = this.idx(k);
    let m = 255;
    for (let r = 0; r < 4; r++) m = Math.min(m, this.rows[r]![ix[r]!]!);
    return m;
  }
}

function run(policy: 'lru2' | 'tinylfu') {
  const cache = new Map<string, true>(); // insertion order = LRU order (re-insert on hit)
  const asked = new Asked();
  const sketch = new Sketch(Number(widthBits), 10 * C);
  let reads = 0,
    hits = 0,
    stores = 0,
    rejected = 0;
  for (let cycle = 0; cycle < Number(cyclesArg); cycle++)
    for (const op of ops) {
      if ('drop' in op) {
        for (const k of op.drop) if (cache.delete(k)) asked.remember(k);
        continue;
      }
      const k = op.read;
      if (cycle > 0) reads++;
      sketch.add(k);
      if (cache.has(k)) {
        cache.delete(k);
        cache.set(k, true);
        if (cycle > 0) hits++;
        continue;
      }
      const room = cache.size < 0.75 * C;
      let admit = room || asked.askedBefore(k);
      if (admit && !room && policy === 'tinylfu' && cache.size >= C) {
        const victim = cache.keys().next().value as string;
        if (!(sketch.freq(k) > sketch.freq(victim))) {
          admit = false;
          rejected++;
          asked.remember(k);
        }
      }
      if (!admit) continue;
      cache.set(k, true);
      if (cycle > 0) stores++;
      while (cache.size > C) cache.delete(cache.keys().next().value as string);
    }
  console.log(
    `${scenario} C=${C} ${policy}: hits ${((100 * hits) / reads).toFixed(1)} %, stores per 100 reads ${((100 * stores) / reads).toFixed(2)}, rejected ${rejected}`,
  );
}
run('lru2');
run('tinylfu');

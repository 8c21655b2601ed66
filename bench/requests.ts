// The requests a load run sends, drawn once from a seed before any clock starts: wrk replays them
// from a file (bench/load.lua) and the open-loop generator (bench/open-loop.ts) from memory. Drawing
// inside a load generator's hot loop costs it time that then shows in its latencies.
//
// Single-operation scenarios draw users uniformly from the whole dataset (every lookup a random
// B-tree walk: the worst case for caches). The mixed scenario draws them from a Zipf distribution
// (s = 1), as real traffic concentrates on popular people, and spreads its calls over the partners:
// 30 % public views, 30 % private views, 30 % the widget's script (signed, so with the partner's
// private view), 10 % update_service.
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { Scenario } from './args.js';
import { DATA_DIR, type Dataset, type PartnerKeys } from './dataset.js';
import { rankToUser, seededRandom, ZipfSampler } from './random.js';
import { widgetSignature } from '../src/widget/signature.js';

export interface BenchRequest {
  method: 'GET' | 'POST';
  path: string;
  /** A form body (application/x-www-form-urlencoded), or null. */
  body: string | null;
  /** The API operation (or the widget), for latencies by operation in a mixed run. */
  operation?: string;
}

/** What the draws need from a dataset: its identifiers and keys, not its database. */
export interface RequestSource {
  users: number;
  /** The ids file: one 32-character MD5 per user, 33 bytes a line, user i on line i - 1. */
  ids: Buffer;
  services: string[];
  partners: PartnerKeys[];
  /** The `exp` of signed widget URLs (Unix seconds): fixed per run, so draws stay reproducible. */
  widgetExpiry: number;
}

export function requestSource(ds: Pick<Dataset, 'users' | 'idsFile' | 'services' | 'partners'>, widgetExpiry: number): RequestSource {
  return { users: ds.users, ids: fs.readFileSync(ds.idsFile), services: ds.services, partners: ds.partners, widgetExpiry };
}

/** Shares of the mixed scenario, in this order: cumulative thresholds over [0, 1). */
export const MIX = [
  ['return_services_public', 0.3],
  ['return_services_private', 0.3],
  ['widget', 0.3],
  ['update_service', 0.1],
] as const;

const md5Of = (src: RequestSource, user: number) => src.ids.toString('latin1', (user - 1) * 33, (user - 1) * 33 + 32);
/** The widget's HMAC key: the hex SHA-256 of the partner's api_token (src/widget/signature.ts). */
const signingKeyOf = (partner: PartnerKeys) => createHash('sha256').update(partner.apiToken).digest('hex');

export function operation(kind: string, src: RequestSource, partner: PartnerKeys, md5: string, pick: () => number): BenchRequest {
  return { ...request(kind, src, partner, md5, pick), operation: kind };
}

function request(kind: string, src: RequestSource, partner: PartnerKeys, md5: string, pick: () => number): BenchRequest {
  const token = `api_token=${partner.apiToken}`;
  const service = () => src.services[Math.floor(pick() * src.services.length)]!;
  switch (kind) {
    case 'return_services_public':
      return { method: 'GET', path: `/api/return_services/${partner.apiKey}/${md5}/public`, body: null };
    case 'return_services_private':
      return { method: 'POST', path: `/api/return_services/${partner.apiKey}/${md5}`, body: token };
    case 'service_details_all':
      return { method: 'GET', path: `/api/service_details/${partner.apiKey}`, body: null };
    case 'service_details_one':
      return { method: 'GET', path: `/api/service_details/${partner.apiKey}/${service()}`, body: null };
    case 'update_service':
      return { method: 'POST', path: `/api/update_service/${partner.apiKey}/${md5}/${service()}/b${Math.floor(pick() * 1e9)}`, body: token };
    case 'widget': {
      const exp = String(src.widgetExpiry);
      const sig = widgetSignature(signingKeyOf(partner), partner.apiKey, md5, exp);
      return { method: 'GET', path: `/api/service_collection_widget/${partner.apiKey}/${md5}/TRUE?exp=${exp}&sig=${sig}`, body: null };
    }
    default:
      throw new Error(`unknown operation ${kind}`);
  }
}

/** The mixed scenario's operation for a uniform draw in [0, 1). */
function mixKind(uniform: number): string {
  let upTo = 0;
  for (const [kind, share] of MIX) {
    upTo += share;
    if (uniform < upTo) return kind;
  }
  return MIX[MIX.length - 1]![0];
}

/** `size` requests of `scenario`, the same for the same seed. */
export function buildPool(scenario: Scenario, src: RequestSource, seed: number, size: number): BenchRequest[] {
  const pick = seededRandom(seed);
  const pool: BenchRequest[] = [];
  if (scenario === 'mixed') {
    const zipf = new ZipfSampler(src.users, 1);
    for (let i = 0; i < size; i++) {
      const kind = mixKind(pick());
      const partner = src.partners[Math.floor(pick() * src.partners.length)]!;
      pool.push(operation(kind, src, partner, md5Of(src, rankToUser(zipf.rank(pick()), src.users)), pick));
    }
    return pool;
  }
  const partner = src.partners[0]!;
  for (let i = 0; i < size; i++) pool.push(operation(scenario, src, partner, md5Of(src, 1 + Math.floor(pick() * src.users)), pick));
  return pool;
}

/** The pool as bench/load.lua reads it: METHOD, path and body separated by tabs, one a line. */
export function writePoolFile(file: string, pool: BenchRequest[]): void {
  fs.writeFileSync(file, pool.map((r) => `${r.method}\t${r.path}\t${r.body ?? ''}\n`).join(''));
}

// `node --import tsx bench/requests.ts pool DATASET SCENARIO SEED FILE` writes a pool (bench/ab.sh).
if (process.argv[1] === import.meta.filename && process.argv[2] === 'pool') {
  const [, , , name, scenario, seed, file] = process.argv;
  const meta = JSON.parse(fs.readFileSync(path.join(DATA_DIR, `${name}.meta.json`), 'utf8')) as Dataset;
  writePoolFile(file ?? 'pool.tsv', buildPool(scenario as Scenario, requestSource(meta, Math.floor(Date.now() / 1000) + 7200), Number(seed ?? 1), 100_000));
}

// The shipped order of the services people most often have (`catalogue/popularity.json`), which
// breaks ties in the popularity order. Without it a fresh install, where no one has opted in yet,
// would list services by name, and its "most used" would start with whatever sorts first.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Type } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import { DEFAULT_CATALOGUE_PATH } from './catalogue-file.js';

const PopularityFile = Type.Object({
  format: Type.Literal('idsvc-popularity/1'),
  about: Type.String(),
  services: Type.Array(Type.String({ pattern: '^[a-z0-9]{1,64}$' }), { maxItems: 1000 }),
});

export const CURATED_POPULARITY_PATH = path.join(path.dirname(DEFAULT_CATALOGUE_PATH), 'popularity.json');

/** svcId → its place in the shipped order (0 first); services not in it are not in the map. */
export function loadCuratedPopularity(file: string = CURATED_POPULARITY_PATH): ReadonlyMap<string, number> {
  const parsed: unknown = JSON.parse(readFileSync(file, 'utf8'));
  if (!Value.Check(PopularityFile, parsed)) {
    const first = [...Value.Errors(PopularityFile, parsed)][0];
    throw new Error(`${file}: ${first ? `${first.path || '/'} ${first.message}` : 'not a popularity file'}`);
  }
  const rank = new Map<string, number>();
  for (const svcId of parsed.services) if (!rank.has(svcId)) rank.set(svcId, rank.size);
  return rank;
}

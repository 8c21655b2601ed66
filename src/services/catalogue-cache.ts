// The catalogue is read on every API call, so it lives in memory. A running server re-reads it when
// the version stamp in the database changes (an operator's CLI edit), checking at most once per
// `checkEveryMs`; popularity counts are refreshed on their own, slower clock, and their ties are
// broken by the shipped order of what people most often have (catalogue/popularity.json).
import type { Db } from '../db/handle.js';
import type { CatalogueEntry } from '../catalogue/catalogue-file.js';
import { loadCuratedPopularity } from '../catalogue/curated-popularity.js';
import type { Clock } from '../domain/clock.js';
import { catalogueVersion, listCatalogue, popularityCounts } from '../repositories/catalogue.js';

export type Order = 'popularity' | 'alphanumeric' | 'combined';
export const ORDERS: readonly Order[] = ['popularity', 'alphanumeric', 'combined'];

export interface CatalogueSnapshot {
  readonly version: string;
  /** Enabled services by id. */
  readonly byId: ReadonlyMap<string, CatalogueEntry>;
  readonly alphanumeric: readonly CatalogueEntry[];
}

const byName = (a: CatalogueEntry, b: CatalogueEntry) => {
  const x = a.svcName.toLowerCase();
  const y = b.svcName.toLowerCase();
  return x < y ? -1 : x > y ? 1 : a.svcId < b.svcId ? -1 : a.svcId > b.svcId ? 1 : 0;
};

export class CatalogueCache {
  private snapshot: CatalogueSnapshot | undefined;
  private checkedAt = -Infinity;
  private popularity: { at: number; counts: Map<string, number>; stamp: number } | undefined;
  private popularityStamp = 0;
  private loading: Promise<CatalogueSnapshot> | undefined;
  /** Bumped by invalidate(): a check that started before it neither answers later calls nor stores what it read. */
  private generation = 0;

  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly checkEveryMs = 1000,
    private readonly popularityEveryMs = 60_000,
    /** The shipped order of the services people most often have: it breaks ties in counts. */
    private readonly curatedRank: ReadonlyMap<string, number> = loadCuratedPopularity(),
  ) {}

  /** The catalogue: at once while the last check is recent (every lookup asks), else after the check that is due. */
  get(): CatalogueSnapshot | Promise<CatalogueSnapshot> {
    const now = this.clock.now();
    if (this.snapshot && now - this.checkedAt < this.checkEveryMs) return this.snapshot;
    if (!this.loading) {
      const loading = this.refresh(now, this.generation).finally(() => {
        if (this.loading === loading) this.loading = undefined;
      });
      this.loading = loading;
    }
    // A due check does not hold up the calls made while it runs: they get the snapshot it checks,
    // as the calls just before it did. Otherwise once a second every call in flight would wait for
    // that round trip, behind the pool's queue when the database is busy. After invalidate() (a
    // change made in this process) or with `checkEveryMs` 0 (tests: every call sees the latest),
    // calls wait for the new catalogue.
    if (this.snapshot && this.checkEveryMs > 0 && this.checkedAt !== Number.NEGATIVE_INFINITY) {
      this.loading.catch(() => {}); // a failed check is tried again by the next call
      return this.snapshot;
    }
    return this.loading;
  }

  private async refresh(now: number, generation: number): Promise<CatalogueSnapshot> {
    const version = await catalogueVersion(this.db);
    if (this.snapshot && this.snapshot.version === version) {
      if (generation === this.generation) this.checkedAt = now;
      return this.snapshot;
    }
    const entries = await listCatalogue(this.db, false);
    const alphanumeric = [...entries].sort(byName);
    const snapshot = { version, byId: new Map(entries.map((e) => [e.svcId, e])), alphanumeric };
    if (generation === this.generation) {
      this.checkedAt = now;
      this.snapshot = snapshot;
    }
    return snapshot;
  }

  /** Forget cached state: the next read goes to the database (used after in-process writes). */
  invalidate(): void {
    this.generation++;
    this.loading = undefined;
    this.checkedAt = Number.NEGATIVE_INFINITY;
    this.popularity = undefined;
  }

  private async counts(): Promise<{ counts: Map<string, number>; stamp: number }> {
    const now = this.clock.now();
    if (!this.popularity || now - this.popularity.at >= this.popularityEveryMs) {
      const counts = await popularityCounts(this.db);
      this.popularity = { at: now, counts, stamp: ++this.popularityStamp };
    }
    return this.popularity;
  }

  /** The ordered list and a stamp that changes whenever the list may have changed. */
  async ordered(order: Order): Promise<{ list: readonly CatalogueEntry[]; stamp: string }> {
    const snap = await this.get();
    if (order === 'alphanumeric') return { list: snap.alphanumeric, stamp: snap.version };
    const { counts, stamp } = await this.counts();
    const n = (e: CatalogueEntry) => counts.get(e.svcId) ?? 0;
    const rank = (e: CatalogueEntry) => this.curatedRank.get(e.svcId) ?? Number.MAX_SAFE_INTEGER;
    const popular = [...snap.alphanumeric].sort((a, b) => n(b) - n(a) || rank(a) - rank(b) || byName(a, b));
    if (order === 'popularity') return { list: popular, stamp: `${snap.version}:${stamp}` };
    const top = popular.slice(0, 10);
    const topIds = new Set(top.map((e) => e.svcId));
    return { list: [...top, ...snap.alphanumeric.filter((e) => !topIds.has(e.svcId))], stamp: `${snap.version}:${stamp}` };
  }
}

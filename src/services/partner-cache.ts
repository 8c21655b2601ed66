// The partner behind an api_key, for the check every API call makes (SPEC §5).
//
// Reading the partner's row on every request is a round trip to the server on PostgreSQL (half of
// what a return_services answer costs) and, on SQLite, several times what a one-number read costs.
// The cache keeps the rows it has read for as long as it can know they are current, whoever changes
// them (this server, the CLI, another instance, an operator's SQL), through the change feed it
// shares with the answer cache (services/change-feed.ts): a row is dropped when a reading names its
// partner (`p{id}`), and nothing is served from memory while the feed cannot be read.
//
// - SQLite: a reading is one indexed local read of committed rows. The first call of each turn of
//   the event loop makes one (or shares the answer cache's), so a change committed by another
//   process is seen from the next turn on.
// - PostgreSQL: a reading is a round trip, which every call waiting for would cost the push it
//   precedes. A row is served from memory when a reading that started at most MAX_LAG_MS ago
//   succeeded; calls start the next reading in the background before that one is too old. So a
//   change committed by another process is seen by every call made MAX_LAG_MS after its commit, a
//   busy server reads the feed a few times a second for this, and an idle one not at all.
//
// Writes made in this process (repositories/partners.ts) empty it at once, on either database.
import { EventEmitter } from 'node:events';
import type { Db } from '../db/handle.js';
import { findPartnerByKey, onPartnerWrite, type Partner } from '../repositories/partners.js';
import { MAX_LAG_MS, type ChangeFeed, type Changes } from './change-feed.js';

/** Emits `invalidated`, and the feed's `down` (it could not be read) and `live` (it can again), for tests and logs. */
export class PartnerCache extends EventEmitter {
  private readonly rows = new Map<string, Partner>();
  /** Bumped on every invalidation: a read that started before one must not fill the cache. */
  private generation = 0;
  /** The change feed (none in the CLI), and the same when rows are kept (PARTNER_CACHE), else null. */
  readonly feed: ChangeFeed | null;
  private readonly keptBy: ChangeFeed | null;
  /** The feed's sequence when each row handed out was read from the table (see readAt()). */
  private readonly readSequence = new WeakMap<Partner, number>();
  private readonly detach: () => void = () => {};
  private readonly stopLocal: () => void;
  /** Calls answered from memory, and calls that read the table (for tests). */
  hits = 0;
  misses = 0;

  /** `keep` false, or no feed: never serve from memory (the CLI, PARTNER_CACHE=0). */
  constructor(
    private readonly db: Db,
    feed: ChangeFeed | null,
    keep = true,
    private readonly maxAgeMs = MAX_LAG_MS,
  ) {
    super();
    this.feed = feed;
    this.keptBy = keep ? feed : null;
    this.stopLocal = onPartnerWrite(() => this.invalidate());
    if (this.keptBy) this.detach = this.keptBy.subscribe(this, (changes) => this.apply(changes));
  }

  /**
   * The partner behind `apiKey`. A row served from memory is answered at once, not as a promise:
   * every API call asks, and on SQLite (and on PostgreSQL within MAX_LAG_MS) nothing is waited for.
   */
  get(apiKey: string): Partner | undefined | Promise<Partner | undefined> {
    if (!this.keptBy) return this.read(apiKey);
    const current = this.current(this.keptBy);
    return typeof current === 'boolean' ? this.fromMemoryOrRead(apiKey, current) : current.then((ok) => this.fromMemoryOrRead(apiKey, ok));
  }

  private fromMemoryOrRead(apiKey: string, current: boolean): Partner | undefined | Promise<Partner | undefined> {
    const hit = current ? this.rows.get(apiKey) : undefined;
    if (hit) {
      this.hits++;
      return hit;
    }
    return this.read(apiKey);
  }

  private async read(apiKey: string): Promise<Partner | undefined> {
    this.misses++;
    const generation = this.generation;
    const sequence = this.feed?.sequence;
    const found = await findPartnerByKey(this.db, apiKey);
    if (!found) return undefined;
    const row = Object.freeze(found);
    if (sequence !== undefined) this.readSequence.set(row, sequence);
    // Unknown keys are not remembered: a stream of made-up keys must not grow the map. A row read
    // while the feed is live is kept: a change committed after it is in a later reading.
    if (this.keptBy?.live && generation === this.generation) this.rows.set(apiKey, row);
    return row;
  }

  /**
   * The change feed's sequence when `partner` (a row this cache handed out) was read from the
   * table: it reflects every change the feed had applied by then. The answer cache keeps an answer
   * rendered for this partner only when no change to it was applied since (a row handed out just
   * before a reading that drops it must not be rendered into an answer kept after that reading).
   */
  readAt(partner: Partner): number | undefined {
    return this.readSequence.get(partner);
  }

  /** Whether the rows in memory may answer now (see the top of this file). */
  private current(feed: ChangeFeed): boolean | Promise<boolean> {
    if (!feed.local) return feed.readWithin(this.maxAgeMs);
    // A reading that timed out says nothing the table read below will not say too.
    const reading = feed.fresh();
    return reading instanceof Promise ? reading.then((r) => r.ok) : reading.ok;
  }

  /** Drops the rows of the partners a reading names. */
  private apply(changes: Changes): void {
    if (changes === 'all' || changes.includes('*')) {
      this.invalidate();
      return;
    }
    const ids = new Set<number>();
    for (const tag of changes) if (tag.startsWith('p')) ids.add(Number(tag.slice(1)));
    if (ids.size === 0) return;
    this.generation++;
    for (const [key, row] of this.rows) if (ids.has(row.id)) this.rows.delete(key);
    this.emit('invalidated');
  }

  /** Whether rows may be served from memory (enabled, and the change feed was read last time). */
  get caching(): boolean {
    return this.keptBy?.live === true;
  }

  invalidate(): void {
    this.generation++;
    this.rows.clear();
    this.emit('invalidated');
  }

  close(): void {
    this.rows.clear();
    this.detach();
    this.stopLocal();
  }
}

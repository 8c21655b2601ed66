// The one change feed of the in-memory copies (the answer cache, the partner cache): the table
// `answer_changes`, to which triggers (migrations 012, 013, 024) write a tag for every row changed in
// the tables those copies are built from, whoever changes it (this server, the CLI, another instance
// or cluster worker, an operator's SQL): `u{id}` a user, `s{id}` a subject, `i{partner}.{subject}`
// one partner's pushes about a subject, `p{id}` a partner, `*` everything (a truncated table).
//
// This class holds the rule every copy follows: nothing is served from memory while the feed cannot
// be read. It reads the feed, hands each reading's tags to every subscriber, and says whether memory
// may answer:
//
// - `fresh()`: a reading that started in the caller's own turn of the event loop or later. The
//   request being served was received before that turn began, so a change committed before the
//   request was sent is applied before it is answered. On SQLite a reading is a synchronous indexed
//   read: the first call of a turn makes it and every call of that turn gets its answer at once, not
//   a promise (a lookup from memory then costs no wait of any kind). On PostgreSQL it is a round
//   trip on a connection of its own (db/handle.ts `pgFeedPool`, so it never waits in the pool behind
//   the views' own queries), and one is in flight at a time: lookups of later turns wait for the
//   next, which starts when it ends and serves all of them, so under load one round trip serves
//   every lookup made during the one before. When a reading timed out (a stalled database), the
//   lookups waiting on it get that error at once rather than a second wait of their own.
// - `readWithin(ms)`: whether a reading that started at most `ms` ago succeeded, without waiting;
//   when the last one is older than half of that, it starts one for the lookups to come. A copy
//   that may be a moment behind (on PostgreSQL: the partner cache, and the answer cache's public
//   views) uses it, so that its hits cost no round trip while its readings stay a few a second
//   whatever the load. `readSinceWrites(ms)` also asks that the reading started after this
//   process's last write settled: a caller still reads its own writes at once (the answer cache).
//
// When a reading fails, the feed is down (`live` false, event `down`) until one succeeds (event
// `live`); that reading starts where the last good one ended, so nothing committed meanwhile is
// missed. PostgreSQL's NOTIFY is not used: a notifying transaction holds a database-wide lock
// through its commit, which serialised concurrent pushes (migration 012).
import { EventEmitter } from 'node:events';
import type { Db } from '../db/handle.js';
import { isTimedOut } from '../db/faults.js';
import { feedReader, type FeedReader } from '../repositories/answer-feed.js';

/**
 * PostgreSQL: how long ago the last good reading may have started for a copy that accepts being a
 * moment behind another process's commit (partner rows, public views) to answer from memory.
 */
export const MAX_LAG_MS = 100;

/** What a reading applied: the tags of the changed rows, or `all` when the reader cannot know. */
export type Changes = readonly string[] | 'all';

/** What a reading allows: serve and keep from memory (`ok`), or neither; `unavailable`: the database's error, answered as it is. */
export interface Freshness {
  readonly ok: boolean;
  readonly unavailable?: unknown;
}
/** A reading that allows memory to answer. */
export const FRESH: Freshness = { ok: true };
const NOT_FRESH: Freshness = { ok: false };

interface Deferred<T> {
  readonly promise: Promise<T>;
  readonly resolve: (value: T) => void;
}

/** Promise.withResolvers, which Node 20 lacks. */
function deferred<T>(): Deferred<T> {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

/** Emits `down` (a reading failed) and `live` (one succeeded again). */
export class ChangeFeed extends EventEmitter {
  /** Whether the last reading succeeded: memory may answer only then. */
  private isLive = true;
  private readonly subscribers = new Set<(changes: Changes) => void>();
  /** PostgreSQL: the reading in flight, and the one that starts when it ends (lookups that came during it). */
  private reading: Promise<Freshness> | null = null;
  private queued: Deferred<Freshness> | null = null;
  /** The reading this turn's lookups wait for (it started in this turn or starts later); on SQLite, its answer. */
  private thisTurn: Freshness | Promise<Freshness> | null = null;
  private readonly nextTurn = () => {
    this.thisTurn = null;
  };
  /** When (performance.now()) the reading in flight started, and the last one that succeeded. */
  private startedAt = Number.NEGATIVE_INFINITY;
  private lastGoodStart = Number.NEGATIVE_INFINITY;
  /** When (performance.now()) the last write of this process settled. */
  private lastWrite = Number.NEGATIVE_INFINITY;
  private readonly readingDone = (result: Freshness) => {
    if (result.ok) this.lastGoodStart = this.startedAt;
    const waiting = this.queued;
    this.queued = null;
    // The database failed after these lookups began: they get that answer, not a second wait.
    if (!waiting || result.unavailable) {
      this.reading = null;
      waiting?.resolve(result);
      return;
    }
    this.startReading();
    void this.reading!.then(waiting.resolve);
  };
  private readonly reader: FeedReader;
  private seq = 0;
  /** SQLite: a reading is a synchronous local read (db/prepared.ts, readConnection), no round trip. */
  readonly local: boolean;

  constructor(db: Db) {
    super();
    this.reader = feedReader(db);
    this.local = this.reader.local;
    // Not removed: the feed lives as long as the database handle.
    db.events.on('written', () => {
      this.lastWrite = performance.now();
    });
  }

  /**
   * Counts the readings that applied changes, bumped before their subscribers hear of them: what a
   * copy read from the database at one value reflects every change applied up to it, so comparing
   * values tells whether a row read earlier may have changed since (services/answer-cache.ts).
   */
  get sequence(): number {
    return this.seq;
  }

  /** Whether the last reading succeeded (before any reading: true, and the first reading applies `all`). */
  get live(): boolean {
    return this.isLive;
  }

  /**
   * Calls `apply` with what each reading applied, in the order read, and passes the feed's `down`
   * and `live` on to `copy` (for its tests and logs); answers the undoing of both.
   */
  subscribe(copy: EventEmitter, apply: (changes: Changes) => void): () => void {
    const down = () => copy.emit('down');
    const live = () => copy.emit('live');
    this.subscribers.add(apply);
    this.on('down', down);
    this.on('live', live);
    return () => {
      this.subscribers.delete(apply);
      this.off('down', down);
      this.off('live', live);
    };
  }

  /**
   * Applies the changes committed up to a reading that starts in this turn or later; whether memory
   * may answer. On SQLite (`local`) the answer itself, never a promise.
   */
  fresh(): Freshness | Promise<Freshness> {
    if (this.thisTurn) return this.thisTurn;
    setImmediate(this.nextTurn);
    if (this.reader.local) {
      this.startedAt = performance.now();
      const result = this.applyReading(this.reader);
      if (result.ok) this.lastGoodStart = this.startedAt;
      this.thisTurn = result;
    } else if (this.reading === null) {
      this.startReading();
      this.thisTurn = this.reading;
    } else {
      this.queued ??= deferred();
      this.thisTurn = this.queued.promise;
    }
    return this.thisTurn!;
  }

  /**
   * Whether a reading that started at most `maxAgeMs` ago succeeded (and none failed since), so
   * that every change committed more than `maxAgeMs` ago was applied. Starts a reading when none
   * is under way and the last began more than half of `maxAgeMs` ago: under steady traffic the
   * next reading lands before the last one is too old, and an idle server reads nothing.
   */
  readWithin(maxAgeMs: number): boolean {
    const now = performance.now();
    // Measured from the last reading started, good or not: while the database is away, a failing
    // reading is not retried on every call.
    if (this.reading === null && now - this.startedAt > maxAgeMs / 2) void this.fresh();
    return this.isLive && now - this.lastGoodStart <= maxAgeMs;
  }

  /** readWithin(maxAgeMs), and the reading started after every write of this process had settled. */
  readSinceWrites(maxAgeMs: number): boolean {
    return this.readWithin(maxAgeMs) && this.lastGoodStart > this.lastWrite;
  }

  /** PostgreSQL: starts a round trip (see readingDone for the next). */
  private startReading(): void {
    this.startedAt = performance.now();
    this.reading = Promise.resolve(this.applyReading(this.reader));
    // Registered before any lookup's own continuation, so the hand-over to the next reading comes first.
    void this.reading.then(this.readingDone);
  }

  /** A reading: at once from a local reader, after its round trip from another. */
  private applyReading(reader: FeedReader & { local: true }): Freshness;
  private applyReading(reader: FeedReader): Freshness | Promise<Freshness>;
  private applyReading(reader: FeedReader): Freshness | Promise<Freshness> {
    let changes: Changes | Promise<Changes>;
    try {
      changes = reader.read();
    } catch (err) {
      return this.failed(err);
    }
    return changes instanceof Promise ? changes.then(this.applied, this.failed) : this.applied(changes);
  }

  private readonly failed = (err: unknown): Freshness => {
    // Not knowing what changed, nothing is served from memory until a reading succeeds.
    if (this.isLive) {
      this.isLive = false;
      this.emit('down');
    }
    return isTimedOut(err) ? { ok: false, unavailable: err } : NOT_FRESH;
  };

  private readonly applied = (changes: Changes): Freshness => {
    if (changes === 'all' || changes.length > 0) {
      this.seq++;
      for (const fn of this.subscribers) fn(changes);
    }
    if (!this.isLive) {
      this.isLive = true;
      this.emit('live');
    }
    return FRESH;
  };
}

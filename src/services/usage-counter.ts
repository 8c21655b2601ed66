// Counting partner API calls for the usage charts without a write per request: each answer adds one
// to a number in memory (a Map lookup by partner id and an array slot by operation and status
// class), and the counts go to the database in one upsert every flush interval and at shutdown.
// Every server adds its own counts, so several instances sum up. A crash loses what was counted
// since the last flush; counts a flush could not write stay in memory for the next one.
import type { Clock } from '../domain/clock.js';
import { BUCKETS_PER_STATEMENT, STATUS_CLASSES, type UsageBucket } from '../repositories/usage.js';
import type { LimitState } from './rate-limits.js';

export const HOUR_MS = 3600_000;
const CLASSES = STATUS_CLASSES.length;
/** Per operation: the proven budget's peak and limit, then the unproven one's. */
const BUDGET_SLOTS = 4;

/** One partner's counts in one hour, by operation. */
interface Tally {
  statuses: Float64Array;
  budgets: Float64Array;
}

interface Hour {
  start: number;
  tallies: Map<number, Tally>;
}

export interface UsageCounterOptions {
  clock: Clock;
  flushMs: number;
  /** Writes at most BUCKETS_PER_STATEMENT buckets; rejects when nothing of them was stored. */
  write(buckets: readonly UsageBucket[]): Promise<void>;
  /** Which of these partners still exist: asked when a write failed, since a deleted partner's counts can never be written. */
  existingPartners(ids: number[]): Promise<Set<number>>;
  /** Counts a failed flush kept are dropped once older than this (ms), so an outage cannot grow memory without end. */
  keepMs: number;
}

function statusClass(status: number): number {
  if (status === 429) return 3;
  if (status >= 500) return 4;
  if (status >= 400) return 2;
  if (status >= 300) return 1;
  return 0;
}

export class UsageCounter {
  private readonly operations: string[] = [];
  private hour: Hour = { start: -1, tallies: new Map() };
  private hourEnd = -1;
  /** Hours that ended since the last flush. */
  private ended: Hour[] = [];
  /** Buckets a failed write left, added to the next flush's. */
  private unwritten: UsageBucket[] = [];
  private timer: NodeJS.Timeout | undefined;
  private flushing: Promise<void> = Promise.resolve();
  private closed = false;
  /** Told when a flush could not write (the counts are kept); set by whoever has a logger. */
  onFlushError: (err: unknown) => void = () => {};

  constructor(private readonly options: UsageCounterOptions) {}

  /** The slot of an operation, asked once when its route is registered. */
  operation(name: string): number {
    const known = this.operations.indexOf(name);
    if (known >= 0) return known;
    if (this.hour.tallies.size > 0 || this.ended.length > 0) throw new Error('operations are registered before the first call is counted');
    return this.operations.push(name) - 1;
  }

  /** One answer of operation `op` to partner `partnerId`, with the budget it drew on (null: none applied). */
  record(partnerId: number, op: number, status: number, budget: LimitState | null, proven: boolean): void {
    const now = this.options.clock.now();
    if (now >= this.hourEnd) this.turnHour(now);
    let tally = this.hour.tallies.get(partnerId);
    if (tally === undefined) {
      tally = { statuses: new Float64Array(this.operations.length * CLASSES), budgets: new Float64Array(this.operations.length * BUDGET_SLOTS) };
      this.hour.tallies.set(partnerId, tally);
    }
    tally.statuses[op * CLASSES + statusClass(status)]!++;
    if (budget !== null) {
      const slot = op * BUDGET_SLOTS + (proven ? 0 : 2);
      const used = budget.limit - budget.remaining;
      if (used > tally.budgets[slot]!) {
        tally.budgets[slot] = used;
        tally.budgets[slot + 1] = budget.limit;
      }
    }
  }

  private turnHour(now: number): void {
    if (this.hour.tallies.size > 0) this.ended.push(this.hour);
    const start = now - (now % HOUR_MS);
    this.hour = { start, tallies: new Map() };
    this.hourEnd = start + HOUR_MS;
    if (this.timer === undefined && !this.closed) {
      this.timer = setInterval(() => void this.flush(), this.options.flushMs);
      this.timer.unref();
    }
  }

  /**
   * Writes everything counted so far; one flush at a time. Never rejects: what could not be written
   * stays for the next flush, and onFlushError hears why.
   */
  flush(): Promise<void> {
    this.flushing = this.flushing.then(() => this.writeOut());
    return this.flushing;
  }

  /** Stops the timer and writes what is left (at shutdown, before the database closes). */
  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.timer);
    this.timer = undefined;
    await this.flush();
  }

  private async writeOut(): Promise<void> {
    const hours = [...this.ended, this.hour];
    this.ended = [];
    this.hour = { start: this.hour.start, tallies: new Map() };
    const buckets = this.buckets(hours);
    if (buckets.length === 0) return;
    const chunks: UsageBucket[][] = [];
    for (let i = 0; i < buckets.length; i += BUCKETS_PER_STATEMENT) chunks.push(buckets.slice(i, i + BUCKETS_PER_STATEMENT));
    await Promise.all(chunks.map((c) => this.writeChunk(c)));
  }

  private async writeChunk(chunk: UsageBucket[]): Promise<void> {
    if (await this.tryWrite(chunk)) return;
    // A partner deleted since its calls were counted fails the whole statement, at every try.
    const alive = await this.options.existingPartners([...new Set(chunk.map((b) => b.partnerId))]).catch(() => null);
    const rest = alive ? chunk.filter((b) => alive.has(b.partnerId)) : chunk;
    if (rest.length < chunk.length && (await this.tryWrite(rest))) return;
    const oldest = this.options.clock.now() - this.options.keepMs;
    this.unwritten.push(...rest.filter((b) => b.hourStart >= oldest));
  }

  private async tryWrite(buckets: UsageBucket[]): Promise<boolean> {
    try {
      await this.options.write(buckets);
      return true;
    } catch (err) {
      this.onFlushError(err);
      return false;
    }
  }

  /** The counts as rows, one per partner, hour and operation, with what an earlier flush left merged in. */
  private buckets(hours: Hour[]): UsageBucket[] {
    const byKey = new Map<string, UsageBucket>();
    for (const b of this.unwritten) byKey.set(`${b.partnerId}:${b.hourStart}:${b.operation}`, b);
    this.unwritten = [];
    for (const hour of hours) {
      for (const [partnerId, tally] of hour.tallies) {
        this.operations.forEach((operation, op) => {
          const s = tally.statuses.subarray(op * CLASSES, (op + 1) * CLASSES);
          const g = tally.budgets.subarray(op * BUDGET_SLOTS, (op + 1) * BUDGET_SLOTS);
          if (s.every((n) => n === 0)) return;
          const key = `${partnerId}:${hour.start}:${operation}`;
          const earlier = byKey.get(key);
          const bucket: UsageBucket = earlier ?? {
            partnerId,
            hourStart: hour.start,
            operation,
            statuses: { '2xx': 0, '3xx': 0, '4xx': 0, '429': 0, '5xx': 0 },
            proven: { used: 0, limit: 0 },
            unproven: { used: 0, limit: 0 },
          };
          STATUS_CLASSES.forEach((c, i) => {
            bucket.statuses[c] += s[i]!;
          });
          if (g[0]! > bucket.proven.used) bucket.proven = { used: g[0]!, limit: g[1]! };
          if (g[2]! > bucket.unproven.used) bucket.unproven = { used: g[2]!, limit: g[3]! };
          byKey.set(key, bucket);
        });
      }
    }
    return [...byKey.values()];
  }
}

// Credential-failure throttles (SPEC §4.5, §12): counted in the database (or Redis when configured)
// so they hold across restarts and instances, and checked *before* any password hashing.
import type { Db } from '../db/handle.js';
import type { Clock } from '../domain/clock.js';
import { countFailure, deleteThrottle, findThrottle } from '../repositories/throttles.js';
import type { RedisLink } from './redis-link.js';

export interface FailureThrottle {
  /** Seconds until `key` may try again, or 0 when it is under `limit`. */
  blockedFor(key: string, limit: number): Promise<number>;
  /** Counts one failure in a fixed window of `windowSeconds` starting at the first failure. */
  recordFailure(key: string, windowSeconds: number): Promise<void>;
  reset(key: string): Promise<void>;
}

export class DbFailureThrottle implements FailureThrottle {
  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
  ) {}

  async blockedFor(key: string, limit: number): Promise<number> {
    const now = this.clock.now();
    const row = await findThrottle(this.db, key);
    if (!row || row.expires_at <= now || row.count < limit) return 0;
    return Math.max(1, Math.ceil((row.expires_at - now) / 1000));
  }

  async recordFailure(key: string, windowSeconds: number): Promise<void> {
    const now = this.clock.now();
    const expires = now + windowSeconds * 1000;
    await this.db.write((w) => countFailure(w, key, now, expires));
  }

  async reset(key: string): Promise<void> {
    await this.db.write((w) => deleteThrottle(w, key));
  }
}

/** Counts in this process: what RedisFailureThrottle falls back to while Redis is down. */
export class MemoryFailureThrottle implements FailureThrottle {
  private readonly windows = new Map<string, { count: number; expiresAt: number }>();
  private nextSweep = 0;

  async blockedFor(key: string, limit: number): Promise<number> {
    const now = Date.now();
    const w = this.windows.get(key);
    if (!w || w.expiresAt <= now || w.count < limit) return 0;
    return Math.max(1, Math.ceil((w.expiresAt - now) / 1000));
  }

  async recordFailure(key: string, windowSeconds: number): Promise<void> {
    const now = Date.now();
    if (now >= this.nextSweep) this.sweep(now);
    const w = this.windows.get(key);
    if (!w || w.expiresAt <= now) this.windows.set(key, { count: 1, expiresAt: now + windowSeconds * 1000 });
    else w.count++;
  }

  async reset(key: string): Promise<void> {
    this.windows.delete(key);
  }

  /** Drops closed windows once a minute, so a stream of distinct keys cannot grow the map without bound. */
  private sweep(now: number): void {
    for (const [key, w] of this.windows) if (w.expiresAt <= now) this.windows.delete(key);
    this.nextSweep = now + 60_000;
  }
}

/**
 * Counts in Redis, shared by every instance. While Redis is down, or when a command to it fails,
 * it counts in this process instead (stricter per instance rather than none; the right password
 * still works), and the counts kept in Redis apply again once it is back. A success during the
 * outage resets only this process's count: the one in Redis runs out with its window.
 */
export class RedisFailureThrottle implements FailureThrottle {
  private readonly fallback = new MemoryFailureThrottle();

  constructor(private readonly redis: RedisLink) {}

  private async shared<T>(inRedis: () => Promise<T>, inProcess: () => Promise<T>): Promise<T> {
    if (!this.redis.up) return inProcess();
    try {
      return await inRedis();
    } catch (err) {
      this.redis.failed(err);
      return inProcess();
    }
  }

  blockedFor(key: string, limit: number): Promise<number> {
    const k = `idsvc-throttle:${key}`;
    return this.shared(
      async () => {
        const [count, ttl] = await Promise.all([this.redis.client.get(k), this.redis.client.pttl(k)]);
        if (!count || Number(count) < limit || ttl <= 0) return 0;
        return Math.max(1, Math.ceil(ttl / 1000));
      },
      () => this.fallback.blockedFor(key, limit),
    );
  }

  recordFailure(key: string, windowSeconds: number): Promise<void> {
    const k = `idsvc-throttle:${key}`;
    return this.shared(
      async () => {
        // One transaction: the window's expiry is set with its first count, so no key can be left
        // counting without one (INCR then PEXPIRE could fail in between).
        const results = await this.redis.client
          .multi()
          .set(k, 0, 'PX', windowSeconds * 1000, 'NX')
          .incr(k)
          .exec();
        const failed = results?.find(([err]) => err);
        if (!results || failed) throw failed?.[0] ?? new Error('Redis transaction aborted');
      },
      () => this.fallback.recordFailure(key, windowSeconds),
    );
  }

  reset(key: string): Promise<void> {
    return this.shared(
      async () => void (await this.redis.client.del(`idsvc-throttle:${key}`)),
      () => this.fallback.reset(key),
    );
  }
}

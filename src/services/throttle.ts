// Credential-failure throttles (SPEC §4.5, §12): counted in the database (or Redis when configured)
// so they hold across restarts and instances, and checked *before* any password hashing.
import type { Redis } from 'ioredis';
import type { Db } from '../db/database.js';
import type { Clock } from '../domain/clock.js';

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
    const row = await this.db.kysely.selectFrom('throttles').select(['count', 'expires_at']).where('key', '=', key).executeTakeFirst();
    if (!row || row.expires_at <= now || row.count < limit) return 0;
    return Math.max(1, Math.ceil((row.expires_at - now) / 1000));
  }

  async recordFailure(key: string, windowSeconds: number): Promise<void> {
    const now = this.clock.now();
    const expires = now + windowSeconds * 1000;
    await this.db.kysely
      .insertInto('throttles')
      .values({ key, count: 1, expires_at: expires })
      .onConflict((oc) =>
        oc.column('key').doUpdateSet((eb) => ({
          // An expired window starts over; a live one counts up.
          count: eb.case().when('throttles.expires_at', '<=', now).then(1).else(eb('throttles.count', '+', 1)).end(),
          expires_at: eb.case().when('throttles.expires_at', '<=', now).then(expires).else(eb.ref('throttles.expires_at')).end(),
        })),
      )
      .execute();
  }

  async reset(key: string): Promise<void> {
    await this.db.kysely.deleteFrom('throttles').where('key', '=', key).execute();
  }
}

export class RedisFailureThrottle implements FailureThrottle {
  constructor(private readonly redis: Redis) {}

  async blockedFor(key: string, limit: number): Promise<number> {
    const k = `idsvc-throttle:${key}`;
    const [count, ttl] = await Promise.all([this.redis.get(k), this.redis.pttl(k)]);
    if (!count || Number(count) < limit || ttl <= 0) return 0;
    return Math.max(1, Math.ceil(ttl / 1000));
  }

  async recordFailure(key: string, windowSeconds: number): Promise<void> {
    const k = `idsvc-throttle:${key}`;
    const n = await this.redis.incr(k);
    if (n === 1) await this.redis.pexpire(k, windowSeconds * 1000);
  }

  async reset(key: string): Promise<void> {
    await this.redis.del(`idsvc-throttle:${key}`);
  }
}

// Request rate limits (SPEC §8): per api_key, and per client address for requests without a valid
// api_token, each a fixed window of a minute. In memory on one instance; in Redis (shared by all
// instances, through rate-limiter-flexible) when REDIS_URL is set. While Redis is down (or a
// command to it fails) the same limits are counted in this process, at once and without waiting
// for Redis: stricter per instance rather than none, and never an error. Redis's own counters,
// kept through the outage, apply again as soon as it is back (services/redis-link.ts).
import { RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
import type { RedisLink } from './redis-link.js';

export interface LimitState {
  limit: number;
  remaining: number;
  /** Seconds until the window resets. */
  resetSeconds: number;
  allowed: boolean;
}

/**
 * One fixed window a key, in this process: the window opens at the key's first request and lasts
 * `durationMs`. The same counting as rate-limiter-flexible's RateLimiterMemory, without the promise
 * and result object it builds on every call, a cost every API answer would pay, and with
 * one sweep a window instead of one timer a key.
 */
export class FixedWindowCounter {
  private readonly windows = new Map<string, { consumed: number; resetAt: number }>();
  private nextSweep = 0;

  constructor(
    private readonly points: number,
    private readonly durationMs: number,
  ) {}

  consume(key: string, now = Date.now()): LimitState {
    if (now >= this.nextSweep) this.sweep(now);
    let w = this.windows.get(key);
    if (w === undefined || w.resetAt <= now) {
      w = { consumed: 0, resetAt: now + this.durationMs };
      this.windows.set(key, w);
    }
    w.consumed++;
    const allowed = w.consumed <= this.points;
    const seconds = Math.ceil((w.resetAt - now) / 1000);
    return { limit: this.points, remaining: Math.max(0, this.points - w.consumed), resetSeconds: allowed ? seconds : Math.max(1, seconds), allowed };
  }

  /** Drops closed windows, so a stream of distinct addresses cannot grow the map without bound. */
  private sweep(now: number): void {
    for (const [key, w] of this.windows) if (w.resetAt <= now) this.windows.delete(key);
    this.nextSweep = now + this.durationMs;
  }

  get size(): number {
    return this.windows.size;
  }
}

const WINDOW_MS = 60_000;

export class RequestLimiter {
  private readonly shared = new Map<string, RateLimiterRedis>();
  private readonly local = new Map<string, FixedWindowCounter>();

  constructor(private readonly redis: RedisLink | null) {}

  /** One request against limit `name` for `key`: in Redis when configured and up, else in this process. */
  consume(name: string, key: string, points: number): LimitState | Promise<LimitState> {
    const id = `${name}:${points}`;
    if (this.redis?.up) return this.consumeShared(this.redis, id, key, points);
    return this.counter(id, points).consume(key);
  }

  private counter(id: string, points: number): FixedWindowCounter {
    let counter = this.local.get(id);
    if (!counter) {
      counter = new FixedWindowCounter(points, WINDOW_MS);
      this.local.set(id, counter);
    }
    return counter;
  }

  private async consumeShared(redis: RedisLink, id: string, key: string, points: number): Promise<LimitState> {
    let l = this.shared.get(id);
    if (!l) {
      l = new RateLimiterRedis({ storeClient: redis.client, points, duration: WINDOW_MS / 1000, keyPrefix: `idsvc-rl-${id}` });
      this.shared.set(id, l);
    }
    try {
      const r = await l.consume(key);
      return { limit: points, remaining: r.remainingPoints, resetSeconds: Math.ceil(r.msBeforeNext / 1000), allowed: true };
    } catch (e) {
      if (e instanceof RateLimiterRes) {
        return { limit: points, remaining: 0, resetSeconds: Math.max(1, Math.ceil(e.msBeforeNext / 1000)), allowed: false };
      }
      // Redis failed this call (timed out, connection lost): count it here, and skip Redis until it is back.
      redis.failed(e);
      return this.counter(id, points).consume(key);
    }
  }
}

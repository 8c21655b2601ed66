// Request rate limits (SPEC §8): per api_key, and per client address for requests without a valid
// api_token. In memory on one instance; in Redis (shared by all instances) when REDIS_URL is set,
// with an in-memory insurance limiter so a Redis outage degrades to per-instance limits, not errors.
import type { Redis } from 'ioredis';
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible';

export interface LimitState {
  limit: number;
  remaining: number;
  /** Seconds until the window resets. */
  resetSeconds: number;
  allowed: boolean;
}

export class RequestLimiter {
  private readonly limiters = new Map<string, RateLimiterAbstract>();

  constructor(private readonly redis: Redis | null) {}

  private limiter(name: string, points: number): RateLimiterAbstract {
    const id = `${name}:${points}`;
    let l = this.limiters.get(id);
    if (!l) {
      const memory = new RateLimiterMemory({ points, duration: 60, keyPrefix: `idsvc-${id}` });
      l = this.redis
        ? new RateLimiterRedis({ storeClient: this.redis, points, duration: 60, keyPrefix: `idsvc-rl-${id}`, insuranceLimiter: memory })
        : memory;
      this.limiters.set(id, l);
    }
    return l;
  }

  async consume(name: string, key: string, points: number): Promise<LimitState> {
    try {
      const r = await this.limiter(name, points).consume(key);
      return { limit: points, remaining: r.remainingPoints, resetSeconds: Math.ceil(r.msBeforeNext / 1000), allowed: true };
    } catch (e) {
      if (e instanceof RateLimiterRes) {
        return { limit: points, remaining: 0, resetSeconds: Math.max(1, Math.ceil(e.msBeforeNext / 1000)), allowed: false };
      }
      throw e;
    }
  }
}

import type { FastifyInstance } from 'fastify';
import { Gauge } from 'prom-client';
import type { AppContext } from '../context.js';
import { isReachable } from '../db/database.js';
import { UNAVAILABLE_RETRY_SECONDS } from '../domain/errors.js';
import type { Metrics } from '../http/metrics.js';
import { registerMetricsAccess } from './metrics-access.js';

/**
 * How long /readyz waits for the database before it says "down": load balancers probe with short
 * timeouts of their own, and a healthy database answers `select 1` in far less.
 */
const READINESS_WITHIN_MS = 500;

export function registerOps(app: FastifyInstance, ctx: AppContext, metrics: Metrics): void {
  const hidden = { hide: true } as const;
  // Correct either way, but slower while 0: on PostgreSQL worth an alert (docs/operations.md).
  gauge(
    metrics,
    'idsvc_partner_cache_listening',
    '1 while partner rows are served from memory (PARTNER_CACHE=1, and the change feed was read last time), else 0',
    () => (ctx.partners.caching ? 1 : 0),
  );
  gauge(
    metrics,
    'idsvc_answer_cache_listening',
    '1 while rendered answers are served from memory (ANSWER_CACHE_MB > 0, and its change feed was read last time), else 0',
    () => (ctx.answers.caching ? 1 : 0),
  );
  gauge(metrics, 'idsvc_answer_cache_bytes', 'Estimated memory held by the answer cache (bounded by ANSWER_CACHE_MB)', () => ctx.answers.bytes);
  new Gauge({
    name: 'idsvc_answer_cache_lookups',
    help: 'Answer cache lookups since start, by outcome (hit: from memory; miss: rendered from the database)',
    labelNames: ['outcome'],
    registers: [metrics.registry],
    collect() {
      this.set({ outcome: 'hit' }, ctx.answers.hits);
      this.set({ outcome: 'miss' }, ctx.answers.misses);
    },
  });
  new Gauge({
    name: 'idsvc_replica_reads',
    help: 'Per read replica (DATABASE_READ_URL, named by address): 1 while it takes public reads, 0 while it is skipped (behind, down, promoted or not checked yet)',
    labelNames: ['replica'],
    registers: [metrics.registry],
    collect() {
      for (const r of ctx.db.replicaStatus()) this.set({ replica: r.replica }, r.state === 'ok' ? 1 : 0);
    },
  });
  new Gauge({
    name: 'idsvc_replica_lag_seconds',
    help: 'Per read replica: how far behind the primary it was at its last check (an upper bound); absent while it does not answer',
    labelNames: ['replica'],
    registers: [metrics.registry],
    collect() {
      this.reset();
      for (const r of ctx.db.replicaStatus()) if (r.lag_ms !== null) this.set({ replica: r.replica }, r.lag_ms / 1000);
    },
  });
  app.get('/healthz', { config: { kind: 'ops' }, schema: hidden }, async () => ({ status: 'ok' }));
  // Ready means the database answers. Redis is reported but does not decide: an instance without
  // it still serves (limits count in the process), and taking every instance out of a load
  // balancer for a cache outage would be worse.
  app.get('/readyz', { config: { kind: 'ops' }, schema: hidden }, async (_req, reply) => {
    const database = (await isReachable(ctx.db, READINESS_WITHIN_MS)) ? 'up' : 'down';
    const redis = ctx.redis ? { redis: ctx.redis.up ? 'up' : 'down' } : {};
    // Like Redis, replicas are reported but do not decide: reads they cannot take go to the primary.
    const status = ctx.db.replicaStatus();
    const replicas = status.length > 0 ? { replicas: status } : {};
    if (database === 'down') reply.header('Retry-After', String(UNAVAILABLE_RETRY_SECONDS));
    return reply.code(database === 'up' ? 200 : 503).send({ status: database === 'up' ? 'ready' : 'unavailable', database, ...redis, ...replicas });
  });
  registerMetricsAccess(app, ctx.config, metrics);
}

/** A gauge read from the running process each time the metrics are scraped. */
function gauge(metrics: Metrics, name: string, help: string, read: () => number): void {
  new Gauge({
    name,
    help,
    registers: [metrics.registry],
    collect() {
      this.set(read());
    },
  });
}

import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../context.js';
import { isReachable } from '../db/database.js';
import type { Metrics } from '../http/metrics.js';

export function registerOps(app: FastifyInstance, ctx: AppContext, metrics: Metrics): void {
  const hidden = { hide: true } as const;
  app.get('/healthz', { config: { kind: 'ops' }, schema: hidden }, async () => ({ status: 'ok' }));
  app.get('/readyz', { config: { kind: 'ops' }, schema: hidden }, async (_req, reply) => {
    const ok = await isReachable(ctx.db);
    return reply.code(ok ? 200 : 503).send({ status: ok ? 'ready' : 'database unreachable' });
  });
  app.get('/metrics', { config: { kind: 'ops' }, schema: hidden }, async (_req, reply) =>
    reply.type(metrics.registry.contentType).send(await metrics.registry.metrics()),
  );
}

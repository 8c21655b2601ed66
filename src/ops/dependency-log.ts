// One log line when a dependency goes and one when it returns (docs/operations.md, "When a
// dependency fails"), as JSON like every other line: the context reports state changes as events,
// the app's logger writes them.
import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../context.js';
import { unavailableCause } from '../db/faults.js';
import type { ReplicaStatus } from '../db/handle.js';

export function logDependencyChanges(app: FastifyInstance, ctx: AppContext): void {
  const log = app.log;
  const { redis } = ctx;
  let redisDown = false;
  const onRedisDown = (reason: string | null) => {
    redisDown = true;
    log.warn({ dependency: 'redis', state: 'down', reason }, 'Redis unreachable: rate limits and credential throttles count in this process until it is back');
  };
  const onRedisUp = () => {
    if (!redisDown) return; // the first connection is not news
    redisDown = false;
    log.info({ dependency: 'redis', state: 'up' }, 'Redis reachable again: limits and throttles are shared again');
  };
  // Only the driver's code: a connection error's message may name the server's address.
  const onConnectionLost = (err: unknown) =>
    log.warn({ dependency: 'database', cause: unavailableCause(err) ?? 'unknown' }, 'database connection lost; a new one is opened when needed');

  // Redis may have failed before the app existed (at start-up).
  if (redis?.state === 'down') onRedisDown(redis.reason);
  redis?.on('down', onRedisDown);
  redis?.on('up', onRedisUp);
  ctx.db.events.on('connection-lost', onConnectionLost);
  // The replica named by address only (db/replicas.ts), never by its URL's credentials.
  const onReplicaState = (status: ReplicaStatus) => {
    const line = { dependency: 'replica', ...status };
    if (status.state === 'ok') log.info(line, 'read replica takes reads');
    else log.warn(line, 'read replica skipped: its reads go to the primary');
  };
  ctx.db.events.on('replica-state', onReplicaState);
  app.addHook('onClose', (_app, done) => {
    redis?.off('down', onRedisDown);
    redis?.off('up', onRedisUp);
    ctx.db.events.off('connection-lost', onConnectionLost);
    ctx.db.events.off('replica-state', onReplicaState);
    done();
  });
}

// Starts the app: listen, log where, shut down cleanly on SIGINT/SIGTERM.
import cluster from 'node:cluster';
import type { FastifyInstance } from 'fastify';
import { buildApp } from './app.js';
import type { Config } from './config.js';
import { createContext, type AppContext } from './context.js';
import { startBackgroundJobs } from './jobs/index.js';
import { startCheckpointer } from './db/checkpointer.js';
import { assertCanListen, explainListenError } from './startup-errors.js';

export interface RunningServer {
  app: FastifyInstance;
  ctx: AppContext;
  url: string;
  stop(): Promise<void>;
}

/** How long requests under way may take to finish once shutdown starts; the contract is an exit within 10 s. */
export const HTTP_GRACE_MS = 8000;
/** How long a background job under way (a webhook attempt may take 15 s) may hold up shutdown; its leased rows are retried later. */
const JOBS_GRACE_MS = 5000;

/**
 * Stops listening and lets requests under way finish. Node closes the connections idle at that
 * moment, but a keep-alive connection whose request was under way stays open once answered, until
 * its client or the keep-alive timeout (KEEP_ALIVE_TIMEOUT_MS) ends it: so idle connections are
 * closed as they appear, and whatever is still open at the grace period's end is cut.
 */
async function closeHttp(app: FastifyInstance): Promise<void> {
  const sweep = setInterval(() => app.server.closeIdleConnections(), 100);
  const cut = setTimeout(() => app.server.closeAllConnections(), HTTP_GRACE_MS);
  try {
    await app.close();
  } finally {
    clearInterval(sweep);
    clearTimeout(cut);
  }
}

export async function startServer(config: Config): Promise<RunningServer> {
  // A cluster worker shares the primary's listener, which the primary has checked already.
  if (!cluster.isWorker) await assertCanListen(config);
  const ctx = await createContext(config);
  const app = await buildApp(ctx);
  try {
    await app.listen({ port: config.port, host: config.host });
  } catch (err) {
    await app.close().catch(() => {});
    await ctx.close();
    throw explainListenError(err, { port: config.port, host: config.host, portVariable: 'PORT', hostVariable: 'HOST' });
  }
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : config.port;
  const jobs = config.backgroundJobs ? startBackgroundJobs(ctx, app.log) : { stop: async () => {} };
  // A server's writes are what checkpoints are for; the CLI's few commits leave them to the writer.
  const sqliteFile = ctx.db.sqlite && !ctx.db.sqlite.memory ? ctx.db.sqlite.name : null;
  const checkpointer = sqliteFile && config.sqliteCheckpointMs > 0 ? startCheckpointer(sqliteFile, config.sqliteCheckpointMs, app.log) : null;
  let stopping: Promise<void> | undefined;
  const stop = () =>
    (stopping ??= (async () => {
      await Promise.all([closeHttp(app), jobs.stop(JOBS_GRACE_MS)]);
      await checkpointer?.stop();
      await ctx.close();
      app.log.info('database closed');
    })());
  // Not `once`: under `--workers` a signal can arrive twice (from the terminal's or systemd's process
  // group and again from the primary), and a second one must not kill a shutdown under way.
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.on(signal, () => {
      if (stopping) return;
      app.log.info({ signal }, 'shutting down');
      stop().then(
        () => process.exit(0),
        (err: unknown) => {
          app.log.error({ err }, 'shutdown failed');
          process.exit(1);
        },
      );
    });
  }
  return { app, ctx, url: `http://${config.host.includes(':') ? `[${config.host}]` : config.host}:${port}`, stop };
}

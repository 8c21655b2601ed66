// Starts the app: listen, log where, shut down cleanly on SIGINT/SIGTERM.
import type { FastifyInstance } from 'fastify';
import { buildApp } from './app.js';
import type { Config } from './config.js';
import { createContext, type AppContext } from './context.js';
import { startBackgroundJobs } from './jobs/index.js';
import { startCheckpointer } from './db/checkpointer.js';
import { explainListenError } from './startup-errors.js';

export interface RunningServer {
  app: FastifyInstance;
  ctx: AppContext;
  url: string;
  stop(): Promise<void>;
}

export async function startServer(config: Config): Promise<RunningServer> {
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
      await jobs.stop();
      await app.close();
      await checkpointer?.stop();
      await ctx.close();
    })());
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      app.log.info({ signal }, 'shutting down');
      void stop().then(() => process.exit(0));
    });
  }
  return { app, ctx, url: `http://${config.host.includes(':') ? `[${config.host}]` : config.host}:${port}`, stop };
}

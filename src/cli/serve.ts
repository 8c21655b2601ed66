import cluster from 'node:cluster';
import type { Config } from '../config.js';
import { createContext } from '../context.js';
import { countPartners, createPartner } from '../repositories/partners.js';
import { startServer, type RunningServer } from '../server.js';
import { StartupError } from '../startup-errors.js';

/** How a cluster worker tells the primary that starting again is pointless (sysexits' EX_CONFIG). */
const EXIT_STARTUP_FAILED = 78;

/** First start: create a demo partner when none exists and print its keys once. */
async function announceDemoPartner(server: RunningServer): Promise<void> {
  const { ctx } = server;
  if ((await countPartners(ctx.db.kysely)) > 0) return;
  const created = await createPartner(ctx.db.kysely, { name: 'Demo partner' }, ctx.clock.now());
  process.stdout.write(
    [
      '',
      'No partner existed, so a demo partner was created. Its keys are shown only this once:',
      `  api_key   ${created.apiKey}`,
      `  api_token ${created.apiToken}`,
      `Try: curl ${server.url}/api/service_details/${created.apiKey}/popularity/5`,
      '',
    ].join('\n'),
  );
}

export async function runServe(config: Config, workers: number): Promise<void> {
  if (!Number.isInteger(workers) || workers < 1 || workers > 64) throw new Error('--workers must be a whole number from 1 to 64');
  if (workers > 1 && cluster.isPrimary) {
    // The primary migrates and loads the catalogue once before forking: workers doing it at the same
    // moment on a new SQLite database would race (SQLite has no migration lock), and a database that
    // cannot be used is reported once, here. Then it only supervises; workers serve on the shared port.
    const ctx = await createContext({ ...config, backgroundJobs: false, partnerCache: false, answerCacheMb: 0 });
    await ctx.close();
    for (let i = 0; i < workers; i++) cluster.fork();
    cluster.on('exit', (worker, code) => {
      // A worker that could not start (its message is already on stderr) would fail the same way again.
      if (code === EXIT_STARTUP_FAILED) {
        for (const w of Object.values(cluster.workers ?? {})) w?.kill();
        process.exit(1);
      }
      if (code !== 0) {
        process.stderr.write(`worker ${worker.process.pid} exited with ${code}; starting another\n`);
        cluster.fork();
      }
    });
    return;
  }
  let server: RunningServer;
  try {
    server = await startServer(config);
  } catch (err) {
    if (!(cluster.isWorker && err instanceof StartupError)) throw err;
    process.stderr.write(`idsvc: ${err.message}\n`);
    process.exit(EXIT_STARTUP_FAILED);
  }
  if (cluster.isPrimary || cluster.worker?.id === 1) await announceDemoPartner(server);
  server.app.log.info(`idsvc listening on ${server.url} (database: ${config.databaseUrl.startsWith('sqlite:') ? 'SQLite' : 'PostgreSQL'})`);
  if (cluster.isPrimary) process.stdout.write(`idsvc listening on ${server.url}\n`);
}

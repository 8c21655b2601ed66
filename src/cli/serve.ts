import cluster from 'node:cluster';
import type { Config } from '../config.js';
import { countPartners, createPartner } from '../repositories/partners.js';
import { startServer } from '../server.js';

/** First start: create a demo partner when none exists and print its keys once. */
async function announceDemoPartner(server: Awaited<ReturnType<typeof startServer>>): Promise<void> {
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
    // The primary only supervises; each worker migrates idempotently and serves on the shared port.
    for (let i = 0; i < workers; i++) cluster.fork();
    cluster.on('exit', (worker, code) => {
      if (code !== 0) {
        process.stderr.write(`worker ${worker.process.pid} exited with ${code}; starting another\n`);
        cluster.fork();
      }
    });
    return;
  }
  const server = await startServer(config);
  if (cluster.isPrimary || cluster.worker?.id === 1) await announceDemoPartner(server);
  server.app.log.info(`idsvc listening on ${server.url} (database: ${config.databaseUrl.startsWith('sqlite:') ? 'SQLite' : 'PostgreSQL'})`);
  if (cluster.isPrimary) process.stdout.write(`idsvc listening on ${server.url}\n`);
}

import cluster from 'node:cluster';
import fs from 'node:fs';
import path from 'node:path';
import type { Config } from '../config.js';
import { keepShortLivedObjectsYoung } from '../ops/heap-settings.js';
import { warmNextTick } from '../ops/tick-warmup.js';
import { createContext } from '../context.js';
import type { Db } from '../db/handle.js';
import { countPartners, createPartner } from '../repositories/partners.js';
import { startServer, type RunningServer } from '../server.js';
import { assertCanListen, StartupError } from '../startup-errors.js';

/** How a cluster worker tells the primary that starting again is pointless (sysexits' EX_CONFIG). */
const EXIT_STARTUP_FAILED = 78;

/** Where a first start leaves the demo partner's keys: beside the SQLite database, or ./data with PostgreSQL. */
function demoKeysFile(config: Config): string {
  const sqliteFile = config.databaseUrl.startsWith('sqlite:') ? config.databaseUrl.slice('sqlite:'.length) : ':memory:';
  return path.join(sqliteFile === ':memory:' ? path.resolve('data') : path.dirname(path.resolve(sqliteFile)), 'demo-partner.json');
}

/**
 * A first start outside production creates a demo partner so that a new install can be tried at
 * once. A production database never gets one unasked: a partner nobody ordered, with keys on a
 * disk, is a way in. Its api_token goes to a file only its owner can read, and to the terminal when
 * there is one; never into the log, which is shipped and kept elsewhere.
 */
async function createDemoPartner(server: RunningServer, config: Config, demoAsked: boolean): Promise<void> {
  const { ctx } = server;
  if (config.nodeEnv === 'production' && !demoAsked) return;
  if ((await countPartners(ctx.db)) > 0) return;
  const created = await ctx.db.write((w) => createPartner(w, { name: 'Demo partner' }, ctx.clock.now()));
  const keysFile = demoKeysFile(config);
  fs.mkdirSync(path.dirname(keysFile), { recursive: true });
  // Removed first so that the mode applies: an existing file would keep its own.
  fs.rmSync(keysFile, { force: true });
  fs.writeFileSync(keysFile, `${JSON.stringify({ api_key: created.apiKey, api_token: created.apiToken })}\n`, { mode: 0o600 });
  // warn, so that a server logging only warnings still says it: a partner exists that nobody ordered.
  server.app.log.warn({ apiKey: created.apiKey, keysFile }, `no partner existed, so a demo partner was created; its api_key and api_token are in ${keysFile}`);
  if (process.stdout.isTTY) {
    process.stdout.write(
      [
        '',
        'A demo partner was created (its keys are also in the file above):',
        `  api_key   ${created.apiKey}`,
        `  api_token ${created.apiToken}`,
        `Try: curl ${server.url}/api/service_details/${created.apiKey}/popularity/5`,
        '',
      ].join('\n'),
    );
  }
}

/**
 * The primary of `--workers N`: it serves nothing, so on SIGTERM/SIGINT it passes the signal on,
 * starts no replacements, and exits once every worker has finished its requests and closed the
 * database. If the primary dies outright, Node's cluster makes each worker exit when its channel
 * to the primary closes, so none is left serving unsupervised.
 */
function superviseWorkers(workers: number): void {
  let stopping = false;
  for (let i = 0; i < workers; i++) cluster.fork();
  cluster.on('exit', (worker, code) => {
    if (stopping) {
      if (Object.keys(cluster.workers ?? {}).length === 0) process.exit(0);
      return;
    }
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
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.on(signal, () => {
      if (stopping) return;
      stopping = true;
      // A terminal's Ctrl-C or systemd's stop reaches the workers too; a signal twice starts one shutdown.
      for (const w of Object.values(cluster.workers ?? {})) w?.process.kill(signal);
      if (Object.keys(cluster.workers ?? {}).length === 0) process.exit(0);
    });
  }
}

/**
 * Which database, and for SQLite where reads outside a write run (db/prepared.ts, readConnection):
 * an operator whose server reads on the second connection can see why (docs/operations.md).
 */
export function databaseInWords(db: Db): string {
  if (db.dialect === 'postgres') return 'PostgreSQL';
  if (db.reader === db.sqlite) return 'SQLite in memory, one connection';
  return db.readsOnWriter ? "SQLite, reads through the writer's map" : 'SQLite, reads on a second connection: other processes commit to this file';
}

export async function runServe(config: Config, workers: number, { demo = false }: { demo?: boolean } = {}): Promise<void> {
  if (!Number.isInteger(workers) || workers < 1 || workers > 64) throw new Error('--workers must be a whole number from 1 to 64');
  const demoAsked = demo || config.demo;
  if (workers > 1 && cluster.isPrimary) {
    // The primary migrates and loads the catalogue once before forking: workers doing it at the same
    // moment on a new SQLite database would race (SQLite has no migration lock), and a database that
    // cannot be used is reported once, here. Then it only supervises; workers serve on the shared port.
    await assertCanListen(config);
    const ctx = await createContext({ ...config, backgroundJobs: false, partnerCache: false, answerCacheMb: 0 });
    await ctx.close();
    superviseWorkers(workers);
    return;
  }
  keepShortLivedObjectsYoung();
  await warmNextTick();
  let server: RunningServer;
  try {
    server = await startServer(config);
  } catch (err) {
    if (!(cluster.isWorker && err instanceof StartupError)) throw err;
    process.stderr.write(`idsvc: ${err.message}\n`);
    process.exit(EXIT_STARTUP_FAILED);
  }
  if (cluster.isPrimary || cluster.worker?.id === 1) await createDemoPartner(server, config, demoAsked);
  server.app.log.info(`idsvc listening on ${server.url} (database: ${databaseInWords(server.ctx.db)})`);
  if (cluster.isPrimary) process.stdout.write(`idsvc listening on ${server.url}\n`);
}

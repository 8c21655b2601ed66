#!/usr/bin/env node
// The `idsvc` command (SPEC §13). `npm run idsvc -- …` in a checkout.
import 'dotenv/config';
import { Command } from 'commander';
import { ConfigError, loadConfig } from '../config.js';
import { createPartner } from '../repositories/partners.js';
import { backupCommand } from './backup-command.js';
import { catalogueCommands } from './catalogue-commands.js';
import { mailCommands } from './mail-commands.js';
import { partnerCommands } from './partner-commands.js';
import { userCommands } from './user-commands.js';
import { withContext, type GlobalOpts } from './run.js';
import { print } from './output.js';

const program = new Command('idsvc').description('identity aggregation service').option('--json', 'print JSON instead of text');
const globals = () => program.opts<GlobalOpts>();

async function serve(opts: { workers?: string; demo?: boolean }): Promise<void> {
  const config = loadConfig();
  const { runServe } = await import('./serve.js');
  await runServe(config, opts.workers === undefined ? 1 : Number(opts.workers), { demo: opts.demo === true });
}

program
  .command('serve')
  .description('run the HTTP server (migrates the database and loads the catalogue first)')
  .option('--workers <n>', 'processes to run (cluster mode, for several cores)')
  .option('--demo', 'on a database without partners, create a demo partner even when NODE_ENV is production (IDSVC_DEMO=1 too)')
  .action(serve);

program
  .command('migrate')
  .description('create or upgrade the database schema')
  .action(async () =>
    withContext(globals(), async (_ctx, out) => {
      print(out, { migrated: true }, () => 'database is up to date');
    }),
  );

program
  .command('demo')
  .description('create a demo partner (prints its api_key and api_token)')
  .action(async () =>
    withContext(globals(), async (ctx, out) => {
      const created = await createPartner(ctx.db.kysely, { name: 'Demo partner' }, ctx.clock.now());
      print(out, { api_key: created.apiKey, api_token: created.apiToken }, () => `demo partner\napi_key   ${created.apiKey}\napi_token ${created.apiToken}`);
    }),
  );

partnerCommands(program, globals);
userCommands(program, globals);
catalogueCommands(program, globals);
mailCommands(program, globals);
backupCommand(program, globals);

program.parseAsync().catch((err: unknown) => {
  process.stderr.write(`idsvc: ${err instanceof ConfigError || err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});

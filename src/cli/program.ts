// The `idsvc` command as a function of its arguments, environment and standard streams, so that it
// can run inside another process (the tests) as well as on its own (main.ts). Nothing here ends the
// process: a run answers its exit code.
import { Command, CommanderError } from 'commander';
import { loadConfig } from '../config.js';
import { createPartner } from '../repositories/partners.js';
import { backupCommand } from './backup-command.js';
import { catalogueCommands } from './catalogue-commands.js';
import { mailCommands } from './mail-commands.js';
import { fail, print, type CliIo, type Out } from './output.js';
import { partnerCommands } from './partner-commands.js';
import { withContext } from './run.js';
import { userCommands } from './user-commands.js';

/** Runs `idsvc ...argv` (the arguments after the command's name) and answers its exit code. */
export async function runIdsvc(argv: readonly string[], io: CliIo): Promise<number> {
  const program = new Command('idsvc')
    .description('identity aggregation service')
    .option('--json', 'print JSON instead of text')
    // Set before the subcommands are added, which inherit both.
    .exitOverride()
    .configureOutput({ writeOut: io.stdout, writeErr: io.stderr });
  const out: Out = {
    ...io,
    get json() {
      return program.opts<{ json?: boolean }>().json ?? false;
    },
    exitCode: 0,
  };
  const run = () => out;

  program
    .command('serve')
    .description('run the HTTP server (migrates the database and loads the catalogue first)')
    .option('--workers <n>', 'processes to run (cluster mode, for several cores)')
    .option('--demo', 'on a database without partners, create a demo partner even when NODE_ENV is production (IDSVC_DEMO=1 too)')
    .action(async (opts: { workers?: string; demo?: boolean }) => {
      const config = loadConfig(io.env);
      const { runServe } = await import('./serve.js');
      await runServe(config, opts.workers === undefined ? 1 : Number(opts.workers), { demo: opts.demo === true });
    });

  program
    .command('migrate')
    .description('create or upgrade the database schema')
    .action(async () =>
      withContext(run(), async (_ctx, out) => {
        print(out, { migrated: true }, () => 'database is up to date');
      }),
    );

  program
    .command('demo')
    .description('create a demo partner (prints its api_key and api_token)')
    .action(async () =>
      withContext(run(), async (ctx, out) => {
        const created = await createPartner(ctx.db.kysely, { name: 'Demo partner' }, ctx.clock.now());
        print(out, { api_key: created.apiKey, api_token: created.apiToken }, () => `demo partner\napi_key   ${created.apiKey}\napi_token ${created.apiToken}`);
      }),
    );

  partnerCommands(program, run);
  userCommands(program, run);
  catalogueCommands(program, run);
  mailCommands(program, run);
  backupCommand(program, run);

  try {
    await program.parseAsync(argv, { from: 'user' });
    return out.exitCode;
  } catch (err) {
    // Commander has already written its usage message or help; it says which exit code goes with it.
    if (err instanceof CommanderError) return err.exitCode;
    fail(out, err instanceof Error ? err.message : String(err));
    return out.exitCode;
  }
}

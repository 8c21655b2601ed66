// The `idsvc` command as a function of its arguments, environment and standard streams, so that it
// can run inside another process (the tests) as well as on its own (main.ts). Nothing here ends the
// process: a run answers its exit code.
//
// Every command and group is declared here with its description, and its code is imported only
// when it runs (a group's subcommands when that group is named): `idsvc --help` or `idsvc partner
// list` then load neither the server nor the other groups' modules, and start at once.
import { Command, CommanderError } from 'commander';
import { fail, print, type CliIo, type Out } from './output.js';
import { withContext } from './run.js';

type Group = (group: Command, run: () => Out) => void;

/** The command groups: name, description, and the module that adds their subcommands. */
const GROUPS: [name: string, description: string, load: () => Promise<Group>][] = [
  ['partner', 'manage partner applications and their keys', async () => (await import('./partner-commands.js')).partnerCommands],
  ['user', 'manage user accounts (the site does this for users themselves)', async () => (await import('./user-commands.js')).userCommands],
  ['catalogue', 'the catalogue of supported services', async () => (await import('./catalogue-commands.js')).catalogueCommands],
  ['mail', 'outgoing mail: what is queued, sent and failed', async () => (await import('./mail-commands.js')).mailCommands],
];

/** The command the arguments name (`idsvc help X` names X), skipping the global options. */
function namedCommand(argv: readonly string[]): string | undefined {
  const words = argv.filter((a) => !a.startsWith('-'));
  return words[0] === 'help' ? words[1] : words[0];
}

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
      const { loadConfig } = await import('../config.js');
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
        const { createPartner } = await import('../repositories/partners.js');
        const created = await ctx.db.write((w) => createPartner(w, { name: 'Demo partner' }, ctx.clock.now()));
        print(out, { api_key: created.apiKey, api_token: created.apiToken }, () => `demo partner\napi_key   ${created.apiKey}\napi_token ${created.apiToken}`);
      }),
    );

  const named = namedCommand(argv);
  for (const [name, description, load] of GROUPS) {
    const group = program.command(name).description(description);
    if (name === named) (await load())(group, run);
  }

  program
    .command('backup <file>')
    .description('write a consistent copy of the SQLite database to FILE while the server runs (PostgreSQL: explains pg_dump)')
    .action(async (file: string) => (await import('./backup-command.js')).runBackup(run(), file));

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

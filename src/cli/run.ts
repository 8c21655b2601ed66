import type { AppContext } from '../context.js';
import { CliError, fail, type Out } from './output.js';

/**
 * A command's links (in webhook events, mails) are built from BASE_URL. The server is given the
 * public address; a CLI run without it would write links to the local default, which partners and
 * people cannot open. Said once, on stderr, when the command first needs the address, so commands
 * that make no link stay quiet.
 */
function warnWhenBaseUrlIsRead(config: { baseUrl: string }, out: Out): void {
  const value = config.baseUrl;
  let warned = false;
  Object.defineProperty(config, 'baseUrl', {
    enumerable: true,
    get() {
      if (!warned) {
        warned = true;
        out.stderr(
          `warning: BASE_URL is not set, so the links this command writes (in webhook events and mails) point at ${value}; run the CLI with the server's settings (docs/deploy.md)\n`,
        );
      }
      return value;
    },
  });
}

/** Opens the database for one command, runs it, and closes; errors become a message and exit 1. */
export async function withContext(out: Out, fn: (ctx: AppContext, out: Out) => Promise<void>): Promise<void> {
  let ctx: AppContext | undefined;
  try {
    // Loaded here, not at the top: `idsvc --help` and argument errors never open a database.
    const { loadConfig } = await import('../config.js');
    const { createContext } = await import('../context.js');
    const config = { ...loadConfig(out.env), backgroundJobs: false, partnerCache: false, answerCacheMb: 0 };
    if (!out.env.BASE_URL?.trim()) warnWhenBaseUrlIsRead(config, out);
    ctx = await createContext(config);
    await fn(ctx, out);
  } catch (err) {
    fail(out, err instanceof Error ? err.message : String(err));
    if (!(err instanceof CliError) && out.env.IDSVC_DEBUG) out.stderr(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  } finally {
    await ctx?.close();
  }
}

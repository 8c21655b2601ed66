import type { AppContext } from '../context.js';
import { CliError, fail, type Out } from './output.js';

/** Opens the database for one command, runs it, and closes; errors become a message and exit 1. */
export async function withContext(out: Out, fn: (ctx: AppContext, out: Out) => Promise<void>): Promise<void> {
  let ctx: AppContext | undefined;
  try {
    // Loaded here, not at the top: `idsvc --help` and argument errors never open a database.
    const { loadConfig } = await import('../config.js');
    const { createContext } = await import('../context.js');
    ctx = await createContext({ ...loadConfig(out.env), backgroundJobs: false, partnerCache: false, answerCacheMb: 0 });
    await fn(ctx, out);
  } catch (err) {
    fail(out, err instanceof Error ? err.message : String(err));
    if (!(err instanceof CliError) && out.env.IDSVC_DEBUG) out.stderr(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  } finally {
    await ctx?.close();
  }
}

import { loadConfig } from '../config.js';
import { createContext, type AppContext } from '../context.js';
import { CliError, type Out } from './output.js';

export interface GlobalOpts {
  json?: boolean;
}

/** Opens the database for one command, runs it, and closes; errors become a message and exit 1. */
export async function withContext(globals: GlobalOpts, fn: (ctx: AppContext, out: Out) => Promise<void>): Promise<void> {
  const out: Out = { json: globals.json ?? false };
  let ctx: AppContext | undefined;
  try {
    ctx = await createContext({ ...loadConfig(), backgroundJobs: false, partnerCache: false, answerCacheMb: 0 });
    await fn(ctx, out);
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    if (out.json) process.stderr.write(`${JSON.stringify({ error: message })}\n`);
    else process.stderr.write(`idsvc: ${message}\n`);
    if (!(err instanceof CliError) && process.env.IDSVC_DEBUG) console.error(err);
    process.exitCode = 1;
  } finally {
    await ctx?.close();
  }
}

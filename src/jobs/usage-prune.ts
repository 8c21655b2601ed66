// Usage buckets are kept as long as the dashboard shows them (services/usage.ts), then deleted:
// the table stays at most partners × operations × 31 days × 24 hours rows.
import type { AppContext } from '../context.js';
import { pruneUsage } from '../services/usage.js';

export const USAGE_PRUNE_EVERY_MS = 3600_000;

export async function pruneOldUsage(ctx: AppContext): Promise<void> {
  await pruneUsage(ctx.db, ctx.clock.now());
}

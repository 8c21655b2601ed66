// The daily re-check of every verification method (SPEC §10, verify.ts). Runs every minute on every
// instance: new entries are checked within about a minute of appearing, every entry again about a
// day after its last check (with jitter), sooner to confirm a negative or once a host that asked
// us to wait may be asked. Rows are claimed first, so instances share the work.
import type { FastifyBaseLogger } from 'fastify';
import type { AppContext } from '../context.js';
import { claimDueIdentities, verifyIdentity } from '../verification/verify.js';

export const REVERIFY_EVERY_MS = 60_000;
const BATCH = 20;
const CONCURRENCY = 4;
/** A run stops after this many checks, so one slow batch cannot hold an instance for long. */
const MAX_PER_RUN = 200;

export async function reverifyDue(ctx: AppContext, log?: FastifyBaseLogger): Promise<number> {
  let checked = 0;
  let failed = 0;
  while (checked + failed < MAX_PER_RUN) {
    const ids = await claimDueIdentities(ctx, BATCH);
    if (ids.length === 0) break;
    for (let i = 0; i < ids.length; i += CONCURRENCY) {
      const results = await Promise.allSettled(ids.slice(i, i + CONCURRENCY).map((id) => verifyIdentity(ctx, id)));
      for (const r of results) {
        if (r.status === 'fulfilled') checked++;
        else failed++;
      }
    }
  }
  // Counts only: identity URLs name people, so they stay out of the logs.
  if (checked + failed > 0) log?.info({ job: 'reverify', checked, failed }, 're-verification');
  return checked;
}

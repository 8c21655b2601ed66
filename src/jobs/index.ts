// Background work that every instance may run at once (SPEC §13): each job claims its rows in the
// database, so two instances never do the same work twice.
import type { FastifyBaseLogger } from 'fastify';
import type { AppContext } from '../context.js';
import { unavailableCause } from '../db/faults.js';
import { reverifyDue, REVERIFY_EVERY_MS } from './reverify.js';
import { sweepSite, SITE_SWEEP_EVERY_MS } from './site-sweep.js';
import { pruneOldUsage, USAGE_PRUNE_EVERY_MS } from './usage-prune.js';
import { webhookJob } from './webhooks.js';
import { mailJob } from './mail.js';
import { discoveryJob } from './discovery.js';

export interface Jobs {
  /** Starts no more runs and waits for those under way, at most `graceMs` (then they are abandoned: a leased row is retried later). */
  stop(graceMs?: number): Promise<void>;
}

type Job = { name: string; everyMs: number; run: (ctx: AppContext, log: FastifyBaseLogger) => Promise<void> };

export const JOBS: Job[] = [
  { name: 'reverify', everyMs: REVERIFY_EVERY_MS, run: async (ctx, log) => void (await reverifyDue(ctx, log)) },
  { name: 'site-sweep', everyMs: SITE_SWEEP_EVERY_MS, run: (ctx) => sweepSite(ctx) },
  { name: 'usage-prune', everyMs: USAGE_PRUNE_EVERY_MS, run: (ctx) => pruneOldUsage(ctx) },
  webhookJob,
  mailJob,
  discoveryJob,
];

export function startBackgroundJobs(ctx: AppContext, log: FastifyBaseLogger): Jobs {
  const timers: NodeJS.Timeout[] = [];
  const running = new Set<Promise<void>>();
  for (const job of JOBS) {
    let busy = false;
    const tick = () => {
      if (busy) return;
      busy = true;
      const p = job
        .run(ctx, log)
        .catch((err: unknown) => {
          // An outage is not a fault of the job: it runs again on its next tick.
          const cause = unavailableCause(err);
          if (cause) log.warn({ job: job.name, cause }, 'background job waits for the database');
          else log.error({ err, job: job.name }, 'background job failed');
        })
        .finally(() => {
          busy = false;
          running.delete(p);
        });
      running.add(p);
    };
    const t = setInterval(tick, job.everyMs);
    t.unref();
    timers.push(t);
  }
  return {
    async stop(graceMs = Number.POSITIVE_INFINITY) {
      for (const t of timers) clearInterval(t);
      let timer: NodeJS.Timeout | undefined;
      const givenUp = new Promise<void>((resolve) => {
        if (Number.isFinite(graceMs)) timer = setTimeout(resolve, graceMs);
      });
      await Promise.race([Promise.allSettled([...running]), givenUp]);
      clearTimeout(timer);
    },
  };
}

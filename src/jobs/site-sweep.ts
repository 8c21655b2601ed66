// Housekeeping for the site: expired sessions, old verification attempts and mail, expired links and
// accounts whose address was never proven are deleted.
import type { AppContext } from '../context.js';
import { deleteOldMail } from '../repositories/mail-queue.js';
import { deleteExpiredSessions } from '../repositories/sessions.js';
import { deleteAttemptsBefore } from '../repositories/verification-attempts.js';
import { sweepUnproven } from '../services/ownership.js';

export const SITE_SWEEP_EVERY_MS = 3600_000;
/** Attempts are kept this long: enough to see a pattern, not a growing archive. */
export const ATTEMPTS_KEPT_MS = 90 * 24 * 3600 * 1000;
/** Sent and failed mail stays listed (`idsvc mail list`) this long. */
export const MAIL_KEPT_MS = 30 * 24 * 3600 * 1000;

export async function sweepSite(ctx: AppContext): Promise<void> {
  const now = ctx.clock.now();
  await ctx.db.write(async (w) => {
    await deleteExpiredSessions(w, now);
    await deleteAttemptsBefore(w, now - ATTEMPTS_KEPT_MS);
    await deleteOldMail(w, now - MAIL_KEPT_MS);
  });
  await sweepUnproven(ctx);
}

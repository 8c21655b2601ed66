// Housekeeping for the site: expired sessions, passkey challenges and sign-ins left at a provider, old verification
// attempts, mail and partners' link events, expired links and accounts whose address was never proven are deleted.
import type { AppContext } from '../context.js';
import { deleteOldMail } from '../repositories/mail-queue.js';
import { deleteExpiredChallenges } from '../repositories/passkey-challenges.js';
import { deleteLinkEventsBefore } from '../repositories/partner-link-events.js';
import { deleteExpiredFlows } from '../repositories/provider-connections.js';
import { deleteExpiredSessions } from '../repositories/sessions.js';
import { deleteAttemptsBefore } from '../repositories/verification-attempts.js';
import { sweepUnproven } from '../services/ownership.js';

export const SITE_SWEEP_EVERY_MS = 3600_000;
/** Attempts are kept this long: enough to see a pattern, not a growing archive. */
export const ATTEMPTS_KEPT_MS = 90 * 24 * 3600 * 1000;
/** Sent and failed mail stays listed (`idsvc mail list`) this long. */
export const MAIL_KEPT_MS = 30 * 24 * 3600 * 1000;

/** A partner's dashboard shows its link events of the last 30 days; a day more covers every time zone. */
export const LINK_EVENTS_KEPT_MS = 31 * 24 * 3600 * 1000;

export async function sweepSite(ctx: AppContext): Promise<void> {
  const now = ctx.clock.now();
  await ctx.db.write(async (w) => {
    await deleteExpiredSessions(w, now);
    await deleteExpiredChallenges(w, now);
    await deleteExpiredFlows(w, now);
    await deleteAttemptsBefore(w, now - ATTEMPTS_KEPT_MS);
    await deleteOldMail(w, now - MAIL_KEPT_MS);
    await deleteLinkEventsBefore(w, now - LINK_EVENTS_KEPT_MS);
  });
  await sweepUnproven(ctx);
}

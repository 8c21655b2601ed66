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
  await deleteExpiredSessions(ctx.db.kysely, now);
  await deleteExpiredChallenges(ctx.db.kysely, now);
  await deleteExpiredFlows(ctx.db.kysely, now);
  await deleteAttemptsBefore(ctx.db.kysely, now - ATTEMPTS_KEPT_MS);
  await deleteOldMail(ctx.db.kysely, now - MAIL_KEPT_MS);
  await deleteLinkEventsBefore(ctx.db.kysely, now - LINK_EVENTS_KEPT_MS);
  await sweepUnproven(ctx);
}

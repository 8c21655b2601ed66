// Verifying central entries (SPEC §10): run a rel="me" check, record the attempt, and set or clear
// the verified flag, telling linked partners when it flips. Used by "verify now" on the site and by
// the re-verification job, which claims due entries so that instances never check one twice.
import type { AppContext } from '../context.js';
import { buildProfileUrl } from '../catalogue/profile-url.js';
import { claimDueIdentities as claimDue, findCentralIdentityAsChecked, identityToCheck, recordCheck } from '../repositories/central-identities.js';
import { findUserByRef } from '../repositories/users.js';
import { insertVerificationAttempt } from '../repositories/verification-attempts.js';
import { identitiesOfUser, verifiedPagesOf } from '../repositories/discovery.js';
import { announce, identityData } from '../services/central.js';
import { checkRelMe, normaliseProfileUrl, type RelMeOutcome } from './relme.js';

/** Every entry is checked again this long after its last check. */
export const RECHECK_AFTER_MS = 24 * 3600 * 1000;

export interface VerificationResult {
  outcome: RelMeOutcome;
  detail: string;
  verified: boolean;
  attemptedAt: number;
}

export function profilePageUrl(ctx: AppContext, userId: string): string {
  return `${ctx.config.baseUrl}/u/${userId}`;
}

/**
 * Normalised URLs already proven to be the user's besides the profile page: their verified
 * identities (but `exceptIdentityId`, the one being checked) and the pages "Find my identities"
 * proved. A rel="me" link to any of them proves a page too (transitive rel="me").
 */
export async function userProvenUrls(ctx: AppContext, userRef: number, exceptIdentityId?: number): Promise<string[]> {
  const snap = await ctx.catalogue.get();
  const urls: string[] = [];
  for (const r of await identitiesOfUser(ctx.db.kysely, userRef)) {
    const svc = snap.byId.get(r.svcId);
    const url = svc && r.verified && r.id !== exceptIdentityId ? buildProfileUrl(svc, r.usrSvcId) : '';
    if (url) urls.push(normaliseProfileUrl(url));
  }
  return [...urls, ...(await verifiedPagesOf(ctx.db.kysely, userRef))];
}

/**
 * Checks one central entry now and records the outcome. Returns null when the entry no longer
 * exists, or its service is disabled. When the identifier changed while the check ran, the result
 * is not recorded: it was about an address the entry no longer has.
 */
export async function verifyIdentity(ctx: AppContext, identityId: number): Promise<VerificationResult | null> {
  const db = ctx.db.kysely;
  const row = await identityToCheck(db, identityId);
  if (!row) return null;
  const svc = (await ctx.catalogue.get()).byId.get(row.svc_id);
  if (!svc) return null;
  const url = buildProfileUrl(svc, row.usr_svc_id);
  const check = url
    ? await checkRelMe(url, profilePageUrl(ctx, row.user_id), { allowPrivate: ctx.config.fetchAllowPrivate, alsoAccepted: await userProvenUrls(ctx, row.user_ref, row.id) })
    : { outcome: 'unreachable' as const, detail: `this identifier does not give an address on ${svc.svcName} that can be checked` };
  const now = ctx.clock.now();
  return db.transaction().execute(async (tx) => {
    const current = await findCentralIdentityAsChecked(tx, row.id, row.usr_svc_id);
    if (!current) return { outcome: check.outcome, detail: check.detail, verified: false, attemptedAt: now };
    const user = await findUserByRef(tx, current.user_ref);
    if (!user) throw new Error('a central entry names an account that does not exist');
    await insertVerificationAttempt(tx, { identityId: current.id, userRef: current.user_ref, svcId: current.svc_id, url, outcome: check.outcome, detail: check.detail }, now);
    const proven = check.outcome === 'verified';
    // An operator's mark is their judgement, not a backlink's: a failed check does not undo it.
    const keepOperator = !proven && current.verified && current.verified_by === 'operator';
    const verified = proven || keepOperator;
    const updated = await recordCheck(
      tx,
      current.id,
      {
        verified,
        verified_by: proven ? 'relme' : keepOperator ? 'operator' : null,
        verified_at: proven ? (current.verified && current.verified_at !== null ? current.verified_at : now) : keepOperator ? current.verified_at : null,
      },
      now,
    );
    if (updated.verified !== current.verified) await announce(tx, user, 'identity.updated', identityData(user, svc, updated), now);
    return { outcome: check.outcome, detail: check.detail, verified, attemptedAt: now };
  });
}

/**
 * Claims up to `limit` entries that are due: never checked (new, or changed, or flowed in from a
 * partner) first, then those last checked a day or more ago. A claim is a conditional UPDATE of
 * last_checked_at from the value that was read, so of several instances exactly one wins each row.
 * Entries an operator verified are left alone.
 */
export async function claimDueIdentities(ctx: AppContext, limit: number): Promise<number[]> {
  const now = ctx.clock.now();
  return claimDue(ctx.db.kysely, now, now - RECHECK_AFTER_MS, limit);
}

// Verifying central entries (SPEC §10): run a rel="me" check, record the attempt, and set or clear
// the verified flag, telling linked partners when it flips. Used by "verify now" on the site and by
// the re-verification job, which claims due entries so that instances never check one twice.
import type { ExpressionBuilder } from 'kysely';
import type { AppContext } from '../context.js';
import type { Database } from '../db/schema.js';
import { buildProfileUrl } from '../catalogue/profile-url.js';
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
 * proved. A rel="me" link to any of them proves a page too (transitive rel="me", issue 18).
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
  const row = await db
    .selectFrom('central_identities as c')
    .innerJoin('users as u', 'u.id', 'c.user_ref')
    .select(['c.id', 'c.user_ref', 'c.svc_id', 'c.usr_svc_id', 'u.user_id'])
    .where('c.id', '=', identityId)
    .executeTakeFirst();
  if (!row) return null;
  const svc = (await ctx.catalogue.get()).byId.get(row.svc_id);
  if (!svc) return null;
  const url = buildProfileUrl(svc, row.usr_svc_id);
  const check = url
    ? await checkRelMe(url, profilePageUrl(ctx, row.user_id), { allowPrivate: ctx.config.fetchAllowPrivate, alsoAccepted: await userProvenUrls(ctx, row.user_ref, row.id) })
    : { outcome: 'unreachable' as const, detail: `this identifier does not give an address on ${svc.svcName} that can be checked` };
  const now = ctx.clock.now();
  return db.transaction().execute(async (tx) => {
    const current = await tx.selectFrom('central_identities').selectAll().where('id', '=', row.id).where('usr_svc_id', '=', row.usr_svc_id).executeTakeFirst();
    if (!current) return { outcome: check.outcome, detail: check.detail, verified: false, attemptedAt: now };
    const user = await tx.selectFrom('users').selectAll().where('id', '=', current.user_ref).executeTakeFirstOrThrow();
    await tx
      .insertInto('verification_attempts')
      .values({ identity_id: current.id, user_ref: current.user_ref, svc_id: current.svc_id, url, outcome: check.outcome, detail: check.detail, attempted_at: now })
      .execute();
    const proven = check.outcome === 'verified';
    // An operator's mark is their judgement, not a backlink's: a failed check does not undo it.
    const keepOperator = !proven && current.verified === 1 && current.verified_by === 'operator';
    const verified = proven || keepOperator ? 1 : 0;
    const updated = await tx
      .updateTable('central_identities')
      .set({
        last_checked_at: now,
        verified,
        verified_by: proven ? 'relme' : keepOperator ? 'operator' : null,
        verified_at: proven ? (current.verified === 1 && current.verified_at !== null ? current.verified_at : now) : keepOperator ? current.verified_at : null,
      })
      .where('id', '=', current.id)
      .returningAll()
      .executeTakeFirstOrThrow();
    if (updated.verified !== current.verified) await announce(tx, user, 'identity.updated', identityData(user, svc, updated), now);
    return { outcome: check.outcome, detail: check.detail, verified: verified === 1, attemptedAt: now };
  });
}

/**
 * Claims up to `limit` entries that are due: never checked (new, or changed, or flowed in from a
 * partner) first, then those last checked a day or more ago. A claim is a conditional UPDATE of
 * last_checked_at from the value that was read, so of several instances exactly one wins each row.
 * Entries an operator verified are left alone.
 */
export async function claimDueIdentities(ctx: AppContext, limit: number): Promise<number[]> {
  const db = ctx.db.kysely;
  const now = ctx.clock.now();
  const notOperator = (eb: ExpressionBuilder<Database, 'central_identities'>) => eb.or([eb('verified_by', 'is', null), eb('verified_by', '<>', 'operator')]);
  const fresh = await db.selectFrom('central_identities').select(['id', 'last_checked_at']).where('last_checked_at', 'is', null).where(notOperator).orderBy('id').limit(limit).execute();
  const stale =
    fresh.length < limit
      ? await db
          .selectFrom('central_identities')
          .select(['id', 'last_checked_at'])
          .where('last_checked_at', '<=', now - RECHECK_AFTER_MS)
          .where(notOperator)
          .orderBy('last_checked_at')
          .orderBy('id')
          .limit(limit - fresh.length)
          .execute()
      : [];
  const claimed: number[] = [];
  for (const c of [...fresh, ...stale]) {
    const r = await db
      .updateTable('central_identities')
      .set({ last_checked_at: now })
      .where('id', '=', c.id)
      .where('last_checked_at', c.last_checked_at === null ? 'is' : '=', c.last_checked_at)
      .executeTakeFirst();
    if (Number(r.numUpdatedRows) === 1) claimed.push(c.id);
  }
  return claimed;
}

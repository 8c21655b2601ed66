// Verifying central entries (SPEC §10): ask every method that applies to the entry's service
// (checkers.ts; the first `verified` answer earns the mark), record each attempt with its method
// and evidence, and set or clear the mark, telling linked partners when it flips. Used by "Check
// now" on the site and by the re-check job, which claims due entries so that instances never
// check one twice.
//
// Fair to people: only a definite negative from every method asked can remove a mark, and only
// when a second check after VERIFY_CONFIRM_AFTER_SECONDS still finds it; a timeout, a 5xx, a 429
// or a DNS failure leaves the mark as it is and the entry is asked again later.
import type { AppContext } from '../context.js';
import {
  claimDueIdentities as claimDue,
  findCentralIdentityAsChecked,
  identityToCheck,
  recordCheck,
  renameCentralIdentity,
  type CentralIdentity,
} from '../repositories/central-identities.js';
import { findUserByRef, type User } from '../repositories/users.js';
import { insertVerificationAttempt } from '../repositories/verification-attempts.js';
import { announce, identityData, normaliseUsrSvcId, verificationData } from '../services/central.js';
import type { CatalogueEntry } from '../catalogue/catalogue-file.js';
import { CHECKERS } from './checkers.js';
import type { CheckOutcome, CheckSubject, VerificationMethod } from './methods.js';
import { politeFetcher } from './polite-fetch.js';
import { profilePageUrl } from './proof-text.js';

export { profilePageUrl };

const DAY_MS = 24 * 3600 * 1000;
/** Every entry is checked again about this long after its last check. */
export const RECHECK_AFTER_MS = DAY_MS;
/** Spread of the daily re-check, so entries added together are not all asked again together. */
const RECHECK_JITTER_MS = 2 * 3600 * 1000;
/** How long a claimed entry is the claimant's before another instance may take it. */
const CLAIM_LEASE_MS = 15 * 60 * 1000;

export interface VerificationResult {
  /** The outcome that decided: the first `verified`, else the first of the others. */
  outcome: CheckOutcome['result'] | 'not_checkable';
  method: VerificationMethod | null;
  detail: string;
  verified: boolean;
  attemptedAt: number;
  /** Each method's answer, in the order they were asked. */
  outcomes: CheckOutcome[];
}

function jitter(): number {
  return Math.floor(Math.random() * RECHECK_JITTER_MS);
}

/** What the checks decided, given the mark as it stood. */
interface Decision {
  verified: boolean;
  method: VerificationMethod | null;
  verifiedAt: number | null;
  evidenceUrl: string | null;
  negativeSince: number | null;
  nextCheckAt: number;
}

function decide(ctx: AppContext, current: CentralIdentity, outcomes: CheckOutcome[], now: number): Decision {
  const daily = now + RECHECK_AFTER_MS + jitter();
  const won = outcomes.find((o) => o.result === 'verified');
  if (won) {
    return {
      verified: true,
      method: won.method,
      // "First verified" survives re-checks that confirm the mark, whichever method confirms it.
      verifiedAt: current.verified && current.verified_at !== null ? current.verified_at : now,
      evidenceUrl: won.evidenceUrl,
      negativeSince: null,
      nextCheckAt: daily,
    };
  }
  const keep: Decision = {
    verified: current.verified,
    method: current.verified ? (current.verified_by as VerificationMethod | null) : null,
    verifiedAt: current.verified ? current.verified_at : null,
    evidenceUrl: current.verified ? current.evidence_url : null,
    negativeSince: current.negative_since,
    nextCheckAt: daily,
  };
  // An operator's mark is their judgement, not a check's: a failed check does not undo it.
  if (current.verified && current.verified_by === 'operator') return keep;
  // Nothing can look at this identifier: it stays as it is until its service or identifier changes.
  if (outcomes.length === 0) return keep;
  const waits = outcomes.flatMap((o) => (o.result === 'transient' ? [o.retryAfterMs ?? 0] : []));
  // Could not look: nothing changes, and the entry is asked again once the host may be asked.
  if (waits.length > 0) return { ...keep, nextCheckAt: now + Math.max(ctx.config.verifyConfirmAfterMs, ...waits) };
  // Every method asked read a definite negative.
  if (!current.verified) return { ...keep, negativeSince: null };
  const since = current.negative_since ?? now;
  if (now - since >= ctx.config.verifyConfirmAfterMs && current.negative_since !== null) {
    return { verified: false, method: null, verifiedAt: null, evidenceUrl: null, negativeSince: null, nextCheckAt: daily };
  }
  return { ...keep, negativeSince: since, nextCheckAt: since + ctx.config.verifyConfirmAfterMs };
}

async function runCheckers(ctx: AppContext, subject: CheckSubject): Promise<CheckOutcome[]> {
  const outcomes: CheckOutcome[] = [];
  for (const checker of CHECKERS) {
    if (!checker.appliesTo(subject.svc, subject.usrSvcId)) continue;
    let outcome: CheckOutcome;
    try {
      if (checker.concerns && !(await checker.concerns(ctx, subject))) continue;
      outcome = await checker.check(ctx, subject);
    } catch {
      // A checker that throws could not look; what it threw may name the person, so it is not kept.
      outcome = { method: checker.method, result: 'transient', evidenceUrl: null, detail: 'the check failed unexpectedly' };
    }
    outcomes.push(outcome);
    if (outcome.result === 'verified') break;
  }
  return outcomes;
}

async function tellPartners(
  w: Parameters<typeof recordCheck>[0],
  user: User,
  svc: CatalogueEntry,
  before: CentralIdentity,
  after: CentralIdentity,
  outcomes: CheckOutcome[],
  now: number,
): Promise<void> {
  if (after.verified === before.verified) return;
  await announce(w, user, 'identity.updated', identityData(user, svc, after), now);
  if (after.verified) {
    await announce(w, user, 'identity.verified', verificationData(user, svc, after, null), now);
  } else {
    // The reason is what became of the evidence that earned the mark: a proof text taken out of a
    // bio, not the rel="me" link the profile page never had.
    const absent = outcomes.filter((o) => o.result === 'absent');
    const reason = absent.find((o) => o.method === before.verified_by) ?? absent[0] ?? null;
    await announce(w, user, 'identity.unverified', verificationData(user, svc, after, reason), now);
  }
}

/**
 * Checks one central entry now and records the outcome. Returns null when the entry no longer
 * exists, or its service is disabled. When the identifier changed while the check ran, the result
 * is not recorded: it was about an address the entry no longer has.
 */
export async function verifyIdentity(ctx: AppContext, identityId: number): Promise<VerificationResult | null> {
  const db = ctx.db;
  const row = await identityToCheck(db, identityId);
  if (!row) return null;
  const svc = (await ctx.catalogue.get()).byId.get(row.svc_id);
  if (!svc) return null;
  const subject: CheckSubject = {
    identityId: row.id,
    userRef: row.user_ref,
    userId: row.user_id,
    svc,
    usrSvcId: row.usr_svc_id,
    profilePageUrl: profilePageUrl(ctx, row.user_id),
    proofUrl: null,
    fetch: politeFetcher(ctx),
  };
  const outcomes = await runCheckers(ctx, subject);
  const now = ctx.clock.now();
  const deciding = outcomes.find((o) => o.result === 'verified') ?? outcomes.find((o) => o.result === 'absent') ?? outcomes[0];
  return db.write(async (w) => {
    const result = (verified: boolean): VerificationResult => ({
      outcome: deciding?.result ?? 'not_checkable',
      method: deciding?.method ?? null,
      detail: deciding?.detail ?? `no method can check an identifier on ${svc.svcName}`,
      verified,
      attemptedAt: now,
      outcomes,
    });
    const current = await findCentralIdentityAsChecked(w, row.id, row.usr_svc_id);
    if (!current) return result(false);
    const user = await findUserByRef(w, current.user_ref);
    if (!user) throw new Error('a central entry names an account that does not exist');
    for (const o of outcomes) {
      await insertVerificationAttempt(
        w,
        {
          identityId: current.id,
          userRef: current.user_ref,
          svcId: current.svc_id,
          url: o.evidenceUrl ?? '',
          outcome: o.result,
          detail: o.detail,
          method: o.method,
          status: o.status ?? null,
        },
        now,
      );
    }
    const d = decide(ctx, current, outcomes, now);
    const recorded = await recordCheck(
      w,
      current.id,
      {
        verified: d.verified,
        verified_by: d.method,
        verified_at: d.verifiedAt,
        evidence_url: d.evidenceUrl,
        negative_since: d.negativeSince,
        next_check_at: d.nextCheckAt,
      },
      now,
    );
    // The account was renamed at its service (method `oauth` resolves its stable id): the entry follows.
    const renamedTo = outcomes.find((o) => o.result === 'verified')?.renamedTo;
    const updated =
      renamedTo && renamedTo !== recorded.usr_svc_id
        ? await renameCentralIdentity(w, recorded.id, { usrSvcId: renamedTo, usrSvcIdNorm: normaliseUsrSvcId(renamedTo) }, now)
        : recorded;
    if (updated !== recorded && updated.verified === current.verified) await announce(w, user, 'identity.updated', identityData(user, svc, updated), now);
    await tellPartners(w, user, svc, current, updated, outcomes, now);
    return result(updated.verified);
  });
}

/**
 * Claims up to `limit` entries that are due: never checked (new, or changed, or flowed in from a
 * partner) first, then by how long they have been due. Entries an operator verified are left alone.
 */
export async function claimDueIdentities(ctx: AppContext, limit: number): Promise<number[]> {
  const now = ctx.clock.now();
  return ctx.db.write((w) => claimDue(w, now, now + CLAIM_LEASE_MS, limit));
}

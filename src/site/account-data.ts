// What the account page shows, read in one place: the user's central entries with their latest
// check, recent verification attempts, links, and the service picker's lists.
import type { CatalogueEntry } from '../catalogue/catalogue-file.js';
import { buildProfileUrl, matchesPattern } from '../catalogue/profile-url.js';
import type { AppContext } from '../context.js';
import type { AttemptOutcome } from './views/outcomes.js';
import { centralIdentitiesWithSource } from '../repositories/central-identities.js';
import { recentAttemptsOfUser, type VerificationAttemptRow } from '../repositories/verification-attempts.js';
import { listUserLinks, type LinkSummary } from '../services/user-links.js';
import { CHECKERS } from '../verification/checkers.js';
import { profilePageUrl } from '../verification/verify.js';
import { shortProofText } from '../verification/proof-text.js';
import type { User } from '../repositories/users.js';

/** Each method's place in the order a check asks them. */
const METHOD_RANK: ReadonlyMap<string, number> = new Map(CHECKERS.map((c, i) => [c.method, i]));

export interface AttemptView {
  svcId: string;
  svcName: string;
  url: string;
  outcome: AttemptOutcome;
  method: string | null;
  status: number | null;
  detail: string;
  at: number;
}

export interface IdentityView {
  svcId: string;
  svcName: string;
  usrSvcId: string;
  url: string;
  verified: boolean;
  verifiedBy: string | null;
  verifiedAt: number | null;
  lastCheckedAt: number | null;
  evidenceUrl: string | null;
  /** Since when a definite negative has stood against the mark (removed if confirmed). */
  negativeSince: number | null;
  sourcePartner: string | null;
  /** False when the identifier does not fit the service's usual pattern (a hint, not a refusal). */
  fitsPattern: boolean;
  /** Each method's answer at the last check, in the order they were asked. */
  lastCheck: AttemptView[];
}

export interface AccountData {
  user: User;
  profileUrl: string;
  /** The short proof text, `idsvc:<host>:<userId>`. */
  shortProof: string;
  identities: IdentityView[];
  /** How long a definite negative must stand before it removes a mark (VERIFY_CONFIRM_AFTER_SECONDS). */
  confirmAfterMs: number;
  attempts: AttemptView[];
  links: LinkSummary[];
  popular: readonly CatalogueEntry[];
  services: readonly CatalogueEntry[];
  /** The longest a shared cache may still show a public answer: PUBLIC_CACHE_MAX_AGE plus PUBLIC_CACHE_STALE (unless the max-age is 0). */
  publicCacheSeconds: number;
}

export async function loadAccountData(ctx: AppContext, user: User): Promise<AccountData> {
  const db = ctx.db;
  const snap = await ctx.catalogue.get();
  const nameOf = (svcId: string) => snap.byId.get(svcId)?.svcName ?? svcId;
  const rows = await centralIdentitiesWithSource(db, user.id);
  const attemptRows = await recentAttemptsOfUser(db, user.id, 200);
  const toView = (a: VerificationAttemptRow): AttemptView => ({
    svcId: a.svc_id,
    svcName: nameOf(a.svc_id),
    url: a.url,
    outcome: a.outcome as AttemptOutcome,
    method: a.method,
    status: a.status,
    detail: a.detail,
    at: a.attempted_at,
  });
  // One check writes an attempt per method asked, all at the same time, in the order of CHECKERS:
  // going back from the newest attempt, the latest check is those at its time whose methods come
  // ever earlier in that order. Two checks within one clock tick (a coarse clock, a held test clock)
  // so stay apart, and an older check's `verified` is never shown as the latest.
  const latest = new Map<number, { at: number; views: AttemptView[]; rank: number; complete: boolean }>();
  for (const a of attemptRows) {
    const rank = a.method === null ? -1 : (METHOD_RANK.get(a.method) ?? -1);
    const seen = latest.get(a.identity_id);
    if (!seen) latest.set(a.identity_id, { at: a.attempted_at, views: [toView(a)], rank, complete: false });
    else if (seen.complete) continue;
    else if (seen.at === a.attempted_at && rank >= 0 && rank < seen.rank) {
      seen.views.unshift(toView(a));
      seen.rank = rank;
    } else seen.complete = true;
  }

  const identities: IdentityView[] = [];
  for (const r of rows) {
    const svc = snap.byId.get(r.svc_id);
    if (!svc) continue; // a disabled service: kept, not shown
    identities.push({
      svcId: r.svc_id,
      svcName: svc.svcName,
      usrSvcId: r.usr_svc_id,
      url: buildProfileUrl(svc, r.usr_svc_id),
      verified: r.verified,
      verifiedBy: r.verified_by,
      verifiedAt: r.verified_at,
      lastCheckedAt: r.last_checked_at,
      evidenceUrl: r.evidence_url,
      negativeSince: r.negative_since,
      sourcePartner: r.partner_name ?? null,
      fitsPattern: matchesPattern(svc.regexCheck, r.usr_svc_id),
      lastCheck: latest.get(r.id)?.views ?? [],
    });
  }
  identities.sort((a, b) => a.svcName.toLowerCase().localeCompare(b.svcName.toLowerCase()));
  const combined = await ctx.catalogue.ordered('combined');
  return {
    user,
    profileUrl: profilePageUrl(ctx, user.user_id),
    publicCacheSeconds: ctx.config.publicCacheMaxAgeSeconds === 0 ? 0 : ctx.config.publicCacheMaxAgeSeconds + ctx.config.publicCacheStaleSeconds,
    shortProof: shortProofText(ctx, user.user_id),
    identities,
    confirmAfterMs: ctx.config.verifyConfirmAfterMs,
    attempts: attemptRows.slice(0, 10).map(toView),
    links: await listUserLinks(ctx, user),
    popular: combined.list.slice(0, 10),
    services: snap.alphanumeric,
  };
}

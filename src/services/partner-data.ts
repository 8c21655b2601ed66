// What partners push and read (SPEC §3, §4.1, §4.3, §9): the partner repository, the merge with
// the central repository for linked users, and the visibility rules.
import { buildProfileUrl } from '../catalogue/profile-url.js';
import type { CatalogueEntry } from '../catalogue/catalogue-file.js';
import type { AppContext } from '../context.js';
import type { Handle } from '../db/handle.js';
import { ApiError, errors } from '../domain/errors.js';
import { markEvidence, type MarkEvidence } from '../domain/evidence.js';
import { isVisible } from '../domain/visibility.js';
import type { ParsedIdentifier } from '../domain/identifiers.js';
import { centralEntriesOfUser, publicRowsByIdentifier, type CentralEntry, type Evidence } from '../repositories/central-identities.js';
import { findLink, findLinkOfSubject } from '../repositories/links.js';
import { deletePushedEntry, pushedEntries, upsertPushedEntry } from '../repositories/partner-identities.js';
import type { Partner } from '../repositories/partners.js';
import { lookupOrCreatePerson, lookupPerson } from '../repositories/people.js';
import { accountRefById, findUserByRef, type AccountRef } from '../repositories/users.js';
import { pushTag, subjectTag, userTag, type AnswerTags } from './answer-cache.js';
import type { CatalogueSnapshot } from './catalogue-cache.js';
import { pushesInOneStatement, pushInOneStatement } from '../repositories/partner-pushes.js';
import { normaliseUsrSvcId, removeCentralIdentity, setCentralIdentity } from './central.js';

export interface ViewEntry {
  svc: CatalogueEntry;
  usrSvcId: string;
  /** Whether this caller may see usrSvcId (SPEC §3 rule 5). */
  showUsrSvcId: boolean;
  verified: boolean;
  updatedAt: number;
  /** How a verified entry was proven and when; null when it is not verified, or read `without-evidence`. */
  evidence: MarkEvidence | null;
}

export { isVisible };
export type { Evidence };

/** Each service's name as entries are sorted by it, lower-cased once per catalogue entry rather than in every comparison. */
const sortNames = new WeakMap<CatalogueEntry, string>();
function sortName(svc: CatalogueEntry): string {
  let name = sortNames.get(svc);
  if (name === undefined) {
    name = svc.svcName.toLowerCase();
    sortNames.set(svc, name);
  }
  return name;
}

export function bySvcName(a: ViewEntry, b: ViewEntry): number {
  const x = sortName(a.svc);
  const y = sortName(b.svc);
  return x < y ? -1 : x > y ? 1 : a.svc.svcId < b.svc.svcId ? -1 : 1;
}

export function entryUrl(e: ViewEntry): string {
  return buildProfileUrl(e.svc, e.usrSvcId);
}

/**
 * How a partner proved it is the caller (SPEC §3 rule 0): its api_token in the body, or a URL its
 * server signed (the widget, SPEC §7). The api_key alone proves nothing: it is in every page.
 */
export interface PartnerProof {
  readonly partner: Partner;
  readonly by: 'api_token' | 'widget_signature';
}

/** Who reads a central repository: a partner with proof, or anyone (the api_key alone, a visitor of the site). */
export type Reader = PartnerProof | 'anyone';

/**
 * Access to a partner's private view (SPEC §4.1): proof, or the partner's own choice of
 * `legacy_open_reads` (documented as unsafe), which serves that view, and only that view, on the key.
 */
export interface PrivateAccess {
  readonly partner: Partner;
  readonly by: PartnerProof['by'] | 'legacy_open_reads';
}

/**
 * SPEC §3 rule 5: who may see a central entry's usrSvcId. Rule 5 speaks of a partner; without proof
 * there is none, so anyone gets no usrSvcId at all, whoever the key belongs to.
 */
function showsUsrSvcId(reader: Reader | PrivateAccess, user: { pro: boolean }, sourcePartnerId: number | null): boolean {
  if (reader === 'anyone') return false;
  return reader.partner.trusted || user.pro || sourcePartnerId === reader.partner.id;
}

function centralViewEntries(rows: readonly CentralEntry[], snap: CatalogueSnapshot, user: { pro: boolean }, reader: Reader | PrivateAccess): ViewEntry[] {
  const out: ViewEntry[] = [];
  for (const r of rows) {
    const svc = snap.byId.get(r.svc_id);
    if (!svc) continue; // disabled service: kept, not shown
    out.push({
      svc,
      usrSvcId: r.usr_svc_id,
      showUsrSvcId: showsUsrSvcId(reader, user, r.source_partner_id),
      verified: r.verified,
      updatedAt: r.updated_at,
      evidence: markEvidence(r),
    });
  }
  return out;
}

/** The user's central entries as `reader` sees them (unsorted): usrSvcId only where SPEC §3 rule 5 allows. */
export async function centralEntries(
  q: Handle,
  snap: CatalogueSnapshot,
  user: AccountRef,
  reader: Reader | PrivateAccess,
  evidence: Evidence = 'with-evidence',
): Promise<ViewEntry[]> {
  return centralViewEntries(await centralEntriesOfUser(q, user.id, evidence), snap, user, reader);
}

/**
 * SPEC §3 rule 3: the central repository of an opted-in user, sorted for the answer; usrSvcId only
 * for a reader with proof. `tags` collects the rows read, for the answer cache. `from`: the
 * database, or a replica when the answer may be slightly behind (Db.behind()).
 */
export async function publicView(
  ctx: AppContext,
  reader: Reader,
  id: ParsedIdentifier,
  evidence: Evidence,
  tags?: AnswerTags,
  from: Handle = ctx.db,
): Promise<ViewEntry[]> {
  const rows = await publicRowsByIdentifier(from, id, evidence);
  const first = rows[0];
  if (first) tags?.add(userTag(first[7]));
  const user = first && { opted_in: first[0], pro: first[1] };
  // Unknown and opted-out users answer alike.
  if (!isVisible(user)) throw errors.userNotFound();
  const snap = await ctx.catalogue.get();
  const entries: ViewEntry[] = [];
  for (const [, , svcId, usrSvcId, verified, source, updatedAt, , verifiedBy, verifiedAt, lastCheckedAt, evidenceUrl] of rows) {
    // A user without entries comes back as one row of NULLs; a disabled service is kept, not shown.
    const svc = svcId === null ? undefined : snap.byId.get(svcId);
    if (!svc) continue;
    // Without the evidence columns (a view that does not show them) the row ends at userRef.
    const evidence =
      verified && verifiedBy !== undefined
        ? markEvidence({
            verified,
            verified_by: verifiedBy,
            verified_at: verifiedAt ?? null,
            last_checked_at: lastCheckedAt ?? null,
            evidence_url: evidenceUrl ?? null,
          })
        : null;
    entries.push({ svc, usrSvcId: usrSvcId ?? '', showUsrSvcId: showsUsrSvcId(reader, user, source), verified, updatedAt: updatedAt ?? 0, evidence });
  }
  return entries.sort(bySvcName);
}

/** SPEC §3 rule 4: own pushes, merged with the central repository when linked and visible. `tags` as for publicView. */
export async function privateView(ctx: AppContext, access: PrivateAccess, id: ParsedIdentifier, evidence: Evidence, tags?: AnswerTags): Promise<ViewEntry[]> {
  const partner = access.partner;
  const q = ctx.db;
  const person = await lookupPerson(q, id);
  if (person.user) tags?.add(userTag(person.user.id));
  if (person.subjectId !== undefined) {
    tags?.add(subjectTag(person.subjectId));
    tags?.add(pushTag(partner.id, person.subjectId));
  }
  // The partner's own entries and its link are read side by side: on PostgreSQL two round trips
  // on two pooled connections, waited for once.
  const [snap, pushed, link] = await Promise.all([
    ctx.catalogue.get(),
    person.subjectId !== undefined ? pushedEntries(q, partner.id, person.subjectId) : [],
    findLink(q, partner.id, person),
  ]);
  const own: ViewEntry[] = [];
  for (const r of pushed) {
    const svc = snap.byId.get(r.svc_id);
    if (svc) own.push({ svc, usrSvcId: r.usr_svc_id, showUsrSvcId: true, verified: false, updatedAt: r.updated_at, evidence: null });
  }
  let linkedUser: AccountRef | undefined;
  if (link) linkedUser = person.user?.id === link.user_ref ? person.user : await accountRefById(q, link.user_ref);
  if (link) tags?.add(userTag(link.user_ref));
  if (own.length === 0 && !isVisible(person.user) && !isVisible(linkedUser)) throw errors.userNotFound();
  if (!isVisible(linkedUser)) return own.sort(bySvcName);
  const merged = new Map(own.map((e) => [e.svc.svcId, e]));
  for (const c of await centralEntries(q, snap, linkedUser, access, evidence)) {
    const mine = merged.get(c.svc.svcId);
    // On a clash the central entry wins when verified, else the newer one.
    if (!mine || c.verified || c.updatedAt > mine.updatedAt) merged.set(c.svc.svcId, mine && mine.usrSvcId === c.usrSvcId ? { ...c, showUsrSvcId: true } : c);
  }
  return [...merged.values()].sort(bySvcName);
}

export const USR_SVC_ID_MAX = 255;

/** A usrSvcId that breaks a rule: `rule` says which, in words that follow the field's name. */
export class InvalidUsrSvcIdError extends ApiError {
  constructor(readonly rule: string) {
    super('invalid_request', `usrSvcId ${rule}`);
  }
}

export function validateUsrSvcId(raw: string | undefined): string {
  const v = (raw ?? '').trim();
  if (v.length > USR_SVC_ID_MAX) throw new InvalidUsrSvcIdError(`must be at most ${USR_SVC_ID_MAX} characters`);
  if (/[\u0000-\u001F\u007F-\u009F\u2028\u2029]/.test(v)) throw new InvalidUsrSvcIdError('must not contain control characters');
  return v;
}

/** SPEC §4.3: add, replace or remove one entry of the partner's repository (and flow it when linked). */
export async function pushIdentity(ctx: AppContext, partner: Partner, id: ParsedIdentifier, svc: CatalogueEntry, usrSvcId: string): Promise<void> {
  const now = ctx.clock.now();
  // One round trip, linked or not, where the database can (repositories/partner-pushes.ts).
  if (usrSvcId !== '' && pushesInOneStatement(ctx.db)) {
    const push = { svcId: svc.svcId, usrSvcId, usrSvcIdNorm: normaliseUsrSvcId(usrSvcId), url: buildProfileUrl(svc, usrSvcId), now };
    if (await pushInOneStatement(ctx.db, partner.id, id, push)) return;
  }
  await pushInTransaction(ctx, partner, id, svc, usrSvcId, now);
}

/**
 * The rules of a push, step by step: the path every push takes on SQLite, and on PostgreSQL a removal,
 * an e-mail identifier or a lost race. The one-statement push must do exactly what this does
 * (test/db/push-paths-agree.test.ts runs both on the same inputs and compares the rows they write).
 */
export async function pushInTransaction(
  ctx: AppContext,
  partner: Partner,
  id: ParsedIdentifier,
  svc: CatalogueEntry,
  usrSvcId: string,
  now: number,
): Promise<void> {
  // Answered only once committed; on SQLite concurrent pushes share one commit (db/group-commit.ts).
  await ctx.db.write(async (w) => {
    const person = usrSvcId === '' ? await lookupPerson(w, id) : await lookupOrCreatePerson(w, id, now);
    if (person.subjectId === undefined) return; // removing what never existed: a no-op
    const subjectId = person.subjectId;
    if (usrSvcId === '') await deletePushedEntry(w, partner.id, subjectId, svc.svcId);
    else await upsertPushedEntry(w, partner.id, subjectId, svc.svcId, usrSvcId, now);
    const link = await findLinkOfSubject(w, partner.id, subjectId);
    if (!link) return;
    const user = await findUserByRef(w, link.user_ref);
    if (!user) throw new Error('a link names an account that does not exist');
    if (usrSvcId === '') await removeCentralIdentity(w, user, svc.svcId, { partnerId: partner.id }, now);
    else await setCentralIdentity(w, user, svc, usrSvcId, { partnerId: partner.id }, now);
  });
}

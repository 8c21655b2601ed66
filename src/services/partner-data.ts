// What partners push and read (SPEC §3, §4.1, §4.3, §9): the partner repository, the merge with
// the central repository for linked users, and the visibility rules.
import type { Kysely } from 'kysely';
import { buildProfileUrl } from '../catalogue/profile-url.js';
import type { CatalogueEntry } from '../catalogue/catalogue-file.js';
import type { AppContext } from '../context.js';
import { inTx, onReader, statement, type Exec } from '../db/prepared.js';
import type { Database, PartnerRow, UserRow } from '../db/schema.js';
import { errors } from '../domain/errors.js';
import { isVisible } from '../domain/visibility.js';
import type { ParsedIdentifier } from '../domain/identifiers.js';
import { allByAccountIdentifier, lookupOrCreatePerson, lookupPerson, type AccountRef, type ByAccountIdentifier, type Person, type PersonRef } from '../repositories/people.js';
import { subjectTag, userTag, type AnswerTags } from './answer-cache.js';
import type { CatalogueSnapshot } from './catalogue-cache.js';
import { pushUnlinkedInOneStatement } from '../repositories/partner-pushes.js';
import { removeCentralIdentity, setCentralIdentity } from './central.js';

export interface ViewEntry {
  svc: CatalogueEntry;
  usrSvcId: string;
  /** Whether this caller may see usrSvcId (SPEC §3 rule 5). */
  showUsrSvcId: boolean;
  verified: boolean;
  updatedAt: number;
}

export { isVisible };

export function bySvcName(a: ViewEntry, b: ViewEntry): number {
  const x = a.svc.svcName.toLowerCase();
  const y = b.svc.svcName.toLowerCase();
  return x < y ? -1 : x > y ? 1 : a.svc.svcId < b.svc.svcId ? -1 : 1;
}

export function entryUrl(e: ViewEntry): string {
  return buildProfileUrl(e.svc, e.usrSvcId);
}

type CentralRow = { svc_id: string; usr_svc_id: string; verified: number; source_partner_id: number | null; updated_at: number };

/**
 * How a partner proved it is the caller (SPEC §3 rule 0): its api_token in the body, or a URL its
 * server signed (the widget, SPEC §7). The api_key alone proves nothing: it is in every page.
 */
export interface PartnerProof {
  readonly partner: PartnerRow;
  readonly by: 'api_token' | 'widget_signature';
}

/** Who reads a central repository: a partner with proof, or anyone (the api_key alone, a visitor of the site). */
export type Reader = PartnerProof | 'anyone';

/**
 * Access to a partner's private view (SPEC §4.1): proof, or the partner's own choice of
 * `legacy_open_reads` (documented as unsafe), which serves that view, and only that view, on the key.
 */
export interface PrivateAccess {
  readonly partner: PartnerRow;
  readonly by: PartnerProof['by'] | 'legacy_open_reads';
}

/**
 * SPEC §3 rule 5: who may see a central entry's usrSvcId. Rule 5 speaks of a partner; without proof
 * there is none, so anyone gets no usrSvcId at all, whoever the key belongs to (issue 14.2).
 */
function showsUsrSvcId(reader: Reader | PrivateAccess, user: Pick<UserRow, 'pro'>, sourcePartnerId: number | null): boolean {
  if (reader === 'anyone') return false;
  return reader.partner.trusted === 1 || user.pro === 1 || sourcePartnerId === reader.partner.id;
}

function centralViewEntries(rows: readonly CentralRow[], snap: CatalogueSnapshot, user: Pick<UserRow, 'pro'>, reader: Reader | PrivateAccess): ViewEntry[] {
  const out: ViewEntry[] = [];
  for (const r of rows) {
    const svc = snap.byId.get(r.svc_id);
    if (!svc) continue; // disabled service: kept, not shown
    out.push({
      svc,
      usrSvcId: r.usr_svc_id,
      showUsrSvcId: showsUsrSvcId(reader, user, r.source_partner_id),
      verified: r.verified === 1,
      updatedAt: r.updated_at,
    });
  }
  return out;
}

export async function centralEntries(db: Kysely<Database>, snap: CatalogueSnapshot, user: UserRow, reader: Reader): Promise<ViewEntry[]> {
  const rows = await db
    .selectFrom('central_identities')
    .select(['svc_id', 'usr_svc_id', 'verified', 'source_partner_id', 'updated_at'])
    .where('user_ref', '=', user.id)
    .execute();
  return centralViewEntries(rows, snap, user, reader);
}

// The hot paths' statements (db/prepared.ts); the same queries as the Kysely ones beside them.
const centralOf = statement<CentralRow>('SELECT svc_id, usr_svc_id, verified, source_partner_id, updated_at FROM central_identities WHERE user_ref = ?');
const ownOf = statement<{ svc_id: string; usr_svc_id: string; updated_at: number }>('SELECT svc_id, usr_svc_id, updated_at FROM partner_identities WHERE partner_id = ? AND subject_id = ?');
const firstLinkBySubjectOrUser = statement<{ user_ref: number }>('SELECT user_ref FROM links WHERE partner_id = ? AND (subject_id = ? OR user_ref = ?) ORDER BY id LIMIT 1');
const userById = statement<AccountRef>('SELECT id, opted_in, pro FROM users WHERE id = ?');
const upsertPushed = statement<never>(
  'INSERT INTO partner_identities (partner_id, subject_id, svc_id, usr_svc_id, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?) ' +
    'ON CONFLICT (partner_id, subject_id, svc_id) DO UPDATE SET usr_svc_id = excluded.usr_svc_id, updated_at = excluded.updated_at',
);
const deletePushed = statement<never>('DELETE FROM partner_identities WHERE partner_id = ? AND subject_id = ? AND svc_id = ?');
const linkOfSubject = statement<{ user_ref: number }>('SELECT user_ref FROM links WHERE partner_id = ? AND subject_id = ?');

async function centralEntriesOf(q: Exec, snap: CatalogueSnapshot, user: AccountRef, access: PrivateAccess): Promise<ViewEntry[]> {
  return centralViewEntries(await q.all(centralOf, user.id), snap, user, access);
}

/** The link between this partner and this person, if any (by subject, or by the account itself). */
export async function findLink(db: Kysely<Database>, partner: PartnerRow, person: Person) {
  if (person.subjectId === undefined && !person.user) return undefined;
  return db
    .selectFrom('links')
    .selectAll()
    .where('partner_id', '=', partner.id)
    .where((eb) => {
      const ors = [];
      if (person.subjectId !== undefined) ors.push(eb('subject_id', '=', person.subjectId));
      if (person.user) ors.push(eb('user_ref', '=', person.user.id));
      return eb.or(ors);
    })
    .orderBy('id')
    .executeTakeFirst();
}

/** The public view's row: the account's visibility fields beside each of its central entries (NULLs when it has none). */
type PublicRow = [opted_in: number, pro: number, svc_id: string | null, usr_svc_id: string | null, verified: number | null, source_partner_id: number | null, updated_at: number | null, id: number];
const publicSelect =
  'SELECT u.opted_in, u.pro, ci.svc_id, ci.usr_svc_id, ci.verified, ci.source_partner_id, ci.updated_at, u.id ' +
  'FROM users u LEFT JOIN central_identities ci ON ci.user_ref = u.id WHERE u.email_proven_at IS NOT NULL AND ';
// One indexed query per request: the account by its identifier, joined with its entries. Rows come
// as arrays and hold only what the answer uses: on the hottest read, objects and unused columns
// cost a quarter of the query (docs/performance.md).
const publicBy: ByAccountIdentifier<PublicRow> = {
  md5: statement<PublicRow>(`${publicSelect}u.email_md5 = ?`, { rowMode: 'array' }),
  sha256: statement<PublicRow>(`${publicSelect}u.email_sha256 = ?`, { rowMode: 'array' }),
  userId: statement<PublicRow>(`${publicSelect}u.user_id = ?`, { rowMode: 'array' }),
};

/**
 * SPEC §3 rule 3: the central repository of an opted-in user, sorted for the answer; usrSvcId only
 * for a reader with proof. `tags` collects the rows read, for the answer cache.
 */
export async function publicView(ctx: AppContext, reader: Reader, id: ParsedIdentifier, tags?: AnswerTags): Promise<ViewEntry[]> {
  const rows = await allByAccountIdentifier(onReader(ctx.db), publicBy, id);
  const first = rows[0];
  if (first) tags?.add(userTag(first[7]));
  const user = first && { opted_in: first[0], pro: first[1] };
  // Unknown and opted-out users answer alike.
  if (!isVisible(user)) throw errors.userNotFound();
  const snap = await ctx.catalogue.get();
  const entries: ViewEntry[] = [];
  for (const [, , svcId, usrSvcId, verified, source, updatedAt] of rows) {
    // A user without entries comes back as one row of NULLs; a disabled service is kept, not shown.
    const svc = svcId === null ? undefined : snap.byId.get(svcId);
    if (!svc) continue;
    entries.push({ svc, usrSvcId: usrSvcId ?? '', showUsrSvcId: showsUsrSvcId(reader, user, source), verified: verified === 1, updatedAt: updatedAt ?? 0 });
  }
  return entries.sort(bySvcName);
}

/** The link between this partner and this person (by subject, or by the account), as findLink. */
async function linkOf(q: Exec, partner: PartnerRow, person: PersonRef): Promise<{ user_ref: number } | undefined> {
  if (person.subjectId === undefined && !person.user) return undefined;
  // -1 never matches an id: stands in for the side that is absent.
  return q.get(firstLinkBySubjectOrUser, partner.id, person.subjectId ?? -1, person.user?.id ?? -1);
}

/** SPEC §3 rule 4: own pushes, merged with the central repository when linked and visible. `tags` as for publicView. */
export async function privateView(ctx: AppContext, access: PrivateAccess, id: ParsedIdentifier, tags?: AnswerTags): Promise<ViewEntry[]> {
  const partner = access.partner;
  const q = onReader(ctx.db);
  const person = await lookupPerson(q, id);
  if (person.user) tags?.add(userTag(person.user.id));
  if (person.subjectId !== undefined) tags?.add(subjectTag(person.subjectId));
  const snap = await ctx.catalogue.get();
  const own: ViewEntry[] = [];
  if (person.subjectId !== undefined) {
    for (const r of await q.all(ownOf, partner.id, person.subjectId)) {
      const svc = snap.byId.get(r.svc_id);
      if (svc) own.push({ svc, usrSvcId: r.usr_svc_id, showUsrSvcId: true, verified: false, updatedAt: r.updated_at });
    }
  }
  const link = await linkOf(q, partner, person);
  let linkedUser: AccountRef | undefined;
  if (link) linkedUser = person.user?.id === link.user_ref ? person.user : await q.get(userById, link.user_ref);
  if (link) tags?.add(userTag(link.user_ref));
  if (own.length === 0 && !isVisible(person.user) && !isVisible(linkedUser)) throw errors.userNotFound();
  if (!isVisible(linkedUser)) return own.sort(bySvcName);
  const merged = new Map(own.map((e) => [e.svc.svcId, e]));
  for (const c of await centralEntriesOf(q, snap, linkedUser, access)) {
    const mine = merged.get(c.svc.svcId);
    // On a clash the central entry wins when verified, else the newer one.
    if (!mine || c.verified || c.updatedAt > mine.updatedAt) merged.set(c.svc.svcId, mine && mine.usrSvcId === c.usrSvcId ? { ...c, showUsrSvcId: true } : c);
  }
  return [...merged.values()].sort(bySvcName);
}

export const USR_SVC_ID_MAX = 255;

export function validateUsrSvcId(raw: string | undefined): string {
  const v = (raw ?? '').trim();
  if (v.length > USR_SVC_ID_MAX) throw errors.invalidRequest(`usrSvcId must be at most ${USR_SVC_ID_MAX} characters`);
  if (/[\u0000-\u001F\u007F-\u009F\u2028\u2029]/.test(v)) throw errors.invalidRequest('usrSvcId must not contain control characters');
  return v;
}

/** SPEC §4.3: add, replace or remove one entry of the partner's repository (and flow it when linked). */
export async function pushIdentity(ctx: AppContext, partner: PartnerRow, id: ParsedIdentifier, svc: CatalogueEntry, usrSvcId: string): Promise<void> {
  const now = ctx.clock.now();
  // PostgreSQL, a person not linked to the partner: one round trip (repositories/partner-pushes.ts).
  if (usrSvcId !== '' && (await pushUnlinkedInOneStatement(ctx.db, partner.id, id, svc.svcId, usrSvcId, now))) return;
  // Answered only once committed; on SQLite concurrent pushes share one commit (db/group-commit.ts).
  await ctx.writes.run(async (tx) => {
    const q = inTx(ctx.db, tx);
    const person = usrSvcId === '' ? await lookupPerson(q, id) : await lookupOrCreatePerson(q, id, now);
    if (person.subjectId === undefined) return; // removing what never existed: a no-op
    const subjectId = person.subjectId;
    if (usrSvcId === '') await q.run(deletePushed, partner.id, subjectId, svc.svcId);
    else await q.run(upsertPushed, partner.id, subjectId, svc.svcId, usrSvcId, now, now);
    const link = await q.get(linkOfSubject, partner.id, subjectId);
    if (!link) return;
    const user = await tx.selectFrom('users').selectAll().where('id', '=', link.user_ref).executeTakeFirstOrThrow();
    if (usrSvcId === '') await removeCentralIdentity(tx, user, svc.svcId, { partnerId: partner.id }, now);
    else await setCentralIdentity(tx, user, svc, usrSvcId, { partnerId: partner.id }, now);
  });
}

// Links between a partner's repository for one person (a subject) and a user's account (SPEC §9).
import type { Handle, Write } from '../db/handle.js';
import { statement } from '../db/prepared.js';
import type { PersonRef } from './people.js';

export interface LinkRef {
  id: number;
  user_ref: number;
}

// The oldest of two full-key lookups, one per index: by subject (unique per partner, so at most
// one row) and by account (a partner may have linked one account under two identifiers, so the
// oldest). Written as `subject_id = ? OR user_ref = ?`, SQLite's plan depends on its statistics:
// on a database never analysed (every one until an operator runs ANALYZE) it read all of the
// partner's links and sorted them, on every private view. PostgreSQL before 16 needs the alias.
// The partner id is bound twice, once per lookup.
const firstLinkBySubjectOrUser = statement<LinkRef>(
  'SELECT id, user_ref FROM links WHERE id = (SELECT min(id) FROM (' +
    'SELECT id FROM links WHERE partner_id = ? AND subject_id = ? UNION ALL SELECT min(id) FROM links WHERE user_ref = ? AND partner_id = ?' +
    ') AS candidates)',
);
const linkBySubject = statement<LinkRef>('SELECT id, user_ref FROM links WHERE partner_id = ? AND subject_id = ?');

/** The link between this partner and this person, if any: by the person's subject, or by the account itself. */
export async function findLink(q: Handle, partnerId: number, person: PersonRef): Promise<LinkRef | undefined> {
  if (person.subjectId === undefined && !person.user) return undefined;
  // -1 never matches an id: stands in for the side that is absent.
  return q.get(firstLinkBySubjectOrUser, partnerId, person.subjectId ?? -1, person.user?.id ?? -1, partnerId);
}

/** The link this partner made for this subject (one at most). */
export function findLinkOfSubject(q: Handle, partnerId: number, subjectId: number): Promise<LinkRef | undefined> {
  return q.get(linkBySubject, partnerId, subjectId);
}

export interface NewLink {
  partnerId: number;
  subjectId: number;
  userRef: number;
  userIdentifier: string;
}

export async function insertLink(w: Write, link: NewLink, now: number): Promise<void> {
  await w.kysely
    .insertInto('links')
    .values({ partner_id: link.partnerId, subject_id: link.subjectId, user_ref: link.userRef, user_identifier: link.userIdentifier, created_at: now })
    .execute();
}

/** The person proved a different account: the link moves to it. */
export async function moveLink(w: Write, linkId: number, userRef: number, now: number): Promise<void> {
  await w.kysely.updateTable('links').set({ user_ref: userRef, created_at: now }).where('id', '=', linkId).execute();
}

export async function deleteLink(w: Write, linkId: number): Promise<void> {
  await w.kysely.deleteFrom('links').where('id', '=', linkId).execute();
}

/** A subject's links, one per partner. */
export function linksOfSubject(w: Write, subjectId: number): Promise<{ id: number; partner_id: number }[]> {
  return w.kysely.selectFrom('links').select(['id', 'partner_id']).where('subject_id', '=', subjectId).execute();
}

/** The partner's link on a subject, if any. */
export function linkOnSubject(w: Write, partnerId: number, subjectId: number): Promise<{ id: number } | undefined> {
  return w.kysely.selectFrom('links').select('id').where('partner_id', '=', partnerId).where('subject_id', '=', subjectId).executeTakeFirst();
}

/** The link now hangs off another subject. */
export async function moveLinkToSubject(w: Write, linkId: number, subjectId: number): Promise<void> {
  await w.kysely.updateTable('links').set({ subject_id: subjectId }).where('id', '=', linkId).execute();
}

export async function deleteLinksOfUser(w: Write, userRef: number, partnerId?: number): Promise<void> {
  let q = w.kysely.deleteFrom('links').where('user_ref', '=', userRef);
  if (partnerId !== undefined) q = q.where('partner_id', '=', partnerId);
  await q.execute();
}

export interface LinkedPartner {
  partner_id: number;
  user_identifier: string;
  trusted: boolean;
}

/** The partners linked to the user, once each (a partner may have linked them under two identifiers), oldest link first. */
export async function linkedPartners(w: Write, userRef: number): Promise<LinkedPartner[]> {
  const rows = await w.kysely
    .selectFrom('links as l')
    .innerJoin('partners as p', 'p.id', 'l.partner_id')
    .where('l.user_ref', '=', userRef)
    .select(['l.partner_id', 'l.user_identifier', 'p.trusted'])
    .orderBy('l.id')
    .execute();
  const seen = new Set<number>();
  const out: LinkedPartner[] = [];
  for (const r of rows) {
    if (seen.has(r.partner_id)) continue;
    seen.add(r.partner_id);
    out.push({ partner_id: r.partner_id, user_identifier: r.user_identifier, trusted: r.trusted === 1 });
  }
  return out;
}

export interface UserLinkToPartner extends LinkedPartner {
  id: number;
  partner_name: string;
}

/** Every link of this user to this partner, oldest first. */
export async function linksOfUserToPartner(w: Write, userRef: number, partnerId: number): Promise<UserLinkToPartner[]> {
  const rows = await w.kysely
    .selectFrom('links as l')
    .innerJoin('partners as p', 'p.id', 'l.partner_id')
    .where('l.user_ref', '=', userRef)
    .where('l.partner_id', '=', partnerId)
    .select(['l.id', 'l.partner_id', 'l.user_identifier', 'p.trusted', 'p.name'])
    .orderBy('l.id')
    .execute();
  return rows.map((r) => ({ id: r.id, partner_id: r.partner_id, user_identifier: r.user_identifier, trusted: r.trusted === 1, partner_name: r.name }));
}

export interface UserLinkRow {
  partner_id: number;
  partner_name: string;
  user_identifier: string;
  created_at: number;
}

/**
 * The user's links with the partners' names: by when each was made or last moved ('made', what
 * the account page lists), or in the order the rows were written ('written', the export).
 */
export async function listLinksOfUser(db: Handle, userRef: number, order: 'made' | 'written'): Promise<UserLinkRow[]> {
  let q = db.kysely
    .selectFrom('links as l')
    .innerJoin('partners as p', 'p.id', 'l.partner_id')
    .where('l.user_ref', '=', userRef)
    .select(['l.partner_id', 'p.name as partner_name', 'l.user_identifier', 'l.created_at']);
  if (order === 'made') q = q.orderBy('l.created_at');
  return q.orderBy('l.id').execute();
}

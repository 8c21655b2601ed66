// Partner repositories (SPEC §3): what each partner pushed about a person, per partner and subject.
import type { Handle, Write } from '../db/handle.js';
import { statement } from '../db/prepared.js';

export interface PushedEntry {
  svc_id: string;
  usr_svc_id: string;
  updated_at: number;
}

const ofSubject = statement<PushedEntry>('SELECT svc_id, usr_svc_id, updated_at FROM partner_identities WHERE partner_id = ? AND subject_id = ?');
const ofSubjectInOrder = statement<PushedEntry>(
  'SELECT svc_id, usr_svc_id, updated_at FROM partner_identities WHERE partner_id = ? AND subject_id = ? ORDER BY id',
);
const upsert = statement<never>(
  'INSERT INTO partner_identities (partner_id, subject_id, svc_id, usr_svc_id, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?) ' +
    'ON CONFLICT (partner_id, subject_id, svc_id) DO UPDATE SET usr_svc_id = excluded.usr_svc_id, updated_at = excluded.updated_at',
);
const remove = statement<never>('DELETE FROM partner_identities WHERE partner_id = ? AND subject_id = ? AND svc_id = ?');

/** What this partner pushed for this subject, in no particular order. */
export function pushedEntries(q: Handle, partnerId: number, subjectId: number): Promise<PushedEntry[]> {
  return q.all(ofSubject, partnerId, subjectId);
}

/** pushedEntries in the order they were first pushed (the copy-in at link time follows it). */
export function pushedEntriesInOrder(q: Handle, partnerId: number, subjectId: number): Promise<PushedEntry[]> {
  return q.all(ofSubjectInOrder, partnerId, subjectId);
}

/** Adds or replaces the partner's entry for one service. */
export async function upsertPushedEntry(q: Write, partnerId: number, subjectId: number, svcId: string, usrSvcId: string, now: number): Promise<void> {
  await q.run(upsert, partnerId, subjectId, svcId, usrSvcId, now, now);
}

export async function deletePushedEntry(q: Write, partnerId: number, subjectId: number, svcId: string): Promise<void> {
  await q.run(remove, partnerId, subjectId, svcId);
}

/** Every entry any partner pushed about the account's person, with the partner's name (the data export). */
/** A subject's entries, one per partner and service, with when each was written. */
export function entriesOfSubject(w: Write, subjectId: number): Promise<{ id: number; partner_id: number; svc_id: string; updated_at: number }[]> {
  return w.kysely.selectFrom('partner_identities').select(['id', 'partner_id', 'svc_id', 'updated_at']).where('subject_id', '=', subjectId).execute();
}

/** The partner's entry for one service on a subject, if any. */
export function entryOnSubject(w: Write, partnerId: number, subjectId: number, svcId: string): Promise<{ id: number; updated_at: number } | undefined> {
  return w.kysely
    .selectFrom('partner_identities')
    .select(['id', 'updated_at'])
    .where('partner_id', '=', partnerId)
    .where('subject_id', '=', subjectId)
    .where('svc_id', '=', svcId)
    .executeTakeFirst();
}

/** The entry now hangs off another subject. */
export async function moveEntryToSubject(w: Write, entryId: number, subjectId: number): Promise<void> {
  await w.kysely.updateTable('partner_identities').set({ subject_id: subjectId }).where('id', '=', entryId).execute();
}

export async function deleteEntry(w: Write, entryId: number): Promise<void> {
  await w.kysely.deleteFrom('partner_identities').where('id', '=', entryId).execute();
}

export async function pushedEntriesAboutUser(
  db: Handle,
  userRef: number,
): Promise<{ partner_name: string; svc_id: string; usr_svc_id: string; updated_at: number }[]> {
  return db.kysely
    .selectFrom('partner_identities as pi')
    .innerJoin('subjects as s', 's.id', 'pi.subject_id')
    .innerJoin('partners as p', 'p.id', 'pi.partner_id')
    .select(['p.name as partner_name', 'pi.svc_id', 'pi.usr_svc_id', 'pi.updated_at'])
    .where('s.user_ref', '=', userRef)
    .orderBy('p.name')
    .orderBy('pi.svc_id')
    .execute();
}

// Resolving a user_identifier to a person: the account (if any) and the subject that partner
// repositories and links hang off. Every shape of identifier for one person lands on one subject.
import type { Handle, Write } from '../db/handle.js';
import { statement, type Statement } from '../db/prepared.js';
import type { UserRow } from '../db/schema.js';
import { toUser, type AccountRef, type User } from './users.js';
import type { ParsedIdentifier } from '../domain/identifiers.js';
import { provenAccountSql } from '../domain/visibility.js';

// Prepared statements (db/prepared.ts): these lookups serve the hot paths (return_services,
// update_service) and every other caller alike.

export interface PersonRef {
  user: AccountRef | undefined;
  subjectId: number | undefined;
}

// The account and its subject in one statement, and only the columns the views use: a whole users
// row costs twice as much to read.
//
// An account whose address is not proven names nobody here (its hashes and userId answer as for an
// unknown person), so nothing about the address is attached to whoever typed it in; once proven,
// earlier pushes fold in (services/orphan-subjects.ts).
type UserAndSubject = { id: number; opted_in: number; pro: number; subject_id: number | null };
const userAndSubject = `SELECT u.id, u.opted_in, u.pro, s.id AS subject_id FROM users u LEFT JOIN subjects s ON s.user_ref = u.id WHERE ${provenAccountSql('u')} AND `;
const userBy: ByAccountIdentifier<UserAndSubject> = {
  md5: statement<UserAndSubject>(`${userAndSubject}u.email_md5 = ?`),
  sha256: statement<UserAndSubject>(`${userAndSubject}u.email_sha256 = ?`),
  userId: statement<UserAndSubject>(`${userAndSubject}u.user_id = ?`),
};
const orphanBy = {
  md5: statement<{ id: number }>('SELECT id FROM subjects WHERE email_md5 = ?'),
  sha256: statement<{ id: number }>('SELECT id FROM subjects WHERE email_sha256 = ?'),
  email: statement<{ id: number }>('SELECT id FROM subjects WHERE (email_md5 = ? OR email_sha256 = ?)'),
  userId: statement<{ id: number }>('SELECT id FROM subjects WHERE handle = ?'),
};
const completeSubjectHashes = statement<never>(
  'UPDATE subjects SET email_md5 = ?, email_sha256 = ? WHERE id = ? AND (email_md5 IS NULL OR email_sha256 IS NULL)',
);
const insertSubject = {
  user: statement<{ id: number }>('INSERT INTO subjects (user_ref, created_at) VALUES (?, ?) ON CONFLICT DO NOTHING RETURNING id'),
  md5: statement<{ id: number }>('INSERT INTO subjects (email_md5, created_at) VALUES (?, ?) ON CONFLICT DO NOTHING RETURNING id'),
  sha256: statement<{ id: number }>('INSERT INTO subjects (email_sha256, created_at) VALUES (?, ?) ON CONFLICT DO NOTHING RETURNING id'),
  email: statement<{ id: number }>('INSERT INTO subjects (email_md5, email_sha256, created_at) VALUES (?, ?, ?) ON CONFLICT DO NOTHING RETURNING id'),
  userId: statement<{ id: number }>('INSERT INTO subjects (handle, created_at) VALUES (?, ?) ON CONFLICT DO NOTHING RETURNING id'),
};

const fullUserBy: ByAccountIdentifier<UserRow> = {
  md5: statement<UserRow>(`SELECT * FROM users WHERE ${provenAccountSql()} AND email_md5 = ?`),
  sha256: statement<UserRow>(`SELECT * FROM users WHERE ${provenAccountSql()} AND email_sha256 = ?`),
  userId: statement<UserRow>(`SELECT * FROM users WHERE ${provenAccountSql()} AND user_id = ?`),
};

/** One statement per column an account is found by; an e-mail address is looked up by its MD5. */
export interface ByAccountIdentifier<Row> {
  md5: Statement<Row>;
  sha256: Statement<Row>;
  userId: Statement<Row>;
}

/** Runs the statement of `set` that finds the account `id` names; all its rows. */
export function allByAccountIdentifier<Row>(q: Handle, set: ByAccountIdentifier<Row>, id: ParsedIdentifier): Promise<Row[]> {
  switch (id.kind) {
    case 'md5':
    case 'email':
      return q.all(set.md5, id.md5);
    case 'sha256':
      return q.all(set.sha256, id.sha256);
    case 'userId':
      return q.all(set.userId, id.userId);
  }
}

/** The whole account a partner's identifier names (proven addresses only, as lookupPerson). */
export async function findUserByIdentifier(q: Handle, id: ParsedIdentifier): Promise<User | undefined> {
  const row = (await allByAccountIdentifier(q, fullUserBy, id))[0];
  return row && toUser(row);
}

async function lookupUserAndSubject(q: Handle, id: ParsedIdentifier): Promise<UserAndSubject | undefined> {
  return (await allByAccountIdentifier(q, userBy, id))[0];
}

function lookupOrphan(q: Handle, id: ParsedIdentifier): Promise<{ id: number } | undefined> {
  switch (id.kind) {
    case 'md5':
      return q.get(orphanBy.md5, id.md5);
    case 'sha256':
      return q.get(orphanBy.sha256, id.sha256);
    case 'email':
      return q.get(orphanBy.email, id.md5, id.sha256);
    case 'userId':
      return q.get(orphanBy.userId, id.userId);
  }
}

export async function lookupPerson(q: Handle, id: ParsedIdentifier): Promise<PersonRef> {
  const row = await lookupUserAndSubject(q, id);
  if (row) return { user: { id: row.id, opted_in: row.opted_in === 1, pro: row.pro === 1 }, subjectId: row.subject_id ?? undefined };
  return { user: undefined, subjectId: (await lookupOrphan(q, id))?.id };
}

export async function lookupOrCreatePerson(q: Write, id: ParsedIdentifier, now: number): Promise<{ user: AccountRef | undefined; subjectId: number }> {
  const found = await lookupPerson(q, id);
  if (found.subjectId !== undefined) {
    if (!found.user && id.kind === 'email') await q.run(completeSubjectHashes, id.md5, id.sha256, found.subjectId);
    return { user: found.user, subjectId: found.subjectId };
  }
  const row = found.user
    ? await q.get(insertSubject.user, found.user.id, now)
    : id.kind === 'md5'
      ? await q.get(insertSubject.md5, id.md5, now)
      : id.kind === 'sha256'
        ? await q.get(insertSubject.sha256, id.sha256, now)
        : id.kind === 'email'
          ? await q.get(insertSubject.email, id.md5, id.sha256, now)
          : await q.get(insertSubject.userId, id.userId, now);
  if (row) return { user: found.user, subjectId: row.id };
  const again = await lookupPerson(q, id);
  if (again.subjectId === undefined) throw new Error('subject vanished during creation');
  return { user: again.user, subjectId: again.subjectId };
}

/** The subject of an account, if a partner ever named them. */
export async function findSubjectOfUser(db: Handle, userRef: number): Promise<number | undefined> {
  return (await db.kysely.selectFrom('subjects').select('id').where('user_ref', '=', userRef).executeTakeFirst())?.id;
}

/** The subject of an account, created on demand. */
export async function subjectOfUser(db: Write, userRef: number, now: number): Promise<number> {
  const found = await findSubjectOfUser(db, userRef);
  if (found !== undefined) return found;
  const row = await db.kysely.insertInto('subjects').values({ user_ref: userRef, created_at: now }).returning('id').executeTakeFirstOrThrow();
  return row.id;
}

/** Subjects no account holds that carry one of the account's names: its e-mail hashes or its userId. */
export function orphanSubjectsNaming(w: Write, user: User): Promise<{ id: number; email_md5: string | null; email_sha256: string | null }[]> {
  return w.kysely
    .selectFrom('subjects')
    .select(['id', 'email_md5', 'email_sha256'])
    .where('user_ref', 'is', null)
    .where((eb) => eb.or([eb('email_md5', '=', user.email_md5), eb('email_sha256', '=', user.email_sha256), eb('handle', '=', user.user_id)]))
    .execute();
}

/** The subject no longer answers to a userId. */
export async function releaseHandle(w: Write, subjectId: number): Promise<void> {
  await w.kysely.updateTable('subjects').set({ handle: null }).where('id', '=', subjectId).execute();
}

export async function deleteSubject(w: Write, subjectId: number): Promise<void> {
  await w.kysely.deleteFrom('subjects').where('id', '=', subjectId).execute();
}

/**
 * An account is being deleted: its subject stays, with every name partners knew the person by (the
 * e-mail hashes and the userId), so each partner still finds its own pushes under the identifier it
 * used (SPEC §3 rule 1). Links and central entries are the caller's to remove.
 */
export async function keepSubjectOfDeletedAccount(w: Write, user: User): Promise<void> {
  await w.kysely
    .updateTable('subjects')
    .set({ user_ref: null, email_md5: user.email_md5, email_sha256: user.email_sha256, handle: user.user_id })
    .where('user_ref', '=', user.id)
    .execute();
}

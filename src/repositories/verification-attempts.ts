// The record of verification checks, one row per method asked (SPEC §10), shown on the account page and in the export.
import type { Handle, Write } from '../db/handle.js';
import type { Selectable } from 'kysely';
import type { VerificationAttemptsTable } from '../db/schema.js';

export type VerificationAttemptRow = Selectable<VerificationAttemptsTable>;

export async function insertVerificationAttempt(
  w: Write,
  a: { identityId: number; userRef: number; svcId: string; url: string; outcome: string; detail: string; method: string; status: number | null },
  now: number,
): Promise<void> {
  await w.kysely
    .insertInto('verification_attempts')
    .values({
      identity_id: a.identityId,
      user_ref: a.userRef,
      svc_id: a.svcId,
      url: a.url,
      outcome: a.outcome,
      detail: a.detail,
      method: a.method,
      status: a.status,
      attempted_at: now,
    })
    .execute();
}

/** The user's attempts, newest first, at most `limit`. */
export async function recentAttemptsOfUser(db: Handle, userRef: number, limit: number): Promise<VerificationAttemptRow[]> {
  return db.kysely
    .selectFrom('verification_attempts')
    .selectAll()
    .where('user_ref', '=', userRef)
    .orderBy('attempted_at', 'desc')
    .orderBy('id', 'desc')
    .limit(limit)
    .execute();
}

/** Every attempt of the user, oldest first (the export). */
export async function attemptsOfUser(db: Handle, userRef: number): Promise<VerificationAttemptRow[]> {
  return db.kysely.selectFrom('verification_attempts').selectAll().where('user_ref', '=', userRef).orderBy('attempted_at').orderBy('id').execute();
}

export async function deleteAttemptsOfUser(w: Write, userRef: number): Promise<void> {
  await w.kysely.deleteFrom('verification_attempts').where('user_ref', '=', userRef).execute();
}

export async function deleteAttemptsBefore(db: Write, before: number): Promise<void> {
  await db.kysely.deleteFrom('verification_attempts').where('attempted_at', '<', before).execute();
}

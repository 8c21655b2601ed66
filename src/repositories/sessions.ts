// Site sessions (SPEC §12): stored only as the SHA-256 of the cookie value, with a CSRF token.
import type { Handle, Write } from '../db/handle.js';

export async function insertSession(db: Write, s: { id: string; userRef: number; csrfToken: string; expiresAt: number }, now: number): Promise<void> {
  await db.kysely.insertInto('sessions').values({ id: s.id, user_ref: s.userRef, csrf_token: s.csrfToken, created_at: now, expires_at: s.expiresAt }).execute();
}

/** The session with this id, unless it has expired. */
export async function findLiveSession(db: Handle, id: string, now: number): Promise<{ user_ref: number; csrf_token: string } | undefined> {
  return db.kysely.selectFrom('sessions').select(['user_ref', 'csrf_token']).where('id', '=', id).where('expires_at', '>', now).executeTakeFirst();
}

export async function deleteSession(db: Write, id: string): Promise<void> {
  await db.kysely.deleteFrom('sessions').where('id', '=', id).execute();
}

/** Ends every session of the account but `keepSessionId` (the browser that made the change), if given. */
export async function endOtherSessions(db: Write, userRef: number, keepSessionId: string | null): Promise<void> {
  let q = db.kysely.deleteFrom('sessions').where('user_ref', '=', userRef);
  if (keepSessionId) q = q.where('id', '!=', keepSessionId);
  await q.execute();
}

/** The user's sessions, oldest first (the export: never their ids). */
export async function sessionTimesOfUser(db: Handle, userRef: number): Promise<{ created_at: number; expires_at: number }[]> {
  return db.kysely.selectFrom('sessions').select(['created_at', 'expires_at']).where('user_ref', '=', userRef).orderBy('created_at').execute();
}

export async function deleteExpiredSessions(db: Write, now: number): Promise<void> {
  await db.kysely.deleteFrom('sessions').where('expires_at', '<=', now).execute();
}

// Site sessions (SPEC §12): stored only as the SHA-256 of the cookie value, with a CSRF token.
import type { Queryable } from '../db/schema.js';

export async function insertSession(db: Queryable, s: { id: string; userRef: number; csrfToken: string; expiresAt: number }, now: number): Promise<void> {
  await db.insertInto('sessions').values({ id: s.id, user_ref: s.userRef, csrf_token: s.csrfToken, created_at: now, expires_at: s.expiresAt }).execute();
}

/** The session with this id, unless it has expired. */
export async function findLiveSession(db: Queryable, id: string, now: number): Promise<{ user_ref: number; csrf_token: string } | undefined> {
  return db.selectFrom('sessions').select(['user_ref', 'csrf_token']).where('id', '=', id).where('expires_at', '>', now).executeTakeFirst();
}

export async function deleteSession(db: Queryable, id: string): Promise<void> {
  await db.deleteFrom('sessions').where('id', '=', id).execute();
}

/** Ends every session of the account but `keepSessionId` (the browser that made the change), if given. */
export async function endOtherSessions(db: Queryable, userRef: number, keepSessionId: string | null): Promise<void> {
  let q = db.deleteFrom('sessions').where('user_ref', '=', userRef);
  if (keepSessionId) q = q.where('id', '!=', keepSessionId);
  await q.execute();
}

/** The user's sessions, oldest first (the export: never their ids). */
export async function sessionTimesOfUser(db: Queryable, userRef: number): Promise<{ created_at: number; expires_at: number }[]> {
  return db.selectFrom('sessions').select(['created_at', 'expires_at']).where('user_ref', '=', userRef).orderBy('created_at').execute();
}

export async function deleteExpiredSessions(db: Queryable, now: number): Promise<void> {
  await db.deleteFrom('sessions').where('expires_at', '<=', now).execute();
}

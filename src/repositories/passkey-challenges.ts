// WebAuthn challenges (migration 018): one per binding (a session adding a passkey, or a log-in
// attempt's cookie), replaced when asked for again, deleted when answered or expired.

import type { Write } from '../db/handle.js';

export interface PasskeyChallenge {
  challenge: string;
  userRef: number | null;
  /** The name of the passkey being added. */
  label: string | null;
  /** The user handle given to the authenticator for the passkey being added. */
  userHandle: string | null;
  expiresAt: number;
}

export async function saveChallenge(db: Write, binding: string, c: PasskeyChallenge): Promise<void> {
  const values = { challenge: c.challenge, user_ref: c.userRef, label: c.label, user_handle: c.userHandle, expires_at: c.expiresAt };
  await db.kysely
    .insertInto('passkey_challenges')
    .values({ binding, ...values })
    .onConflict((oc) => oc.column('binding').doUpdateSet(values))
    .execute();
}

/**
 * Takes the challenge bound to `binding` out of the table: single use, because only one of any
 * number of concurrent callers gets the deleted row. Expired ones are taken too, and not returned.
 */
export async function takeChallenge(db: Write, binding: string, now: number): Promise<PasskeyChallenge | undefined> {
  const row = await db.kysely
    .deleteFrom('passkey_challenges')
    .where('binding', '=', binding)
    .returning(['challenge', 'user_ref', 'label', 'user_handle', 'expires_at'])
    .executeTakeFirst();
  if (!row || Number(row.expires_at) <= now) return undefined;
  return { challenge: row.challenge, userRef: row.user_ref, label: row.label, userHandle: row.user_handle, expiresAt: Number(row.expires_at) };
}

export async function deleteExpiredChallenges(db: Write, now: number): Promise<void> {
  await db.kysely.deleteFrom('passkey_challenges').where('expires_at', '<=', now).execute();
}

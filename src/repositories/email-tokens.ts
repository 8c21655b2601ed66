// Single-use links sent by mail (migration 007). The link carries 32 random bytes; only their
// SHA-256 is stored, so a copy of the database opens no account. Using a link is one conditional
// UPDATE, so two clicks (or two instances) cannot both use it.
import type { Handle, Write } from '../db/handle.js';
import { randomBytes } from 'node:crypto';
import type { EmailTokenRow } from '../db/schema.js';
import { sha256 } from '../domain/secrets.js';

/** 'change': a new address for an account (`email` is the new address, `user_ref` the account). */
export type TokenPurpose = 'confirm' | 'claim' | 'reset' | 'change';

export interface NewToken {
  purpose: TokenPurpose;
  userRef: number | null;
  email: string;
  claim?: { userId: string; passwordHash: string; consented: boolean };
}

/** Stores a new token; returns the secret that goes into the link (and nowhere else). */
export async function createEmailToken(db: Write, t: NewToken, now: number, ttlMs: number): Promise<string> {
  const secret = randomBytes(32).toString('base64url');
  await db.kysely
    .insertInto('email_tokens')
    .values({
      token_hash: sha256(secret),
      purpose: t.purpose,
      user_ref: t.userRef,
      email: t.email,
      new_user_id: t.claim?.userId ?? null,
      password_hash: t.claim?.passwordHash ?? null,
      consented: t.claim ? (t.claim.consented ? 1 : 0) : null,
      created_at: now,
      expires_at: now + ttlMs,
      used_at: null,
    })
    .execute();
  return secret;
}

/** A token as it leaves this module: the claim's consent as a boolean (null for other purposes). */
export type EmailToken = Omit<EmailTokenRow, 'consented'> & { consented: boolean | null };

/** The unused, unexpired token behind a link's secret, of one of the given purposes. */
export async function findUsableToken(db: Handle, secret: string, purposes: TokenPurpose[], now: number): Promise<EmailToken | undefined> {
  if (!/^[A-Za-z0-9_-]{43}$/.test(secret)) return undefined;
  const row = await db.kysely
    .selectFrom('email_tokens')
    .selectAll()
    .where('token_hash', '=', sha256(secret))
    .where('purpose', 'in', purposes)
    .where('used_at', 'is', null)
    .where('expires_at', '>', now)
    .executeTakeFirst();
  return row && { ...row, consented: row.consented === null ? null : row.consented === 1 };
}

/** Marks the token used; false when it was used (or expired) meanwhile. */
export async function useToken(db: Write, id: number, now: number): Promise<boolean> {
  const r = await db.kysely
    .updateTable('email_tokens')
    .set({ used_at: now })
    .where('id', '=', id)
    .where('used_at', 'is', null)
    .where('expires_at', '>', now)
    .executeTakeFirst();
  return Number(r.numUpdatedRows) === 1;
}

/** Ends every open token of an account for a purpose (a newer link, or the job is done). */
export async function endUserTokens(db: Write, userRef: number, purpose: TokenPurpose, now: number): Promise<void> {
  await db.kysely
    .updateTable('email_tokens')
    .set({ used_at: now })
    .where('user_ref', '=', userRef)
    .where('purpose', '=', purpose)
    .where('used_at', 'is', null)
    .execute();
}

/** Tokens that expired before `before` are of no use to anyone. */
export async function deleteExpiredTokens(db: Write, before: number): Promise<void> {
  await db.kysely.deleteFrom('email_tokens').where('expires_at', '<', before).execute();
}

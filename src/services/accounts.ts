// Account-wide changes that partners must hear about (SPEC §3 rule 7, §12).
import type { Transaction } from 'kysely';
import type { AppContext } from '../context.js';
import type { Database, UserRow } from '../db/schema.js';
import { setUserFlags } from '../repositories/users.js';
import { announce, linkedPartners } from './central.js';

/** The user's consent; they are shown only while their address is proven too (users.opted_in). */
export async function setOptIn(ctx: AppContext, user: UserRow, optedIn: boolean): Promise<void> {
  const now = ctx.clock.now();
  await ctx.db.kysely.transaction().execute(async (tx) => {
    await setUserFlags(tx, user.id, { optedIn }, now);
    if (user.opted_in === 1 && !optedIn) await announce(tx, user, 'user.hidden', () => ({}), now);
  });
}

/**
 * Erases the user, their central entries and links; linked partners get `user.deleted`. What
 * partners pushed stays theirs: the subject keeps the e-mail hashes so each partner still finds its
 * own entries under the identifiers it used.
 */
export async function deleteAccount(ctx: AppContext, user: UserRow): Promise<void> {
  const now = ctx.clock.now();
  await ctx.db.kysely.transaction().execute((tx) => eraseAccount(tx, user, now));
}

/** deleteAccount inside the caller's transaction. */
export async function eraseAccount(tx: Transaction<Database>, user: UserRow, now: number): Promise<void> {
  const partners = await linkedPartners(tx, user.id);
  await announce(tx, user, 'user.deleted', () => ({}), now, { only: partners });
  await tx.deleteFrom('links').where('user_ref', '=', user.id).execute();
  await tx.deleteFrom('central_identities').where('user_ref', '=', user.id).execute();
  await tx.deleteFrom('sessions').where('user_ref', '=', user.id).execute();
  await tx.deleteFrom('verification_attempts').where('user_ref', '=', user.id).execute();
  await tx
    .updateTable('subjects')
    .set({ user_ref: null, email_md5: user.email_md5, email_sha256: user.email_sha256 })
    .where('user_ref', '=', user.id)
    .execute();
  await tx.deleteFrom('users').where('id', '=', user.id).execute();
}

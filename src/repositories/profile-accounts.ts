// The account behind a Gravatar-compatible profile or avatar, by the SHA-256 or MD5 of
// its e-mail address or by its userId, mapped once into a domain value: no 0/1 flag leaves this file.
import type { Handle } from '../db/handle.js';
import { profileFields, type ProfileField } from '../domain/profile.js';
import { isVisible } from '../domain/visibility.js';
import { toUser } from './users.js';
import { whereProvenAccount } from './users.js';

export type AccountLookup = { kind: 'sha256'; sha256: string } | { kind: 'md5'; md5: string } | { kind: 'userId'; userId: string };

export interface ProfileAccount {
  ref: number;
  userId: string;
  emailSha256: string;
  /** Shown to partners and visitors (domain/visibility.ts): consent and a proven address. */
  visible: boolean;
  /** The user's second consent: findable from their e-mail address (docs/spec.md, "Discoverable"). */
  discoverable: boolean;
  /** The filled-in profile fields the user made public, and only those. */
  publicFields: Partial<Record<ProfileField, string>>;
  createdAt: number;
}

export async function findProfileAccount(db: Handle, lookup: AccountLookup): Promise<ProfileAccount | undefined> {
  let q = db.kysely.selectFrom('users').selectAll();
  // An address names an account only once proven, as in every lookup by address (repositories/people.ts).
  if (lookup.kind === 'sha256') q = q.where('email_sha256', '=', lookup.sha256).where(whereProvenAccount);
  else if (lookup.kind === 'md5') q = q.where('email_md5', '=', lookup.md5).where(whereProvenAccount);
  else q = q.where('user_id', '=', lookup.userId);
  const row = await q.executeTakeFirst();
  if (!row) return undefined;
  const user = toUser(row);
  return {
    ref: row.id,
    userId: row.user_id,
    emailSha256: row.email_sha256,
    visible: isVisible(user),
    discoverable: user.discoverable,
    publicFields: profileFields(user, 'public'),
    createdAt: row.created_at,
  };
}

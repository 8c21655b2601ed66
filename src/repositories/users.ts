// Accounts. Rows leave this module as `User`s, with booleans for the 0/1 columns.
import type { Handle, Write } from '../db/handle.js';
import type { ExpressionBuilder } from 'kysely';
import { statement } from '../db/prepared.js';
import type { Database, UserRow } from '../db/schema.js';
import { emailHashes } from '../domain/identifiers.js';
import { PROFILE_FIELDS, type ProfileField } from '../domain/profile.js';

type UserFlag = 'opted_in' | 'announced_visible' | 'consented' | 'discoverable' | 'pro';
export type User = Omit<UserRow, UserFlag> & Record<UserFlag, boolean>;

export function toUser(row: UserRow): User {
  return {
    ...row,
    opted_in: row.opted_in === 1,
    announced_visible: row.announced_visible === 1,
    consented: row.consented === 1,
    discoverable: row.discoverable === 1,
    pro: row.pro === 1,
  };
}

/** The account fields the partner views need: who it is, whether it is shown, whether it is pro. */
export type AccountRef = Pick<User, 'id' | 'opted_in' | 'pro'>;

const accountById = statement<{ id: number; opted_in: number; pro: number }>('SELECT id, opted_in, pro FROM users WHERE id = ?');

export async function accountRefById(q: Handle, ref: number): Promise<AccountRef | undefined> {
  const row = await q.get(accountById, ref);
  return row && { id: row.id, opted_in: row.opted_in === 1, pro: row.pro === 1 };
}

export interface NewUserInput {
  email: string;
  userId: string;
  passwordHash: string;
  /** The user consents to be shown to partners (takes effect once the address is proven). */
  optedIn: boolean;
  /**
   * Whether the address counts as the user's already: an operator vouching for it, or a mailed
   * link just followed. An unproven account names nobody to partners and takes in nothing they
   * pushed about its address until proven (services/orphan-subjects.ts).
   */
  proven: boolean;
  /** Findable by reverse_lookup, return_contacts and WebFinger mailto:. Off unless the user chose it. */
  discoverable?: boolean;
}

export class DuplicateUserError extends Error {
  constructor(readonly field: 'email' | 'userId') {
    super(field === 'email' ? 'an account with this e-mail address already exists' : 'this userId is taken');
  }
}

/** createUser inside the caller's transaction. */
export async function insertUser(w: Write, input: NewUserInput, now: number): Promise<User> {
  const h = emailHashes(input.email);
  if (await w.kysely.selectFrom('users').select('id').where('email_md5', '=', h.md5).executeTakeFirst()) throw new DuplicateUserError('email');
  if (await w.kysely.selectFrom('users').select('id').where('user_id', '=', input.userId).executeTakeFirst()) throw new DuplicateUserError('userId');
  const user = await w.kysely
    .insertInto('users')
    .values({
      user_id: input.userId,
      email: h.email,
      email_md5: h.md5,
      email_sha256: h.sha256,
      password_hash: input.passwordHash,
      opted_in: input.optedIn && input.proven ? 1 : 0,
      // Nobody is linked to a new account yet: there is nobody to tell.
      announced_visible: input.optedIn && input.proven ? 1 : 0,
      consented: input.optedIn ? 1 : 0,
      email_proven_at: input.proven ? now : null,
      discoverable: input.discoverable ? 1 : 0,
      pro: 0,
      public_fields: '[]',
      created_at: now,
      updated_at: now,
    })
    .returningAll()
    .executeTakeFirstOrThrow()
    .then(toUser);
  return user;
}

/**
 * The owner proved the address: the account becomes visible if they consented. The account as it
 * is now, or undefined when it was proven already.
 */
export async function markEmailProven(w: Write, userRef: number, now: number): Promise<User | undefined> {
  const row = await w.kysely
    .updateTable('users')
    .set((eb) => ({ email_proven_at: now, opted_in: eb.ref('consented'), updated_at: now }))
    .where('id', '=', userRef)
    .where(whereUnprovenAccount)
    .returningAll()
    .executeTakeFirst();
  return row && toUser(row);
}

/**
 * The account's address becomes `email`, proven (its owner followed a link mailed there). Lookups
 * by the old hashes no longer find the account. An account proven only now becomes visible if it
 * consented, as in markEmailProven.
 */
export async function setProvenEmail(w: Write, userRef: number, email: string, now: number): Promise<User> {
  const h = emailHashes(email);
  const user = await w.kysely
    .updateTable('users')
    .set((eb) => ({ email: h.email, email_md5: h.md5, email_sha256: h.sha256, email_proven_at: now, opted_in: eb.ref('consented'), updated_at: now }))
    .where('id', '=', userRef)
    .returningAll()
    .executeTakeFirstOrThrow()
    .then(toUser);
  return user;
}

/** The proven-account rule (src/domain/visibility.ts, `isProvenAccount`) as a Kysely condition. */
export const whereProvenAccount = (eb: ExpressionBuilder<Database, 'users'>) => eb('email_proven_at', 'is not', null);
/** Its negation, written so that both databases use the index on unproven accounts. */
export const whereUnprovenAccount = (eb: ExpressionBuilder<Database, 'users'>) => eb('email_proven_at', 'is', null);

/** Accounts whose address was never proven, created before `before` (they expire). */
export async function listUnprovenBefore(db: Handle, before: number, limit: number): Promise<User[]> {
  return (
    await db.kysely.selectFrom('users').selectAll().where(whereUnprovenAccount).where('created_at', '<', before).orderBy('id').limit(limit).execute()
  ).map(toUser);
}

/** Whether the account is still unproven, as it stands in this transaction. */
export async function isUnproven(db: Handle, userRef: number): Promise<boolean> {
  return (await db.kysely.selectFrom('users').select('id').where('id', '=', userRef).where(whereUnprovenAccount).executeTakeFirst()) !== undefined;
}

export async function findUserByEmail(db: Handle, email: string): Promise<User | undefined> {
  const row = await db.kysely.selectFrom('users').selectAll().where('email_md5', '=', emailHashes(email).md5).executeTakeFirst();
  return row && toUser(row);
}

export async function findUserByUserId(db: Handle, userId: string): Promise<User | undefined> {
  const row = await db.kysely.selectFrom('users').selectAll().where('user_id', '=', userId).executeTakeFirst();
  return row && toUser(row);
}

export async function findUserByRef(db: Handle, ref: number): Promise<User | undefined> {
  const row = await db.kysely.selectFrom('users').selectAll().where('id', '=', ref).executeTakeFirst();
  return row && toUser(row);
}

/** Finds by userId or e-mail address, as operators type them. */
export async function findUserForOperator(db: Handle, who: string): Promise<User | undefined> {
  return who.includes('@') ? findUserByEmail(db, who) : findUserByUserId(db, who);
}

export async function listUsers(db: Handle, limit = 1000): Promise<User[]> {
  return (await db.kysely.selectFrom('users').selectAll().orderBy('id').limit(limit).execute()).map(toUser);
}

export async function deleteUser(w: Write, userRef: number): Promise<void> {
  await w.kysely.deleteFrom('users').where('id', '=', userRef).execute();
}

export type ProfileValues = Partial<Record<ProfileField, string | null>>;

export async function updateProfile(db: Write, userRef: number, values: ProfileValues, publicFields: ProfileField[] | undefined, now: number): Promise<void> {
  const set: Record<string, string | number | null> = { updated_at: now };
  for (const [field, column] of PROFILE_FIELDS) {
    const v = values[field];
    if (v !== undefined) set[column] = v === null || v.trim() === '' ? null : v.trim();
  }
  if (publicFields) set.public_fields = JSON.stringify([...new Set(publicFields)]);
  await db.kysely.updateTable('users').set(set).where('id', '=', userRef).execute();
}

export async function setUserFlags(
  db: Write,
  userRef: number,
  flags: { optedIn?: boolean; pro?: boolean; discoverable?: boolean },
  now: number,
): Promise<void> {
  await db.kysely
    .updateTable('users')
    .set((eb) => ({
      // The consent is the user's; it shows only once the address is proven.
      ...(flags.optedIn !== undefined
        ? {
            consented: flags.optedIn ? 1 : 0,
            opted_in: flags.optedIn ? eb.case().when(whereProvenAccount(eb)).then(1).else(0).end() : 0,
          }
        : {}),
      ...(flags.pro !== undefined ? { pro: flags.pro ? 1 : 0 } : {}),
      ...(flags.discoverable !== undefined ? { discoverable: flags.discoverable ? 1 : 0 } : {}),
      updated_at: now,
    }))
    .where('id', '=', userRef)
    .execute();
}

export async function setPasswordHash(db: Write, userRef: number, passwordHash: string, now: number): Promise<void> {
  await db.kysely.updateTable('users').set({ password_hash: passwordHash, updated_at: now }).where('id', '=', userRef).execute();
}

/** The columns visibility is decided by (domain/visibility.ts), as they stand in this transaction. */
export async function visibilityOf(db: Handle, userRef: number): Promise<Pick<User, 'opted_in'> | undefined> {
  const row = await db.kysely.selectFrom('users').select('opted_in').where('id', '=', userRef).executeTakeFirst();
  return row && { opted_in: row.opted_in === 1 };
}

/**
 * Records that linked partners are being told the user is (not) visible. False when that is what
 * they were told last: then there is nothing to announce. A conditional update, so of two
 * transactions making the same change only one announces it.
 */
export async function markVisibilityAnnounced(db: Write, userRef: number, visible: boolean): Promise<boolean> {
  const v = visible ? 1 : 0;
  const r = await db.kysely.updateTable('users').set({ announced_visible: v }).where('id', '=', userRef).where('announced_visible', '<>', v).executeTakeFirst();
  return Number(r.numUpdatedRows) === 1;
}

export type Role = 'operator' | 'none';

export function isOperator(user: Pick<User, 'role'>): boolean {
  return user.role === 'operator';
}

export async function setUserRole(db: Write, userRef: number, role: Role, now: number): Promise<void> {
  await db.kysely.updateTable('users').set({ role, updated_at: now }).where('id', '=', userRef).execute();
}

/** The operators' addresses, for the mail that tells them of a new application. */
export async function listOperators(db: Handle): Promise<User[]> {
  return (await db.kysely.selectFrom('users').selectAll().where('role', '=', 'operator').orderBy('id').execute()).map(toUser);
}

/** For the console: accounts by exact userId or e-mail address (never a pattern over addresses). */
export async function findUsersForConsole(db: Handle, query: string): Promise<User[]> {
  const q = query.trim().toLowerCase();
  if (q === '') return [];
  const u = await findUserForOperator(db, q);
  return u ? [u] : [];
}

// A person's passkeys (migration 018): rows become `Passkey` values here; the counter and times
// are numbers on both databases.

import type { Handle, Write } from '../db/handle.js';

export interface Passkey {
  id: number;
  userRef: number;
  credentialId: string;
  publicKey: Uint8Array<ArrayBuffer>;
  counter: number;
  userHandle: string;
  transports: string[];
  name: string;
  createdAt: number;
  lastUsedAt: number | null;
}

/** What the account page and the export show: never the key. */
export type PasskeySummary = Pick<Passkey, 'id' | 'name' | 'createdAt' | 'lastUsedAt'>;

interface PasskeyRow {
  id: number;
  user_ref: number;
  credential_id: string;
  public_key: Uint8Array;
  counter: number | string;
  user_handle: string;
  transports: string;
  name: string;
  created_at: number | string;
  last_used_at: number | string | null;
}

function parseTransports(raw: string): string[] {
  try {
    const v: unknown = JSON.parse(raw);
    return Array.isArray(v) ? v.filter((t): t is string => typeof t === 'string') : [];
  } catch {
    return [];
  }
}

function toPasskey(r: PasskeyRow): Passkey {
  return {
    id: r.id,
    userRef: r.user_ref,
    credentialId: r.credential_id,
    publicKey: new Uint8Array(r.public_key),
    counter: Number(r.counter),
    userHandle: r.user_handle,
    transports: parseTransports(r.transports),
    name: r.name,
    createdAt: Number(r.created_at),
    lastUsedAt: r.last_used_at === null ? null : Number(r.last_used_at),
  };
}

/** Adds a passkey: its id, or null when that credential is registered already. */
export async function insertPasskey(
  db: Write,
  p: { userRef: number; credentialId: string; publicKey: Uint8Array; counter: number; userHandle: string; transports: string[]; name: string },
  now: number,
): Promise<number | null> {
  const row = await db.kysely
    .insertInto('passkeys')
    .values({
      user_ref: p.userRef,
      credential_id: p.credentialId,
      public_key: Buffer.from(p.publicKey),
      counter: p.counter,
      user_handle: p.userHandle,
      transports: JSON.stringify(p.transports),
      name: p.name,
      created_at: now,
      last_used_at: null,
    })
    // Two registrations of one credential at once (both found it new): the second adds nothing.
    .onConflict((oc) => oc.column('credential_id').doNothing())
    .returning('id')
    .executeTakeFirst();
  return row?.id ?? null;
}

export async function findPasskeyByCredentialId(db: Handle, credentialId: string): Promise<Passkey | undefined> {
  const row = await db.kysely.selectFrom('passkeys').selectAll().where('credential_id', '=', credentialId).executeTakeFirst();
  return row && toPasskey(row);
}

/** The account's passkeys, oldest first. */
export async function passkeysOfUser(db: Handle, userRef: number): Promise<Passkey[]> {
  const rows = await db.kysely.selectFrom('passkeys').selectAll().where('user_ref', '=', userRef).orderBy('id').execute();
  return rows.map(toPasskey);
}

export async function countPasskeys(db: Handle, userRef: number): Promise<number> {
  const row = await db.kysely
    .selectFrom('passkeys')
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .where('user_ref', '=', userRef)
    .executeTakeFirst();
  return Number(row?.n ?? 0);
}

/**
 * Records a use: the new counter and the time, only while the stored counter is still the one the
 * assertion was checked against. Two requests carrying the same assertion can both pass the
 * signature check; only the first moves the counter, and false tells the second it lost.
 */
export async function recordPasskeyUse(db: Write, id: number, checkedCounter: number, newCounter: number, now: number): Promise<boolean> {
  const result = await db.kysely
    .updateTable('passkeys')
    .set({ counter: newCounter, last_used_at: now })
    .where('id', '=', id)
    .where('counter', '=', checkedCounter)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** Deletes one of the account's passkeys; what was deleted, or undefined when the account has no such passkey. */
export async function deletePasskeyOfUser(db: Write, userRef: number, id: number): Promise<PasskeySummary | undefined> {
  const row = await db.kysely
    .deleteFrom('passkeys')
    .where('id', '=', id)
    .where('user_ref', '=', userRef)
    .returning(['id', 'name', 'created_at', 'last_used_at'])
    .executeTakeFirst();
  return row && { id: row.id, name: row.name, createdAt: Number(row.created_at), lastUsedAt: row.last_used_at === null ? null : Number(row.last_used_at) };
}

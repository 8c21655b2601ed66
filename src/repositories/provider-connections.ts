// Connections to sign-in providers and the flows in progress at a provider (migration 019).

import type { Handle, Write } from '../db/handle.js';

export interface ProviderConnection {
  id: number;
  userRef: number;
  /** The provider's key: 'github', 'gitlab', 'google' or 'oidc:<name>'. */
  provider: string;
  /** The provider's stable id of the account. */
  subject: string;
  /** The account's name there when last seen (a login, a handle), when the provider has one. */
  username: string | null;
  createdAt: number;
  lastLoginAt: number | null;
}

type ConnectionRow = {
  id: number;
  user_ref: number;
  provider: string;
  subject: string;
  username: string | null;
  created_at: number;
  last_login_at: number | null;
};

const toConnection = (r: ConnectionRow): ProviderConnection => ({
  id: Number(r.id),
  userRef: Number(r.user_ref),
  provider: r.provider,
  subject: r.subject,
  username: r.username,
  createdAt: Number(r.created_at),
  lastLoginAt: r.last_login_at === null ? null : Number(r.last_login_at),
});

export async function findConnection(db: Handle, provider: string, subject: string): Promise<ProviderConnection | undefined> {
  const row = await db.kysely.selectFrom('provider_connections').selectAll().where('provider', '=', provider).where('subject', '=', subject).executeTakeFirst();
  return row && toConnection(row);
}

export async function connectionsOfUser(db: Handle, userRef: number): Promise<ProviderConnection[]> {
  const rows = await db.kysely.selectFrom('provider_connections').selectAll().where('user_ref', '=', userRef).orderBy('provider').orderBy('id').execute();
  return rows.map(toConnection);
}

/** The account's connection to a provider whose key is `provider` (one per provider and account). */
export async function connectionOfUser(db: Handle, userRef: number, provider: string): Promise<ProviderConnection | undefined> {
  const row = await db.kysely
    .selectFrom('provider_connections')
    .selectAll()
    .where('user_ref', '=', userRef)
    .where('provider', '=', provider)
    .executeTakeFirst();
  return row && toConnection(row);
}

export async function insertConnection(
  db: Write,
  c: { userRef: number; provider: string; subject: string; username: string | null },
  now: number,
): Promise<ProviderConnection> {
  const row = await db.kysely
    .insertInto('provider_connections')
    .values({ user_ref: c.userRef, provider: c.provider, subject: c.subject, username: c.username, created_at: now, last_login_at: null })
    .returningAll()
    .executeTakeFirstOrThrow();
  return toConnection(row);
}

export async function setConnectionUsername(db: Write, id: number, username: string | null): Promise<void> {
  await db.kysely.updateTable('provider_connections').set({ username }).where('id', '=', id).execute();
}

export async function recordConnectionLogin(db: Write, id: number, username: string | null, now: number): Promise<void> {
  await db.kysely.updateTable('provider_connections').set({ username, last_login_at: now }).where('id', '=', id).execute();
}

/** Removes one of the account's connections; the removed one, or undefined when it had none such. */
export async function deleteConnection(db: Write, userRef: number, id: number): Promise<ProviderConnection | undefined> {
  const row = await db.kysely.deleteFrom('provider_connections').where('id', '=', id).where('user_ref', '=', userRef).returningAll().executeTakeFirst();
  return row && toConnection(row);
}

// ---- flows in progress

export interface ProviderFlow {
  id: string;
  stateHash: string;
  provider: string;
  purpose: 'login' | 'connect';
  userRef: number | null;
  codeVerifier: string;
  nonce: string | null;
  pending: string | null;
  expiresAt: number;
}

export async function insertFlow(db: Write, f: ProviderFlow, now: number): Promise<void> {
  await db.kysely
    .insertInto('provider_flows')
    .values({
      id: f.id,
      state_hash: f.stateHash,
      provider: f.provider,
      purpose: f.purpose,
      user_ref: f.userRef,
      code_verifier: f.codeVerifier,
      nonce: f.nonce,
      pending: f.pending,
      expires_at: f.expiresAt,
      created_at: now,
    })
    .execute();
}

/** The flow with this id, unless it has expired. */
export async function findLiveFlow(db: Handle, id: string, now: number): Promise<ProviderFlow | undefined> {
  const r = await db.kysely.selectFrom('provider_flows').selectAll().where('id', '=', id).where('expires_at', '>', now).executeTakeFirst();
  if (!r) return undefined;
  return {
    id: r.id,
    stateHash: r.state_hash,
    provider: r.provider,
    purpose: r.purpose === 'connect' ? 'connect' : 'login',
    userRef: r.user_ref === null ? null : Number(r.user_ref),
    codeVerifier: r.code_verifier,
    nonce: r.nonce,
    pending: r.pending,
    expiresAt: Number(r.expires_at),
  };
}

/** Takes a flow for use: true for the one caller that deleted it. */
export async function takeFlow(db: Write, id: string): Promise<boolean> {
  const r = await db.kysely.deleteFrom('provider_flows').where('id', '=', id).executeTakeFirst();
  return Number(r.numDeletedRows) > 0;
}

export async function deleteExpiredFlows(db: Write, now: number): Promise<void> {
  await db.kysely.deleteFrom('provider_flows').where('expires_at', '<=', now).execute();
}

// Who runs a partner from its dashboard, and the mailed invitations that add members. An
// invitation keeps only the SHA-256 of its token and of the invited address.

import type { Handle, Write } from '../db/handle.js';

export interface Member {
  userRef: number;
  userId: string;
  since: number;
}

export interface Membership {
  partnerId: number;
  name: string;
  apiKey: string;
  suspended: boolean;
}

export async function addMember(db: Write, partnerId: number, userRef: number, now: number): Promise<void> {
  await db.kysely
    .insertInto('partner_members')
    .values({ partner_id: partnerId, user_ref: userRef, created_at: now })
    .onConflict((oc) => oc.columns(['partner_id', 'user_ref']).doNothing())
    .execute();
}

export async function removeMember(db: Write, partnerId: number, userRef: number): Promise<boolean> {
  const r = await db.kysely.deleteFrom('partner_members').where('partner_id', '=', partnerId).where('user_ref', '=', userRef).executeTakeFirst();
  return Number(r.numDeletedRows) === 1;
}

export async function isMember(db: Handle, partnerId: number, userRef: number): Promise<boolean> {
  const row = await db.kysely
    .selectFrom('partner_members')
    .select('user_ref')
    .where('partner_id', '=', partnerId)
    .where('user_ref', '=', userRef)
    .executeTakeFirst();
  return row !== undefined;
}

export async function listMembers(db: Handle, partnerId: number): Promise<Member[]> {
  const rows = await db.kysely
    .selectFrom('partner_members')
    .innerJoin('users', 'users.id', 'partner_members.user_ref')
    .select(['partner_members.user_ref', 'users.user_id', 'partner_members.created_at'])
    .where('partner_members.partner_id', '=', partnerId)
    .orderBy('partner_members.created_at')
    .orderBy('users.user_id')
    .execute();
  return rows.map((r) => ({ userRef: r.user_ref, userId: r.user_id, since: Number(r.created_at) }));
}

export async function membershipsOf(db: Handle, userRef: number): Promise<Membership[]> {
  const rows = await db.kysely
    .selectFrom('partner_members')
    .innerJoin('partners', 'partners.id', 'partner_members.partner_id')
    .select(['partners.id', 'partners.name', 'partners.api_key', 'partners.suspended'])
    .where('partner_members.user_ref', '=', userRef)
    .orderBy('partners.name')
    .orderBy('partners.id')
    .execute();
  return rows.map((r) => ({ partnerId: r.id, name: r.name, apiKey: r.api_key, suspended: r.suspended === 1 }));
}

export interface Invitation {
  id: number;
  partnerId: number;
  emailSha256: string;
  createdAt: number;
  expiresAt: number;
  usedAt: number | null;
}

export async function insertInvitation(
  db: Write,
  i: { partnerId: number; tokenHash: string; emailSha256: string; invitedBy: number; expiresAt: number },
  now: number,
): Promise<void> {
  await db.kysely
    .insertInto('partner_invitations')
    .values({
      partner_id: i.partnerId,
      token_hash: i.tokenHash,
      email_sha256: i.emailSha256,
      invited_by: i.invitedBy,
      created_at: now,
      expires_at: i.expiresAt,
      used_at: null,
    })
    .execute();
}

export async function findInvitationByToken(db: Handle, tokenHash: string): Promise<Invitation | undefined> {
  const r = await db.kysely.selectFrom('partner_invitations').selectAll().where('token_hash', '=', tokenHash).executeTakeFirst();
  return (
    r && {
      id: Number(r.id),
      partnerId: r.partner_id,
      emailSha256: r.email_sha256,
      createdAt: Number(r.created_at),
      expiresAt: Number(r.expires_at),
      usedAt: r.used_at === null ? null : Number(r.used_at),
    }
  );
}

/** Marks the invitation used; false when someone used it first. */
export async function useInvitation(db: Write, id: number, now: number): Promise<boolean> {
  const r = await db.kysely.updateTable('partner_invitations').set({ used_at: now }).where('id', '=', id).where('used_at', 'is', null).executeTakeFirst();
  return Number(r.numUpdatedRows) === 1;
}

/** Open invitations of a partner in the last day: the cap on how many a partner may send. */
export async function countRecentInvitations(db: Handle, partnerId: number, since: number): Promise<number> {
  const row = await db.kysely
    .selectFrom('partner_invitations')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('partner_id', '=', partnerId)
    .where('created_at', '>=', since)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

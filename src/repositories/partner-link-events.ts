// Links made and ended, per partner, for its dashboard: counts and times only, no person named.

import type { Handle, Write } from '../db/handle.js';

export type LinkEventKind = 'linked' | 'unlinked';
/** Who ended or made the link: the partner (sync_user / unsync_user), the person on the site, or the account's deletion. */
export type LinkEventBy = 'partner' | 'user' | 'deletion';

export interface LinkEvent {
  kind: LinkEventKind;
  by: LinkEventBy;
  at: number;
}

export async function recordLinkEvents(db: Write, partnerIds: number[], kind: LinkEventKind, by: LinkEventBy, now: number): Promise<void> {
  if (partnerIds.length === 0) return;
  await db.kysely
    .insertInto('partner_link_events')
    .values(partnerIds.map((partnerId) => ({ partner_id: partnerId, kind, by, created_at: now })))
    .execute();
}

export async function listLinkEvents(db: Handle, partnerId: number, since: number, limit = 500): Promise<LinkEvent[]> {
  const rows = await db.kysely
    .selectFrom('partner_link_events')
    .select(['kind', 'by', 'created_at'])
    .where('partner_id', '=', partnerId)
    .where('created_at', '>=', since)
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(limit)
    .execute();
  return rows.map((r) => ({ kind: r.kind as LinkEventKind, by: r.by as LinkEventBy, at: Number(r.created_at) }));
}

/** Events older than the dashboard shows are dropped by the site's housekeeping. */
export async function deleteLinkEventsBefore(db: Write, before: number): Promise<void> {
  await db.kysely.deleteFrom('partner_link_events').where('created_at', '<', before).execute();
}

/** People linked to the partner now (a person linked under two identifiers counts once). */
export async function countLinkedPeople(db: Handle, partnerId: number): Promise<number> {
  const row = await db.kysely
    .selectFrom('links')
    .select((eb) => eb.fn.count<number>('user_ref').distinct().as('n'))
    .where('partner_id', '=', partnerId)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

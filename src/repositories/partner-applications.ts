// Applications for partner keys. Rows leave this module as `Application`s, origins parsed.
import type { Selectable } from 'kysely';
import type { Handle, Write } from '../db/handle.js';
import type { PartnerApplicationsTable } from '../db/schema.js';

export type ApplicationStatus = 'pending' | 'approved' | 'declined';

export interface Application {
  id: number;
  userRef: number;
  name: string;
  siteUrl: string;
  purpose: string;
  origins: string[];
  contact: string;
  status: ApplicationStatus;
  declineReason: string | null;
  partnerId: number | null;
  decidedBy: string | null;
  createdAt: number;
  decidedAt: number | null;
}

export interface NewApplication {
  userRef: number;
  name: string;
  siteUrl: string;
  purpose: string;
  origins: string[];
  contact: string;
}

function parseOrigins(text: string): string[] {
  try {
    const v: unknown = JSON.parse(text);
    return Array.isArray(v) ? v.filter((o): o is string => typeof o === 'string') : [];
  } catch {
    return [];
  }
}

function toApplication(row: Selectable<PartnerApplicationsTable>): Application {
  return {
    id: Number(row.id),
    userRef: row.user_ref,
    name: row.name,
    siteUrl: row.site_url,
    purpose: row.purpose,
    origins: parseOrigins(row.origins),
    contact: row.contact,
    status: row.status as ApplicationStatus,
    declineReason: row.decline_reason,
    partnerId: row.partner_id,
    decidedBy: row.decided_by,
    createdAt: Number(row.created_at),
    decidedAt: row.decided_at === null ? null : Number(row.decided_at),
  };
}

export async function insertApplication(db: Write, a: NewApplication, now: number): Promise<Application> {
  const row = await db.kysely
    .insertInto('partner_applications')
    .values({
      user_ref: a.userRef,
      name: a.name,
      site_url: a.siteUrl,
      purpose: a.purpose,
      origins: JSON.stringify(a.origins),
      contact: a.contact,
      status: 'pending',
      decline_reason: null,
      partner_id: null,
      decided_by: null,
      created_at: now,
      decided_at: null,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
  return toApplication(row);
}

export async function findApplication(db: Handle, id: number): Promise<Application | undefined> {
  const row = await db.kysely.selectFrom('partner_applications').selectAll().where('id', '=', id).executeTakeFirst();
  return row && toApplication(row);
}

export async function listApplications(db: Handle, status: ApplicationStatus | 'all', limit = 200): Promise<Application[]> {
  let q = db.kysely.selectFrom('partner_applications').selectAll().orderBy('id', 'desc').limit(limit);
  if (status !== 'all') q = q.where('status', '=', status);
  return (await q.execute()).map(toApplication);
}

export async function listApplicationsOfUser(db: Handle, userRef: number, limit = 50): Promise<Application[]> {
  return (await db.kysely.selectFrom('partner_applications').selectAll().where('user_ref', '=', userRef).orderBy('id', 'desc').limit(limit).execute()).map(
    toApplication,
  );
}

export async function countPendingOfUser(db: Handle, userRef: number): Promise<number> {
  const row = await db.kysely
    .selectFrom('partner_applications')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('user_ref', '=', userRef)
    .where('status', '=', 'pending')
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/**
 * Records a decision on a pending application; false when it was decided already (two operators at
 * once: the first one wins, the second is told).
 */
export async function decideApplication(
  db: Write,
  id: number,
  d: { status: 'approved' | 'declined'; declineReason: string | null; partnerId: number | null; decidedBy: string },
  now: number,
): Promise<boolean> {
  const r = await db.kysely
    .updateTable('partner_applications')
    .set({ status: d.status, decline_reason: d.declineReason, partner_id: d.partnerId, decided_by: d.decidedBy, decided_at: now })
    .where('id', '=', id)
    .where('status', '=', 'pending')
    .executeTakeFirst();
  return Number(r.numUpdatedRows) === 1;
}

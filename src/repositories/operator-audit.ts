// The operators' audit log: one row per action, never changed or removed by the application.

import type { Handle, Write } from '../db/handle.js';

export interface AuditEntry {
  id: number;
  actorUserId: string;
  action: string;
  target: string;
  before: unknown;
  after: unknown;
  at: number;
}

export interface NewAuditEntry {
  actorRef: number;
  actorUserId: string;
  action: string;
  target: string;
  before?: unknown;
  after?: unknown;
}

export async function writeAudit(db: Write, e: NewAuditEntry, now: number): Promise<void> {
  await db.kysely
    .insertInto('operator_audit')
    .values({
      actor_ref: e.actorRef,
      actor_user_id: e.actorUserId,
      action: e.action,
      target: e.target,
      before: e.before === undefined ? null : JSON.stringify(e.before),
      after: e.after === undefined ? null : JSON.stringify(e.after),
      created_at: now,
    })
    .execute();
}

const parse = (t: string | null): unknown => (t === null ? null : JSON.parse(t));

/** Newest first; `beforeId` pages back through older entries. */
export async function listAudit(db: Handle, options: { limit: number; beforeId?: number }): Promise<AuditEntry[]> {
  let q = db.kysely.selectFrom('operator_audit').selectAll().orderBy('id', 'desc').limit(options.limit);
  if (options.beforeId !== undefined) q = q.where('id', '<', options.beforeId);
  const rows = await q.execute();
  return rows.map((r) => ({
    id: Number(r.id),
    actorUserId: r.actor_user_id,
    action: r.action,
    target: r.target,
    before: parse(r.before),
    after: parse(r.after),
    at: Number(r.created_at),
  }));
}

// The operators' audit log: one row per action, never changed or removed by the application.
import type { Queryable } from '../db/schema.js';

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

export async function writeAudit(db: Queryable, e: NewAuditEntry, now: number): Promise<void> {
  await db
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
export async function listAudit(db: Queryable, options: { limit: number; beforeId?: number }): Promise<AuditEntry[]> {
  let q = db.selectFrom('operator_audit').selectAll().orderBy('id', 'desc').limit(options.limit);
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

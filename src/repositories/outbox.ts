// The transactional outbox (SPEC §9): events are written in the same transaction as the change
// they announce, one row per receiving partner, and delivered later by the webhook job.
import type { Handle, Write } from '../db/handle.js';
import { randomUUID } from 'node:crypto';
import type { ExpressionBuilder } from 'kysely';
import type { Database, OutboxRow } from '../db/schema.js';

/** A row as the site's pages show it (the operator console, a partner's deliveries). */
export type { OutboxRow };

export type EventType =
  | 'identity.updated'
  | 'identity.verified'
  | 'identity.unverified'
  | 'identity.removed'
  | 'link.created'
  | 'link.removed'
  | 'profile.updated'
  | 'user.visible'
  | 'user.hidden'
  | 'user.deleted';

/**
 * The only events about a user who is not visible (not opted in, hidden, or gone): that they are
 * hidden or deleted. Every other event is neither written nor delivered while they are not visible.
 */
export const SENT_WHILE_NOT_VISIBLE: ReadonlySet<string> = new Set<EventType>(['user.hidden', 'user.deleted']);

export interface EventToWrite {
  partnerId: number;
  userRef: number | null;
  type: EventType;
  data: Record<string, unknown>;
}

export async function writeEvents(db: Write, events: EventToWrite[], now: number): Promise<void> {
  if (events.length === 0) return;
  await db.kysely
    .insertInto('outbox')
    .values(
      events.map((e) => {
        const eventId = `msg_${randomUUID().replace(/-/g, '')}`;
        return {
          event_id: eventId,
          partner_id: e.partnerId,
          user_ref: e.userRef,
          event_type: e.type,
          // Standard Webhooks payload shape: type, timestamp, data.
          payload: JSON.stringify({ type: e.type, timestamp: new Date(now).toISOString(), data: e.data }),
          status: 'pending',
          attempts: 0,
          next_attempt_at: now,
          locked_until: null,
          last_error: null,
          delivered_at: null,
          created_at: now,
        };
      }),
    )
    .execute();
}

export async function listOutbox(db: Handle, partnerId?: number): Promise<OutboxRow[]> {
  let q = db.kysely.selectFrom('outbox').selectAll().orderBy('id');
  if (partnerId !== undefined) q = q.where('partner_id', '=', partnerId);
  return q.execute();
}

/**
 * Leases up to `limit` due events until `leaseUntil`, oldest first. The conditions are repeated on
 * the outer UPDATE: PostgreSQL re-checks them on the locked row, so two instances racing for one
 * row cannot both win it.
 */
export async function claimDueEvents(db: Write, now: number, leaseUntil: number, limit: number): Promise<OutboxRow[]> {
  const free = (eb: ExpressionBuilder<Database, 'outbox'>) =>
    eb.and([eb('status', '=', 'pending'), eb('next_attempt_at', '<=', now), eb.or([eb('locked_until', 'is', null), eb('locked_until', '<', now)])]);
  const due = db.kysely.selectFrom('outbox').select('id').where(free).orderBy('id').limit(limit);
  return db.kysely.updateTable('outbox').set({ locked_until: leaseUntil }).where('id', 'in', due).where(free).returningAll().execute();
}

export interface DeliveryRecord {
  status: 'delivered' | 'dead' | 'skipped' | 'suppressed' | 'pending';
  attempts: number;
  error: string | null;
  deliveredAt?: number;
  nextAttemptAt?: number;
  /** The receiver's HTTP status, when it answered. */
  answerStatus?: number | null;
}

/** The outcome of one delivery attempt; the lease ends. */
export async function recordDelivery(db: Write, id: number, r: DeliveryRecord): Promise<void> {
  await db.kysely
    .updateTable('outbox')
    .set({
      status: r.status,
      attempts: r.attempts,
      last_error: r.error,
      locked_until: null,
      ...(r.answerStatus !== undefined ? { last_status: r.answerStatus } : {}),
      ...(r.deliveredAt !== undefined ? { delivered_at: r.deliveredAt } : {}),
      ...(r.nextAttemptAt !== undefined ? { next_attempt_at: r.nextAttemptAt } : {}),
    })
    .where('id', '=', id)
    .execute();
}

/** The partner's most recent events, newest first, for its dashboard. */
export async function recentEventsOfPartner(db: Handle, partnerId: number, limit: number): Promise<OutboxRow[]> {
  return db.kysely.selectFrom('outbox').selectAll().where('partner_id', '=', partnerId).orderBy('id', 'desc').limit(limit).execute();
}

/** Events that failed: given up on, or waiting for a retry after a failed attempt; newest first. */
export async function failedEvents(db: Handle, limit: number): Promise<OutboxRow[]> {
  return db.kysely
    .selectFrom('outbox')
    .selectAll()
    .where((eb) => eb.or([eb('status', '=', 'dead'), eb.and([eb('status', '=', 'pending'), eb('attempts', '>', 0)])]))
    .orderBy('id', 'desc')
    .limit(limit)
    .execute();
}

/**
 * "Retry now": a failed event (given up on, or waiting after a failed attempt) becomes due at once;
 * false when there is no such event (of that partner, when one is named).
 */
export async function retryEventNow(db: Write, id: number, partnerId: number | null, now: number): Promise<boolean> {
  let q = db.kysely
    .updateTable('outbox')
    .set({ status: 'pending', next_attempt_at: now, locked_until: null })
    .where('id', '=', id)
    .where((eb) => eb.or([eb('status', '=', 'dead'), eb.and([eb('status', '=', 'pending'), eb('attempts', '>', 0)])]));
  if (partnerId !== null) q = q.where('partner_id', '=', partnerId);
  const r = await q.executeTakeFirst();
  return Number(r.numUpdatedRows) === 1;
}

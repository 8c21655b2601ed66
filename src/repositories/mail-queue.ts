// The mail queue (migration 007): rows are written in the transaction of the change that causes
// the mail, and claimed with a lease by the mail job, so that several instances send each mail once.
import type { Handle, Write } from '../db/handle.js';
import { randomUUID } from 'node:crypto';
import type { ExpressionBuilder } from 'kysely';
import type { Database, MailRow } from '../db/schema.js';

/** A row as the site's pages show it (the operator console, a partner's deliveries). */
export type { MailRow };

export interface MailToQueue {
  to: string;
  kind: string;
  subject: string;
  text: string;
  html: string;
}

/** Writes one message to the queue; the mail job sends it. */
export async function insertMail(db: Write, mail: MailToQueue, now: number): Promise<number> {
  const row = await db.kysely
    .insertInto('mail_queue')
    .values({
      message_id: randomUUID(),
      kind: mail.kind,
      to_address: mail.to,
      subject: mail.subject,
      text_body: mail.text,
      html_body: mail.html,
      status: 'pending',
      attempts: 0,
      next_attempt_at: now,
      locked_until: null,
      last_error: null,
      sent_at: null,
      created_at: now,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  return row.id;
}

/** Claims up to `limit` due messages until `leaseUntil`; another instance skips them meanwhile. */
export async function claimDueMail(db: Write, now: number, leaseUntil: number, limit: number): Promise<MailRow[]> {
  const free = (eb: ExpressionBuilder<Database, 'mail_queue'>) =>
    eb.and([eb('status', '=', 'pending'), eb('next_attempt_at', '<=', now), eb.or([eb('locked_until', 'is', null), eb('locked_until', '<', now)])]);
  const due = db.kysely.selectFrom('mail_queue').select('id').where(free).orderBy('id').limit(limit);
  // The conditions are repeated on the outer UPDATE: PostgreSQL re-checks them on the locked row,
  // so two instances racing for one row cannot both win it.
  return db.kysely.updateTable('mail_queue').set({ locked_until: leaseUntil }).where('id', 'in', due).where(free).returningAll().execute();
}

export async function markMailSent(db: Write, id: number, attempts: number, now: number): Promise<void> {
  await db.kysely
    .updateTable('mail_queue')
    .set({ status: 'sent', attempts, sent_at: now, locked_until: null, last_error: null, text_body: null, html_body: null })
    .where('id', '=', id)
    .execute();
}

export async function markMailRetry(db: Write, id: number, attempts: number, error: string, nextAttemptAt: number): Promise<void> {
  await db.kysely
    .updateTable('mail_queue')
    .set({ attempts, last_error: error, next_attempt_at: nextAttemptAt, locked_until: null })
    .where('id', '=', id)
    .execute();
}

export async function markMailFailed(db: Write, id: number, attempts: number, error: string): Promise<void> {
  await db.kysely.updateTable('mail_queue').set({ status: 'failed', attempts, last_error: error, locked_until: null }).where('id', '=', id).execute();
}

export async function listMail(db: Handle, options: { status?: string; limit?: number } = {}): Promise<MailRow[]> {
  let q = db.kysely
    .selectFrom('mail_queue')
    .selectAll()
    .orderBy('id', 'desc')
    .limit(options.limit ?? 100);
  if (options.status) q = q.where('status', '=', options.status);
  return q.execute();
}

/** Puts failed messages (all, or the given ids) back in the queue, due now. Returns how many. */
export async function retryFailedMail(db: Write, ids: number[] | 'all', now: number): Promise<number> {
  let q = db.kysely.updateTable('mail_queue').set({ status: 'pending', attempts: 0, next_attempt_at: now, locked_until: null }).where('status', '=', 'failed');
  if (ids !== 'all') q = q.where('id', 'in', ids.length > 0 ? ids : [-1]);
  const r = await q.executeTakeFirst();
  return Number(r.numUpdatedRows);
}

/** Sent and failed messages older than `before` are dropped. */
export async function deleteOldMail(db: Write, before: number): Promise<void> {
  await db.kysely.deleteFrom('mail_queue').where('status', 'in', ['sent', 'failed']).where('created_at', '<', before).execute();
}

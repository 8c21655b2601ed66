// Sending queued mail (src/mail/index.ts). Every instance may run this: rows are claimed with a
// lease longer than an SMTP attempt can take, so each message is handed to the relay once (SMTP
// itself is at-least-once: a connection lost after the relay took the message but before it said
// so leads to a second copy with the same Message-ID). A relay that cannot be reached, or answers
// with a temporary error, is retried with back-off for a day; a message the relay refuses for good
// (5xx for the recipient or the message), or still unsent after a day, becomes `failed`, which
// `idsvc mail list --failed` shows and `idsvc mail retry` queues again.
//
// Logs name the queue id and, for the .eml default, the file; never the address, the body or a link.
import type { FastifyBaseLogger } from 'fastify';
import type { AppContext } from '../context.js';
import type { MailRow } from '../db/schema.js';
import { claimDueMail, markMailFailed, markMailRetry, markMailSent } from '../repositories/mail-queue.js';
import { SMTP_TIMEOUT_MS } from '../mail/transport.js';

export const MAIL_EVERY_MS = 2000;
/** Messages tried per pass, one after another. */
const BATCH = 20;

/**
 * How long one message is leased: longer than its attempt can take (the three SMTP timeouts
 * together and the database writes around them, each bounded by DATABASE_TIMEOUT_MS), with room to
 * spare. Each message is claimed just before its own attempt, so a pass of slow sends (20 × 90 s)
 * never holds messages whose lease could run out before their turn, which another instance would
 * then send too.
 */
export function mailLeaseMs(ctx: AppContext): number {
  return 3 * SMTP_TIMEOUT_MS + 2 * ctx.config.databaseTimeoutMs + 50_000;
}
/** Mail about a sign-up or a reset is useless after its link expires (a day at most). */
export const MAIL_GIVE_UP_AFTER_MS = 24 * 3600 * 1000;

/** 10 s, 20 s, 40 s … capped at 30 minutes, with jitter so a backlog does not retry in one burst. */
export function mailBackoffMs(attempts: number): number {
  const base = Math.min(30 * 60_000, 10_000 * 2 ** Math.max(0, attempts - 1));
  return Math.round(base * (0.8 + Math.random() * 0.4));
}

interface SmtpError {
  code?: string;
  responseCode?: number;
  permanent?: boolean;
  response?: string;
  message?: string;
}

/** The relay refused this message or recipient for good; anything else (connection, TLS, login, 4xx) may pass later. */
function refusedForGood(e: SmtpError): boolean {
  return e.permanent === true && (e.code === 'EENVELOPE' || e.code === 'EMESSAGE');
}

/** What an operator sees of a failure; relays echo recipients, so addresses are blanked. */
function describe(e: SmtpError): string {
  const text = [e.code, e.responseCode, e.response ?? e.message].filter((x) => x !== undefined && x !== '').join(' ');
  // Word by word rather than one regex over the text: /[^\s<>@]+@[^\s<>@]+/ retries from every
  // character of a long run without an @, quadratic in the length of the relay's reply.
  const words = text.split(/([\s<>]+)/);
  return words
    .map((w) => (/[^@]@[^@]/.test(w) ? '[address]' : w))
    .join('')
    .slice(0, 500);
}

async function sendOne(ctx: AppContext, log: FastifyBaseLogger, row: MailRow, now: number): Promise<void> {
  const attempts = row.attempts + 1;
  try {
    const delivery = await ctx.mail.send({
      messageId: row.message_id,
      to: row.to_address,
      subject: row.subject,
      text: row.text_body ?? '',
      html: row.html_body ?? '',
    });
    await ctx.db.write((w) => markMailSent(w, row.id, attempts, ctx.clock.now()));
    if (delivery.file) log.info({ mailId: row.id, kind: row.kind, file: delivery.file }, 'mail written to file');
    else log.info({ mailId: row.id, kind: row.kind, attempts }, 'mail sent');
  } catch (err) {
    const e = err as SmtpError;
    const error = describe(e);
    const detail = { mailId: row.id, kind: row.kind, attempts, code: e.code, responseCode: e.responseCode };
    const next = now + mailBackoffMs(attempts);
    if (refusedForGood(e) || next - row.created_at > MAIL_GIVE_UP_AFTER_MS) {
      await ctx.db.write((w) => markMailFailed(w, row.id, attempts, error));
      log.error(detail, 'mail failed: see idsvc mail list --failed');
      return;
    }
    await ctx.db.write((w) => markMailRetry(w, row.id, attempts, error, next));
    log.warn({ ...detail, retryInSeconds: Math.round((next - now) / 1000) }, 'mail not sent yet; will retry');
  }
}

/** One pass: claim the oldest due message, try it once, up to BATCH times. Returns how many were attempted. */
export async function sendDueMail(ctx: AppContext, log: FastifyBaseLogger): Promise<number> {
  let attempted = 0;
  for (; attempted < BATCH; attempted++) {
    const now = ctx.clock.now();
    const [row] = await ctx.db.write((w) => claimDueMail(w, now, now + mailLeaseMs(ctx), 1));
    if (!row) break;
    await sendOne(ctx, log, row, now);
  }
  return attempted;
}

export const mailJob = { name: 'mail', everyMs: MAIL_EVERY_MS, run: async (ctx: AppContext, log: FastifyBaseLogger) => void (await sendDueMail(ctx, log)) };

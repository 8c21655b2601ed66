// Webhook delivery from the outbox (SPEC §9), Standard Webhooks style: at least once, only a 2xx
// counts, Retry-After honoured, 15 s per attempt, exponential back-off for 72 hours, a 410 disables
// the endpoint. Rows are claimed with a lease, so every instance can run this at once. An event
// about a user who is no longer visible when it is due is never sent (`suppressed`), except the
// news that they are hidden or deleted.
import { Webhook } from 'standardwebhooks';
import type { AppContext } from '../context.js';
import type { OutboxRow } from '../db/schema.js';
import { disablePartnerWebhook, findWebhookTarget, signingSecrets, type Partner } from '../repositories/partners.js';
import { safeFetch, type SafeFetchResult } from '../verification/safe-fetch.js';
import { claimDueEvents, recordDelivery, SENT_WHILE_NOT_VISIBLE } from '../repositories/outbox.js';
import { visibilityOf } from '../repositories/users.js';
import { isVisible } from '../domain/visibility.js';

export const ATTEMPT_TIMEOUT_MS = 15_000;
export const GIVE_UP_AFTER_MS = 72 * 3600 * 1000;
/** Events tried per pass, one after another. */
const BATCH = 20;

/**
 * How long one event is leased: longer than its attempt can take (the POST, 15 s at most, and the
 * reads and the write around it, each bounded by DATABASE_TIMEOUT_MS), with room to spare. Each
 * event is claimed just before its own attempt, so a pass of slow endpoints (20 × 15 s) never holds
 * events whose lease could run out before their turn, which another instance would then send too.
 */
export function webhookLeaseMs(ctx: AppContext): number {
  return ATTEMPT_TIMEOUT_MS + 3 * ctx.config.databaseTimeoutMs + 30_000;
}

/**
 * v1 signature of Standard Webhooks (base64 HMAC-SHA256 of "{id}.{timestamp}.{body}"), made by the
 * scheme's reference library, the one partners are told to verify with.
 */
function signWebhook(secret: string, id: string, timestamp: number, body: string): string {
  return new Webhook(secret).sign(id, new Date(timestamp * 1000), body);
}

/**
 * The `webhook-signature` header: one v1 signature per signing secret, space-separated (Standard
 * Webhooks), so during a secret rotation's grace period a receiver holding either secret verifies.
 */
export function signatureHeader(secrets: string[], id: string, timestamp: number, body: string): string {
  return secrets.map((s) => signWebhook(s, id, timestamp, body)).join(' ');
}

type Endpoint = Pick<Partner, 'webhook_url' | 'webhook_secret' | 'previous_webhook_secret' | 'previous_webhook_secret_expires_at'>;

/**
 * One signed POST of an event to a partner's endpoint, under the outbound address policy, without
 * following redirects. Used by delivery from the outbox and by `idsvc partner test-webhook`.
 */
export function postWebhook(
  ctx: AppContext,
  endpoint: Endpoint & { webhook_url: string },
  eventId: string,
  payload: string,
  now: number,
): Promise<SafeFetchResult> {
  const timestamp = Math.floor(now / 1000);
  return safeFetch(endpoint.webhook_url, {
    method: 'POST',
    body: payload,
    headers: {
      'content-type': 'application/json',
      'webhook-id': eventId,
      'webhook-timestamp': String(timestamp),
      'webhook-signature': signatureHeader(signingSecrets(endpoint, now), eventId, timestamp, payload),
    },
    allowPrivate: ctx.config.fetchAllowPrivate,
    timeoutMs: ATTEMPT_TIMEOUT_MS,
    maxRedirects: 0,
    maxBytes: 4096,
    userAgent: 'idsvc-webhooks/1',
  });
}

/** 5 s, 10 s, 20 s … capped at an hour, with jitter so retries of many events spread out. */
export function backoffMs(attempts: number): number {
  const base = Math.min(3600_000, 5000 * 2 ** Math.max(0, attempts - 1));
  return Math.round(base * (0.8 + Math.random() * 0.4));
}

function retryAfterMs(value: string | undefined, now: number): number | null {
  if (!value) return null;
  if (/^\d+$/.test(value.trim())) return Number(value.trim()) * 1000;
  const at = Date.parse(value);
  return Number.isNaN(at) ? null : Math.max(0, at - now);
}

type Outcome = {
  status: 'delivered' | 'dead' | 'skipped' | 'suppressed' | 'pending';
  error: string | null;
  nextAttemptAt?: number;
  disableEndpoint?: boolean;
  answerStatus?: number | null;
};

/** The user hid (or was deleted) after the event was written: what it says is no longer theirs to give. */
async function isWithheld(ctx: AppContext, row: OutboxRow): Promise<boolean> {
  if (row.user_ref === null || SENT_WHILE_NOT_VISIBLE.has(row.event_type)) return false;
  return !isVisible(await visibilityOf(ctx.db, row.user_ref));
}

async function deliver(ctx: AppContext, row: OutboxRow, now: number): Promise<Outcome> {
  if (await isWithheld(ctx, row))
    return { status: 'suppressed', error: 'not sent: the user is not visible to partners any more (hidden, not opted in or deleted)' };
  const partner = await findWebhookTarget(ctx.db, row.partner_id);
  if (!partner?.webhook_url || !partner.webhook_secret) return { status: 'skipped', error: 'no webhook endpoint configured' };
  if (partner.webhook_disabled) return { status: 'skipped', error: 'endpoint disabled after 410 Gone' };
  const res = await postWebhook(ctx, { ...partner, webhook_url: partner.webhook_url }, row.event_id, row.payload, now);
  const answerStatus = res.ok ? res.status : null;
  if (res.ok && res.status >= 200 && res.status < 300) return { status: 'delivered', error: null, answerStatus };
  if (res.ok && res.status === 410) return { status: 'dead', error: 'HTTP 410 Gone: endpoint disabled', disableEndpoint: true, answerStatus };
  const error = res.ok ? `HTTP ${res.status}` : `${res.reason}: ${res.detail}`;
  const attempts = row.attempts + 1;
  const wait = (res.ok ? retryAfterMs(res.headers['retry-after'], now) : null) ?? backoffMs(attempts);
  const next = now + wait;
  if (next - row.created_at > GIVE_UP_AFTER_MS) return { status: 'dead', error: `${error}; gave up after 72 hours`, answerStatus };
  return { status: 'pending', error, nextAttemptAt: next, answerStatus };
}

/** One pass: claim a due event, try it once, up to BATCH times. Returns how many were attempted. */
export async function deliverDueWebhooks(ctx: AppContext): Promise<number> {
  let attempted = 0;
  for (; attempted < BATCH; attempted++) {
    const now = ctx.clock.now();
    const [row] = await ctx.db.write((w) => claimDueEvents(w, now, now + webhookLeaseMs(ctx), 1));
    if (!row) break;
    const outcome = await deliver(ctx, row, now);
    await ctx.db.write((w) =>
      recordDelivery(w, row.id, {
        status: outcome.status,
        attempts: outcome.status === 'skipped' || outcome.status === 'suppressed' ? row.attempts : row.attempts + 1,
        error: outcome.error,
        ...(outcome.status === 'delivered' ? { deliveredAt: now } : {}),
        ...(outcome.nextAttemptAt !== undefined ? { nextAttemptAt: outcome.nextAttemptAt } : {}),
        ...(outcome.answerStatus !== undefined ? { answerStatus: outcome.answerStatus } : {}),
      }),
    );
    if (outcome.disableEndpoint) {
      await ctx.db.write((w) => disablePartnerWebhook(w, row.partner_id, now));
    }
  }
  return attempted;
}

export const webhookJob = { name: 'webhooks', everyMs: 2000, run: async (ctx: AppContext) => void (await deliverDueWebhooks(ctx)) };

// `idsvc partner test-webhook`: a `ping` event sent at once (not through the outbox, so it is never
// retried and never waits behind other events), signed like every delivery, so a partner can check
// its receiver and its secret end to end.
import { randomUUID } from 'node:crypto';
import type { AppContext } from '../context.js';
import type { Partner } from '../repositories/partners.js';
import { postWebhook } from '../jobs/webhooks.js';

export interface PingResult {
  eventId: string;
  /** The receiver's HTTP status, or null when no answer came (refused address, timeout, connection). */
  status: number | null;
  /** Accepted as delivery would accept it: a 2xx answer. */
  ok: boolean;
  /** The start of the receiver's answer, or why there was none. */
  excerpt: string;
}

/** Enough of an answer to recognise it, control and format characters shown as spaces: it goes to a terminal. */
export function answerExcerpt(text: string, max = 200): string {
  const flat = text.replace(/[\p{Cc}\p{Cf}]+/gu, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max)}…` : flat;
}

export async function pingWebhook(ctx: AppContext, partner: Partner & { webhook_url: string }): Promise<PingResult> {
  const now = ctx.clock.now();
  const eventId = `msg_${randomUUID().replace(/-/g, '')}`;
  const payload = JSON.stringify({ type: 'ping', timestamp: new Date(now).toISOString(), data: {} });
  const res = await postWebhook(ctx, partner, eventId, payload, now);
  if (!res.ok) return { eventId, status: null, ok: false, excerpt: answerExcerpt(`${res.reason}: ${res.detail}`) };
  return { eventId, status: res.status, ok: res.status >= 200 && res.status < 300, excerpt: answerExcerpt(res.body) };
}

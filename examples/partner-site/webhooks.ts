// The example site's webhook receiver (docs/webhooks.md): idsvc POSTs signed events to
// /idsvc/webhooks; each is verified with @idsvc/client's verifyWebhook() (any Standard Webhooks
// library does the same), kept once per `webhook-id` (delivery is at least once), and shown on
// /events as it arrives (Server-Sent Events to the page's events.js).
import type http from 'node:http';
import { verifyWebhook, type WebhookEvent } from '@idsvc/client';

export interface ReceivedEvent {
  id: string;
  type: string;
  timestamp: string;
  data: Record<string, unknown>;
}

const KEPT = 100;
/** idsvc's events are small; anything larger is not from it. */
const MAX_BODY = 256 * 1024;

export interface WebhookReceiver {
  /** POST /idsvc/webhooks */
  receive(req: http.IncomingMessage, res: http.ServerResponse): Promise<void>;
  /** GET /events/stream: every event kept so far, then each new one, as Server-Sent Events. */
  stream(req: http.IncomingMessage, res: http.ServerResponse): void;
  /** Newest first. */
  events(): readonly ReceivedEvent[];
}

/** `secret()` is read on each delivery, so a secret handed over later (or rotated) is used at once. */
export function webhookReceiver(secret: () => string | undefined): WebhookReceiver {
  const received: ReceivedEvent[] = [];
  const seen = new Set<string>();
  const listeners = new Set<http.ServerResponse>();

  const sse = (res: http.ServerResponse, event: ReceivedEvent) => res.write(`data: ${JSON.stringify(event)}\n\n`);

  return {
    async receive(req, res) {
      const key = secret();
      if (!key) return answer(res, 503, 'no webhook secret configured (IDSVC_WEBHOOK_SECRET)');
      let body: string;
      try {
        body = await readBody(req);
      } catch {
        return answer(res, 413, 'too large');
      }
      let event: WebhookEvent;
      try {
        // The raw body as it came: verification is over these exact bytes, not a re-serialisation.
        event = await verifyWebhook(key, req.headers, body);
      } catch {
        // Forged, altered, or too old: refused, and never shown or acted on.
        return answer(res, 400, 'signature not valid');
      }
      const id = String(req.headers['webhook-id']);
      // Answer quickly (idsvc waits 15 s at most); a repeat of a delivered event is acknowledged again.
      answer(res, 204);
      if (seen.has(id)) return;
      seen.add(id);
      const kept: ReceivedEvent = { id, type: event.type, timestamp: event.timestamp, data: event.data };
      received.unshift(kept);
      if (received.length > KEPT) seen.delete(received.pop()!.id);
      for (const l of listeners) sse(l, kept);
    },
    stream(req, res) {
      res.writeHead(200, { 'Content-Type': 'text/event-stream; charset=utf-8', 'Cache-Control': 'no-store', 'X-Content-Type-Options': 'nosniff' });
      for (const e of [...received].reverse()) sse(res, e);
      listeners.add(res);
      req.on('close', () => listeners.delete(res));
    },
    events: () => received,
  };
}

function answer(res: http.ServerResponse, status: number, text?: string): void {
  res.writeHead(status, text ? { 'Content-Type': 'text/plain; charset=utf-8' } : {});
  res.end(text);
}

async function readBody(req: http.IncomingMessage): Promise<string> {
  let size = 0;
  const chunks: Buffer[] = [];
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY) throw new Error('too large');
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

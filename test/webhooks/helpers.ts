// Helpers for the consent tests: a partner's webhook receiver (a real local HTTP server), the
// operator CLI as a real process on the test's database, and delivery driven by hand.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { deliverDueWebhooks } from '../../src/jobs/webhooks.js';
import { findPartnerByKey } from '../../src/repositories/partners.js';
import type { TestApp } from '../helpers/app.js';
import { runCli } from '../helpers/cli.js';

export interface Delivery {
  headers: Record<string, string>;
  body: string;
}

export interface Receiver {
  url: string;
  deliveries: Delivery[];
  close(): Promise<void>;
}

/** A partner's endpoint: answers 204 to everything and keeps what it was sent. */
export async function startReceiver(): Promise<Receiver> {
  const deliveries: Delivery[] = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString('utf8')));
    req.on('end', () => {
      const headers: Record<string, string> = {};
      for (const [k, v] of Object.entries(req.headers)) if (typeof v === 'string') headers[k] = v;
      deliveries.push({ headers, body });
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks/idsvc`,
    deliveries,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

export interface ReceivedEvent {
  type: string;
  timestamp: string;
  data: Record<string, unknown>;
}

/**
 * Every event the receiver got, each checked with the reference implementation of Standard
 * Webhooks (the `standardwebhooks` package: signature and a 5-minute timestamp tolerance against
 * the wall clock). Throws on the first that does not verify.
 */
export async function verifiedEvents(t: TestApp, apiKey: string, receiver: Receiver): Promise<ReceivedEvent[]> {
  const secret = (await findPartnerByKey(t.ctx.db, apiKey))?.webhook_secret;
  if (!secret) throw new Error('partner has no webhook secret');
  const wh = new Webhook(secret);
  return receiver.deliveries.map((d) => wh.verify(d.body, d.headers) as ReceivedEvent);
}

/** The test's clock at the wall clock: CLI processes write with it, and standardwebhooks checks against it. */
export function toWallClock(t: TestApp): void {
  const behind = Date.now() - t.clock.now();
  if (behind > 0) t.clock.advance(behind);
}

/** Runs delivery until nothing more is due (as the background job would, without waiting). */
export async function deliverAll(t: TestApp): Promise<void> {
  toWallClock(t);
  while ((await deliverDueWebhooks(t.ctx)) > 0);
}

/** The `idsvc` command as an operator runs it: against the test's database, with the server's BASE_URL. */
/** The CLI with the server's BASE_URL, as docs/operations.md asks: events it writes carry profile URLs. */
export const cli = (t: TestApp, args: string[], stdin = '', env: Record<string, string> = {}) =>
  runCli(t, args, { stdin, env: { BASE_URL: t.config.baseUrl, ...env } });

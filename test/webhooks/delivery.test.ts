// Webhook delivery against a real local receiver (SPEC §9).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { verifyWebhook } from '@idsvc/client';
import { deliverDueWebhooks } from '../../src/jobs/webhooks.js';
import { findPartnerByKey } from '../../src/repositories/partners.js';
import { startTestApp, type TestApp } from '../helpers/app.js';

interface Received {
  headers: http.IncomingHttpHeaders;
  body: string;
}

let t: TestApp;
let receiver: http.Server;
let received: Received[] = [];
let answers: { status: number; headers?: Record<string, string> }[] = [];
let hookUrl: string;

before(async () => {
  t = await startTestApp();
  receiver = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      received.push({ headers: req.headers, body });
      const a = answers.shift() ?? { status: 204 };
      res.writeHead(a.status, a.headers ?? {});
      res.end();
    });
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
  hookUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
});
after(async () => {
  receiver.close();
  await t.close();
});

async function setup() {
  received = [];
  answers = [];
  const A = await t.partner({ name: 'A' });
  const B = await t.partner({ name: 'B', webhookUrl: hookUrl });
  const email = `w${Math.random().toString(36).slice(2, 8)}@example.org`;
  const u = await t.user({ email, userId: `w${Math.random().toString(36).slice(2, 10)}` });
  await B.client.syncUser(email, { email, password: u.password });
  await A.client.syncUser(email, { email, password: u.password }); // B hears link.created
  const secret = (await findPartnerByKey(t.ctx.db, B.apiKey))!.webhook_secret!;
  return { A, B, email, secret };
}

const outboxOf = (partnerId: number) => t.ctx.db.kysely.selectFrom('outbox').selectAll().where('partner_id', '=', partnerId).orderBy('id').execute();

test('events are delivered signed; the signature verifies with the client helper', async () => {
  const { A, B, email, secret } = await setup();
  assert.match(secret, /^whsec_[A-Za-z0-9+/]{43}=$/, 'at least 24 random bytes (32 here)');
  await A.client.updateService(email, 'github', 'someone');
  await deliverDueWebhooks(t.ctx);
  assert.equal(received.length, 2);
  const events = await Promise.all(received.map((r) => verifyWebhook(secret, r.headers as Record<string, string>, r.body, { now: t.clock.now() })));
  assert.deepEqual(
    events.map((e) => e.type),
    ['link.created', 'identity.updated'],
  );
  assert.equal(events[1]?.data.svcId, 'github');
  assert.equal(received[0]?.headers['content-type'], 'application/json');
  assert.match(String(received[0]?.headers['webhook-id']), /^msg_[0-9a-f]{32}$/);
  const rows = await outboxOf(B.id);
  assert.ok(rows.every((r) => r.status === 'delivered' && r.delivered_at !== null));
  await assert.rejects(verifyWebhook(secret, received[0]!.headers as Record<string, string>, `${received[0]!.body} `, { now: t.clock.now() }), /signature/);
  // Partners without an endpoint keep their events, marked as not sent.
  assert.ok((await outboxOf(A.id)).every((r) => r.status === 'skipped'));
  await deliverDueWebhooks(t.ctx);
  assert.equal(received.length, 2, 'nothing is sent twice');
});

test('failures are retried with back-off; Retry-After is honoured; 72 hours then give up', async () => {
  const { B } = await setup();
  answers = [{ status: 500 }, { status: 503, headers: { 'retry-after': '120' } }];
  await deliverDueWebhooks(t.ctx);
  let [row] = await outboxOf(B.id);
  assert.equal(row?.status, 'pending');
  assert.equal(row?.attempts, 1);
  assert.equal(row?.last_error, 'HTTP 500');
  assert.ok(row!.next_attempt_at > t.clock.now());
  assert.equal(await deliverDueWebhooks(t.ctx), 0, 'not due yet');
  t.clock.advance(row!.next_attempt_at - t.clock.now());
  await deliverDueWebhooks(t.ctx);
  [row] = await outboxOf(B.id);
  assert.equal(row?.attempts, 2);
  assert.equal(row?.next_attempt_at, t.clock.now() + 120_000, 'Retry-After: 120');
  t.clock.advance(120_000);
  await deliverDueWebhooks(t.ctx);
  [row] = await outboxOf(B.id);
  assert.equal(row?.status, 'delivered');
  assert.equal(received.length, 3);

  // An endpoint that never answers 2xx is given up after 72 hours.
  const again = await setup();
  answers = Array.from({ length: 100 }, () => ({ status: 500 }));
  for (let i = 0; i < 100; i++) {
    await deliverDueWebhooks(t.ctx);
    const [r] = await outboxOf(again.B.id);
    if (r?.status === 'dead') break;
    t.clock.advance(r!.next_attempt_at - t.clock.now());
  }
  const [dead] = await outboxOf(again.B.id);
  assert.equal(dead?.status, 'dead');
  assert.match(String(dead?.last_error), /72 hours/);
  assert.ok(t.clock.now() - dead!.created_at <= 72 * 3600_000 + 3600_000);
});

test('410 Gone disables the endpoint', async () => {
  const { A, B, email } = await setup();
  answers = [{ status: 410 }];
  await deliverDueWebhooks(t.ctx);
  assert.equal((await findPartnerByKey(t.ctx.db, B.apiKey))?.webhook_disabled, true);
  await A.client.updateService(email, 'github', 'x');
  await deliverDueWebhooks(t.ctx);
  assert.equal(received.length, 1);
  const rows = await outboxOf(B.id);
  assert.deepEqual(
    rows.map((r) => r.status),
    ['dead', 'skipped'],
  );
});

// The client package's verifyWebhook accepts exactly what the standardwebhooks package accepts (the
// library the server signs with), so a partner may use either, or any Standard Webhooks library.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import fc from 'fast-check';
import { Webhook } from 'standardwebhooks';
import { verifyWebhook } from '@idsvc/client';
import { deliverDueWebhooks } from '../../src/jobs/webhooks.js';
import { findPartnerByKey } from '../../src/repositories/partners.js';
import { startTestApp, type TestApp } from '../helpers/app.js';

const newSecret = () => `whsec_${randomBytes(32).toString('base64')}`;

/** Both verdicts on one delivery: the parsed event, or null when refused. */
async function verdicts(secret: string, headers: Record<string, string>, body: string): Promise<{ client: unknown; reference: unknown }> {
  let reference: unknown = null;
  try {
    reference = new Webhook(secret).verify(body, headers);
  } catch {
    reference = null;
  }
  const client = await verifyWebhook(secret, headers, body).catch(() => null);
  return { client, reference };
}

function signed(secret: string, id: string, seconds: number, body: string): Record<string, string> {
  return {
    'webhook-id': id,
    'webhook-timestamp': String(seconds),
    'webhook-signature': new Webhook(secret).sign(id, new Date(seconds * 1000), body),
  };
}

const nowSeconds = () => Math.floor(Date.now() / 1000);

test('what standardwebhooks signs, the client verifies; any change to id, timestamp, body or secret is refused by both', async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.string({ minLength: 1, maxLength: 40 }).filter((s) => !/[\s,]/.test(s)),
      fc.dictionary(fc.string({ maxLength: 12 }), fc.oneof(fc.string({ unit: 'grapheme', maxLength: 30 }), fc.integer(), fc.boolean())),
      fc.integer({ min: -290, max: 290 }),
      async (id, data, skew) => {
        const secret = newSecret();
        const body = JSON.stringify({ type: 'identity.updated', timestamp: new Date().toISOString(), data });
        const headers = signed(secret, id, nowSeconds() + skew, body);
        const ok = await verdicts(secret, headers, body);
        assert.deepEqual(ok.client, JSON.parse(body));
        assert.deepEqual(ok.client, ok.reference);
        for (const [h, b, s] of [
          [{ ...headers, 'webhook-id': `${id}x` }, body, secret],
          [{ ...headers, 'webhook-timestamp': String(Number(headers['webhook-timestamp']) + 1) }, body, secret],
          [headers, `${body} `, secret],
          [headers, body, newSecret()],
        ] as const) {
          assert.deepEqual(await verdicts(s, h, b), { client: null, reference: null });
        }
      },
    ),
    { numRuns: 50 },
  );
});

test('several signatures (a secret being rotated): one matching v1 signature is enough for both; other versions are ignored', async () => {
  const secret = newSecret();
  const other = newSecret();
  const body = JSON.stringify({ type: 'ping', timestamp: new Date().toISOString(), data: {} });
  const base = signed(secret, 'msg_1', nowSeconds(), body);
  const good = base['webhook-signature']!;
  const wrong = signed(other, 'msg_1', nowSeconds(), body)['webhook-signature']!;
  for (const [signature, accepted] of [
    [`${wrong} ${good}`, true],
    [`${good} ${wrong}`, true],
    [wrong, false],
    [good.replace('v1,', 'v2,'), false],
    [`v1,not*base64 ${good}`, true],
    ['v1,', false],
  ] as const) {
    const v = await verdicts(secret, { ...base, 'webhook-signature': signature }, body);
    assert.equal(v.client !== null, accepted, signature);
    assert.equal(v.reference !== null, accepted, `standardwebhooks: ${signature}`);
  }
});

test('timestamps more than five minutes away from now are refused by both, in either direction', async () => {
  const secret = newSecret();
  const body = '{"type":"ping","timestamp":"2026-01-01T00:00:00.000Z","data":{}}';
  for (const [skew, accepted] of [
    [-299, true],
    [299, true],
    [-310, false],
    [310, false],
    [-86400, false],
  ] as const) {
    const v = await verdicts(secret, signed(secret, 'msg_t', nowSeconds() + skew, body), body);
    assert.equal(v.client !== null, accepted, `skew ${skew}`);
    assert.equal(v.reference !== null, accepted, `standardwebhooks: skew ${skew}`);
  }
});

test('headers in any case, as a plain object or a fetch Headers; a secret with or without its whsec_ prefix', async () => {
  const secret = newSecret();
  const body = '{"type":"ping","timestamp":"2026-01-01T00:00:00.000Z","data":{}}';
  const headers = signed(secret, 'msg_h', nowSeconds(), body);
  const upper = Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.replace(/\b\w/g, (c) => c.toUpperCase()), v]));
  assert.equal((await verifyWebhook(secret, upper, body)).type, 'ping');
  assert.equal((await verifyWebhook(secret, new Headers(upper), body)).type, 'ping');
  assert.equal((await verifyWebhook(secret.slice('whsec_'.length), headers, body)).type, 'ping');
  assert.equal((new Webhook(secret.slice('whsec_'.length)).verify(body, headers) as { type: string }).type, 'ping');
  await assert.rejects(verifyWebhook(secret, { ...headers, 'webhook-id': '' }, body), /missing webhook headers/);
});

let t: TestApp;
let receiver: http.Server;
const received: { headers: Record<string, string>; body: string }[] = [];

before(async () => {
  t = await startTestApp();
  receiver = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      received.push({ headers: req.headers as Record<string, string>, body });
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
});
after(async () => {
  receiver.close();
  await t.close();
});

test("the server's real deliveries verify the same with the client and with standardwebhooks", async () => {
  const hookUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
  const A = await t.partner({ name: 'A' });
  const B = await t.partner({ name: 'B', webhookUrl: hookUrl });
  const u = await t.user({ email: 'compat@example.org', userId: 'compat' });
  await B.client.syncUser('compat', { email: 'compat@example.org', password: u.password });
  await A.client.syncUser('compat', { email: 'compat@example.org', password: u.password });
  await A.client.updateService('compat', 'github', 'compat-gh');
  // Deliveries are stamped with the app's clock; both libraries check against the real time.
  if (t.clock.now() < Date.now()) t.clock.advance(Date.now() - t.clock.now());
  await deliverDueWebhooks(t.ctx);
  const secret = (await findPartnerByKey(t.ctx.db, B.apiKey))!.webhook_secret!;
  assert.equal(received.length, 2);
  for (const r of received) {
    const v = await verdicts(secret, r.headers, r.body);
    assert.notEqual(v.client, null);
    assert.deepEqual(v.client, v.reference);
  }
  assert.deepEqual(
    received.map((r) => (JSON.parse(r.body) as { type: string }).type),
    ['link.created', 'identity.updated'],
  );
});

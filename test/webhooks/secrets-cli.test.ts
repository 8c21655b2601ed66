// Managing a partner's webhook from the operator's command line (issue 16): the secret `partner set
// --webhook` creates is shown, `rotate-webhook-secret` signs with both secrets during the grace
// period and with the new one alone after it, and `test-webhook` sends a signed `ping` at once.
// Everything goes through the real `idsvc` process to a real local receiver, and every signature is
// checked with the Standard Webhooks reference library.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { Webhook } from 'standardwebhooks';
import { listOutbox } from '../../src/repositories/outbox.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { cli as runCli, deliverAll, type Delivery } from './helpers.js';

let t: TestApp;
let server: http.Server;
let hookUrl: string;
let received: Delivery[] = [];
let answer: { status: number; body: string } = { status: 204, body: '' };

// The receiver is on loopback, which the outbound address policy lets through only with this.
const cli = (args: string[], env: Record<string, string> = {}) => runCli(t, args, '', { FETCH_ALLOW_PRIVATE: '1', ...env });

before(async () => {
  t = await startTestApp();
  server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString('utf8')));
    req.on('end', () => {
      const headers: Record<string, string> = {};
      for (const [k, v] of Object.entries(req.headers)) if (typeof v === 'string') headers[k] = v;
      received.push({ headers, body });
      res.writeHead(answer.status, { 'content-type': 'text/plain' }).end(answer.body);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  hookUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks/idsvc`;
});
after(async () => {
  server.closeAllConnections();
  server.close();
  await t.close();
});

function reset(next: { status: number; body: string } = { status: 204, body: '' }) {
  received = [];
  answer = next;
}

const signatures = (d: Delivery) => (d.headers['webhook-signature'] ?? '').split(' ');
const verifies = (secret: string, d: Delivery) => {
  try {
    new Webhook(secret).verify(d.body, d.headers);
    return true;
  } catch {
    return false;
  }
};

async function partnerWithHook(name: string) {
  const p = await t.partner({ name });
  const r = await cli(['--json', 'partner', 'set', p.apiKey, '--webhook', hookUrl]);
  assert.equal(r.code, 0, r.stderr);
  const out = JSON.parse(r.stdout) as { webhook_secret: string };
  return { ...p, secret: out.webhook_secret };
}

test('partner set --webhook prints the secret it creates (text and --json), and only then', async () => {
  const p = await t.partner({ name: 'text' });
  const r = await cli(['partner', 'set', p.apiKey, '--webhook', hookUrl]);
  assert.equal(r.code, 0, r.stderr);
  const secret = /^webhook_secret\s+(whsec_\S+)\s+\(shown once/m.exec(r.stdout)?.[1];
  assert.ok(secret, r.stdout);
  // The secret printed is the one deliveries are signed with.
  reset();
  assert.equal((await cli(['partner', 'test-webhook', p.apiKey])).code, 0);
  assert.equal(received.length, 1);
  assert.ok(verifies(secret, received[0]!));

  const j = await partnerWithHook('json');
  assert.match(j.secret, /^whsec_[A-Za-z0-9+/]{43}=$/);
  // Moving the endpoint keeps the secret, so nothing new is shown.
  const moved = await cli(['--json', 'partner', 'set', j.apiKey, '--webhook', `${hookUrl}/v2`]);
  assert.equal(moved.code, 0, moved.stderr);
  assert.equal((JSON.parse(moved.stdout) as { webhook_secret?: string }).webhook_secret, undefined);
  assert.doesNotMatch((await cli(['partner', 'set', j.apiKey, '--webhook', hookUrl])).stdout, /whsec_/);
  // Neither listing nor showing a partner reveals it.
  assert.doesNotMatch((await cli(['--json', 'partner', 'show', j.apiKey])).stdout, /whsec_/);
  assert.doesNotMatch((await cli(['--json', 'partner', 'list'])).stdout, /whsec_/);
});

test('test-webhook sends a signed ping now and prints the receiver status and an excerpt of its answer', async () => {
  const p = await partnerWithHook('ping');
  reset({ status: 200, body: `pong from the partner\n\u001b[31m${'x'.repeat(500)}` });
  const r = await cli(['partner', 'test-webhook', p.apiKey]);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(received.length, 1, 'sent at once, not through the outbox');
  const event = new Webhook(p.secret).verify(received[0]!.body, received[0]!.headers) as { type: string; timestamp: string; data: unknown };
  assert.equal(event.type, 'ping');
  assert.deepEqual(event.data, {});
  assert.ok(Math.abs(Date.parse(event.timestamp) - Date.now()) < 60_000);
  const id = received[0]!.headers['webhook-id']!;
  assert.match(id, /^msg_[0-9a-f]{32}$/);
  assert.match(r.stdout, new RegExp(`ping ${id}: HTTP 200 \\(accepted\\)`));
  assert.match(r.stdout, /^answer {2}pong from the partner \[31mx+…$/m, 'control characters blanked, long answers cut');
  assert.ok(!r.stdout.includes('\u001b'), 'no escape character from the receiver reaches the terminal');
  assert.ok(r.stdout.length < 600);
  assert.equal((await listOutbox(t.ctx.db, p.id)).length, 0, 'a ping is not an outbox event');

  reset({ status: 500, body: 'receiver broke' });
  const failed = await cli(['--json', 'partner', 'test-webhook', p.apiKey]);
  assert.equal(failed.code, 1, 'a non-2xx answer fails the command');
  const out = JSON.parse(failed.stdout) as { ok: boolean; status: number; answer: string; webhook_id: string };
  assert.deepEqual({ ok: out.ok, status: out.status, answer: out.answer }, { ok: false, status: 500, answer: 'receiver broke' });
  assert.equal(out.webhook_id, received[0]!.headers['webhook-id']);

  // No answer at all: the reason, no status.
  const nowhere = await t.partner({ name: 'nowhere' });
  const dead = `http://127.0.0.1:${await closedPort()}/hook`;
  assert.equal((await cli(['partner', 'set', nowhere.apiKey, '--webhook', dead])).code, 0);
  const refused = await cli(['partner', 'test-webhook', nowhere.apiKey]);
  assert.equal(refused.code, 1);
  assert.match(refused.stdout, /: no answer \(not accepted/);

  const without = await t.partner({ name: 'no hook' });
  const none = await cli(['partner', 'test-webhook', without.apiKey]);
  assert.equal(none.code, 1);
  assert.match(none.stderr, /has no webhook endpoint/);
});

test('rotate-webhook-secret: both secrets sign during the grace period, only the new one after it', async () => {
  const p = await partnerWithHook('rotating');
  const r = await cli(['--json', 'partner', 'rotate-webhook-secret', p.apiKey, '--grace', '10']);
  assert.equal(r.code, 0, r.stderr);
  const rotated = JSON.parse(r.stdout) as { webhook_secret: string; previous_secret_signs_seconds: number };
  assert.match(rotated.webhook_secret, /^whsec_/);
  assert.notEqual(rotated.webhook_secret, p.secret);
  assert.equal(rotated.previous_secret_signs_seconds, 10);
  const shown = JSON.parse((await cli(['--json', 'partner', 'show', p.apiKey])).stdout) as { previous_webhook_secret_signs_until: string | null };
  const graceEnds = Date.parse(shown.previous_webhook_secret_signs_until ?? '');
  assert.ok(graceEnds > Date.now());

  // In grace: the ping and an event from the outbox each carry two signatures, one per secret.
  reset();
  assert.equal((await cli(['partner', 'test-webhook', p.apiKey])).code, 0);
  const other = await t.partner({ name: 'other' });
  const email = `rot${Math.random().toString(36).slice(2, 8)}@example.org`;
  const u = await t.user({ email, userId: `rot${Math.random().toString(36).slice(2, 8)}` });
  await p.client.syncUser(email, { email, password: u.password });
  await other.client.syncUser(email, { email, password: u.password }); // p hears link.created
  await deliverAll(t);
  assert.equal(received.length, 2);
  assert.equal((JSON.parse(received[1]!.body) as { type: string }).type, 'link.created');
  for (const d of received) {
    assert.equal(signatures(d).length, 2);
    assert.ok(verifies(rotated.webhook_secret, d), 'a receiver with the new secret accepts it');
    assert.ok(verifies(p.secret, d), 'a receiver still on the old secret accepts it');
  }

  await sleep(Math.max(0, graceEnds - Date.now()) + 100);
  reset();
  assert.equal((await cli(['partner', 'test-webhook', p.apiKey])).code, 0);
  assert.equal(signatures(received[0]!).length, 1);
  assert.ok(verifies(rotated.webhook_secret, received[0]!));
  assert.ok(!verifies(p.secret, received[0]!), 'the old secret signs no more');
  assert.equal(
    (JSON.parse((await cli(['--json', 'partner', 'show', p.apiKey])).stdout) as { previous_webhook_secret_signs_until: null })
      .previous_webhook_secret_signs_until,
    null,
  );
});

test('the grace period defaults to WEBHOOK_SECRET_GRACE_SECONDS; --grace 0 drops the old secret at once; a partner without an endpoint has nothing to rotate', async () => {
  const p = await partnerWithHook('defaults');
  const r = await cli(['--json', 'partner', 'rotate-webhook-secret', p.apiKey], { WEBHOOK_SECRET_GRACE_SECONDS: '7200' });
  assert.equal(r.code, 0, r.stderr);
  const first = JSON.parse(r.stdout) as { webhook_secret: string; previous_secret_signs_seconds: number };
  assert.equal(first.previous_secret_signs_seconds, 7200);
  const text = await cli(['partner', 'rotate-webhook-secret', p.apiKey, '--grace', '0']);
  assert.equal(text.code, 0, text.stderr);
  const second = /^new webhook_secret\s+(whsec_\S+)/m.exec(text.stdout)?.[1];
  assert.ok(second, text.stdout);
  assert.match(text.stdout, /the previous secret no longer signs/);
  reset();
  assert.equal((await cli(['partner', 'test-webhook', p.apiKey])).code, 0);
  assert.equal(signatures(received[0]!).length, 1);
  assert.ok(verifies(second, received[0]!));
  assert.ok(!verifies(first.webhook_secret, received[0]!));

  const bad = await cli(['partner', 'rotate-webhook-secret', p.apiKey], { WEBHOOK_SECRET_GRACE_SECONDS: 'soon' });
  assert.equal(bad.code, 1);
  assert.match(bad.stderr, /WEBHOOK_SECRET_GRACE_SECONDS/);

  const without = await t.partner({ name: 'no endpoint' });
  const none = await cli(['partner', 'rotate-webhook-secret', without.apiKey]);
  assert.equal(none.code, 1);
  assert.match(none.stderr, /has no webhook endpoint/);
});

test('an endpoint disabled after 410 Gone is enabled again by setting its URL again', async () => {
  const p = await partnerWithHook('gone');
  const other = await t.partner({ name: 'other gone' });
  const email = `gone${Math.random().toString(36).slice(2, 8)}@example.org`;
  const u = await t.user({ email, userId: `gone${Math.random().toString(36).slice(2, 8)}` });
  await p.client.syncUser(email, { email, password: u.password });
  await other.client.syncUser(email, { email, password: u.password });
  reset({ status: 410, body: '' });
  await deliverAll(t);
  const show = async () => JSON.parse((await cli(['--json', 'partner', 'show', p.apiKey])).stdout) as { webhook_disabled: boolean };
  assert.equal((await show()).webhook_disabled, true);
  assert.match((await cli(['partner', 'test-webhook', p.apiKey])).stdout, /disabled after 410 Gone/);
  assert.equal((await cli(['partner', 'set', p.apiKey, '--webhook', hookUrl])).code, 0);
  assert.equal((await show()).webhook_disabled, false);
});

/** A loopback port nothing listens on. */
async function closedPort(): Promise<number> {
  const s = http.createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const port = (s.address() as AddressInfo).port;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

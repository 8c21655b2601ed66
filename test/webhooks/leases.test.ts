// Two instances delivering from one outbox to a slow endpoint (docs/webhooks.md "Order, duplicates,
// retries"): a pass of slow attempts outlasts any lease taken for a whole batch up front, so each
// event is leased just before its own attempt, and no event is ever in flight twice at once.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { ATTEMPT_TIMEOUT_MS, deliverDueWebhooks } from '../../src/jobs/webhooks.js';
import { startTestApp, type TestApp } from '../helpers/app.js';

let one: TestApp;
let two: TestApp;
let receiver: http.Server;
/** Requests the receiver holds, unanswered, until the test lets them go. */
const held: { id: string; answer(): void }[] = [];
/** Requests per webhook-id, and the ids that arrived while the same id was still held. */
const seen = new Map<string, number>();
const inFlight = new Map<string, number>();
const concurrent: string[] = [];
let hookUrl: string;

before(async () => {
  one = await startTestApp();
  two = await startTestApp(one.cliEnv); // a second instance on the same database
  receiver = http.createServer((req, res) => {
    const id = String(req.headers['webhook-id']);
    seen.set(id, (seen.get(id) ?? 0) + 1);
    if ((inFlight.get(id) ?? 0) > 0) concurrent.push(id);
    inFlight.set(id, (inFlight.get(id) ?? 0) + 1);
    req.resume();
    req.on('end', () =>
      held.push({
        id,
        answer() {
          inFlight.set(id, inFlight.get(id)! - 1);
          res.writeHead(204).end();
        },
      }),
    );
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
  hookUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
});

after(async () => {
  receiver.closeAllConnections();
  receiver.close();
  await two.close();
  await one.close();
});

test('a pass of slow attempts on one instance and a pass on another never send one event twice at once', async (ctx) => {
  const A = await one.partner({ name: 'A' });
  const B = await one.partner({ name: 'B', webhookUrl: hookUrl });
  const email = 'slow@example.org';
  const u = await one.user({ email, userId: 'slowuser' });
  await B.client.syncUser(email, { email, password: u.password });
  await A.client.syncUser(email, { email, password: u.password });
  for (let i = 0; i < 7; i++) await A.client.updateService(email, 'github', `v${i}`);
  const events = await one.ctx.db.kysely.selectFrom('outbox').select('event_id').where('partner_id', '=', B.id).execute();
  assert.ok(events.length >= 8, `events for B (${events.length})`);

  // Both instances' clocks read the same time; each held attempt takes just under the attempt
  // timeout of that time, so the first instance's pass lasts far longer than one lease.
  two.clock.advance(one.clock.now() - two.clock.now());
  const step = ATTEMPT_TIMEOUT_MS - 1000;
  const started = one.clock.now();
  let first: Promise<number> | null = deliverDueWebhooks(one.ctx);
  let second: Promise<number> | null = null;
  let done = 0;
  let secondRan = false;
  first.then(() => (first = null));
  while (first || second) {
    if (held.length === 0) {
      await sleep(10);
      continue;
    }
    one.clock.advance(step);
    two.clock.advance(step);
    if (!second && one.clock.now() - started > 60_000) {
      // The other instance's pass starts while the first is still at work.
      secondRan = true;
      second = deliverDueWebhooks(two.ctx);
      second.then(() => (second = null));
      await sleep(200); // its first claim and request, if any, before the held one is answered
    }
    for (const h of held.splice(0)) {
      h.answer();
      done++;
    }
  }
  ctx.diagnostic(`${done} attempts, ${seen.size} distinct events, concurrent duplicates: ${concurrent.length}`);
  assert.ok(secondRan, 'the second pass ran during the first');
  assert.deepEqual(concurrent, [], 'no event was in flight twice at once');
  assert.equal(seen.size, events.length, 'every event was delivered');
  assert.deepEqual(
    [...seen.values()].filter((n) => n > 1),
    [],
    'and each once',
  );
  const left = await one.ctx.db.kysely.selectFrom('outbox').select('status').where('partner_id', '=', B.id).where('status', '!=', 'delivered').execute();
  assert.deepEqual(left, []);
});

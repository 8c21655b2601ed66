// The OpenAPI document's `webhooks` section (issue 16): it lists every event idsvc sends, the
// served document still validates as OpenAPI 3.1, and every real payload of each event, produced
// through the API and the CLI and received by a real endpoint, matches the schema declared for it.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { Validator } from '@seriousme/openapi-schema-validator';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { cli, deliverAll, startReceiver, verifiedEvents, type Receiver } from './helpers.js';

// ajv-formats is CommonJS: under ESM its plugin is the `default` property of the default import.
const addFormats = addFormatsModule.default;

const EVENTS = [
  'identity.updated',
  'identity.verified',
  'identity.unverified',
  'identity.removed',
  'link.created',
  'link.removed',
  'user.hidden',
  'user.visible',
  'user.deleted',
  'profile.updated',
  'ping',
];

interface WebhookDoc {
  post: {
    operationId: string;
    parameters: { name: string; in: string }[];
    requestBody: { content: { 'application/json': { schema: Record<string, unknown> } } };
  };
}

let t: TestApp;
let receiver: Receiver;
let doc: { openapi: string; webhooks: Record<string, WebhookDoc> };

before(async () => {
  t = await startTestApp();
  receiver = await startReceiver();
  const res = await fetch(`${t.baseUrl}/api/openapi.json`);
  assert.equal(res.status, 200);
  doc = (await res.json()) as typeof doc;
});
after(async () => {
  await receiver.close();
  await t.close();
});

test('the served document declares every event under webhooks and validates as OpenAPI 3.1', async () => {
  const validator = new Validator();
  const result = await validator.validate(doc);
  assert.equal(result.valid, true, JSON.stringify(result.errors, null, 2));
  assert.equal(validator.version, '3.1');
  assert.deepEqual(Object.keys(doc.webhooks).sort(), [...EVENTS].sort());
  for (const type of EVENTS) {
    const op = doc.webhooks[type]!.post;
    assert.deepEqual(
      op.parameters.map((p) => `${p.in}:${p.name}`),
      ['header:webhook-id', 'header:webhook-timestamp', 'header:webhook-signature'],
      type,
    );
    const schema = op.requestBody.content['application/json'].schema as { properties: { type: { const: string } } };
    assert.equal(schema.properties.type.const, type);
  }
});

test('every event idsvc really sends matches the schema the document declares for it', async () => {
  const A = await t.partner({ name: 'A' });
  const B = await t.partner({ name: 'B', webhookUrl: receiver.url });
  const email = 'schema-user@example.org';
  const u = await t.user({ email, userId: 'schemauser' });
  const run = async (args: string[]) => {
    const r = await cli(t, args, '', { FETCH_ALLOW_PRIVATE: '1' });
    assert.equal(r.code, 0, `${args.join(' ')}: ${r.stderr}`);
  };
  // Each step is delivered before the next: an event still waiting when the user hides or is
  // deleted is rightly never sent.
  const steps: (() => Promise<unknown>)[] = [
    () => B.client.syncUser(email, { email, password: u.password }),
    () => A.client.syncUser(email, { email, password: u.password }), // link.created
    () => A.client.updateService(email, 'github', 'schema-someone'), // identity.updated
    () => run(['user', 'verify', 'schemauser', 'github']), // identity.verified
    () => run(['user', 'verify', 'schemauser', 'github', '--clear']), // identity.unverified
    () => A.client.updateService(email, 'github', ''), // identity.removed
    () => A.client.unsyncUser(email), // link.removed
    () => run(['user', 'set', 'schemauser', '--nickname', 'Schemy', '--city', 'Lyon', '--public', 'nickname']), // profile.updated
    () => run(['user', 'set', 'schemauser', '--opt-out']), // user.hidden
    () => run(['user', 'set', 'schemauser', '--opt-in']), // user.visible
    () => run(['user', 'delete', 'schemauser']), // user.deleted
    () => run(['partner', 'test-webhook', B.apiKey]), // ping
  ];
  for (const step of steps) {
    await step();
    await deliverAll(t);
  }

  const events = await verifiedEvents(t, B.apiKey, receiver);
  assert.deepEqual(new Set(events.map((e) => e.type)), new Set(EVENTS), 'one of each event was sent');

  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats(ajv);
  for (const event of events) {
    const schema = doc.webhooks[event.type]!.post.requestBody.content['application/json'].schema;
    const valid = ajv.validate(schema, event);
    assert.ok(valid, `${event.type}: ${ajv.errorsText(ajv.errors)} in ${JSON.stringify(event)}`);
  }
  // And the schemas are not so loose that anything passes.
  const updated = doc.webhooks['identity.updated']!.post.requestBody.content['application/json'].schema;
  assert.equal(ajv.validate(updated, { type: 'identity.updated', timestamp: new Date().toISOString(), data: { userId: 'x', user_identifier: 'y' } }), false);
  assert.equal(
    ajv.validate(updated, {
      type: 'identity.removed',
      timestamp: new Date().toISOString(),
      data: { userId: 'x', user_identifier: 'y', svcId: 'github', url: '', verified: false },
    }),
    false,
  );
});

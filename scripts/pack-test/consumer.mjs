// Runs in an empty project where only the packed @idsvc/client tarball is installed, under plain
// `node` (no tsx, no TypeScript): what a partner's server does with the package, against a live idsvc.
// Usage: IDSVC_URL=… KEY_A=… TOKEN_A=… KEY_B=… TOKEN_B=… SECRET_B=… HOOK_PORT=… EMAIL=… PASSWORD=… node consumer.mjs
import http from 'node:http';
import assert from 'node:assert/strict';
import { IdsvcClient, IdsvcError, verifyWebhook } from '@idsvc/client';

const env = (name) => {
  const v = process.env[name];
  if (!v) throw new Error(`${name} is not set`);
  return v;
};
const baseUrl = env('IDSVC_URL');
const email = env('EMAIL');
const password = env('PASSWORD');
const secretB = env('SECRET_B');

// Partner B's webhook receiver: every delivery is checked with the package's verifyWebhook.
const events = [];
const rejected = [];
const receiver = http.createServer((req, res) => {
  let body = '';
  req.setEncoding('utf8');
  req.on('data', (c) => (body += c));
  req.on('end', async () => {
    try {
      events.push(await verifyWebhook(secretB, req.headers, body));
      // The same delivery with one byte changed must not pass.
      await verifyWebhook(secretB, req.headers, `${body} `).then(
        () => rejected.push('a tampered body verified'),
        () => undefined,
      );
      res.writeHead(204).end();
    } catch (err) {
      rejected.push(String(err));
      res.writeHead(400).end();
    }
  });
});
await new Promise((resolve) => receiver.listen(Number(env('HOOK_PORT')), '127.0.0.1', resolve));

const A = new IdsvcClient({ baseUrl, apiKey: env('KEY_A'), apiToken: env('TOKEN_A') });
const B = new IdsvcClient({ baseUrl, apiKey: env('KEY_B'), apiToken: env('TOKEN_B') });

// Read the catalogue.
const github = (await A.serviceDetails({ svcId: 'github' }))[0];
assert.equal(github?.svcId, 'github');

// Push, then read back.
assert.deepEqual(await A.updateService(email, 'github', 'alice-gh'), { svcId: 'github', usrSvcId: 'alice-gh' });
const pushed = await A.returnServices(email);
assert.equal(pushed.find((s) => s.svcId === 'github')?.usrSvcId, 'alice-gh');

// Typed errors.
const wrong = new IdsvcClient({ baseUrl, apiKey: env('KEY_A'), apiToken: 'not-the-token' });
await assert.rejects(wrong.returnServices(email), (e) => e instanceof IdsvcError && e.code === 'invalid_api_token' && e.status === 401);
await assert.rejects(B.syncUser(email, { email, password: 'wrong password' }), (e) => e instanceof IdsvcError && e.code === 'invalid_credentials');

// Sync both partners; B then hears A's link and A's next push.
assert.equal(await B.syncUser(email, { email, password }), true);
assert.equal(await A.syncUser(email, { email, password }), true);
await A.updateService(email, 'gitlab', 'alice-gl');
const profile = await B.returnProfile(email);
assert.equal(profile.userId, 'alice');

// A signed widget URL (Web Crypto): the service answers it with the private view's script.
const widget = await fetch(await A.widgetUrl(email, { expiresInSeconds: 600 }));
assert.equal(widget.status, 200);
assert.match(widget.headers.get('content-type') ?? '', /javascript/);
assert.doesNotMatch(await widget.text(), /warning idsvc widget/);

// Webhooks: delivered by the server's job (every 2 s), verified above.
const deadline = Date.now() + 20_000;
const want = () => events.some((e) => e.type === 'link.created') && events.some((e) => e.type === 'identity.updated' && e.data.svcId === 'gitlab');
while (!want() && rejected.length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 200));
receiver.close();
assert.deepEqual(rejected, []);
assert.ok(want(), `webhooks received: ${JSON.stringify(events.map((e) => e.type))}`);

console.log(`consumer ok: pushed, read, synced, signed a widget URL, verified ${events.length} webhook(s): ${events.map((e) => e.type).join(', ')}`);

// A partner's dashboard, for its members: the api_token issued and rotated (the old one refused
// after the grace period), origins, the webhook (address policy, secret once, ping, deliveries with
// their answers and "retry now"), members invited by mail and removed, linked users, and the usage
// page counting the partner's calls.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { IdsvcClient, IdsvcError } from '@idsvc/client';
import { deliverDueWebhooks } from '../../src/jobs/webhooks.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { lastMailTo, linkIn, mailsTo } from '../helpers/mailbox.js';
import { startServer, type LocalServer } from '../verification/servers.js';
import { approvedPartner, csrfOf, operator, person, submitOn, type Person } from './helpers.js';

let t: TestApp;
let receiver: LocalServer;
let answer = 200;
const received: { id: string; body: string }[] = [];
let op: Person;

before(async () => {
  t = await startTestApp({ TOKEN_GRACE_SECONDS: '3600' });
  receiver = await startServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      received.push({ id: String(req.headers['webhook-id']), body });
      res.writeHead(answer, { 'content-type': 'text/plain' });
      res.end(answer === 200 ? 'thanks' : 'receiver is down');
    });
  });
  op = await operator(t, 'odile_op');
});
after(async () => {
  await receiver.close();
  await t.close();
});

async function issue(p: Person, partnerId: number): Promise<string> {
  const r = await submitOn(p.client, `/partners/${partnerId}`, `/partners/${partnerId}/token`);
  assert.equal(r.res.status, 200);
  const token = /data-secret="api_token">([a-z0-9]{40})</.exec(r.body)?.[1];
  assert.ok(token);
  return token;
}

async function apiKeyOf(p: Person, partnerId: number): Promise<string> {
  const page = await p.client.get(`/partners/${partnerId}`);
  const key = /data-api-key[^>]*>([a-z0-9]{32})</.exec(page.body)?.[1];
  assert.ok(key);
  return key;
}

test('a rotated api_token: the new one works at once, the old one until the grace period ends', async () => {
  const kim = await person(t, 'kim_keys');
  const id = await approvedPartner(kim, op, 'Kim App');
  const first = await issue(kim, id);
  const apiKey = await apiKeyOf(kim, id);
  const old = new IdsvcClient({ baseUrl: t.baseUrl, apiKey, apiToken: first });
  const second = await issue(kim, id);
  assert.notEqual(first, second);
  const page = await kim.client.get(`/partners/${id}`);
  assert.match(page.body, /Previous api_token/);
  const fresh = new IdsvcClient({ baseUrl: t.baseUrl, apiKey, apiToken: second });
  assert.ok(await fresh.updateService('x@example.org', 'github', 'x'));
  assert.ok(await old.updateService('x@example.org', 'github', 'x'), 'the old token works during the grace period');
  t.clock.advance(3601 * 1000);
  await assert.rejects(old.updateService('x@example.org', 'github', 'x'), (e: unknown) => e instanceof IdsvcError && e.code === 'invalid_api_token');
  assert.ok(await fresh.updateService('x@example.org', 'github', 'x'));
});

test('the token form sent twice (a reload) rotates once: the second is refused, and the token it showed still works', async () => {
  const rey = await person(t, 'rey_reload');
  const id = await approvedPartner(rey, op, 'Rey App');
  await issue(rey, id);
  const page = await rey.client.get(`/partners/${id}`);
  const fields = {
    _csrf: await csrfOf(rey.client, `/partners/${id}`),
    replaces: /name="replaces" value="([^"]+)"/.exec(page.body)?.[1] ?? '',
  };
  assert.ok(fields.replaces, 'the form names the token it replaces');
  const first = await rey.client.post(`/partners/${id}/token`, fields);
  assert.equal(first.res.status, 200);
  const shown = /data-secret="api_token">([a-z0-9]{40})</.exec(first.body)?.[1];
  assert.ok(shown);
  const again = await rey.client.post(`/partners/${id}/token`, fields);
  assert.equal(again.res.status, 409);
  assert.match(again.body, /already issued/);
  assert.doesNotMatch(again.body, /data-secret="api_token"/);
  const client = new IdsvcClient({ baseUrl: t.baseUrl, apiKey: await apiKeyOf(rey, id), apiToken: shown });
  assert.ok(await client.updateService('x@example.org', 'github', 'x'), 'the token shown the first time is the current one');
});

test('origins: one per line, kept as origins; a non-http line is refused beside what was typed', async () => {
  const ola = await person(t, 'ola_origins');
  const id = await approvedPartner(ola, op, 'Ola App');
  const ok = await submitOn(ola.client, `/partners/${id}`, `/partners/${id}/origins`, { origins: 'https://a.example/x\nhttps://b.example' });
  assert.equal(ok.res.status, 303);
  const page = await ola.client.get(`/partners/${id}`);
  assert.match(page.body, /https:\/\/a\.example\nhttps:\/\/b\.example/);
  const bad = await submitOn(ola.client, `/partners/${id}`, `/partners/${id}/origins`, { origins: 'javascript:alert(1)' });
  assert.equal(bad.res.status, 400);
  assert.match(bad.body, /not an http or https address/);
});

test('webhook: the secret once, a ping with the answer, deliveries that succeed and fail, and retry now', async () => {
  const wes = await person(t, 'wes_webhooks');
  const id = await approvedPartner(wes, op, 'Wes App');
  const token = await issue(wes, id);
  const apiKey = await apiKeyOf(wes, id);
  const page = `/partners/${id}/webhook`;

  const refused = await submitOn(wes.client, page, page, { webhook_url: 'ftp://example.com/x' });
  assert.equal(refused.res.status, 400);
  const set = await submitOn(wes.client, page, page, { webhook_url: `${receiver.origin}/hooks` });
  assert.equal(set.res.status, 200);
  const secret = /data-secret="webhook secret">(whsec_[A-Za-z0-9+/=]+)</.exec(set.body)?.[1];
  assert.ok(secret, 'the secret is shown when the endpoint is first set');
  assert.equal((await wes.client.get(page)).body.includes(secret), false, 'and never again');

  const ping = await submitOn(wes.client, page, `${page}/ping`);
  assert.match(ping.body, /data-ping="ok"/);
  assert.match(ping.body, /HTTP 200/);
  assert.match(ping.body, /thanks/);

  // A person links to this partner, then changes their identities: events for it.
  const linked = await t.user({ email: 'lena@example.org', userId: 'lena_linked' });
  const client = new IdsvcClient({ baseUrl: t.baseUrl, apiKey, apiToken: token });
  await client.syncUser('lena@example.org', { email: 'lena@example.org', password: linked.password });
  const other = await t.partner({ name: 'Other' });
  await other.client.syncUser('lena@example.org', { email: 'lena@example.org', password: linked.password });
  await other.client.updateService('lena@example.org', 'github', 'lena');
  answer = 200;
  await deliverDueWebhooks(t.ctx);
  let rows = (await wes.client.get(page)).body;
  assert.match(rows, /data-state="delivered"/);
  assert.match(rows, /HTTP 200/);

  answer = 500;
  await other.client.updateService('lena@example.org', 'gitlab', 'lena');
  await deliverDueWebhooks(t.ctx);
  rows = (await wes.client.get(page)).body;
  assert.match(rows, /data-state="failed, will retry"/);
  assert.match(rows, /HTTP 500/);
  const failedEvent = /<tr data-event="[^"]+" data-state="failed, will retry">[\s\S]*?name="event" value="(\d+)"/.exec(rows)?.[1];
  assert.ok(failedEvent, 'a failed delivery has "Retry now"');

  answer = 200;
  const retry = await submitOn(wes.client, page, `${page}/retry`, { event: failedEvent });
  assert.equal(retry.res.status, 303);
  await deliverDueWebhooks(t.ctx);
  rows = (await wes.client.get(page)).body;
  assert.doesNotMatch(rows, /failed, will retry/);
  const none = await submitOn(wes.client, page, `${page}/retry`, { event: failedEvent });
  assert.equal(none.res.status, 400, 'a delivered event is not retried');

  const rotated = await submitOn(wes.client, page, `${page}/secret`);
  const newSecret = /data-secret="webhook secret">(whsec_[A-Za-z0-9+/=]+)</.exec(rotated.body)?.[1];
  assert.ok(newSecret && newSecret !== secret);

  const links = await wes.client.get(`/partners/${id}/links`);
  assert.match(links.body, /data-linked-count[^>]*>1</);
  assert.match(links.body, /linked \(sync_user\)/);
  await t.ctx.usage.flush();
  const usage = await wes.client.get(`/partners/${id}/usage`);
  const counted = Number(/data-usage-total="(\d+)"/.exec(usage.body)?.[1]);
  assert.ok(counted >= 1, `the usage page counts the partner's calls (${counted})`);
  assert.match(usage.body, /sync_user/);
});

test('members invite by mail (same answer for any address), the invited address accepts, others cannot, and the last member stays', async () => {
  const mia = await person(t, 'mia_members');
  const id = await approvedPartner(mia, op, 'Mia App');
  const members = `/partners/${id}/members`;
  const nobody = await submitOn(mia.client, members, `${members}/invite`, { email: 'nobody-here@example.org' });
  const ned = await person(t, 'ned_invited');
  const invited = await submitOn(mia.client, members, `${members}/invite`, { email: ned.email });
  assert.equal(nobody.res.status, 303);
  assert.equal(invited.res.status, 303);
  assert.equal(nobody.res.headers.get('location'), invited.res.headers.get('location'), 'no hint whether an account exists');
  assert.equal((await mailsTo(t, 'nobody-here@example.org')).length, 1);

  const link = linkIn(await lastMailTo(t, ned.email), '/partners/invitation?token=');
  const eve = await person(t, 'eve_other');
  const wrong = await eve.client.get(link);
  const wrongToken = /name="token" value="([^"]+)"/.exec(wrong.body)![1]!;
  const stolen = await eve.client.post('/partners/invitation', { _csrf: await csrfOf(eve.client, link), token: wrongToken });
  assert.equal(stolen.res.status, 410);
  assert.match(stolen.body, /sent to another e-mail address/);
  assert.equal((await eve.client.get(`/partners/${id}`)).res.status, 404);

  const accept = await ned.client.post('/partners/invitation', { _csrf: await csrfOf(ned.client, link), token: wrongToken });
  assert.equal(accept.res.status, 303);
  assert.equal((await ned.client.get(`/partners/${id}`)).res.status, 200);
  const reuse = await ned.client.post('/partners/invitation', { _csrf: await csrfOf(ned.client, link), token: wrongToken });
  assert.equal(reuse.res.status, 410, 'an invitation works once');

  const removed = await submitOn(mia.client, members, `${members}/remove`, { member: 'ned_invited' });
  assert.equal(removed.res.status, 303);
  assert.equal((await ned.client.get(`/partners/${id}`)).res.status, 404);
  const last = await submitOn(mia.client, members, `${members}/remove`, { member: 'mia_members' });
  assert.equal(last.res.status, 400);
  assert.match(last.body, /at least one member/);
});

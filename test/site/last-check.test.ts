// The account page's "last check" of an identity is that check's attempts only, even when two
// checks fall in the same clock tick (the test clock is held still here): a negative check right
// after a verifying one shows its own answers, not the earlier `verified`. On SQLite and PostgreSQL.
import assert from 'node:assert/strict';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { after, before, test } from 'node:test';
import type { TestApp } from '../helpers/app.js';
import { startServer, type LocalServer } from '../verification/servers.js';
import { SiteClient, startSiteApp } from './helpers.js';

let bio = '';
let api: LocalServer;
let web: LocalServer;
let t: TestApp;

before(async () => {
  // GitHub's REST API and its profile page (no rel="me" link back), stood in for by local servers.
  api = await startServer((req: IncomingMessage, res: ServerResponse) => {
    const found = req.url === '/users/tick-cat';
    res.writeHead(found ? 200 : 404, { 'content-type': 'application/json; charset=utf-8' });
    res.end(JSON.stringify(found ? { login: 'tick-cat', id: 7, bio, blog: '' } : { message: 'Not Found' }));
  });
  web = await startServer((_req: IncomingMessage, res: ServerResponse) => {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end('<!doctype html><title>tick-cat · GitHub</title><p>Cats.</p>');
  });
  t = await startSiteApp({ IDSVC_TEST_PROOF_ORIGINS: `https://api.github.com=${api.origin},https://www.github.com=${web.origin}` });
});

after(async () => {
  await t.close();
  await web.close();
  await api.close();
});

/** The identity's last-check lines on the account page, as "method result". */
function lastCheck(body: string): string[] {
  const item = body.slice(body.indexOf('id="identity-github"'));
  const list = item.slice(0, item.indexOf('</li>'));
  return [...list.matchAll(/data-check-result="(\w+)" data-method="([\w-]*)"/g)].map((m) => `${m[2]} ${m[1]}`);
}

test("two checks in one clock tick: the page shows the second one's answers", async () => {
  await t.user({ email: 'tick@example.org', userId: 'tick_user', password: 'correct horse battery staple' });
  const client = new SiteClient(t.baseUrl);
  assert.equal((await client.logIn('tick@example.org', 'correct horse battery staple')).status, 303);
  assert.equal((await client.submit('/account/identities', { svc_id: 'github', usr_svc_id: 'tick-cat' })).res.status, 303);

  bio = `Cats. ${t.config.baseUrl}/u/tick_user`;
  assert.equal((await client.submit('/account/identities/verify', { svc_id: 'github' })).res.status, 303);
  assert.deepEqual(lastCheck((await client.get('/account')).body), ['proof verified']);

  bio = 'Cats.';
  assert.equal((await client.submit('/account/identities/verify', { svc_id: 'github' })).res.status, 303);
  const { body } = await client.get('/account');
  assert.deepEqual(lastCheck(body), ['rel-me absent', 'proof absent']);
  assert.match(body, /data-pending-removal="true"/);
});

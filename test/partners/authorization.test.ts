// Who may use the partner area and the console, checked on every route they register (collected as
// the app registers them, so a new route is checked without being listed here): a logged-out
// visitor is sent to log in; a person who is not a member of a partner, a member of another
// partner included, gets 404 for every route naming it; an account without the operator role gets
// 403 for every console route; forms without a valid CSRF token are refused.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { RouteOptions } from 'fastify';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { SiteClient } from '../site/helpers.js';
import { approvedPartner, operator, person, type Person } from './helpers.js';

let t: TestApp;
const routes: { method: string; url: string }[] = [];
let alice: Person;
let bob: Person;
let op: Person;
let aliceP: number;
let bobP: number;

before(async () => {
  t = await startTestApp(
    {},
    {
      onRoute: (r: RouteOptions) => {
        const methods = Array.isArray(r.method) ? r.method : [r.method];
        for (const m of methods) if ((m === 'GET' || m === 'POST') && /^\/(partners|console)(\/|$)/.test(r.url)) routes.push({ method: m, url: r.url });
      },
    },
  );
  op = await operator(t, 'opal_op');
  alice = await person(t, 'alice_a');
  bob = await person(t, 'bob_b');
  aliceP = await approvedPartner(alice, op, 'Alice App');
  bobP = await approvedPartner(bob, op, 'Bob App');
});
after(() => t.close());

const fill = (url: string, partnerId: number) => url.replace(':id', String(partnerId)).replace(':userId', 'alice_a').replace(':svcId', 'github');

async function call(client: SiteClient, method: string, url: string): Promise<Response> {
  if (method === 'GET') return (await client.get(url)).res;
  // A valid token for this client's session, from a page every logged-in person may open.
  const csrf = client.cookies.size ? /name="_csrf" value="([^"]+)"/.exec((await client.get('/account')).body)?.[1] : undefined;
  return (await client.post(url, csrf ? { _csrf: csrf } : {})).res;
}

test('the routes checked here are the routes there are', () => {
  assert.ok(routes.filter((r) => r.url.startsWith('/partners')).length >= 15, `partner routes: ${routes.length}`);
  assert.ok(routes.filter((r) => r.url.startsWith('/console')).length >= 15);
});

test('a logged-out visitor is sent to log in, from every route', async () => {
  const visitor = new SiteClient(t.baseUrl);
  for (const r of routes) {
    const res = await call(visitor, r.method, fill(r.url, aliceP));
    if (r.method === 'POST') assert.ok([303, 403].includes(res.status), `${r.method} ${r.url}: ${res.status}`);
    else assert.equal(res.status, 303, `${r.method} ${r.url}`);
    if (res.status === 303) assert.equal(res.headers.get('location'), '/login', `${r.method} ${r.url}`);
  }
});

test("another partner's member and a person who is no member get 404 for every route naming a partner", async () => {
  const carol = await person(t, 'carol_c');
  for (const r of routes.filter((x) => x.url.startsWith('/partners/:id'))) {
    for (const who of [bob, carol]) {
      const res = await call(who.client, r.method, fill(r.url, aliceP));
      assert.equal(res.status, 404, `${who.userId}: ${r.method} ${r.url}`);
    }
    // A partner that does not exist answers the same.
    assert.equal((await call(bob.client, r.method, fill(r.url, 999_999))).status, 404);
  }
  // Each member still sees their own.
  assert.equal((await bob.client.get(`/partners/${bobP}`)).res.status, 200);
  assert.equal((await alice.client.get(`/partners/${aliceP}`)).res.status, 200);
});

test('an account without the operator role gets 403 from every console route, an operator gets in', async () => {
  for (const r of routes.filter((x) => x.url.startsWith('/console'))) {
    const res = await call(alice.client, r.method, fill(r.url, aliceP));
    assert.equal(res.status, 403, `${r.method} ${r.url}`);
  }
  assert.equal((await op.client.get('/console')).res.status, 200);
  assert.equal((await op.client.get('/console/audit')).res.status, 200);
});

test('a form without its CSRF token is refused, even from a member or an operator', async () => {
  for (const [client, url] of [
    [alice.client, `/partners/${aliceP}/token`],
    [op.client, `/console/partners/${aliceP}`],
  ] as const) {
    const res = await client.post(url, { action: 'suspend' });
    assert.equal(res.res.status, 403, url);
  }
  assert.doesNotMatch((await alice.client.get(`/partners/${aliceP}`)).body, /Previous api_token/);
});

test('pages and forms are rate limited per account', async () => {
  let last: Response | undefined;
  for (let i = 0; i < 31; i++) last = await call(alice.client, 'POST', '/partners/apply');
  assert.equal(last?.status, 429);
  assert.ok(last?.headers.get('retry-after'));
});

// csrfToken() on a request whose browser has no CSRF cookie yet: however often a page asks (the
// header's log-out form and the page's own forms each may), every token is for the one secret the
// browser will keep. @fastify/csrf-protection alone would make a new secret at every call.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import cookie from '@fastify/cookie';
import csrfProtection from '@fastify/csrf-protection';
import Fastify from 'fastify';
import { csrfBinding, csrfToken, type SiteState } from '../../src/site/session.js';
import { cookieNames, cookieOptions } from '../../src/site/security.js';
import { startTestApp, type TestApp } from '../helpers/app.js';

let t: TestApp;
before(async () => {
  t = await startTestApp();
});
after(() => t.close());

test('two tokens made in one request are both good for the cookie that request sets', async () => {
  const ctx = t.ctx;
  const app = Fastify();
  await app.register(cookie);
  await app.register(csrfProtection, {
    cookieKey: cookieNames(ctx).csrf,
    cookieOpts: cookieOptions(ctx),
    getUserInfo: csrfBinding,
    csrfOpts: { hmacKey: 'test key', userInfo: true },
  });
  app.decorateRequest('site', null as unknown as SiteState);
  app.addHook('onRequest', async (request) => {
    request.site = { user: null, sessionId: null, sessionCsrf: null };
  });
  app.get('/two', async (request, reply) => [await csrfToken(ctx, request, reply), await csrfToken(ctx, request, reply)]);
  app.post('/check', { preValidation: app.csrfProtection }, async () => 'ok');
  try {
    const page = await app.inject({ method: 'GET', url: '/two' });
    const set = page.cookies.filter((c) => c.name === cookieNames(ctx).csrf);
    assert.equal(set.length, 1, 'one CSRF cookie');
    const tokens = page.json<string[]>();
    assert.notEqual(tokens[0], tokens[1]);
    for (const token of tokens) {
      const res = await app.inject({ method: 'POST', url: '/check', cookies: { [set[0]!.name]: set[0]!.value }, payload: { _csrf: token } });
      assert.equal(res.statusCode, 200, res.body);
    }
    // And a token is not good for another secret.
    const other = await app.inject({ method: 'POST', url: '/check', cookies: { [set[0]!.name]: 'another secret' }, payload: { _csrf: tokens[0] } });
    assert.equal(other.statusCode, 403);
  } finally {
    await app.close();
  }
});

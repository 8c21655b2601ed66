// Behind https (BASE_URL https://…) the site's cookies are Secure and __Host- prefixed, and the
// browser is told to stay on https.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { assertLogsClean, SiteClient } from './helpers.js';

let t: TestApp;
before(async () => {
  t = await startTestApp({ BASE_URL: 'https://ids.example.org' });
});
after(() => t.close());

function cookieLine(res: Response, name: string): string {
  const line = res.headers.getSetCookie().find((c) => c.startsWith(`${name}=`));
  assert.ok(line, `no ${name} cookie set`);
  return line;
}

test('cookies are Secure with the __Host- prefix, and HSTS is sent', async () => {
  const client = new SiteClient(t.baseUrl);
  const { res } = await client.get('/signup');
  const csrfCookie = cookieLine(res, '__Host-idsvc_csrf');
  assert.match(csrfCookie, /; Secure/);
  assert.match(csrfCookie, /Path=\//);
  assert.doesNotMatch(csrfCookie, /Domain=/);
  assert.equal(res.headers.get('strict-transport-security'), 'max-age=31536000; includeSubDomains');
  assert.match(res.headers.get('content-security-policy') ?? '', /upgrade-insecure-requests/);

  const signUp = await client.post('/signup', {
    _csrf: await client.csrf('/signup'),
    email: 'secure.cookie@example.org',
    user_id: 'secure_cookie',
    password: 'only over https please',
  });
  assert.equal(signUp.res.status, 303);
  // Sign-up starts no session (it answers alike for every address); log-in does.
  const login = await client.post('/login', { _csrf: await client.csrf('/login'), login: 'secure.cookie@example.org', password: 'only over https please' });
  assert.equal(login.res.status, 303);
  for (const name of ['__Host-idsvc_session', '__Host-idsvc_device']) {
    const line = cookieLine(login.res, name);
    assert.match(line, /; Secure/);
    assert.match(line, /HttpOnly/);
    assert.match(line, /SameSite=Lax/);
  }
  assert.equal((await client.get('/account')).res.status, 200);
  assertLogsClean(t, ['secure.cookie@example.org', 'only over https please', client.cookies.get('__Host-idsvc_session')!]);
});

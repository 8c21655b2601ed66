// Issue 14.12: whatever the spelling of a secret's key in a query string, its value never reaches
// the log. Read from the log lines the app writes (startTestApp captures them).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestApp, type TestApp } from '../helpers/app.js';

let t: TestApp;
before(async () => {
  t = await startTestApp();
});
after(() => t.close());

/** The `url` of every logged request, as the log holds it. */
function loggedUrls(): string[] {
  return t.logs
    .map((l) => JSON.parse(l) as { req?: { url?: string } })
    .map((l) => l.req?.url)
    .filter((u): u is string => typeof u === 'string');
}

test('secret query keys in any case, percent-encoded or repeated are redacted in the log and refused', async () => {
  const P = await t.partner();
  const cases: [query: string, secrets: string[]][] = [
    ['API_TOKEN=upperTokenValue1', ['upperTokenValue1']],
    ['Api_Token=mixedTokenValue2', ['mixedTokenValue2']],
    ['api%5Ftoken=encodedTokenValue3', ['encodedTokenValue3']],
    ['API%5fTOKEN=encodedUpperValue4', ['encodedUpperValue4']],
    ['PASSWORD=upperPasswordValue5', ['upperPasswordValue5']],
    ['Email_Address=shoutedAddressValue6', ['shoutedAddressValue6']],
    ['api_token=repeatedValue7a&api_token=repeatedValue7b&API_TOKEN=repeatedValue7c', ['repeatedValue7a', 'repeatedValue7b', 'repeatedValue7c']],
    ['api-token=dashedValue8&api_token%5B%5D=bracketValue9', ['dashedValue8', 'bracketValue9']],
  ];
  for (const [query, secrets] of cases) {
    const res = await fetch(`${t.baseUrl}/api/return_services/${P.apiKey}/someone/public?${query}`);
    const body = await res.text();
    for (const s of secrets) assert.ok(!body.includes(s), `${query}: the answer echoes a secret`);
    // Every spelling of a secret's name is the mistake credentials_in_query names.
    assert.equal(res.status, 400, query);
    assert.match(body, /<code>credentials_in_query<\/code>/, query);
  }
  // A widget signature, also repeated and in capitals: a pass for a while, kept out of logs too.
  await fetch(`${t.baseUrl}/api/service_collection_widget/${P.apiKey}/someone/FALSE?exp=1&SIG=upperSigValue10&sig=lowerSigValue11&Sig=mixedSigValue12`);
  // Site paths are logged through the same redaction.
  await fetch(`${t.baseUrl}/u/someone?PassWord=sitePasswordValue13`);

  const logs = t.logs.join('');
  const urls = loggedUrls();
  assert.ok(urls.length >= cases.length + 2, 'each request is logged');
  for (const secret of [...cases.flatMap(([, s]) => s), 'upperSigValue10', 'lowerSigValue11', 'mixedSigValue12', 'sitePasswordValue13']) {
    assert.ok(!logs.includes(secret), `${secret} reached the log`);
  }
  // The keys stay readable, so an operator sees what was sent, and each repetition is redacted.
  assert.ok(
    urls.some((u) => u.endsWith('?API_TOKEN=[redacted]')),
    urls.join('\n'),
  );
  assert.ok(
    urls.some((u) => u.endsWith('?api_token=[redacted]&api_token=[redacted]&API_TOKEN=[redacted]')),
    urls.join('\n'),
  );
  assert.ok(
    urls.some((u) => u.endsWith('?exp=1&SIG=[redacted]&sig=[redacted]&Sig=[redacted]')),
    urls.join('\n'),
  );
  assert.ok(
    urls.some((u) => u === '/u/someone?PassWord=[redacted]'),
    urls.join('\n'),
  );
});

test('ordinary query values are logged as sent', async () => {
  const P = await t.partner();
  await fetch(`${t.baseUrl}/api/service_details/${P.apiKey}/popularity/5?format=json`);
  assert.ok(loggedUrls().includes(`/api/service_details/${P.apiKey}/popularity/5?format=json`));
});

test('any key that names a token, secret or password is redacted, in every encoding, by rule rather than by list', async () => {
  const P = await t.partner();
  // [query as sent, the value that must not be logged, the key as the log keeps it]
  const cases: [query: string, secret: string, loggedKey: string][] = [
    ['access_token=plainAccess1', 'plainAccess1', 'access_token'],
    ['ACCESS_TOKEN=upperAccess2', 'upperAccess2', 'ACCESS_TOKEN'],
    ['access%5Ftoken=encodedAccess3', 'encodedAccess3', 'access%5Ftoken'],
    ['access%255Ftoken=doubleEncoded4', 'doubleEncoded4', 'access%255Ftoken'],
    ['access+token=plusSpace5', 'plusSpace5', 'access+token'],
    ['%61ccess_token=encodedLetter6', 'encodedLetter6', '%61ccess_token'],
    ['apiToken=camelToken7', 'camelToken7', 'apiToken'],
    ['client_secret=clientSecret8', 'clientSecret8', 'client_secret'],
    ['new_password=newPassword9', 'newPassword9', 'new_password'],
    ['x-secret=dashSecret10', 'dashSecret10', 'x-secret'],
    ['hmac_sig=hmacSig11', 'hmacSig11', 'hmac_sig'],
    ['refresh_token[]=bracketRefresh12', 'bracketRefresh12', 'refresh_token[]'],
  ];
  for (const [query] of cases) {
    await fetch(`${t.baseUrl}/api/service_details/${P.apiKey}/github?format=json&${query}`);
  }
  // Repeated keys, each judged on its own, and `;` as a separator: the value of `format` would otherwise carry the second pair.
  await fetch(`${t.baseUrl}/api/service_details/${P.apiKey}/github?access_token=repeatA13&Access_Token=repeatB14`);
  await fetch(`${t.baseUrl}/api/service_details/${P.apiKey}/github?format=json;access_token=semicolon15;x=1`);
  // A site page, through the same redaction.
  await fetch(`${t.baseUrl}/u/someone?apiKeySecret=siteSecret16`);

  const logs = t.logs.join('');
  const urls = loggedUrls();
  for (const secret of [...cases.map(([, s]) => s), 'repeatA13', 'repeatB14', 'semicolon15', 'siteSecret16']) {
    assert.ok(!logs.includes(secret), `${secret} reached the log`);
  }
  for (const [, , key] of cases) {
    assert.ok(urls.includes(`/api/service_details/${P.apiKey}/github?format=json&${key}=[redacted]`), `${key}: ${urls.join('\n')}`);
  }
  assert.ok(urls.includes(`/api/service_details/${P.apiKey}/github?access_token=[redacted]&Access_Token=[redacted]`), urls.join('\n'));
  assert.ok(urls.includes(`/api/service_details/${P.apiKey}/github?format=json;access_token=[redacted];x=1`), urls.join('\n'));
  assert.ok(urls.includes('/u/someone?apiKeySecret=[redacted]'), urls.join('\n'));
});

test('keys that only resemble a secret word are logged as sent', async () => {
  const P = await t.partner();
  await fetch(`${t.baseUrl}/api/service_details/${P.apiKey}/github?design=1&config=2&spinner=3&exp=4`);
  assert.ok(loggedUrls().includes(`/api/service_details/${P.apiKey}/github?design=1&config=2&spinner=3&exp=4`), loggedUrls().join('\n'));
});

test('an error that quotes a URL or a form body is logged with the secret values and addresses taken out', () => {
  // What a library's error may carry: the URL it failed on in its message, stack and own fields, and the request's form.
  const err = new TypeError('could not fetch /x?format=json&access_token=errSecret1&b=2 for owner@example.org');
  Object.assign(err, { input: '/cb?code=errSecret2;state=ok', body: 'user=ann&password=errSecret3', cause: new Error('client_secret=errSecret4') });
  t.app.log.error({ err }, 'request failed');
  const line = t.logs.at(-1) ?? '';
  for (const secret of ['errSecret1', 'errSecret2', 'errSecret3', 'errSecret4', 'owner@example.org'])
    assert.ok(!line.includes(secret), `${secret} reached the log: ${line}`);
  const logged = (JSON.parse(line) as { err: { message: string; input: string; body: string; type: string; stack: string } }).err;
  assert.equal(logged.type, 'TypeError');
  // pino's serializer adds the cause's message to the error's.
  assert.equal(logged.message, 'could not fetch /x?format=json&access_token=[redacted]&b=2 for [email]: client_secret=[redacted]');
  assert.equal(logged.input, '/cb?code=[redacted];state=ok');
  assert.equal(logged.body, 'user=ann&password=[redacted]');
  assert.match(logged.stack, /access_token=\[redacted\]&b=2/);
});

test('redacting a long error costs time in proportion to its length', () => {
  // Long runs of the characters an address or a key is made of, where an unbounded pattern would
  // rescan to the end of the text from every position.
  const message = `${'a'.repeat(100_000)} ${'b.'.repeat(50_000)} ${'c%'.repeat(50_000)} ?${'k'.repeat(100_000)}`;
  const before = process.cpuUsage();
  t.app.log.error({ err: new Error(message) }, 'request failed');
  const used = process.cpuUsage(before);
  const ms = (used.user + used.system) / 1000;
  assert.ok(ms < 2000, `redacting took ${ms} ms of CPU`);
});

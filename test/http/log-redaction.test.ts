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
  assert.ok(urls.some((u) => u.endsWith('?API_TOKEN=[redacted]')), urls.join('\n'));
  assert.ok(urls.some((u) => u.endsWith('?api_token=[redacted]&api_token=[redacted]&API_TOKEN=[redacted]')), urls.join('\n'));
  assert.ok(urls.some((u) => u.endsWith('?exp=1&SIG=[redacted]&sig=[redacted]&Sig=[redacted]')), urls.join('\n'));
  assert.ok(urls.some((u) => u === '/u/someone?PassWord=[redacted]'), urls.join('\n'));
});

test('ordinary query values are logged as sent', async () => {
  const P = await t.partner();
  await fetch(`${t.baseUrl}/api/service_details/${P.apiKey}/popularity/5?format=json`);
  assert.ok(loggedUrls().includes(`/api/service_details/${P.apiKey}/popularity/5?format=json`));
});

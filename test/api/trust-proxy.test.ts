// Issue 14.14: TRUST_PROXY takes on/off like every other boolean, a number of hops, or the proxies'
// addresses. What it changes is which address a client is counted under; with one request a
// minute allowed per address, a second request is refused exactly when both count as one client.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { ConfigError, loadConfig } from '../../src/config.js';
import { startTestApp, type TestApp } from '../helpers/app.js';

let owner: TestApp;
let apiKey: string;
before(async () => {
  owner = await startTestApp();
  apiKey = (await owner.partner()).apiKey;
});
after(() => owner.close());

/** Two anonymous calls, each with its X-Forwarded-For: do they share one per-address budget? */
async function countedAsOneClient(trustProxy: string, forwardedFor: [string, string]): Promise<boolean> {
  const t = await startTestApp({ ...owner.cliEnv, LOG_LEVEL: 'warn', TRUST_PROXY: trustProxy, RATE_LIMIT_PER_ADDRESS: '1' });
  try {
    const call = (xff: string) => fetch(`${t.baseUrl}/api/service_details/${apiKey}/github`, { headers: { 'x-forwarded-for': xff } });
    const first = await call(forwardedFor[0]);
    assert.equal(first.status, 200, `TRUST_PROXY=${trustProxy}: the first call`);
    const second = await call(forwardedFor[1]);
    assert.ok(second.status === 200 || second.status === 429, String(second.status));
    return second.status === 429;
  } finally {
    await t.close();
  }
}

test('off in every spelling starts, and trusts no forwarded address', async () => {
  for (const off of ['off', 'OFF', 'no', 'false', '0']) {
    assert.equal(loadConfig({ TRUST_PROXY: off }).trustProxy, false, off);
    assert.equal(await countedAsOneClient(off, ['203.0.113.1', '203.0.113.2']), true, `TRUST_PROXY=${off} trusts no header`);
  }
});

test('on in every spelling trusts every proxy', async () => {
  for (const on of ['on', 'On', 'yes', 'true']) {
    assert.equal(loadConfig({ TRUST_PROXY: on }).trustProxy, true, on);
    assert.equal(await countedAsOneClient(on, ['203.0.113.1', '203.0.113.2']), false, `TRUST_PROXY=${on}: two clients`);
  }
});

test('a number of hops trusts that many proxies, and no further', async () => {
  // One hop: the nearest proxy (here the test's own connection) is trusted, so the last forwarded
  // address is the client's; what a client writes before it is not believed.
  assert.equal(await countedAsOneClient('1', ['203.0.113.1', '203.0.113.2']), false, 'two clients behind one proxy');
  assert.equal(await countedAsOneClient('1', ['198.51.100.7, 203.0.113.9', '198.51.100.8, 203.0.113.9']), true, 'a spoofed first address is not believed');
  // Two hops: the address the second proxy saw is the client.
  assert.equal(await countedAsOneClient('2', ['198.51.100.7, 203.0.113.9', '198.51.100.8, 203.0.113.9']), false, 'two clients behind two proxies');
});

test('addresses and CIDRs of trusted proxies keep working', async () => {
  for (const list of ['127.0.0.1', '127.0.0.0/8, ::1', 'loopback']) {
    assert.equal(await countedAsOneClient(list, ['203.0.113.1', '203.0.113.2']), false, `TRUST_PROXY=${list}: two clients`);
  }
  // A list that does not include the connecting proxy trusts nothing it sends.
  assert.equal(await countedAsOneClient('10.0.0.0/8', ['203.0.113.1', '203.0.113.2']), true, 'an untrusted peer');
});

test('anything else stops start-up naming TRUST_PROXY', () => {
  for (const bad of ['maybe', '10.0.0.0/33', '10.0.0.1,', 'proxy.example.org', '101']) {
    assert.throws(
      () => loadConfig({ TRUST_PROXY: bad }),
      (e: unknown) => e instanceof ConfigError && e.variable === 'TRUST_PROXY' && e.message.includes('TRUST_PROXY'),
      bad,
    );
  }
});

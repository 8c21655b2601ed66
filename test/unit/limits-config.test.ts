// The request budgets and sync throttles of issue 14.3 and 14.4 are configured like every other
// setting: defaults, and a bad value that stops start-up naming its variable.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ConfigError, loadConfig } from '../../src/config.js';

test('defaults: separate proven and unproven key budgets; a low per-place and a high account-wide sync limit', () => {
  const c = loadConfig({});
  assert.equal(c.rateLimitPerKeyPerMinute, 6000);
  assert.equal(c.rateLimitPerKeyUnprovenPerMinute, 6000);
  assert.equal(c.rateLimitPerAddressPerMinute, 600);
  assert.equal(c.syncFailuresPerAccountAddress, 5);
  assert.equal(c.syncFailuresPerPartnerAddress, 20);
  assert.equal(c.syncFailuresPerAccount, 50);
  const set = loadConfig({ RATE_LIMIT_PER_KEY_UNPROVEN: '120', SYNC_FAILURES_PER_ACCOUNT_ADDRESS: '3', SYNC_FAILURES_PER_ACCOUNT: '200' });
  assert.deepEqual([set.rateLimitPerKeyUnprovenPerMinute, set.syncFailuresPerAccountAddress, set.syncFailuresPerAccount], [120, 3, 200]);
});

test('a bad value names its variable', () => {
  for (const [name, value] of [
    ['RATE_LIMIT_PER_KEY_UNPROVEN', '0'],
    ['RATE_LIMIT_PER_KEY_UNPROVEN', 'lots'],
    ['SYNC_FAILURES_PER_ACCOUNT_ADDRESS', '-1'],
    ['SYNC_FAILURES_PER_ACCOUNT', '0'],
  ] as const) {
    assert.throws(
      () => loadConfig({ [name]: value }),
      (e: unknown) => e instanceof ConfigError && e.variable === name && e.message.includes(name),
      `${name}=${value}`,
    );
  }
});

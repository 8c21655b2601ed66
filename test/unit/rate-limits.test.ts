// The in-process fixed window behind the request limits when Redis is not configured
// (services/rate-limits.ts). Times are given explicitly, so nothing here waits.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { FixedWindowCounter } from '../../src/services/rate-limits.js';

test('counts each key on its own, and refuses past the limit until its window closes', () => {
  const c = new FixedWindowCounter(3, 60_000);
  const t0 = 1_000_000;
  assert.deepEqual(c.consume('a', t0), { limit: 3, remaining: 2, resetSeconds: 60, allowed: true });
  assert.deepEqual(c.consume('a', t0 + 1_500), { limit: 3, remaining: 1, resetSeconds: 59, allowed: true });
  assert.equal(c.consume('b', t0 + 2_000).remaining, 2, 'another key has its own window');
  assert.deepEqual(c.consume('a', t0 + 30_000), { limit: 3, remaining: 0, resetSeconds: 30, allowed: true });
  assert.deepEqual(c.consume('a', t0 + 59_999), { limit: 3, remaining: 0, resetSeconds: 1, allowed: false });
  // The window opened at the key's first request closes a minute later; the next one starts afresh.
  assert.deepEqual(c.consume('a', t0 + 60_000), { limit: 3, remaining: 2, resetSeconds: 60, allowed: true });
});

test('a refused request still says to wait at least a second', () => {
  const c = new FixedWindowCounter(1, 60_000);
  c.consume('a', 0);
  assert.deepEqual(c.consume('a', 59_999.5), { limit: 1, remaining: 0, resetSeconds: 1, allowed: false });
});

test('closed windows are swept, so distinct keys do not pile up', () => {
  const c = new FixedWindowCounter(10, 60_000);
  for (let i = 0; i < 1000; i++) c.consume(`addr-${i}`, 0);
  assert.equal(c.size, 1000);
  c.consume('late', 60_000);
  assert.equal(c.size, 1, 'only the window opened after the others closed is left');
});

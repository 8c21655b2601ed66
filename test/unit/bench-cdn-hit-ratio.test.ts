// The CDN share of the capacity model (bench/cdn-hit-ratio.ts, docs/scaling.md).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { cdnHitRatio } from '../../bench/cdn-hit-ratio.js';

test('one person asked for over and over: every lookup after the first within the max-age is a hit', () => {
  // 10 a second, kept 60 s, counted after the first minute: each minute one miss, when the copy expires.
  const ratio = cdnHitRatio(1, 10, 60, 1, 600);
  assert.ok(ratio > 0.99 && ratio < 1, `${ratio}`);
});

test('nothing kept (max-age 0): no hits', () => {
  assert.equal(cdnHitRatio(1000, 100, 0, 1, 60), 0);
});

test('more people, or the traffic split over more separate caches, answer less from the cache; more traffic answers more', () => {
  const base = cdnHitRatio(100_000, 2000, 60, 1, 180);
  assert.ok(cdnHitRatio(1_000_000, 2000, 60, 1, 180) < base);
  assert.ok(cdnHitRatio(100_000, 2000, 60, 10, 180) < base);
  assert.ok(cdnHitRatio(100_000, 8000, 60, 1, 180) > base);
});

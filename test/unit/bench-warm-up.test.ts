// When the benchmark's warm-up stops (bench/measure.ts, keepWarming): once a server's page faults
// per request are rare, stop falling, or the time is up, and not before.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { keepWarming, WARM_FAULTS_PER_REQ } from '../../bench/measure.js';

test('no round yet: warm up', () => {
  assert.equal(keepWarming([], 0, 60), true);
});

test('faults still falling: one more round', () => {
  assert.equal(keepWarming([4.58, 2.74, 2.05], 3, 60), true);
});

test('faults rare: stop', () => {
  assert.equal(keepWarming([4.58, WARM_FAULTS_PER_REQ / 2], 2, 60), false);
});

test('time is up, however many faults are left', () => {
  assert.equal(keepWarming([4.58, 2.74], 60, 60), false);
});

test('one round that did not fall (a burst, another process) is not yet a plateau; two in a row are', () => {
  assert.equal(keepWarming([3.6, 1.39, 2.31], 3, 60), true);
  assert.equal(keepWarming([3.6, 1.39, 2.31, 1.3], 4, 60), false);
  // Falling again after one stalled round: go on.
  assert.equal(keepWarming([3.6, 1.39, 2.31, 1.0], 4, 60), true);
});

// The catalogue in memory is checked against the database's version stamp at most once per
// `catalogueCheckMs`, and a check that is due does not hold up the calls made while it runs: they
// get the snapshot being checked. On PostgreSQL a check is a round trip through the pool, and when
// every call in flight waited for it, a busy pool's queue reached all of them once a second.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { occupyPool, startTestApp, TEST_DB, type TestApp } from '../helpers/app.js';

const skip = TEST_DB !== 'postgres' && 'PostgreSQL only (on SQLite a check is a synchronous local read)';
let t: TestApp | undefined;

before(async () => {
  if (skip) return;
  t = await startTestApp({}, {}, { catalogueCheckMs: 1000 });
});

after(async () => {
  await t?.close();
});

test('a due check of the catalogue does not hold up the calls made while it runs', { skip }, async () => {
  const catalogue = t!.ctx.catalogue;
  const snapshot = await catalogue.get();
  const busy = await occupyPool(t!);
  try {
    t!.clock.advance(1500); // the check is due
    const during = await Promise.race([catalogue.get(), sleep(1000).then(() => 'waited' as const)]);
    assert.equal(during, snapshot, 'the snapshot being checked, at once');
  } finally {
    busy.release();
  }
});

test('after a change made in this process, calls wait for the catalogue read again', { skip }, async () => {
  const catalogue = t!.ctx.catalogue;
  await catalogue.get();
  catalogue.invalidate();
  const busy = await occupyPool(t!);
  let answered = false;
  const afterChange = Promise.resolve(catalogue.get()).then((s) => {
    answered = true;
    return s;
  });
  try {
    await sleep(200);
    assert.equal(answered, false, 'no answer while the check waits for a connection');
  } finally {
    busy.release();
  }
  assert.ok((await afterChange).byId.size > 0);
});

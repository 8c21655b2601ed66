// How far behind a read replica is (src/db/replicas.ts), from the primary's WAL positions sampled
// over time, and what DATABASE_READ_URL accepts (src/config.ts).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { lagOf, parseLsn, describeReplica } from '../../src/db/replicas.js';
import { loadConfig } from '../../src/config.js';

test('an LSN as PostgreSQL prints it is read as one number, the high word first', () => {
  assert.equal(parseLsn('0/3016060'), 0x3016060n);
  assert.equal(parseLsn('1/0'), 1n << 32n);
  assert.ok(parseLsn('2/1') > parseLsn('1/FFFFFFFF'));
});

test('a replica is behind by the time since the latest sample of the primary it had reached', () => {
  const samples = [
    { at: 1000, lsn: 100n },
    { at: 2000, lsn: 200n },
    { at: 3000, lsn: 300n },
  ];
  assert.equal(lagOf(samples, 300n, 3005), 5, 'caught up with the newest sample');
  assert.equal(lagOf(samples, 250n, 3500), 1500, 'past the second sample, not the third: everything written until the second');
  assert.equal(lagOf(samples, 200n, 3500), 1500);
  assert.equal(lagOf(samples, 50n, 3500), 2500, 'short of the oldest: at least that far');
  assert.equal(lagOf([], 50n, 3500), Number.POSITIVE_INFINITY, 'no sample of the primary: not known to be close');
});

test('a replica is named by address and database, never by its user or password', () => {
  assert.equal(describeReplica('postgres://reader:s3cret@10.0.0.5:5433/idsvc'), '10.0.0.5:5433/idsvc');
  assert.equal(describeReplica('postgres://reader@replica.internal/idsvc'), 'replica.internal:5432/idsvc');
});

test('DATABASE_READ_URL: comma-separated postgres:// URLs, only beside a PostgreSQL DATABASE_URL', () => {
  const pg = { DATABASE_URL: 'postgres://app@db/idsvc' };
  assert.deepEqual(loadConfig({ ...pg, DATABASE_READ_URL: ' postgres://r@a/idsvc, postgres://r@b/idsvc ' }).databaseReadUrls, [
    'postgres://r@a/idsvc',
    'postgres://r@b/idsvc',
  ]);
  assert.deepEqual(loadConfig(pg).databaseReadUrls, []);
  assert.equal(loadConfig(pg).databaseReadMaxLagMs, 5000);
  assert.throws(() => loadConfig({ DATABASE_URL: 'sqlite::memory:', DATABASE_READ_URL: 'postgres://r@a/idsvc' }), /DATABASE_READ_URL.*SQLite has no replicas/);
  // The entry's position, never its text: it may hold a password.
  assert.throws(
    () => loadConfig({ ...pg, DATABASE_READ_URL: 'postgres://r@a/idsvc,mysql://r:pw@b/x' }),
    (err: Error) => /entry 2 is not a valid postgres:\/\/ URL/.test(err.message) && !err.message.includes('pw'),
  );
});

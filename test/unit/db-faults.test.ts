// Which driver errors the edge answers as `unavailable` (src/db/faults.ts): outages, not bugs.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import SQLite from 'better-sqlite3';
import { unavailableCause } from '../../src/db/faults.js';

const withCode = (code: string, message = 'x') => Object.assign(new Error(message), { code });

test('connection failures, pg timeouts and server states that mean "not now" are outages', () => {
  assert.equal(unavailableCause(withCode('ECONNREFUSED')), 'ECONNREFUSED');
  assert.equal(unavailableCause(new Error('Connection terminated unexpectedly')), 'Connection terminated');
  assert.equal(unavailableCause(new Error('timeout exceeded when trying to connect')), 'timeout exceeded when trying to connect');
  assert.equal(unavailableCause(new Error('Query read timeout')), 'Query read timeout');
  assert.equal(
    unavailableCause(new Error('Client has encountered a connection error and is not queryable')),
    'Client has encountered a connection error and is not queryable',
  );
  for (const state of ['08006', '57P01', '57P03', '53300', '25006', '57014']) assert.equal(unavailableCause(withCode(state)), state);
  // Node reports a refused connection to a name with several addresses as an AggregateError.
  assert.equal(unavailableCause(new AggregateError([withCode('ECONNREFUSED')])), 'ECONNREFUSED');
  assert.equal(
    unavailableCause(new Error('Connection terminated due to connection timeout', { cause: new Error('Connection terminated unexpectedly') })),
    'Connection terminated',
  );
});

test('SQLite: a locked or unwritable file is an outage, a corrupt one or a bad statement is not', () => {
  const db = new SQLite(':memory:');
  try {
    db.prepare('SELECT nope FROM nothing').run();
    assert.fail('the statement should fail');
  } catch (e) {
    assert.equal(unavailableCause(e), null, 'a bad statement is a bug');
  } finally {
    db.close();
  }
  assert.equal(unavailableCause(withCode('SQLITE_BUSY')), 'SQLITE_BUSY');
  assert.equal(unavailableCause(withCode('SQLITE_BUSY_SNAPSHOT')), 'SQLITE_BUSY_SNAPSHOT');
  assert.equal(unavailableCause(withCode('SQLITE_READONLY')), 'SQLITE_READONLY');
  assert.equal(unavailableCause(withCode('SQLITE_FULL')), 'SQLITE_FULL');
  assert.equal(unavailableCause(withCode('SQLITE_IOERR_WRITE')), 'SQLITE_IOERR_WRITE');
  assert.equal(unavailableCause(withCode('SQLITE_CORRUPT')), null);
  assert.equal(unavailableCause(withCode('SQLITE_CONSTRAINT_UNIQUE')), null);
});

test('other errors are not', () => {
  assert.equal(unavailableCause(new Error('boom')), null);
  assert.equal(unavailableCause(withCode('23505')), null, 'a unique violation is a bug or a race, not an outage');
  assert.equal(unavailableCause(withCode('42P01')), null);
  assert.equal(unavailableCause(null), null);
  assert.equal(unavailableCause('ECONNREFUSED'), null);
});

// The PostgreSQL pool keeps its connections while idle. node-postgres closes a connection idle for
// 10 s by default, and the first requests after a quiet spell then wait for new backends, each
// preparing the named statements again on cold catalog caches, while a burst queues behind them.
import { test, mock } from 'node:test';
import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import { createPgPool } from '../../src/db/pg-pool.js';
import { PG_URL, TEST_DB } from '../helpers/app.js';

const skip = TEST_DB !== 'postgres' && 'PostgreSQL only';

test('an idle pooled connection is kept, not closed and opened again for the next request', { skip }, async () => {
  const { pool } = createPgPool({ connectionString: PG_URL, timeoutMs: 5000, events: new EventEmitter() });
  // The pool's timers (the idle timer set when a connection is released among them) on a clock the test moves.
  mock.timers.enable({ apis: ['setTimeout'] });
  try {
    const before = (await pool.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid;
    assert.equal(pool.idleCount, 1);
    mock.timers.tick(3600_000);
    // A closed connection leaves the pool on its 'end' event: let it come if it is coming.
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(pool.totalCount, 1, 'the idle connection is still open after an hour of quiet');
    const afterQuiet = (await pool.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid;
    assert.equal(afterQuiet, before, 'the same backend serves the next statement');
  } finally {
    mock.timers.reset();
    await pool.end();
  }
});

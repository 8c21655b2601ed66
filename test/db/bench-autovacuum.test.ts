// The benchmark runs PostgreSQL with autovacuum on, as it ships (bench/pg-autovacuum.ts): on a
// server that has it off, the run turns it on and puts it back off at the end; on one that has it
// on, the run changes nothing.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import pg from 'pg';
import { holdAutovacuumOn } from '../../bench/pg-autovacuum.js';
import { PG_URL, TEST_DB } from '../helpers/app.js';

const skip = TEST_DB !== 'postgres' && 'PostgreSQL only';

async function autovacuum(): Promise<string> {
  const c = new pg.Client({ connectionString: PG_URL });
  await c.connect();
  try {
    // A reload is applied by each backend when it next reads a command: a new connection sees it.
    return (await c.query<{ autovacuum: string }>('SHOW autovacuum')).rows[0]!.autovacuum;
  } finally {
    await c.end();
  }
}

async function until(value: string): Promise<string> {
  for (let i = 0; i < 100 && (await autovacuum()) !== value; i++) await new Promise((r) => setTimeout(r, 50));
  return autovacuum();
}

test('autovacuum is on for the run and as it was after it', { skip }, async () => {
  const before = await autovacuum();
  const logged: string[] = [];
  const hold = await holdAutovacuumOn(PG_URL, (m) => logged.push(m));
  try {
    assert.equal(hold.found, before);
    assert.equal(hold.turnedOn, before === 'off');
    assert.equal(await until('on'), 'on');
    assert.equal(logged.length, before === 'off' ? 1 : 0);
  } finally {
    await hold.restore();
  }
  assert.equal(await until(before), before);
});

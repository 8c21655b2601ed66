// Migrating a schema while another client drops a schema of its own (as test files running side
// by side do, and as several tenants of one PostgreSQL may). Before it takes its lock, Kysely's
// migrator asks the dialect's introspector which tables exist; Kysely's own lists every column of
// every schema, and failed when a table it had found was dropped before it read the columns. Ours
// (db/pg-introspector.ts) lists the tables of our schema only.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import pg from 'pg';
import { migrate, openDatabase } from '../../src/db/database.js';
import { PG_URL, TEST_DB } from '../helpers/app.js';

const skip = TEST_DB !== 'postgres' && 'PostgreSQL only';

const run = `${process.pid}_${Math.random().toString(36).slice(2, 8)}`;

test('a migration succeeds while other schemas are created and dropped beside it', { skip }, async () => {
  const churn = new pg.Client({ connectionString: PG_URL });
  await churn.connect();
  let stop = false;
  let dropped = 0;
  // Schemas with many tables and serial columns: the listing that races with the drops takes longer.
  const tables = Array.from({ length: 40 }, (_, i) => `CREATE TABLE t${i} (id serial PRIMARY KEY, v text)`).join('; ');
  const churning = (async () => {
    for (let i = 0; !stop; i++) {
      const schema = `churn_${run}_${i}`;
      await churn.query(`CREATE SCHEMA ${schema}; SET search_path TO ${schema}; ${tables}; SET search_path TO DEFAULT`);
      await churn.query(`DROP SCHEMA ${schema} CASCADE`);
      dropped += 1;
    }
  })();
  const migrated: string[] = [];
  try {
    for (let i = 0; i < 6; i++) {
      const schema = `mig_${run}_${i}`;
      const db = await openDatabase(PG_URL, { pgSchema: schema });
      try {
        await migrate(db);
        migrated.push(schema);
      } finally {
        await db.close();
        await churn.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`).catch(() => {});
      }
    }
  } finally {
    stop = true;
    await churning;
    await churn.end();
  }
  assert.equal(migrated.length, 6);
  assert.ok(dropped > 0, 'schemas were dropped during the migrations');
});

test("the migrator's listing names the tables of its own schema only, not another schema's", { skip }, async () => {
  const other = `other_${run}`;
  const admin = new pg.Client({ connectionString: PG_URL });
  await admin.connect();
  const db = await openDatabase(PG_URL, { pgSchema: `own_${run}` });
  try {
    await admin.query(`CREATE SCHEMA ${other}; CREATE TABLE ${other}.elsewhere (id serial PRIMARY KEY); CREATE TABLE ${other}.kysely_migration (name text)`);
    await migrate(db);
    const tables = await db.kysely.introspection.getTables({ withInternalKyselyTables: true });
    assert.deepEqual(new Set(tables.map((t) => t.schema)), new Set([`own_${run}`]));
    assert.ok(tables.some((t) => t.name === 'kysely_migration'));
    assert.ok(tables.some((t) => t.name === 'outbox'));
    assert.ok(!tables.some((t) => t.name === 'elsewhere'));
  } finally {
    await db.close();
    await admin.query(`DROP SCHEMA IF EXISTS ${other} CASCADE; DROP SCHEMA IF EXISTS own_${run} CASCADE`);
    await admin.end();
  }
});

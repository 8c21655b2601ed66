// Kysely on SQLite through the statement cache (src/db/statement-cache.ts): a query it has built
// before runs without being prepared again, answers as before, and the cache stays within its bound.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import SQLite from 'better-sqlite3';
import { Kysely, SqliteDialect, sql } from 'kysely';
import { withStatementCache } from '../../src/db/statement-cache.js';

interface Db {
  t: { id: number; v: string };
}

/** A Kysely over an in-memory database, counting what the connection prepares. */
function open(max?: number) {
  const conn = new SQLite(':memory:');
  const prepared: string[] = [];
  const prepare = conn.prepare.bind(conn);
  conn.prepare = ((text: string) => {
    prepared.push(text);
    return prepare(text);
  }) as typeof conn.prepare;
  const db = new Kysely<Db>({ dialect: new SqliteDialect({ database: withStatementCache(conn, max) }) });
  return { db, prepared };
}

test('a query built again runs on the statement prepared the first time, with its own parameters', async () => {
  const { db, prepared } = open();
  await sql`CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT NOT NULL)`.execute(db);
  for (const [id, v] of [
    [1, 'one'],
    [2, 'two'],
    [3, 'three'],
  ] as const)
    await db.insertInto('t').values({ id, v }).execute();
  const reads = await Promise.all([1, 2, 3, 2].map((id) => db.selectFrom('t').select('v').where('id', '=', id).executeTakeFirst()));
  assert.deepEqual(
    reads.map((r) => r?.v),
    ['one', 'two', 'three', 'two'],
  );
  const update = await db.updateTable('t').set({ v: 'deux' }).where('id', '=', 2).executeTakeFirst();
  assert.equal(update.numUpdatedRows, 1n, 'writes report the rows they changed');
  const inserted = await db.insertInto('t').values({ id: 9, v: 'nine' }).executeTakeFirst();
  assert.equal(inserted.insertId, 9n);
  const counts = new Map<string, number>();
  for (const text of prepared) counts.set(text, (counts.get(text) ?? 0) + 1);
  assert.ok(
    [...counts.values()].every((n) => n === 1),
    `each text prepared once: ${JSON.stringify([...counts])}`,
  );
  assert.equal(counts.size, 4, 'create, insert, select, update');
  // Transactions too: begin and commit are prepared once.
  for (let i = 0; i < 3; i++)
    await db.transaction().execute((tx) =>
      tx
        .updateTable('t')
        .set({ v: `v${i}` })
        .where('id', '=', 1)
        .execute(),
    );
  assert.equal(prepared.filter((text) => /^begin$/i.test(text)).length, 1);
  assert.equal((await db.selectFrom('t').select('v').where('id', '=', 1).executeTakeFirst())?.v, 'v2');
  await db.destroy();
});

test('it keeps at most its bound of statements, dropping the least recently used', async () => {
  const { db, prepared } = open(2);
  await sql`CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT NOT NULL)`.execute(db);
  const byIds = (ids: number[]) => db.selectFrom('t').select('v').where('id', 'in', ids).execute();
  await byIds([1]); // "in (?)"
  await byIds([1, 2]); // "in (?, ?)": the create statement goes
  await byIds([1]); // still kept: no new prepare
  const before = prepared.length;
  await byIds([1, 2, 3]); // a third: "in (?, ?)" was used least recently and goes
  await byIds([1]);
  assert.equal(prepared.length, before + 1);
  await byIds([1, 2]);
  assert.equal(prepared.length, before + 2, 'the evicted statement is prepared again');
  await db.destroy();
});

test('a streamed query is refused, saying why: reads outside writes run on this connection, and an open iteration would block them', async () => {
  const { db } = open();
  await sql`CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT NOT NULL)`.execute(db);
  await db.insertInto('t').values({ id: 1, v: 'a' }).execute();
  const query = db.selectFrom('t').select('v').orderBy('id');
  await assert.rejects(async () => {
    for await (const _row of query.stream()) assert.fail('no row is streamed');
  }, /rows are not streamed from the writer/);
  assert.deepEqual(
    (await query.execute()).map((r) => r.v),
    ['a'],
    'the connection is usable after',
  );
  await db.destroy();
});

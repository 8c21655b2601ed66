// A prepared SELECT's rows on SQLite come as one JSON text written by SQLite and parsed by V8
// (db/prepared.ts, Prepared): they must be exactly the rows the driver gives, in the same order, as
// arrays or objects, and a statement whose columns JSON cannot carry keeps the driver's rows.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { migrate, openDatabase } from '../../src/db/database.js';
import type { Db } from '../../src/db/handle.js';
import { jsonWrappers, statement } from '../../src/db/prepared.js';

const ODD_TEXTS = [
  'plain',
  '',
  'quote " backslash \\ slash / apostrophe \'',
  'controls \u0000 \u0001 \t \n \r \u001f',
  'Zoë 🦊 日本 \u2028 \u2029',
  '{"looks":"like json"}',
  '[1,2]',
  'null',
];

async function withRows(body: (db: Db) => Promise<void>): Promise<void> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'idsvc-json-rows-'));
  const db = await openDatabase(`sqlite:${path.join(dir, 'db.sqlite')}`);
  try {
    // A write's bookkeeping (the change feed) needs the service's own tables.
    await migrate(db);
    db.sqlite!.exec(`
      CREATE TABLE json_rows_people (id INTEGER PRIMARY KEY, name TEXT, n INTEGER, flag INTEGER NOT NULL DEFAULT 0);
      CREATE TABLE json_rows_things (id INTEGER PRIMARY KEY, person INTEGER, label TEXT, score REAL, data BLOB);
    `);
    const insert = db.sqlite!.prepare('INSERT INTO json_rows_people (id, name, n, flag) VALUES (?, ?, ?, ?)');
    for (const [i, name] of ODD_TEXTS.entries()) insert.run(i + 1, name, i % 3 === 0 ? null : (i - 4) * 2 ** 50, i % 2);
    insert.run(100, null, Number.MAX_SAFE_INTEGER, 1);
    insert.run(101, 'min', Number.MIN_SAFE_INTEGER, 0);
    const thing = db.sqlite!.prepare('INSERT INTO json_rows_things (person, label, score, data) VALUES (?, ?, ?, ?)');
    thing.run(1, 'b', 0.1 + 0.2, Buffer.from([0, 1, 2]));
    thing.run(1, 'a', 1 / 3, null);
    thing.run(2, 'c', null, Buffer.alloc(0));
    await body(db);
  } finally {
    await db.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

const allPeople = statement<Record<string, unknown>>('SELECT id, name, n, flag FROM json_rows_people ORDER BY name DESC, id');
const allPeopleArrays = statement<unknown[]>('SELECT id, name, n, flag FROM json_rows_people ORDER BY n, id', { rowMode: 'array' });
const personById = statement<Record<string, unknown>>('SELECT * FROM json_rows_people WHERE id = ?');
const joined = statement<unknown[]>(
  'SELECT p.name, t.label, p.id FROM json_rows_people p LEFT JOIN json_rows_things t ON t.person = p.id WHERE p.id = ? ORDER BY t.label',
  { rowMode: 'array' },
);
const withBlobAndReal = statement<Record<string, unknown>>('SELECT label, score, data FROM json_rows_things ORDER BY id');
const sameNameTwice = statement<unknown[]>('SELECT p.id, t.id FROM json_rows_people p JOIN json_rows_things t ON t.person = p.id ORDER BY t.id', {
  rowMode: 'array',
});

test('rows through JSON are the rows the driver gives: every value, in order, as objects and as arrays', async () => {
  await withRows(async (db) => {
    const conn = db.sqlite!;
    const driver = (text: string, params: unknown[], raw = false) =>
      conn
        .prepare(text)
        .raw(raw)
        .all(...params);

    assert.deepEqual(await db.all(allPeople), driver('SELECT id, name, n, flag FROM json_rows_people ORDER BY name DESC, id', []));
    assert.deepEqual(await db.all(allPeopleArrays), driver('SELECT id, name, n, flag FROM json_rows_people ORDER BY n, id', [], true));
    assert.equal((await db.all(allPeople)).length, ODD_TEXTS.length + 2);
    // Every odd text came back as stored, and the integers at the edges of what a double holds exactly.
    const names = (await db.all(allPeople)).map((r) => r.name);
    for (const t of ODD_TEXTS) assert.ok(names.includes(t), JSON.stringify(t));
    assert.equal((await db.get(personById, 100))?.n, Number.MAX_SAFE_INTEGER);
    assert.equal((await db.get(personById, 101))?.n, Number.MIN_SAFE_INTEGER);

    // One row; none; a LEFT JOIN's row of NULLs; the rows of a join in the ORDER BY's order.
    assert.deepEqual(await db.get(personById, 5), conn.prepare('SELECT * FROM json_rows_people WHERE id = ?').get(5));
    assert.equal(await db.get(personById, 999), undefined);
    assert.deepEqual(await db.all(personById, 999), []);
    assert.deepEqual(await db.all(joined, 3), [[ODD_TEXTS[2], null, 3]]);
    assert.deepEqual(await db.all(joined, 1), [
      ['plain', 'a', 1],
      ['plain', 'b', 1],
    ]);
    assert.deepEqual(await db.get(joined, 1), ['plain', 'a', 1]);

    // Inside a write, on the writer's connection, the same.
    await db.write(async (w) => {
      assert.deepEqual(await w.all(joined, 1), [
        ['plain', 'a', 1],
        ['plain', 'b', 1],
      ]);
      assert.deepEqual(await w.get(personById, 2), conn.prepare('SELECT * FROM json_rows_people WHERE id = ?').get(2));
    });
  });
});

test('only what JSON carries exactly goes through it: BLOBs, REALs and repeated names keep the driver rows', async () => {
  await withRows(async (db) => {
    const conn = db.sqlite!;
    const wrappers = (text: string, arrays = false) => jsonWrappers(conn.prepare(text), text, arrays);
    assert.ok(wrappers('SELECT id, name, n, flag FROM json_rows_people'), 'a SELECT of text and integers goes through JSON');
    assert.ok(wrappers('SELECT id, name FROM json_rows_people', true));
    assert.equal(wrappers('SELECT label, score FROM json_rows_things'), null, 'a REAL would lose digits');
    assert.equal(wrappers('SELECT label, data FROM json_rows_things'), null, 'JSON has no BLOB');
    assert.equal(wrappers('SELECT p.id, t.id FROM json_rows_people p JOIN json_rows_things t ON t.person = p.id', true), null);
    assert.equal(wrappers("UPDATE json_rows_people SET name = 'x' WHERE id = 0 RETURNING id"), null, 'a write is not wrapped');

    const rows = await db.all(withBlobAndReal);
    assert.equal(rows[0]!.score, 0.1 + 0.2);
    assert.equal(rows[1]!.score, 1 / 3);
    assert.deepEqual(rows[0]!.data, Buffer.from([0, 1, 2]));
    assert.deepEqual(await db.all(sameNameTwice), [
      [1, 1],
      [1, 2],
      [2, 3],
    ]);
  });
});

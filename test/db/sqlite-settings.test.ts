// The SQLite settings docs/performance.md gives reasons for ("SQLite settings, and why"): a change to
// any of them should be deliberate, so each is pinned here.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { MMAP_SIZE, migrate, openDatabase } from '../../src/db/database.js';

test('the writer and the reader connections open with the documented pragmas', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'idsvc-pragmas-'));
  const db = await openDatabase(`sqlite:${path.join(dir, 'db.sqlite')}`);
  try {
    const w = db.sqlite!;
    const r = db.reader!;
    assert.notEqual(w, r, 'a file database gets a second, read-only connection');
    const p = (c: typeof w, name: string) => c.pragma(name, { simple: true });
    assert.equal(p(w, 'journal_mode'), 'wal');
    assert.equal(p(w, 'synchronous'), 2, 'FULL: every commit is fsynced before it is acknowledged');
    assert.equal(p(w, 'busy_timeout'), 5000);
    assert.equal(p(w, 'foreign_keys'), 1);
    // SQLite clamps the request to its build's maximum (0x7fff0000, just under 2 GiB).
    assert.equal(p(w, 'mmap_size'), Math.min(MMAP_SIZE, 0x7fff0000));
    assert.equal(p(w, 'wal_autocheckpoint'), 8000);
    assert.equal(p(w, 'journal_size_limit'), 64 * 1024 * 1024);
    assert.equal(p(w, 'temp_store'), 2, "MEMORY: savepoints' sub-journals are not files created and deleted at each commit");
    assert.equal(p(r, 'query_only'), 1);
    assert.equal(p(r, 'busy_timeout'), 5000);
    // A commit by the writer would make a mapped reader drop and refault its whole map.
    assert.equal(p(r, 'mmap_size'), 0, 'the reader maps nothing');
    assert.equal(p(r, 'cache_size'), -2000, 'a 2 MB page cache: emptied at every commit anyway');
  } finally {
    await db.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test("an ANALYZE's stat4 samples are dropped when the database opens, its stat1 counts kept, for connections already open too", async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'idsvc-stat4-'));
  const url = `sqlite:${path.join(dir, 'db.sqlite')}`;
  try {
    const first = await openDatabase(url);
    await migrate(first);
    const insert = first.sqlite!.prepare('INSERT INTO subjects (handle, created_at) VALUES (?, 0)');
    for (let i = 0; i < 200; i++) insert.run(`person${i}`);
    // What an operator's ANALYZE (or PRAGMA optimize) leaves behind.
    first.sqlite!.exec('ANALYZE');
    const count = (c: typeof first.sqlite, table: string) => c!.prepare(`SELECT count(*) FROM ${table}`).pluck().get() as number;
    assert.ok(count(first.sqlite, 'sqlite_stat4') > 0, 'ANALYZE took samples');
    const tables = (c: typeof first.sqlite) => c!.prepare("SELECT name FROM sqlite_schema WHERE name LIKE 'sqlite_stat%' ORDER BY name").pluck().all();

    // A second process (the CLI beside a running server) opens the same file.
    const db = await openDatabase(url);
    try {
      assert.deepEqual(tables(db.sqlite), ['sqlite_stat1'], 'with samples, every indexed lookup would be prepared again on each call');
      assert.ok(count(db.sqlite, 'sqlite_stat1') > 0, 'the row counts stay for the planner');
      assert.deepEqual(tables(db.reader), ['sqlite_stat1'], 'the read connection has none either');
      // The first one's connections, open all along, read the schema again and see none either.
      assert.deepEqual(tables(first.sqlite), ['sqlite_stat1']);
      assert.deepEqual(tables(first.reader), ['sqlite_stat1']);
    } finally {
      await db.close();
      await first.close();
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

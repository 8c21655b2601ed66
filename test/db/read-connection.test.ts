// Which SQLite connection a read outside any write runs on (db/prepared.ts, readConnection): the
// writer while it has no transaction open, the query_only reader while a write is under way, and
// always the reader where other processes commit all the time (`serve --workers`). Whichever it is,
// a read sees committed data only, the change feed included; `sqlite::memory:`, one connection,
// reads no feed while a write is open. Each connection answers a function of
// its own name here, so a statement says where it ran.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { migrate, openDatabase } from '../../src/db/database.js';
import type { Db } from '../../src/db/handle.js';
import { statement } from '../../src/db/prepared.js';
import { feedReader } from '../../src/repositories/answer-feed.js';

const whichConnection = statement<{ name: string }>('SELECT connection_name() AS name');
const settingsCount = statement<{ n: number }>("SELECT count(*) AS n FROM settings WHERE key = 'read-connection-test'");
const writeOutsideWrite = statement<{ key: string }>("INSERT INTO settings (key, value) VALUES ('read-connection-test', 'x') RETURNING key");

async function withDatabase(options: { otherWriters?: boolean }, body: (db: Db) => Promise<void>): Promise<void> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'idsvc-read-connection-'));
  const db = await openDatabase(`sqlite:${path.join(dir, 'db.sqlite')}`, options);
  try {
    await migrate(db);
    db.sqlite!.function('connection_name', () => 'writer');
    db.reader!.function('connection_name', () => 'reader');
    await body(db);
  } finally {
    await db.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** Runs `during` while a write's transaction is open (after its first statement), then lets it commit, or fail (undone). */
async function duringOpenWrite(db: Db, firstStatement: string, during: () => Promise<void>, outcome: 'commit' | 'fail' = 'commit'): Promise<void> {
  let reached!: () => void;
  const open = new Promise<void>((resolve) => (reached = resolve));
  let release!: () => void;
  const held = new Promise<void>((resolve) => (release = resolve));
  const write = db.write(async () => {
    db.sqlite!.prepare(firstStatement).run();
    reached();
    await held;
    if (outcome === 'fail') throw new Error('this write fails');
  });
  await open;
  assert.ok(db.sqlite!.inTransaction, 'the write holds its transaction open');
  try {
    await during();
  } finally {
    release();
    await write.catch((err: unknown) => {
      if (outcome !== 'fail') throw err;
    });
  }
}

test('SQLite: a read outside any write runs on the writer while no transaction is open, on the reader while one is', async () => {
  await withDatabase({}, async (db) => {
    assert.equal((await db.get(whichConnection))?.name, 'writer');
    await duringOpenWrite(db, "INSERT INTO settings (key, value) VALUES ('read-connection-test', 'x')", async () => {
      assert.equal((await db.get(whichConnection))?.name, 'reader');
      assert.equal((await db.get(settingsCount))?.n, 0, 'the write still open is not seen');
    });
    assert.equal((await db.get(settingsCount))?.n, 1, 'once committed it is');
    assert.equal((await db.get(whichConnection))?.name, 'writer');
  });
});

test('SQLite: where other processes commit all the time, every read outside a write runs on the reader', async () => {
  await withDatabase({ otherWriters: true }, async (db) => {
    assert.equal((await db.get(whichConnection))?.name, 'reader');
    assert.deepEqual(
      (await db.all(whichConnection)).map((r) => r.name),
      ['reader'],
    );
  });
});

test('SQLite: a statement that writes is refused outside a write, on the writer too, and writes nothing', async () => {
  await withDatabase({}, async (db) => {
    await assert.rejects(db.get(writeOutsideWrite), /a statement that writes was run outside a write/);
    assert.equal((await db.get(settingsCount))?.n, 0);
  });
});

test('SQLite: the change feed reads committed changes only, whichever connection it reads on', async () => {
  await withDatabase({}, async (db) => {
    const feed = feedReader(db);
    assert.ok(feed.local);
    assert.deepEqual(feed.read(), []);
    await duringOpenWrite(db, "INSERT INTO answer_changes (tag) VALUES ('u1')", async () => {
      assert.ok(feed.local);
      assert.deepEqual(feed.read(), [], 'a change still open is not read (it may yet be rolled back)');
    });
    assert.deepEqual(feed.read(), ['u1'], 'once committed it is');
    await db.write(async () => void db.sqlite!.prepare("INSERT INTO answer_changes (tag) VALUES ('u2')").run());
    assert.deepEqual(feed.read(), ['u2']);
  });
});

test('sqlite::memory: (one connection): the feed reads nothing while a write is open, so a change undone never hides the next one', async () => {
  const db = await openDatabase('sqlite::memory:');
  try {
    await migrate(db);
    const feed = feedReader(db);
    assert.ok(feed.local);
    await duringOpenWrite(
      db,
      "INSERT INTO answer_changes (tag) VALUES ('u7')",
      async () => {
        assert.ok(feed.local);
        assert.deepEqual(feed.read(), [], 'not while the write is open');
      },
      'fail',
    );
    // The undone row's id goes to the next change, which must still be read.
    await db.write(async () => void db.sqlite!.prepare("INSERT INTO answer_changes (tag) VALUES ('u8')").run());
    assert.deepEqual(feed.read(), ['u8']);
  } finally {
    await db.close();
  }
});

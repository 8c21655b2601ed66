// What `idsvc serve` says at start-up about its database (src/cli/serve.ts): for SQLite, where reads
// outside a write run (db/prepared.ts, readConnection), so an operator can see why.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { databaseInWords } from '../../src/cli/serve.js';
import { openDatabase } from '../../src/db/database.js';

async function wordsFor(url: string, otherWriters: boolean): Promise<string> {
  const db = await openDatabase(url, { otherWriters });
  try {
    return databaseInWords(db);
  } finally {
    await db.close();
  }
}

test('a file: through the writer map alone, on a second connection beside other writers; in memory: one connection', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'idsvc-serve-words-'));
  try {
    const file = `sqlite:${path.join(dir, 'db.sqlite')}`;
    assert.equal(await wordsFor(file, false), "SQLite, reads through the writer's map");
    assert.equal(await wordsFor(file, true), 'SQLite, reads on a second connection: other processes commit to this file');
    assert.equal(await wordsFor('sqlite::memory:', false), 'SQLite in memory, one connection');
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

// The files idsvc creates that hold what the database holds (password hashes, tokens, addresses)
// are readable by their owner only, whatever the umask: a new SQLite database with its -wal and
// -shm files and its directory, and a backup.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { backupSqlite } from '../../src/db/backup.js';
import { migrate, openDatabase } from '../../src/db/database.js';

const modeOf = (file: string) => (fs.statSync(file).mode & 0o777).toString(8);

test('a new SQLite database, its WAL and shared-memory files and a backup of it are mode 0600', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'idsvc-modes-'));
  const previous = process.umask(0o022); // the usual default, under which files come out 0644
  try {
    const file = path.join(dir, 'data', 'idsvc.sqlite');
    const db = await openDatabase(`sqlite:${file}`);
    try {
      await migrate(db);
      assert.equal(modeOf(path.dirname(file)), '700', 'the directory it created');
      for (const f of [file, `${file}-wal`, `${file}-shm`]) assert.equal(modeOf(f), '600', f);
      const backup = path.join(dir, 'backup.sqlite');
      await backupSqlite(file, backup);
      assert.equal(modeOf(backup), '600');
    } finally {
      await db.close();
    }
    // A file that exists keeps the mode its owner chose.
    const own = path.join(dir, 'own.sqlite');
    fs.writeFileSync(own, '', { mode: 0o640 });
    fs.chmodSync(own, 0o640);
    await (await openDatabase(`sqlite:${own}`)).close();
    assert.equal(modeOf(own), '640');
  } finally {
    process.umask(previous);
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

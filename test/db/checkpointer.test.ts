// The background checkpointer (db/checkpointer.ts) copies committed pages from the WAL into the
// database file from a worker thread. Seen from outside, that is: the database file alone, without
// its WAL, holds what was committed.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import SQLite from 'better-sqlite3';
import { openDatabase } from '../../src/db/database.js';
import { startCheckpointer } from '../../src/db/checkpointer.js';
import { loadConfig } from '../../src/config.js';
import { startServer } from '../../src/server.js';

/** Rows of `table` in a copy of the database file taken without its WAL: what checkpoints have copied. */
function rowsInFileAlone(dir: string, file: string, table: string): number {
  const copy = path.join(dir, `alone-${Math.random().toString(36).slice(2)}.sqlite`);
  fs.copyFileSync(file, copy);
  const db = new SQLite(copy, { readonly: true });
  try {
    return (db.prepare(`SELECT count(*) AS n FROM ${table}`).get() as { n: number }).n;
  } finally {
    db.close();
  }
}

/** A log that keeps the messages of its warnings, for the tests to look at. */
const recordingLog = () => ({
  warnings: [] as string[],
  warn(_o: object, msg: string) {
    this.warnings.push(msg);
  },
});

test('a round of the background checkpointer puts the WAL into the database file', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'idsvc-checkpoint-'));
  const file = path.join(dir, 'db.sqlite');
  const db = await openDatabase(`sqlite:${file}`);
  const log = recordingLog();
  // An hour between timed rounds: only checkpointNow() runs one in this test.
  const checkpointer = startCheckpointer(file, 3_600_000, log);
  try {
    const raw = db.sqlite!;
    raw.exec('CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)');
    const insert = raw.prepare('INSERT INTO t (v) VALUES (?)');
    raw.transaction(() => {
      for (let i = 0; i < 500; i++) insert.run(`row ${i}`);
    })();
    // Far below wal_autocheckpoint (8,000 pages): the writer has copied nothing itself.
    assert.throws(() => rowsInFileAlone(dir, file, 't'), /no such table/);

    const round = await checkpointer.checkpointNow();
    assert.equal(round.type, 'checkpointed');
    assert.ok(round.type === 'checkpointed' && round.frames > 0 && round.copied === round.frames, JSON.stringify(round));
    assert.equal(rowsInFileAlone(dir, file, 't'), 500);
    assert.equal(checkpointer.stats.rounds, 1);
    assert.equal(checkpointer.stats.framesCopied, round.type === 'checkpointed' ? round.copied : -1);
    assert.deepEqual(log.warnings, []);

    // Writes go on while it works, and the next round picks them up.
    raw.prepare("INSERT INTO t (v) VALUES ('later')").run();
    await checkpointer.checkpointNow();
    assert.equal(rowsInFileAlone(dir, file, 't'), 501);
  } finally {
    await checkpointer.stop();
    await db.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('timed rounds that find nothing new do not wake the main thread', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'idsvc-checkpoint-idle-'));
  const file = path.join(dir, 'db.sqlite');
  const db = await openDatabase(`sqlite:${file}`);
  // A round every 5 ms: an idle server would otherwise hear from its worker 200 times a second.
  const checkpointer = startCheckpointer(file, 5, recordingLog());
  try {
    db.sqlite!.exec("CREATE TABLE t (v TEXT); INSERT INTO t VALUES ('x')");
    for (let i = 0; i < 400 && checkpointer.stats.framesCopied === 0; i++) await new Promise((r) => setTimeout(r, 50));
    assert.ok(checkpointer.stats.framesCopied > 0, 'a timed round copied the write');
    const rounds = checkpointer.stats.rounds;
    // About 60 timed rounds with nothing to copy.
    await new Promise((r) => setTimeout(r, 300));
    assert.equal(checkpointer.stats.rounds, rounds);
    db.sqlite!.exec("INSERT INTO t VALUES ('y')");
    for (let i = 0; i < 400 && checkpointer.stats.rounds === rounds; i++) await new Promise((r) => setTimeout(r, 50));
    assert.ok(checkpointer.stats.rounds > rounds, 'a new write is reported again');
  } finally {
    await checkpointer.stop();
    await db.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('the server checkpoints in the background on its own, and SQLITE_CHECKPOINT_MS=0 turns that off', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'idsvc-checkpoint-server-'));
  try {
    for (const [ms, expectCopied] of [
      ['50', true],
      ['0', false],
    ] as const) {
      const file = path.join(dir, `server-${ms}.sqlite`);
      const config = loadConfig({ DATABASE_URL: `sqlite:${file}`, PORT: '0', LOG_LEVEL: 'silent', BACKGROUND_JOBS: '0', SQLITE_CHECKPOINT_MS: ms });
      const server = await startServer(config);
      try {
        // A fresh server's migrations and catalogue are all in the WAL (fewer than 8,000 pages).
        server.ctx.db.sqlite!.exec("CREATE TABLE marker (v TEXT); INSERT INTO marker VALUES ('x')");
        let copied = false;
        // Waits for the timed rounds (every 50 ms) for up to 20 s: no assertion on how long it takes.
        for (let i = 0; expectCopied && i < 400 && !copied; i++) {
          try {
            copied = rowsInFileAlone(dir, file, 'marker') === 1;
          } catch {
            await new Promise((r) => setTimeout(r, 50));
          }
        }
        if (!expectCopied) {
          // Nothing to wait for when it is off: give a would-be worker many rounds' time first.
          await new Promise((r) => setTimeout(r, 500));
          assert.throws(() => rowsInFileAlone(dir, file, 'marker'), /no such table/);
        } else {
          assert.ok(copied, 'the marker reached the database file');
        }
      } finally {
        await server.stop();
      }
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('a checkpointer that cannot open its database says so once and answers instead of hanging', async () => {
  const log = recordingLog();
  const checkpointer = startCheckpointer(path.join(os.tmpdir(), 'idsvc-no-such-dir', 'nested', 'db.sqlite'), 3_600_000, log);
  const round = await checkpointer.checkpointNow();
  assert.equal(round.type, 'failed');
  assert.deepEqual(log.warnings, ['background checkpointer stopped; the writer checkpoints alone']);
  assert.equal((await checkpointer.checkpointNow()).type, 'failed', 'asked again after it stopped');
  await checkpointer.stop();
});

// Group commit (src/db/group-commit.ts, behind `db.write`): concurrent writes share a commit on SQLite, yet each one
// succeeds or fails on its own, and a caller hears back only once its write is committed.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { openDatabase, migrate } from '../../src/db/database.js';
import { isUnavailable } from '../../src/db/faults.js';
import { TEST_DB, PG_URL } from '../helpers/app.js';

test('concurrent writes: each is committed or undone on its own', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'idsvc-gc-'));
  const schema = `gc_${process.pid}_${Date.now()}`;
  const db = TEST_DB === 'postgres' ? await openDatabase(PG_URL, { pgSchema: schema }) : await openDatabase(`sqlite:${path.join(dir, 'gc.sqlite')}`);
  try {
    await migrate(db);
    const results = await Promise.allSettled(
      Array.from({ length: 50 }, (_, i) =>
        db.write(async (w) => {
          await w.kysely
            .insertInto('settings')
            .values({ key: `k${i}`, value: String(i) })
            .execute();
          if (i === 7) throw new Error('job 7 fails after its insert');
          return i;
        }),
      ),
    );
    assert.equal(results.filter((r) => r.status === 'fulfilled').length, 49);
    assert.equal(results[7]!.status, 'rejected');
    assert.deepEqual(results[3], { status: 'fulfilled', value: 3 });
    // Read on another connection: what was answered is committed, and the failed job left nothing.
    const keys = (await db.kysely.selectFrom('settings').select('key').where('key', 'like', 'k%').execute()).map((r) => r.key);
    assert.equal(keys.length, 49);
    assert.ok(!keys.includes('k7'));
    if (db.reader) assert.equal((db.reader.prepare("SELECT count(*) AS n FROM settings WHERE key LIKE 'k%'").get() as { n: number }).n, 49);
  } finally {
    await db.close();
    if (TEST_DB === 'postgres') {
      const pg = (await import('pg')).default;
      const c = new pg.Client({ connectionString: PG_URL });
      await c.connect();
      await c.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
      await c.end();
    }
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('SQLite: a write that finds the disk full fails its whole commit with the cause, and later commits go on', {
  skip: TEST_DB !== 'sqlite' && 'SQLite only',
}, async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'idsvc-gc-'));
  const db = await openDatabase(`sqlite:${path.join(dir, 'gc.sqlite')}`);
  try {
    await migrate(db);
    const raw = db.sqlite!;
    // SQLite answers SQLITE_FULL once the file would pass max_page_count, as on a full disk; for a
    // one-row insert (no statement journal) it then rolls the whole transaction back by itself.
    raw.pragma(`max_page_count = ${Number(raw.pragma('page_count', { simple: true })) + 2}`);
    const results = await Promise.allSettled(
      Array.from({ length: 20 }, (_, i) =>
        db.write(async (w) => {
          await w.kysely
            .insertInto('settings')
            .values({ key: `full${i}`, value: 'x'.repeat(i === 0 ? 10 : 3000) })
            .execute();
          return i;
        }),
      ),
    );
    const reasons = results.map((r) => (r.status === 'rejected' ? (r.reason as { code?: string }).code : 'fulfilled'));
    // The first writes shared the commit that failed: none of them may be answered as stored.
    assert.deepEqual([...new Set(reasons)], ['SQLITE_FULL']);
    assert.ok(results.every((r) => r.status === 'rejected' && isUnavailable(r.reason)));
    assert.equal((raw.prepare("SELECT count(*) AS n FROM settings WHERE key LIKE 'full%'").get() as { n: number }).n, 0);
    raw.pragma(`max_page_count = ${2 ** 30}`);
    assert.equal(await db.write(async (w) => (await w.kysely.insertInto('settings').values({ key: 'after', value: '1' }).execute()).length), 1);
  } finally {
    await db.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

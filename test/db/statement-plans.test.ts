// SQLite chooses a plan from its statistics when it has them, and from the schema alone when it has
// none, as on every database no one has run ANALYZE on. Each hot statement must find its rows by
// an index on that schema alone: a plan that reads a whole table, or a whole partner's rows, and
// sorts them grows with the database and no test at a few rows would notice.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { migrate, openDatabase } from '../../src/db/database.js';
import { statementTexts } from '../../src/db/prepared.js';

const repositories = fileURLToPath(new URL('../../src/repositories', import.meta.url));

test('every prepared statement finds its rows by an index on a database never analysed', async () => {
  // Every repository registers its statements as it loads.
  for (const file of fs.readdirSync(repositories).filter((f) => /\.[jt]s$/.test(f) && !f.endsWith('.d.ts'))) {
    await import(path.join(repositories, file.replace(/\.ts$/, '.js')));
  }
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'idsvc-plans-'));
  const db = await openDatabase(`sqlite:${path.join(dir, 'db.sqlite')}`);
  try {
    await migrate(db);
    assert.equal(db.sqlite!.prepare("SELECT count(*) FROM sqlite_schema WHERE name LIKE 'sqlite_stat%'").pluck().get(), 0, 'no statistics');
    const referencing = (table: string) =>
      new Set(
        db
          .sqlite!.prepare('SELECT m.name FROM sqlite_schema m, pragma_foreign_key_list(m.name) f WHERE m.type = \'table\' AND f."table" = ?')
          .pluck()
          .all(table) as string[],
      );
    const texts = statementTexts();
    assert.ok(texts.length >= 20, `the repositories registered their statements (${texts.length})`);
    const faults: string[] = [];
    for (const text of texts) {
      const params = Array((text.match(/\?/g) ?? []).length).fill(1);
      const plan = (db.sqlite!.prepare(`EXPLAIN QUERY PLAN ${text}`).all(...params) as { detail: string }[]).map((r) => r.detail);
      // An INSERT's plan also lists the foreign-key checks of the tables that reference the one it
      // writes, which run only while a violation is outstanding: those scans, and only those, pass.
      const inserted = /^INSERT INTO (\w+)/.exec(text)?.[1];
      const checks = inserted ? referencing(inserted) : new Set<string>();
      const scans = plan.filter((line) => line.startsWith('SCAN ') && !checks.has(line.split(' ')[1]!));
      const sorts = plan.filter((line) => line.includes('TEMP B-TREE'));
      if (scans.length > 0 || sorts.length > 0) faults.push(`${text}\n  ${plan.join(' | ')}`);
    }
    assert.deepEqual(faults, []);
  } finally {
    await db.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

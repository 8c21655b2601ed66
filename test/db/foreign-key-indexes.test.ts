// A row deleted or updated in a referenced table makes the database look up its referencing rows
// (ON DELETE CASCADE, SET NULL, or the check that none is left): without an index that starts with
// the referencing column, each such lookup reads the whole referencing table. Every foreign key has
// one, on both databases, but the few named below, each with the reason a scan is the better cost.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestApp, type TestApp } from '../helpers/app.js';

const SCANNED_ON_PURPOSE = new Map([
  // An index would cost every push that flows into the central repository; a partner is deleted
  // by an operator, seldom, and that one scan runs once.
  ['central_identities.source_partner_id', 'set null when a partner is deleted'],
  ['outbox.partner_id', 'every event writes an outbox row; a partner is deleted seldom'],
  // Short-lived rows, a few per sign-in, pruned as they expire.
  ['passkey_challenges.user_ref', 'a handful of live rows'],
  ['provider_flows.user_ref', 'a handful of live rows'],
  // Tables of a few rows per partner, read once per partner or account deleted: invitations
  // expire, and applications are one per partner.
  ['partner_applications.partner_id', 'set null when a partner is deleted'],
  ['partner_invitations.invited_by', 'set null at every account deletion'],
]);

let t: TestApp;
before(async () => {
  t = await startTestApp();
});
after(() => t.close());

/** The foreign keys whose column no index starts with, as `table.column`. */
async function unindexedForeignKeys(): Promise<string[]> {
  const db = t.ctx.db;
  if (db.sqlite) {
    return db.sqlite
      .prepare(
        `SELECT m.name || '.' || f."from" FROM sqlite_schema m, pragma_foreign_key_list(m.name) f
         WHERE m.type = 'table' AND NOT EXISTS (
           SELECT 1 FROM pragma_index_list(m.name) il, pragma_index_info(il.name) ii WHERE ii.seqno = 0 AND ii.name = f."from")
         AND NOT EXISTS (SELECT 1 FROM pragma_table_info(m.name) c WHERE c.pk = 1 AND c.name = f."from")`,
      )
      .pluck()
      .all() as string[];
  }
  const { rows } = await db.pgPool!.query<{ fk: string }>(
    `SELECT cl.relname || '.' || a.attname AS fk
       FROM pg_constraint c
       JOIN pg_class cl ON cl.oid = c.conrelid
       JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = c.conkey[1]
      WHERE c.contype = 'f' AND cl.relnamespace = current_schema()::regnamespace
        AND NOT EXISTS (SELECT 1 FROM pg_index i WHERE i.indrelid = c.conrelid AND i.indkey[0] = c.conkey[1])`,
  );
  return rows.map((r) => r.fk);
}

test('every foreign key column starts an index, but those scanned on purpose', async () => {
  const found = (await unindexedForeignKeys()).sort();
  assert.ok(found.length > 0, 'the catalogue query sees foreign keys at all');
  assert.deepEqual(found, [...SCANNED_ON_PURPOSE.keys()].sort());
});

test('the links of a subject are found by an index (an orphan folded into a new account)', async () => {
  const db = t.ctx.db;
  if (db.sqlite) {
    const plan = db.sqlite.prepare('EXPLAIN QUERY PLAN SELECT id FROM links WHERE subject_id = ?').all(1) as { detail: string }[];
    assert.match(plan.map((p) => p.detail).join('\n'), /USING (COVERING )?INDEX links_subject/);
    return;
  }
  const client = await db.pgPool!.connect();
  try {
    // A few rows make a sequential scan cheapest whatever the indexes: ask for the index's plan.
    await client.query('BEGIN');
    await client.query('SET LOCAL enable_seqscan = off');
    const { rows } = await client.query<{ 'QUERY PLAN': string }>('EXPLAIN SELECT id FROM links WHERE subject_id = 1');
    assert.match(rows.map((r) => r['QUERY PLAN']).join('\n'), /links_subject/);
  } finally {
    await client.query('ROLLBACK');
    client.release();
  }
});

// The change feed of the answer cache (services/answer-cache.ts): every change to a row that feeds
// a rendered answer, by any process or by hand, names what it touched as tags: `u{id}` a user
// (their row, central identities, links to them, their subject), `s{id}` a subject (the partner
// pushes and links hanging off it; migration 024 gives pushes a tag per partner), `p{id}` a partner.
// The cache drops every answer carrying a tag.
//
// - SQLite: triggers append the tags to `answer_changes`, whose id only grows (AUTOINCREMENT, one
//   writer at a time, so ids follow commit order); each process reads the rows after the last id
//   it saw. Every 1,000th row deletes what is more than 10,000 rows old; a process that falls
//   further behind sees a gap in the ids and empties its cache.
// - PostgreSQL: the same triggers append to `answer_changes` too, with the writing transaction's id,
//   since ids from a sequence do not follow commit order; readers ask for every row of a transaction
//   that had not finished at their last reading (services/answer-cache.ts). Not NOTIFY: a
//   transaction that notifies holds a database-wide lock through its commit's flush, which
//   serialised concurrent pushes (about 6 times fewer commits a second with 16 writers here).
//
// The catalogue needs no tag: an answer remembers the catalogue version it was rendered with.
import { sql, type Kysely } from 'kysely';
import type { DialectName } from '../handle.js';

/** The tags a row names, per table: a prefix and the column whose value follows it. */
export const TAG_COLUMNS: Record<string, [prefix: string, column: string][]> = {
  users: [['u', 'id']],
  central_identities: [['u', 'user_ref']],
  subjects: [
    ['s', 'id'],
    ['u', 'user_ref'],
  ],
  partner_identities: [['s', 'subject_id']],
  links: [
    ['s', 'subject_id'],
    ['u', 'user_ref'],
  ],
  partners: [['p', 'id']],
};

/** Tags a row names, as SQL over `R.` (NEW or OLD), per table. */
const TAGS: Record<string, string[]> = Object.fromEntries(
  Object.entries(TAG_COLUMNS).map(([table, tags]) => [table, tags.map(([prefix, column]) => `'${prefix}' || R.${column}`)]),
);

/** What a partner_identities row names in this migration: its subject (migration 024 narrows it to the partner's view of it). */
export const PARTNER_IDENTITY_TAGS_012 = "'s' || (r->>'subject_id')";

/**
 * PostgreSQL: one function for every table: the tags are read from the row as JSON, so that a
 * column missing from one table (NULL) simply adds no tag. `partnerIdentityTags` is the SQL of
 * what a partner_identities row `r` names.
 */
export function pgAnswerChangedFunction(partnerIdentityTags: string): string {
  return `CREATE OR REPLACE FUNCTION idsvc_answer_changed() RETURNS trigger LANGUAGE plpgsql AS $$
    DECLARE
      tags text[] := '{}';
      r jsonb;
    BEGIN
      IF TG_OP = 'TRUNCATE' THEN
        INSERT INTO answer_changes (tag) VALUES ('*');
        RETURN NULL;
      END IF;
      FOREACH r IN ARRAY CASE TG_OP WHEN 'INSERT' THEN ARRAY[to_jsonb(NEW)] WHEN 'DELETE' THEN ARRAY[to_jsonb(OLD)] ELSE ARRAY[to_jsonb(OLD), to_jsonb(NEW)] END LOOP
        CASE TG_TABLE_NAME
          WHEN 'users' THEN tags := tags || ('u' || (r->>'id'));
          WHEN 'central_identities' THEN tags := tags || ('u' || (r->>'user_ref'));
          WHEN 'subjects' THEN tags := tags || ARRAY['s' || (r->>'id'), 'u' || (r->>'user_ref')];
          WHEN 'partner_identities' THEN tags := tags || (${partnerIdentityTags});
          WHEN 'links' THEN tags := tags || ARRAY['s' || (r->>'subject_id'), 'u' || (r->>'user_ref')];
          WHEN 'partners' THEN tags := tags || ('p' || (r->>'id'));
        END CASE;
      END LOOP;
      INSERT INTO answer_changes (tag) SELECT DISTINCT t FROM unnest(tags) AS t WHERE t IS NOT NULL;
      RETURN NULL;
    END $$`;
}

export const EVENTS = { insert: ['NEW'], update: ['OLD', 'NEW'], delete: ['OLD'] } as const;

/** SQLite: the trigger as this migration made it (migration 013 replaces it, and puts it back on the way down). */
export function sqliteTrigger(table: string, event: keyof typeof EVENTS): string {
  const rows = EVENTS[event].flatMap((r) => TAGS[table]!.map((t) => `SELECT ${t.replaceAll('R.', `${r}.`)} AS tag`));
  return `CREATE TRIGGER answer_feed_${table}_${event} AFTER ${event.toUpperCase()} ON ${table}
    BEGIN INSERT INTO answer_changes (tag) SELECT tag FROM (${rows.join(' UNION ')}) WHERE tag IS NOT NULL; END`;
}

export function answerCacheFeedMigration(dialect: DialectName) {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      if (dialect === 'sqlite') {
        await sql`CREATE TABLE answer_changes (id INTEGER PRIMARY KEY AUTOINCREMENT, tag TEXT NOT NULL)`.execute(db);
        await sql`CREATE TRIGGER answer_changes_pruned AFTER INSERT ON answer_changes WHEN NEW.id % 1000 = 0
          BEGIN DELETE FROM answer_changes WHERE id <= NEW.id - 10000; END`.execute(db);
        for (const table of Object.keys(TAGS)) {
          for (const event of Object.keys(EVENTS) as (keyof typeof EVENTS)[]) await sql.raw(sqliteTrigger(table, event)).execute(db);
        }
        return;
      }
      // Ids from a sequence do not follow commit order, so each row also records its transaction
      // id: a reader asks for the rows of transactions not yet finished at its last reading.
      await sql`CREATE TABLE answer_changes (id BIGSERIAL PRIMARY KEY, xid BIGINT NOT NULL DEFAULT pg_current_xact_id()::text::bigint, tag TEXT NOT NULL)`.execute(
        db,
      );
      await sql`CREATE INDEX answer_changes_xid ON answer_changes (xid)`.execute(db);
      // The newest transaction id among pruned rows: a reader whose last reading is older empties its cache.
      await sql`CREATE TABLE answer_changes_horizon (id INTEGER PRIMARY KEY CHECK (id = 1), xid BIGINT NOT NULL)`.execute(db);
      await sql`INSERT INTO answer_changes_horizon (id, xid) VALUES (1, 0)`.execute(db);
      await sql`CREATE OR REPLACE FUNCTION idsvc_answer_changes_pruned() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
          WITH gone AS (DELETE FROM answer_changes WHERE id <= NEW.id - 10000 RETURNING xid)
          UPDATE answer_changes_horizon SET xid = greatest(xid, (SELECT max(xid) FROM gone)) WHERE id = 1 AND EXISTS (SELECT 1 FROM gone);
          RETURN NULL;
        END $$`.execute(db);
      await sql`CREATE TRIGGER answer_changes_pruned AFTER INSERT ON answer_changes FOR EACH ROW WHEN (NEW.id % 1000 = 0)
        EXECUTE FUNCTION idsvc_answer_changes_pruned()`.execute(db);
      await sql.raw(pgAnswerChangedFunction(PARTNER_IDENTITY_TAGS_012)).execute(db);
      for (const table of Object.keys(TAGS)) {
        await sql
          .raw(`CREATE TRIGGER ${table}_answer_feed AFTER INSERT OR UPDATE OR DELETE ON ${table} FOR EACH ROW EXECUTE FUNCTION idsvc_answer_changed()`)
          .execute(db);
        await sql
          .raw(`CREATE TRIGGER ${table}_answer_feed_truncate AFTER TRUNCATE ON ${table} FOR EACH STATEMENT EXECUTE FUNCTION idsvc_answer_changed()`)
          .execute(db);
      }
    },
    async down(db: Kysely<unknown>): Promise<void> {
      if (dialect === 'sqlite') {
        for (const table of Object.keys(TAGS)) {
          for (const event of Object.keys(EVENTS)) await sql.raw(`DROP TRIGGER IF EXISTS answer_feed_${table}_${event}`).execute(db);
        }
        await sql`DROP TABLE IF EXISTS answer_changes`.execute(db);
        return;
      }
      for (const table of Object.keys(TAGS)) {
        await sql.raw(`DROP TRIGGER IF EXISTS ${table}_answer_feed ON ${table}`).execute(db);
        await sql.raw(`DROP TRIGGER IF EXISTS ${table}_answer_feed_truncate ON ${table}`).execute(db);
      }
      await sql`DROP FUNCTION IF EXISTS idsvc_answer_changed()`.execute(db);
      await sql`DROP TABLE IF EXISTS answer_changes`.execute(db);
      await sql`DROP TABLE IF EXISTS answer_changes_horizon`.execute(db);
      await sql`DROP FUNCTION IF EXISTS idsvc_answer_changes_pruned()`.execute(db);
    },
  };
}

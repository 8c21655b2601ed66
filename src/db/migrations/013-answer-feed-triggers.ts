// SQLite: the answer feed's triggers (migration 012) insert one row per tag instead of inserting
// from a UNION of the old and new row's tags. The UNION's de-duplication built a temporary b-tree on
// every write; separate inserts need none. An update names its old row's tag
// only when it differs from the new row's, as the UNION did. The tags, the table and its readers are
// unchanged.
//
// PostgreSQL's feed is one trigger function (migration 012; 024 changes what a push names), already
// de-duplicating in memory.
import { sql, type Kysely } from 'kysely';
import type { DialectName } from '../handle.js';
import { EVENTS, sqliteTrigger, TAG_COLUMNS } from './012-answer-cache-feed.js';

/** One INSERT per tag; a column that is NULL names no tag. */
function perTagTrigger(table: string, event: keyof typeof EVENTS): string {
  const inserts = TAG_COLUMNS[table]!.flatMap(([prefix, column]) => {
    const tag = (row: string) => `INSERT INTO answer_changes (tag) SELECT '${prefix}' || ${row}.${column} WHERE ${row}.${column} IS NOT NULL`;
    if (event === 'insert') return [tag('NEW')];
    if (event === 'delete') return [tag('OLD')];
    return [tag('NEW'), `${tag('OLD')} AND OLD.${column} IS NOT NEW.${column}`];
  });
  return `CREATE TRIGGER answer_feed_${table}_${event} AFTER ${event.toUpperCase()} ON ${table}
    BEGIN ${inserts.map((i) => `${i};`).join(' ')} END`;
}

async function replaceTriggers(db: Kysely<unknown>, make: (table: string, event: keyof typeof EVENTS) => string): Promise<void> {
  for (const table of Object.keys(TAG_COLUMNS)) {
    for (const event of Object.keys(EVENTS) as (keyof typeof EVENTS)[]) {
      await sql.raw(`DROP TRIGGER IF EXISTS answer_feed_${table}_${event}`).execute(db);
      await sql.raw(make(table, event)).execute(db);
    }
  }
}

export function answerFeedTriggersMigration(dialect: DialectName) {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      if (dialect === 'sqlite') await replaceTriggers(db, perTagTrigger);
    },
    async down(db: Kysely<unknown>): Promise<void> {
      if (dialect === 'sqlite') await replaceTriggers(db, sqliteTrigger);
    },
  };
}

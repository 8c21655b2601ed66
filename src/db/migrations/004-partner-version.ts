// SQLite: a change counter for `partners`, bumped by triggers on every insert, update and delete,
// whoever makes it (this server, the CLI, another instance, an operator's sqlite3 shell). The
// partner cache (services/partner-cache.ts) reads this one-row table once per turn of the event
// loop and drops what it holds when the number has moved. This is SQLite's stand-in for the
// NOTIFY of migration 003, which PostgreSQL uses instead.
import { sql, type Kysely } from 'kysely';
import type { DialectName } from '../handle.js';

const TRIGGERS = ['INSERT', 'UPDATE', 'DELETE'] as const;

export function partnerVersionMigration(dialect: DialectName) {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      if (dialect !== 'sqlite') return;
      await sql`CREATE TABLE partner_changes (id INTEGER PRIMARY KEY CHECK (id = 1), version INTEGER NOT NULL)`.execute(db);
      await sql`INSERT INTO partner_changes (id, version) VALUES (1, 0)`.execute(db);
      for (const event of TRIGGERS) {
        await sql
          .raw(
            `CREATE TRIGGER partners_changed_${event.toLowerCase()} AFTER ${event} ON partners BEGIN UPDATE partner_changes SET version = version + 1 WHERE id = 1; END`,
          )
          .execute(db);
      }
    },
    async down(db: Kysely<unknown>): Promise<void> {
      if (dialect !== 'sqlite') return;
      for (const event of TRIGGERS) await sql.raw(`DROP TRIGGER IF EXISTS partners_changed_${event.toLowerCase()}`).execute(db);
      await sql`DROP TABLE IF EXISTS partner_changes`.execute(db);
    },
  };
}

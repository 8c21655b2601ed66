// PostgreSQL: every change to `partners`, by any process or by hand, sends a notification on the
// channel `idsvc_partners`, so that servers holding partner rows in memory drop them
// (services/partner-cache.ts). NOTIFY is delivered at commit, and not at all on rollback.
// SQLite has no such feed; nothing to do there.
import { sql, type Kysely } from 'kysely';
import type { DialectName } from '../handle.js';

export function partnerChangesMigration(dialect: DialectName) {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      if (dialect !== 'postgres') return;
      await sql`CREATE OR REPLACE FUNCTION idsvc_partners_changed() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
          PERFORM pg_notify('idsvc_partners', TG_TABLE_SCHEMA);
          RETURN NULL;
        END $$`.execute(db);
      await sql`CREATE TRIGGER partners_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON partners
        FOR EACH STATEMENT EXECUTE FUNCTION idsvc_partners_changed()`.execute(db);
    },
    async down(db: Kysely<unknown>): Promise<void> {
      if (dialect !== 'postgres') return;
      await sql`DROP TRIGGER IF EXISTS partners_changed ON partners`.execute(db);
      await sql`DROP FUNCTION IF EXISTS idsvc_partners_changed()`.execute(db);
    },
  };
}

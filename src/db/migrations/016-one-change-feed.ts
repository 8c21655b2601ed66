// The partner cache hears of changes through the change feed it shares with the answer cache
// (`answer_changes`, whose triggers already name a changed partner `p{id}`; services/change-feed.ts),
// so its own two feeds go: PostgreSQL's NOTIFY trigger (migration 003) and SQLite's change counter
// with its triggers (migration 004). Down puts both back as those migrations made them.
import { sql, type Kysely } from 'kysely';
import type { DialectName } from '../handle.js';
import { partnerChangesMigration } from './003-partner-changes.js';
import { partnerVersionMigration } from './004-partner-version.js';

export function oneChangeFeedMigration(dialect: DialectName) {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      if (dialect === 'postgres') {
        await sql`DROP TRIGGER IF EXISTS partners_changed ON partners`.execute(db);
        await sql`DROP FUNCTION IF EXISTS idsvc_partners_changed()`.execute(db);
        return;
      }
      for (const event of ['insert', 'update', 'delete']) await sql.raw(`DROP TRIGGER IF EXISTS partners_changed_${event}`).execute(db);
      await sql`DROP TABLE IF EXISTS partner_changes`.execute(db);
    },
    async down(db: Kysely<unknown>): Promise<void> {
      await partnerChangesMigration(dialect).up(db);
      await partnerVersionMigration(dialect).up(db);
    },
  };
}

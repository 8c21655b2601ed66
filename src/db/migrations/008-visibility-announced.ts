// What linked partners were last told about a user's visibility (`user.visible` / `user.hidden`),
// so that every path that changes visibility announces each change exactly once, whoever else
// changes it at the same time (services/central.ts announceVisibility). Existing users start
// where they are. The default is 1 and only users who are not opted in are written: adding a
// column with a constant default rewrites no row on PostgreSQL, while writing every row would hold
// the upgrade for as long as the largest installations have users (docs/operations.md).
// An insert that forgot the column errs towards telling partners `user.hidden` once more, never
// towards staying silent.
import { sql, type Kysely } from 'kysely';

export function visibilityAnnouncedMigration() {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .alterTable('users')
        .addColumn('announced_visible', 'integer', (c) => c.notNull().defaultTo(1))
        .execute();
      await sql`UPDATE users SET announced_visible = 0 WHERE opted_in <> 1`.execute(db);
    },
    async down(db: Kysely<unknown>): Promise<void> {
      await db.schema.alterTable('users').dropColumn('announced_visible').execute();
    },
  };
}

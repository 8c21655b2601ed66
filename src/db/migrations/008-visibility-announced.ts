// What linked partners were last told about a user's visibility (`user.visible` / `user.hidden`),
// so that every path that changes visibility announces each change exactly once, whoever else
// changes it at the same time (services/central.ts announceVisibility). Existing users start
// where they are: partners heard nothing else so far.
import { sql, type Kysely } from 'kysely';

export function visibilityAnnouncedMigration() {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema.alterTable('users').addColumn('announced_visible', 'integer', (c) => c.notNull().defaultTo(0)).execute();
      await sql`UPDATE users SET announced_visible = opted_in`.execute(db);
    },
    async down(db: Kysely<unknown>): Promise<void> {
      await db.schema.alterTable('users').dropColumn('announced_visible').execute();
    },
  };
}

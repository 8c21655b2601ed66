// The app idsvc registered with each Mastodon server a person signed in through: Mastodon has no
// central registry, so each server issues its own client id and secret on first use
// (connections/mastodon.ts), and they are kept for the next person of that server.
import type { Kysely } from 'kysely';

export function mastodonAppsMigration() {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .createTable('mastodon_apps')
        .addColumn('server', 'text', (c) => c.primaryKey())
        .addColumn('client_id', 'text', (c) => c.notNull())
        .addColumn('client_secret', 'text', (c) => c.notNull())
        // The callback the app was registered with: a changed BASE_URL needs a new registration.
        .addColumn('redirect_uri', 'text', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .execute();
    },
    async down(db: Kysely<unknown>): Promise<void> {
      await db.schema.dropTable('mastodon_apps').execute();
    },
  };
}

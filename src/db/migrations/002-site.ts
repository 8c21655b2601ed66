// Indexes for the site (SPEC §12): a user's recent verification attempts, a user's sessions (ended
// at deletion) and expired sessions (swept by a job).
import type { Kysely } from 'kysely';

export function siteMigration() {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema.createIndex('verification_attempts_user').on('verification_attempts').columns(['user_ref', 'attempted_at']).execute();
      await db.schema.createIndex('sessions_user').on('sessions').columns(['user_ref']).execute();
      await db.schema.createIndex('sessions_expiry').on('sessions').columns(['expires_at']).execute();
    },
    async down(db: Kysely<unknown>): Promise<void> {
      await db.schema.dropIndex('sessions_expiry').execute();
      await db.schema.dropIndex('sessions_user').execute();
      await db.schema.dropIndex('verification_attempts_user').execute();
    },
  };
}

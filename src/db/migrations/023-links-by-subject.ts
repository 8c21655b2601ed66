// Links by subject: folding an orphan subject into a new account reads its links and deletes the
// subject, whose ON DELETE CASCADE looks its links up by subject_id; without an index leading with
// it, each of those read the whole links table, in the write transaction of a sign-up.
import type { Kysely } from 'kysely';

export function linksBySubjectMigration() {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema.createIndex('links_subject').on('links').column('subject_id').execute();
    },
    async down(db: Kysely<unknown>): Promise<void> {
      await db.schema.dropIndex('links_subject').execute();
    },
  };
}

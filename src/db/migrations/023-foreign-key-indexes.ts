// Indexes for two foreign keys that deletes look rows up by, each of which read a whole table:
// - links.subject_id: folding an orphan subject into a new account reads its links and deletes the
//   subject, whose ON DELETE CASCADE finds its links by subject_id, in the write of a sign-up;
// - operator_audit.actor_ref: every account deletion looks up the audit rows it made (to set NULL),
//   in a table that is never pruned.
import type { Kysely } from 'kysely';

export function foreignKeyIndexesMigration() {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema.createIndex('links_subject').on('links').column('subject_id').execute();
      await db.schema.createIndex('operator_audit_actor').on('operator_audit').column('actor_ref').execute();
    },
    async down(db: Kysely<unknown>): Promise<void> {
      await db.schema.dropIndex('operator_audit_actor').execute();
      await db.schema.dropIndex('links_subject').execute();
    },
  };
}

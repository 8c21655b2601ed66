// Evidence behind every verified mark: how it was earned (method), what proves it (evidence URL),
// when it was first earned and last checked, and the state the fair re-check needs: when the next
// check is due (daily with jitter, sooner to confirm a negative, later when a host asked us to
// wait) and since when a definite negative has stood against a mark that is still shown.
// Attempts record the method that ran, the HTTP status read, and the result in the vocabulary of
// CheckOutcome (verified / absent / transient) in place of rel="me"'s own.
import { sql, type Kysely } from 'kysely';

export function verificationEvidenceMigration() {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema.alterTable('central_identities').addColumn('evidence_url', 'text').execute();
      await db.schema.alterTable('central_identities').addColumn('next_check_at', 'bigint').execute();
      await db.schema.alterTable('central_identities').addColumn('negative_since', 'bigint').execute();
      await sql`UPDATE central_identities SET verified_by = 'rel-me' WHERE verified_by = 'relme'`.execute(db);
      // Entries already checked stay on their daily rhythm; never-checked ones (NULL) are due now.
      await sql`UPDATE central_identities SET next_check_at = last_checked_at + 86400000 WHERE last_checked_at IS NOT NULL`.execute(db);
      await db.schema.createIndex('central_identities_next_check').on('central_identities').column('next_check_at').execute();

      await db.schema.alterTable('verification_attempts').addColumn('method', 'text').execute();
      await db.schema.alterTable('verification_attempts').addColumn('status', 'integer').execute();
      await sql`UPDATE verification_attempts SET method = 'rel-me'`.execute(db);
      await sql`UPDATE verification_attempts SET outcome = CASE outcome WHEN 'verified' THEN 'verified' WHEN 'unreachable' THEN 'transient' ELSE 'absent' END`.execute(
        db,
      );
    },
    async down(db: Kysely<unknown>): Promise<void> {
      await sql`UPDATE verification_attempts SET outcome = CASE outcome WHEN 'verified' THEN 'verified' WHEN 'transient' THEN 'unreachable' ELSE 'no_link' END`.execute(
        db,
      );
      await db.schema.alterTable('verification_attempts').dropColumn('status').execute();
      await db.schema.alterTable('verification_attempts').dropColumn('method').execute();
      await db.schema.dropIndex('central_identities_next_check').execute();
      await sql`UPDATE central_identities SET verified_by = 'relme' WHERE verified_by = 'rel-me'`.execute(db);
      await db.schema.alterTable('central_identities').dropColumn('negative_since').execute();
      await db.schema.alterTable('central_identities').dropColumn('next_check_at').execute();
      await db.schema.alterTable('central_identities').dropColumn('evidence_url').execute();
    },
  };
}

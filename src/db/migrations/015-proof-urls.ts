// A proof some services need the person to point at (a public gist, a post): its address is kept
// with the identity, so that every re-check reads the same proof. Nullable: most methods read the
// proof from the identity's own profile and need no address.
import { sql, type Kysely } from 'kysely';

export function proofUrlsMigration() {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await sql`ALTER TABLE central_identities ADD COLUMN proof_url TEXT`.execute(db);
    },
    async down(db: Kysely<unknown>): Promise<void> {
      await sql`ALTER TABLE central_identities DROP COLUMN proof_url`.execute(db);
    },
  };
}

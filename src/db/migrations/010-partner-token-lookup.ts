// Gravatar-compatible profiles take a partner's api_token as `Authorization: Bearer`,
// with no api_key beside it, so the partner is found by the token's hash. Indexes keep that lookup
// one probe, for the current token and for the previous one during its grace period. Not unique:
// two 40-character random tokens do not collide, and a unique index would make a rotation that
// keeps the old hash in `previous_token_hash` depend on row order.
import type { Kysely } from 'kysely';

export function partnerTokenLookupMigration() {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema.createIndex('partners_token_hash').on('partners').column('token_hash').execute();
      await db.schema.createIndex('partners_previous_token_hash').on('partners').column('previous_token_hash').execute();
    },
    async down(db: Kysely<unknown>): Promise<void> {
      await db.schema.dropIndex('partners_previous_token_hash').execute();
      await db.schema.dropIndex('partners_token_hash').execute();
    },
  };
}

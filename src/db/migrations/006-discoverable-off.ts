// Discoverability becomes a choice: off until the user turns it on.
//
// Until now every account was created discoverable (found by reverse_lookup, return_contacts and
// WebFinger mailto:) and the account page showed the box already ticked; sign-up never mentioned it.
// Nothing records whether a user with the flag set ever chose it, and a pre-ticked box is not a
// choice, so every existing account starts over as not discoverable. Users who want to be found turn
// it on again on the account page (or an operator, with the user's word, by `idsvc user set U
// --discoverable on`).
//
// New rows get 0 from createUser. The column's default follows on PostgreSQL; SQLite cannot change a
// column default without rebuilding the table, so there it stays 1 for inserts that name no value
// (none in this code base: bench/dataset.ts and createUser both set it).
import { sql, type Kysely } from 'kysely';
import type { DialectName } from '../handle.js';

export function discoverableOffMigration(dialect: DialectName) {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await sql`UPDATE users SET discoverable = 0 WHERE discoverable <> 0`.execute(db);
      if (dialect === 'postgres') await sql`ALTER TABLE users ALTER COLUMN discoverable SET DEFAULT 0`.execute(db);
    },
    async down(db: Kysely<unknown>): Promise<void> {
      // Who was discoverable before cannot be restored; only the default goes back.
      if (dialect === 'postgres') await sql`ALTER TABLE users ALTER COLUMN discoverable SET DEFAULT 1`.execute(db);
    },
  };
}

// Passkeys (WebAuthn): the credentials a person registered to log in without a password, and the
// challenges handed to a browser for one ceremony each. A challenge row is bound to what asked for
// it (the session adding a passkey, or the log-in attempt's cookie), so it cannot be answered from
// anywhere else, and is deleted the first time it is answered.
import type { Kysely } from 'kysely';

type Dialect = 'sqlite' | 'postgres';

export function passkeysMigration(dialect: Dialect) {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .createTable('passkeys')
        .addColumn('id', dialect === 'postgres' ? 'serial' : 'integer', (c) => (dialect === 'postgres' ? c.primaryKey() : c.primaryKey().autoIncrement()))
        .addColumn('user_ref', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
        // base64url, as the browser names the credential; unique across accounts.
        .addColumn('credential_id', 'text', (c) => c.notNull().unique())
        .addColumn('public_key', dialect === 'postgres' ? 'bytea' : 'blob', (c) => c.notNull())
        // The authenticator's signature counter: 32 bits unsigned, more than a PostgreSQL integer holds.
        .addColumn('counter', 'bigint', (c) => c.notNull())
        // The random user handle given to the authenticator with this credential, which it returns
        // with every assertion: random rather than the account's id, so the authenticator holds nothing about the account.
        .addColumn('user_handle', 'text', (c) => c.notNull())
        .addColumn('transports', 'text', (c) => c.notNull())
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('last_used_at', 'bigint')
        .execute();
      await db.schema.createIndex('passkeys_user').on('passkeys').column('user_ref').execute();
      await db.schema
        .createTable('passkey_challenges')
        .addColumn('binding', 'text', (c) => c.primaryKey())
        .addColumn('challenge', 'text', (c) => c.notNull())
        .addColumn('user_ref', 'integer', (c) => c.references('users.id').onDelete('cascade'))
        // The name the person gave the passkey being added, and the user handle its authenticator
        // was given (both null for a log-in).
        .addColumn('label', 'text')
        .addColumn('user_handle', 'text')
        .addColumn('expires_at', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('passkey_challenges_expiry').on('passkey_challenges').column('expires_at').execute();
    },
    async down(db: Kysely<unknown>): Promise<void> {
      await db.schema.dropTable('passkey_challenges').execute();
      await db.schema.dropTable('passkeys').execute();
    },
  };
}

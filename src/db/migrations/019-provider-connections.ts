// Connections to sign-in providers (GitHub, GitLab, Google, an operator's OpenID Connect providers): which provider account belongs to which idsvc account, named by the provider's stable
// account id so that a renamed account stays the same connection. No provider token is kept.
// `provider_flows` holds a sign-in or connection while the browser is away at the provider and,
// for a sign-up, until the person has chosen a userId: the PKCE verifier, the nonce and the
// state's digest, bound to a random cookie of that browser, single-use and short-lived.
import type { Kysely } from 'kysely';

type Dialect = 'sqlite' | 'postgres';

export function providerConnectionsMigration(dialect: Dialect) {
  const id = dialect === 'postgres' ? ('serial' as const) : ('integer' as const);
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .createTable('provider_connections')
        .addColumn('id', id, (c) => (dialect === 'postgres' ? c.primaryKey() : c.primaryKey().autoIncrement()))
        .addColumn('user_ref', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
        // The provider's key ('github', 'gitlab', 'google', 'oidc:<name>').
        .addColumn('provider', 'text', (c) => c.notNull())
        .addColumn('subject', 'text', (c) => c.notNull())
        .addColumn('username', 'text')
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('last_login_at', 'bigint')
        .addUniqueConstraint('provider_connections_subject', ['provider', 'subject'])
        .execute();
      await db.schema.createIndex('provider_connections_user').on('provider_connections').column('user_ref').execute();

      await db.schema
        .createTable('provider_flows')
        // SHA-256 of the browser's flow cookie.
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('state_hash', 'text', (c) => c.notNull())
        .addColumn('provider', 'text', (c) => c.notNull())
        .addColumn('purpose', 'text', (c) => c.notNull()) // 'login' | 'connect'
        .addColumn('user_ref', 'integer', (c) => c.references('users.id').onDelete('cascade'))
        .addColumn('code_verifier', 'text', (c) => c.notNull())
        .addColumn('nonce', 'text')
        // The provider account a sign-up is for, as JSON, once the provider has answered.
        .addColumn('pending', 'text')
        .addColumn('expires_at', 'bigint', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('provider_flows_expiry').on('provider_flows').column('expires_at').execute();
    },
    async down(db: Kysely<unknown>): Promise<void> {
      await db.schema.dropTable('provider_flows').execute();
      await db.schema.dropTable('provider_connections').execute();
    },
  };
}

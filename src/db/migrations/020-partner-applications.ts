// Partners a person applies for and runs from the site: an account's role (operators review and
// run the console), applications for keys, the people who are members of a partner and the
// invitations that make more of them, and the log of every operator action.
import type { Kysely } from 'kysely';

type Dialect = 'sqlite' | 'postgres';

export function partnerApplicationsMigration(dialect: Dialect) {
  const id = dialect === 'postgres' ? ('bigserial' as const) : ('integer' as const);
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .alterTable('users')
        .addColumn('role', 'text', (c) => c.notNull().defaultTo('none'))
        .execute();
      // A partner made from an application has an api_token nobody has seen: its first member
      // issues it on the dashboard, where it is shown once.
      await db.schema
        .alterTable('partners')
        .addColumn('token_unissued', 'integer', (c) => c.notNull().defaultTo(0))
        .execute();

      // The HTTP status of a delivery's last answer, for the dashboard's list of deliveries.
      await db.schema.alterTable('outbox').addColumn('last_status', 'integer').execute();

      await db.schema
        .createTable('partner_applications')
        .addColumn('id', id, (c) => (dialect === 'postgres' ? c.primaryKey() : c.primaryKey().autoIncrement()))
        .addColumn('user_ref', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('site_url', 'text', (c) => c.notNull())
        .addColumn('purpose', 'text', (c) => c.notNull())
        .addColumn('origins', 'text', (c) => c.notNull()) // JSON array of origins
        .addColumn('contact', 'text', (c) => c.notNull())
        .addColumn('status', 'text', (c) => c.notNull()) // 'pending' | 'approved' | 'declined'
        .addColumn('decline_reason', 'text')
        .addColumn('partner_id', 'integer', (c) => c.references('partners.id').onDelete('set null'))
        .addColumn('decided_by', 'text') // the operator's userId, or 'auto'
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('decided_at', 'bigint')
        .execute();
      await db.schema.createIndex('partner_applications_status').on('partner_applications').columns(['status', 'id']).execute();
      await db.schema.createIndex('partner_applications_user').on('partner_applications').columns(['user_ref', 'id']).execute();

      await db.schema
        .createTable('partner_members')
        .addColumn('partner_id', 'integer', (c) => c.notNull().references('partners.id').onDelete('cascade'))
        .addColumn('user_ref', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addPrimaryKeyConstraint('partner_members_pk', ['partner_id', 'user_ref'])
        .execute();
      await db.schema.createIndex('partner_members_user').on('partner_members').column('user_ref').execute();

      await db.schema
        .createTable('partner_invitations')
        .addColumn('id', id, (c) => (dialect === 'postgres' ? c.primaryKey() : c.primaryKey().autoIncrement()))
        .addColumn('partner_id', 'integer', (c) => c.notNull().references('partners.id').onDelete('cascade'))
        .addColumn('token_hash', 'text', (c) => c.notNull().unique())
        // Only the SHA-256 of the normalised address: who accepts must hold that address.
        .addColumn('email_sha256', 'text', (c) => c.notNull())
        .addColumn('invited_by', 'integer', (c) => c.references('users.id').onDelete('set null'))
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('expires_at', 'bigint', (c) => c.notNull())
        .addColumn('used_at', 'bigint')
        .execute();
      await db.schema.createIndex('partner_invitations_partner').on('partner_invitations').columns(['partner_id', 'id']).execute();

      await db.schema
        .createTable('operator_audit')
        .addColumn('id', id, (c) => (dialect === 'postgres' ? c.primaryKey() : c.primaryKey().autoIncrement()))
        .addColumn('actor_ref', 'integer', (c) => c.references('users.id').onDelete('set null'))
        // Kept as text too, so the log still names who acted after their account is gone.
        .addColumn('actor_user_id', 'text', (c) => c.notNull())
        .addColumn('action', 'text', (c) => c.notNull())
        .addColumn('target', 'text', (c) => c.notNull())
        .addColumn('before', 'text') // JSON
        .addColumn('after', 'text') // JSON
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .execute();
      // What a partner's dashboard shows of its links: when one was made or ended, and by whom; no
      // person is named, so nothing here outlives an account it was about.
      await db.schema
        .createTable('partner_link_events')
        .addColumn('id', id, (c) => (dialect === 'postgres' ? c.primaryKey() : c.primaryKey().autoIncrement()))
        .addColumn('partner_id', 'integer', (c) => c.notNull().references('partners.id').onDelete('cascade'))
        .addColumn('kind', 'text', (c) => c.notNull()) // 'linked' | 'unlinked'
        .addColumn('by', 'text', (c) => c.notNull()) // 'partner' | 'user' | 'deletion'
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('partner_link_events_partner').on('partner_link_events').columns(['partner_id', 'created_at']).execute();
      await db.schema.createIndex('operator_audit_time').on('operator_audit').columns(['created_at', 'id']).execute();
    },
    async down(db: Kysely<unknown>): Promise<void> {
      await db.schema.dropTable('operator_audit').execute();
      await db.schema.dropTable('partner_link_events').execute();
      await db.schema.alterTable('partners').dropColumn('token_unissued').execute();
      await db.schema.alterTable('outbox').dropColumn('last_status').execute();
      await db.schema.dropTable('partner_invitations').execute();
      await db.schema.dropTable('partner_members').execute();
      await db.schema.dropTable('partner_applications').execute();
      await db.schema.alterTable('users').dropColumn('role').execute();
    },
  };
}

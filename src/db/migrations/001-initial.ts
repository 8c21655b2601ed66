// The whole domain of SPEC §1–§3 in one first migration, so later capabilities add behaviour, not tables.
import type { Kysely, CreateTableBuilder } from 'kysely';

type Dialect = 'sqlite' | 'postgres';

// An auto-numbered key needs different DDL on each dialect; everything else is portable.
function withId<T extends string>(t: CreateTableBuilder<T, never>, dialect: Dialect): CreateTableBuilder<T, 'id'> {
  return dialect === 'postgres' ? t.addColumn('id', 'bigserial', (c) => c.primaryKey()) : t.addColumn('id', 'integer', (c) => c.primaryKey().autoIncrement());
}

export function initialMigration(dialect: Dialect) {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      const ms = 'bigint';
      await withId(db.schema.createTable('partners'), dialect)
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('api_key', 'text', (c) => c.notNull().unique())
        .addColumn('token_hash', 'text', (c) => c.notNull())
        .addColumn('previous_token_hash', 'text')
        .addColumn('previous_token_expires_at', ms)
        .addColumn('trusted', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('suspended', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('legacy_open_reads', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('allowed_origins', 'text', (c) => c.notNull().defaultTo('[]'))
        .addColumn('webhook_url', 'text')
        .addColumn('webhook_secret', 'text')
        .addColumn('webhook_disabled', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('rate_limit_per_minute', 'integer')
        .addColumn('created_at', ms, (c) => c.notNull())
        .addColumn('updated_at', ms, (c) => c.notNull())
        .execute();

      await withId(db.schema.createTable('users'), dialect)
        .addColumn('user_id', 'text', (c) => c.notNull().unique())
        .addColumn('email', 'text', (c) => c.notNull().unique())
        .addColumn('email_md5', 'text', (c) => c.notNull().unique())
        .addColumn('email_sha256', 'text', (c) => c.notNull().unique())
        .addColumn('password_hash', 'text', (c) => c.notNull())
        .addColumn('opted_in', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('discoverable', 'integer', (c) => c.notNull().defaultTo(1))
        .addColumn('pro', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('nickname', 'text')
        .addColumn('first_name', 'text')
        .addColumn('last_name', 'text')
        .addColumn('street', 'text')
        .addColumn('city', 'text')
        .addColumn('region', 'text')
        .addColumn('country', 'text')
        .addColumn('bio', 'text')
        .addColumn('public_fields', 'text', (c) => c.notNull().defaultTo('[]'))
        .addColumn('created_at', ms, (c) => c.notNull())
        .addColumn('updated_at', ms, (c) => c.notNull())
        .execute();

      await withId(db.schema.createTable('subjects'), dialect)
        .addColumn('email_md5', 'text', (c) => c.unique())
        .addColumn('email_sha256', 'text', (c) => c.unique())
        .addColumn('handle', 'text', (c) => c.unique())
        .addColumn('user_ref', 'integer', (c) => c.unique().references('users.id').onDelete('set null'))
        .addColumn('created_at', ms, (c) => c.notNull())
        .execute();

      await db.schema
        .createTable('services')
        .addColumn('svc_id', 'text', (c) => c.primaryKey())
        .addColumn('svc_name', 'text', (c) => c.notNull())
        .addColumn('sort_name', 'text', (c) => c.notNull())
        .addColumn('svc_url', 'text', (c) => c.notNull())
        .addColumn('left_url', 'text', (c) => c.notNull())
        .addColumn('right_url', 'text', (c) => c.notNull())
        .addColumn('mobile_url', 'text', (c) => c.notNull())
        .addColumn('iphone_url', 'text', (c) => c.notNull())
        .addColumn('favicon', 'text', (c) => c.notNull())
        .addColumn('icon', 'text', (c) => c.notNull())
        .addColumn('iphone_icon', 'text', (c) => c.notNull())
        .addColumn('regex_check', 'text')
        .addColumn('url_builder', 'text')
        .addColumn('disabled', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('updated_at', ms, (c) => c.notNull())
        .execute();

      await withId(db.schema.createTable('central_identities'), dialect)
        .addColumn('user_ref', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
        .addColumn('svc_id', 'text', (c) => c.notNull())
        .addColumn('usr_svc_id', 'text', (c) => c.notNull())
        .addColumn('usr_svc_id_norm', 'text', (c) => c.notNull())
        .addColumn('verified', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('verified_by', 'text')
        .addColumn('verified_at', ms)
        .addColumn('last_checked_at', ms)
        .addColumn('source_partner_id', 'integer', (c) => c.references('partners.id').onDelete('set null'))
        .addColumn('created_at', ms, (c) => c.notNull())
        .addColumn('updated_at', ms, (c) => c.notNull())
        .addUniqueConstraint('central_identities_user_svc', ['user_ref', 'svc_id'])
        .execute();
      await db.schema.createIndex('central_identities_reverse').on('central_identities').columns(['svc_id', 'usr_svc_id_norm']).execute();
      await db.schema.createIndex('central_identities_recheck').on('central_identities').columns(['last_checked_at']).execute();

      await withId(db.schema.createTable('partner_identities'), dialect)
        .addColumn('partner_id', 'integer', (c) => c.notNull().references('partners.id').onDelete('cascade'))
        .addColumn('subject_id', 'integer', (c) => c.notNull().references('subjects.id').onDelete('cascade'))
        .addColumn('svc_id', 'text', (c) => c.notNull())
        .addColumn('usr_svc_id', 'text', (c) => c.notNull())
        .addColumn('created_at', ms, (c) => c.notNull())
        .addColumn('updated_at', ms, (c) => c.notNull())
        .addUniqueConstraint('partner_identities_partner_subject_svc', ['partner_id', 'subject_id', 'svc_id'])
        .execute();
      await db.schema.createIndex('partner_identities_subject').on('partner_identities').columns(['subject_id']).execute();

      await withId(db.schema.createTable('links'), dialect)
        .addColumn('partner_id', 'integer', (c) => c.notNull().references('partners.id').onDelete('cascade'))
        .addColumn('subject_id', 'integer', (c) => c.notNull().references('subjects.id').onDelete('cascade'))
        .addColumn('user_ref', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
        .addColumn('user_identifier', 'text', (c) => c.notNull())
        .addColumn('created_at', ms, (c) => c.notNull())
        .addUniqueConstraint('links_partner_subject', ['partner_id', 'subject_id'])
        .execute();
      await db.schema.createIndex('links_user').on('links').columns(['user_ref', 'partner_id']).execute();

      await withId(db.schema.createTable('outbox'), dialect)
        .addColumn('event_id', 'text', (c) => c.notNull().unique())
        .addColumn('partner_id', 'integer', (c) => c.notNull().references('partners.id').onDelete('cascade'))
        .addColumn('user_ref', 'integer')
        .addColumn('event_type', 'text', (c) => c.notNull())
        .addColumn('payload', 'text', (c) => c.notNull())
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('next_attempt_at', ms, (c) => c.notNull())
        .addColumn('locked_until', ms)
        .addColumn('last_error', 'text')
        .addColumn('delivered_at', ms)
        .addColumn('created_at', ms, (c) => c.notNull())
        .execute();
      await db.schema.createIndex('outbox_due').on('outbox').columns(['status', 'next_attempt_at']).execute();

      await withId(db.schema.createTable('verification_attempts'), dialect)
        .addColumn('identity_id', 'integer', (c) => c.notNull())
        .addColumn('user_ref', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
        .addColumn('svc_id', 'text', (c) => c.notNull())
        .addColumn('url', 'text', (c) => c.notNull())
        .addColumn('outcome', 'text', (c) => c.notNull())
        .addColumn('detail', 'text', (c) => c.notNull())
        .addColumn('attempted_at', ms, (c) => c.notNull())
        .execute();
      await db.schema.createIndex('verification_attempts_identity').on('verification_attempts').columns(['identity_id', 'attempted_at']).execute();

      await db.schema
        .createTable('sessions')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('user_ref', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
        .addColumn('csrf_token', 'text', (c) => c.notNull())
        .addColumn('created_at', ms, (c) => c.notNull())
        .addColumn('expires_at', ms, (c) => c.notNull())
        .execute();

      await db.schema
        .createTable('throttles')
        .addColumn('key', 'text', (c) => c.primaryKey())
        .addColumn('count', 'integer', (c) => c.notNull())
        .addColumn('expires_at', ms, (c) => c.notNull())
        .execute();

      await db.schema
        .createTable('settings')
        .addColumn('key', 'text', (c) => c.primaryKey())
        .addColumn('value', 'text', (c) => c.notNull())
        .execute();
    },
    async down(): Promise<void> {
      throw new Error('the initial migration cannot be reverted');
    },
  };
}

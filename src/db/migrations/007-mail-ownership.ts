// Outgoing mail goes through a queue in the database (sent by the mail job, src/jobs/mail.ts), so a
// request never waits for SMTP and an SMTP outage delays mail without losing any.
//
// Proof of e-mail ownership: `users.opted_in` stays the *effective* visibility that every query,
// prepared statement and popularity trigger already reads (consent AND a proven address); the
// user's own choice moves to `users.consented`, and `users.email_proven_at` records the proof.
// Accounts that exist when this runs predate the rule: they count as proven (at their creation).
// Single-use links live in `email_tokens`, stored only as SHA-256 hashes.
import { sql, type CreateTableBuilder, type Kysely } from 'kysely';
import type { DialectName } from '../handle.js';

function withId<T extends string>(t: CreateTableBuilder<T, never>, dialect: DialectName): CreateTableBuilder<T, 'id'> {
  return dialect === 'postgres' ? t.addColumn('id', 'bigserial', (c) => c.primaryKey()) : t.addColumn('id', 'integer', (c) => c.primaryKey().autoIncrement());
}

export function mailOwnershipMigration(dialect: DialectName) {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      const ms = 'bigint';
      await withId(db.schema.createTable('mail_queue'), dialect)
        .addColumn('message_id', 'text', (c) => c.notNull().unique())
        .addColumn('kind', 'text', (c) => c.notNull())
        .addColumn('to_address', 'text', (c) => c.notNull())
        .addColumn('subject', 'text', (c) => c.notNull())
        // The bodies may hold single-use links: emptied once the message is sent.
        .addColumn('text_body', 'text')
        .addColumn('html_body', 'text')
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('next_attempt_at', ms, (c) => c.notNull())
        .addColumn('locked_until', ms)
        .addColumn('last_error', 'text')
        .addColumn('sent_at', ms)
        .addColumn('created_at', ms, (c) => c.notNull())
        .execute();
      await db.schema.createIndex('mail_queue_due').on('mail_queue').columns(['status', 'next_attempt_at']).execute();

      await db.schema.alterTable('users').addColumn('email_proven_at', ms).execute();
      await db.schema
        .alterTable('users')
        .addColumn('consented', 'integer', (c) => c.notNull().defaultTo(0))
        .execute();
      // Not an UPDATE OF opted_in: the popularity triggers (migration 005) have nothing to do here.
      await sql`UPDATE users SET email_proven_at = created_at, consented = opted_in`.execute(db);
      await db.schema.createIndex('users_unproven').on('users').columns(['email_proven_at', 'created_at']).execute();

      await withId(db.schema.createTable('email_tokens'), dialect)
        .addColumn('token_hash', 'text', (c) => c.notNull().unique())
        // 'confirm' (a new account's address), 'claim' (a sign-up for an address an unproven account holds), 'reset' (a forgotten password)
        .addColumn('purpose', 'text', (c) => c.notNull())
        .addColumn('user_ref', 'integer', (c) => c.references('users.id').onDelete('cascade'))
        // The address the link was sent to: following the link proves it.
        .addColumn('email', 'text', (c) => c.notNull())
        // A claim's sign-up, made into an account when the link is followed.
        .addColumn('new_user_id', 'text')
        .addColumn('password_hash', 'text')
        .addColumn('consented', 'integer')
        .addColumn('created_at', ms, (c) => c.notNull())
        .addColumn('expires_at', ms, (c) => c.notNull())
        .addColumn('used_at', ms)
        .execute();
      await db.schema.createIndex('email_tokens_user').on('email_tokens').columns(['user_ref']).execute();
      await db.schema.createIndex('email_tokens_expiry').on('email_tokens').columns(['expires_at']).execute();
    },
    async down(db: Kysely<unknown>): Promise<void> {
      await db.schema.dropTable('email_tokens').ifExists().execute();
      await db.schema.dropIndex('users_unproven').ifExists().execute();
      await db.schema.alterTable('users').dropColumn('consented').execute();
      await db.schema.alterTable('users').dropColumn('email_proven_at').execute();
      await db.schema.dropTable('mail_queue').ifExists().execute();
    },
  };
}

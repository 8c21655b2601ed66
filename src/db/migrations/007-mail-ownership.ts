// Outgoing mail goes through a queue in the database (sent by the mail job, src/jobs/mail.ts), so a
// request never waits for SMTP and an SMTP outage delays mail without losing any.
import type { CreateTableBuilder, Kysely } from 'kysely';
import type { DialectName } from '../database.js';

function withId<T extends string>(t: CreateTableBuilder<T, never>, dialect: DialectName): CreateTableBuilder<T, 'id'> {
  return dialect === 'postgres'
    ? t.addColumn('id', 'bigserial', (c) => c.primaryKey())
    : t.addColumn('id', 'integer', (c) => c.primaryKey().autoIncrement());
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
    },
    async down(db: Kysely<unknown>): Promise<void> {
      await db.schema.dropTable('mail_queue').ifExists().execute();
    },
  };
}

// Partner usage in hourly buckets: one row per partner, hour and API operation, with the answers
// by status class and the highest use of the key's two rate-limit budgets seen in that hour.
// Servers add their counts in batches (services/usage-counter.ts); rows older than the dashboard
// shows are pruned (jobs/usage-prune.ts).
import type { Kysely } from 'kysely';

export function partnerUsageMigration() {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      let table = db.schema
        .createTable('partner_usage')
        .addColumn('partner_id', 'integer', (c) => c.notNull().references('partners.id').onDelete('cascade'))
        .addColumn('hour_start', 'bigint', (c) => c.notNull())
        .addColumn('operation', 'text', (c) => c.notNull());
      for (const column of [
        'status_2xx',
        'status_3xx',
        'status_4xx',
        'status_429',
        'status_5xx',
        'proven_peak',
        'proven_limit',
        'unproven_peak',
        'unproven_limit',
      ]) {
        table = table.addColumn(column, 'bigint', (c) => c.notNull().defaultTo(0));
      }
      await table.addPrimaryKeyConstraint('partner_usage_pk', ['partner_id', 'hour_start', 'operation']).execute();
      // Pruning deletes by age across partners.
      await db.schema.createIndex('partner_usage_hour').on('partner_usage').column('hour_start').execute();
    },
    async down(db: Kysely<unknown>): Promise<void> {
      await db.schema.dropTable('partner_usage').execute();
    },
  };
}

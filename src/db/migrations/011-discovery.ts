// "Find my identities": a discovery run per request, every page it fetched or
// found (the fetch recorded like a verification attempt, then what the page was recognised as),
// and the pages proven to be a user's own (a homepage linking to /u/{userId}), which later rel="me"
// checks accept as a target beside the profile page (transitive rel="me").
import type { Kysely } from 'kysely';

type Dialect = 'sqlite' | 'postgres';

export function discoveryMigration(dialect: Dialect) {
  const id = dialect === 'postgres' ? ('bigserial' as const) : ('integer' as const);
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .createTable('discovery_runs')
        .addColumn('id', id, (c) => (dialect === 'postgres' ? c.primaryKey() : c.primaryKey().autoIncrement()))
        .addColumn('user_ref', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
        .addColumn('start_url', 'text', (c) => c.notNull())
        .addColumn('status', 'text', (c) => c.notNull()) // 'queued' | 'running' | 'done'
        .addColumn('pages_fetched', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('stopped_by', 'text') // 'page_limit' | 'time_limit' when the crawl did not finish
        .addColumn('lease_until', 'bigint')
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('finished_at', 'bigint')
        .execute();
      await db.schema.createIndex('discovery_runs_user').on('discovery_runs').columns(['user_ref', 'id']).execute();
      await db.schema.createIndex('discovery_runs_due').on('discovery_runs').columns(['status', 'lease_until']).execute();

      await db.schema
        .createTable('discovery_pages')
        .addColumn('id', id, (c) => (dialect === 'postgres' ? c.primaryKey() : c.primaryKey().autoIncrement()))
        .addColumn('run_id', 'integer', (c) => c.notNull().references('discovery_runs.id').onDelete('cascade'))
        .addColumn('user_ref', 'integer', (c) => c.notNull())
        .addColumn('url', 'text', (c) => c.notNull())
        .addColumn('final_url', 'text')
        .addColumn('depth', 'integer', (c) => c.notNull())
        .addColumn('via_url', 'text')
        .addColumn('fetched', 'integer', (c) => c.notNull()) // 0 | 1
        .addColumn('outcome', 'text', (c) => c.notNull()) // 'fetched' | 'unreachable' | 'not_fetched'
        .addColumn('detail', 'text', (c) => c.notNull())
        .addColumn('kind', 'text') // 'identity' | 'ambiguous' | 'homepage' once the run is done
        .addColumn('svc_id', 'text')
        .addColumn('usr_svc_id', 'text')
        .addColumn('links_back', 'integer', (c) => c.notNull().defaultTo(0)) // 0 | 1
        .addColumn('fetched_at', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('discovery_pages_run').on('discovery_pages').columns(['run_id', 'id']).execute();

      await db.schema
        .createTable('verified_pages')
        .addColumn('user_ref', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
        .addColumn('url', 'text', (c) => c.notNull())
        .addColumn('verified_at', 'bigint', (c) => c.notNull())
        .addPrimaryKeyConstraint('verified_pages_pk', ['user_ref', 'url'])
        .execute();
    },
    async down(db: Kysely<unknown>): Promise<void> {
      await db.schema.dropTable('verified_pages').execute();
      await db.schema.dropTable('discovery_pages').execute();
      await db.schema.dropTable('discovery_runs').execute();
    },
  };
}

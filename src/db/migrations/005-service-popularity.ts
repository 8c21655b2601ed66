// Popularity (SPEC §4.2: opted-in users with the service) as a counter per service, kept exact by
// triggers instead of counted on demand. Counting meant joining every central identity with its
// user, work that grows with the largest table, run on SQLite on the event loop once a minute by the first widget load
// or service_details/popularity call, and a full scan of the largest table on PostgreSQL. The
// triggers fire whoever writes (this server, the CLI, another instance, an operator's shell), so the
// counts are right for all of them; reading them is one small table.
//
// What moves a count: a central identity added, removed or moved (to another user or service)
// while its user is opted in; a user opting in or out (every service of theirs, by one); an opted-in
// user deleted (their entries, before any cascade removes them; the cascade's own deletes then find
// no user and change nothing).
import { sql, type Kysely } from 'kysely';
import type { DialectName } from '../handle.js';

const SQLITE_TRIGGERS = {
  popularity_entry_added: `AFTER INSERT ON central_identities WHEN (SELECT opted_in FROM users WHERE id = NEW.user_ref) = 1
    BEGIN INSERT INTO service_popularity (svc_id, user_count) VALUES (NEW.svc_id, 1) ON CONFLICT (svc_id) DO UPDATE SET user_count = user_count + 1; END`,
  popularity_entry_removed: `AFTER DELETE ON central_identities WHEN (SELECT opted_in FROM users WHERE id = OLD.user_ref) = 1
    BEGIN UPDATE service_popularity SET user_count = user_count - 1 WHERE svc_id = OLD.svc_id; END`,
  popularity_entry_moved: `AFTER UPDATE OF user_ref, svc_id ON central_identities
    BEGIN
      UPDATE service_popularity SET user_count = user_count - 1 WHERE svc_id = OLD.svc_id AND (SELECT opted_in FROM users WHERE id = OLD.user_ref) = 1;
      INSERT INTO service_popularity (svc_id, user_count) SELECT NEW.svc_id, 1 WHERE (SELECT opted_in FROM users WHERE id = NEW.user_ref) = 1
        ON CONFLICT (svc_id) DO UPDATE SET user_count = user_count + 1;
    END`,
  popularity_user_opted: `AFTER UPDATE OF opted_in ON users WHEN OLD.opted_in IS NOT NEW.opted_in AND (OLD.opted_in = 1 OR NEW.opted_in = 1)
    BEGIN
      INSERT INTO service_popularity (svc_id, user_count) SELECT svc_id, CASE WHEN NEW.opted_in = 1 THEN 1 ELSE -1 END FROM central_identities WHERE user_ref = NEW.id
        ON CONFLICT (svc_id) DO UPDATE SET user_count = user_count + excluded.user_count;
    END`,
  popularity_user_deleted: `BEFORE DELETE ON users WHEN OLD.opted_in = 1
    BEGIN UPDATE service_popularity SET user_count = user_count - 1 WHERE svc_id IN (SELECT svc_id FROM central_identities WHERE user_ref = OLD.id); END`,
} as const;

/** The counts from scratch: what the triggers keep up to date (the migration's starting point, and the tests' reference). */
export const COUNT_POPULARITY =
  'SELECT ci.svc_id AS svc_id, count(*) AS user_count FROM central_identities ci JOIN users u ON u.id = ci.user_ref WHERE u.opted_in = 1 GROUP BY ci.svc_id';

export function servicePopularityMigration(dialect: DialectName) {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await sql`CREATE TABLE service_popularity (svc_id TEXT PRIMARY KEY, user_count BIGINT NOT NULL)`.execute(db);
      await sql.raw(`INSERT INTO service_popularity (svc_id, user_count) ${COUNT_POPULARITY}`).execute(db);
      if (dialect === 'sqlite') {
        for (const [name, body] of Object.entries(SQLITE_TRIGGERS)) await sql.raw(`CREATE TRIGGER ${name} ${body}`).execute(db);
        return;
      }
      // One row-level function per table; unqualified names resolve through the session's
      // search_path, like every other statement of the service.
      await sql`CREATE OR REPLACE FUNCTION idsvc_popularity_entry() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
          IF TG_OP IN ('UPDATE', 'DELETE') AND EXISTS (SELECT 1 FROM users WHERE id = OLD.user_ref AND opted_in = 1) THEN
            UPDATE service_popularity SET user_count = user_count - 1 WHERE svc_id = OLD.svc_id;
          END IF;
          IF TG_OP IN ('UPDATE', 'INSERT') AND EXISTS (SELECT 1 FROM users WHERE id = NEW.user_ref AND opted_in = 1) THEN
            INSERT INTO service_popularity (svc_id, user_count) VALUES (NEW.svc_id, 1)
              ON CONFLICT (svc_id) DO UPDATE SET user_count = service_popularity.user_count + 1;
          END IF;
          RETURN NULL;
        END $$`.execute(db);
      await sql`CREATE TRIGGER popularity_entry AFTER INSERT OR DELETE OR UPDATE OF user_ref, svc_id ON central_identities
        FOR EACH ROW EXECUTE FUNCTION idsvc_popularity_entry()`.execute(db);
      // In svc_id order, so two opt-in changes never take the same counters in opposite orders.
      await sql`CREATE OR REPLACE FUNCTION idsvc_popularity_user() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
          IF TG_OP = 'DELETE' THEN
            UPDATE service_popularity p SET user_count = p.user_count - 1
              FROM (SELECT svc_id FROM central_identities WHERE user_ref = OLD.id ORDER BY svc_id) e WHERE p.svc_id = e.svc_id;
            RETURN OLD;
          END IF;
          INSERT INTO service_popularity (svc_id, user_count)
            SELECT svc_id, CASE WHEN NEW.opted_in = 1 THEN 1 ELSE -1 END FROM central_identities WHERE user_ref = NEW.id ORDER BY svc_id
            ON CONFLICT (svc_id) DO UPDATE SET user_count = service_popularity.user_count + excluded.user_count;
          RETURN NULL;
        END $$`.execute(db);
      await sql`CREATE TRIGGER popularity_user_opted AFTER UPDATE OF opted_in ON users
        FOR EACH ROW WHEN (OLD.opted_in IS DISTINCT FROM NEW.opted_in AND (OLD.opted_in = 1 OR NEW.opted_in = 1))
        EXECUTE FUNCTION idsvc_popularity_user()`.execute(db);
      await sql`CREATE TRIGGER popularity_user_deleted BEFORE DELETE ON users
        FOR EACH ROW WHEN (OLD.opted_in = 1) EXECUTE FUNCTION idsvc_popularity_user()`.execute(db);
    },
    async down(db: Kysely<unknown>): Promise<void> {
      if (dialect === 'sqlite') {
        for (const name of Object.keys(SQLITE_TRIGGERS)) await sql.raw(`DROP TRIGGER IF EXISTS ${name}`).execute(db);
      } else {
        await sql`DROP TRIGGER IF EXISTS popularity_entry ON central_identities`.execute(db);
        await sql`DROP TRIGGER IF EXISTS popularity_user_opted ON users`.execute(db);
        await sql`DROP TRIGGER IF EXISTS popularity_user_deleted ON users`.execute(db);
        await sql`DROP FUNCTION IF EXISTS idsvc_popularity_entry()`.execute(db);
        await sql`DROP FUNCTION IF EXISTS idsvc_popularity_user()`.execute(db);
      }
      await sql`DROP TABLE IF EXISTS service_popularity`.execute(db);
    },
  };
}

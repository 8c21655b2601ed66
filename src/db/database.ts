// The database handle over either dialect (db/handle.ts): its connections, its reads and its one
// way to write. Dialect differences live here, in db/ and in the repositories only.
import { EventEmitter } from 'node:events';
import fs from 'node:fs';
import path from 'node:path';
import SQLite from 'better-sqlite3';
import pg from 'pg';
import { Kysely, Migrator, SqliteDialect, sql } from 'kysely';
import type { Database } from './schema.js';
import { withStatementCache } from './statement-cache.js';
import { GroupCommit } from './group-commit.js';
import type { Connections, Db, Params, Statement } from './handle.js';
import { migrationsFor } from './migrations/index.js';
import { createPgPool } from './pg-pool.js';
import { OwnSchemaPostgresDialect } from './pg-introspector.js';
import { ReplicaSet } from './replicas.js';

export type { Db } from './handle.js';

// BIGINT columns hold millisecond times and ids; they fit in a double, so read them as numbers.
pg.types.setTypeParser(20, (v) => Number(v));

/** The writer's map: 2 GiB, which SQLite clamps to its build's maximum (SQLITE_MAX_MMAP_SIZE, 0x7fff0000); the benchmark's work ceiling maps its one connection alike. */
export const MMAP_SIZE = 2 * 1024 ** 3;

/** The default of DATABASE_TIMEOUT_MS (src/config.ts). */
export const DATABASE_TIMEOUT_MS = 5000;

export interface OpenOptions {
  /** PostgreSQL schema to use (tests isolate themselves this way); created when missing. */
  pgSchema?: string;
  /** PostgreSQL: the longest wait for a connection or a statement's answer (db/pg-pool.ts); 0 waits for ever. */
  timeoutMs?: number;
  /** PostgreSQL read replicas (DATABASE_READ_URL), for the reads that may be slightly behind. */
  readUrls?: readonly string[];
  /** How far behind (ms) a replica may be and still take reads (DATABASE_READ_MAX_LAG_MS). */
  replicaMaxLagMs?: number;
  /** How often (ms) the replicas are checked. */
  replicaCheckMs?: number;
  /**
   * SQLite: other processes commit to this file all the time (the workers of `serve --workers`), so
   * reads keep to the query_only reader: each foreign commit makes the writer drop its memory map.
   */
  otherWriters?: boolean;
}

/** The default of DATABASE_READ_MAX_LAG_MS (src/config.ts). */
export const REPLICA_MAX_LAG_MS = 5000;
const REPLICA_CHECK_MS = 1000;

/**
 * A new SQLite database file (and its directory) readable by its owner only: it holds password
 * hashes and tokens. SQLite gives the -wal and -shm files beside it the database file's mode. An
 * existing file keeps the mode its owner gave it.
 */
function createPrivately(file: string): void {
  fs.mkdirSync(path.dirname(path.resolve(file)), { recursive: true, mode: 0o700 });
  try {
    fs.closeSync(fs.openSync(file, 'wx', 0o600));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  }
}

/**
 * Drops sqlite_stat4, which an ANALYZE (or PRAGMA optimize) fills in this build of SQLite
 * (SQLITE_ENABLE_STAT4). With its samples present, the planner weighs each bound value, so every
 * statement that looks a value up in an index is prepared again each time it runs with another
 * one: all the hot reads. They are lookups of one value in a unique or selective index, which the
 * samples cannot improve. sqlite_stat1 (row counts per index) stays. Dropping the table, rather
 * than emptying it, changes the schema's version, so every connection already open (a running
 * server's, when the CLI opens the file) reloads its statistics without the samples.
 */
function dropStat4Samples(raw: SQLite.Database): void {
  const tableExists = raw.prepare("SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = 'sqlite_stat4'").get() !== undefined;
  if (!tableExists) return;
  try {
    raw.exec('DROP TABLE sqlite_stat4');
  } catch {
    // Only speed depends on it: a database another process holds locked for longer than
    // busy_timeout, or a read-only file, still opens, and the next open tries again.
  }
}

export async function openDatabase(url: string, options: OpenOptions = {}): Promise<Db> {
  if (url.startsWith('sqlite:')) {
    const file = url.slice('sqlite:'.length);
    if (file !== ':memory:') createPrivately(file);
    const raw = new SQLite(file);
    // WAL lets readers run beside the single writer (the server and the CLI at once); FULL
    // synchronous makes each commit durable across power loss, not just a process crash;
    // busy_timeout makes the CLI and the server wait for each other instead of failing.
    // mmap_size: the writer's reads come straight from the OS page cache instead of being copied
    // into SQLite's own (anonymous, per-connection) cache; 2 GiB is the most this build maps.
    raw.pragma('journal_mode = WAL');
    raw.pragma('synchronous = FULL');
    raw.pragma('busy_timeout = 5000');
    raw.pragma('foreign_keys = ON');
    raw.pragma(`mmap_size = ${MMAP_SIZE}`);
    // Checkpoints (copying the WAL back into the database file) every 8,000 pages, 32 MB, instead
    // of SQLite's 1,000: each one writes its pages at random places in the file and fsyncs it, on
    // the event loop (better-sqlite3 is synchronous), and with many users few of those pages repeat
    // between checkpoints, so fewer, larger ones cost the writer less (docs/performance.md). The
    // WAL file is cut back to 64 MB when it has grown past that.
    raw.pragma('wal_autocheckpoint = 8000');
    raw.pragma(`journal_size_limit = ${64 * 1024 * 1024}`);
    // The writer's temporary files in memory: under WAL, each savepoint a group commit opens per
    // write, and each statement that may fail halfway, keeps the pages it changes in a sub-journal
    // so that it can be rolled back alone. On disk that is a file created, written page by page and
    // deleted for nearly every commit (system calls the pushes paid for, not durability: a crash
    // is recovered from the WAL alone). Those journals hold a transaction's changed pages, a few
    // hundred kilobytes for a full group commit. What else this connection now keeps in memory
    // rather than in a temporary file: the hourly sweeps' journals (an hour's expiries), and its
    // largest DISTINCT, a partner dashboard's count of linked people (an integer a person, while
    // it runs).
    raw.pragma('temp_store = MEMORY');
    dropStat4Samples(raw);
    // Reads outside a write run on this connection whenever it has no transaction open
    // (db/prepared.ts, readConnection): its own commits leave its map and its page cache in place,
    // so a lookup reads mapped pages without a system call. While a write is under way, and always
    // in the workers of `serve --workers` (each other worker's commit would make this connection
    // drop its whole map, then fault back every page a lookup touches), they use a second,
    // query_only connection: under WAL it reads the last committed state without waiting for the
    // writer's open transaction (Kysely's one connection is a mutex). That one maps nothing: a
    // connection that sees another one's commit drops its whole memory map, and the next read pays
    // for unmapping every page the lookups had touched (up to the whole file) and then faults them
    // back in one by one; reading pages by system call costs each lookup a little instead
    // (docs/performance.md). Its page cache is emptied by the same commits, and lookups spread over
    // the whole file seldom read a page twice, so a small one (2 MB, for the trees' upper levels)
    // serves as well as this build's default of 16 MB, in less private memory.
    let reader: SQLite.Database = raw;
    if (file !== ':memory:') {
      reader = new SQLite(file);
      reader.pragma('busy_timeout = 5000');
      reader.pragma('mmap_size = 0');
      reader.pragma('cache_size = -2000');
      reader.pragma('query_only = ON');
    }
    const kysely = new Kysely<Database>({ dialect: new SqliteDialect({ database: withStatementCache(raw) }) });
    return handleOver(
      kysely,
      { dialect: 'sqlite', sqlite: raw, reader, readsOnWriter: reader !== raw && options.otherWriters !== true, pgPool: null, pgFeedPool: null },
      null,
      new EventEmitter(),
      (fn) => fn(),
      null,
      async () => {
        await kysely.destroy();
        if (reader !== raw) reader.close();
      },
    );
  }
  const schema = options.pgSchema;
  if (schema && !/^[a-z_][a-z0-9_]{0,62}$/.test(schema)) throw new Error('invalid PostgreSQL schema name');
  const timeoutMs = options.timeoutMs ?? DATABASE_TIMEOUT_MS;
  if (schema) {
    const admin = new pg.Client({ connectionString: url, ...(timeoutMs > 0 ? { connectionTimeoutMillis: timeoutMs } : {}) });
    admin.on('error', () => {}); // a loss is reported by the queries below
    try {
      await admin.connect();
      await admin.query(`CREATE SCHEMA IF NOT EXISTS ${schema}`);
    } finally {
      await admin.end().catch(() => {});
    }
  }
  const events = new EventEmitter();
  const bounded = createPgPool({ connectionString: url, ...(schema ? { schema } : {}), timeoutMs, events });
  // Same timeouts and loss handling as the pool; opened on the first reading, so a CLI command that reads no feed opens none.
  const feed = createPgPool({ connectionString: url, ...(schema ? { schema } : {}), timeoutMs, events, max: 1 });
  const kysely = new Kysely<Database>({ dialect: new OwnSchemaPostgresDialect({ pool: bounded.forKysely }) });
  const conns: Connections = { dialect: 'postgres', sqlite: null, reader: null, readsOnWriter: false, pgPool: bounded.pool, pgFeedPool: feed.pool };
  const replicasOf = (primary: Db) =>
    options.readUrls && options.readUrls.length > 0
      ? new ReplicaSet(options.readUrls, primary, bounded.forKysely, {
          maxLagMs: options.replicaMaxLagMs ?? REPLICA_MAX_LAG_MS,
          checkEveryMs: options.replicaCheckMs ?? REPLICA_CHECK_MS,
          timeoutMs,
          events,
          ...(schema ? { schema } : {}),
        })
      : null;
  return handleOver(kysely, conns, schema ?? null, events, bounded.unbounded, replicasOf, async () => {
    await Promise.all([kysely.destroy(), feed.pool.end()]);
  });
}

/**
 * The database as a handle: reads on its own connections (the reader on SQLite, the pool on
 * PostgreSQL) and writes through group commit, which on PostgreSQL is a transaction per write.
 * The methods are made once here, so a read costs no object of its own.
 */
function handleOver(
  kysely: Kysely<Database>,
  conns: Connections,
  pgSchema: string | null,
  events: EventEmitter,
  unbounded: Db['unbounded'],
  replicasOf: ((primary: Db) => ReplicaSet | null) | null,
  close: () => Promise<void>,
): Db {
  const commits = new GroupCommit(conns, kysely);
  const written = () => events.emit('written');
  let replicas: ReplicaSet | null = null;
  const db: Db = {
    ...conns,
    kysely,
    pgSchema,
    events,
    unbounded,
    async close() {
      await replicas?.close();
      await close();
    },
    get: <Row>(s: Statement<Row>, ...params: Params) => s.get(conns, ...params),
    all: <Row>(s: Statement<Row>, ...params: Params) => s.all(conns, ...params),
    write: (work) => commits.run(work).finally(written),
    writeAlone: conns.pgPool
      ? <Row extends pg.QueryResultRow>(statement: { name: string; text: string }, values: unknown[]) =>
          conns
            .pgPool!.query<Row>({ ...statement, values })
            .finally(written)
            .then((result) => result.rows)
      : null,
    behind: () => (replicas ? replicas.forReads() : db),
    replicaStatus: () => replicas?.status() ?? [],
  };
  replicas = replicasOf?.(db) ?? null;
  replicas?.start();
  return db;
}

export async function migrate(db: Db): Promise<void> {
  const migrations = migrationsFor(db.dialect);
  const migrator = new Migrator({
    db: db.kysely,
    provider: { getMigrations: async () => migrations },
    // The migrator's own tables, named with our schema in every statement it sends.
    ...(db.pgSchema ? { migrationTableSchema: db.pgSchema } : {}),
  });
  // A migration may scan a whole table once (005 takes seconds at a million users): no timeout.
  const { error, results } = await db.unbounded(() => migrator.migrateToLatest());
  if (!error) return;
  const failed = results?.find((r) => r.status === 'Error');
  throw new Error(`migration ${failed?.migrationName ?? '?'} failed: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
}

/**
 * Whether the database answers `select 1` within `withinMs`. A load balancer's probe needs its
 * answer quickly: during a stall the statement itself may wait up to DATABASE_TIMEOUT_MS (it is
 * left to finish or time out in the pool), but the probe is told "no" when `withinMs` is up.
 */
export async function isReachable(db: Db, withinMs: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<false>((resolve) => {
    timer = setTimeout(resolve, withinMs, false);
  });
  const answered = sql`select 1`.execute(db.kysely).then(
    () => true,
    () => false,
  );
  try {
    return await Promise.race([answered, late]);
  } finally {
    clearTimeout(timer);
  }
}

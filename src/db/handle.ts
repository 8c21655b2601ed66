// The database as the code above src/db/ sees it: one handle for reads (`Db`, the database itself)
// and one way to write (`db.write(work)`: group commit on SQLite, a pooled transaction on
// PostgreSQL), whose work gets a `Write`. Every repository function takes one of them first: a
// `Handle` when it only reads (the database, or a write's handle so that it reads what the write
// has written), a `Write` when it writes, so a write outside `db.write` does not compile. Only
// src/db/ and the repositories look inside: the query builder (`kysely`) and the prepared
// statements (`get`, `all`, `run`, see db/prepared.ts).
import type { EventEmitter } from 'node:events';
import type SQLite from 'better-sqlite3';
import type pg from 'pg';
import type { Kysely, Transaction } from 'kysely';
import type { Database } from './schema.js';

export type DialectName = 'sqlite' | 'postgres';

export type Params = readonly (string | number | null)[];

/** The connections a prepared statement may run on. */
export interface Connections {
  readonly dialect: DialectName;
  /** The raw better-sqlite3 handle (Kysely's one connection, the writer). */
  readonly sqlite: SQLite.Database | null;
  /** SQLite only: a second connection for reads made while the writer has a transaction open (see db/prepared.ts). */
  readonly reader: SQLite.Database | null;
  /**
   * SQLite only: whether reads outside a write may run on the writer while it has no transaction
   * open. Not where other processes commit all the time (`serve --workers`): each of their commits
   * makes the writer drop its memory map before its next read (see db/database.ts).
   */
  readonly readsOnWriter: boolean;
  readonly pgPool: pg.Pool | null;
  /**
   * PostgreSQL only: one connection of its own for the change feed's readings (services/change-feed.ts).
   * A reading gates every lookup answered from memory; in the shared pool it would queue behind the
   * statements of the very requests it lets through, so under load each lookup from memory would
   * pay the pool's queue once or twice before its own.
   */
  readonly pgFeedPool: pg.Pool | null;
}

/** A statement written once as SQL text and prepared once per connection (db/prepared.ts). */
export interface Statement<Row> {
  /** All rows, outside any transaction. */
  all(db: Connections, ...params: Params): Promise<Row[]>;
  /** The first row, outside any transaction. */
  get(db: Connections, ...params: Params): Promise<Row | undefined>;
  /** All rows, on a transaction's connection. */
  allIn(db: Connections, tx: Transaction<Database>, ...params: Params): Promise<Row[]>;
  getIn(db: Connections, tx: Transaction<Database>, ...params: Params): Promise<Row | undefined>;
  /** Runs a write on a transaction's connection; the number of rows changed. */
  runIn(db: Connections, tx: Transaction<Database>, ...params: Params): Promise<number>;
}

/** What /readyz says of a replica: its address without credentials, and why it is or is not used. */
export interface ReplicaStatus {
  readonly replica: string;
  readonly state: 'unchecked' | 'ok' | 'behind' | 'down' | 'not_replica';
  /** How far behind it was at the last check (ms, an upper bound); null when it did not answer. */
  readonly lag_ms: number | null;
}

/** What a repository function reads through. */
export interface Handle {
  readonly dialect: DialectName;
  /** The query builder: on the database, or on the write's transaction. */
  readonly kysely: Kysely<Database>;
  get<Row>(s: Statement<Row>, ...params: Params): Promise<Row | undefined>;
  all<Row>(s: Statement<Row>, ...params: Params): Promise<Row[]>;
}

/** What a repository function writes through: handed to the work of `db.write`, valid until it returns. */
export interface Write extends Handle {
  readonly kysely: Transaction<Database>;
  /** Runs a prepared write; the number of rows changed. */
  run(s: Statement<unknown>, ...params: Params): Promise<number>;
}

/** The database: the read handle, and the one way to write. */
export interface Db extends Handle, Connections {
  /**
   * Runs `work` in a transaction and resolves once it is committed (durable). On SQLite concurrent
   * writes share one commit, each in a savepoint of its own (db/group-commit.ts): a failing work
   * undoes only its own changes. The work must not wait for anything but the database (no mail,
   * no hashing, no fetch) and must not call `write` again.
   */
  write<T>(work: (w: Write) => Promise<T>): Promise<T>;
  /**
   * PostgreSQL: runs one named write statement in a transaction of its own (one round trip, no
   * BEGIN/COMMIT), a write of this process like `write`'s; its rows. Null on SQLite.
   */
  readonly writeAlone: (<Row extends pg.QueryResultRow>(statement: { name: string; text: string }, values: unknown[]) => Promise<Row[]>) | null;
  /** The PostgreSQL schema in use, when one was named. */
  readonly pgSchema: string | null;
  /**
   * Emits `connection-lost` (err) when a pooled PostgreSQL connection dies (the pool replaces it on
   * demand), and `written` when a write of this process has settled (committed or not), so that
   * copies which may lag other processes still show this one's writes (services/change-feed.ts).
   */
  readonly events: EventEmitter;
  /**
   * A handle for reads that may be slightly behind (public views): a PostgreSQL read replica fit
   * for reads (db/replicas.ts), or the database itself when none is configured or fit. A caller
   * that must see its own writes reads the database itself.
   */
  behind(): Handle;
  /** What each read replica is doing, for /readyz; empty without replicas. */
  replicaStatus(): readonly ReplicaStatus[];
  /** Runs `fn` without the statement timeout (migrations). */
  unbounded<T>(fn: () => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

// Prepared statements for the hot paths (return_services, update_service, the api_key check).
// Kysely builds the SQL text and better-sqlite3 prepares it again on every call; here a statement
// is written once, with `?` placeholders, and prepared once per connection: better-sqlite3
// statements on SQLite, named (server-side prepared) statements on PostgreSQL. Everything else
// keeps using Kysely.
//
// Reads outside a transaction go to `db.reader` on SQLite, a second connection that sees only
// committed data and never waits behind the writer's open transaction (WAL). Inside a transaction
// the statement must run on that transaction's connection: pass the `tx`.
import type SQLite from 'better-sqlite3';
import { CompiledQuery, type Transaction } from 'kysely';
import type { Db } from './database.js';
import type { Database } from './schema.js';

type Params = readonly (string | number | null)[];

export interface Statement<Row> {
  /** All rows, outside any transaction. */
  all(db: Db, ...params: Params): Promise<Row[]>;
  /** The first row, outside any transaction. */
  get(db: Db, ...params: Params): Promise<Row | undefined>;
  /** All rows, on a transaction's connection. */
  allIn(db: Db, tx: Transaction<Database>, ...params: Params): Promise<Row[]>;
  getIn(db: Db, tx: Transaction<Database>, ...params: Params): Promise<Row | undefined>;
  /** Runs a write on a transaction's connection; the number of rows changed. */
  runIn(db: Db, tx: Transaction<Database>, ...params: Params): Promise<number>;
}

let counter = 0;

/** `?` placeholders become `$1, $2, …` for PostgreSQL (no statement here has a `?` in a literal). */
function toPg(text: string): string {
  let n = 0;
  return text.replace(/\?/g, () => `$${++n}`);
}

export interface StatementOptions {
  /**
   * 'array': each row is an array of the selected columns, in order (declare Row as a tuple).
   * Building a row object costs a property per column, which for a many-row answer is a good
   * part of what the query costs. The selected columns must have distinct names: inside a
   * PostgreSQL transaction the rows come from Kysely as objects and are turned into arrays.
   */
  rowMode?: 'object' | 'array';
}

export function statement<Row>(text: string, options: StatementOptions = {}): Statement<Row> {
  const name = `idsvc_${++counter}`;
  const pgText = toPg(text);
  const arrays = options.rowMode === 'array';
  const onReader = new WeakMap<SQLite.Database, SQLite.Statement>();
  const onWriter = new WeakMap<SQLite.Database, SQLite.Statement>();
  const prep = (cache: WeakMap<SQLite.Database, SQLite.Statement>, conn: SQLite.Database) => {
    let s = cache.get(conn);
    if (!s) {
      s = conn.prepare(text);
      if (arrays) s.raw(true);
      cache.set(conn, s);
    }
    return s;
  };
  const pgRows = async (db: Db, params: Params) =>
    (await db.pgPool!.query({ name, text: pgText, values: params as unknown[], ...(arrays ? { rowMode: 'array' as const } : {}) })).rows as Row[];
  const txRows = async (tx: Transaction<Database>, params: Params) => {
    const rows = (await tx.executeQuery(CompiledQuery.raw(pgText, params as unknown[]))).rows as Record<string, unknown>[];
    // Kysely gives objects; their keys keep the column order.
    return (arrays ? rows.map((r) => Object.values(r)) : rows) as Row[];
  };

  return {
    async all(db, ...params) {
      if (db.reader) return prep(onReader, db.reader).all(...params) as Row[];
      return pgRows(db, params);
    },
    async get(db, ...params) {
      if (db.reader) return prep(onReader, db.reader).get(...params) as Row | undefined;
      return (await pgRows(db, params))[0];
    },
    // On SQLite the transaction holds Kysely's only connection (the writer), so the raw statement on
    // that connection runs inside it.
    async allIn(db, tx, ...params) {
      if (db.sqlite) return prep(onWriter, db.sqlite).all(...params) as Row[];
      return txRows(tx, params);
    },
    async getIn(db, tx, ...params) {
      if (db.sqlite) return prep(onWriter, db.sqlite).get(...params) as Row | undefined;
      return (await txRows(tx, params))[0];
    },
    async runIn(db, tx, ...params) {
      if (db.sqlite) return prep(onWriter, db.sqlite).run(...params).changes;
      return Number((await tx.executeQuery(CompiledQuery.raw(pgText, params as unknown[]))).numAffectedRows ?? 0);
    },
  };
}

/** Where statements run: `onReader(db)` outside transactions, `inTx(db, tx)` inside one. */
export interface Exec {
  get<Row>(s: Statement<Row>, ...params: Params): Promise<Row | undefined>;
  all<Row>(s: Statement<Row>, ...params: Params): Promise<Row[]>;
  /** Writes; only inside a transaction. */
  run(s: Statement<unknown>, ...params: Params): Promise<number>;
}

export function onReader(db: Db): Exec {
  return {
    get: (s, ...p) => s.get(db, ...p),
    all: (s, ...p) => s.all(db, ...p),
    run: () => Promise.reject(new Error('writes need a transaction: use inTx()')),
  };
}

export function inTx(db: Db, tx: Transaction<Database>): Exec {
  return {
    get: (s, ...p) => s.getIn(db, tx, ...p),
    all: (s, ...p) => s.allIn(db, tx, ...p),
    run: (s, ...p) => s.runIn(db, tx, ...p),
  };
}

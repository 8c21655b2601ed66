// Prepared statements for the hot paths (return_services, update_service, the api_key check).
// Kysely builds the SQL text and better-sqlite3 prepares it again on every call; here a statement
// is written once, with `?` placeholders, and prepared once per connection: better-sqlite3
// statements on SQLite, named (server-side prepared) statements on PostgreSQL. Everything else
// keeps using Kysely.
//
// Repositories run them through their handle (db/handle.ts): on a write's handle, to that write's
// connection; on the database, a read on SQLite goes to the connection readConnection() names,
// which sees only committed data and never waits behind the writer's open transaction.
import type SQLite from 'better-sqlite3';
import { CompiledQuery, type Transaction } from 'kysely';
import type { Connections, Params, Statement, Write } from './handle.js';
import type { Database } from './schema.js';

export type { Statement } from './handle.js';

let counter = 0;

/**
 * The SQLite connection a read outside any write runs on: the writer itself while it has no
 * transaction open, for its own commits leave its memory map and page cache in place (a lookup then
 * reads mapped pages without a system call); the reader while a write is under way (a group commit
 * keeps its transaction open across its jobs and its fsync), which sees the last committed state
 * (WAL) but starts with an empty cache after every commit. On a database file either way a read sees
 * committed data only; `sqlite::memory:` has one connection, which also reads what an open write wrote.
 * Nothing may stream rows from the writer (iterate()): while an iteration is open there, better-sqlite3
 * refuses every other statement on it, these reads included.
 */
export function readConnection(db: Connections): SQLite.Database {
  const writer = db.sqlite!;
  return db.readsOnWriter && !writer.inTransaction ? writer : db.reader!;
}

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

/** Every statement's SQL, in SQLite's form: test/db/statement-plans.test.ts reads each one's query plan. */
const texts: string[] = [];
export const statementTexts = (): readonly string[] => texts;

export function statement<Row>(text: string, options: StatementOptions = {}): Statement<Row> {
  const name = `idsvc_${++counter}`;
  texts.push(text);
  const pgText = toPg(text);
  const arrays = options.rowMode === 'array';
  const prepared = new WeakMap<SQLite.Database, SQLite.Statement>();
  const prep = (conn: SQLite.Database) => {
    let s = prepared.get(conn);
    if (!s) {
      s = conn.prepare(text);
      if (arrays) s.raw(true);
      prepared.set(conn, s);
    }
    return s;
  };
  // Outside a write, only a statement that changes nothing may run: on the writer, which the
  // reader's query_only would not guard, a write would commit on its own, outside any group commit.
  const readable = new WeakMap<SQLite.Database, SQLite.Statement>();
  const read = (db: Connections) => {
    const conn = readConnection(db);
    let s = readable.get(conn);
    if (!s) {
      s = prep(conn);
      if (!s.readonly) throw new Error(`a statement that writes was run outside a write: ${text}`);
      readable.set(conn, s);
    }
    return s;
  };
  const pgRows = async (db: Connections, params: Params) =>
    (await db.pgPool!.query({ name, text: pgText, values: params as unknown[], ...(arrays ? { rowMode: 'array' as const } : {}) })).rows as Row[];
  const txRows = async (tx: Transaction<Database>, params: Params) => {
    const rows = (await tx.executeQuery(CompiledQuery.raw(pgText, params as unknown[]))).rows as Record<string, unknown>[];
    // Kysely gives objects; their keys keep the column order.
    return (arrays ? rows.map((r) => Object.values(r)) : rows) as Row[];
  };

  return {
    async all(db, ...params) {
      if (db.reader) return read(db).all(...params) as Row[];
      return pgRows(db, params);
    },
    async get(db, ...params) {
      if (db.reader) return read(db).get(...params) as Row | undefined;
      return (await pgRows(db, params))[0];
    },
    // On SQLite the transaction holds Kysely's only connection (the writer), so the raw statement on
    // that connection runs inside it.
    async allIn(db, tx, ...params) {
      if (db.sqlite) return prep(db.sqlite).all(...params) as Row[];
      return txRows(tx, params);
    },
    async getIn(db, tx, ...params) {
      if (db.sqlite) return prep(db.sqlite).get(...params) as Row | undefined;
      return (await txRows(tx, params))[0];
    },
    async runIn(db, tx, ...params) {
      if (db.sqlite) return prep(db.sqlite).run(...params).changes;
      return Number((await tx.executeQuery(CompiledQuery.raw(pgText, params as unknown[]))).numAffectedRows ?? 0);
    },
  };
}

/** The handle a write's work gets: statements and the query builder on its transaction's connection. */
export class TxHandle implements Write {
  readonly dialect: Connections['dialect'];

  constructor(
    private readonly conns: Connections,
    readonly kysely: Transaction<Database>,
  ) {
    this.dialect = conns.dialect;
  }

  get<Row>(s: Statement<Row>, ...params: Params): Promise<Row | undefined> {
    return s.getIn(this.conns, this.kysely, ...params);
  }

  all<Row>(s: Statement<Row>, ...params: Params): Promise<Row[]> {
    return s.allIn(this.conns, this.kysely, ...params);
  }

  run(s: Statement<unknown>, ...params: Params): Promise<number> {
    return s.runIn(this.conns, this.kysely, ...params);
  }
}

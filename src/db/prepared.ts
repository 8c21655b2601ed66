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
  const prepared = new WeakMap<SQLite.Database, Prepared>();
  const prep = (conn: SQLite.Database) => {
    let s = prepared.get(conn);
    if (!s) {
      s = prepareOn(conn, text, arrays);
      prepared.set(conn, s);
    }
    return s;
  };
  // Outside a write, only a statement that changes nothing may run: on the writer, which the
  // reader's query_only would not guard, a write would commit on its own, outside any group commit.
  const readable = new WeakMap<SQLite.Database, Prepared>();
  const read = (db: Connections) => {
    const conn = readConnection(db);
    let s = readable.get(conn);
    if (!s) {
      s = prep(conn);
      if (!s.statement.readonly) throw new Error(`a statement that writes was run outside a write: ${text}`);
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
      if (db.reader) return allRows(read(db), params) as Row[];
      return pgRows(db, params);
    },
    async get(db, ...params) {
      if (db.reader) return firstRow(read(db), params) as Row | undefined;
      return (await pgRows(db, params))[0];
    },
    // On SQLite the transaction holds Kysely's only connection (the writer), so the raw statement on
    // that connection runs inside it.
    async allIn(db, tx, ...params) {
      if (db.sqlite) return allRows(prep(db.sqlite), params) as Row[];
      return txRows(tx, params);
    },
    async getIn(db, tx, ...params) {
      if (db.sqlite) return firstRow(prep(db.sqlite), params) as Row | undefined;
      return (await txRows(tx, params))[0];
    },
    async runIn(db, tx, ...params) {
      if (db.sqlite) return prep(db.sqlite).statement.run(...params).changes;
      return Number((await tx.executeQuery(CompiledQuery.raw(pgText, params as unknown[]))).numAffectedRows ?? 0);
    },
  };
}

/**
 * A statement prepared on one SQLite connection, and its rows' JSON forms where it has them.
 *
 * Under Node 20 better-sqlite3 builds every row through V8's embedder API, one property set per
 * column, each a slow-path store (callgrind, the public view's 8 rows of 8 columns: about 80,000
 * instructions a lookup, a sixth of the whole request). A SELECT is therefore also prepared
 * wrapped, so that SQLite writes its rows as one JSON text (`json_group_array` over
 * `json_array`/`json_object` of the columns, in the statement's own order) and V8's JSON parser
 * builds them: the same rows, for a fraction of the work (docs/performance.md). A statement whose
 * columns could not round-trip through JSON keeps the driver's rows: a BLOB (JSON has none), a
 * REAL (SQLite writes 15 significant digits), or two columns of one name (the wrapper names them).
 */
interface Prepared {
  readonly statement: SQLite.Statement;
  /** All rows as one JSON array text (one row, one value), or null where the driver's rows are used. */
  readonly allJson: SQLite.Statement | null;
  /** The first row as JSON text, or null. */
  readonly firstJson: SQLite.Statement | null;
}

function prepareOn(conn: SQLite.Database, text: string, arrays: boolean): Prepared {
  const statement = conn.prepare(text);
  if (arrays) statement.raw(true);
  const wrapped = jsonWrappers(statement, text, arrays);
  return {
    statement,
    allJson: wrapped && conn.prepare(wrapped.all).pluck(),
    firstJson: wrapped && conn.prepare(wrapped.first).pluck(),
  };
}

/** The JSON forms of a SELECT's SQL (see Prepared), or null when its rows must come from the driver. */
export function jsonWrappers(statement: SQLite.Statement, text: string, arrays: boolean): { all: string; first: string } | null {
  if (!statement.reader || !/^\s*SELECT\b/i.test(text)) return null;
  const columns = statement.columns();
  const names = columns.map((c) => c.name);
  if (new Set(names).size !== names.length) return null;
  if (columns.some((c) => c.type !== null && /BLOB|REAL|FLOA|DOUB|NUMERIC|DECIMAL/i.test(c.type))) return null;
  const quoted = names.map((n) => `"${n.replaceAll('"', '""')}"`);
  const row = arrays ? `json_array(${quoted.join(', ')})` : `json_object(${names.map((n, i) => `'${n.replaceAll("'", "''")}', ${quoted[i]}`).join(', ')})`;
  return { all: `SELECT json_group_array(${row}) FROM (${text})`, first: `SELECT ${row} FROM (${text}) LIMIT 1` };
}

function allRows(s: Prepared, params: Params): unknown[] {
  return s.allJson ? (JSON.parse(s.allJson.get(...params) as string) as unknown[]) : s.statement.all(...params);
}

function firstRow(s: Prepared, params: Params): unknown {
  if (!s.firstJson) return s.statement.get(...params);
  const json = s.firstJson.get(...params) as string | undefined;
  return json === undefined ? undefined : JSON.parse(json);
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

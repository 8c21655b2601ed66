// Kysely's SQLite driver prepares every query again each time it runs it; preparing costs about as
// much as running a short statement. Handed to Kysely in place of the connection, this keeps the
// statements it prepared, by SQL text, so a query Kysely has built before runs without preparing,
// which otherwise weighs on every hot write in SQLite.
//
// Bounded, as Kysely's SQL text varies with the length of `IN (…)` lists and the like; the least
// recently used statement goes first. Nothing streams rows (`iterate`) from this connection (below).
import type SQLite from 'better-sqlite3';
import type { SqliteDatabase, SqliteStatement } from 'kysely';

const MAX_STATEMENTS = 500;

export function withStatementCache(conn: SQLite.Database, max = MAX_STATEMENTS): SqliteDatabase {
  // Each entry is handed out as it is: no object is built per query run.
  const statements = new Map<string, SqliteStatement>();
  const wrap = (s: SQLite.Statement): SqliteStatement => ({
    reader: s.reader,
    all: (parameters) => s.all(parameters),
    run: (parameters) => s.run(parameters),
    // Reads outside writes run on this connection (db/prepared.ts, readConnection), and while an
    // iteration is open better-sqlite3 refuses every other statement on it: nothing streams here.
    iterate: () => {
      throw new Error('rows are not streamed from the writer: reads outside writes run on it (db/prepared.ts)');
    },
  });
  return {
    close: () => conn.close(),
    prepare(sql: string): SqliteStatement {
      let s = statements.get(sql);
      if (s) {
        // Most recently used last, so eviction takes the least used.
        statements.delete(sql);
      } else {
        s = wrap(conn.prepare(sql));
        if (statements.size >= max) statements.delete(statements.keys().next().value!);
      }
      statements.set(sql, s);
      return s;
    },
  };
}

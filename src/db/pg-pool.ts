// The PostgreSQL pool, made to survive the database going away (docs/operations.md, "When a
// dependency fails"):
//
// - Every connection has an 'error' listener. Without one, a pooled connection whose backend is
//   terminated (a failover, a proxy restart, an idle timeout, pg_terminate_backend) raises an
//   unhandled 'error' and the process exits. The pool's own listener covers idle connections only,
//   so connections checked out (between the statements of a transaction) get ours; the pool then
//   drops the dead connection when it is released and opens a new one on demand.
// - Nothing waits for the database longer than `timeoutMs`: not for a free pooled connection, not
//   for a new one (connectionTimeoutMillis), not for a statement's answer (a client-side read
//   timeout, because a stalled network answers nothing, not even a server-side statement_timeout).
//   The caller gets an error the HTTP edge answers as `unavailable` (db/faults.ts).
// - A connection that timed out or broke is discarded when released rather than handed to the
//   next caller: its unanswered statement would hold up every statement queued behind it.
// - The server ends sessions idle in a transaction for twice that long (below), so a transaction
//   cut off by a network outage does not keep its locks after the network is back.
import type { EventEmitter } from 'node:events';
import pg from 'pg';
import type { PostgresPool, PostgresPoolClient } from 'kysely';
import { isUnavailable } from './faults.js';

/** The longest timer Node keeps (about 24 days): "no timeout" in a form pg does not ignore. */
const FOREVER_MS = 2 ** 31 - 1;

export interface PgPoolOptions {
  connectionString: string;
  schema?: string;
  /** The longest wait for a connection or for a statement's answer; 0 waits for ever. */
  timeoutMs: number;
  /** Told when a pooled connection is lost (for the log). */
  events: EventEmitter;
  /** Connections at most; 10 unless given. */
  max?: number;
}

export interface BoundedPool {
  pool: pg.Pool;
  /** What Kysely uses: the same pool, with the statement timeout and the discarding above. */
  forKysely: PostgresPool;
  /** Runs `fn` with no statement timeout (migrations, which may scan whole tables once). */
  unbounded<T>(fn: () => Promise<T>): Promise<T>;
}

export function createPgPool(options: PgPoolOptions): BoundedPool {
  const sessionOptions = [
    ...(options.schema ? [`-c search_path=${options.schema}`] : []),
    // The server ends a session left idle inside a transaction: one whose client gave up on it
    // while the network dropped everything, its goodbye lost too, would otherwise hold its row
    // locks until the server's retransmissions, backing off for as long as the outage lasted,
    // learn that the client is gone (minutes), and every write to those rows would wait on it.
    // Twice the timeout: our own transactions never pause that long between statements.
    ...(options.timeoutMs > 0 ? [`-c idle_in_transaction_session_timeout=${2 * options.timeoutMs}`] : []),
  ];
  const pool = new pg.Pool({
    connectionString: options.connectionString,
    max: options.max ?? 10,
    // Connections stay open while idle (node-postgres closes them after 10 s by default): after a
    // quiet spell, the first requests would otherwise wait for new backends, each preparing the
    // named statements again on cold catalog caches, and a burst queued behind them for seconds.
    idleTimeoutMillis: 0,
    // For every statement, also those sent with pool.query() (db/prepared.ts).
    ...(options.timeoutMs > 0 ? { connectionTimeoutMillis: options.timeoutMs, query_timeout: options.timeoutMs } : {}),
    // Lets the kernel notice a peer that vanished without a word (no FIN, no RST) on idle connections.
    keepAlive: true,
    keepAliveInitialDelayMillis: 10_000,
    ...(sessionOptions.length > 0 ? { options: sessionOptions.join(' ') } : {}),
  });
  pool.on('error', (err) => options.events.emit('connection-lost', err));
  // pg-pool's listener covers idle clients only; a checked-out one reports its loss to its next query.
  pool.on('connect', (client) => client.on('error', () => {}));

  // pg takes a per-statement query_timeout over the pool's, but treats 0 as "not given".
  let unboundedRuns = 0;

  const forKysely: PostgresPool = {
    async connect(): Promise<PostgresPoolClient> {
      const client = await pool.connect();
      let broken: unknown = null;
      const query = (sqlText: unknown, parameters?: readonly unknown[]): unknown => {
        // Kysely passes a cursor object only for streamed queries, which idsvc does not use.
        if (typeof sqlText !== 'string') return client.query(sqlText as pg.QueryConfig);
        if (broken) return Promise.reject(broken);
        const config = { text: sqlText, values: parameters as unknown[], ...(unboundedRuns > 0 ? { query_timeout: FOREVER_MS } : {}) };
        return client.query(config).catch((err: unknown) => {
          if (isUnavailable(err)) broken = err;
          throw err;
        });
      };
      return {
        query: query as PostgresPoolClient['query'],
        release() {
          client.release(broken !== null);
        },
      };
    },
    end: () => pool.end(),
  };

  return {
    pool,
    forKysely,
    async unbounded(fn) {
      unboundedRuns++;
      try {
        return await fn();
      } finally {
        unboundedRuns--;
      }
    },
  };
}

// PostgreSQL read replicas (DATABASE_READ_URL): where the reads that may be slightly behind go
// (public views, docs/scaling.md), so that more instances add read capacity without adding load
// on the primary. Writes, and every read whose caller must see its own writes, stay on the primary.
//
// A monitor asks the primary for its WAL position and each replica for the position it has
// replayed, every `checkEveryMs`. A replica has everything the primary had written when it last
// stood at or before the replica's position, so the replica is behind by at most the time since
// then. A replica behind by more than `maxLagMs`, not in recovery (promoted, so no longer fed), or
// not answering is skipped until a check finds it well again; before its first check it is not
// used. A read sent to a replica that fails because the replica is gone is marked down and run
// on the primary in the same call: a stopped replica costs a retry, never an error answered. So is
// one that names a table the replica has not replayed yet (a migration's first moments).
import { EventEmitter } from 'node:events';
import { Kysely, type PostgresPool, type PostgresPoolClient } from 'kysely';
import type pg from 'pg';
import { isUnavailable } from './faults.js';
import type { Connections, Handle, Params, ReplicaStatus, Statement } from './handle.js';
import { createPgPool } from './pg-pool.js';
import { OwnSchemaPostgresDialect } from './pg-introspector.js';
import type { Database } from './schema.js';

export interface ReplicaOptions {
  /** How far behind (ms) a replica may be and still take reads. */
  maxLagMs: number;
  /** How often (ms) the monitor checks every replica. */
  checkEveryMs: number;
  /** As the primary's: the longest wait for a connection or a statement. */
  timeoutMs: number;
  schema?: string;
  /** Told `replica-state` (a ReplicaStatus) when a replica's state changes. */
  events: EventEmitter;
}

/** host:port/database of a postgres:// URL, never its user or password. */
export function describeReplica(url: string): string {
  const u = new URL(url);
  return `${u.hostname}:${u.port || '5432'}${u.pathname}`;
}

/** The primary's WAL position at a time, kept for a window as long as the longest lag measured. */
interface Sample {
  readonly at: number;
  readonly lsn: bigint;
}

/** `X/Y` as PostgreSQL prints an LSN, as one number. */
export function parseLsn(text: string): bigint {
  const [hi, lo] = text.split('/');
  return (BigInt(`0x${hi}`) << 32n) | BigInt(`0x${lo}`);
}

/**
 * How far behind (ms, an upper bound) a replica that has replayed up to `replayed` is at `now`,
 * given the primary's positions sampled over time (oldest first): the time since the latest sample
 * the replica had reached. When it has not reached even the oldest, at least that long.
 */
export function lagOf(samples: readonly Sample[], replayed: bigint, now: number): number {
  for (let i = samples.length - 1; i >= 0; i--) if (samples[i]!.lsn <= replayed) return now - samples[i]!.at;
  return samples.length > 0 ? now - samples[0]!.at : Number.POSITIVE_INFINITY;
}

/**
 * A table, column or function the replica does not know yet: it has not replayed a migration the
 * primary has run (an upgrade's first seconds). The primary answers instead.
 */
const SCHEMA_STATES = new Set(['42P01', '42703', '42883']);
function behindTheSchema(err: unknown): boolean {
  return SCHEMA_STATES.has((err as { code?: unknown } | null)?.code as string);
}

class Replica {
  state: ReplicaStatus['state'] = 'unchecked';
  lagMs: number | null = null;
  readonly name: string;
  readonly pool: pg.Pool;
  readonly handle: Handle;
  private readonly events: EventEmitter;

  constructor(
    url: string,
    options: ReplicaOptions,
    primary: Handle,
    private readonly primaryPool: PostgresPool,
  ) {
    this.name = describeReplica(url);
    this.events = options.events;
    const bounded = createPgPool({
      connectionString: url,
      timeoutMs: options.timeoutMs,
      // Its lost connections are not the primary's (the database's 'connection-lost'): the checks report them as a state.
      events: new EventEmitter(),
      ...(options.schema ? { schema: options.schema } : {}),
    });
    this.pool = bounded.pool;
    const conns: Connections = { dialect: 'postgres', sqlite: null, reader: null, readsOnWriter: false, pgPool: bounded.pool, pgFeedPool: null };
    const kysely = new Kysely<Database>({ dialect: new OwnSchemaPostgresDialect({ pool: this.queryBuilderPool(bounded.forKysely) }) });
    this.handle = {
      dialect: 'postgres',
      kysely,
      get: <Row>(s: Statement<Row>, ...params: Params) =>
        this.orOnPrimary(
          () => s.get(conns, ...params),
          () => primary.get(s, ...params),
        ),
      all: <Row>(s: Statement<Row>, ...params: Params) =>
        this.orOnPrimary(
          () => s.all(conns, ...params),
          () => primary.all(s, ...params),
        ),
    };
  }

  get usable(): boolean {
    return this.state === 'ok';
  }

  /** `onReplica`, or `onPrimary` when the replica is gone (it is marked down) or behind the schema. */
  private async orOnPrimary<T>(onReplica: () => Promise<T>, onPrimary: () => Promise<T>): Promise<T> {
    try {
      return await onReplica();
    } catch (err) {
      if (isUnavailable(err)) this.markDown();
      else if (!behindTheSchema(err)) throw err;
      return onPrimary();
    }
  }

  /**
   * The query builder's connections: the replica's, or the primary's when the replica cannot be
   * reached; a statement the replica fails is run on the primary as orOnPrimary() says.
   */
  private queryBuilderPool(replica: PostgresPool): PostgresPool {
    const onPrimary = async (sqlText: string, parameters: readonly unknown[]) => {
      const client = await this.primaryPool.connect();
      try {
        return await client.query(sqlText, parameters);
      } finally {
        client.release();
      }
    };
    return {
      connect: async (): Promise<PostgresPoolClient> => {
        let client: PostgresPoolClient;
        try {
          client = await replica.connect();
        } catch (err) {
          if (!isUnavailable(err)) throw err;
          this.markDown();
          return this.primaryPool.connect();
        }
        const query = (sqlText: string, parameters: readonly unknown[]) =>
          this.orOnPrimary(
            () => client.query(sqlText, parameters),
            () => onPrimary(sqlText, parameters),
          );
        return { query: query as PostgresPoolClient['query'], release: () => client.release() };
      },
      end: () => replica.end(),
    };
  }

  markDown(): void {
    this.become('down', null);
  }

  /** Records what the replica is doing; a change of state is told to the database's events (the log). */
  private become(state: ReplicaStatus['state'], lagMs: number | null): void {
    const changed = state !== this.state;
    this.state = state;
    this.lagMs = lagMs;
    if (changed) this.events.emit('replica-state', { replica: this.name, state, lag_ms: lagMs } satisfies ReplicaStatus);
  }

  async check(samples: readonly Sample[], maxLagMs: number): Promise<void> {
    try {
      const { rows } = await this.pool.query<{ recovering: boolean; replayed: string | null }>(
        'SELECT pg_is_in_recovery() AS recovering, pg_last_wal_replay_lsn()::text AS replayed',
      );
      const row = rows[0]!;
      if (!row.recovering || row.replayed === null) {
        this.become('not_replica', null);
        return;
      }
      const lag = lagOf(samples, parseLsn(row.replayed), Date.now());
      this.become(lag <= maxLagMs ? 'ok' : 'behind', Number.isFinite(lag) ? Math.round(lag) : null);
    } catch {
      this.markDown();
    }
  }
}

export class ReplicaSet {
  private readonly replicas: Replica[];
  private readonly samples: Sample[] = [];
  private next = 0;
  private timer: NodeJS.Timeout | null = null;
  private checking: Promise<void> | null = null;

  constructor(
    urls: readonly string[],
    private readonly primary: Handle & Connections,
    primaryPool: PostgresPool,
    private readonly options: ReplicaOptions,
  ) {
    this.replicas = urls.map((url) => new Replica(url, options, primary, primaryPool));
  }

  /** Checks every replica now, then every `checkEveryMs`. */
  start(): void {
    void this.check();
    this.timer = setInterval(() => void this.check(), this.options.checkEveryMs);
    this.timer.unref();
  }

  /** A handle on a replica fit for reads (in turn), or the primary's when none is. */
  forReads(): Handle {
    const n = this.replicas.length;
    for (let i = 0; i < n; i++) {
      const replica = this.replicas[(this.next + i) % n]!;
      if (replica.usable) {
        this.next = (this.next + i + 1) % n;
        return replica.handle;
      }
    }
    return this.primary;
  }

  status(): ReplicaStatus[] {
    return this.replicas.map((r) => ({ replica: r.name, state: r.state, lag_ms: r.lagMs }));
  }

  /** One round of checks (overlapping rounds are not started: a slow one is waited for). */
  check(): Promise<void> {
    this.checking ??= this.checkAll().finally(() => {
      this.checking = null;
    });
    return this.checking;
  }

  private async checkAll(): Promise<void> {
    try {
      // Timed from before the question: everything the primary had written by then lies at or before
      // its answer, so a replica that has replayed the answer has all of it, and the lag stays an
      // upper bound however long the question waited in the pool.
      const now = Date.now();
      const { rows } = await this.primary.pgPool!.query<{ lsn: string }>('SELECT pg_current_wal_lsn()::text AS lsn');
      this.samples.push({ at: now, lsn: parseLsn(rows[0]!.lsn) });
      // Samples older than the longest lag that matters are of no use, but keep the newest of them:
      // a replica exactly that far behind is measured from it.
      const horizon = now - this.options.maxLagMs - 2 * this.options.checkEveryMs;
      while (this.samples.length > 1 && this.samples[1]!.at < horizon) this.samples.shift();
    } catch {
      // The primary does not answer: its own errors are answered elsewhere; replicas are judged on the samples kept.
    }
    await Promise.all(this.replicas.map((r) => r.check(this.samples, this.options.maxLagMs)));
  }

  async close(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    await this.checking?.catch(() => {});
    // Kysely ends the pool only if it ever used it; the checks and prepared reads use it regardless.
    await Promise.all(
      this.replicas.map(async (r) => {
        await r.handle.kysely.destroy();
        if (!r.pool.ended) await r.pool.end();
      }),
    );
  }
}

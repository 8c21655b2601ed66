// Group commit for SQLite writes. With synchronous=FULL every COMMIT waits for an fsync of the WAL
// (a trip to the disk), which caps one-transaction-per-request writes at the disk's fsync rate
// however fast the rest is. Here writes that arrive while a transaction is being
// written join the next one: each runs inside a savepoint (a failure undoes only its own changes
// and rejects only its own caller), the batch commits with one fsync, and only then is every
// caller answered. Nothing is acknowledged before it is durable, and an idle server commits a lone
// write at once, with no timer.
//
// PostgreSQL needs none of this: each write gets its own transaction on a pooled connection, and
// the server already flushes concurrent commits together.
import type { ControlledTransaction, Kysely } from 'kysely';
import type { Connections, Write } from './handle.js';
import { TxHandle } from './prepared.js';
import type { Database } from './schema.js';

type Work<T> = (w: Write) => Promise<T>;

interface Job {
  work: Work<unknown>;
  resolve(value: unknown): void;
  reject(err: unknown): void;
}

type Outcome = { ok: true; value: unknown } | { ok: false; err: unknown };

/** A batch stays bounded so one commit never holds hundreds of answers back. */
const MAX_BATCH = 256;

export class GroupCommit {
  private queue: Job[] = [];
  private draining = false;
  private statements: Record<'lock' | 'savepoint' | 'release' | 'rollback', { run(): unknown }> | undefined;

  constructor(
    private readonly conns: Connections,
    private readonly kysely: Kysely<Database>,
  ) {}

  /** Runs `work` in a transaction and resolves once that transaction is committed. */
  run<T>(work: Work<T>): Promise<T> {
    const raw = this.conns.sqlite;
    if (!raw) return this.kysely.transaction().execute((tx) => work(new TxHandle(this.conns, tx)));
    return new Promise<T>((resolve, reject) => {
      this.queue.push({ work, resolve: resolve as (v: unknown) => void, reject });
      if (!this.draining) {
        this.draining = true;
        // Not at once: the requests read in the same turn of the event loop would each run a
        // whole transaction (better-sqlite3 is synchronous) before the next one is even parsed.
        // setImmediate waits only for the rest of this turn's I/O, never for a timer.
        setImmediate(() => void this.drain(raw));
      }
    });
  }

  private async drain(raw: NonNullable<Connections['sqlite']>): Promise<void> {
    this.statements ??= {
      // A write that changes nothing, run first: it takes the write lock at the start, waiting up
      // to busy_timeout for another process (the CLI, another instance). Taken later, after the
      // jobs' first reads, SQLite could only fail at once ("database is locked") when another
      // connection had committed in between, because the batch's read snapshot would be stale.
      lock: raw.prepare('UPDATE settings SET key = key WHERE 0'),
      savepoint: raw.prepare('SAVEPOINT idsvc_write'),
      release: raw.prepare('RELEASE idsvc_write'),
      rollback: raw.prepare('ROLLBACK TO idsvc_write'),
    };
    const { lock, savepoint, release, rollback } = this.statements;
    try {
      while (this.queue.length > 0) {
        const batch = this.queue.splice(0, MAX_BATCH);
        const outcomes: Outcome[] = [];
        // What undid the whole batch, if anything did. Kept here because SQLite rolls the whole
        // transaction back by itself on some errors (SQLITE_FULL, SQLITE_IOERR, SQLITE_NOMEM), and
        // the ROLLBACK sent after that fails with "no transaction is active": that second error
        // must not replace the first, which says why (and which db/faults.ts maps to unavailable).
        let failure: { err: unknown } | null = null;
        let tx: ControlledTransaction<Database> | null = null;
        try {
          // Kysely's transaction holds its one connection, so nothing else runs inside this one.
          tx = await this.kysely.startTransaction().execute();
          const w = new TxHandle(this.conns, tx);
          lock.run();
          for (const job of batch) {
            savepoint.run();
            try {
              outcomes.push({ ok: true, value: await job.work(w) });
              release.run();
            } catch (err) {
              if (!raw.inTransaction) {
                // Gone with the transaction: the earlier jobs' writes too, so none of them is answered ok.
                failure = { err };
                break;
              }
              rollback.run();
              release.run();
              outcomes.push({ ok: false, err });
            }
          }
          if (!failure) await tx.commit().execute();
        } catch (err) {
          failure ??= { err };
        }
        if (failure) {
          // Also releases Kysely's connection; its own error (nothing left to roll back) says nothing new.
          if (tx && !tx.isCommitted)
            await tx
              .rollback()
              .execute()
              .catch(() => {});
          for (const job of batch) job.reject(failure.err);
          continue;
        }
        batch.forEach((job, i) => {
          const o = outcomes[i]!;
          if (o.ok) job.resolve(o.value);
          else job.reject(o.err);
        });
        // The commit blocked the event loop; let the requests that arrived meanwhile queue up.
        await new Promise((r) => setImmediate(r));
      }
    } finally {
      this.draining = false;
    }
  }
}

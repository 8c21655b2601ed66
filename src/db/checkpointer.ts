// Background checkpoints for SQLite. In WAL mode every commit appends pages to the WAL, and a
// checkpoint copies them back into the database file, at random places, then fsyncs it. Left to
// SQLite, the writer does that itself inside the commit that crosses wal_autocheckpoint pages, on
// the event loop (better-sqlite3 is synchronous): every request waits while 32 MB of scattered
// pages reach the disk, and the more users, the fewer of those pages repeat and the longer it
// takes. Here a worker thread with its own connection runs a PASSIVE checkpoint every few hundred
// milliseconds, so the copying and the fsync happen beside the event loop. The writer keeps its
// own autocheckpoint (database.ts): when the WAL reaches that size it copies only what the
// worker has not yet copied, and it is still what restarts the WAL from the beginning, so the
// file stays bounded even when the worker falls behind or stops.
import { spawnModuleWorker } from '../worker-module.js';
import type { CheckpointWorkerData, CheckpointWorkerMessage } from './checkpoint-worker.js';

export interface CheckpointerLog {
  warn(obj: object, msg: string): void;
}

export interface Checkpointer {
  /** Rounds reported (asked for, or timed ones that found the WAL changed) and frames copied so far (what the tests look at; failures are logged). */
  readonly stats: { rounds: number; framesCopied: number; failures: number };
  /** Asks for a checkpoint now and resolves when it has run (tests). */
  checkpointNow(): Promise<CheckpointWorkerMessage>;
  stop(): Promise<void>;
}

export function startCheckpointer(file: string, intervalMs: number, log: CheckpointerLog): Checkpointer {
  const worker = spawnModuleWorker(import.meta.url, 'checkpoint-worker', { file, intervalMs } satisfies CheckpointWorkerData);
  // The server's shutdown stops it; a process that forgets to must still be able to exit.
  worker.unref();
  const stats = { rounds: 0, framesCopied: 0, failures: 0 };
  const waiting = new Map<number, (m: CheckpointWorkerMessage) => void>();
  let nextId = 1;
  let lastCopied = 0;
  let warned = false;
  let gone = false;
  worker.on('message', (m: CheckpointWorkerMessage) => {
    if (m.type === 'checkpointed') {
      stats.rounds++;
      // `copied` counts from the start of the WAL, which restarts after a full checkpoint.
      stats.framesCopied += m.copied >= lastCopied ? m.copied - lastCopied : m.copied;
      lastCopied = m.copied;
    } else {
      stats.failures++;
      // Once: a failing checkpoint fails every few hundred milliseconds, and the writer's own
      // autocheckpoint still keeps the WAL bounded, so nothing is lost meanwhile.
      if (!warned) log.warn({ error: m.message }, 'background checkpoint failed; the writer checkpoints alone');
      warned = true;
    }
    if (m.id !== undefined) {
      waiting.get(m.id)?.(m);
      waiting.delete(m.id);
      if (waiting.size === 0) worker.unref();
    }
  });
  worker.on('error', (err) => log.warn({ error: err.message }, 'background checkpointer stopped; the writer checkpoints alone'));
  const exited = new Promise<void>((resolve) =>
    worker.once('exit', () => {
      gone = true;
      // A caller still waiting for a round would otherwise wait forever.
      for (const answer of waiting.values()) answer({ type: 'failed', message: 'the checkpointer has stopped' });
      waiting.clear();
      resolve();
    }),
  );
  return {
    stats,
    checkpointNow() {
      if (gone) return Promise.resolve({ type: 'failed', message: 'the checkpointer has stopped' });
      const id = nextId++;
      worker.ref(); // someone waits for the answer
      return new Promise((resolve) => {
        waiting.set(id, resolve);
        worker.postMessage({ type: 'checkpoint', id });
      });
    },
    async stop() {
      worker.ref();
      worker.postMessage({ type: 'stop' });
      await exited;
    },
  };
}

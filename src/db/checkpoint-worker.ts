// The body of the background checkpointer's thread (db/checkpointer.ts). Plain and self-contained:
// it runs in a worker thread with its own SQLite connection, and nothing here touches the app.
import { parentPort, workerData } from 'node:worker_threads';
import SQLite from 'better-sqlite3';

export interface CheckpointWorkerData {
  file: string;
  intervalMs: number;
}

/** What the worker reports after each round; `id` answers a request from checkpointNow(). */
export type CheckpointWorkerMessage = { id?: number } & (
  | { type: 'checkpointed'; frames: number; copied: number; busy: boolean }
  | { type: 'failed'; message: string }
);

const { file, intervalMs } = workerData as CheckpointWorkerData;
const port = parentPort!;
const db = new SQLite(file);
// FULL, as on the writer: the checkpoint fsyncs the WAL before it copies and the database file
// after, so a frame is only ever dropped from the WAL once its page is on disk.
db.pragma('synchronous = FULL');

/** What the last round reported: a timed round that finds the WAL as it was tells nobody. */
let last = '';

function checkpoint(id?: number): void {
  try {
    // PASSIVE never waits for and never blocks the writer or the readers: it copies the frames
    // no reader still needs and leaves the rest for the next round.
    const [row] = db.pragma('wal_checkpoint(PASSIVE)') as { busy: number; log: number; checkpointed: number }[];
    if (!row) return;
    const seen = `${row.log}/${row.checkpointed}/${row.busy}`;
    // Rounds come every few tens of milliseconds; an idle server's main thread is not woken for them.
    if (id === undefined && seen === last) return;
    last = seen;
    port.postMessage({ id, type: 'checkpointed', frames: row.log, copied: row.checkpointed, busy: row.busy !== 0 } satisfies CheckpointWorkerMessage);
  } catch (err) {
    port.postMessage({ id, type: 'failed', message: err instanceof Error ? err.message : String(err) } satisfies CheckpointWorkerMessage);
  }
}

const timer = setInterval(checkpoint, intervalMs);
port.on('message', (msg: { type: 'checkpoint'; id: number } | { type: 'stop' }) => {
  if (msg.type === 'checkpoint') checkpoint(msg.id);
  if (msg.type === 'stop') {
    clearInterval(timer);
    db.close();
    port.close();
  }
});

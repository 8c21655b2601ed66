// The change feed of the in-memory copies (services/change-feed.ts; migrations 012, 013): the rows
// of `answer_changes`, each a tag naming what a committed change touched. `read()` gives the tags committed since the previous reading,
// or 'all' when the reader cannot know (rows pruned before it read them).
import type SQLite from 'better-sqlite3';
import type { Db } from '../db/handle.js';
import { readConnection } from '../db/prepared.js';

/** At most this many changes are read at once; a reader further behind starts afresh. */
const FEED_BATCH = 1000;

/**
 * `local`: a reading is a synchronous read on this machine (SQLite, db/prepared.ts readConnection), answered at
 * once (or thrown); otherwise a round trip (PostgreSQL).
 */
export type FeedReader = { readonly local: true; read(): string[] | 'all' } | { readonly local: false; read(): Promise<string[] | 'all'> };

/** The feed of this database. */
export function feedReader(db: Db): FeedReader {
  return db.reader ? sqliteFeedReader(db) : pgFeedReader(db);
}

/**
 * SQLite: one writer at a time, so ids follow commit order without holes; read past the last one
 * seen. Only committed rows may be read (readConnection): a row of a write still open could be
 * rolled back and its id taken by the next commit, whose change this reader would then skip.
 */
function sqliteFeedReader(db: Db): FeedReader {
  const on = (conn: SQLite.Database) => ({
    latest: conn.prepare('SELECT coalesce(max(id), 0) FROM answer_changes').pluck(),
    after: conn.prepare(`SELECT id, tag FROM answer_changes WHERE id > ? ORDER BY id LIMIT ${FEED_BATCH + 1}`),
  });
  const writer = on(db.sqlite!);
  const reader = db.reader === db.sqlite ? writer : on(db.reader!);
  const statements = () => (readConnection(db) === db.sqlite ? writer : reader);
  let lastSeen = statements().latest.get() as number;
  return {
    local: true as const,
    read() {
      // `sqlite::memory:` has one connection, which would see the rows of a write still open: read
      // nothing until it ends (its rows come with the next reading, or never were).
      if (reader === writer && db.sqlite!.inTransaction) return [];
      const { latest, after } = statements();
      const rows = after.all(lastSeen) as { id: number; tag: string }[];
      if (rows.length === 0) return [];
      // A first id past the next one means rows were pruned before this reader saw them.
      if (rows[0]!.id !== lastSeen + 1 || rows.length > FEED_BATCH) {
        lastSeen = latest.get() as number;
        return 'all';
      }
      lastSeen = rows[rows.length - 1]!.id;
      return rows.map((r) => r.tag);
    },
  };
}

type PgFeedRow = { xmin: number; horizon: number; rows: [id: number, xid: number, tag: string][] };
const PG_READ = {
  name: 'idsvc_answer_feed',
  text: `SELECT pg_snapshot_xmin(pg_current_snapshot())::text::bigint AS xmin,
      (SELECT xid FROM answer_changes_horizon WHERE id = 1) AS horizon,
      (SELECT coalesce(json_agg(json_build_array(id, xid, tag)), '[]'::json) FROM answer_changes WHERE xid >= $1) AS rows`,
};

/**
 * PostgreSQL: sequence ids do not follow commit order, transaction ids bound it instead. Every
 * transaction older than a snapshot's xmin had finished when the snapshot was taken, so a reading
 * asks for the rows of transactions from the previous reading's xmin on, and skips the rows it
 * already gave (a transaction still running then may commit later: its rows come in a later reading).
 */
function pgFeedReader(db: Db): FeedReader {
  const pool = db.pgFeedPool!;
  let since: number | null = null;
  const seen = new Map<number, number>();
  return {
    local: false as const,
    async read() {
      const first = since === null;
      const { rows } = await pool.query<PgFeedRow>({ ...PG_READ, values: [since ?? 0] });
      const r = rows[0]!;
      const tags: string[] = [];
      const pruned = !first && r.horizon >= since!;
      for (const [id, xid, tag] of r.rows) {
        if (seen.has(id)) continue;
        seen.set(id, xid);
        tags.push(tag);
      }
      since = Math.max(since ?? 0, r.xmin);
      for (const [id, xid] of seen) if (xid < since) seen.delete(id);
      // The first reading only sets the starting point: nothing was kept before it.
      if (first) return 'all';
      return pruned ? 'all' : tags;
    },
  };
}

// The answer cache's change feed (migration 012): on SQLite the rows of `answer_changes`, read on
// the read connection; on PostgreSQL the NOTIFY channel and its payload.
import type SQLite from 'better-sqlite3';

export const ANSWER_CHANNEL = 'idsvc_answers';

/** At most this many changes are read at once; a process further behind empties its cache instead. */
export const FEED_BATCH = 1000;

export interface FeedReader {
  /** The newest change's id (0 when there is none). */
  latest(): number;
  /** The changes after `afterId`, oldest first, at most FEED_BATCH + 1. */
  after(afterId: number): { id: number; tag: string }[];
}

export function sqliteFeedReader(reader: SQLite.Database): FeedReader {
  const latest = reader.prepare('SELECT coalesce(max(id), 0) FROM answer_changes').pluck();
  const after = reader.prepare(`SELECT id, tag FROM answer_changes WHERE id > ? ORDER BY id LIMIT ${FEED_BATCH + 1}`);
  return {
    latest: () => latest.get() as number,
    after: (afterId) => after.all(afterId) as { id: number; tag: string }[],
  };
}

/**
 * The tags of a PostgreSQL notification ("{schema}|{tag},{tag}", `*` for everything), or null when
 * it is about another schema (tests share one database, one schema each).
 */
export function notifiedTags(payload: string | undefined, schema: string | null): string[] | null {
  const bar = (payload ?? '').indexOf('|');
  if (bar < 0) return ['*'];
  if (schema !== null && payload!.slice(0, bar) !== schema) return null;
  return payload!.slice(bar + 1).split(',').filter((t) => t !== '');
}

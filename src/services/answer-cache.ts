// Rendered answers of the most-read people (return_services bodies, the widget's data), kept in
// memory within ANSWER_CACHE_MB and dropped the moment anything that fed them changes, whoever
// changes it (this server, the CLI, another instance or cluster worker, an operator's SQL).
//
// Each answer carries tags naming the rows it was built from (`u{id}` a user, `s{id}` a subject,
// `p{id}` a partner: collected by the views in services/partner-data.ts) and the catalogue version
// it was rendered with. Triggers (migration 012) name the tags of every changed row:
//
// - SQLite: in the table `answer_changes`, read on the read connection at the first lookup of each
//   turn of the event loop (one indexed read that finds nothing most of the time). A request handled
//   in a turn arrived before that turn's first lookup, so a change committed before the request was
//   sent is always applied before it is answered.
// - PostgreSQL: by NOTIFY, on a listening connection of its own. Notifications arrive on their own
//   time, so the first lookup of each turn also sends `SELECT 1` on that connection and waits for it:
//   PostgreSQL hands a session the notifications committed before it answers a query, so, again,
//   a change committed before the request was sent is applied before it is answered. While that
//   connection is down nothing is served from memory (nor stored), and the cache is emptied when
//   it listens again.
//
// So visibility changes (opt-out, deletion, a link ended) take effect exactly as fast as without
// the cache. A render that overlaps a change to one of its tags is answered but not kept.
import { EventEmitter } from 'node:events';
import { LRUCache } from 'lru-cache';
import pg from 'pg';
import type { Db } from '../db/database.js';
import { ANSWER_CHANNEL, FEED_BATCH, notifiedTags, sqliteFeedReader, type FeedReader } from '../repositories/answer-feed.js';

/** What one answer depends on, filled in while it is rendered. */
export type AnswerTags = Set<string>;

export const userTag = (id: number) => `u${id}`;
export const subjectTag = (id: number) => `s${id}`;
export const partnerTag = (id: number) => `p${id}`;

interface Entry {
  readonly value: unknown;
  readonly tags: readonly string[];
  readonly catalogue: string;
}

/** What an entry costs beyond its value: the key, the entry, LRU and tag index bookkeeping. */
const ENTRY_OVERHEAD = 300;
/** Tags remembered as recently changed, for renders still running; past this, renders started earlier are not kept. */
const RECENT_TAGS_MAX = 10_000;
const RECONNECT_FIRST_MS = 500;
const RECONNECT_MAX_MS = 10_000;

/** Emits `invalidated` (tags), `live` and `down` (PostgreSQL's listening connection), for tests and logs. */
export class AnswerCache extends EventEmitter {
  private readonly entries: LRUCache<string, Entry> | null;
  private readonly byTag = new Map<string, Set<string>>();
  /** Bumped on every change applied; a render records it when it starts. */
  private generation = 0;
  /** The generation each recently changed tag changed at. */
  private readonly changedAt = new Map<string, number>();
  /** Renders that started before this generation are not kept (recent tags were forgotten, or all was dropped). */
  private floor = 0;
  /** Whether answers may be served and stored: SQLite when enabled; PostgreSQL while the feed listens. */
  private live = false;
  private turnCheck: Promise<boolean> | null = null;
  private readonly nextTurn = () => {
    this.turnCheck = null;
  };
  // SQLite
  private readonly feed: FeedReader | null = null;
  private lastSeen = 0;
  // PostgreSQL
  private listener: pg.Client | null = null;
  private reconnect: NodeJS.Timeout | null = null;
  private reconnectMs = RECONNECT_FIRST_MS;
  private closed = false;
  /** The PostgreSQL backend of the listening connection (tests end it to see the cache stop). */
  listenerPid: number | null = null;
  /** Lookups answered from memory, and renders (for tests and /metrics). */
  hits = 0;
  misses = 0;

  /** `maxMb` 0: never cache. */
  constructor(
    private readonly db: Db,
    maxMb: number,
  ) {
    super();
    this.entries =
      maxMb > 0
        ? new LRUCache<string, Entry>({
            maxSize: maxMb * 1024 * 1024,
            sizeCalculation: (entry, key) => key.length + ENTRY_OVERHEAD + sizeOf(entry.value) + entry.tags.length * 40,
            dispose: (entry, key) => this.unindex(key, entry),
          })
        : null;
    if (!this.entries) return;
    if (db.reader) {
      this.feed = sqliteFeedReader(db.reader);
      this.lastSeen = this.feed.latest();
      this.live = true;
    }
    const url = db.pgPool?.options.connectionString;
    if (url) void this.listen(url, db.pgPool?.options.connectionTimeoutMillis ?? 0);
  }

  /** Whether answers are served from memory now (SQLite: when enabled; PostgreSQL: while the change feed listens). */
  get caching(): boolean {
    return this.entries !== null && this.live;
  }

  get size(): number {
    return this.entries?.size ?? 0;
  }

  get bytes(): number {
    return this.entries?.calculatedSize ?? 0;
  }

  /**
   * The value kept under `key`, or what `render` makes of it (kept when nothing it read changed
   * meanwhile). `render` adds the tags of the rows it reads; an error it throws is not kept.
   */
  async get<T>(key: string, catalogueVersion: string, render: (tags: AnswerTags) => Promise<T>): Promise<T> {
    if (!this.entries) return render(new Set());
    const usable = await this.fresh();
    if (usable) {
      const hit = this.entries.get(key);
      if (hit && hit.catalogue === catalogueVersion) {
        this.hits++;
        return hit.value as T;
      }
    }
    this.misses++;
    const started = this.generation;
    const tags: AnswerTags = new Set();
    const value = await render(tags);
    if (usable && this.live && this.unchangedSince(started, tags)) {
      const entry: Entry = { value, tags: [...tags], catalogue: catalogueVersion };
      this.entries.set(key, entry);
      // A value larger than the whole cache is refused by the LRU: index only what it kept.
      if (this.entries.peek(key) === entry) for (const tag of entry.tags) this.index(tag, key);
    }
    return value;
  }

  private unchangedSince(started: number, tags: AnswerTags): boolean {
    if (started < this.floor) return false;
    for (const tag of tags) if ((this.changedAt.get(tag) ?? -1) > started) return false;
    return true;
  }

  /** Once per turn of the event loop: apply the changes committed so far; whether memory may answer. */
  private fresh(): Promise<boolean> {
    if (this.turnCheck) return this.turnCheck;
    setImmediate(this.nextTurn);
    this.turnCheck = this.feed ? Promise.resolve(this.readFeed()) : this.fence();
    return this.turnCheck;
  }

  private readFeed(): boolean {
    const rows = this.feed!.after(this.lastSeen);
    if (rows.length === 0) return true;
    // Ids follow commit order without holes, so a first id past the next one means rows were
    // pruned before this process read them (or too many to read): start afresh.
    if (rows[0]!.id !== this.lastSeen + 1 || rows.length > FEED_BATCH) {
      this.lastSeen = this.feed!.latest();
      this.clear();
      return true;
    }
    this.lastSeen = rows[rows.length - 1]!.id;
    this.drop(rows.map((r) => r.tag));
    return true;
  }

  /** PostgreSQL: a round trip on the listening connection, after which every earlier commit's notification has been applied. */
  private async fence(): Promise<boolean> {
    const client = this.listener;
    if (!this.live || !client) return false;
    try {
      await client.query('SELECT 1');
    } catch {
      return false; // the connection's 'error'/'end' handler takes it down
    }
    return this.live && this.listener === client;
  }

  /** Drops every answer carrying one of `tags` (`*`: all). */
  drop(tags: readonly string[]): void {
    if (tags.length === 0) return;
    this.generation++;
    if (tags.includes('*')) {
      this.clear();
      return;
    }
    if (this.changedAt.size + tags.length > RECENT_TAGS_MAX) {
      this.changedAt.clear();
      this.floor = this.generation;
    }
    for (const tag of tags) {
      this.changedAt.set(tag, this.generation);
      const keys = this.byTag.get(tag);
      if (!keys) continue;
      this.byTag.delete(tag);
      for (const key of keys) this.entries?.delete(key);
    }
    this.emit('invalidated', tags);
  }

  /** Drops everything. */
  clear(): void {
    this.generation++;
    this.floor = this.generation;
    this.changedAt.clear();
    this.byTag.clear();
    this.entries?.clear();
    this.emit('invalidated', ['*']);
  }

  private index(tag: string, key: string): void {
    const keys = this.byTag.get(tag);
    if (keys) keys.add(key);
    else this.byTag.set(tag, new Set([key]));
  }

  private unindex(key: string, entry: Entry): void {
    for (const tag of entry.tags) {
      const keys = this.byTag.get(tag);
      if (!keys) continue;
      keys.delete(key);
      if (keys.size === 0) this.byTag.delete(tag);
    }
  }

  private async listen(connectionString: string, timeoutMs: number): Promise<void> {
    // Its own connection, outside the pool: LISTEN holds a session for as long as the server runs.
    const client = new pg.Client({ connectionString, keepAlive: true, keepAliveInitialDelayMillis: 10_000, ...(timeoutMs > 0 ? { connectionTimeoutMillis: timeoutMs, query_timeout: timeoutMs } : {}) });
    this.listener = client;
    const down = () => {
      if (this.listener !== client) return;
      this.live = false;
      this.clear();
      this.listener = null;
      this.emit('down');
      client.removeAllListeners();
      client.on('error', () => {}); // a late socket error must not crash the process
      void client.end().catch(() => {});
      if (!this.closed) {
        this.reconnect = setTimeout(() => void this.listen(connectionString, timeoutMs), this.reconnectMs);
        this.reconnect.unref();
        this.reconnectMs = Math.min(this.reconnectMs * 2, RECONNECT_MAX_MS);
      }
    };
    client.on('error', down);
    client.on('end', down);
    const schema = this.db.pgSchema;
    client.on('notification', (n) => {
      const tags = notifiedTags(n.payload, schema);
      if (tags) this.drop(tags);
    });
    try {
      await client.connect();
      await client.query(`LISTEN ${ANSWER_CHANNEL}`);
      this.listenerPid = (await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]?.pid ?? null;
      if (this.closed || this.listener !== client) return void client.end().catch(() => {});
      // Anything rendered before the feed started may have changed unseen.
      this.clear();
      this.live = true;
      this.reconnectMs = RECONNECT_FIRST_MS;
      this.emit('live');
    } catch {
      down();
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    this.live = false;
    this.entries?.clear();
    if (this.reconnect) clearTimeout(this.reconnect);
    const client = this.listener;
    this.listener = null;
    if (client) {
      client.removeAllListeners();
      client.on('error', () => {});
      await client.end().catch(() => {});
    }
  }
}

/** Roughly what a value holds in memory: a string's characters, or its JSON's for anything else. */
function sizeOf(value: unknown): number {
  return typeof value === 'string' ? value.length : JSON.stringify(value)?.length ?? 0;
}

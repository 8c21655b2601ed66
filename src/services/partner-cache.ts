// The partner behind an api_key, for the check every API call makes (SPEC §5).
//
// Reading the partner's row on every request is a round trip to the server on PostgreSQL (half of
// what a return_services answer costs) and, on SQLite, several times what a one-number read costs.
// The cache keeps the rows it has read for as long as it can know they are current, whoever changes
// them (this server, the CLI, another instance, an operator's SQL):
//
// - PostgreSQL: a trigger on `partners` (migration 003) sends NOTIFY on every change, and a
//   dedicated listening connection empties the cache when one arrives. While that connection is
//   down, nothing is cached, so a suspension or token rotation is never missed; what remains is
//   the delivery delay of a notification, sent by PostgreSQL at commit (the tests wait for it).
// - SQLite: triggers on `partners` bump a one-row counter (migration 004), read on the read
//   connection at the first call of each turn of the event loop: when it has moved, the cache is
//   emptied. A change committed by another process is seen from the next turn on (under a
//   millisecond when idle, a few under full load), without any feed to lose.
//
// Writes made in this process (repositories/partners.ts) empty it at once, on either database.
import { EventEmitter } from 'node:events';
import pg from 'pg';
import type { Db } from '../db/database.js';
import { findPartnerByKey, listenToPartnerChanges, onPartnerWrite, partnerChangeCounter, type Partner } from '../repositories/partners.js';

/**
 * Reconnection back-off of the change feed: 0.5 s doubling to 10 s, reset once it listens again.
 * Capped low because every call reads the table while the feed is down. The pool opening a
 * connection ends the wait at once: the database is back, and after a long outage the back-off
 * alone would keep the feed down for up to 10 s more.
 */
const RECONNECT_FIRST_MS = 500;
const RECONNECT_MAX_MS = 10_000;

/** Emits `invalidated`, `live` (the change feed is listening) and `down` (it is not), for tests and logs. */
export class PartnerCache extends EventEmitter {
  private readonly rows = new Map<string, Partner>();
  /** Bumped on every invalidation: a read that started before one must not fill the cache. */
  private generation = 0;
  /** True while rows may be served from memory: on SQLite when enabled, on PostgreSQL while the change feed listens. */
  private live = false;
  private listener: pg.Client | null = null;
  private reconnect: NodeJS.Timeout | null = null;
  private reconnectMs = RECONNECT_FIRST_MS;
  private closed = false;
  /** The PostgreSQL backend of the listening connection (tests end it to see the cache stop). */
  listenerPid: number | null = null;
  private readonly stopLocal: () => void;
  private readonly databaseBack = () => {
    if (!this.reconnect || this.closed) return;
    clearTimeout(this.reconnect);
    this.reconnect = null;
    this.retry?.();
  };
  private retry: (() => void) | null = null;
  /** SQLite: the change counter of migration 004, and the value the cached rows were read under. */
  private readonly readVersion: (() => number) | null = null;
  private version: number | null = null;
  /**
   * The counter is read once per turn of the event loop, not once per call: a read transaction
   * costs more in a loaded server (locks on the WAL index) than the row it would save, and the
   * requests handled in one turn were read from their sockets together. A change committed by
   * another process is seen by every request handled from the next turn on.
   */
  private checkedThisTurn = false;
  private readonly nextTurn = () => {
    this.checkedThisTurn = false;
  };
  /** Calls answered from memory, and calls that read the table (for tests). */
  hits = 0;
  misses = 0;

  /** `enabled` false: never cache (the CLI, a pooler that does not pass notifications on, or to compare). */
  constructor(
    private readonly db: Db,
    enabled = true,
  ) {
    super();
    this.stopLocal = onPartnerWrite(() => this.invalidate());
    if (enabled && db.reader) {
      this.readVersion = partnerChangeCounter(db.reader);
      this.live = true;
    }
    // Its own connection, outside the pool: LISTEN holds a session for as long as the server runs.
    const url = db.pgPool?.options.connectionString;
    if (enabled && url) {
      const timeoutMs = db.pgPool?.options.connectionTimeoutMillis ?? 0;
      this.retry = () => void this.listen(url, timeoutMs);
      db.pgPool?.on('connect', this.databaseBack);
      this.retry();
    }
  }

  async get(apiKey: string): Promise<Partner | undefined> {
    if (this.readVersion && !this.checkedThisTurn) {
      this.checkedThisTurn = true;
      setImmediate(this.nextTurn);
      this.checkVersion();
    }
    if (this.live) {
      const hit = this.rows.get(apiKey);
      if (hit) {
        this.hits++;
        return hit;
      }
    }
    this.misses++;
    const generation = this.generation;
    const row = await findPartnerByKey(this.db, apiKey);
    // Unknown keys are not remembered: a stream of made-up keys must not grow the map.
    if (row && this.live && generation === this.generation) this.rows.set(apiKey, Object.freeze(row));
    return row;
  }

  /**
   * SQLite: empties the cache when the change counter has moved since the rows were read. A commit
   * that lands between this read and a lookup that fills the cache moves the counter too, so the
   * next turn's reading drops that row as well: no row outlives a change beyond the next reading.
   */
  private checkVersion(): void {
    const version = this.readVersion!();
    if (version !== this.version) {
      if (this.version !== null) this.invalidate();
      this.version = version;
    }
  }

  /** Whether answers may come from memory (SQLite: always, when enabled; PostgreSQL: while the change feed listens). */
  get caching(): boolean {
    return this.live;
  }

  invalidate(): void {
    this.generation++;
    this.rows.clear();
    this.emit('invalidated');
  }

  private async listen(connectionString: string, timeoutMs: number): Promise<void> {
    // keepAlive: a feed whose peer vanished without a word (no FIN, no RST) is noticed in minutes, not hours.
    const client = new pg.Client({ connectionString, keepAlive: true, keepAliveInitialDelayMillis: 10_000, ...(timeoutMs > 0 ? { connectionTimeoutMillis: timeoutMs, query_timeout: timeoutMs } : {}) });
    this.listener = client;
    const down = () => {
      if (this.listener !== client) return;
      this.live = false;
      this.invalidate();
      this.listener = null;
      this.emit('down');
      client.removeAllListeners();
      client.on('error', () => {}); // a late socket error must not crash the process
      void client.end().catch(() => {});
      if (!this.closed) {
        // While the database is away, each attempt costs it a connection: back off.
        this.reconnect = setTimeout(() => {
          this.reconnect = null;
          void this.listen(connectionString, timeoutMs);
        }, this.reconnectMs);
        this.reconnect.unref();
        this.reconnectMs = Math.min(this.reconnectMs * 2, RECONNECT_MAX_MS);
      }
    };
    client.on('error', down);
    client.on('end', down);
    client.on('notification', () => this.invalidate());
    try {
      await client.connect();
      this.listenerPid = await listenToPartnerChanges(client);
      if (this.closed || this.listener !== client) return void client.end().catch(() => {});
      // Anything cached before the feed started may have changed meanwhile.
      this.invalidate();
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
    this.rows.clear();
    this.stopLocal();
    this.db.pgPool?.off('connect', this.databaseBack);
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

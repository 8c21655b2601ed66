// The partner behind an api_key, for the check every API call makes (SPEC §5).
//
// On PostgreSQL that check is a round trip to the server on every request, half of what a
// return_services answer costs. The cache keeps the rows it has read for as long as it can know
// they are current: a trigger on `partners` (migration 003) sends NOTIFY on every change, by any
// process (the CLI, another instance, an operator's SQL), and a dedicated listening connection
// empties the cache when one arrives. While that connection is down, nothing is cached, so a
// suspension or token rotation is never missed; what remains is the delivery delay of a
// notification, sent by PostgreSQL at commit (not measured separately; the tests wait for it).
//
// Writes made in this process (repositories/partners.ts) empty it at once, without waiting for the
// notification. On SQLite there is no change feed across processes, and the lookup is a few
// microseconds from the page cache (docs/performance.md), so every call reads the table.
import { EventEmitter } from 'node:events';
import pg from 'pg';
import type { Db } from '../db/database.js';
import type { PartnerRow } from '../db/schema.js';
import { lookupPartnerByKey, onPartnerWrite } from '../repositories/partners.js';

export const PARTNER_CHANNEL = 'idsvc_partners';
const RECONNECT_MS = 1000;

/** Emits `invalidated`, `live` (the change feed is listening) and `down` (it is not), for tests and logs. */
export class PartnerCache extends EventEmitter {
  private readonly rows = new Map<string, PartnerRow>();
  /** Bumped on every invalidation: a read that started before one must not fill the cache. */
  private generation = 0;
  /** True only while the change feed is listening. */
  private live = false;
  private listener: pg.Client | null = null;
  private reconnect: NodeJS.Timeout | null = null;
  private closed = false;
  /** The PostgreSQL backend of the listening connection (tests end it to see the cache stop). */
  listenerPid: number | null = null;
  private readonly stopLocal: () => void;

  /** `enabled` false: never cache (the CLI, or a pooler that does not pass notifications on). */
  constructor(
    private readonly db: Db,
    enabled = true,
  ) {
    super();
    this.stopLocal = onPartnerWrite(() => this.invalidate());
    // Its own connection, outside the pool: LISTEN holds a session for as long as the server runs.
    const url = db.pgPool?.options.connectionString;
    if (enabled && url) void this.listen(url);
  }

  async get(apiKey: string): Promise<PartnerRow | undefined> {
    if (this.live) {
      const hit = this.rows.get(apiKey);
      if (hit) return hit;
    }
    const generation = this.generation;
    const row = await lookupPartnerByKey(this.db, apiKey);
    // Unknown keys are not remembered: a stream of made-up keys must not grow the map.
    if (row && this.live && generation === this.generation) this.rows.set(apiKey, Object.freeze(row));
    return row;
  }

  /** Whether answers may come from memory (the change feed is listening). */
  get caching(): boolean {
    return this.live;
  }

  invalidate(): void {
    this.generation++;
    this.rows.clear();
    this.emit('invalidated');
  }

  private async listen(connectionString: string): Promise<void> {
    const client = new pg.Client({ connectionString });
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
        this.reconnect = setTimeout(() => void this.listen(connectionString), RECONNECT_MS);
        this.reconnect.unref();
      }
    };
    client.on('error', down);
    client.on('end', down);
    client.on('notification', () => this.invalidate());
    try {
      await client.connect();
      await client.query(`LISTEN ${PARTNER_CHANNEL}`);
      this.listenerPid = (await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]?.pid ?? null;
      if (this.closed || this.listener !== client) return void client.end().catch(() => {});
      // Anything cached before the feed started may have changed meanwhile.
      this.invalidate();
      this.live = true;
      this.emit('live');
    } catch {
      down();
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    this.live = false;
    this.stopLocal();
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

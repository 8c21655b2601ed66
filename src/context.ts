// Everything a request handler or CLI command needs, built once per process (or per test).
import { Redis } from 'ioredis';
import type { Config } from './config.js';
import { openDatabase, migrate, type Db } from './db/database.js';
import { GroupCommit } from './db/group-commit.js';
import { systemClock, type Clock } from './domain/clock.js';
import { CatalogueCache } from './services/catalogue-cache.js';
import { PartnerCache } from './services/partner-cache.js';
import { RequestLimiter } from './services/rate-limits.js';
import { DbFailureThrottle, RedisFailureThrottle, type FailureThrottle } from './services/throttle.js';
import { countServices, upsertServices } from './repositories/catalogue.js';
import { loadCatalogueFile } from './catalogue/catalogue-file.js';
import { createMailTransport, type MailTransport } from './mail/transport.js';

export interface AppContext {
  readonly config: Config;
  readonly db: Db;
  readonly clock: Clock;
  readonly catalogue: CatalogueCache;
  /** The partner behind an api_key, kept in memory where a change feed keeps it exact. */
  readonly partners: PartnerCache;
  /** Transactions for hot writes (update_service): grouped into one commit on SQLite. */
  readonly writes: GroupCommit;
  readonly limiter: RequestLimiter;
  readonly throttle: FailureThrottle;
  readonly redis: Redis | null;
  /** Where the mail job hands queued messages: SMTP, or .eml files (src/mail/transport.ts). */
  readonly mail: MailTransport;
  close(): Promise<void>;
}

export interface ContextOptions {
  clock?: Clock;
  pgSchema?: string;
  /** How often the catalogue cache re-checks the database for operator edits (ms). */
  catalogueCheckMs?: number;
  popularityRefreshMs?: number;
}

export async function createContext(config: Config, options: ContextOptions = {}): Promise<AppContext> {
  const clock = options.clock ?? systemClock;
  const pgSchema = options.pgSchema ?? config.databaseSchema ?? undefined;
  const db = await openDatabase(config.databaseUrl, pgSchema ? { pgSchema } : {});
  await migrate(db);
  // An empty catalogue is a fresh database: load the shipped catalogue file.
  if ((await countServices(db.kysely)) === 0) await upsertServices(db.kysely, loadCatalogueFile(), clock.now());
  const partners = new PartnerCache(db, config.partnerCache);
  const redis = config.redisUrl ? new Redis(config.redisUrl, { lazyConnect: false, maxRetriesPerRequest: 2, enableOfflineQueue: true }) : null;
  const mail = createMailTransport(config);
  return {
    config,
    db,
    clock,
    catalogue: new CatalogueCache(db, clock, options.catalogueCheckMs ?? 1000, options.popularityRefreshMs ?? 60_000),
    partners,
    writes: new GroupCommit(db),
    limiter: new RequestLimiter(redis),
    throttle: redis ? new RedisFailureThrottle(redis) : new DbFailureThrottle(db, clock),
    redis,
    mail,
    async close() {
      mail.close();
      if (redis) redis.disconnect();
      await partners.close();
      await db.close();
    },
  };
}

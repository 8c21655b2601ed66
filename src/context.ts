// Everything a request handler or CLI command needs, built once per process (or per test).
import cluster from 'node:cluster';
import type { Config } from './config.js';
import { openDatabase, migrate, type Db } from './db/database.js';
import { systemClock, type Clock } from './domain/clock.js';
import { CatalogueCache } from './services/catalogue-cache.js';
import { AnswerCache } from './services/answer-cache.js';
import { PartnerCache } from './services/partner-cache.js';
import { ChangeFeed, MAX_LAG_MS } from './services/change-feed.js';
import { AfterAnswer } from './services/after-answer.js';
import { RequestLimiter } from './services/rate-limits.js';
import { UsageCounter } from './services/usage-counter.js';
import { addUsage, existingPartnerIds } from './repositories/usage.js';
import { USAGE_KEPT_MS } from './services/usage.js';
import { RedisLink } from './services/redis-link.js';
import { DbFailureThrottle, RedisFailureThrottle, type FailureThrottle } from './services/throttle.js';
import { countServices, upsertServices } from './repositories/catalogue.js';
import { loadCatalogueFile } from './catalogue/catalogue-file.js';
import { databaseStep } from './startup-errors.js';
import { createMailTransport, type MailTransport } from './mail/transport.js';
import { useProofProviders } from './verification/proof-providers.js';

export interface AppContext {
  readonly config: Config;
  readonly db: Db;
  readonly clock: Clock;
  readonly catalogue: CatalogueCache;
  /** The partner behind an api_key, kept in memory where a change feed keeps it exact. */
  readonly partners: PartnerCache;
  /** Rendered answers of the most-read people, dropped on any change to what fed them. */
  readonly answers: AnswerCache;
  readonly limiter: RequestLimiter;
  /** Partner API calls counted in memory and written in batches (the usage charts). */
  readonly usage: UsageCounter;
  readonly throttle: FailureThrottle;
  /** Redis when configured (optional: limits and throttles count in the process while it is down). */
  readonly redis: RedisLink | null;
  /** Where the mail job hands queued messages: SMTP, or .eml files (src/mail/transport.ts). */
  readonly mail: MailTransport;
  /** Work done once a request is answered, so that the answer's time tells nothing of it. */
  readonly afterAnswer: AfterAnswer;
  close(): Promise<void>;
}

/** Tasks that may wait behind the one running: far more than people asking for links at once. */
export const AFTER_ANSWER_CAPACITY = 256;

export interface ContextOptions {
  clock?: Clock;
  pgSchema?: string;
  /** How often the catalogue cache re-checks the database for operator edits (ms). */
  catalogueCheckMs?: number;
  popularityRefreshMs?: number;
  /** PostgreSQL: how old the change feed's last reading may be for a partner row to be served from memory (ms). */
  partnerMaxAgeMs?: number;
  /** PostgreSQL: how old the change feed's last reading may be for a public view to be served from memory (ms). */
  publicMaxLagMs?: number;
  /** The share of ANSWER_CACHE_MB below which the answer cache keeps every answer it renders (services/answer-cache.ts). */
  answerCacheRoom?: number;
}

export async function createContext(config: Config, options: ContextOptions = {}): Promise<AppContext> {
  const clock = options.clock ?? systemClock;
  useProofProviders(config.proofProviders);
  const pgSchema = options.pgSchema ?? config.databaseSchema ?? undefined;
  // A database that cannot be opened or migrated is reported naming DATABASE_URL (startup-errors.ts).
  const db = await databaseStep(config, () =>
    openDatabase(config.databaseUrl, {
      timeoutMs: config.databaseTimeoutMs,
      readUrls: config.databaseReadUrls,
      replicaMaxLagMs: config.databaseReadMaxLagMs,
      // The workers of `serve --workers` commit to one SQLite file side by side.
      otherWriters: cluster.isWorker,
      ...(pgSchema ? { pgSchema } : {}),
    }),
  );
  await databaseStep(config, () => migrate(db)).catch(async (err: unknown) => {
    await db.close().catch(() => {});
    throw err;
  });
  // An empty catalogue is a fresh database: load the shipped catalogue file.
  if ((await countServices(db)) === 0) await db.write((w) => upsertServices(w, loadCatalogueFile(), clock.now()));
  // One reader of the change feed for every in-memory copy, made only when one is kept.
  const feed = config.partnerCache || config.answerCacheMb > 0 ? new ChangeFeed(db) : null;
  const partners = new PartnerCache(db, feed, config.partnerCache, options.partnerMaxAgeMs);
  // Public views may lag as a shared cache's copy does, unless the operator turned shared caching off.
  const answers = new AnswerCache(
    feed,
    config.answerCacheMb,
    config.publicCacheMaxAgeSeconds > 0 ? (options.publicMaxLagMs ?? MAX_LAG_MS) : 0,
    options.answerCacheRoom,
  );
  const redis = config.redisUrl ? await RedisLink.connect(config.redisUrl, config.redisTimeoutMs) : null;
  // The first requests should count where later ones will; an unreachable Redis delays start-up by 2 s and one command timeout at most.
  await redis?.settled();
  const mail = createMailTransport(config);
  const afterAnswer = new AfterAnswer(AFTER_ANSWER_CAPACITY);
  const usage = new UsageCounter({
    clock,
    flushMs: config.usageFlushMs,
    keepMs: USAGE_KEPT_MS,
    write: (buckets) => db.write((w) => addUsage(w, buckets)),
    existingPartners: (ids) => existingPartnerIds(db, ids),
  });
  return {
    config,
    db,
    clock,
    catalogue: new CatalogueCache(db, clock, options.catalogueCheckMs ?? 1000, options.popularityRefreshMs ?? 60_000),
    partners,
    answers,
    limiter: new RequestLimiter(redis),
    usage,
    throttle: redis ? new RedisFailureThrottle(redis) : new DbFailureThrottle(db, clock),
    redis,
    mail,
    afterAnswer,
    async close() {
      // What answered requests started still needs the database.
      await afterAnswer.idle();
      // The calls counted since the last flush: written before the database closes.
      await usage.close();
      mail.close();
      redis?.close();
      partners.close();
      answers.close();
      await db.close();
    },
  };
}

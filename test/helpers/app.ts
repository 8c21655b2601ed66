// Builds the real app against a real database for a test: SQLite in a temp file by default, or
// PostgreSQL in a schema of its own when TEST_DB=postgres (DATABASE_URL, default the local server).
// Log lines are captured so tests can check what was (and was not) logged.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import pg from 'pg';
import { buildApp, type AppOptions } from '../../src/app.js';
import { loadConfig, type Config } from '../../src/config.js';
import { createContext, type AppContext, type ContextOptions } from '../../src/context.js';
import { ManualClock } from '../../src/domain/clock.js';
import { createPartner, type NewPartner } from '../../src/repositories/partners.js';
import { createUser } from '../../src/services/orphan-subjects.js';
import { MAX_LAG_MS } from '../../src/services/change-feed.js';
import { hashPassword } from '../../src/domain/passwords.js';
import { IdsvcClient, IdsvcError } from '@idsvc/client';
import { copySqliteTemplate, PG_TEMPLATE, preparePgSchema, TEST_START } from './template-db.js';

export const TEST_DB = process.env.TEST_DB === 'postgres' ? 'postgres' : 'sqlite';

/**
 * Waits out the change feed's lag on PostgreSQL (MAX_LAG_MS, with a margin since a timer may fire a
 * little early): a copy that may lag (partner rows, public views) then shows what was committed
 * before the wait by another process, or needs a reading of its own.
 */
export const pastFeedLag = (): Promise<void> => new Promise((r) => setTimeout(r, MAX_LAG_MS + 50));
export const PG_URL = process.env.TEST_DATABASE_URL ?? 'postgres://root@127.0.0.1:5432/test';

let counter = 0;

export interface TestApp {
  app: FastifyInstance;
  ctx: AppContext;
  clock: ManualClock;
  baseUrl: string;
  logs: string[];
  config: Config;
  /** Environment for a CLI process that should use this test's database. */
  cliEnv: Record<string, string>;
  partner(input?: Partial<NewPartner>): Promise<{ id: number; apiKey: string; apiToken: string; client: IdsvcClient; publicClient: IdsvcClient }>;
  /** An account as the operator creates it: proven unless `proven: false`. */
  user(input: {
    email: string;
    userId: string;
    password?: string;
    optedIn?: boolean;
    proven?: boolean;
    discoverable?: boolean;
  }): Promise<{ id: number; userId: string; password: string }>;
  close(): Promise<void>;
}

export async function startTestApp(
  env: Record<string, string> = {},
  appOptions: AppOptions = {},
  contextOptions: Pick<ContextOptions, 'catalogueCheckMs' | 'partnerMaxAgeMs' | 'publicMaxLagMs' | 'answerCacheRoom'> = {},
): Promise<TestApp> {
  const id = `${process.pid}_${++counter}_${Math.random().toString(36).slice(2, 8)}`;
  let databaseUrl: string;
  let pgSchema: string | undefined;
  let tmpDir: string | undefined;
  // An instance started with another's cliEnv shares its database and leaves it to the owner.
  const shared = env.DATABASE_URL !== undefined;
  if (shared) {
    databaseUrl = env.DATABASE_URL!;
    if (env.DATABASE_SCHEMA) pgSchema = env.DATABASE_SCHEMA;
  } else if (TEST_DB === 'postgres') {
    databaseUrl = PG_URL;
    pgSchema = `t_${id}`;
    // A database of its own, as a first start leaves it (template-db.ts).
    if (PG_TEMPLATE) await preparePgSchema(databaseUrl, pgSchema);
  } else {
    tmpDir = fs.mkdtempSync(path.join(os.tmpdir(), 'idsvc-test-'));
    const file = path.join(tmpDir, 'test.sqlite');
    await copySqliteTemplate(file);
    databaseUrl = `sqlite:${file}`;
  }
  // Mail without an SMTP relay is written as files: never into the checkout's ./data.
  const mailDir = fs.mkdtempSync(path.join(os.tmpdir(), 'idsvc-mail-'));
  // Password hashes at argon2's lowest cost: the suite creates hundreds of accounts. The test of
  // the SPEC's parameters (test/site/security.test.ts) turns this off.
  const config = loadConfig({
    DATABASE_URL: databaseUrl,
    LOG_LEVEL: 'info',
    BACKGROUND_JOBS: '0',
    PORT: '0',
    FETCH_ALLOW_PRIVATE: '1',
    MAIL_DIR: mailDir,
    IDSVC_TEST_ARGON2_MINIMUM: '1',
    ...env,
  });
  const clock = new ManualClock(TEST_START);
  const ctx = await createContext(config, { clock, catalogueCheckMs: 0, popularityRefreshMs: 0, ...contextOptions, ...(pgSchema ? { pgSchema } : {}) });
  const logs: string[] = [];
  const logStream = new Writable({
    write(chunk: Buffer, _enc, cb) {
      logs.push(chunk.toString('utf8'));
      cb();
    },
  });
  const app = await buildApp(ctx, { logStream, ...appOptions });
  await app.listen({ port: config.port, host: '127.0.0.1' });
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  const baseUrl = `http://127.0.0.1:${port}`;

  return {
    app,
    ctx,
    clock,
    baseUrl,
    logs,
    config,
    cliEnv: {
      DATABASE_URL: databaseUrl,
      ...(pgSchema ? { DATABASE_SCHEMA: pgSchema } : {}),
      LOG_LEVEL: 'warn',
      IDSVC_TEST_ARGON2_MINIMUM: config.argon2Cost === 'test-minimum' ? '1' : '0',
      // The server's public address, as an operator runs the CLI with the server's settings.
      BASE_URL: config.baseUrl,
    },
    async partner(input = {}) {
      const created = await ctx.db.write((w) => createPartner(w, { name: 'Test partner', ...input }, clock.now()));
      return {
        id: created.partner.id,
        apiKey: created.apiKey,
        apiToken: created.apiToken,
        client: new IdsvcClient({ baseUrl, apiKey: created.apiKey, apiToken: created.apiToken }),
        publicClient: new IdsvcClient({ baseUrl, apiKey: created.apiKey }),
      };
    },
    async user({ email, userId, password = 'correct horse battery', optedIn = true, proven = true, discoverable = false }) {
      const u = await createUser(
        ctx.db,
        { email, userId, passwordHash: await hashPassword(password, config.argon2Cost), optedIn, proven, discoverable },
        clock.now(),
      );
      return { id: u.id, userId: u.user_id, password };
    },
    async close() {
      await app.close();
      await ctx.close();
      if (pgSchema && !shared) {
        const c = new pg.Client({ connectionString: PG_URL });
        await c.connect();
        await c.query(`DROP SCHEMA IF EXISTS ${pgSchema} CASCADE`);
        await c.end();
      }
      if (tmpDir) fs.rmSync(tmpDir, { recursive: true, force: true });
      fs.rmSync(mailDir, { recursive: true, force: true });
    },
  };
}

/** What a client call came to: 'ok', or the SPEC error code it was refused with. */
export async function errorCode(call: Promise<unknown>): Promise<string> {
  try {
    await call;
    return 'ok';
  } catch (e) {
    if (e instanceof IdsvcError) return e.code;
    throw e;
  }
}

/** A fetch with the given body encoded as a form, the way old clients call. */
export async function postForm(url: string, fields: Record<string, string>, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(url, { method: 'POST', body: new URLSearchParams(fields), headers });
}

/** Checks out every connection of the app's PostgreSQL pool: a statement sent through it waits until `release`. */
export async function occupyPool(app: TestApp): Promise<{ release: () => void }> {
  const pool = app.ctx.db.pgPool!;
  const held = await Promise.all(Array.from({ length: pool.options.max }, () => pool.connect()));
  return {
    release: () => {
      for (const c of held) c.release();
    },
  };
}

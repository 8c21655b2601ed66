// Configuration is read once, validated, and frozen: a bad value stops start-up with a message
// that names the variable, instead of surfacing later as a confusing runtime fault.
import path from 'node:path';
import { projectRoot } from './paths.js';

export type LogLevel = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';

export interface Config {
  readonly port: number;
  readonly host: string;
  readonly baseUrl: string;
  readonly databaseUrl: string;
  /** PostgreSQL schema to use instead of the connection's default (created when missing). */
  readonly databaseSchema: string | null;
  /** PostgreSQL: the longest wait for a connection or a statement's answer before a call answers `unavailable`. */
  readonly databaseTimeoutMs: number;
  readonly redisUrl: string | null;
  readonly logLevel: LogLevel;
  readonly trustProxy: boolean | number | string;
  readonly fetchAllowPrivate: boolean;
  /** How long a rotated-out api_token keeps working. */
  readonly tokenGraceSeconds: number;
  readonly rateLimitPerKeyPerMinute: number;
  readonly rateLimitPerAddressPerMinute: number;
  readonly syncFailuresPerAccount: number;
  readonly syncFailuresPerPartnerAddress: number;
  readonly syncFailureWindowSeconds: number;
  /** Background workers (webhook delivery, re-verification); off in tests that drive them by hand. */
  readonly backgroundJobs: boolean;
  /** SQLite: how often a worker thread copies the WAL back into the database file (db/checkpointer.ts); 0 leaves it to the writer. */
  readonly sqliteCheckpointMs: number;
  /** Keep partner rows in memory, emptied on any change (services/partner-cache.ts). */
  readonly partnerCache: boolean;
  readonly nodeEnv: string;
}

export class ConfigError extends Error {
  constructor(readonly variable: string, problem: string) {
    super(`Invalid configuration: ${variable} ${problem}`);
  }
}

type Env = Record<string, string | undefined>;

function intVar(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!/^\d+$/.test(raw.trim())) throw new ConfigError(name, `must be a whole number, got "${raw}"`);
  const value = Number(raw.trim());
  if (value < min || value > max) throw new ConfigError(name, `must be between ${min} and ${max}, got ${value}`);
  return value;
}

function boolVar(env: Env, name: string, fallback: boolean): boolean {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const v = raw.trim().toLowerCase();
  if (['1', 'true', 'yes', 'on'].includes(v)) return true;
  if (['0', 'false', 'no', 'off'].includes(v)) return false;
  throw new ConfigError(name, `must be 1/0, true/false, yes/no or on/off, got "${raw}"`);
}

const LOG_LEVELS: readonly LogLevel[] = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

function databaseUrlVar(env: Env): string {
  const raw = env.DATABASE_URL?.trim();
  if (!raw) return `sqlite:${path.join(projectRoot, 'data', 'idsvc.sqlite')}`;
  if (raw.startsWith('sqlite:')) {
    const file = raw.slice('sqlite:'.length);
    if (!file) throw new ConfigError('DATABASE_URL', 'sqlite: needs a file path or :memory:');
    return raw;
  }
  if (/^postgres(ql)?:\/\//.test(raw)) {
    try {
      new URL(raw);
    } catch {
      throw new ConfigError('DATABASE_URL', 'is not a valid postgres:// URL');
    }
    return raw;
  }
  throw new ConfigError('DATABASE_URL', 'must start with sqlite: or postgres://');
}

function schemaVar(env: Env): string | null {
  const raw = env.DATABASE_SCHEMA?.trim();
  if (!raw) return null;
  if (!/^[a-z_][a-z0-9_]{0,62}$/.test(raw)) throw new ConfigError('DATABASE_SCHEMA', 'must be a lower-case SQL identifier ([a-z_][a-z0-9_]*)');
  return raw;
}

function trustProxyVar(env: Env): boolean | number | string {
  const raw = env.TRUST_PROXY?.trim();
  if (!raw) return false;
  if (/^\d+$/.test(raw)) return Number(raw); // number of hops
  if (['true', 'false', '1', '0', 'yes', 'no'].includes(raw.toLowerCase())) return boolVar(env, 'TRUST_PROXY', false);
  return raw; // comma-separated addresses or CIDRs, as Fastify accepts
}

export function loadConfig(env: Env = process.env): Config {
  const port = intVar(env, 'PORT', 8080, 0, 65535);
  const host = env.HOST?.trim() || '127.0.0.1';
  const rawBase = env.BASE_URL?.trim() || `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
  let baseUrl: string;
  try {
    const u = new URL(rawBase);
    if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new Error('scheme');
    baseUrl = u.toString().replace(/\/+$/, '');
  } catch {
    throw new ConfigError('BASE_URL', `must be an http(s) URL, got "${rawBase}"`);
  }
  const logLevel = (env.LOG_LEVEL?.trim().toLowerCase() || 'info') as LogLevel;
  if (!LOG_LEVELS.includes(logLevel)) throw new ConfigError('LOG_LEVEL', `must be one of ${LOG_LEVELS.join(', ')}`);
  const redisUrl = env.REDIS_URL?.trim() || null;
  if (redisUrl && !/^rediss?:\/\//.test(redisUrl)) throw new ConfigError('REDIS_URL', 'must start with redis:// or rediss://');

  return Object.freeze({
    port,
    host,
    baseUrl,
    databaseUrl: databaseUrlVar(env),
    databaseSchema: schemaVar(env),
    databaseTimeoutMs: intVar(env, 'DATABASE_TIMEOUT_MS', 5000, 100, 600_000),
    redisUrl,
    logLevel,
    trustProxy: trustProxyVar(env),
    fetchAllowPrivate: boolVar(env, 'FETCH_ALLOW_PRIVATE', false),
    tokenGraceSeconds: intVar(env, 'TOKEN_GRACE_SECONDS', 24 * 3600, 0, 365 * 24 * 3600),
    rateLimitPerKeyPerMinute: intVar(env, 'RATE_LIMIT_PER_KEY', 6000, 1, 100_000_000),
    rateLimitPerAddressPerMinute: intVar(env, 'RATE_LIMIT_PER_ADDRESS', 600, 1, 100_000_000),
    syncFailuresPerAccount: intVar(env, 'SYNC_FAILURES_PER_ACCOUNT', 5, 1, 1_000_000),
    syncFailuresPerPartnerAddress: intVar(env, 'SYNC_FAILURES_PER_PARTNER_ADDRESS', 20, 1, 1_000_000),
    syncFailureWindowSeconds: intVar(env, 'SYNC_FAILURE_WINDOW_SECONDS', 15 * 60, 1, 24 * 3600),
    backgroundJobs: boolVar(env, 'BACKGROUND_JOBS', true),
    sqliteCheckpointMs: intVar(env, 'SQLITE_CHECKPOINT_MS', 500, 0, 60_000),
    partnerCache: boolVar(env, 'PARTNER_CACHE', true),
    nodeEnv: env.NODE_ENV?.trim() || 'development',
  });
}

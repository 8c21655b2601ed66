// Configuration is read once, validated, and frozen: a bad value stops start-up with a message
// that names the variable, instead of surfacing later as a confusing runtime fault.
import { withoutTrailingSlashes } from './domain/slashes.js';
import { isIP } from 'node:net';
import path from 'node:path';
import proxyAddr from '@fastify/proxy-addr';
import addressparser from 'nodemailer/lib/addressparser';
import { ProviderConfigError, providerSettingsFromEnv, type ProviderSettings } from './connections/providers.js';
import { DEFAULT_PROOFS_PATH, loadProofProviders, type ProofProvider } from './verification/proof-providers.js';

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
  /** PostgreSQL read replicas for the reads that may be slightly behind (DATABASE_READ_URL, comma-separated). */
  readonly databaseReadUrls: readonly string[];
  /** How far behind (ms) a replica may be and still take reads. */
  readonly databaseReadMaxLagMs: number;
  readonly redisUrl: string | null;
  /** The longest one Redis command is waited for before counting in the process instead. */
  readonly redisTimeoutMs: number;
  readonly logLevel: LogLevel;
  /** false, true (every proxy), a number of proxy hops, or comma-separated addresses/CIDRs (docs/operations.md). */
  readonly trustProxy: boolean | number | string;
  /** With it, /metrics on the public port answers a request bearing it (Authorization: Bearer); without it, 404 there. */
  readonly metricsToken: string | null;
  /** A second listener on 127.0.0.1 serving only /metrics, without a token; 0 picks a free port (logged). */
  readonly metricsPort: number | null;
  readonly fetchAllowPrivate: boolean;
  /** Requests one instance's verification checks send to one host in any minute (docs/verification.md). */
  readonly verifyHostRequestsPerMinute: number;
  /** How long a definite negative must stand, checked again, before it removes a verified mark. */
  readonly verifyConfirmAfterMs: number;
  /** The longest one verification fetch or DNS query may take. */
  readonly verifyTimeoutMs: number;
  /** DNS servers (host:port) the `dns` and `atproto` checks ask; empty: the system's. */
  readonly dnsServers: readonly string[];
  /** The did:plc directory; replaceable only outside production (tests, development). */
  readonly plcDirectoryUrl: string;
  /** How long a rotated-out api_token keeps working. */
  readonly tokenGraceSeconds: number;
  /** How long a rotated-out webhook secret keeps signing deliveries, beside the new one. */
  readonly webhookSecretGraceSeconds: number;
  /** A key's budget for calls with proof (api_token or a signed URL); a partner may have its own. */
  readonly rateLimitPerKeyPerMinute: number;
  /** A key's separate budget for calls with the public key alone, so they cannot use up the proven one. */
  readonly rateLimitPerKeyUnprovenPerMinute: number;
  readonly rateLimitPerAddressPerMinute: number;
  /** sync_user/unsync_user failures for one account from one partner and end-user address: the low limit. */
  readonly syncFailuresPerAccountAddress: number;
  /** Failures for one account from everywhere: the high ceiling that stops a distributed attack. */
  /** WebFinger and /u/{userId} requests a minute per client address: they map e-mail addresses and userIds to people. */
  readonly siteReadsPerAddressPerMinute: number;
  readonly syncFailuresPerAccount: number;
  readonly syncFailuresPerPartnerAddress: number;
  readonly syncFailureWindowSeconds: number;
  /** Background workers (webhook delivery, re-verification); off in tests that drive them by hand. */
  readonly backgroundJobs: boolean;
  /** SQLite: how often a worker thread copies the WAL back into the database file (db/checkpointer.ts); 0 leaves it to the writer. */
  readonly sqliteCheckpointMs: number;
  /** Keep partner rows in memory, emptied on any change (services/partner-cache.ts). */
  readonly partnerCache: boolean;
  /** Count partner API calls by operation, status and budget use, hourly, for the usage charts (services/usage-counter.ts). */
  readonly usageCounting: boolean;
  /** How often a server writes the calls it counted (ms): what a crash can lose at most. */
  readonly usageFlushMs: number;
  /** Memory for rendered answers of the most-read people, in MB; 0 turns the answer cache off (services/answer-cache.ts). */
  readonly answerCacheMb: number;
  /** How long a shared cache (CDN, caching proxy) may serve a public answer without asking again (http/cache-headers.ts); 0: it must ask each time. */
  readonly publicCacheMaxAgeSeconds: number;
  /** How much longer it may serve that answer while it asks again in the background. */
  readonly publicCacheStaleSeconds: number;
  /** The service's name as people see it: in mails (subject, sender, text). */
  readonly siteName: string;
  /** `smtp://` or `smtps://` relay for outgoing mail; null writes each message as an .eml file under mailDir. */
  readonly smtpUrl: string | null;
  readonly smtpUser: string | null;
  readonly smtpPassword: string | null;
  /** The From header of every mail. */
  readonly mailFrom: string;
  /** Where messages are written when no SMTP relay is configured. */
  readonly mailDir: string;
  /** The longest a client may take to send a request's headers (Node's headersTimeout); also how long a connection may stay open without a request. */
  readonly headersTimeoutMs: number;
  /** The longest a client may take to send a whole request, body included (Node's requestTimeout); also the longest a connection may sit with nothing sent either way. */
  readonly requestTimeoutMs: number;
  /** How long a kept-alive connection may wait idle for its next request. */
  readonly keepAliveTimeoutMs: number;
  /** Open connections one peer address may hold; past it a request is answered `rate_limited` and its connection closed. 0: no cap. */
  readonly connectionsPerAddress: number;
  readonly nodeEnv: string;
  /** IDSVC_DEMO: a first start creates a demo partner even when NODE_ENV is production (`serve --demo` too). */
  readonly demo: boolean;
  /** How costly password hashes are: the SPEC's argon2id parameters, or (IDSVC_TEST_ARGON2_MINIMUM, test suites only) the cheapest. */
  readonly argon2Cost: Argon2Cost;
  /** The proof providers (PROOF_PROVIDERS, default catalogue/proofs.json), validated at start-up. */
  readonly proofProviders: readonly ProofProvider[];
  /**
   * IDSVC_TEST_PROOF_ORIGINS, tests and development only: a service's real origin → a local server
   * answering in its shape, e.g. `https://api.github.com=http://127.0.0.1:5000`, for the proof reads and
   * the rel="me" reads of profile pages alike. Never request input.
   */
  readonly proofOrigins: ReadonlyMap<string, string>;
  /** The sign-in providers configured (connections/providers.ts); an unconfigured one is not offered. */
  readonly providers: readonly ProviderSettings[];
}

export type Argon2Cost = 'spec' | 'test-minimum';

export class ConfigError extends Error {
  constructor(
    readonly variable: string,
    problem: string,
  ) {
    super(`Invalid configuration: ${variable} ${problem}`);
  }
}

export type Env = Record<string, string | undefined>;

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

/** The schemes a PostgreSQL connection URL may start with (node-postgres takes both). */
const POSTGRES_SCHEME = /^postgres(ql)?:\/\//;

function databaseUrlVar(env: Env): string {
  const raw = env.DATABASE_URL?.trim();
  // ./data of the directory the command runs in: a checkout's root under `npm start`, and a
  // directory the operator chose (never node_modules) when installed.
  if (!raw) return `sqlite:${path.resolve('data', 'idsvc.sqlite')}`;
  if (raw.startsWith('sqlite:')) {
    const file = raw.slice('sqlite:'.length);
    if (!file) throw new ConfigError('DATABASE_URL', 'sqlite: needs a file path or :memory:');
    return raw;
  }
  if (POSTGRES_SCHEME.test(raw)) {
    if (!isUrl(raw)) throw new ConfigError('DATABASE_URL', 'is not a valid postgres:// URL');
    return raw;
  }
  throw new ConfigError('DATABASE_URL', 'must start with sqlite: or postgres://');
}

function isUrl(raw: string): boolean {
  try {
    new URL(raw);
    return true;
  } catch {
    return false;
  }
}

function readUrlsVar(env: Env, databaseUrl: string): string[] {
  const raw = env.DATABASE_READ_URL?.trim();
  if (!raw) return [];
  if (databaseUrl.startsWith('sqlite:')) throw new ConfigError('DATABASE_READ_URL', 'needs DATABASE_URL to be a postgres:// URL (SQLite has no replicas)');
  return raw.split(',').map((part, i) => {
    const url = part.trim();
    // The position only: the URL may hold a password.
    if (!POSTGRES_SCHEME.test(url) || !isUrl(url)) throw new ConfigError('DATABASE_READ_URL', `entry ${i + 1} is not a valid postgres:// URL`);
    return url;
  });
}

function schemaVar(env: Env): string | null {
  const raw = env.DATABASE_SCHEMA?.trim();
  if (!raw) return null;
  if (!/^[a-z_][a-z0-9_]{0,62}$/.test(raw)) throw new ConfigError('DATABASE_SCHEMA', 'must be a lower-case SQL identifier ([a-z_][a-z0-9_]*)');
  return raw;
}

const TRUST_PROXY_FORMS = 'on/off (or true/false, yes/no), a number of proxy hops, or comma-separated addresses/CIDRs of the trusted proxies';

function trustProxyVar(env: Env): boolean | number | string {
  const raw = env.TRUST_PROXY?.trim();
  if (!raw) return false;
  // A whole number counts hops: 0 trusts none (off), 1 the one proxy in front of the server. So `1`
  // turns trust on like the other booleans, but only as far as the nearest proxy.
  if (/^\d+$/.test(raw)) {
    const hops = intVar(env, 'TRUST_PROXY', 0, 0, 100);
    return hops === 0 ? false : hops;
  }
  if (['true', 'false', 'yes', 'no', 'on', 'off'].includes(raw.toLowerCase())) return boolVar(env, 'TRUST_PROXY', false);
  // Checked here with the parser Fastify uses, so a typo stops start-up naming the variable.
  const list = raw.split(',').map((s) => s.trim());
  try {
    if (list.includes('')) throw new Error('an empty entry');
    proxyAddr.compile(list);
  } catch (e) {
    throw new ConfigError('TRUST_PROXY', `must be ${TRUST_PROXY_FORMS}: ${e instanceof Error ? e.message : String(e)}`);
  }
  return list.join(',');
}

function metricsTokenVar(env: Env): string | null {
  const raw = env.METRICS_TOKEN;
  if (raw === undefined || raw === '') return null;
  // Sent as a bearer token by a scraper: printable, no spaces, and long enough not to be guessed.
  if (!/^[\x21-\x7e]{16,512}$/.test(raw)) throw new ConfigError('METRICS_TOKEN', 'must be 16 to 512 printable characters without spaces');
  return raw;
}

function siteNameVar(env: Env): string {
  const raw = env.SITE_NAME?.trim() || 'idsvc';
  if (raw.length > 64 || /[\u0000-\u001F\u007F<>"]/.test(raw))
    throw new ConfigError('SITE_NAME', 'must be at most 64 characters, without control characters, <, > or "');
  return raw;
}

interface MailVars {
  smtpUrl: string | null;
  smtpUser: string | null;
  smtpPassword: string | null;
  mailFrom: string;
  mailDir: string;
}

function mailVars(env: Env, baseUrl: string, siteName: string): MailVars {
  const smtpUrl = env.SMTP_URL?.trim() || null;
  if (smtpUrl) {
    let u: URL;
    try {
      u = new URL(smtpUrl);
    } catch {
      throw new ConfigError('SMTP_URL', 'is not a valid URL; use smtp://host:587 or smtps://host:465');
    }
    if (u.protocol !== 'smtp:' && u.protocol !== 'smtps:') throw new ConfigError('SMTP_URL', `must start with smtp:// or smtps://, got ${u.protocol}//`);
    if (!u.hostname) throw new ConfigError('SMTP_URL', 'names no host');
  }
  const smtpUser = env.SMTP_USER?.trim() || null;
  // A password may legitimately start or end with spaces: taken as given.
  const smtpPassword = env.SMTP_PASSWORD === undefined || env.SMTP_PASSWORD === '' ? null : env.SMTP_PASSWORD;
  if (smtpUser && smtpPassword === null) throw new ConfigError('SMTP_PASSWORD', 'must be set when SMTP_USER is');
  if (!smtpUser && smtpPassword !== null) throw new ConfigError('SMTP_USER', 'must be set when SMTP_PASSWORD is');
  if (smtpUser && !smtpUrl) throw new ConfigError('SMTP_URL', 'must be set when SMTP_USER is (credentials without a relay would be ignored)');
  const host = new URL(baseUrl).hostname.replace(/^\[|\]$/g, '');
  // An IP literal makes a poor mail domain: a local install signs as localhost.
  const fallbackFrom = `"${siteName}" <no-reply@${isIP(host) !== 0 ? 'localhost' : host}>`;
  const mailFrom = env.MAIL_FROM?.trim() || fallbackFrom;
  const parsed = addressparser(mailFrom, { flatten: true });
  if (parsed.length !== 1 || !/^[^\s@]+@[^\s@]+$/.test(parsed[0]?.address ?? '')) {
    throw new ConfigError('MAIL_FROM', 'must be one address, like "Name <no-reply@example.org>" or no-reply@example.org');
  }
  const mailDir = path.resolve(env.MAIL_DIR?.trim() || path.join('data', 'mail'));
  return { smtpUrl, smtpUser, smtpPassword, mailFrom, mailDir };
}

// Cheap hashes let a test suite create hundreds of accounts; a server holding real passwords must
// never store them so, so production refuses the setting rather than ignoring it.
function argon2CostVar(env: Env): Argon2Cost {
  if (!boolVar(env, 'IDSVC_TEST_ARGON2_MINIMUM', false)) return 'spec';
  if (env.NODE_ENV?.trim() === 'production')
    throw new ConfigError('IDSVC_TEST_ARGON2_MINIMUM', 'is for test suites only and may not be set when NODE_ENV is production');
  return 'test-minimum';
}

function proofProvidersVar(env: Env): ProofProvider[] {
  const file = env.PROOF_PROVIDERS?.trim() || DEFAULT_PROOFS_PATH;
  try {
    return loadProofProviders(file);
  } catch (err) {
    throw new ConfigError('PROOF_PROVIDERS', `names a file that cannot be used: ${(err as Error).message}`);
  }
}

// Replacing where a proof is read from would let anyone who sets it verify any identity, so a
// production server refuses the setting rather than ignoring it.
function proofOriginsVar(env: Env): Map<string, string> {
  const raw = env.IDSVC_TEST_PROOF_ORIGINS?.trim() ?? '';
  const map = new Map<string, string>();
  if (raw === '') return map;
  if (env.NODE_ENV?.trim() === 'production')
    throw new ConfigError('IDSVC_TEST_PROOF_ORIGINS', 'is for tests and development only and may not be set when NODE_ENV is production');
  for (const pair of raw.split(/[\s,]+/).filter(Boolean)) {
    const eq = pair.indexOf('=');
    let from: URL;
    let to: URL;
    try {
      from = new URL(pair.slice(0, eq));
      to = new URL(pair.slice(eq + 1));
    } catch {
      throw new ConfigError('IDSVC_TEST_PROOF_ORIGINS', `must be origin=origin pairs separated by commas, got "${pair.slice(0, 100)}"`);
    }
    map.set(from.origin, to.origin);
  }
  return map;
}

// host:port, an IPv4 address or a bracketed IPv6 one, as node:dns setServers() takes them.
function dnsServersVar(env: Env): string[] {
  const raw = env.DNS_SERVERS?.trim() ?? '';
  if (raw === '') return [];
  const servers = raw
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
  for (const s of servers) {
    const m = /^(\d{1,3}(?:\.\d{1,3}){3}|\[[0-9a-fA-F:.]{2,45}\])(?::(\d{1,5}))?$/.exec(s);
    if (!m || (m[2] !== undefined && Number(m[2]) > 65535))
      throw new ConfigError('DNS_SERVERS', `must be a comma-separated list of IP addresses with an optional :port, got "${s}"`);
  }
  return servers;
}

// A third party's base URL: only a test or development set-up may point it elsewhere.
function plcDirectoryVar(env: Env): string {
  const fallback = 'https://plc.directory';
  const raw = env.PLC_DIRECTORY_URL?.trim() ?? '';
  if (raw === '') return fallback;
  if (env.NODE_ENV?.trim() === 'production')
    throw new ConfigError('PLC_DIRECTORY_URL', 'is for tests and development only and may not be set when NODE_ENV is production');
  try {
    const u = new URL(raw);
    if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new Error('scheme');
    return withoutTrailingSlashes(u.toString());
  } catch {
    throw new ConfigError('PLC_DIRECTORY_URL', `must be an http(s) URL, got "${raw}"`);
  }
}

function providersVar(env: Env): ProviderSettings[] {
  try {
    return providerSettingsFromEnv(env, env.NODE_ENV?.trim() || 'development');
  } catch (e) {
    if (e instanceof ProviderConfigError) throw new ConfigError(e.variable, e.message);
    throw e;
  }
}

export function loadConfig(env: Env = process.env): Config {
  const port = intVar(env, 'PORT', 8080, 0, 65535);
  const host = env.HOST?.trim() || '127.0.0.1';
  const rawBase = env.BASE_URL?.trim() || `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
  let baseUrl: string;
  try {
    const u = new URL(rawBase);
    if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new Error('scheme');
    baseUrl = withoutTrailingSlashes(u.toString());
  } catch {
    // Unset, BASE_URL is made from HOST: then HOST is the value to change.
    if (!env.BASE_URL?.trim()) throw new ConfigError('HOST', `must be an IP address or a host name, got "${host}"`);
    throw new ConfigError('BASE_URL', `must be an http(s) URL, got "${rawBase}"`);
  }
  const logLevel = (env.LOG_LEVEL?.trim().toLowerCase() || 'info') as LogLevel;
  if (!LOG_LEVELS.includes(logLevel)) throw new ConfigError('LOG_LEVEL', `must be one of ${LOG_LEVELS.join(', ')}`);
  const redisUrl = env.REDIS_URL?.trim() || null;
  if (redisUrl && !/^rediss?:\/\//.test(redisUrl)) throw new ConfigError('REDIS_URL', 'must start with redis:// or rediss://');
  const siteName = siteNameVar(env);
  const headersTimeoutMs = intVar(env, 'HEADERS_TIMEOUT_MS', 10_000, 100, 600_000);
  const requestTimeoutMs = intVar(env, 'REQUEST_TIMEOUT_MS', 30_000, 100, 3_600_000);
  // Node refuses a headers timeout longer than the request's, which includes the headers.
  if (headersTimeoutMs > requestTimeoutMs) throw new ConfigError('HEADERS_TIMEOUT_MS', `must not be longer than REQUEST_TIMEOUT_MS (${requestTimeoutMs})`);

  const databaseUrl = databaseUrlVar(env);
  return Object.freeze({
    port,
    host,
    baseUrl,
    databaseUrl,
    databaseSchema: schemaVar(env),
    databaseTimeoutMs: intVar(env, 'DATABASE_TIMEOUT_MS', 5000, 100, 600_000),
    databaseReadUrls: readUrlsVar(env, databaseUrl),
    databaseReadMaxLagMs: intVar(env, 'DATABASE_READ_MAX_LAG_MS', 5000, 0, 3_600_000),
    redisUrl,
    redisTimeoutMs: intVar(env, 'REDIS_TIMEOUT_MS', 500, 10, 60_000),
    logLevel,
    trustProxy: trustProxyVar(env),
    metricsToken: metricsTokenVar(env),
    metricsPort: env.METRICS_PORT === undefined || env.METRICS_PORT.trim() === '' ? null : intVar(env, 'METRICS_PORT', 0, 0, 65535),
    fetchAllowPrivate: boolVar(env, 'FETCH_ALLOW_PRIVATE', false),
    verifyHostRequestsPerMinute: intVar(env, 'VERIFY_HOST_REQUESTS_PER_MINUTE', 30, 1, 100_000),
    verifyConfirmAfterMs: intVar(env, 'VERIFY_CONFIRM_AFTER_SECONDS', 3600, 0, 30 * 24 * 3600) * 1000,
    verifyTimeoutMs: intVar(env, 'VERIFY_TIMEOUT_MS', 10_000, 100, 60_000),
    dnsServers: dnsServersVar(env),
    plcDirectoryUrl: plcDirectoryVar(env),
    tokenGraceSeconds: intVar(env, 'TOKEN_GRACE_SECONDS', 24 * 3600, 0, 365 * 24 * 3600),
    webhookSecretGraceSeconds: intVar(env, 'WEBHOOK_SECRET_GRACE_SECONDS', 24 * 3600, 0, 365 * 24 * 3600),
    rateLimitPerKeyPerMinute: intVar(env, 'RATE_LIMIT_PER_KEY', 6000, 1, 100_000_000),
    rateLimitPerKeyUnprovenPerMinute: intVar(env, 'RATE_LIMIT_PER_KEY_UNPROVEN', 6000, 1, 100_000_000),
    rateLimitPerAddressPerMinute: intVar(env, 'RATE_LIMIT_PER_ADDRESS', 600, 1, 100_000_000),
    syncFailuresPerAccountAddress: intVar(env, 'SYNC_FAILURES_PER_ACCOUNT_ADDRESS', 5, 1, 1_000_000),
    syncFailuresPerAccount: intVar(env, 'SYNC_FAILURES_PER_ACCOUNT', 50, 1, 1_000_000),
    siteReadsPerAddressPerMinute: intVar(env, 'SITE_READS_PER_ADDRESS', 120, 1, 100_000_000),
    syncFailuresPerPartnerAddress: intVar(env, 'SYNC_FAILURES_PER_PARTNER_ADDRESS', 20, 1, 1_000_000),
    syncFailureWindowSeconds: intVar(env, 'SYNC_FAILURE_WINDOW_SECONDS', 15 * 60, 1, 24 * 3600),
    backgroundJobs: boolVar(env, 'BACKGROUND_JOBS', true),
    sqliteCheckpointMs: intVar(env, 'SQLITE_CHECKPOINT_MS', 25, 0, 60_000),
    partnerCache: boolVar(env, 'PARTNER_CACHE', true),
    answerCacheMb: intVar(env, 'ANSWER_CACHE_MB', 32, 0, 65_536),
    usageCounting: boolVar(env, 'USAGE_COUNTING', true),
    usageFlushMs: intVar(env, 'USAGE_FLUSH_SECONDS', 10, 1, 3600) * 1000,
    // Short: their sum is the longest a person who hides is still shown by a cache (docs/spec.md).
    publicCacheMaxAgeSeconds: intVar(env, 'PUBLIC_CACHE_MAX_AGE', 60, 0, 3600),
    publicCacheStaleSeconds: intVar(env, 'PUBLIC_CACHE_STALE', 60, 0, 3600),
    siteName,
    ...mailVars(env, baseUrl, siteName),
    headersTimeoutMs,
    requestTimeoutMs,
    keepAliveTimeoutMs: intVar(env, 'KEEP_ALIVE_TIMEOUT_MS', 5_000, 100, 600_000),
    connectionsPerAddress: intVar(env, 'CONNECTIONS_PER_ADDRESS', 100, 0, 1_000_000),
    nodeEnv: env.NODE_ENV?.trim() || 'development',
    demo: boolVar(env, 'IDSVC_DEMO', false),
    argon2Cost: argon2CostVar(env),
    proofProviders: proofProvidersVar(env),
    proofOrigins: proofOriginsVar(env),
    providers: providersVar(env),
  });
}

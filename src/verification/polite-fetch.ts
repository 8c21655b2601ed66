// Fetches for verification checks, polite to the services asked: at most VERIFY_HOST_REQUESTS_PER_MINUTE
// requests to one host in any minute, a host that answered 429 or 503 with Retry-After is not asked
// again before then, and every request names idsvc and this instance in its user agent so an
// operator of the service can tell who asks and where to complain. Everything still goes through
// safeFetch, with its address policy and size and time caps.
//
// The budget is kept in memory, per process (per AppContext): every instance is polite on its own,
// so N instances ask a host at most N times the budget. A request over budget is not queued: it
// answers `deferred` at once, which checks report as transient, and the entry is checked again
// once the host may be asked.
import type { AppContext } from '../context.js';
import { safeFetch, type SafeFetchOptions, type SafeFetchResult } from './safe-fetch.js';

export type Fetcher = (url: string, opts: SafeFetchOptions) => Promise<SafeFetchResult>;

const MINUTE = 60_000;
/** The longest a Retry-After is honoured: a host asking for more is asked again after a day. */
const MAX_RETRY_AFTER_MS = 24 * 3600 * 1000;
/** Hosts remembered at once; past it the least recently asked is forgotten (its budget starts afresh). */
const MAX_HOSTS = 10_000;

interface HostState {
  /** Times of the requests sent in the last minute, oldest first. */
  sent: number[];
  deferredUntil: number;
}

class HostGate {
  private readonly hosts = new Map<string, HostState>();
  constructor(private readonly perMinute: number) {}

  /** Takes one request from the host's budget, or says how long to wait. */
  take(host: string, now: number): { ok: true } | { ok: false; waitMs: number; why: 'retry_after' | 'budget' } {
    const state = this.hosts.get(host) ?? { sent: [], deferredUntil: 0 };
    // Re-inserted so the map's order is least recently asked first.
    this.hosts.delete(host);
    this.hosts.set(host, state);
    if (this.hosts.size > MAX_HOSTS) {
      const oldest = this.hosts.keys().next().value;
      if (oldest !== undefined) this.hosts.delete(oldest);
    }
    if (state.deferredUntil > now) return { ok: false, waitMs: state.deferredUntil - now, why: 'retry_after' };
    while (state.sent.length > 0 && state.sent[0]! <= now - MINUTE) state.sent.shift();
    if (state.sent.length >= this.perMinute) return { ok: false, waitMs: state.sent[0]! + MINUTE - now, why: 'budget' };
    state.sent.push(now);
    return { ok: true };
  }

  defer(host: string, until: number): void {
    const state = this.hosts.get(host);
    if (state) state.deferredUntil = Math.max(state.deferredUntil, until);
  }
}

const gates = new WeakMap<AppContext, HostGate>();

function gateOf(ctx: AppContext): HostGate {
  let gate = gates.get(ctx);
  if (!gate) {
    gate = new HostGate(ctx.config.verifyHostRequestsPerMinute);
    gates.set(ctx, gate);
  }
  return gate;
}

/** Retry-After as milliseconds from `now`: delay-seconds or an HTTP date (RFC 9110 §10.2.3); null when absent or unreadable. */
export function retryAfterMs(header: string | undefined, now: number): number | null {
  if (header === undefined) return null;
  const v = header.trim();
  if (/^\d{1,10}$/.test(v)) return Math.min(Number(v) * 1000, MAX_RETRY_AFTER_MS);
  const at = Date.parse(v);
  if (Number.isNaN(at)) return null;
  return Math.min(Math.max(0, at - now), MAX_RETRY_AFTER_MS);
}

/**
 * The URL a check really fetches: the service's own, or in tests and development the local stand-in
 * IDSVC_TEST_PROOF_ORIGINS names for its origin. Every method's fetch goes through it, so a service
 * whose API and profile page are both stood in for answers every check from this machine.
 */
export function testOriginOf(ctx: AppContext, url: string): string {
  if (ctx.config.proofOrigins.size === 0 || !URL.canParse(url)) return url;
  const u = new URL(url);
  const to = ctx.config.proofOrigins.get(u.origin);
  return to === undefined ? url : `${to}${u.pathname}${u.search}`;
}

export function verificationUserAgent(ctx: AppContext): string {
  return `idsvc/0.1 (identity verification; +${ctx.config.baseUrl})`;
}

/** The fetcher every check of this context uses: safeFetch behind the per-host budget. */
export function politeFetcher(ctx: AppContext): Fetcher {
  const gate = gateOf(ctx);
  return async (url, opts) => {
    let host: string;
    try {
      host = new URL(url).hostname.toLowerCase();
    } catch {
      return safeFetch(url, opts);
    }
    const now = ctx.clock.now();
    const taken = gate.take(host, now);
    if (!taken.ok) {
      const detail = taken.why === 'retry_after' ? `${host} asked us to wait (Retry-After)` : `${host} had its share of requests this minute`;
      return { ok: false, reason: 'deferred', detail, retryAfterMs: taken.waitMs };
    }
    const res = await safeFetch(url, {
      ...opts,
      allowPrivate: opts.allowPrivate || ctx.config.fetchAllowPrivate,
      timeoutMs: Math.min(opts.timeoutMs ?? ctx.config.verifyTimeoutMs, ctx.config.verifyTimeoutMs),
      userAgent: verificationUserAgent(ctx),
    });
    if (res.ok && (res.status === 429 || res.status === 503)) {
      const wait = retryAfterMs(res.headers['retry-after'], ctx.clock.now());
      if (wait !== null) gate.defer(host, ctx.clock.now() + wait);
    }
    return res;
  };
}

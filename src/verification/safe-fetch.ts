// Outbound HTTP for rel="me" verification and webhook delivery (SPEC §9, §10).
//
// The URL comes from users and partners, so this is an SSRF boundary: every hop is checked for
// scheme, port and the addresses its host resolves to, and the socket is then pinned to the
// addresses that were checked so a second DNS answer cannot redirect it (DNS rebinding).
// Nothing here logs: URLs and failure details belong to the caller.
import dns from 'node:dns';
import net from 'node:net';
import type { LookupFunction } from 'node:net';
import type { Dispatcher } from 'undici';

// undici is loaded with the first outbound request, not at start-up: most starts (a CLI command,
// a test's app, a server before its first check or delivery) send none.
let undiciModule: Promise<typeof import('undici')> | undefined;
const undici = () => (undiciModule ??= import('undici'));
import { addressRefusalReason, isAddressAllowed } from './address-policy.js';

export type SafeFetchFailureReason =
  | 'invalid_url'
  | 'scheme_not_allowed'
  | 'port_not_allowed'
  | 'address_not_allowed'
  | 'dns_failed'
  | 'too_many_redirects'
  | 'timeout'
  | 'connect_failed'
  | 'http_error'
  /** Not sent: the host asked us to wait (Retry-After), or had its share of requests this minute (polite-fetch.ts). */
  | 'deferred';

export interface SafeFetchSuccess {
  ok: true;
  status: number;
  /** Response headers of the final hop, names lower-cased, repeated headers joined with ", ". */
  headers: Record<string, string>;
  /** UTF-8 decoded body, at most maxBytes bytes of it. */
  body: string;
  truncated: boolean;
  finalUrl: string;
  redirects: number;
}

export interface SafeFetchFailure {
  ok: false;
  reason: SafeFetchFailureReason;
  detail: string;
  /** With `deferred`: how long until the host may be asked again. */
  retryAfterMs?: number;
}

export type SafeFetchResult = SafeFetchSuccess | SafeFetchFailure;

export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

export interface SafeFetchOptions {
  /** FETCH_ALLOW_PRIVATE=1: lifts the address and port restrictions, nothing else. */
  allowPrivate: boolean;
  /** Redirects followed before giving up; defaults to 3 for GET and 0 for POST. */
  maxRedirects?: number;
  /** Bytes of body read; the rest is not downloaded. Default 1 MiB. */
  maxBytes?: number;
  /** One deadline for the whole chain: DNS, connects, redirects and body. Default 10 s. */
  timeoutMs?: number;
  method?: 'GET' | 'POST';
  headers?: Record<string, string>;
  body?: string;
  userAgent?: string;
  /**
   * TEST ONLY. Replaces the address policy (and so ignores allowPrivate for addresses), letting
   * tests on 127.0.0.x allow one hop and refuse the next. Never set in production code.
   */
  isAllowed?: (ip: string) => boolean;
  /**
   * TEST ONLY. Replaces the DNS lookup, so tests can give a name an answer without a resolver
   * and show the connection uses that answer and no other. Never set in production code.
   */
  resolveHost?: (hostname: string) => Promise<ResolvedAddress[]>;
}

const DEFAULT_MAX_BYTES = 1024 * 1024;
const DEFAULT_TIMEOUT_MS = 10_000;
const DEFAULT_USER_AGENT = 'idsvc/0.1 (+rel="me" verification)';
const ALLOWED_PORTS = new Set([80, 443]);
const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);
// Credentials must not follow a redirect to someone else (Fetch standard, "HTTP-redirect fetch").
const CROSS_ORIGIN_STRIPPED = ['authorization', 'cookie', 'proxy-authorization'];
const BODY_HEADERS = ['content-type', 'content-length', 'content-encoding', 'content-language', 'content-location'];

class Refusal extends Error {
  constructor(
    readonly reason: SafeFetchFailureReason,
    readonly detail: string,
  ) {
    super(detail);
  }
}

function effectivePort(url: URL): number {
  if (url.port !== '') return Number(url.port);
  return url.protocol === 'https:' ? 443 : 80;
}

function bareHostname(url: URL): string {
  const h = url.hostname;
  return h.startsWith('[') && h.endsWith(']') ? h.slice(1, -1) : h;
}

function abortable<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    if (signal.aborted) {
      reject(signal.reason);
      return;
    }
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (v) => {
        signal.removeEventListener('abort', onAbort);
        resolve(v);
      },
      (e: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(e);
      },
    );
  });
}

async function systemResolve(hostname: string): Promise<ResolvedAddress[]> {
  const found = await dns.promises.lookup(hostname, { all: true });
  return found.map((a) => ({ address: a.address, family: a.family === 6 ? 6 : 4 }));
}

// Hands net.connect the already-checked addresses whatever name it asks about, so the socket
// cannot end up anywhere the policy did not see. Node asks with `all: true` when it races
// IPv4/IPv6 (autoSelectFamily), otherwise for a single address.
function pinnedLookup(addresses: ResolvedAddress[]): LookupFunction {
  return (_hostname, options, callback) => {
    const wanted = options.family === 4 || options.family === 6 ? options.family : 0;
    const usable = wanted === 0 ? addresses : addresses.filter((a) => a.family === wanted);
    const first = usable[0];
    if (!first) {
      const err: NodeJS.ErrnoException = new Error('no checked address of the requested family');
      err.code = 'ENOTFOUND';
      callback(err, '', 0);
      return;
    }
    if (options.all)
      callback(
        null,
        usable.map((a) => ({ address: a.address, family: a.family })),
      );
    else callback(null, first.address, first.family);
  };
}

function errorCode(err: unknown): string | undefined {
  if (typeof err === 'object' && err !== null && 'code' in err && typeof err.code === 'string') return err.code;
  return undefined;
}

function errorText(err: unknown): string {
  const code = errorCode(err);
  const message = err instanceof Error ? err.message : String(err);
  return code && !message.includes(code) ? `${code}: ${message}` : message;
}

function describeRequestError(err: unknown, undiciErrors: typeof import('undici')['errors']): SafeFetchFailure {
  if (err instanceof undiciErrors.ConnectTimeoutError) {
    return { ok: false, reason: 'timeout', detail: 'connecting to the server timed out' };
  }
  if (
    err instanceof undiciErrors.HTTPParserError ||
    err instanceof undiciErrors.SocketError ||
    err instanceof undiciErrors.ResponseContentLengthMismatchError
  ) {
    return { ok: false, reason: 'http_error', detail: `invalid or incomplete HTTP response (${errorText(err)})` };
  }
  return { ok: false, reason: 'connect_failed', detail: `could not connect (${errorText(err)})` };
}

function flattenHeaders(raw: Record<string, string | string[] | undefined>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(raw)) {
    if (value === undefined) continue;
    out[name.toLowerCase()] = Array.isArray(value) ? value.join(', ') : value;
  }
  return out;
}

interface Hop {
  url: URL;
  addresses: ResolvedAddress[];
}

async function checkHop(raw: string | URL, opts: SafeFetchOptions, signal: AbortSignal): Promise<Hop> {
  let url: URL;
  try {
    url = typeof raw === 'string' ? new URL(raw) : raw;
  } catch {
    throw new Refusal('invalid_url', 'not a valid absolute URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new Refusal('scheme_not_allowed', `the ${url.protocol} scheme is not allowed, only http and https`);
  }
  const port = effectivePort(url);
  if (!opts.allowPrivate && !ALLOWED_PORTS.has(port)) {
    throw new Refusal('port_not_allowed', `port ${port} is not allowed, only 80 and 443`);
  }

  // The WHATWG parser has already turned 2130706433, 0177.0.0.1 and 0x7f.1 into 127.0.0.1, so a
  // literal here is in canonical form and is exactly what the socket will connect to.
  const host = bareHostname(url);
  let addresses: ResolvedAddress[];
  const literal = net.isIP(host);
  if (literal !== 0) {
    addresses = [{ address: host, family: literal === 6 ? 6 : 4 }];
  } else {
    try {
      addresses = await abortable((opts.resolveHost ?? systemResolve)(host), signal);
    } catch (err) {
      if (signal.aborted) throw err;
      throw new Refusal('dns_failed', `could not resolve ${host} (${errorCode(err) ?? 'lookup failed'})`);
    }
    if (addresses.length === 0) throw new Refusal('dns_failed', `${host} has no addresses`);
  }

  const allowed = opts.isAllowed ?? (opts.allowPrivate ? () => true : isAddressAllowed);
  for (const { address } of addresses) {
    // One bad answer refuses the host: which address the socket would pick is not ours to choose.
    if (!allowed(address)) {
      const why = addressRefusalReason(address) ?? 'refused by the address policy';
      throw new Refusal('address_not_allowed', literal ? `${address} is ${why}` : `${host} resolves to ${address}, which is ${why}`);
    }
  }
  return { url, addresses };
}

export type OutboundUrlVerdict = { ok: true } | SafeFetchFailure;

/**
 * Judges a URL by the outbound policy without fetching it: scheme, port, and every address its host
 * resolves to now. For configuration time (a partner's webhook URL), so that a forbidden target is
 * refused when it is set instead of failing every delivery. Delivery checks again each time, since
 * DNS answers change.
 */
export async function checkOutboundUrl(
  url: string,
  opts: Pick<SafeFetchOptions, 'allowPrivate' | 'resolveHost'> & { timeoutMs?: number },
): Promise<OutboundUrlVerdict> {
  const timeoutMs = opts.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(new Error('deadline exceeded')), timeoutMs);
  try {
    await checkHop(url, opts, controller.signal);
    return { ok: true };
  } catch (err) {
    if (err instanceof Refusal) return { ok: false, reason: err.reason, detail: err.detail };
    if (controller.signal.aborted) return { ok: false, reason: 'timeout', detail: `resolving the host took longer than ${timeoutMs} ms` };
    throw err;
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Fetches a user-supplied URL under the outbound address policy. Never throws for network
 * conditions: every failure comes back as `{ ok: false, reason, detail }`.
 */
export async function safeFetch(url: string, opts: SafeFetchOptions): Promise<SafeFetchResult> {
  const method = opts.method ?? 'GET';
  // A webhook signature must not be replayed to wherever a receiver redirects, hence 0 for POST.
  const maxRedirects = opts.maxRedirects ?? (method === 'POST' ? 0 : 3);
  const maxBytes = opts.maxBytes ?? DEFAULT_MAX_BYTES;
  const timeoutMs = opts.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const { Agent, request, errors } = await undici();
  const started = Date.now();

  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(new Error('deadline exceeded')), timeoutMs);
  const signal = controller.signal;
  const timedOut = (): SafeFetchFailure => ({
    ok: false,
    reason: 'timeout',
    detail: `no complete response within ${timeoutMs} ms`,
  });

  let currentMethod: 'GET' | 'POST' = method;
  let currentBody: string | undefined = opts.body;
  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries(opts.headers ?? {})) headers[k.toLowerCase()] = v;
  headers['user-agent'] = opts.userAgent ?? headers['user-agent'] ?? DEFAULT_USER_AGENT;

  let next: string | URL = url;
  let redirects = 0;
  try {
    for (;;) {
      const hop = await checkHop(next, opts, signal);
      const remaining = Math.max(1, timeoutMs - (Date.now() - started));
      const agent = new Agent({
        connect: { lookup: pinnedLookup(hop.addresses), timeout: remaining },
      });
      try {
        // Built by hand so user:pass@ and #fragment never reach the wire.
        const target = `${hop.url.protocol}//${hop.url.host}${hop.url.pathname}${hop.url.search}`;
        let res: Dispatcher.ResponseData;
        try {
          res = await request(target, {
            dispatcher: agent,
            method: currentMethod,
            headers,
            body: currentBody,
            signal,
          });
        } catch (err) {
          if (signal.aborted) return timedOut();
          return describeRequestError(err, errors);
        }

        // An abort or agent teardown after we stop reading surfaces as an 'error' event on the
        // body; unhandled, that would crash the process.
        res.body.on('error', () => undefined);

        const location = res.headers.location;
        if (REDIRECT_STATUSES.has(res.statusCode) && typeof location === 'string' && location !== '') {
          res.body.destroy();
          if (redirects >= maxRedirects) {
            return {
              ok: false,
              reason: 'too_many_redirects',
              detail: `redirect ${redirects + 1} refused, at most ${maxRedirects} followed`,
            };
          }
          let target: URL;
          try {
            target = new URL(location, hop.url);
          } catch {
            return { ok: false, reason: 'invalid_url', detail: 'a redirect pointed to an invalid URL' };
          }
          if (target.origin !== hop.url.origin) for (const h of CROSS_ORIGIN_STRIPPED) delete headers[h];
          if (res.statusCode === 303 || ((res.statusCode === 301 || res.statusCode === 302) && currentMethod === 'POST')) {
            currentMethod = 'GET';
            currentBody = undefined;
            for (const h of BODY_HEADERS) delete headers[h];
          }
          redirects += 1;
          next = target;
          continue;
        }

        const chunks: Buffer[] = [];
        let size = 0;
        let truncated = false;
        try {
          for await (const chunk of res.body) {
            const buf = chunk as Buffer;
            if (size + buf.length > maxBytes) {
              chunks.push(buf.subarray(0, maxBytes - size));
              size = maxBytes;
              truncated = true;
              // Leaving the loop destroys the stream, so the rest is never downloaded.
              break;
            }
            chunks.push(buf);
            size += buf.length;
          }
        } catch (err) {
          if (signal.aborted) return timedOut();
          return { ok: false, reason: 'http_error', detail: `the response body was cut off (${errorText(err)})` };
        }
        // stream: true on a cut body drops a multi-byte character split by the cut instead of
        // turning it into U+FFFD.
        const body = new TextDecoder('utf-8').decode(Buffer.concat(chunks), { stream: truncated });
        return {
          ok: true,
          status: res.statusCode,
          headers: flattenHeaders(res.headers),
          body,
          truncated,
          finalUrl: hop.url.href,
          redirects,
        };
      } finally {
        await agent.destroy().catch(() => undefined);
      }
    }
  } catch (err) {
    if (err instanceof Refusal) return { ok: false, reason: err.reason, detail: err.detail };
    if (signal.aborted) return timedOut();
    return { ok: false, reason: 'connect_failed', detail: errorText(err) };
  } finally {
    clearTimeout(timer);
  }
}

// What caches between a client and idsvc may keep (docs/spec.md, "Answers a cache may keep"). A
// public view asked for without proof is the same for everyone who asks, so a shared cache (a CDN, a
// caching proxy) may keep it for PUBLIC_CACHE_MAX_AGE seconds and serve it stale while it revalidates
// for PUBLIC_CACHE_STALE more: that sum is the longest a person who hides or opts out can still be
// shown by such a cache. Everything that needs proof, and every error, is never stored.
import { hash } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Config } from '../config.js';

/** Answers that need proof (an api_token, a signed URL, a session): no cache may keep them. */
export const PRIVATE_NO_STORE = 'private, no-store';

type CacheSettings = Pick<Config, 'publicCacheMaxAgeSeconds' | 'publicCacheStaleSeconds'>;

/**
 * Worked out again only when asked about another (frozen) configuration than the last: one
 * configuration serves a whole process, and the header is then read, not built, on every answer.
 */
let lastConfig: CacheSettings | undefined;
let lastValue = '';

/** The Cache-Control of a public answer, from the operator's settings. */
export function publicCacheControl(config: CacheSettings): string {
  if (config !== lastConfig) {
    lastValue = cacheControlFor(config);
    lastConfig = config;
  }
  return lastValue;
}

function cacheControlFor(config: CacheSettings): string {
  // 0 lets a cache keep the answer but never serve it without asking first (a 304 is cheap).
  if (config.publicCacheMaxAgeSeconds === 0) return 'public, no-cache';
  const stale = config.publicCacheStaleSeconds > 0 ? `, stale-while-revalidate=${config.publicCacheStaleSeconds}` : '';
  return `public, max-age=${config.publicCacheMaxAgeSeconds}${stale}`;
}

/**
 * A strong ETag of the exact bytes sent: it need only differ between bodies. SHA-1 in one call,
 * which makes no Hash object, so a short answer costs little more than its bytes' reading.
 */
export function etagOf(body: string | Buffer): string {
  return `"${hash('sha1', body, 'base64url')}"`;
}

/** What a Buffer costs beside its bytes (the object and its backing store's bookkeeping), for the answer cache's budget. */
export const BUFFER_OVERHEAD = 100;

/**
 * A rendered body and its ETag, worked out the first time it is asked for: an answer that no shared
 * cache may keep is sent without one, so it never pays for it. A body the answer cache may keep
 * (`kept`) is encoded once, not once per request (sent as bytes, it is neither measured nor encoded
 * again on the way to the socket), and the bytes have memory of their own: a slice of Node's shared
 * Buffer pool would hold the pool's whole 8 KiB block for as long as it is kept. A body sent once
 * stays the string it was rendered as: Node writes it after the headers in one write, where bytes
 * of their own would cost a backing store made, measured and filled for one request.
 */
export class TaggedBody {
  /** What is sent: the bytes of a body that may be kept, the text of one that will not be. */
  readonly payload: Buffer | string;
  #etag: string | undefined;
  /** What it holds in memory, for the answer cache's budget (a body not kept is never counted). */
  readonly size: number;

  constructor(text: string, kept = true) {
    if (kept) {
      const bytes = Buffer.allocUnsafeSlow(Buffer.byteLength(text));
      bytes.write(text);
      this.payload = bytes;
      this.size = bytes.length + BUFFER_OVERHEAD;
    } else {
      this.payload = text;
      this.size = text.length + BUFFER_OVERHEAD;
    }
  }

  get body(): string {
    return typeof this.payload === 'string' ? this.payload : this.payload.toString();
  }

  /** The same for a body's bytes and its text: the text is hashed as its UTF-8 bytes. */
  get etag(): string {
    this.#etag ??= etagOf(this.payload);
    return this.#etag;
  }
}

/** At most this many ETags are compared from one If-None-Match: the header is outside input. */
const MAX_TAGS = 32;

/** Whether If-None-Match names `etag` (a list, weak or strong, or `*`): RFC 9110's weak comparison. */
export function notModified(request: FastifyRequest, etag: string): boolean {
  const given = request.headers['if-none-match'];
  if (typeof given !== 'string') return false;
  const tags = given.split(',', MAX_TAGS);
  for (const raw of tags) {
    const tag = raw.trim();
    if (tag === '*' || tag === etag || (tag.startsWith('W/') && tag.slice(2) === etag)) return true;
  }
  return false;
}

/** Whether a shared cache may keep this request's answer: only what GET (and HEAD) ask for. */
export function readsByGet(request: FastifyRequest): boolean {
  return request.method === 'GET' || request.method === 'HEAD';
}

export interface PublicAnswer {
  contentType: string;
  body: string | Buffer;
  /** The body's ETag when already known (kept beside a cached body); computed otherwise. */
  etag?: string;
  /** The request headers the answer follows, besides the URL. */
  vary?: string;
}

/** A public answer with its validators, or 304 without a body when the client holds it already. */
export function sendPublic(config: Config, request: FastifyRequest, reply: FastifyReply, answer: PublicAnswer): FastifyReply {
  const etag = answer.etag ?? etagOf(answer.body);
  reply.header('Cache-Control', publicCacheControl(config)).header('ETag', etag);
  if (answer.vary) reply.header('Vary', answer.vary);
  if (notModified(request, etag)) return reply.code(304).send();
  return reply.type(answer.contentType).send(answer.body);
}

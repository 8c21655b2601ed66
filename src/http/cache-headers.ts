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
/** Worked out once per (frozen) configuration rather than on every public answer. */
const cacheControlOf = new WeakMap<CacheSettings, string>();

/** The last configuration asked about and its value: one configuration serves a whole process. */
let lastConfig: CacheSettings | undefined;
let lastValue = '';

/** The Cache-Control of a public answer, from the operator's settings. */
export function publicCacheControl(config: CacheSettings): string {
  if (config === lastConfig) return lastValue;
  let value = cacheControlOf.get(config);
  if (value === undefined) {
    value = cacheControlFor(config);
    cacheControlOf.set(config, value);
  }
  lastConfig = config;
  lastValue = value;
  return value;
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

/**
 * A rendered body and its ETag, each worked out the first time it is needed and then kept: an
 * answer that no shared cache may keep is sent without an ETag, so it never pays for one, and a body
 * the answer cache keeps is encoded and hashed once, not once per request. Once encoded it is kept
 * as bytes only (sent as they are, neither measured nor encoded again on the way to the socket).
 */
export class TaggedBody {
  #text: string | undefined;
  #bytes: Buffer | undefined;
  #etag: string | undefined;
  /** About what it holds in memory, for the answer cache's budget. */
  readonly size: number;

  constructor(text: string) {
    this.#text = text;
    this.size = text.length;
  }

  get bytes(): Buffer {
    if (this.#bytes === undefined) {
      this.#bytes = Buffer.from(this.#text!);
      this.#text = undefined;
    }
    return this.#bytes;
  }

  get body(): string {
    return this.#text ?? this.#bytes!.toString();
  }

  get etag(): string {
    this.#etag ??= etagOf(this.bytes);
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

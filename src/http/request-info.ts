import type { FastifyRequest } from 'fastify';

/** JSON when asked for by `?format=json` or an Accept header that prefers it (SPEC §8). */
export function wantsJson(request: FastifyRequest): boolean {
  const q = request.query as Record<string, unknown> | undefined;
  return prefersJson(q && typeof q.format === 'string' ? q.format : null, request.headers.accept);
}

/** The rule of wantsJson() on the raw values, for answers written before a request was parsed. */
export function prefersJson(format: string | null, accept: string | undefined): boolean {
  if (format !== null) return format === 'json';
  const a = accept ?? '';
  return /application\/json/i.test(a) && !/application\/xml|text\/xml/i.test(a.split('application/json')[0] ?? '');
}

/** The browser origin of a request, from Origin or else Referer; null for server-to-server calls. */
export function requestOrigin(request: FastifyRequest): string | null {
  const origin = request.headers.origin;
  if (origin && origin !== 'null') return origin;
  const referer = request.headers.referer;
  if (referer) {
    try {
      return new URL(referer).origin;
    } catch {
      return 'invalid';
    }
  }
  return origin === 'null' ? 'null' : null;
}

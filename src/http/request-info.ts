import type { FastifyRequest } from 'fastify';

/** JSON when asked for by `?format=json` or an Accept header that prefers it (SPEC §8). */
export function wantsJson(request: FastifyRequest): boolean {
  const q = request.query as Record<string, unknown> | undefined;
  if (q && typeof q.format === 'string') return q.format === 'json';
  const accept = request.headers.accept ?? '';
  return /application\/json/i.test(accept) && !/application\/xml|text\/xml/i.test(accept.split('application/json')[0] ?? '');
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

import type { FastifyRequest } from 'fastify';

/**
 * A field of a value parsed from the request but not validated (what the hooks before the schemas
 * see: the body, the query, the path's segments), as it came: a string, an array for a field given
 * twice, anything a JSON body holds. Own fields only, so `__proto__` and the like name nothing.
 */
export function unvalidatedField(value: unknown, name: string): unknown {
  if (typeof value !== 'object' || value === null || !Object.hasOwn(value, name)) return undefined;
  // Parsed input holds data properties only, so reading the field runs no code.
  return (value as Record<string, unknown>)[name];
}

/** unvalidatedField() when it is a string, else undefined. */
export function unvalidatedString(value: unknown, name: string): string | undefined {
  const field = unvalidatedField(value, name);
  return typeof field === 'string' ? field : undefined;
}

/** JSON when asked for by `?format=json` or an Accept header that prefers it (SPEC §8). */
export function wantsJson(request: FastifyRequest): boolean {
  return prefersJson(unvalidatedString(request.query, 'format') ?? null, request.headers.accept);
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

// No field of the API or the site accepts a NUL character (U+0000). PostgreSQL cannot store or
// even compare one in text ("invalid byte sequence for encoding UTF8: 0x00"), so a NUL that reached
// a query answered 500 there (found by the fuzz test: /u/a%00, reverse_lookup's usrSvcId) while
// SQLite answered 404 or 200; refusing it at the edge gives both databases the same 400.
import type { FastifyInstance } from 'fastify';
import { ApiError } from '../domain/errors.js';

const refusal = () => new ApiError('invalid_request', 'The request holds a NUL character (%00), which no field accepts');

/** A parsed body (form, JSON or text) with a NUL anywhere in it. */
function holdsNul(body: unknown): boolean {
  if (body === undefined || body === null) return false;
  if (typeof body === 'string') return body.includes('\u0000');
  // JSON.stringify writes U+0000 as the six characters \u0000, in keys and values at any depth.
  return typeof body === 'object' && JSON.stringify(body).includes('\\u0000');
}

export function installNulRefusal(app: FastifyInstance): void {
  // The path and the query string, still %-encoded: a raw NUL never gets past Node's parser.
  app.addHook('onRequest', (request, _reply, done) => {
    done(request.url.includes('%00') ? refusal() : undefined);
  });
  app.addHook('preValidation', (request, _reply, done) => {
    done(holdsNul(request.body) ? refusal() : undefined);
  });
}

// No field of the API or the site accepts a NUL character (U+0000). PostgreSQL cannot store or
// even compare one in text ("invalid byte sequence for encoding UTF8: 0x00"), so a NUL that reached
// a query answered 500 there (found by the fuzz test: /u/a%00, reverse_lookup's usrSvcId) while
// SQLite answered 404 or 200; refusing it at the edge gives both databases the same 400.
// The same walk refuses a body nested deeper than any form or operation reads: every step after
// parsing (this check included, were it recursive) could otherwise run out of stack on it.
import type { FastifyInstance } from 'fastify';
import { ApiError } from '../domain/errors.js';

/** No body the API or the site reads nests deeper than this; a deeper one is refused whole. */
export const MAX_BODY_DEPTH = 16;

const nulRefusal = () => new ApiError('invalid_request', 'The request holds a NUL character (%00), which no field accepts');
const depthRefusal = () => new ApiError('invalid_request', `The request body is nested more than ${MAX_BODY_DEPTH} levels deep`);

/** Why a parsed body (form, JSON or text) is refused: a NUL anywhere in it, or too deep a nesting. */
function bodyProblem(body: unknown): ApiError | undefined {
  // An explicit stack, not recursion, so the depth of the input never meets the depth of the call stack.
  const stack: { value: unknown; depth: number }[] = [{ value: body, depth: 0 }];
  for (let item = stack.pop(); item !== undefined; item = stack.pop()) {
    const { value, depth } = item;
    if (typeof value === 'string') {
      if (value.includes('\u0000')) return nulRefusal();
    } else if (typeof value === 'object' && value !== null && !ArrayBuffer.isView(value)) {
      // Not into an uploaded file's bytes (the photo form): they are no text field, a zero byte is
      // a byte there, and walking a buffer entry by entry would cost a step per byte.
      if (depth >= MAX_BODY_DEPTH) return depthRefusal();
      for (const [key, child] of Object.entries(value)) {
        if (key.includes('\u0000')) return nulRefusal();
        stack.push({ value: child, depth: depth + 1 });
      }
    }
  }
  return undefined;
}

export function installNulRefusal(app: FastifyInstance): void {
  // The path and the query string, still %-encoded: a raw NUL never gets past Node's parser.
  app.addHook('onRequest', (request, _reply, done) => {
    done(request.url.includes('%00') ? nulRefusal() : undefined);
  });
  app.addHook('preValidation', (request, _reply, done) => {
    done(bodyProblem(request.body));
  });
}

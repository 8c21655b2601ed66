// Request bodies the app does not read (a GET's, or one refused before or while it was parsed)
// are read and thrown away before the answer goes out. When Node closes a connection
// (the client sent `Connection: close`, or the answer is a 413) with bytes of the body still
// unread in the socket's receive buffer, the kernel resets the connection instead of closing it,
// and the reset discards whatever of the answer the client had not read yet: a 186 KB answer
// arrived cut at 127 KB, and a client still sending a large body saw EPIPE instead of its 413.
import type { IncomingMessage } from 'node:http';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../domain/errors.js';

/**
 * Past any of these, the client is not sending a body we could answer after reading, and the
 * answer goes out with the connection closed behind it. The time is what a refusal may be held
 * back (the contract answers it within 10 s); a client that stops sending has nothing left to reset
 * the connection with, so its answer need not wait for the rest.
 */
const DISCARD_MAX_BYTES = 16 * 1024 * 1024;
const DISCARD_MAX_MS = 5_000;
const DISCARD_STALL_MS = 1_000;

/** Methods whose body Fastify never parses (lib/handle-request.js). */
const BODYLESS = new Set(['GET', 'HEAD', 'TRACE']);

/** The request says a body follows. (`complete` is no test: it turns true only after the request event.) */
function hasBody(req: IncomingMessage): boolean {
  const length = req.headers['content-length'];
  return req.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}

type Outcome = 'read' | 'too_large' | 'gave_up';

/** Reads the rest of the body and drops it; `too_large` as soon as it is over `maxBytes`. */
function discardBody(req: IncomingMessage, maxBytes: number): Promise<Outcome> {
  if (req.complete) return Promise.resolve('read');
  if (Number(req.headers['content-length']) > maxBytes) return Promise.resolve('too_large');
  return new Promise((resolve) => {
    let seen = 0;
    let settled = false;
    const finish = (outcome: Outcome) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      clearTimeout(stall);
      req.off('data', onData).off('end', onEnd).off('close', onClose);
      resolve(outcome);
    };
    const onData = (chunk: Buffer) => {
      seen += chunk.length;
      if (seen > maxBytes) finish('too_large');
      else if (!settled) stall.refresh();
    };
    const onEnd = () => finish('read');
    const onClose = () => finish(req.complete ? 'read' : 'gave_up');
    const timer = setTimeout(() => finish('gave_up'), DISCARD_MAX_MS);
    // Timers run before pending reads in an event-loop turn: after a long turn, the bytes that
    // arrived meanwhile are read first (setImmediate follows the poll phase) before calling it a stall.
    const stall = setTimeout(() => {
      const before = seen;
      setImmediate(() => {
        if (seen === before) finish('gave_up');
        else if (!settled) stall.refresh();
      });
    }, DISCARD_STALL_MS);
    req.on('data', onData).on('end', onEnd).on('close', onClose);
    req.resume();
  });
}

/**
 * Reads what is still unread of the request's body, so that the connection can close cleanly
 * after the answer; a client that sends too much or stalls gets the answer and a close.
 */
export async function discardUnreadBody(request: FastifyRequest, reply: FastifyReply): Promise<void> {
  const req = request.raw;
  if (req.complete || !hasBody(req)) return;
  if ((await discardBody(req, DISCARD_MAX_BYTES)) !== 'read') reply.header('Connection', 'close');
}

export function installBodyDiscarding(app: FastifyInstance, bodyLimit: number): void {
  // A body on a GET is over the limit like any other (answered 413); within it, it is ignored.
  app.addHook('onRequest', (request, _reply, done) => {
    if (!BODYLESS.has(request.method) || !hasBody(request.raw)) return done();
    discardBody(request.raw, bodyLimit).then(
      (outcome) => done(outcome === 'too_large' ? new ApiError('payload_too_large', 'Request body is larger than 64 KiB') : undefined),
      done,
    );
  });

  // Whatever is still unread when an answer is ready is read first. (The router's refusals run
  // no hooks: app.ts reads their bodies before answering.)
  app.addHook('onSend', (request, reply, payload, done) => {
    if (request.raw.complete || !hasBody(request.raw)) return done(null, payload);
    discardUnreadBody(request, reply).then(() => done(null, payload), done);
  });
}

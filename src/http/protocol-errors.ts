// Answers for what Node's HTTP parser refuses before Fastify sees a request: headers
// over Node's limit, a request line or header that is not HTTP, a bad Content-Length, a timeout,
// and CONNECT. Node's and Fastify's defaults write a bare status or Fastify's JSON; here the client
// gets the API's error document (or the widget's script, or the site's page, by the path when the
// request line could be read), with a fresh X-Request-Id, echoing nothing it sent.
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import type { FastifyBaseLogger } from 'fastify';
import { ApiError } from '../domain/errors.js';
import { API_VERSION, errorAnswer, isApiPath, kindOfPath, type ErrorRenderers, type RouteKind } from './errors.js';
import { prefersJson } from './request-info.js';
import { newRequestId } from './request-ids.js';

/** How long a refused connection is read from (and the bytes dropped) before it is closed. */
const LINGER_MS = 5_000;

type ParserError = Error & { code?: string; rawPacket?: Buffer };

function refusalOf(code: string | undefined): ApiError {
  switch (code) {
    case 'HPE_HEADER_OVERFLOW':
      return new ApiError('invalid_request', `The request's headers are larger than ${Math.floor(http.maxHeaderSize / 1024)} KiB`);
    case 'HPE_CHUNK_EXTENSIONS_OVERFLOW':
      return new ApiError('payload_too_large', 'The chunk extensions of the request body are too large');
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return new ApiError('invalid_request', 'The request did not arrive in time');
    case 'HPE_INVALID_METHOD':
      return new ApiError('invalid_request', 'The HTTP method is not supported');
    case 'HPE_INVALID_CONTENT_LENGTH':
    case 'HPE_UNEXPECTED_CONTENT_LENGTH':
      return new ApiError('invalid_request', 'The Content-Length header is not valid');
    default:
      return new ApiError('invalid_request', 'The request is not valid HTTP/1.1');
  }
}

interface Target {
  kind: RouteKind;
  json: boolean;
  path: string | null;
  head: boolean;
}

/** The path and format a request asked for, from its first bytes; the API's XML when unreadable. */
function targetOf(raw: Buffer | undefined): Target {
  const text = raw ? raw.subarray(0, 16 * 1024).toString('latin1') : '';
  const line = /^([A-Za-z]+) (\S+) HTTP\/\d\.\d\r?\n/.exec(text);
  const accept = /\r?\naccept:[ \t]*([^\r\n]*)/i.exec(text)?.[1];
  return target(line?.[1] ?? '', line?.[2] ?? null, accept);
}

function target(method: string, url: string | null, accept: string | undefined): Target {
  // Only a path names a kind of answer: CONNECT's host:port or an absolute URL gets the API's.
  const path = url?.startsWith('/') ? url : null;
  const q = path?.indexOf('?') ?? -1;
  const format = q >= 0 ? new URLSearchParams(path!.slice(q + 1)).get('format') : null;
  return { kind: path ? kindOfPath(path) : 'api', json: prefersJson(format, accept), path, head: method.toUpperCase() === 'HEAD' };
}

function rawAnswer(to: Target, err: ApiError, renderers: ErrorRenderers, requestId: string): string {
  const headers: [string, string][] = [];
  const answer = errorAnswer(to.kind, to.json, err, renderers, { header: (name, value) => headers.push([name, value]) });
  const lines = [
    `HTTP/1.1 ${answer.status} ${http.STATUS_CODES[answer.status]}`,
    `Content-Type: ${answer.contentType}`,
    `Content-Length: ${Buffer.byteLength(answer.body)}`,
    `X-Request-Id: ${requestId}`,
    'X-Content-Type-Options: nosniff',
    // An unreadable request line gets the API's answer, and its header.
    ...(to.path === null || isApiPath(to.path) ? [`X-Idsvc-Api-Version: ${API_VERSION}`] : []),
    ...headers.map(([n, v]) => `${n}: ${v}`),
    `Date: ${new Date().toUTCString()}`,
    'Connection: close',
  ];
  return `${lines.join('\r\n')}\r\n\r\n${to.head ? '' : answer.body}`;
}

/**
 * Sends the answer and closes our side, then reads (and drops) what the client still sends until
 * it closes too or LINGER_MS pass: closing with its bytes unread would make the kernel reset the
 * connection, and a reset can destroy the answer before the client reads it.
 */
function answerAndClose(socket: Duplex, answer: string): void {
  const timer = setTimeout(() => socket.destroy(), LINGER_MS);
  timer.unref();
  socket.on('close', () => clearTimeout(timer));
  socket.on('end', () => socket.destroy());
  socket.on('error', () => socket.destroy());
  socket.on('data', () => {});
  socket.end(answer);
}

export function protocolErrorAnswers(renderers: ErrorRenderers) {
  // A parser that failed fails again on every later chunk of the same connection: answer once.
  const answered = new WeakSet<Duplex>();

  function refuse(socket: Duplex, to: Target, err: ApiError, why: string, log: FastifyBaseLogger): void {
    answered.add(socket);
    const requestId = newRequestId();
    // Only the error's code: the error object carries the raw bytes received, secrets included.
    log.info({ reqId: requestId, refused: why, statusCode: err.status }, 'request refused by the HTTP parser');
    answerAndClose(socket, rawAnswer(to, err, renderers, requestId));
  }

  return {
    /** The server's 'clientError' listener (Fastify's clientErrorHandler). */
    clientError(e: Error, socket: Duplex, log: FastifyBaseLogger): void {
      const err = e as ParserError;
      if (err.code === 'ECONNRESET' || socket.destroyed || answered.has(socket)) return;
      // An answer already on its way on this connection (the error is in a later pipelined
      // request, or its body timed out): our bytes would corrupt it, so only close.
      const inFlight = (socket as Duplex & { _httpMessage?: ServerResponse | null })._httpMessage;
      if (inFlight?.headersSent || !socket.writable) {
        socket.destroy();
        return;
      }
      // A connection that timed out without sending a byte (a browser's preconnected socket, an
      // unused one in a client's pool) asked nothing, so it is closed unanswered: its client may
      // pick it for a request at any moment, and would read bytes written there unasked as that
      // request's answer, whereas a closed connection makes it send the request again on a new one.
      if (err.code === 'ERR_HTTP_REQUEST_TIMEOUT' && !inFlight && (socket as Socket).bytesRead === 0) {
        socket.destroy();
        return;
      }
      // A request whose body timed out was read up to its headers: its path and Accept say more than the raw bytes.
      const to = inFlight?.req ? target(inFlight.req.method ?? '', inFlight.req.url ?? null, inFlight.req.headers.accept) : targetOf(err.rawPacket);
      refuse(socket, to, refusalOf(err.code), err.code ?? 'unknown', log);
    },

    /** The server's 'connect' listener: nothing here is a proxy; without one Node drops the socket unanswered. */
    connect(req: IncomingMessage, socket: Duplex, log: FastifyBaseLogger): void {
      if (socket.destroyed) return;
      refuse(
        socket,
        target(req.method ?? '', req.url ?? null, req.headers.accept),
        new ApiError('invalid_request', 'CONNECT is not supported'),
        'CONNECT',
        log,
      );
    },
  };
}

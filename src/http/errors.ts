// The one place errors become answers (SPEC §6): API routes answer XML/JSON, the widget answers a
// script that reports the error, site pages answer HTML. 5xx messages never leak internals, and no
// message repeats what the client sent (a path can hold an e-mail address, a header a token).
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError, errors, type ErrorCode } from '../domain/errors.js';
import { unavailableCause } from '../db/faults.js';
import { CONTENT_TYPE, render } from './document.js';
import { prefersJson, wantsJson } from './request-info.js';

export type RouteKind = 'api' | 'widget' | 'site' | 'ops';

/** Where headers go: a Fastify reply, or a list for an answer written straight to the socket. */
export interface HeaderSink {
  header(name: string, value: string): unknown;
}

export interface ErrorRenderers {
  widget?: (code: ErrorCode, message: string) => string;
  /** Also sets the page's headers (error pages of unmatched paths get no others). */
  site?: (headers: HeaderSink, status: number, message: string) => string;
}

export interface ErrorHandling {
  renderers: ErrorRenderers;
  /**
   * Counts an /api request that no operation counted (it failed before one ran, or matched none)
   * and sets its RateLimit-* headers; returns the rate_limited error when over the limit.
   */
  countRequest?: (request: FastifyRequest, reply: FastifyReply) => Promise<ApiError | undefined>;
}

export const API_VERSION = '1';
export const PATH_SEGMENT_LIMIT = 256;

/**
 * The kind of answer a path gets when no route says (it matched none, or failed before routing):
 * the widget's paths answer scripts, other /api paths the API's documents, the rest the site's pages.
 */
export function kindOfPath(url: string): RouteKind {
  if (url.startsWith('/api/service_collection_widget/')) return 'widget';
  if (url.startsWith('/widget/')) return url.startsWith('/widget/catalogue.json') ? 'api' : 'widget';
  return url.startsWith('/api/') ? 'api' : 'site';
}

export const isApiPath = (url: string) => url.startsWith('/api/');

function kindOf(request: FastifyRequest): RouteKind {
  // Requests refused by the router carry no route options of their own.
  const config = request.routeOptions?.config as { kind?: RouteKind } | undefined;
  return config?.kind ?? kindOfPath(request.url);
}

function describeValidation(err: FastifyError): string {
  const v = err.validation?.[0];
  if (!v) return 'The request is not valid';
  const where = err.validationContext ?? 'request';
  const params = v.params as Record<string, unknown>;
  if (v.keyword === 'additionalProperties') return `unknown ${where} field "${String(params.additionalProperty)}"`;
  const field = (v.instancePath || '').replace(/^\//, '') || String(params.missingProperty ?? '');
  if (v.keyword === 'required') return `missing ${where} field "${String(params.missingProperty)}"`;
  if (where === 'body' && field === '' && v.keyword === 'type') return UNSUPPORTED_BODY;
  return `${where} field "${field}" ${v.message ?? 'is invalid'}`;
}

const UNSUPPORTED_BODY = 'Unsupported request body; send application/x-www-form-urlencoded or application/json (an object of fields)';

/**
 * Fastify's own refusals, by code. Their messages quote the input (the whole path, the content
 * type), so each gets a message of ours instead.
 */
const FRAMEWORK_ERRORS: Record<string, () => ApiError> = {
  FST_ERR_CTP_BODY_TOO_LARGE: () => new ApiError('payload_too_large', 'Request body is larger than 64 KiB'),
  FST_ERR_CTP_INVALID_MEDIA_TYPE: () => new ApiError('invalid_request', UNSUPPORTED_BODY),
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: () => new ApiError('invalid_request', 'The body is not as long as its Content-Length says'),
  FST_ERR_CTP_EMPTY_JSON_BODY: () => new ApiError('invalid_request', 'The request body is not valid JSON'),
  FST_ERR_CTP_INVALID_JSON_BODY: () => new ApiError('invalid_request', 'The request body is not valid JSON'),
  FST_ERR_ROUTE_MISSING_CONTENT_TYPE: () => new ApiError('invalid_request', 'The request has a body but no Content-Type'),
  // The router's own limit is far above SPEC §8's; the schemas say 256, so the message does too.
  FST_ERR_MAX_PARAM_LENGTH: () => new ApiError('invalid_request', `A path segment is longer than ${PATH_SEGMENT_LIMIT} characters`),
  FST_ERR_BAD_URL: () => new ApiError('invalid_request', 'The URL is not valid (a malformed %-encoding)'),
  // @fastify/csrf-protection's refusals of a site form (src/site/index.tsx).
  FST_CSRF_MISSING_SECRET: () => formRejected(),
  FST_CSRF_INVALID_TOKEN: () => formRejected(),
};

/** A site form refused as forged or expired: by the Origin check or by the CSRF token check. */
export const formRejected = () => new ApiError('forbidden', 'This form has expired or did not come from this site. Go back, reload the page and try again.');

export function toApiError(err: unknown, requestId: string): ApiError {
  if (err instanceof ApiError) return err;
  // The database (or its connection) failing is an outage to wait out, not a fault in this request.
  if (unavailableCause(err) !== null) return errors.unavailable();
  const e = err as FastifyError;
  if (e.validation) return new ApiError('invalid_request', describeValidation(e));
  const known = e.code ? FRAMEWORK_ERRORS[e.code] : undefined;
  if (known) return known();
  if (e instanceof SyntaxError) return new ApiError('invalid_request', 'The request body is not valid JSON');
  if (e.statusCode === 404) return new ApiError('not_found', 'Not found');
  if (e.statusCode === 413) return new ApiError('payload_too_large', 'Request body is larger than 64 KiB');
  // Another library's 4xx: its code is a constant of that library, its message may quote the input.
  if (typeof e.statusCode === 'number' && e.statusCode >= 400 && e.statusCode < 500)
    return new ApiError('invalid_request', `The request is not valid${e.code ? ` (${e.code})` : ''}`);
  return new ApiError('internal_error', `Internal error (request ${requestId})`);
}

export interface ErrorAnswer {
  status: number;
  contentType: string;
  body: string;
}

/** The error as a client of `kind` reads it; `headers` receives the page's own headers (the site's). */
export function errorAnswer(kind: RouteKind, json: boolean, err: ApiError, renderers: ErrorRenderers, headers: HeaderSink): ErrorAnswer {
  if (kind === 'widget' && renderers.widget) {
    headers.header('Cache-Control', 'private, no-store');
    return { status: err.status, contentType: 'text/javascript; charset=utf-8', body: renderers.widget(err.code, err.message) };
  }
  // An error is never kept by any cache: the next request may well succeed.
  headers.header('Cache-Control', 'no-store');
  if (kind === 'site' && renderers.site) {
    return { status: err.status, contentType: 'text/html; charset=utf-8', body: renderers.site(headers, err.status, err.message) };
  }
  const format = json ? 'json' : 'xml';
  return { status: err.status, contentType: CONTENT_TYPE[format], body: render({ root: 'error', fields: { code: err.code, message: err.message } }, format) };
}

/** The JSON-or-XML choice of SPEC §8, also for requests the router refused (they have no parsed query). */
function jsonWanted(request: FastifyRequest): boolean {
  if (request.query !== null && request.query !== undefined) return wantsJson(request);
  const q = request.url.indexOf('?');
  const format = q === -1 ? null : new URLSearchParams(request.url.slice(q + 1)).get('format');
  return prefersJson(format, request.headers.accept);
}

export async function sendError(request: FastifyRequest, reply: FastifyReply, err: ApiError, handling: ErrorHandling): Promise<FastifyReply> {
  const kind = kindOf(request);
  // Requests the router refused ran no onRequest hook: the headers every answer has are set here too.
  reply.header('X-Request-Id', String(request.id)).header('X-Content-Type-Options', 'nosniff');
  if (isApiPath(request.url)) {
    reply.header('X-Idsvc-Api-Version', API_VERSION);
    if (!reply.hasHeader('RateLimit-Limit') && handling.countRequest) {
      const limited = await handling.countRequest(request, reply).catch((e: unknown) => {
        request.log.warn({ err: e }, 'could not count a refused request against the rate limits');
        return undefined;
      });
      if (limited) err = limited;
    }
  }
  if (err.retryAfter !== undefined) reply.header('Retry-After', String(err.retryAfter));
  // Set for the answer the route was about to send, not for this error.
  reply.removeHeader('ETag');
  const answer = errorAnswer(kind, jsonWanted(request), err, handling.renderers, reply);
  return reply.code(answer.status).type(answer.contentType).send(answer.body);
}

/** The error handler of the app, also given to Fastify as `frameworkErrors` (the router's refusals). */
export function errorHandler(handling: ErrorHandling) {
  return (err: unknown, request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> => {
    const apiErr = toApiError(err, String(request.id));
    if (apiErr.code === 'internal_error') request.log.error({ err }, 'request failed');
    // The driver's code only: its message may quote the statement or the server's address.
    else if (apiErr.code === 'unavailable') request.log.warn({ cause: unavailableCause(err) }, 'database unavailable');
    return sendError(request, reply, apiErr, handling);
  };
}

export function installErrorHandling(app: FastifyInstance, handling: ErrorHandling): void {
  app.setErrorHandler(errorHandler(handling));
  app.setNotFoundHandler((request, reply) => {
    const message = isApiPath(request.url) ? 'No such API operation or path' : 'Page not found';
    return sendError(request, reply, new ApiError('not_found', message), handling);
  });
}

// The one place errors become answers (SPEC §6): API routes answer XML/JSON, the widget answers a
// script that reports the error, site pages answer HTML. 5xx messages never leak internals.
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError, errors, type ErrorCode } from '../domain/errors.js';
import { unavailableCause } from '../db/faults.js';
import { CONTENT_TYPE, render } from './document.js';
import { wantsJson } from './request-info.js';

export type RouteKind = 'api' | 'widget' | 'site' | 'ops';

export interface ErrorRenderers {
  widget?: (code: ErrorCode, message: string) => string;
  /** Also sets the page's headers on `reply` (error pages of unmatched paths get no others). */
  site?: (request: FastifyRequest, reply: FastifyReply, status: number, message: string) => string;
}

function describeValidation(err: FastifyError): string {
  const v = err.validation?.[0];
  if (!v) return err.message;
  const where = err.validationContext ?? 'request';
  const params = v.params as Record<string, unknown>;
  if (v.keyword === 'additionalProperties') return `unknown ${where} field "${String(params.additionalProperty)}"`;
  const field = (v.instancePath || '').replace(/^\//, '') || String(params.missingProperty ?? '');
  if (v.keyword === 'required') return `missing ${where} field "${String(params.missingProperty)}"`;
  return `${where} field "${field}" ${v.message ?? 'is invalid'}`;
}

export function toApiError(err: unknown, requestId: string): ApiError {
  if (err instanceof ApiError) return err;
  // The database (or its connection) failing is an outage to wait out, not a fault in this request.
  if (unavailableCause(err) !== null) return errors.unavailable();
  const e = err as FastifyError;
  if (e.validation) return new ApiError('invalid_request', describeValidation(e));
  if (e.code === 'FST_ERR_CTP_BODY_TOO_LARGE') return new ApiError('payload_too_large', 'Request body is larger than 64 KiB');
  if (e.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') return new ApiError('invalid_request', 'Unsupported Content-Type; send application/x-www-form-urlencoded or application/json');
  if (e.code === 'FST_ERR_CTP_EMPTY_JSON_BODY' || e.code === 'FST_ERR_CTP_INVALID_JSON_BODY' || e instanceof SyntaxError) return new ApiError('invalid_request', 'The request body is not valid JSON');
  if (e.statusCode === 414 || e.code === 'FST_ERR_BAD_URL') return new ApiError('invalid_request', 'Malformed URL');
  if (typeof e.statusCode === 'number' && e.statusCode >= 400 && e.statusCode < 500) return new ApiError('invalid_request', e.message);
  return new ApiError('internal_error', `Internal error (request ${requestId})`);
}

export function sendError(request: FastifyRequest, reply: FastifyReply, err: ApiError, renderers: ErrorRenderers): FastifyReply {
  const kind = (request.routeOptions.config as { kind?: RouteKind } | undefined)?.kind ?? (request.url.startsWith('/api/') ? 'api' : 'site');
  reply.code(err.status);
  if (err.retryAfter !== undefined) reply.header('Retry-After', String(err.retryAfter));
  if (kind === 'widget' && renderers.widget) {
    return reply.type('text/javascript; charset=utf-8').header('Cache-Control', 'private, no-store').send(renderers.widget(err.code, err.message));
  }
  if (kind === 'site' && renderers.site) {
    return reply.type('text/html; charset=utf-8').send(renderers.site(request, reply, err.status, err.message));
  }
  const format = wantsJson(request) ? 'json' : 'xml';
  return reply.type(CONTENT_TYPE[format]).send(render({ root: 'error', fields: { code: err.code, message: err.message } }, format));
}

export function installErrorHandling(app: FastifyInstance, renderers: ErrorRenderers): void {
  app.setErrorHandler((err, request, reply) => {
    const apiErr = toApiError(err, String(request.id));
    if (apiErr.code === 'internal_error') request.log.error({ err }, 'request failed');
    // The driver's code only: its message may quote the statement or the server's address.
    else if (apiErr.code === 'unavailable') request.log.warn({ cause: unavailableCause(err) }, 'database unavailable');
    return sendError(request, reply, apiErr, renderers);
  });
  app.setNotFoundHandler((request, reply) => {
    const message = request.url.startsWith('/api/') ? 'No such API operation or path' : 'Page not found';
    return sendError(request, reply, new ApiError('not_found', message), renderers);
  });
}

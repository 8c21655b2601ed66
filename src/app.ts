// The whole HTTP application as one Fastify instance. server.ts only starts it; tests build the same
// app and talk to it through HTTP (app.inject or a real port).
import type { Duplex } from 'node:stream';
import Fastify, { type FastifyInstance, type onResponseHookHandler, type RouteOptions } from 'fastify';
import formbody from '@fastify/formbody';
import type { Config } from './config.js';
import type { AppContext } from './context.js';
import { ApiError } from './domain/errors.js';
import { unavailableCause } from './db/faults.js';
import { API_VERSION, errorHandler, installErrorHandling, type ErrorHandling, type ErrorRenderers, type RouteKind } from './http/errors.js';
import { lazyValidators } from './http/lazy-validators.js';
import { countUnprovenRequest } from './http/api-route.js';
import { protocolErrorAnswers } from './http/protocol-errors.js';
import { newRequestId } from './http/request-ids.js';
import { discardUnreadBody, installBodyDiscarding } from './http/unread-body.js';
import { installNulRefusal } from './http/nul-refusal.js';
import { installConnectionCap, timeoutOptions, trustedPeer } from './http/connections.js';
import { createMetrics } from './http/metrics.js';
import { redactedError, redactUrl, secretQueryField } from './http/redact.js';
import { registerOpenApi } from './http/openapi.js';
import { registerApi } from './api/index.js';
import { registerOps } from './ops/routes.js';
import { logDependencyChanges } from './ops/dependency-log.js';
import { registerSite, siteErrorRenderer } from './site/index.js';
import { registerGravatar } from './gravatar/routes.js';
import { renderWidgetErrorScript } from './widget/boot-script.js';
import { registerWidget } from './widget/routes.js';

export interface AppOptions {
  /** Where JSON log lines go (tests read them); defaults to stdout. */
  logStream?: NodeJS.WritableStream;
  errorRenderers?: ErrorRenderers;
  /** Sees each route as it is registered, with its schemas (the abuse test and `npm run abuse` build their requests from them). */
  onRoute?: (route: RouteOptions) => void;
}

export { API_VERSION };
export const BODY_LIMIT = 64 * 1024;
const REQUEST_ID = /^[A-Za-z0-9._-]{1,64}$/;

declare module 'fastify' {
  interface FastifyContextConfig {
    kind?: RouteKind;
  }
}

/**
 * Fastify 5 ignores a hop count (it trusts no proxy then) because it cannot tell a proxy from a
 * client that connects directly; a function of the hop keeps TRUST_PROXY=N meaning "the N nearest
 * hops are our proxies" (docs/operations.md says to use addresses when the server is reachable directly).
 */
function trustProxyOption(trust: Config['trustProxy']): boolean | string | ((address: string, hop: number) => boolean) {
  return typeof trust === 'number' ? (_address, hop) => hop < trust : trust;
}

export async function buildApp(ctx: AppContext, options: AppOptions = {}): Promise<FastifyInstance> {
  const metrics = createMetrics();
  const countRequest = countUnprovenRequest(ctx);
  const handling: ErrorHandling = {
    renderers: { site: siteErrorRenderer(ctx), widget: renderWidgetErrorScript, ...options.errorRenderers },
    countRequest,
  };
  // What Node's HTTP parser refuses (oversized headers, not HTTP at all) never reaches Fastify.
  const protocolErrors = protocolErrorAnswers(handling.renderers);
  const answerError = errorHandler(handling);
  const app = Fastify({
    logger: {
      level: ctx.config.logLevel,
      ...(options.logStream ? { stream: options.logStream } : {}),
      serializers: {
        // Never the body, headers or the raw URL: those can hold secrets or e-mail addresses.
        req: (req: { method: string; url: string; ip?: string; id?: string }) => ({ method: req.method, url: redactUrl(req.url), id: req.id }),
        res: (res: { statusCode: number }) => ({ statusCode: res.statusCode }),
        // An error may quote the URL or body it failed on (a parser's message, a library's `input`).
        err: redactedError,
      },
    },
    bodyLimit: BODY_LIMIT,
    ...timeoutOptions(ctx.config),
    trustProxy: trustProxyOption(ctx.config.trustProxy),
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: 2048 },
    genReqId: (req) => {
      const given = req.headers['x-request-id'];
      return typeof given === 'string' && REQUEST_ID.test(given) ? given : newRequestId();
    },
    ajv: { customOptions: { removeAdditional: false, coerceTypes: false, allErrors: false } },
    schemaController: { compilersFactory: { buildValidator: lazyValidators() } },
    // The router's refusals (a path segment over maxParamLength, a malformed %-encoding) are
    // answered like every other error, not with Fastify's JSON that quotes the whole path.
    frameworkErrors(err, request, reply) {
      discardUnreadBody(request, reply)
        .then(() => answerError(err, request, reply))
        .catch((e: unknown) => {
          request.log.error({ err: e }, 'could not answer a request the router refused');
          reply.raw.destroy();
        });
    },
    clientErrorHandler(err, socket) {
      protocolErrors.clientError(err, socket, app.log);
    },
  });
  app.server.on('connect', (req, socket: Duplex) => protocolErrors.connect(req, socket, app.log));

  // First of the hooks: a connection over its address's cap is served nothing.
  installConnectionCap(app, ctx.config.connectionsPerAddress, trustedPeer(ctx.config.trustProxy));
  await app.register(formbody);
  await registerOpenApi(app, ctx.config.baseUrl, countRequest);

  // The hooks run on every request, so they take a callback rather than being async: no promise
  // and no extra microtask turn per hook.
  app.addHook('onRequest', (request, reply, done) => {
    reply.header('X-Request-Id', String(request.id));
    reply.header('X-Content-Type-Options', 'nosniff');
    if (request.url.startsWith('/api/')) {
      reply.header('X-Idsvc-Api-Version', API_VERSION);
      const leaked = secretQueryField(request.query as Record<string, unknown>);
      // The value is neither echoed nor logged; the request stops here.
      if (leaked) return done(new ApiError('credentials_in_query', `${leaked} must be sent in the POST body, never in the URL`));
    }
    done();
  });

  // Metrics by route pattern. Each route gets its own onResponse hook that knows its pattern, so a
  // request neither builds request.routeOptions (a new object on every read) nor hashes labels;
  // requests that match no route are counted by the global hook.
  app.addHook('onRoute', (route) => {
    const recorder = metrics.forRoute(route.url ?? route.path ?? 'unknown');
    const hook: onResponseHookHandler = (request, reply, done) => {
      recorder.record(request.method, reply.statusCode, reply.elapsedTime / 1000);
      done();
    };
    route.onResponse = route.onResponse === undefined ? [hook] : [...(Array.isArray(route.onResponse) ? route.onResponse : [route.onResponse]), hook];
  });
  const unmatched = metrics.forRoute('unmatched');
  app.addHook('onResponse', (request, reply, done) => {
    if (request.is404) unmatched.record(request.method, reply.statusCode, reply.elapsedTime / 1000);
    done();
  });

  if (options.onRoute) app.addHook('onRoute', options.onRoute);

  installBodyDiscarding(app, BODY_LIMIT);
  installNulRefusal(app);
  installErrorHandling(app, handling);
  registerOps(app, ctx, metrics);
  logDependencyChanges(app, ctx);
  // Counts a flush could not write stay in memory for the next one (a deleted partner's are dropped); the log says why.
  ctx.usage.onFlushError = (err) => app.log.warn({ cause: unavailableCause(err) ?? 'error', err }, 'usage counts not written');
  registerApi(app, ctx);
  registerWidget(app, ctx);
  registerGravatar(app, ctx);
  await registerSite(app, ctx);
  return app;
}

// Every partner API operation goes through apiRoute(): GET and POST on each of its paths, schemas
// that reject unknown fields, the api_key / api_token / origin checks of SPEC §5, the rate limits of
// SPEC §8, and the answer rendered as XML or JSON. An operation module supplies only its schemas
// and a handler that returns a Doc.
import { Type, type Static, type TObject, type TProperties, type TString } from '@sinclair/typebox';
import type { Answer } from './api-schemas.js';
import type { FastifyInstance, FastifyReply, FastifyRequest, onResponseHookHandler, preValidationHookHandler } from 'fastify';
import { typed } from './typed-app.js';
import type { AppContext } from '../context.js';
import { allowedOrigins, tokenMatches, type Partner } from '../repositories/partners.js';
import { ApiError, errors } from '../domain/errors.js';
import { CONTENT_TYPE, render, type Doc, type Format } from './document.js';
import { requestOrigin, unvalidatedString, wantsJson } from './request-info.js';
import type { LimitState } from '../services/rate-limits.js';
import type { PartnerProof, Reader } from '../services/partner-data.js';
import type { SignatureCheck } from '../widget/signature.js';
import { PRIVATE_NO_STORE, readsByGet, sendPublic } from './cache-headers.js';

/** No fields besides those every operation accepts. */
export type NoFields = Record<never, never>;

/**
 * What a handler reads from the body, typed by the operation's schema: its own fields and the
 * api_token. Partial: a GET carries no body, so even a field the POST schema requires may be absent.
 */
export type ApiBody<B extends TProperties> = Readonly<Partial<Static<TObject<typeof tokenField & B>>>>;
/** What a handler reads from the query string, typed by the operation's schema, `format` included. */
export type ApiQuery<Q extends TProperties> = Readonly<Static<TObject<typeof formatField & Q>>>;

export interface ApiCall<B extends TProperties = TProperties, Q extends TProperties = TProperties> {
  readonly ctx: AppContext;
  readonly partner: Partner;
  /** The caller proved itself with its api_token (SPEC §3 rule 0). */
  readonly authenticated: boolean;
  /** Who reads: the partner when it proved itself (api_token, or the operation's signed URL), else anyone. */
  readonly reader: Reader;
  /** The operation's signed-URL check (`urlProof`), when it has one. */
  readonly urlProof: SignatureCheck | null;
  /** The path's segments (an operation's paths differ in which they have). */
  readonly params: Readonly<Record<string, string>>;
  readonly body: ApiBody<B>;
  readonly query: ApiQuery<Q>;
  readonly ip: string;
  /**
   * A shared cache may keep this answer (http/cache-headers.ts): the operation's answers are
   * public (`cache`), asked for by GET, without any proof, for the public view where the operation
   * has views. A raw handler sets its headers by it.
   */
  readonly shared: boolean;
  readonly request: FastifyRequest;
  readonly reply: FastifyReply;
}

/**
 * An operation, its handler typed by its own schemas (`body`, `query`). Written through
 * `apiOperation()`, which infers both; listed as `ApiOperation` (any fields) in src/api/index.ts.
 */
export interface ApiOperation<B extends TProperties = TProperties, Q extends TProperties = TProperties> {
  operationId: string;
  summary: string;
  description?: string;
  paths: string[];
  /** Paths answered on POST only (the seed's unsync_user shares the widget's path shape). */
  postOnlyPaths?: string[];
  /** Body fields besides api_token, which every operation accepts (old clients always send it). */
  body?: B;
  /** Query fields besides `format`. */
  query?: Q;
  tokenRequired: boolean;
  /** What a successful answer holds (the widget answers a script instead). */
  answer: Answer | 'javascript';
  /**
   * How the API description lists the operation: once, under one method and the paths named here
   * (default POST and the first path); the other method and paths answer alike (docs/spec.md).
   */
  documented?: { method?: 'GET' | 'POST'; paths?: string[]; summaries?: string[]; bodies?: Record<string, string>[] };
  /** A real call for the curl example of the reference page (placeholders like $API_KEY allowed). */
  example: ApiExample;
  /** The answer; at once, rather than as a promise, when nothing had to be waited for (an answer from memory). */
  handler(call: ApiCall<B, Q>): Doc | Promise<Doc>;
  /** Render something other than XML/JSON (the widget answers JavaScript). */
  raw?: boolean;
  /**
   * `public`: what it answers a GET without proof is the public view, the same for everyone, so a
   * shared cache may keep it for a short while (Cache-Control, ETag, 304). A function says which of
   * those calls ask for the public view: another view served without proof (a legacy_open_reads
   * partner's private view) is no less private. Every other answer of every operation is
   * `private, no-store`.
   */
  cache?: 'public' | ((call: Pick<ApiCall<B, Q>, 'params' | 'query'>) => boolean);
  /** How errors are answered (SPEC §4.4: the widget answers a script, also for errors). */
  kind?: 'api' | 'widget';
  /**
   * Proof carried in the URL instead of the api_token (the widget's signed URLs, SPEC §7). Checked
   * before the rate limits, because proven and unproven calls draw on separate budgets.
   */
  urlProof?(partner: Partner, request: FastifyRequest, nowMs: number): SignatureCheck;
}

/** An operation whose handler reads `call.body` and `call.query` in the types of its own schemas. */
export function apiOperation<B extends TProperties = NoFields, Q extends TProperties = NoFields>(op: ApiOperation<B, Q>): ApiOperation<B, Q> {
  return op;
}

export interface ApiExample {
  params: Record<string, string>;
  query?: Record<string, string>;
  body?: Record<string, string>;
}

/** The request headers a partner API answer follows besides its URL: Accept (XML or JSON) and Origin (allowed or refused). */
export const API_VARY = 'Accept, Origin';

export const API_KEY_PATTERN = /^[a-z0-9]{32}$/;

const PARAM_DOCS: Record<string, string> = {
  api_key: "The partner's public API key (32 characters a-z0-9).",
  user_identifier: 'MD5 or SHA-256 hex digest of the normalised e-mail address, the e-mail address itself, or a userId.',
  profile_type: '`public` or `private` (default `private`).',
  svcId: 'A service id from the catalogue, in any case (`GitHub` is `github`).',
  usrSvcId: "The user's identifier on the service (may also be sent in the body).",
  order: '`popularity`, `alphanumeric` or `combined` (any case).',
  limit: 'Maximum number of entries, 1–1000.',
  order_or_svcId: 'A service id, or an order name (`popularity`, `alphanumeric`, `combined`); either in any case.',
  display_sync: '`TRUE` or `FALSE` (any case): show the sync form.',
};

export function paramsSchema(path: string): TObject<Record<string, TString>> {
  const names = [...path.matchAll(/:([A-Za-z_]+)/g)].map((m) => m[1] as string);
  const props: Record<string, TString> = {};
  for (const n of names) props[n] = Type.String({ maxLength: 256, description: PARAM_DOCS[n] ?? n });
  return Type.Object(props);
}

const tokenField = {
  api_token: Type.Optional(Type.String({ maxLength: 256, description: "The partner's secret API token. Body only, never in a URL." })),
};

const formatField = {
  format: Type.Optional(
    Type.Union([Type.Literal('xml'), Type.Literal('json')], { description: 'Answer format (default XML; `Accept: application/json` also selects JSON).' }),
  ),
};

/** Reports the tightest of the limits that applied (at least one does); throws rate_limited when one refused the call. */
function setLimitHeaders(reply: FastifyReply, first: LimitState | null, second: LimitState | null): void {
  const tightest = first === null || (second !== null && second.remaining < first.remaining) ? second! : first;
  reply.header('RateLimit-Limit', String(tightest.limit));
  reply.header('RateLimit-Remaining', String(Math.max(0, tightest.remaining)));
  reply.header('RateLimit-Reset', String(tightest.resetSeconds));
  const blocked = first?.allowed === false ? first : second?.allowed === false ? second : null;
  if (blocked) throw errors.rateLimited(blocked.resetSeconds);
}

function originAllowed(partner: Partner, origin: string | null): boolean {
  if (origin === null) return true; // not a browser request
  const allowed = allowedOrigins(partner);
  return allowed.length === 0 || allowed.includes(origin);
}

/** Who is calling, settled before the schemas run so that a schema 400 is counted and says so too. */
interface Caller {
  partner: Partner | undefined;
  authenticated: boolean;
  token: string | undefined;
  /** The partner's proof: its api_token, or a URL its server signed. */
  proof: PartnerProof | null;
  urlProof: SignatureCheck | null;
  /** The key's budget this call drew on, for the usage counts; null without a partner. */
  budget: LimitState | null;
}

declare module 'fastify' {
  interface FastifyRequest {
    apiCaller: Caller | null;
  }
}

/**
 * SPEC §8: a key's proven calls (its api_token, or a URL its server signed) and the
 * calls anyone makes with the public key alone draw on separate budgets, so traffic spread over
 * many addresses cannot use up the partner's own. A partner's override (`partner set
 * --rate-limit`) sets its proven budget and also caps its unproven one: an operator who limits a
 * key limits it both ways, while a raised limit is for the partner's own calls. Calls without the
 * api_token are also counted per address: a signed URL works for whoever holds it, the token
 * never leaves the partner's server. The key's budget comes first; null where it does not apply.
 */
function consumeLimits(
  ctx: AppContext,
  request: FastifyRequest,
  partner: Partner | undefined,
  proof: PartnerProof | null,
): [MaybeLimit | null, MaybeLimit | null] {
  let key: MaybeLimit | null = null;
  if (partner) {
    const override = partner.rate_limit_per_minute;
    const unproven = ctx.config.rateLimitPerKeyUnprovenPerMinute;
    key = proof
      ? ctx.limiter.consume('key', partner.api_key, override ?? ctx.config.rateLimitPerKeyPerMinute)
      : ctx.limiter.consume('key-unproven', partner.api_key, override === null ? unproven : Math.min(override, unproven));
  }
  const address = proof?.by !== 'api_token' ? ctx.limiter.consume('addr', request.ip, ctx.config.rateLimitPerAddressPerMinute) : null;
  return [key, address];
}

type MaybeLimit = LimitState | Promise<LimitState>;

/**
 * Counts the request against the limits that apply to its caller and sets RateLimit-* (SPEC §8).
 * Without Redis, with the partner row in memory, it all happens at once: no promise is made for
 * what every API call does first.
 */
function countCaller(ctx: AppContext, op: ApiOperation, request: FastifyRequest, reply: FastifyReply): void | Promise<void> {
  const key = unvalidatedString(request.params, 'api_key') ?? '';
  const partner = API_KEY_PATTERN.test(key) ? ctx.partners.get(key) : undefined;
  return partner instanceof Promise ? partner.then((p) => countPartnerCall(ctx, op, request, reply, p)) : countPartnerCall(ctx, op, request, reply, partner);
}

function countPartnerCall(ctx: AppContext, op: ApiOperation, request: FastifyRequest, reply: FastifyReply, partner: Partner | undefined): void | Promise<void> {
  const now = ctx.clock.now();
  // The body is parsed but not yet validated: a token that is not a string is no proof (its 400 follows).
  const token = unvalidatedString(request.body, 'api_token');
  const authenticated = partner !== undefined && token !== undefined && tokenMatches(partner, token, now);
  const urlProof = partner && op.urlProof ? op.urlProof(partner, request, now) : null;
  const proof: PartnerProof | null = !partner
    ? null
    : authenticated
      ? { partner, by: 'api_token' }
      : urlProof?.status === 'valid'
        ? { partner, by: 'widget_signature' }
        : null;
  const caller: Caller = { partner, authenticated, token, proof, urlProof, budget: null };
  request.apiCaller = caller;
  const [keyLimit, addressLimit] = consumeLimits(ctx, request, partner, proof);
  const settle = (keyState: LimitState | null, addressState: LimitState | null) => {
    caller.budget = keyState;
    setLimitHeaders(reply, keyState, addressState);
  };
  if (keyLimit instanceof Promise || addressLimit instanceof Promise) return Promise.all([keyLimit, addressLimit]).then(([k, a]) => settle(k, a));
  settle(keyLimit, addressLimit);
}

/**
 * Counts a request under /api that no operation counted: one refused before its route's hooks
 * ran (a body the parser refused, a path the router refused) or one that matched no operation.
 * Nothing in it is proven, so it counts against the client address.
 */
export function countUnprovenRequest(ctx: AppContext) {
  return async (request: FastifyRequest, reply: FastifyReply): Promise<ApiError | undefined> => {
    const state = await ctx.limiter.consume('addr', request.ip, ctx.config.rateLimitPerAddressPerMinute);
    try {
      setLimitHeaders(reply, state, null);
      return undefined;
    } catch (e) {
      return e as ApiError;
    }
  };
}

interface Authorised {
  partner: Partner;
  authenticated: boolean;
  reader: Reader;
  urlProof: SignatureCheck | null;
}

function authorise(request: FastifyRequest, op: ApiOperation): Authorised {
  const { partner, authenticated, token, proof, urlProof } = request.apiCaller!;
  if (!partner) throw errors.invalidApiKey();
  if (partner.suspended) throw errors.forbidden('This partner is suspended');
  if (!originAllowed(partner, requestOrigin(request))) throw errors.forbidden('Origin not allowed for this API key');
  if (token !== undefined && !authenticated) throw errors.invalidApiToken();
  if (op.tokenRequired && !authenticated) throw errors.invalidApiToken('This operation needs the api_token in the POST body');
  return { partner, authenticated, reader: proof ?? 'anyone', urlProof };
}

export function formatOf(request: FastifyRequest): Format {
  return wantsJson(request) ? 'json' : 'xml';
}

const emptyBodyIsNoFields: preValidationHookHandler = (request, _reply, done) => {
  if (request.body === undefined || request.body === null) request.body = {};
  done();
};

/** The fields an operation's POST body may carry (form or JSON). */
export function bodySchema(op: ApiOperation): TObject<typeof tokenField & TProperties> {
  return Type.Object({ ...tokenField, ...op.body }, { additionalProperties: false });
}

export function querySchema(op: ApiOperation): TObject<typeof formatField & TProperties> {
  return Type.Object({ ...formatField, ...op.query }, { additionalProperties: false });
}

export function apiRoute(app: FastifyInstance, ctx: AppContext, op: ApiOperation): void {
  if (!app.hasRequestDecorator('apiCaller')) app.decorateRequest('apiCaller', null);
  const count: preValidationHookHandler = (request, reply, done) => {
    let counting: void | Promise<void>;
    try {
      counting = countCaller(ctx, op, request, reply);
    } catch (err) {
      done(err as Error);
      return;
    }
    if (counting) counting.then(() => done(), done);
    else done();
  };
  const body = bodySchema(op);
  const querystring = querySchema(op);
  // Every answer to a call whose api_key names a partner, whatever it was (refusals and 429s too).
  const usage = ctx.config.usageCounting ? ctx.usage : null;
  const slot = usage ? usage.operation(op.operationId) : -1;
  const countUsage: onResponseHookHandler = (request, reply, done) => {
    const caller = request.apiCaller;
    if (caller?.partner) usage!.record(caller.partner.id, slot, reply.statusCode, caller.budget, caller.proof !== null);
    done();
  };
  const onResponse = usage ? { onResponse: countUsage } : {};
  const send = (request: FastifyRequest, reply: FastifyReply, doc: Doc, shared: boolean): FastifyReply => {
    if (op.raw) return reply;
    const format = formatOf(request);
    // A body rendered by the handler goes out as it was made (bytes when the answer cache keeps it); anything else is rendered now.
    const body = 'rendered' in doc ? doc.rendered.payload : render(doc, format);
    if (!shared) return reply.type(CONTENT_TYPE[format]).send(body);
    // The format follows Accept, and the partner's allowed origins decide whether it is answered at all.
    return sendPublic(ctx.config, request, reply, {
      contentType: CONTENT_TYPE[format],
      body,
      etag: 'rendered' in doc ? doc.rendered.etag : undefined,
      vary: API_VARY,
    });
  };
  // Sent at once when the handler answered at once (Fastify then wants undefined back); an error
  // thrown here reaches the error handler like a rejected promise does.
  const answer = (request: FastifyRequest, reply: FastifyReply, call: Pick<ApiCall, 'params' | 'body' | 'query'>): undefined | Promise<FastifyReply> => {
    const { partner, authenticated, reader, urlProof } = authorise(request, op);
    const shared = op.cache !== undefined && reader === 'anyone' && readsByGet(request) && mayBeKeptShared(op, call);
    // Proof, a POST, a view other than the public one, or an operation whose answers are never
    // shared: no cache keeps it. (A shared answer gets its headers from sendPublic; an error, from
    // the error handler.)
    if (!shared) reply.header('Cache-Control', PRIVATE_NO_STORE);
    // Every field named, no spread: a literal that spreads another object is built field by field
    // after the spread (a copy, then a keyed define per field) instead of as one object of a known shape.
    const doc = op.handler({
      ctx,
      partner,
      authenticated,
      reader,
      urlProof,
      params: call.params,
      body: call.body,
      query: call.query,
      ip: request.ip,
      shared,
      request,
      reply,
    });
    if (doc instanceof Promise) return doc.then((d) => send(request, reply, d, shared));
    send(request, reply, doc, shared);
    return undefined;
  };
  // The schemas validate each request and, through the type provider, type what the handler reads.
  const routes = typed(app);
  for (const path of op.paths) {
    const params = paramsSchema(path);
    // hide: the API description is built from the same schemas (openapi-paths.ts).
    const config = { kind: op.kind ?? 'api' };
    // GET carries no body (Fastify refuses a body schema on it): the handler sees no fields.
    if (!op.postOnlyPaths?.includes(path)) {
      routes.get(path, { config, preValidation: count, ...onResponse, schema: { hide: true, params, querystring } }, (request, reply) =>
        answer(request, reply, { params: request.params, body: {}, query: request.query }),
      );
    }
    // A POST without a body (or Content-Type) means "no fields", not a malformed body.
    routes.post(
      path,
      { config, preValidation: [emptyBodyIsNoFields, count], ...onResponse, schema: { hide: true, params, querystring, body } },
      (request, reply) => answer(request, reply, { params: request.params, body: request.body, query: request.query }),
    );
  }
}

/** Whether a call without proof asks for an answer a shared cache may keep (ApiOperation.cache). */
function mayBeKeptShared(op: ApiOperation, call: Pick<ApiCall, 'params' | 'query'>): boolean {
  if (op.cache === 'public') return true;
  try {
    return op.cache?.(call) ?? false;
  } catch {
    // A call the operation cannot read (a malformed view name): its handler answers the error.
    return false;
  }
}

export { ApiError };

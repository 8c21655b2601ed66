// Gravatar-compatible reads: GET /v3/profiles/{profileIdentifier}, as Gravatar's REST
// API v3 answers it, and GET /avatar/{hash}, the photo or letter avatar its `avatar_url` points at. Both are
// readable from any web page (CORS `*`), kept by shared caches for PUBLIC_CACHE_MAX_AGE (http/cache-headers.ts) with an ETag, and answer JSON
// errors `{"error", "code"}` as Gravatar does. Unknown, hidden and unproven users answer alike.
import { Type } from '@sinclair/typebox';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../context.js';
import { ApiError } from '../domain/errors.js';
import { PRIVATE_NO_STORE, etagOf, notModified, sendPublic } from '../http/cache-headers.js';
import { toApiError } from '../http/errors.js';
import { type TypedApp, typed } from '../http/typed-app.js';
import { countAnonymous, gravatarErrorCode, profileReader } from './caller.js';
import { blankSvg, identiconSvg } from './identicon.js';
import { avatarSize, letterAvatarSvg, neutralAvatarSvg } from './letter-avatar.js';
import { photoAvatar } from './photos.js';
import { findVisibleAccount, gravatarProfile, nameOf, parseProfileIdentifier } from './profile.js';
import { ErrorSchema, GRAVATAR_SCHEMAS, ProfileSchema } from './schemas.js';

const EXPOSED_HEADERS = 'ETag, Retry-After, X-RateLimit-Limit, X-RateLimit-Remaining, X-RateLimit-Reset';
const NOT_FOUND_MESSAGE = 'Profile not found';

function openToAnyOrigin(reply: FastifyReply): FastifyReply {
  return reply.header('Access-Control-Allow-Origin', '*').header('Access-Control-Expose-Headers', EXPOSED_HEADERS);
}

function sendError(request: FastifyRequest, reply: FastifyReply, err: ApiError): FastifyReply {
  if (err.code === 'internal_error') request.log.error({ err }, 'request failed');
  if (err.retryAfter !== undefined) reply.header('Retry-After', String(err.retryAfter));
  return openToAnyOrigin(reply)
    .code(err.status)
    .header('Cache-Control', 'no-store')
    .type('application/json; charset=utf-8')
    .send(JSON.stringify({ error: err.message, code: gravatarErrorCode(err) }));
}

/** Every failure of these routes, validation and the database included, as Gravatar's error object. */
function errorHandler(this: FastifyInstance, error: FastifyError, request: FastifyRequest, reply: FastifyReply): FastifyReply {
  const err = toApiError(error, String(request.id));
  if (err.code === 'unavailable') request.log.warn('database unavailable');
  else if (err.code === 'internal_error') request.log.error({ err: error }, 'request failed');
  return sendError(request, reply, err);
}

const notFound = () => new ApiError('not_found', NOT_FOUND_MESSAGE);

/**
 * The partner's fuller view: no cache keeps it. Its ETag still lets the partner's own client skip
 * an unchanged body (the request carries the token, so it asks idsvc every time).
 */
function sendPrivate(request: FastifyRequest, reply: FastifyReply, contentType: string, body: string): FastifyReply {
  const etag = etagOf(body);
  reply.header('ETag', etag).header('Cache-Control', PRIVATE_NO_STORE);
  if (notModified(request, etag)) return reply.code(304).send();
  return reply.type(contentType).send(body);
}

const RATE_HEADERS = {
  'X-RateLimit-Limit': {
    type: 'integer',
    description: "Requests allowed a minute: per client address, or the partner's own budget with a valid Bearer token.",
  },
  'X-RateLimit-Remaining': { type: 'integer', description: 'Requests left in the current minute.' },
  'X-RateLimit-Reset': { type: 'integer', description: "When the current minute's window ends, in Unix seconds." },
};
const errorContent = { 'application/json': { schema: Type.Ref(ErrorSchema) } };
const UNAVAILABLE = { description: 'The database cannot be reached just now (`unavailable`); `Retry-After` says when to retry.', content: errorContent };

function registerProfiles(app: TypedApp, ctx: AppContext): void {
  const path = '/v3/profiles/:profileIdentifier';
  app.route({
    method: 'GET',
    url: path,
    config: { kind: 'ops' },
    errorHandler,
    schema: {
      operationId: 'getProfileById',
      summary: "A profile, as Gravatar's REST API v3 answers it",
      description:
        "Gravatar-compatible (docs/gravatar-compatibility.md): a client of `https://api.gravatar.com/v3` reads idsvc by changing only its base URL. The identifier is the SHA-256 of the normalised e-mail address (the MD5 also works) or the userId. Only opted-in users with a proven address have a profile; every other identifier, hidden users included, is the same 404. Fields follow the user's public flags. Without authentication at most 4 verified accounts are listed; `Authorization: Bearer {api_token}` of a partner lists all and adds the authenticated-only fields. CORS open; `Cache-Control: public, max-age=60, stale-while-revalidate=60` by default (`PUBLIC_CACHE_MAX_AGE`, `PUBLIC_CACHE_STALE`), `private, no-store` with a token; a strong `ETag`, 304 on `If-None-Match`.",
      tags: ['Gravatar-compatible'],
      security: [{}, { partnerApiToken: [] }],
      params: Type.Object({
        profileIdentifier: Type.String({ maxLength: 256, description: 'The SHA-256 (or MD5) hex of the trimmed, lower-cased e-mail address, or the userId.' }),
      }),
      response: {
        200: {
          description: 'The profile.',
          headers: { ...RATE_HEADERS, ETag: { type: 'string', description: 'Changes with the answer.' } },
          content: { 'application/json': { schema: Type.Ref(ProfileSchema) } },
        },
        304: { description: 'Unchanged since the ETag given in `If-None-Match`.', type: 'null' },
        401: {
          description: "An Authorization header that is not a partner's valid api_token as a Bearer token (`invalid_api_token`).",
          headers: RATE_HEADERS,
          content: errorContent,
        },
        403: {
          description: "The token's partner is suspended, or the page's origin is not one it allows (`forbidden`).",
          headers: RATE_HEADERS,
          content: errorContent,
        },
        404: {
          description: 'No visible user by that identifier: unknown, not opted in, or with an unproven address, alike (`not_found`).',
          headers: RATE_HEADERS,
          content: errorContent,
        },
        429: {
          description: 'Over the request budget (`rate_limit_exceeded`); `Retry-After` says when to retry.',
          headers: { ...RATE_HEADERS, 'Retry-After': { type: 'integer', description: 'Seconds until a retry may succeed.' } },
          content: errorContent,
        },
        503: UNAVAILABLE,
      },
    },
    handler: async (request, reply) => {
      const partner = await profileReader(ctx, request, reply);
      reply.header('Vary', 'Authorization');
      const lookup = parseProfileIdentifier(request.params.profileIdentifier);
      // Public data, so it may come from a read replica slightly behind (one for the whole answer).
      const from = ctx.db.behind();
      const account = lookup && (await findVisibleAccount(from, lookup));
      if (!lookup || !account) throw notFound();
      const profile = await gravatarProfile(ctx, account, lookup, partner !== null, from);
      openToAnyOrigin(reply);
      const body = JSON.stringify(profile);
      if (partner) return sendPrivate(request, reply, 'application/json; charset=utf-8', body);
      return sendPublic(ctx.config, request, reply, { contentType: 'application/json; charset=utf-8', body });
    },
  });
  // The preflight a page's fetch with an Authorization header makes.
  app.options(path, { config: { kind: 'ops' }, schema: { hide: true } }, async (_request, reply) =>
    openToAnyOrigin(reply)
      .header('Access-Control-Allow-Methods', 'GET, HEAD')
      .header('Access-Control-Allow-Headers', 'Authorization')
      .header('Access-Control-Max-Age', '600')
      .code(204)
      .send(),
  );
}

/** Gravatar's `f=y` (or `forcedefault=y`): the default picture even for a user who has an avatar. */
const forcesDefault = (raw: string | undefined) => raw === 'y' || raw === 'yes' || raw === '1';

/** Gravatar's `d=` for an identifier that names no visible user: its own picture, or the neutral one. */
function defaultAvatar(kind: string | undefined, identifier: string, size: number): string {
  switch (kind) {
    case 'identicon':
    case 'retro':
    case 'monsterid':
    case 'wavatar':
    case 'robohash':
      return identiconSvg(identifier, size);
    case 'blank':
      return blankSvg(size);
    default: // mp, mm, mysteryman, initials, a URL, none
      return neutralAvatarSvg(size);
  }
}

function registerAvatars(app: TypedApp, ctx: AppContext): void {
  app.route({
    method: 'GET',
    url: '/avatar/:avatarId',
    config: { kind: 'ops' },
    errorHandler,
    schema: {
      operationId: 'getAvatar',
      summary: "The avatar a profile's `avatar_url` points at: the user's photo, or their letter avatar",
      description:
        "A visible user's photo (JPEG, square) when they uploaded one on the site, otherwise an SVG of the initials of their display name. `s` (or `size`): 1–2048 pixels, default 80. `d` (or `default`), for an identifier that names no visible user (unknown, hidden and unproven alike): `404` answers 404; `identicon` (and `retro`, `monsterid`, `wavatar`, `robohash`) a pattern drawn from the identifier; `blank` a transparent square; `mp` or anything else one neutral silhouette. `f=y` (or `forcedefault=y`) gives the default even for a visible user. Other Gravatar parameters are accepted and ignored. A `.png`/`.jpg` suffix is ignored: the type is in `Content-Type`. `Cache-Control: public, max-age=60, stale-while-revalidate=60` by default (`PUBLIC_CACHE_MAX_AGE`, `PUBLIC_CACHE_STALE`), a strong `ETag` of the bytes, 304 on `If-None-Match`.",
      tags: ['Gravatar-compatible'],
      params: Type.Object({
        avatarId: Type.String({ maxLength: 256, description: 'The SHA-256 (or MD5) hex of the normalised e-mail address, or the userId.' }),
      }),
      querystring: Type.Object(
        {
          s: Type.Optional(Type.String({ description: 'Size in pixels, 1–2048.' })),
          size: Type.Optional(Type.String({ description: 'Same as `s`.' })),
          d: Type.Optional(Type.String({ description: 'When no visible user: `404`, `identicon`, `blank`, or `mp` (the default).' })),
          default: Type.Optional(Type.String({ description: 'Same as `d`.' })),
          f: Type.Optional(Type.String({ description: '`y`: the default picture whoever the identifier names.' })),
          forcedefault: Type.Optional(Type.String({ description: 'Same as `f`.' })),
        },
        { additionalProperties: true },
      ),
      response: {
        200: {
          description: 'The avatar.',
          headers: { ...RATE_HEADERS, ETag: { type: 'string', description: 'A strong ETag of the bytes.' } },
          content: { 'image/jpeg': { schema: { type: 'string', format: 'binary' } }, 'image/svg+xml': { schema: { type: 'string' } } },
        },
        304: { description: 'Unchanged since the ETag given in `If-None-Match`.', type: 'null' },
        404: { description: 'With `d=404`: no visible user by that identifier.', headers: RATE_HEADERS, content: errorContent },
        429: { description: 'Over the per-address budget (`rate_limit_exceeded`).', headers: RATE_HEADERS, content: errorContent },
        503: UNAVAILABLE,
      },
    },
    handler: async (request, reply) => {
      await countAnonymous(ctx, request, reply, 'avatars');
      const query = request.query;
      const id = request.params.avatarId.replace(/\.(jpe?g|png|gif|webp|svg)$/i, '');
      const lookup = parseProfileIdentifier(id);
      const from = ctx.db.behind();
      const account = lookup && (await findVisibleAccount(from, lookup));
      const size = avatarSize(query.s ?? query.size);
      const fallback = query.d ?? query.default;
      const own = account && !forcesDefault(query.f ?? query.forcedefault) ? account : undefined;
      if (!own && fallback === '404') throw notFound();
      const photo = own && (await photoAvatar(from, own.ref, size));
      openToAnyOrigin(reply).header('Cross-Origin-Resource-Policy', 'cross-origin').header('Content-Security-Policy', "default-src 'none'");
      if (photo) return sendPublic(ctx.config, request, reply, { contentType: 'image/jpeg', body: photo.bytes, etag: photo.etag });
      const svg = own ? letterAvatarSvg(nameOf(own), size) : defaultAvatar(fallback, id, size);
      return sendPublic(ctx.config, request, reply, { contentType: 'image/svg+xml', body: svg });
    },
  });
}

export function registerGravatar(app: FastifyInstance, ctx: AppContext): void {
  for (const schema of GRAVATAR_SCHEMAS) app.addSchema(schema);
  const routes = typed(app);
  registerProfiles(routes, ctx);
  registerAvatars(routes, ctx);
}

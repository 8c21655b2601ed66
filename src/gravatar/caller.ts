// Who asks for a Gravatar-compatible profile, and how much they may ask. Gravatar's clients send
// `Authorization: Bearer {key}`; here the key is a partner's api_token (the api_key is public and
// proves nothing, SPEC §3 rule 0). A proven partner draws on its own request budget; everyone else
// on one per client address. Answers carry Gravatar's X-RateLimit-* headers (Reset as Unix seconds)
// beside idsvc's RateLimit-* (Reset as seconds from now).
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../context.js';
import type { Partner } from '../repositories/partners.js';
import { type ApiError, errors } from '../domain/errors.js';
import { requestOrigin } from '../http/request-info.js';
import { allowedOrigins, findPartnerByToken } from '../repositories/partners.js';
import type { LimitState } from '../services/rate-limits.js';

export type Budget = 'profiles' | 'avatars';

function setLimitHeaders(reply: FastifyReply, state: LimitState): void {
  const remaining = String(Math.max(0, state.remaining));
  reply
    .header('X-RateLimit-Limit', String(state.limit))
    .header('X-RateLimit-Remaining', remaining)
    // The limiter's windows run on the real clock, so the reset time does too.
    .header('X-RateLimit-Reset', String(Math.ceil(Date.now() / 1000) + state.resetSeconds))
    .header('RateLimit-Limit', String(state.limit))
    .header('RateLimit-Remaining', remaining)
    .header('RateLimit-Reset', String(state.resetSeconds));
}

/** Counts one request from whoever is not a proven partner, per client address; throws `rate_limited` past the budget. */
export async function countAnonymous(ctx: AppContext, request: FastifyRequest, reply: FastifyReply, budget: Budget): Promise<void> {
  const state = await ctx.limiter.consume(`gravatar-${budget}`, request.ip, ctx.config.rateLimitPerAddressPerMinute);
  setLimitHeaders(reply, state);
  if (!state.allowed) throw errors.rateLimited(state.resetSeconds);
}

/**
 * The partner a request proves itself as, or null for anyone; counted against the matching budget.
 * A token that names no partner is refused rather than read as no token, as on the partner API.
 */
export async function profileReader(ctx: AppContext, request: FastifyRequest, reply: FastifyReply): Promise<Partner | null> {
  const header = request.headers.authorization;
  const token = header === undefined ? undefined : /^Bearer +([^\s]{1,256})$/i.exec(header)?.[1];
  const partner = token === undefined ? undefined : await findPartnerByToken(ctx.db, token, ctx.clock.now());
  if (!partner) {
    await countAnonymous(ctx, request, reply, 'profiles');
    if (header !== undefined) throw errors.invalidApiToken('The Authorization header must be "Bearer" and a partner\'s api_token');
    return null;
  }
  const state = await ctx.limiter.consume('key', partner.api_key, partner.rate_limit_per_minute ?? ctx.config.rateLimitPerKeyPerMinute);
  setLimitHeaders(reply, state);
  if (!state.allowed) throw errors.rateLimited(state.resetSeconds);
  if (partner.suspended) throw errors.forbidden('This partner is suspended');
  const origin = requestOrigin(request);
  const allowed = allowedOrigins(partner);
  if (origin !== null && allowed.length > 0 && !allowed.includes(origin)) throw errors.forbidden('Origin not allowed for this api_token');
  return partner;
}

/** Gravatar's error codes where it has one; idsvc's otherwise. */
export function gravatarErrorCode(err: ApiError): string {
  return err.code === 'rate_limited' ? 'rate_limit_exceeded' : err.code;
}

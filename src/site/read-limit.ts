// The site's public reads, WebFinger and /u/{userId}, tell who is behind an e-mail address or a
// userId. Unlimited, they let anyone map addresses to people at hundreds a second, so each client
// address gets SITE_READS_PER_ADDRESS of them a minute, counted together in the
// shared RequestLimiter: in Redis, across instances, when REDIS_URL is set.
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../context.js';

export interface SiteReadVerdict {
  allowed: boolean;
  /** Seconds until the window resets (the Retry-After of a refusal). */
  retryAfter: number;
}

/** Counts one public read and sets the RateLimit-* headers the API also sends (and Retry-After when refused). */
export async function countSiteRead(ctx: AppContext, request: FastifyRequest, reply: FastifyReply): Promise<SiteReadVerdict> {
  const state = await ctx.limiter.consume('site-reads', request.ip, ctx.config.siteReadsPerAddressPerMinute);
  reply.header('RateLimit-Limit', String(state.limit));
  reply.header('RateLimit-Remaining', String(Math.max(0, state.remaining)));
  reply.header('RateLimit-Reset', String(state.resetSeconds));
  if (!state.allowed) reply.header('Retry-After', String(state.resetSeconds));
  return { allowed: state.allowed, retryAfter: state.resetSeconds };
}

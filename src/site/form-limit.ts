// Budgets of the partner dashboard and the operator console, per account: pages are cheap, forms
// can mail, call a webhook or create things, so they get a smaller one. Counted in the shared
// RequestLimiter (Redis when configured), before the handler runs.
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../context.js';
import { errors } from '../domain/errors.js';

export const PAGES_PER_MINUTE = 300;
export const FORMS_PER_MINUTE = 30;

export async function countSiteAction(ctx: AppContext, request: FastifyRequest, reply: FastifyReply, area: string, userRef: number): Promise<void> {
  const form = request.method === 'POST';
  const state = await ctx.limiter.consume(`site-${area}-${form ? 'forms' : 'pages'}`, String(userRef), form ? FORMS_PER_MINUTE : PAGES_PER_MINUTE);
  reply.header('RateLimit-Limit', String(state.limit));
  reply.header('RateLimit-Remaining', String(Math.max(0, state.remaining)));
  reply.header('RateLimit-Reset', String(state.resetSeconds));
  if (!state.allowed) {
    reply.header('Retry-After', String(state.resetSeconds));
    throw errors.rateLimited(state.resetSeconds);
  }
}

// Sessions (SPEC §12): a random cookie value the browser keeps, stored only as its SHA-256, with a
// random value of its own that its CSRF tokens are bound to; a fresh session at every log-in and
// sign-up (no fixation).
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../context.js';
import { sha256 } from '../domain/secrets.js';
import { deleteSession, findLiveSession, insertSession } from '../repositories/sessions.js';
import { findUserByRef, type User } from '../repositories/users.js';
import { cookieNames, cookieOptions, randomToken } from './security.js';

export const SESSION_DAYS = 30;
const DAY = 24 * 3600 * 1000;

export interface SiteState {
  user: User | null;
  sessionId: string | null;
  sessionCsrf: string | null;
}

declare module 'fastify' {
  interface FastifyRequest {
    site: SiteState;
  }
}

export async function loadSession(ctx: AppContext, request: FastifyRequest): Promise<SiteState> {
  const value = request.cookies[cookieNames(ctx).session];
  if (!value) return { user: null, sessionId: null, sessionCsrf: null };
  const id = sha256(value);
  const row = await findLiveSession(ctx.db, id, ctx.clock.now());
  const user = row ? await findUserByRef(ctx.db, row.user_ref) : undefined;
  if (!row || !user) return { user: null, sessionId: null, sessionCsrf: null };
  return { user, sessionId: id, sessionCsrf: row.csrf_token };
}

/** Ends the session the request came with (if any) and starts a new one for this user. */
export async function startSession(ctx: AppContext, request: FastifyRequest, reply: FastifyReply, user: User): Promise<void> {
  const now = ctx.clock.now();
  const ended = request.site.sessionId;
  const value = randomToken();
  const csrf = randomToken();
  await ctx.db.write(async (w) => {
    if (ended) await deleteSession(w, ended);
    await insertSession(w, { id: sha256(value), userRef: user.id, csrfToken: csrf, expiresAt: now + SESSION_DAYS * DAY }, now);
  });
  reply.setCookie(cookieNames(ctx).session, value, cookieOptions(ctx, SESSION_DAYS * 24 * 3600));
  request.site = { user, sessionId: sha256(value), sessionCsrf: csrf };
}

export async function endSession(ctx: AppContext, request: FastifyRequest, reply: FastifyReply): Promise<void> {
  const ended = request.site.sessionId;
  if (ended) await ctx.db.write((w) => deleteSession(w, ended));
  reply.clearCookie(cookieNames(ctx).session, cookieOptions(ctx));
  request.site = { user: null, sessionId: null, sessionCsrf: null };
}

/**
 * What a CSRF token is bound to (@fastify/csrf-protection's `userInfo`). Logged in, the session's
 * own random value, so only that session's tokens count: the anonymous pair (the CSRF cookie and a
 * token for it) is bound to nobody, and whoever can plant a cookie for this host (a sibling
 * subdomain, a plain-http response on the path) could pair one with a token of their own.
 */
export const csrfBinding = (request: FastifyRequest): string => request.site.sessionCsrf ?? 'anonymous';

/**
 * The token a form rendered for this request must carry back: @fastify/csrf-protection's token for
 * the secret in the CSRF cookie, keyed by the installation's secret and bound by `csrfBinding`. The
 * cookie is set here when the browser has none, before the token is made: the plugin would make a
 * new secret at every call in that case, and the second form on a page would then carry a token
 * for a secret the browser never keeps.
 */
export async function csrfToken(ctx: AppContext, request: FastifyRequest, reply: FastifyReply): Promise<string> {
  const name = cookieNames(ctx).csrf;
  if (!request.cookies[name]) {
    const secret = randomToken();
    request.cookies[name] = secret;
    reply.setCookie(name, secret, cookieOptions(ctx));
  }
  return reply.generateCsrf({ userInfo: csrfBinding(request) });
}

// Sessions (SPEC §12): a random cookie value the browser keeps, stored only as its SHA-256, with a
// CSRF token of its own; a fresh session at every log-in and sign-up (no fixation).
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../context.js';
import { sha256 } from '../domain/secrets.js';
import { deleteSession, findLiveSession, insertSession } from '../repositories/sessions.js';
import { findUserByRef, type User } from '../repositories/users.js';
import { cookieNames, cookieOptions, randomToken, safeEqual, sign } from './security.js';

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
  const row = await findLiveSession(ctx.db.kysely, id, ctx.clock.now());
  const user = row ? await findUserByRef(ctx.db.kysely, row.user_ref) : undefined;
  if (!row || !user) return { user: null, sessionId: null, sessionCsrf: null };
  return { user, sessionId: id, sessionCsrf: row.csrf_token };
}

/** Ends the session the request came with (if any) and starts a new one for this user. */
export async function startSession(ctx: AppContext, request: FastifyRequest, reply: FastifyReply, user: User): Promise<void> {
  const now = ctx.clock.now();
  const db = ctx.db.kysely;
  if (request.site.sessionId) await deleteSession(db, request.site.sessionId);
  const value = randomToken();
  const csrf = randomToken();
  await insertSession(db, { id: sha256(value), userRef: user.id, csrfToken: csrf, expiresAt: now + SESSION_DAYS * DAY }, now);
  reply.setCookie(cookieNames(ctx).session, value, cookieOptions(ctx, SESSION_DAYS * 24 * 3600));
  request.site = { user, sessionId: sha256(value), sessionCsrf: csrf };
}

export async function endSession(ctx: AppContext, request: FastifyRequest, reply: FastifyReply): Promise<void> {
  if (request.site.sessionId) await deleteSession(ctx.db.kysely, request.site.sessionId);
  reply.clearCookie(cookieNames(ctx).session, cookieOptions(ctx));
  request.site = { user: null, sessionId: null, sessionCsrf: null };
}

/**
 * The token a form rendered for this request must carry back. Logged in: the session's own token.
 * Anonymous (sign-up, log-in): a signature of a random cookie, set here when the browser has none
 * (a signed double-submit cookie: a forged form can neither read the cookie nor make the signature).
 */
export async function csrfToken(ctx: AppContext, request: FastifyRequest, reply: FastifyReply): Promise<string> {
  if (request.site.sessionCsrf) return request.site.sessionCsrf;
  const name = cookieNames(ctx).anon;
  let anon = request.cookies[name];
  if (!anon || anon.length < 20) {
    anon = randomToken();
    request.cookies[name] = anon;
    reply.setCookie(name, anon, cookieOptions(ctx));
  }
  return sign(ctx, 'csrf', anon);
}

/**
 * Logged in, only the session's own token counts. The anonymous pair (cookie and its signature) is
 * not bound to anyone: whoever can plant a cookie for this host (a sibling subdomain, a plain-http
 * response on the path) could pair it with a token of their own and forge a logged-in user's form.
 */
export async function csrfValid(ctx: AppContext, request: FastifyRequest, token: unknown): Promise<boolean> {
  if (typeof token !== 'string' || token === '') return false;
  if (request.site.sessionCsrf) return safeEqual(token, request.site.sessionCsrf);
  const anon = request.cookies[cookieNames(ctx).anon];
  return anon !== undefined && anon.length >= 20 && safeEqual(token, await sign(ctx, 'csrf', anon));
}

// Confirming an address in the browser that signed up continues signed in there. Sign-up answers
// alike whether or not the address has an account, so it cannot start a session; instead it leaves
// the browser a cookie signed over the address and userId it asked for. When a confirmation link
// creates or proves exactly that account and the same browser presses the button, the cookie is
// the proof that this browser also knows the password, and the session starts. A link opened
// anywhere else (forwarded, a mail scanner, another device) still only confirms.
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../context.js';
import { normaliseEmail } from '../domain/identifiers.js';
import type { User } from '../repositories/users.js';
import { CONFIRM_LINK_HOURS } from '../services/ownership.js';
import { cookieNames, cookieOptions, safeEqual, sign } from './security.js';

const HOUR = 3600 * 1000;

const signed = (ctx: AppContext, issuedAt: number, email: string, userId: string) => sign(ctx, 'signup', `${issuedAt}|${normaliseEmail(email)}|${userId}`);

/** After a sign-up form was accepted, whatever it led to. */
export async function rememberSignUp(ctx: AppContext, reply: FastifyReply, email: string, userId: string): Promise<void> {
  const issuedAt = ctx.clock.now();
  reply.setCookie(cookieNames(ctx).signup, `${issuedAt}.${await signed(ctx, issuedAt, email, userId)}`, cookieOptions(ctx, CONFIRM_LINK_HOURS * 3600));
}

/** Whether this browser signed up for exactly this account within a link's lifetime; the cookie is spent either way. */
export async function signedUpHere(ctx: AppContext, request: FastifyRequest, reply: FastifyReply, user: User): Promise<boolean> {
  const name = cookieNames(ctx).signup;
  const value = request.cookies[name];
  if (!value) return false;
  reply.clearCookie(name, cookieOptions(ctx));
  const dot = value.indexOf('.');
  const issuedAt = Number(value.slice(0, dot));
  if (dot < 1 || !Number.isSafeInteger(issuedAt) || ctx.clock.now() - issuedAt > CONFIRM_LINK_HOURS * HOUR) return false;
  return safeEqual(value.slice(dot + 1), await signed(ctx, issuedAt, user.email, user.user_id));
}

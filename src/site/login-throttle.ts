// Log-in throttling (SPEC §12), checked before any password is hashed. Three counters of failures:
//
// - per account and client address: low, so one address cannot guess at one account for long;
// - per client address, over all accounts: stops one address spraying many accounts;
// - per account, over all addresses: stops a botnet guessing at one account.
//
// The last one could lock the owner out while an attack runs, so a browser that has logged in to
// the account before (it holds a signed device cookie for it) is judged only by a counter of its
// own (OWASP "device cookies"). Every window is fixed and short: nobody is locked out for good.
import { randomBytes } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../context.js';
import { sha256 } from '../domain/secrets.js';
import { cookieNames, cookieOptions, safeEqual, sign } from './security.js';

export const LOGIN_LIMITS = {
  accountAddress: { limit: 10, windowSeconds: 15 * 60 },
  address: { limit: 100, windowSeconds: 15 * 60 },
  account: { limit: 100, windowSeconds: 60 * 60 },
  device: { limit: 10, windowSeconds: 15 * 60 },
} as const;

const DEVICE_COOKIE_DAYS = 365;

export interface LoginAttempt {
  /** The account tried: the user's row id when it exists, else a hash of what was typed. */
  account: string;
  address: string;
  /** Set when the browser holds a valid device cookie for this very account. */
  device: string | null;
}

function keys(a: LoginAttempt) {
  const acct = sha256(a.account);
  return {
    accountAddress: `login:aa:${acct}:${a.address}`,
    address: `login:addr:${a.address}`,
    account: `login:acct:${acct}`,
    device: a.device ? `login:dev:${sha256(a.device)}` : null,
  };
}

/** Seconds to wait before this attempt may be made, 0 when it may go ahead. */
export async function loginBlockedFor(ctx: AppContext, a: LoginAttempt): Promise<number> {
  const k = keys(a);
  const t = ctx.throttle;
  if (k.device) return t.blockedFor(k.device, LOGIN_LIMITS.device.limit);
  const waits = await Promise.all([
    t.blockedFor(k.accountAddress, LOGIN_LIMITS.accountAddress.limit),
    t.blockedFor(k.address, LOGIN_LIMITS.address.limit),
    t.blockedFor(k.account, LOGIN_LIMITS.account.limit),
  ]);
  return Math.max(...waits);
}

export async function recordLoginFailure(ctx: AppContext, a: LoginAttempt): Promise<void> {
  const k = keys(a);
  const t = ctx.throttle;
  if (k.device) {
    await t.recordFailure(k.device, LOGIN_LIMITS.device.windowSeconds);
    return;
  }
  await t.recordFailure(k.accountAddress, LOGIN_LIMITS.accountAddress.windowSeconds);
  await t.recordFailure(k.address, LOGIN_LIMITS.address.windowSeconds);
  await t.recordFailure(k.account, LOGIN_LIMITS.account.windowSeconds);
}

export async function recordLoginSuccess(ctx: AppContext, a: LoginAttempt): Promise<void> {
  const k = keys(a);
  await ctx.throttle.reset(k.accountAddress);
  if (k.device) await ctx.throttle.reset(k.device);
}

/** The device id in this browser's cookie, when the cookie is genuine and was issued for this account. */
export async function deviceFor(ctx: AppContext, request: FastifyRequest, userRef: number | null): Promise<string | null> {
  const raw = request.cookies[cookieNames(ctx).device];
  if (!raw || userRef === null) return null;
  const [ref, id, mac] = raw.split('.');
  if (!ref || !id || !mac || ref !== String(userRef)) return null;
  return safeEqual(mac, await sign(ctx, 'device', `${ref}.${id}`)) ? id : null;
}

export async function issueDeviceCookie(ctx: AppContext, reply: FastifyReply, userRef: number): Promise<void> {
  const id = randomBytes(16).toString('base64url');
  const mac = await sign(ctx, 'device', `${userRef}.${id}`);
  reply.setCookie(cookieNames(ctx).device, `${userRef}.${id}.${mac}`, cookieOptions(ctx, DEVICE_COOKIE_DAYS * 24 * 3600));
}

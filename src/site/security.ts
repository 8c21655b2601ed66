// The site's defences that are not about passwords: security headers, cookie settings, the server
// secret that signs anonymous CSRF tokens and device cookies, and the CSRF check itself.
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import type { AppContext } from '../context.js';
import { ApiError } from '../domain/errors.js';
import type { HeaderSink } from '../http/errors.js';
import { settingOrInit } from '../repositories/settings.js';

/** Scripts and styles come only from our own files; nothing may frame the site. */
const CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "form-action 'self'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
  'upgrade-insecure-requests',
].join('; ');

export function setSecurityHeaders(reply: HeaderSink, https: boolean): void {
  reply.header('Content-Security-Policy', https ? CSP : CSP.replace('; upgrade-insecure-requests', ''));
  reply.header('X-Frame-Options', 'DENY');
  // Links from a profile page to the user's identities would otherwise tell those sites who sent them.
  reply.header('Referrer-Policy', 'same-origin');
  reply.header('Cross-Origin-Opener-Policy', 'same-origin');
  reply.header('Cross-Origin-Resource-Policy', 'same-origin');
  reply.header('Permissions-Policy', 'camera=(), microphone=(), geolocation=(), payment=(), usb=(), interest-cohort=()');
  if (https) reply.header('Strict-Transport-Security', 'max-age=31536000; includeSubDomains');
}

export function isHttps(ctx: AppContext): boolean {
  return ctx.config.baseUrl.startsWith('https:');
}

/** Over https the __Host- prefix pins a cookie to this exact host, path / and Secure. */
export function cookieNames(ctx: AppContext) {
  const p = isHttps(ctx) ? '__Host-' : '';
  return { session: `${p}idsvc_session`, anon: `${p}idsvc_anon`, device: `${p}idsvc_device`, signup: `${p}idsvc_signup` };
}

export function cookieOptions(ctx: AppContext, maxAgeSeconds?: number) {
  return {
    path: '/',
    httpOnly: true,
    sameSite: 'lax' as const,
    secure: isHttps(ctx),
    ...(maxAgeSeconds !== undefined ? { maxAge: maxAgeSeconds } : {}),
  };
}

// One secret per installation, kept in the database so every instance signs alike and a restart
// does not invalidate open forms or device cookies.
const secrets = new WeakMap<AppContext, Promise<Buffer>>();

async function loadSecret(ctx: AppContext): Promise<Buffer> {
  return Buffer.from(await settingOrInit(ctx.db.kysely, 'site_secret', randomBytes(32).toString('base64')), 'base64');
}

export function siteSecret(ctx: AppContext): Promise<Buffer> {
  let s = secrets.get(ctx);
  if (!s) {
    s = loadSecret(ctx);
    s.catch(() => secrets.delete(ctx));
    secrets.set(ctx, s);
  }
  return s;
}

export async function sign(ctx: AppContext, purpose: string, value: string): Promise<string> {
  return createHmac('sha256', await siteSecret(ctx)).update(`${purpose}:${value}`).digest('base64url');
}

export function safeEqual(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && x.length > 0 && timingSafeEqual(x, y);
}

export const randomToken = () => randomBytes(32).toString('base64url');

export const csrfRejected = () =>
  new ApiError('forbidden', 'This form has expired or did not come from this site. Go back, reload the page and try again.');

/**
 * A request that states where it comes from (Origin) must come from this site. Browsers send Origin
 * on every cross-site POST, so this stops forged forms even before the token is looked at.
 */
export function originAllowed(ctx: AppContext, request: FastifyRequest): boolean {
  const origin = request.headers.origin;
  if (origin === undefined) return true;
  if (origin === new URL(ctx.config.baseUrl).origin) return true;
  try {
    return new URL(origin).host === request.headers.host;
  } catch {
    return false;
  }
}

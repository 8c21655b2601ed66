// The site's defences that are not about passwords: security headers, cookie settings, the server
// secret that keys CSRF tokens and signs device cookies, and the Origin check every form POST passes.
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { IncomingMessage, ServerResponse } from 'node:http';
import { Socket } from 'node:net';
import type { FastifyRequest } from 'fastify';
import helmet from 'helmet';
import type { AppContext } from '../context.js';
import type { HeaderSink } from '../http/errors.js';
import { settingOrInit } from '../repositories/settings.js';

/**
 * The site's security headers, made by helmet once per scheme: they depend on nothing but whether
 * the site is served over https, so every page and error page gets the same list. Collected from a
 * detached response rather than set by `@fastify/helmet`, because error pages of unmatched paths and
 * answers written straight to the socket (http/protocol-errors.ts) carry them too, and those have
 * no Fastify reply inside the site plugin for a hook to set them on.
 */
function helmetHeaders(https: boolean): [string, string][] {
  const res = new ServerResponse(new IncomingMessage(new Socket()));
  helmet({
    // Scripts and styles come only from our own files; nothing may frame the site.
    contentSecurityPolicy: {
      useDefaults: false,
      directives: {
        defaultSrc: ["'none'"],
        scriptSrc: ["'self'"],
        styleSrc: ["'self'"],
        imgSrc: ["'self'", 'data:'],
        connectSrc: ["'self'"],
        formAction: ["'self'"],
        frameAncestors: ["'none'"],
        baseUri: ["'none'"],
        upgradeInsecureRequests: https ? [] : null,
      },
    },
    xFrameOptions: { action: 'deny' },
    // Links from a profile page to the user's identities would otherwise tell those sites who sent them.
    referrerPolicy: { policy: 'same-origin' },
    crossOriginOpenerPolicy: { policy: 'same-origin' },
    crossOriginResourcePolicy: { policy: 'same-origin' },
    strictTransportSecurity: https ? { maxAge: 31536000, includeSubDomains: true } : false,
    // app.ts sends it on every answer, the partner API's and the widget's too.
    xContentTypeOptions: false,
  })(res.req, res, (err?: unknown) => {
    if (err) throw err;
  });
  const headers = Object.entries(res.getHeaders()).map(([name, value]): [string, string] => [name, String(value)]);
  // Helmet does not set Permissions-Policy: the features no page uses are switched off here.
  headers.push(['permissions-policy', 'camera=(), microphone=(), geolocation=(), payment=(), usb=(), interest-cohort=()']);
  return headers;
}

const SECURITY_HEADERS = { http: helmetHeaders(false), https: helmetHeaders(true) };

export function setSecurityHeaders(reply: HeaderSink, https: boolean): void {
  for (const [name, value] of SECURITY_HEADERS[https ? 'https' : 'http']) reply.header(name, value);
}

export function isHttps(ctx: AppContext): boolean {
  return ctx.config.baseUrl.startsWith('https:');
}

/** Over https the __Host- prefix pins a cookie to this exact host, path / and Secure. */
export function cookieNames(ctx: AppContext) {
  const p = isHttps(ctx) ? '__Host-' : '';
  return {
    session: `${p}idsvc_session`,
    csrf: `${p}idsvc_csrf`,
    device: `${p}idsvc_device`,
    signup: `${p}idsvc_signup`,
    passkeyLogin: `${p}idsvc_passkey_login`,
    provider: `${p}idsvc_provider`,
  };
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
  return Buffer.from(await ctx.db.write((w) => settingOrInit(w, 'site_secret', randomBytes(32).toString('base64'))), 'base64');
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
  return createHmac('sha256', await siteSecret(ctx))
    .update(`${purpose}:${value}`)
    .digest('base64url');
}

export function safeEqual(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && x.length > 0 && timingSafeEqual(x, y);
}

export const randomToken = () => randomBytes(32).toString('base64url');

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

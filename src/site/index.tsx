// The site (SPEC §12): server-rendered pages for end users. Registered by app.ts.
//
// Pages live in one encapsulated plugin so that cookies, the session, the security headers and the
// CSRF check apply to them and to nothing else (the partner API, the widget). Static files and
// WebFinger sit beside it: they carry no cookies.
import cookie from '@fastify/cookie';
import csrfProtection from '@fastify/csrf-protection';
import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../context.js';
import { formRejected, type ErrorRenderers } from '../http/errors.js';
import { registerAssets } from './assets.js';
import { accountRoutes } from './routes/account/index.js';
import { partnerRoutes } from './routes/partners/index.js';
import { consoleRoutes } from './routes/console/index.js';
import { typed } from '../http/typed-app.js';
import { registerAuthRoutes } from './routes/auth.js';
import { registerConfirmRoutes } from './routes/confirm.js';
import { registerDevMailRoutes } from './routes/dev-mail.js';
import { registerEmailChangeRoutes } from './routes/email-change.js';
import { registerRecoveryRoutes } from './routes/recovery.js';
import { registerPageRoutes } from './routes/pages.js';
import { registerPasskeyLogin } from './routes/passkey-login.js';
import { registerProviderRoutes } from './routes/providers.js';
import { registerWebFinger } from './routes/webfinger.js';
import { cookieNames, cookieOptions, isHttps, originAllowed, setSecurityHeaders, sign } from './security.js';
import { csrfBinding, loadSession, type SiteState } from './session.js';
import { ErrorPage } from './views/ErrorPage.js';
import { renderDocument } from './views/Layout.js';

export async function registerSite(app: FastifyInstance, ctx: AppContext): Promise<void> {
  const https = isHttps(ctx);
  registerAssets(app);
  registerWebFinger(app, ctx);

  await app.register(async (site) => {
    await site.register(cookie);
    await site.register(csrfProtection, {
      cookieKey: cookieNames(ctx).csrf,
      cookieOpts: cookieOptions(ctx),
      // The form field only: a form cannot set headers, and nothing else posts to these routes.
      getToken: (request) => {
        const token = (request.body as Record<string, unknown> | undefined)?._csrf;
        return typeof token === 'string' ? token : undefined;
      },
      getUserInfo: csrfBinding,
      // Tokens are keyed by the installation's secret (so no one can make one for a cookie they
      // planted), through a key of its own rather than the secret that signs device cookies.
      csrfOpts: { hmacKey: await sign(ctx, 'csrf', 'hmac-key'), userInfo: true },
      // A refused form is the forger's doing, not the server's: not worth a line in the log.
      logLevel: 'debug',
    });
    site.decorateRequest('site', null as unknown as SiteState);
    site.addHook('onRequest', async (request, reply) => {
      setSecurityHeaders(reply, https);
      request.site = await loadSession(ctx, request);
    });
    // Before body validation, so a forged request is refused as forged, whatever its fields. A
    // request that states its origin must come from this site; then the token must match.
    site.addHook('preValidation', (request, reply, done) => {
      if (request.method !== 'POST') return done();
      if (!originAllowed(ctx, request)) return done(formRejected());
      site.csrfProtection(request, reply, done);
    });
    const pages = typed(site);
    registerPageRoutes(pages, ctx);
    registerAuthRoutes(pages, ctx);
    registerPasskeyLogin(pages, ctx);
    registerConfirmRoutes(pages, ctx);
    registerEmailChangeRoutes(pages, ctx);
    registerRecoveryRoutes(pages, ctx);
    registerDevMailRoutes(pages, ctx);
    registerProviderRoutes(pages, ctx);
    await site.register(accountRoutes(ctx));
    await site.register(partnerRoutes(ctx));
    await site.register(consoleRoutes(ctx));
  });
}

/** The HTML answer for an error on a site page. */
export function renderSiteError(status: number, message: string): string {
  return renderDocument(<ErrorPage status={status} message={message} />);
}

/**
 * The error pages' renderer (http/errors.ts). Pages of paths that match no route are rendered
 * outside the site plugin, whose hook sets the security headers, so they are set here: one place
 * for error pages rather than a hook on every answer.
 */
export function siteErrorRenderer(ctx: AppContext): NonNullable<ErrorRenderers['site']> {
  const https = isHttps(ctx);
  return (headers, status, message) => {
    setSecurityHeaders(headers, https);
    return renderSiteError(status, message);
  };
}

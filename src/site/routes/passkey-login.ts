// "Log in with a passkey" (SPEC §12): two JSON calls the log-in page's script makes. The first
// hands out a challenge bound to a fresh cookie of this browser's attempt; the second checks the
// passkey's answer to it. Failures count against the same throttles as wrong passwords, and every
// refusal reads the same, whether or not the passkey belongs to an account.
import { randomBytes } from 'node:crypto';
import type { AppContext } from '../../context.js';
import { sha256 } from '../../domain/secrets.js';
import type { TypedApp } from '../../http/typed-app.js';
import { finishPasskeyLogin, relyingParty, startPasskeyLogin, CHALLENGE_TTL_MS } from '../../services/passkeys.js';
import { formSchema, SITE } from '../http.js';
import { deviceFor, issueDeviceCookie, type LoginAttempt, loginBlockedFor, recordLoginFailure, recordLoginSuccess } from '../login-throttle.js';
import { authenticationResponse, sendJson } from '../passkey-wire.js';
import { cookieNames, cookieOptions } from '../security.js';
import { startSession } from '../session.js';

/** Challenges a minute per client address: each is a row until it is answered or expires. */
export const PASSKEY_LOGIN_STARTS_PER_MINUTE = 30;
export const PASSKEY_REFUSED = 'That passkey did not log you in. Try again, or log in with your password.';

export function registerPasskeyLogin(app: TypedApp, ctx: AppContext): void {
  const rp = relyingParty(ctx.config);
  if (!rp) return;

  app.post('/login/passkey/options', { config: SITE, schema: formSchema({}) }, async (request, reply) => {
    const limit = await ctx.limiter.consume('site-passkey-login', request.ip, PASSKEY_LOGIN_STARTS_PER_MINUTE);
    if (!limit.allowed) {
      reply.header('Retry-After', String(limit.resetSeconds));
      return sendJson(reply, 429, { error: 'Too many log-in attempts from your network just now. Try again in a minute.' });
    }
    const attempt = randomBytes(32).toString('base64url');
    reply.setCookie(cookieNames(ctx).passkeyLogin, attempt, cookieOptions(ctx, CHALLENGE_TTL_MS / 1000));
    return sendJson(reply, 200, { options: await startPasskeyLogin(ctx, rp, sha256(attempt)) });
  });

  app.post('/login/passkey', { config: SITE, schema: formSchema({ response: authenticationResponse }) }, async (request, reply) => {
    const cookie = cookieNames(ctx).passkeyLogin;
    const attemptValue = request.cookies[cookie];
    reply.clearCookie(cookie, cookieOptions(ctx));
    let attempt: LoginAttempt = { account: '', address: request.ip, device: null };
    const result = await finishPasskeyLogin(ctx, rp, sha256(attemptValue ?? ''), request.body.response, async (ownerRef) => {
      // Counted with the password form's failures: a passkey is one more way to guess, not a second budget.
      attempt = {
        account: ownerRef !== null ? `user:${ownerRef}` : `passkey:${request.body.response.id}`,
        address: request.ip,
        device: await deviceFor(ctx, request, ownerRef),
      };
      return loginBlockedFor(ctx, attempt);
    });
    if (result.outcome === 'throttled') {
      reply.header('Retry-After', String(result.wait));
      return sendJson(reply, 429, { error: 'Too many failed log-in attempts. Try again later, or from a device you have logged in with before.' });
    }
    if (result.outcome === 'refused' || attemptValue === undefined) {
      await recordLoginFailure(ctx, attempt);
      return sendJson(reply, 400, { error: PASSKEY_REFUSED });
    }
    await recordLoginSuccess(ctx, attempt);
    await startSession(ctx, request, reply, result.user);
    await issueDeviceCookie(ctx, reply, result.user.id);
    return sendJson(reply, 200, { redirect: '/account' });
  });
}

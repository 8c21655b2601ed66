// Sign-up, log-in and log-out (SPEC §12).
import { type Static, Type } from '@sinclair/typebox';
import type { AppContext } from '../../context.js';
import { isValidEmail, isValidUserId, normaliseEmail } from '../../domain/identifiers.js';
import { burnPasswordCheck, passwordProblem, verifyPassword } from '../../domain/passwords.js';
import { DuplicateUserError, findUserByEmail, findUserByUserId } from '../../repositories/users.js';
import { signUp } from '../../services/ownership.js';
import { checkbox, formSchema, seeOther, sendPage, SITE } from '../http.js';
import type { TypedApp } from '../../http/typed-app.js';
import { deviceFor, issueDeviceCookie, loginBlockedFor, recordLoginFailure, recordLoginSuccess } from '../login-throttle.js';
import { cookieNames, cookieOptions } from '../security.js';
import { csrfToken, endSession, startSession } from '../session.js';
import { LogInPage } from '../views/LogIn.js';
import { CheckInboxPage } from '../views/Ownership.js';
import { SignUpPage, type SignUpValues } from '../views/SignUp.js';
import { rememberSignUp } from '../signup-browser.js';
import { relyingParty } from '../../services/passkeys.js';

/** Names that would let an account pass for the service itself. */
export const RESERVED_USER_IDS = new Set([
  'admin',
  'administrator',
  'root',
  'idsvc',
  'support',
  'security',
  'abuse',
  'postmaster',
  'webmaster',
  'hostmaster',
  'staff',
  'help',
  'api',
  'www',
  'mail',
  'system',
  'operator',
]);
/** Sign-ups per client address per minute: enough for a shared office, too few to farm accounts. */
const SIGNUPS_PER_ADDRESS_PER_MINUTE = 10;

const LOGIN_NOTICES: Record<string, string> = {
  confirmed: 'Your e-mail address is confirmed. Log in to continue.',
  created: 'Your address is confirmed and your account is ready. Log in with the password you chose.',
  password_reset: 'Your new password is set, and every session of the account has ended. Log in with the new password.',
  email_changed: 'Your e-mail address is changed. Log in with it (or your userId) and your password.',
};

const signUpForm = formSchema({
  email: Type.String({ maxLength: 320 }),
  user_id: Type.String({ maxLength: 64 }),
  password: Type.String({ maxLength: 4096 }),
  opt_in: checkbox,
});
type SignUpBody = Static<typeof signUpForm.body>;

function minutes(seconds: number): string {
  const m = Math.ceil(seconds / 60);
  return m <= 1 ? 'a minute' : `${m} minutes`;
}

async function signUpProblems(b: SignUpBody): Promise<Record<string, string>> {
  const errors: Record<string, string> = {};
  if (!b.email.trim()) errors.email = 'Enter your e-mail address';
  else if (!isValidEmail(b.email)) errors.email = 'Enter an e-mail address like name@example.org';
  const id = b.user_id.trim();
  if (!id) errors.user_id = 'Choose a userId';
  else if (!isValidUserId(id)) errors.user_id = 'A userId is 3–30 lower-case letters, digits or _ (and not a 32- or 64-digit hex number)';
  else if (RESERVED_USER_IDS.has(id)) errors.user_id = 'That userId is reserved; choose another';
  const problem = await passwordProblem(b.password, { userId: id, email: b.email });
  if (problem) errors.password = `The password ${problem}`;
  return errors;
}

export function registerAuthRoutes(app: TypedApp, ctx: AppContext): void {
  const baseUrl = ctx.config.baseUrl;
  const passkeys = relyingParty(ctx.config) !== null;
  // Only configured providers have buttons.
  const buttons = ctx.config.providers.map((p) => ({ slug: p.slug, name: p.name, asksServer: p.kind === 'mastodon' }));

  app.get('/signup', { config: SITE, schema: { hide: true } }, async (request, reply) => {
    if (request.site.user) return seeOther(reply, '/account');
    return sendPage(reply, <SignUpPage csrf={await csrfToken(ctx, request, reply)} baseUrl={baseUrl} values={{ opt_in: false }} providers={buttons} />);
  });

  app.post(
    '/signup',
    {
      config: SITE,
      schema: signUpForm,
    },
    async (request, reply) => {
      const b = request.body;
      const values: SignUpValues = { email: b.email, user_id: b.user_id, opt_in: b.opt_in === '1' };
      const page = async (errors: Record<string, string>, status: number) =>
        sendPage(
          reply,
          <SignUpPage csrf={await csrfToken(ctx, request, reply)} baseUrl={baseUrl} values={values} errors={errors} providers={buttons} />,
          status,
        );
      const limit = await ctx.limiter.consume('site-signup', request.ip, SIGNUPS_PER_ADDRESS_PER_MINUTE);
      if (!limit.allowed) {
        reply.header('Retry-After', String(limit.resetSeconds));
        return page({ form: `Too many sign-ups from your network just now. Try again in ${minutes(limit.resetSeconds)}.` }, 429);
      }
      const errors = await signUpProblems(b);
      if (Object.keys(errors).length > 0) return page(errors, 400);
      const userId = b.user_id.trim();
      try {
        // The same answer whether or not the address has an account: what differs goes by mail.
        await signUp(ctx, { email: b.email, userId, password: b.password, optedIn: b.opt_in === '1' });
      } catch (e) {
        if (!(e instanceof DuplicateUserError) && !isUniqueViolation(e)) throw e;
        // A race with another sign-up: only a taken userId is worth saying (userIds are public).
        if (e instanceof DuplicateUserError ? e.field === 'userId' : await findUserByUserId(ctx.db, userId)) {
          return page({ user_id: 'That userId is taken; choose another' }, 400);
        }
      }
      await rememberSignUp(ctx, reply, b.email, userId);
      return seeOther(reply, '/signup/sent');
    },
  );

  app.get('/signup/sent', { config: SITE, schema: { hide: true } }, async (_request, reply) => sendPage(reply, <CheckInboxPage />));

  app.get(
    '/login',
    { config: SITE, schema: { hide: true, querystring: Type.Object({ msg: Type.Optional(Type.String({ maxLength: 40 })) }) } },
    async (request, reply) => {
      const msg = request.query.msg;
      if (request.site.user) return seeOther(reply, msg === 'confirmed' ? '/account?msg=confirmed' : '/account');
      return sendPage(
        reply,
        <LogInPage csrf={await csrfToken(ctx, request, reply)} notice={msg ? LOGIN_NOTICES[msg] : undefined} passkeys={passkeys} providers={buttons} />,
      );
    },
  );

  app.post(
    '/login',
    { config: SITE, schema: formSchema({ login: Type.String({ maxLength: 320 }), password: Type.String({ maxLength: 4096 }) }) },
    async (request, reply) => {
      const b = request.body;
      const login = b.login.trim();
      const page = async (errors: Record<string, string>, status: number) =>
        sendPage(
          reply,
          <LogInPage csrf={await csrfToken(ctx, request, reply)} login={login} errors={errors} passkeys={passkeys} providers={buttons} />,
          status,
        );
      if (!login || !b.password) {
        return page({ ...(login ? {} : { login: 'Enter your e-mail address or userId' }), ...(b.password ? {} : { password: 'Enter your password' }) }, 400);
      }
      const user = login.includes('@') ? await findUserByEmail(ctx.db, login) : await findUserByUserId(ctx.db, login.toLowerCase());
      const attempt = {
        account: user ? `user:${user.id}` : `unknown:${normaliseEmail(login)}`,
        address: request.ip,
        device: await deviceFor(ctx, request, user?.id ?? null),
      };
      // Before any hashing: a throttled guess costs us a few reads, not an argon2 run.
      const wait = await loginBlockedFor(ctx, attempt);
      if (wait > 0) {
        reply.header('Retry-After', String(wait));
        return page({ form: `Too many failed log-in attempts. Try again in ${minutes(wait)}, or from a device you have logged in with before.` }, 429);
      }
      const ok = user ? await verifyPassword(user.password_hash, b.password) : await burnPasswordCheck(b.password, ctx.config.argon2Cost);
      if (!user || !ok) {
        await recordLoginFailure(ctx, attempt);
        return page({ form: 'The e-mail address, userId or password is not right.' }, 400);
      }
      await recordLoginSuccess(ctx, attempt);
      await startSession(ctx, request, reply, user);
      await issueDeviceCookie(ctx, reply, user.id);
      return seeOther(reply, '/account');
    },
  );

  app.post('/logout', { config: SITE, schema: formSchema({}) }, async (request, reply) => {
    await endSession(ctx, request, reply);
    reply.clearCookie(cookieNames(ctx).csrf, cookieOptions(ctx));
    return seeOther(reply, '/?msg=logged_out');
  });
}

/** A unique-constraint failure from either database: a sign-up raced another with the same address or userId. */
function isUniqueViolation(e: unknown): boolean {
  const err = e as { code?: string };
  return err.code === '23505' || err.code === 'SQLITE_CONSTRAINT_UNIQUE';
}

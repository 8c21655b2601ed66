// Signing in, signing up and connecting with a provider (docs/site.md "Sign-in providers"): a
// button's form starts a flow bound to this browser by a cookie, the provider sends the browser back
// to the callback, and the answer is checked (state, PKCE, nonce) before anything is decided
// (services/provider-connections.ts). A flow is single-use and lives minutes.
import { Type } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { accountFromCallback, authorizationRequest, type ProviderAccount } from '../../connections/oauth-client.js';
import { MastodonServerError, mastodonProvider, parseMastodonServer } from '../../connections/mastodon.js';
import { mastodonServerOf, providerForKey, type ProviderSettings } from '../../connections/providers.js';
import type { AppContext } from '../../context.js';
import { isValidEmail, isValidUserId } from '../../domain/identifiers.js';
import { sha256 } from '../../domain/secrets.js';
import type { TypedApp } from '../../http/typed-app.js';
import { findLiveFlow, insertFlow, takeFlow, type ProviderFlow } from '../../repositories/provider-connections.js';
import { connectProvider, logInWithProvider, signUpWithProvider } from '../../services/provider-connections.js';
import { checkbox, formSchema, seeOther, sendPage, SITE } from '../http.js';
import { issueDeviceCookie } from '../login-throttle.js';
import { cookieNames, cookieOptions, randomToken, safeEqual } from '../security.js';
import { csrfToken, startSession } from '../session.js';
import { ContinueToProviderPage, ProviderMessagePage, ProviderSignUpPage, type ProviderSignUpValues } from '../views/Providers.js';
import { RESERVED_USER_IDS } from './auth.js';

/** Long enough to sign in at the provider (a password, a second factor); short enough to be useless later. */
const AT_PROVIDER_MS = 10 * 60 * 1000;
/** Choosing a userId after the provider answered. */
const SIGN_UP_MS = 30 * 60 * 1000;
/** Starts and callbacks per client address per minute: a person needs a few. */
const PROVIDER_REQUESTS_PER_MINUTE = 20;
const SIGNUPS_PER_ADDRESS_PER_MINUTE = 10;

const slugParams = Type.Object({ slug: Type.String({ maxLength: 20 }) });

function providerOf(ctx: AppContext, slug: string): ProviderSettings | undefined {
  return ctx.config.providers.find((p) => p.slug === slug);
}

async function limited(ctx: AppContext, request: FastifyRequest, reply: FastifyReply, what: string, perMinute: number): Promise<FastifyReply | null> {
  const limit = await ctx.limiter.consume(what, request.ip, perMinute);
  if (limit.allowed) return null;
  reply.header('Retry-After', String(limit.resetSeconds));
  return sendPage(
    reply,
    <ProviderMessagePage page="provider-limited" title="Too many attempts" message="Too many sign-ins from your network just now. Try again in a minute." />,
    429,
  );
}

function mastodonServerUnknown(reply: FastifyReply, status: number): FastifyReply {
  return sendPage(
    reply,
    <ProviderMessagePage
      page="provider-mastodon-server"
      title="That Mastodon server cannot be used"
      message="Enter the address of your Mastodon server, like mastodon.social. If you did, the server did not answer as Mastodon does just now: try again later."
    />,
    status,
  );
}

function refused(reply: FastifyReply, status = 400): FastifyReply {
  return sendPage(
    reply,
    <ProviderMessagePage
      page="provider-refused"
      title="The sign-in did not complete"
      message="It did not start in this browser, was used already, took too long, or the provider did not confirm it. Nothing was changed. Try again."
    />,
    status,
  );
}

/** A new flow for this browser: its cookie value, stored only as a digest. */
async function beginFlow(ctx: AppContext, reply: FastifyReply, flow: Omit<ProviderFlow, 'id'>): Promise<void> {
  const value = randomToken();
  await ctx.db.write((w) => insertFlow(w, { ...flow, id: sha256(value) }, ctx.clock.now()));
  reply.setCookie(cookieNames(ctx).provider, value, cookieOptions(ctx, Math.ceil((flow.expiresAt - ctx.clock.now()) / 1000)));
}

async function flowOf(ctx: AppContext, request: FastifyRequest): Promise<ProviderFlow | undefined> {
  const value = request.cookies[cookieNames(ctx).provider];
  if (!value || value.length > 100) return undefined;
  return findLiveFlow(ctx.db, sha256(value), ctx.clock.now());
}

function pendingOf(flow: ProviderFlow): ProviderAccount | undefined {
  if (!flow.pending) return undefined;
  const a = JSON.parse(flow.pending) as ProviderAccount;
  return a;
}

export function registerProviderRoutes(app: TypedApp, ctx: AppContext): void {
  const endFlowCookie = (reply: FastifyReply) => reply.clearCookie(cookieNames(ctx).provider, cookieOptions(ctx));

  app.post(
    '/auth/:slug/start',
    {
      config: SITE,
      schema: {
        ...formSchema({
          purpose: Type.Union([Type.Literal('login'), Type.Literal('connect')]),
          // Mastodon only: the person's server.
          server: Type.Optional(Type.String({ maxLength: 300 })),
        }),
        params: slugParams,
      },
    },
    async (request, reply) => {
      const named = providerOf(ctx, request.params.slug);
      if (!named) return reply.callNotFound();
      const over = await limited(ctx, request, reply, 'site-provider', PROVIDER_REQUESTS_PER_MINUTE);
      if (over) return over;
      const user = request.site.user;
      const purpose = request.body.purpose;
      if (purpose === 'connect' && !user) return seeOther(reply, '/login');
      let p = named;
      let auth: Awaited<ReturnType<typeof authorizationRequest>>;
      try {
        if (named.kind === 'mastodon') {
          const server = parseMastodonServer(request.body.server ?? '');
          if (!server) return mastodonServerUnknown(reply, 400);
          p = await mastodonProvider(ctx, server);
        }
        auth = await authorizationRequest(ctx, p);
      } catch (e) {
        request.log.warn({ provider: p.kind === 'mastodon' ? 'mastodon' : p.key, err: { name: (e as Error).name } }, 'sign-in provider unreachable');
        if (e instanceof MastodonServerError) return mastodonServerUnknown(reply, 502);
        return sendPage(
          reply,
          <ProviderMessagePage page="provider-down" title={`${p.name} cannot be reached`} message={`${p.name} did not answer just now. Try again later.`} />,
          503,
        );
      }
      await beginFlow(ctx, reply, {
        stateHash: sha256(auth.state),
        provider: p.key,
        purpose,
        userRef: purpose === 'connect' && user ? user.id : null,
        codeVerifier: auth.codeVerifier,
        nonce: auth.nonce,
        pending: null,
        expiresAt: ctx.clock.now() + AT_PROVIDER_MS,
      });
      return sendPage(reply, <ContinueToProviderPage name={p.name} url={auth.url} />);
    },
  );

  app.get(
    '/auth/:slug/callback',
    {
      config: SITE,
      schema: {
        hide: true,
        params: slugParams,
        querystring: Type.Object({ state: Type.Optional(Type.String({ maxLength: 500 })) }, { additionalProperties: true }),
      },
    },
    async (request, reply) => {
      const named = providerOf(ctx, request.params.slug);
      if (!named) return reply.callNotFound();
      const over = await limited(ctx, request, reply, 'site-provider', PROVIDER_REQUESTS_PER_MINUTE);
      if (over) return over;
      const flow = await flowOf(ctx, request);
      const state = request.query.state ?? '';
      // Whatever happens next, this flow is spent: a second use of the answer finds nothing.
      if (flow) await ctx.db.write((w) => takeFlow(w, flow.id));
      endFlowCookie(reply);
      // Mastodon's flows are per server ('mastodon:<server>'), all answered at /auth/mastodon/callback.
      const flowServer = named.kind === 'mastodon' && flow ? mastodonServerOf(flow.provider) : null;
      if (!flow || flow.pending || (flow.provider !== named.key && flowServer === null) || !state || !safeEqual(sha256(state), flow.stateHash))
        return refused(reply);
      const query = request.url.slice(request.url.indexOf('?') + 1);
      let p = named;
      let account: ProviderAccount;
      try {
        if (flowServer !== null) p = await mastodonProvider(ctx, flowServer, { register: false });
        account = await accountFromCallback(ctx, p, query.length < 4096 ? query : '', { state, codeVerifier: flow.codeVerifier, nonce: flow.nonce });
      } catch (e) {
        // The error's name only: messages may quote what the provider sent.
        request.log.info({ provider: p.kind === 'mastodon' ? 'mastodon' : p.key, err: { name: (e as Error).name } }, 'sign-in provider answer refused');
        return refused(reply);
      }
      if (flow.purpose === 'connect') {
        const user = request.site.user;
        if (!user || user.id !== flow.userRef) return refused(reply);
        const outcome = await connectProvider(ctx, user, p, account);
        const msg = {
          connected: 'provider_connected',
          already_connected: 'provider_already',
          connected_elsewhere: 'provider_elsewhere',
          provider_taken: 'provider_taken',
        }[outcome];
        return seeOther(reply, `/account/security?msg=${msg}#connections`);
      }
      const outcome = await logInWithProvider(ctx, p, account);
      if (outcome.kind === 'log_in') {
        await startSession(ctx, request, reply, outcome.user);
        await issueDeviceCookie(ctx, reply, outcome.user.id);
        return seeOther(reply, '/account');
      }
      if (outcome.kind === 'address_has_account') return addressHasAccount(reply, p);
      await beginFlow(ctx, reply, {
        stateHash: '',
        provider: p.key,
        purpose: 'login',
        userRef: null,
        codeVerifier: '',
        nonce: null,
        pending: JSON.stringify(account),
        expiresAt: ctx.clock.now() + SIGN_UP_MS,
      });
      return seeOther(reply, '/auth/signup');
    },
  );

  async function signUpPage(
    request: FastifyRequest,
    reply: FastifyReply,
    p: ProviderSettings,
    account: ProviderAccount,
    values: ProviderSignUpValues,
    errors?: Record<string, string>,
    status = 200,
  ) {
    const page = (
      <ProviderSignUpPage
        csrf={await csrfToken(ctx, request, reply)}
        provider={p.name}
        account={account.username}
        verifiedEmail={account.emailVerified ? account.email : null}
        values={values}
        {...(errors ? { errors } : {})}
      />
    );
    return sendPage(reply, page, status);
  }

  async function pendingSignUp(request: FastifyRequest): Promise<{ flow: ProviderFlow; p: ProviderSettings; account: ProviderAccount } | undefined> {
    const flow = await flowOf(ctx, request);
    const p = flow && providerForKey(ctx.config.providers, flow.provider);
    const account = flow && pendingOf(flow);
    return flow && p && account ? { flow, p, account } : undefined;
  }

  app.get('/auth/signup', { config: SITE, schema: { hide: true } }, async (request, reply) => {
    const pending = await pendingSignUp(request);
    if (!pending) return refused(reply);
    const suggested = (pending.account.username ?? '').toLowerCase();
    return signUpPage(request, reply, pending.p, pending.account, { user_id: isValidUserId(suggested) ? suggested : '', email: '', opt_in: false });
  });

  app.post(
    '/auth/signup',
    { config: SITE, schema: formSchema({ user_id: Type.String({ maxLength: 64 }), email: Type.Optional(Type.String({ maxLength: 320 })), opt_in: checkbox }) },
    async (request, reply) => {
      const pending = await pendingSignUp(request);
      if (!pending) return refused(reply);
      const { p, account, flow } = pending;
      const b = request.body;
      const values = { user_id: b.user_id, email: b.email ?? '', opt_in: b.opt_in === '1' };
      const limit = await ctx.limiter.consume('site-signup', request.ip, SIGNUPS_PER_ADDRESS_PER_MINUTE);
      if (!limit.allowed) {
        reply.header('Retry-After', String(limit.resetSeconds));
        return signUpPage(request, reply, p, account, values, { form: 'Too many sign-ups from your network just now. Try again in a minute.' }, 429);
      }
      const errors: Record<string, string> = {};
      const userId = b.user_id.trim();
      if (!userId) errors.user_id = 'Choose a userId';
      else if (!isValidUserId(userId)) errors.user_id = 'A userId is 3–30 lower-case letters, digits or _ (and not a 32- or 64-digit hex number)';
      else if (RESERVED_USER_IDS.has(userId)) errors.user_id = 'That userId is reserved; choose another';
      const needsEmail = !(account.emailVerified && account.email);
      const typed = (b.email ?? '').trim();
      if (needsEmail && !typed) errors.email = 'Enter your e-mail address';
      else if (needsEmail && !isValidEmail(typed)) errors.email = 'Enter an e-mail address like name@example.org';
      if (Object.keys(errors).length > 0) return signUpPage(request, reply, p, account, values, errors, 400);
      const outcome = await signUpWithProvider(ctx, p, account, { userId, optedIn: values.opt_in, typedEmail: needsEmail ? typed : null });
      if (outcome.kind === 'user_id_taken') return signUpPage(request, reply, p, account, values, { user_id: 'That userId is taken; choose another' }, 400);
      await ctx.db.write((w) => takeFlow(w, flow.id));
      endFlowCookie(reply);
      if (outcome.kind === 'created') {
        await startSession(ctx, request, reply, outcome.user);
        await issueDeviceCookie(ctx, reply, outcome.user.id);
        return seeOther(reply, '/account');
      }
      if (outcome.kind === 'address_has_account') return addressHasAccount(reply, p);
      if (outcome.kind === 'connected_meanwhile') return seeOther(reply, '/login');
      return seeOther(reply, '/signup/sent');
    },
  );
}

/**
 * The classic account-linking takeover stops here: a provider account whose verified address is an
 * existing account's is never attached to it. Its owner logs in there and connects from the account page.
 */
function addressHasAccount(reply: FastifyReply, p: ProviderSettings): FastifyReply {
  return sendPage(
    reply,
    <ProviderMessagePage
      page="provider-log-in-first"
      title="Log in to your account first"
      message={`An account here already uses the e-mail address your ${p.name} account gave. Log in to that account (or set a password with "Forgot your password?"), then connect ${p.name} on its Security page. Nothing was connected.`}
      loginLink
    />,
    409,
  );
}

// The account page and its forms: visibility, profile, identities (add / change / remove / verify),
// links, export and deletion (SPEC §3 rule 7, §9, §10, §12).
import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { buildProfileUrl } from '../../catalogue/profile-url.js';
import type { AppContext } from '../../context.js';
import { ApiError } from '../../domain/errors.js';
import { PROFILE_FIELDS, PROFILE_MAX_LENGTH, type ProfileField } from '../../domain/profile.js';
import { normaliseSvcId } from '../../domain/svc-id.js';
import { centralIdentityIdOf } from '../../repositories/central-identities.js';
import { setUserFlags, type ProfileValues, type User } from '../../repositories/users.js';
import { deleteAccount, saveProfile, setOptIn } from '../../services/accounts.js';
import { resendConfirmation, UNPROVEN_ACCOUNT_DAYS } from '../../services/ownership.js';
import { changePassword } from '../../services/recovery.js';
import { requestEmailChange } from '../../services/email-change.js';
import { isValidEmail, normaliseEmail } from '../../domain/identifiers.js';
import { passwordProblem, verifyPassword } from '../../domain/passwords.js';
import { removeCentralIdentity, setCentralIdentity } from '../../services/central.js';
import { InvalidUsrSvcIdError, validateUsrSvcId } from '../../services/partner-data.js';
import { endLinkByUser } from '../../services/user-links.js';
import { discoveryView } from '../../services/discovery.js';
import { recogniseProfileUrl } from '../../services/profile-urls.js';
import { verifyIdentity } from '../../verification/verify.js';
import { loadAccountData } from '../account-data.js';
import { registerDiscoveryRoutes } from './discovery.js';
import { registerProofRoutes } from './proofs.js';
import { buildExport } from '../export.js';
import { checkbox, formSchema, optionalText, seeOther, sendPage, SITE } from '../http.js';
import { type TypedApp, typed } from '../../http/typed-app.js';
import { cookieNames, cookieOptions } from '../security.js';
import { csrfToken, endSession } from '../session.js';
import { AccountPage, type AccountPageProps } from '../views/Account.js';

const NOTICES: Record<string, string> = {
  opted_in: 'You are now visible to partner sites, and your public page is online.',
  opted_out: 'You are now hidden from every partner site, and your public page is offline.',
  discoverable_on: 'You are now discoverable: partner sites can find you by an identity or in an address book, and anyone by your e-mail address.',
  discoverable_off: 'You are no longer discoverable. Only those who know your e-mail address or userId can see you.',
  profile: 'Your profile is saved.',
  identity_saved: 'Identity saved.',
  identity_removed: 'Identity removed.',
  link_ended: 'The link has ended. That site has been told.',
  confirmed: 'Your e-mail address is confirmed.',
  resent: 'We sent the link again. It works for 24 hours; earlier links no longer do.',
  password_changed: 'Your password is changed. Your other sessions have ended.',
  email_sent: 'Check the new inbox: we sent a link there. Follow it within 24 hours to switch; until then your address stays as it is. If that address already has an account, the message says so instead.',
  email_changed: 'Your e-mail address is changed. Your other sessions have ended.',
  discovered: 'The identities you ticked are added.',
  discovery_done: 'The search is done: tick what to add under “Find my identities”.',
};

/** Wrong current passwords on the change form, per account: a stolen session cannot guess for long. */
const PASSWORD_CHANGE_FAILURES = { limit: 5, windowSeconds: 15 * 60 };

const WARNINGS: Record<string, string> = {
  discovered_none: 'Nothing was added: tick the identities you want first.',
  resend_wait: 'We have sent the link several times in the last hour. Look in your spam folder, or try again later.',
};

/** "Verify now" fetches a page chosen by the user: a few a minute is plenty for a person. */
const VERIFY_NOW_PER_MINUTE = 10;

type Extra = Omit<AccountPageProps, 'data' | 'csrf' | 'discovery'> & { discoverError?: string; discoverUrl?: string };

export async function accountPage(ctx: AppContext, request: FastifyRequest, reply: FastifyReply, user: User, extra: Extra, status = 200) {
  const data = await loadAccountData(ctx, user);
  const unprovenUntil = user.email_proven_at === null ? user.created_at + UNPROVEN_ACCOUNT_DAYS * 24 * 3600 * 1000 : undefined;
  const { discoverError, discoverUrl, ...props } = extra;
  const discovery = { view: await discoveryView(ctx, user), services: (await ctx.catalogue.get()).byId, error: discoverError, url: discoverUrl };
  return sendPage(reply, <AccountPage data={data} csrf={await csrfToken(ctx, request, reply)} unprovenUntil={unprovenUntil} discovery={discovery} {...props} />, status);
}

const svcIdField = Type.String({ maxLength: 64 });

/**
 * The current password that a change of password or address asks for, throttled per account and
 * purpose before any hashing: why it is refused (with `Retry-After` set when throttled), or null.
 * The caller resets the throttle once the whole change is accepted.
 */
async function currentPasswordRefusal(ctx: AppContext, reply: FastifyReply, user: User, given: string, throttleKey: string): Promise<{ message: string; status: number } | null> {
  const wait = await ctx.throttle.blockedFor(throttleKey, PASSWORD_CHANGE_FAILURES.limit);
  if (wait > 0) {
    reply.header('Retry-After', String(wait));
    return { message: `Too many wrong passwords. Try again in ${Math.ceil(wait / 60)} minutes.`, status: 429 };
  }
  if (!(await verifyPassword(user.password_hash, given))) {
    await ctx.throttle.recordFailure(throttleKey, PASSWORD_CHANGE_FAILURES.windowSeconds);
    return { message: 'Your current password is not right.', status: 400 };
  }
  return null;
}

declare module 'fastify' {
  interface FastifyRequest {
    /** The logged-in user: set by the account routes' preHandler, and only inside those routes. */
    user: User;
  }
}

/**
 * The account routes, as one encapsulated plugin: its preHandler sends anyone not logged in to the
 * log-in page, and hands each handler the user on `request.user`.
 */
export function accountRoutes(ctx: AppContext): FastifyPluginAsync {
  return async (app) => {
    app.decorateRequest('user', null as unknown as User);
    app.addHook('preHandler', async (request, reply) => {
      const user = request.site.user;
      if (!user) return seeOther(reply, '/login');
      request.user = user;
    });
    const routes = typed(app);
    registerAccountRoutes(routes, ctx);
    registerDiscoveryRoutes(routes, ctx);
    registerProofRoutes(routes, ctx);
  };
}

function registerAccountRoutes(app: TypedApp, ctx: AppContext): void {
  const db = ctx.db.kysely;

  app.get('/account', { config: SITE, schema: { hide: true, querystring: Type.Object({ msg: optionalText(40), checked: optionalText(64) }) } }, async (request, reply) => {
    const user = request.user;
    const q = request.query;
    return accountPage(ctx, request, reply, user, { notice: q.msg ? NOTICES[q.msg] : undefined, warning: q.msg ? WARNINGS[q.msg] : undefined, checked: q.checked });
  });

  app.post('/account/password', { config: SITE, schema: formSchema({ current_password: Type.String({ maxLength: 4096 }), new_password: Type.String({ maxLength: 4096 }) }) }, async (request, reply) => {
    const user = request.user;
    const b = request.body;
    const fail = (passwordError: string, status: number) => accountPage(ctx, request, reply, user, { passwordError }, status);
    const key = `pwchange:${user.id}`;
    const refused = await currentPasswordRefusal(ctx, reply, user, b.current_password, key);
    if (refused) return fail(refused.message, refused.status);
    const problem = await passwordProblem(b.new_password, { userId: user.user_id, email: user.email, names: [user.nickname, user.first_name, user.last_name] });
    if (problem) return fail(`The new password ${problem}.`, 400);
    await ctx.throttle.reset(key);
    await changePassword(ctx, user, b.new_password, request.site.sessionId);
    return seeOther(reply, '/account?msg=password_changed#password');
  });

  // Throttled like the password change (wrong current passwords per account), and per account in
  // requests (services/email-change.ts). Whether the new address has an account is never said here.
  app.post('/account/email', { config: SITE, schema: formSchema({ current_password: Type.String({ maxLength: 4096 }), new_email: Type.String({ maxLength: 320 }) }) }, async (request, reply) => {
    const user = request.user;
    const b = request.body;
    const newEmail = b.new_email.trim();
    const fail = (message: string, status: number) => accountPage(ctx, request, reply, user, { emailForm: { newEmail, error: message } }, status);
    const key = `emailchange:${user.id}`;
    const refused = await currentPasswordRefusal(ctx, reply, user, b.current_password, key);
    if (refused) return fail(refused.message, refused.status);
    await ctx.throttle.reset(key);
    if (!isValidEmail(newEmail)) return fail('Enter an e-mail address like name@example.org', 400);
    if (normaliseEmail(newEmail) === user.email) return fail('That is the address the account has now.', 400);
    const outcome = await requestEmailChange(ctx, user, newEmail);
    if (!outcome.sent) {
      reply.header('Retry-After', String(outcome.retryAfterSeconds));
      return fail(`You asked for several changes in the last hour. Try again in ${Math.ceil(outcome.retryAfterSeconds / 60)} minutes.`, 429);
    }
    return seeOther(reply, '/account?msg=email_sent#email');
  });

  app.post('/account/confirm/resend', { config: SITE, schema: formSchema({}) }, async (request, reply) => {
    const user = request.user;
    const outcome = await resendConfirmation(ctx, user);
    return seeOther(reply, `/account?msg=${outcome.sent ? 'resent' : 'resend_wait'}#confirm-address`);
  });

  app.post('/account/opt-in', { config: SITE, schema: formSchema({ opt_in: Type.Union([Type.Literal('0'), Type.Literal('1')]) }) }, async (request, reply) => {
    const user = request.user;
    const on = request.body.opt_in === '1';
    await setOptIn(ctx, user, on);
    return seeOther(reply, `/account?msg=${on ? 'opted_in' : 'opted_out'}`);
  });

  app.post('/account/discoverable', { config: SITE, schema: formSchema({ discoverable: checkbox }) }, async (request, reply) => {
    const user = request.user;
    const on = request.body.discoverable === '1';
    await setUserFlags(db, user.id, { discoverable: on }, ctx.clock.now());
    return seeOther(reply, `/account?msg=${on ? 'discoverable_on' : 'discoverable_off'}#visibility`);
  });

  const profileProps = Object.fromEntries(PROFILE_FIELDS.flatMap(([f]) => [[f, optionalText(PROFILE_MAX_LENGTH[f])], [`public_${f}`, checkbox]]));
  app.post('/account/profile', { config: SITE, schema: formSchema(profileProps) }, async (request, reply) => {
    const user = request.user;
    const b = request.body;
    const values: ProfileValues = {};
    const pub: ProfileField[] = [];
    for (const [field] of PROFILE_FIELDS) {
      const v = (b[field] ?? '').replace(/\r\n/g, '\n');
      // Line breaks belong in a bio; no other control characters belong anywhere.
      if (/[\u0000-\u0008\u000B-\u001F\u007F\u2028\u2029]/.test(v) || (field !== 'bio' && /[\n\t]/.test(v))) {
        return accountPage(ctx, request, reply, user, { profileError: 'Profile fields cannot contain control characters or, except “About you”, line breaks.' }, 400);
      }
      values[field] = v;
      if (b[`public_${field}`] === '1') pub.push(field);
    }
    await saveProfile(ctx, user, values, pub);
    return seeOther(reply, '/account?msg=profile#profile');
  });

  app.post(
    '/account/identities',
    { config: SITE, schema: formSchema({ svc_id: Type.Optional(svcIdField), usr_svc_id: Type.Optional(Type.String({ maxLength: 1024 })), profile_url: optionalText(2048), recognise: checkbox }) },
    async (request, reply) => {
    const user = request.user;
    const b = request.body;
    const profileUrl = (b.profile_url ?? '').trim();
    // A pasted profile URL fills the form in; the user checks it and adds (issue 18 part 1).
    if (profileUrl !== '' && (b.recognise === '1' || !b.svc_id)) {
      const found = await recogniseProfileUrl(ctx, profileUrl);
      if (found.kind === 'match') {
        const recognised = `That is ${found.usrSvcId} on ${found.svc.svcName}. Check the service and name below, then press “Add identity”.`;
        return accountPage(ctx, request, reply, user, { identityForm: { svcId: found.svc.svcId, usrSvcId: found.usrSvcId, profileUrl, recognised } });
      }
      const error =
        found.kind === 'ambiguous'
          ? `That address fits several services (${found.candidates.map((c) => c.svcId).join(', ')}). Choose the service yourself.`
          : 'We know no service with profile addresses like that. Choose the service and type your name there.';
      return accountPage(ctx, request, reply, user, { identityForm: { profileUrl, error } }, 400);
    }
    const form = { svc_id: b.svc_id ?? '', usr_svc_id: b.usr_svc_id ?? '' };
    form.svc_id = normaliseSvcId(form.svc_id);
    const changing = (await centralIdentityIdOf(db, user.id, form.svc_id)) !== undefined ? form.svc_id : undefined;
    const fail = (error: string) => accountPage(ctx, request, reply, user, { identityForm: { svcId: form.svc_id, usrSvcId: form.usr_svc_id, error, ...(changing ? { changing } : {}) } }, 400);
    const svc = (await ctx.catalogue.get()).byId.get(form.svc_id);
    if (!svc) return fail(form.svc_id ? 'That service is not in the list.' : 'Choose a service from the list.');
    let usrSvcId: string;
    try {
      usrSvcId = validateUsrSvcId(form.usr_svc_id);
    } catch (e) {
      if (e instanceof InvalidUsrSvcIdError) return fail(`Your name on ${svc.svcName} ${e.rule}.`);
      throw e;
    }
    if (!usrSvcId) return fail(`Type your name on ${svc.svcName}.`);
    if (svc.svcLeftURL !== '' || svc.urlBuilder !== null) {
      if (buildProfileUrl(svc, usrSvcId) === '') return fail(`“${usrSvcId}” does not give a valid address on ${svc.svcName}. Check it for typos.`);
    }
    await db.transaction().execute((tx) => setCentralIdentity(tx, user, svc, usrSvcId, { partnerId: null }, ctx.clock.now()));
    return seeOther(reply, `/account?msg=identity_saved#identity-${svc.svcId}`);
    },
  );

  app.post('/account/identities/remove', { config: SITE, schema: formSchema({ svc_id: svcIdField }) }, async (request, reply) => {
    const user = request.user;
    const svcId = normaliseSvcId(request.body.svc_id);
    await db.transaction().execute((tx) => removeCentralIdentity(tx, user, svcId, { partnerId: null }, ctx.clock.now()));
    return seeOther(reply, '/account?msg=identity_removed#identities');
  });

  app.post('/account/identities/verify', { config: SITE, schema: formSchema({ svc_id: svcIdField }) }, async (request, reply) => {
    const user = request.user;
    const svcId = normaliseSvcId(request.body.svc_id);
    const identityId = await centralIdentityIdOf(db, user.id, svcId);
    if (identityId === undefined) throw new ApiError('not_found', 'You have no identity on that service.');
    const limit = await ctx.limiter.consume('site-verify', String(user.id), VERIFY_NOW_PER_MINUTE);
    if (!limit.allowed) throw new ApiError('rate_limited', `You have checked a lot just now. Try again in ${limit.resetSeconds} seconds.`, limit.resetSeconds);
    await verifyIdentity(ctx, identityId);
    return seeOther(reply, `/account?checked=${encodeURIComponent(svcId)}#identity-${encodeURIComponent(svcId)}`);
  });

  // Nine digits: partner ids are PostgreSQL integers, and a larger number there is an error, not "no such link".
  app.post('/account/links/end', { config: SITE, schema: formSchema({ partner_id: Type.String({ pattern: '^[0-9]{1,9}$' }), remove_added: checkbox }) }, async (request, reply) => {
    const user = request.user;
    const b = request.body;
    await endLinkByUser(ctx, user, Number(b.partner_id), { removeAdded: b.remove_added === '1' });
    return seeOther(reply, '/account?msg=link_ended#links');
  });

  app.post('/account/export', { config: SITE, schema: formSchema({}) }, async (request, reply) => {
    const user = request.user;
    const data = await buildExport(ctx, user);
    const day = new Date(ctx.clock.now()).toISOString().slice(0, 10);
    return reply
      .type('application/json; charset=utf-8')
      .header('Content-Disposition', `attachment; filename="idsvc-${user.user_id}-${day}.json"`)
      .header('Cache-Control', 'no-store')
      .send(JSON.stringify(data, null, 2));
  });

  app.post('/account/delete', { config: SITE, schema: formSchema({ confirm_user_id: Type.String({ maxLength: 64 }) }) }, async (request, reply) => {
    const user = request.user;
    if (request.body.confirm_user_id.trim() !== user.user_id) {
      return accountPage(ctx, request, reply, user, { deleteError: `Type ${user.user_id} exactly to confirm.` }, 400);
    }
    await deleteAccount(ctx, user);
    await endSession(ctx, request, reply);
    reply.clearCookie(cookieNames(ctx).device, cookieOptions(ctx));
    return seeOther(reply, '/?msg=deleted');
  });
}

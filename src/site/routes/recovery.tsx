// "Forgot password" and the reset link (services/recovery.ts). Like sign-up, asking for a link
// answers the same whether or not the address has an account, and as fast: the lookup and the mail
// happen after the answer (services/after-answer.ts).
import { Type } from '@sinclair/typebox';
import type { AppContext } from '../../context.js';
import { isValidEmail } from '../../domain/identifiers.js';
import { passwordProblem } from '../../domain/passwords.js';
import { answerSent } from '../../services/after-answer.js';
import { requestPasswordReset, resetLinkUser, resetPassword } from '../../services/recovery.js';
import { formSchema, mailedTokenField, seeOther, sendPage, SITE } from '../http.js';
import type { TypedApp } from '../../http/typed-app.js';
import { cookieNames, cookieOptions } from '../security.js';
import { csrfToken } from '../session.js';
import { LinkProblemPage } from '../views/Ownership.js';
import { ForgotPage, ForgotSentPage, ResetPage } from '../views/Recovery.js';

/** Requests per client address a minute: a person needs one or two. */
const FORGOT_PER_ADDRESS_PER_MINUTE = 10;
const DEAD_LINK = {
  title: 'This link no longer works',
  message: 'It was used already, or it is more than an hour old. Ask for a new one from the log-in page.',
};

export function registerRecoveryRoutes(app: TypedApp, ctx: AppContext): void {
  app.get('/forgot', { config: SITE, schema: { hide: true } }, async (request, reply) =>
    sendPage(reply, <ForgotPage csrf={await csrfToken(ctx, request, reply)} />),
  );

  app.post('/forgot', { config: SITE, schema: formSchema({ email: Type.String({ maxLength: 320 }) }) }, async (request, reply) => {
    const email = request.body.email.trim();
    const page = async (errors: Record<string, string>, status: number) =>
      sendPage(reply, <ForgotPage csrf={await csrfToken(ctx, request, reply)} email={email} errors={errors} />, status);
    const limit = await ctx.limiter.consume('site-forgot', request.ip, FORGOT_PER_ADDRESS_PER_MINUTE);
    if (!limit.allowed) {
      reply.header('Retry-After', String(limit.resetSeconds));
      return page({ form: 'Too many requests from your network just now. Try again in a minute.' }, 429);
    }
    if (!isValidEmail(email)) return page({ email: 'Enter an e-mail address like name@example.org' }, 400);
    // Answered before the address is looked up: the time of the answer cannot tell who has an account.
    const sent = answerSent(reply.raw);
    const queued = ctx.afterAnswer.offer('password reset request', request.log, async () => {
      await sent;
      await requestPasswordReset(ctx, email);
    });
    if (!queued) {
      reply.header('Retry-After', '60');
      return page({ form: 'Too many requests just now. Try again in a minute.' }, 503);
    }
    return seeOther(reply, '/forgot/sent');
  });

  app.get('/forgot/sent', { config: SITE, schema: { hide: true } }, async (_request, reply) => sendPage(reply, <ForgotSentPage />));

  app.get('/reset', { config: SITE, schema: { hide: true, querystring: Type.Object({ token: Type.Optional(mailedTokenField) }) } }, async (request, reply) => {
    const token = request.query.token ?? '';
    const who = await resetLinkUser(ctx, token);
    if (!who) return sendPage(reply, <LinkProblemPage {...DEAD_LINK} />, 410);
    return sendPage(reply, <ResetPage csrf={await csrfToken(ctx, request, reply)} token={token} userId={who.userId} />);
  });

  app.post('/reset', { config: SITE, schema: formSchema({ token: mailedTokenField, password: Type.String({ maxLength: 4096 }) }) }, async (request, reply) => {
    const b = request.body;
    const who = await resetLinkUser(ctx, b.token);
    if (!who) return sendPage(reply, <LinkProblemPage {...DEAD_LINK} />, 410);
    const problem = await passwordProblem(b.password, who);
    if (problem)
      return sendPage(
        reply,
        <ResetPage csrf={await csrfToken(ctx, request, reply)} token={b.token} userId={who.userId} errors={{ password: `The password ${problem}` }} />,
        400,
      );
    if (!(await resetPassword(ctx, b.token, b.password))) return sendPage(reply, <LinkProblemPage {...DEAD_LINK} />, 410);
    // Every session ended, this browser's too.
    reply.clearCookie(cookieNames(ctx).session, cookieOptions(ctx));
    return seeOther(reply, '/login?msg=password_reset');
  });
}

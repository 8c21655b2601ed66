// The change-address form: sends a link to the new address, which switches it when followed.
import { Type } from '@sinclair/typebox';
import type { AppContext } from '../../../context.js';
import { isValidEmail, normaliseEmail } from '../../../domain/identifiers.js';
import type { TypedApp } from '../../../http/typed-app.js';
import { requestEmailChange } from '../../../services/email-change.js';
import { formSchema, seeOther, SITE } from '../../http.js';
import { currentPasswordRefusal } from './current-password.js';
import { accountPage } from './page.js';

export function registerEmailChange(app: TypedApp, ctx: AppContext): void {
  // Throttled like the password change (wrong current passwords per account), and per account in
  // requests (services/email-change.ts). Whether the new address has an account is never said here.
  app.post(
    '/account/email',
    { config: SITE, schema: formSchema({ current_password: Type.String({ maxLength: 4096 }), new_email: Type.String({ maxLength: 320 }) }) },
    async (request, reply) => {
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
      return seeOther(reply, '/account/security?msg=email_sent#email');
    },
  );
}

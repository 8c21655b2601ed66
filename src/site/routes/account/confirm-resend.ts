// The "send the confirmation link again" button of an account whose address is not yet proven.
import type { AppContext } from '../../../context.js';
import type { TypedApp } from '../../../http/typed-app.js';
import { resendConfirmation } from '../../../services/ownership.js';
import { formSchema, seeOther, SITE } from '../../http.js';

export function registerConfirmResend(app: TypedApp, ctx: AppContext): void {
  app.post('/account/confirm/resend', { config: SITE, schema: formSchema({}) }, async (request, reply) => {
    const user = request.user;
    const outcome = await resendConfirmation(ctx, user);
    return seeOther(reply, `/account?msg=${outcome.sent ? 'resent' : 'resend_wait'}#confirm-address`);
  });
}

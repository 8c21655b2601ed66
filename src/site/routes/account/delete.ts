// The delete-account form: the userId typed again confirms it.
import { Type } from '@sinclair/typebox';
import type { AppContext } from '../../../context.js';
import type { TypedApp } from '../../../http/typed-app.js';
import { deleteAccount } from '../../../services/accounts.js';
import { formSchema, seeOther, SITE } from '../../http.js';
import { cookieNames, cookieOptions } from '../../security.js';
import { endSession } from '../../session.js';
import { accountPage } from './page.js';

export function registerDeleteAccount(app: TypedApp, ctx: AppContext): void {
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

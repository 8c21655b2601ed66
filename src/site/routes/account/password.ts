// The change-password form: the current password first, then the new one's strength.
import { Type } from '@sinclair/typebox';
import type { AppContext } from '../../../context.js';
import { passwordProblem } from '../../../domain/passwords.js';
import type { TypedApp } from '../../../http/typed-app.js';
import { changePassword } from '../../../services/recovery.js';
import { formSchema, seeOther, SITE } from '../../http.js';
import { currentPasswordRefusal } from './current-password.js';
import { accountPage } from './page.js';

export function registerPasswordChange(app: TypedApp, ctx: AppContext): void {
  app.post(
    '/account/password',
    { config: SITE, schema: formSchema({ current_password: Type.String({ maxLength: 4096 }), new_password: Type.String({ maxLength: 4096 }) }) },
    async (request, reply) => {
      const user = request.user;
      const b = request.body;
      const fail = (passwordError: string, status: number) => accountPage(ctx, request, reply, user, { passwordError }, status);
      const key = `pwchange:${user.id}`;
      const refused = await currentPasswordRefusal(ctx, reply, user, b.current_password, key);
      if (refused) return fail(refused.message, refused.status);
      const problem = await passwordProblem(b.new_password, {
        userId: user.user_id,
        email: user.email,
        names: [user.nickname, user.first_name, user.last_name],
      });
      if (problem) return fail(`The new password ${problem}.`, 400);
      await ctx.throttle.reset(key);
      await changePassword(ctx, user, b.new_password, request.site.sessionId);
      return seeOther(reply, '/account/security?msg=password_changed#password');
    },
  );
}

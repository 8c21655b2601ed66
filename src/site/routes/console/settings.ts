// The installation's one console setting: approve applications from confirmed addresses at once.
import { Type } from '@sinclair/typebox';
import type { AppContext } from '../../../context.js';
import type { TypedApp } from '../../../http/typed-app.js';
import { setAutoApprove } from '../../../services/partner-applications.js';
import { formSchema, seeOther, SITE } from '../../http.js';

export function registerSettings(app: TypedApp, ctx: AppContext): void {
  app.post(
    '/console/settings',
    { config: SITE, schema: formSchema({ auto_approve: Type.Union([Type.Literal('0'), Type.Literal('1')]) }) },
    async (request, reply) => {
      await setAutoApprove(ctx, request.user, request.body.auto_approve === '1');
      return seeOther(reply, '/console?msg=settings');
    },
  );
}

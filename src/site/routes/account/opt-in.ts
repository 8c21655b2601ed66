// The visibility switch: visible to partner sites (and a public page), or hidden from all.
import { Type } from '@sinclair/typebox';
import type { AppContext } from '../../../context.js';
import type { TypedApp } from '../../../http/typed-app.js';
import { setOptIn } from '../../../services/accounts.js';
import { formSchema, seeOther, SITE } from '../../http.js';

export function registerOptIn(app: TypedApp, ctx: AppContext): void {
  app.post('/account/opt-in', { config: SITE, schema: formSchema({ opt_in: Type.Union([Type.Literal('0'), Type.Literal('1')]) }) }, async (request, reply) => {
    const user = request.user;
    const on = request.body.opt_in === '1';
    await setOptIn(ctx, user, on);
    return seeOther(reply, `/account/sharing?msg=${on ? 'opted_in' : 'opted_out'}`);
  });
}

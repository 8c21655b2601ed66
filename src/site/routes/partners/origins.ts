// The widget origins form: one http(s) origin per line; empty allows any.
import { Type } from '@sinclair/typebox';
import type { AppContext } from '../../../context.js';
import type { TypedApp } from '../../../http/typed-app.js';
import { DashboardError, memberPartner, parseOrigins, setOrigins } from '../../../services/partner-dashboard.js';
import { formSchema, seeOther, SITE } from '../../http.js';
import { dashboardPage, partnerParams } from './page.js';

export function registerOrigins(app: TypedApp, ctx: AppContext): void {
  app.post(
    '/partners/:id/origins',
    { config: SITE, schema: { ...formSchema({ origins: Type.String({ maxLength: 4000 }) }), params: partnerParams } },
    async (request, reply) => {
      const partner = await memberPartner(ctx, request.user, Number(request.params.id));
      try {
        await setOrigins(ctx, partner, parseOrigins(request.body.origins));
      } catch (e) {
        if (!(e instanceof DashboardError)) throw e;
        return dashboardPage(ctx, request, reply, partner, 'keys', { error: e.message, originsText: request.body.origins }, 400);
      }
      return seeOther(reply, `/partners/${partner.id}?msg=origins`);
    },
  );
}

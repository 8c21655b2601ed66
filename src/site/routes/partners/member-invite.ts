// "Invite someone": an invitation is mailed to the address whether or not it has an account, and
// the answer is the same either way.
import { Type } from '@sinclair/typebox';
import type { AppContext } from '../../../context.js';
import { isValidEmail } from '../../../domain/identifiers.js';
import type { TypedApp } from '../../../http/typed-app.js';
import { DashboardError, invite, memberPartner } from '../../../services/partner-dashboard.js';
import { formSchema, seeOther, SITE } from '../../http.js';
import { dashboardPage, partnerParams } from './page.js';

export function registerMemberInvite(app: TypedApp, ctx: AppContext): void {
  app.post(
    '/partners/:id/members/invite',
    { config: SITE, schema: { ...formSchema({ email: Type.String({ maxLength: 254 }) }), params: partnerParams } },
    async (request, reply) => {
      const partner = await memberPartner(ctx, request.user, Number(request.params.id));
      if (!isValidEmail(request.body.email)) return dashboardPage(ctx, request, reply, partner, 'members', { error: 'That is not an e-mail address.' }, 400);
      try {
        await invite(ctx, request.user, partner, request.body.email);
      } catch (e) {
        if (!(e instanceof DashboardError)) throw e;
        return dashboardPage(ctx, request, reply, partner, 'members', { error: e.message }, 429);
      }
      return seeOther(reply, `/partners/${partner.id}/members?msg=invited`);
    },
  );
}

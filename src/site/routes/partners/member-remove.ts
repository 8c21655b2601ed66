// "Remove" a member (oneself too), never the last one.
import { Type } from '@sinclair/typebox';
import type { AppContext } from '../../../context.js';
import type { TypedApp } from '../../../http/typed-app.js';
import { listMembers } from '../../../repositories/partner-members.js';
import { DashboardError, memberPartner, removePartnerMember } from '../../../services/partner-dashboard.js';
import { formSchema, seeOther, SITE } from '../../http.js';
import { dashboardPage, partnerParams } from './page.js';

export function registerMemberRemove(app: TypedApp, ctx: AppContext): void {
  app.post(
    '/partners/:id/members/remove',
    { config: SITE, schema: { ...formSchema({ member: Type.String({ pattern: '^[a-z0-9_]{3,30}$' }) }), params: partnerParams } },
    async (request, reply) => {
      const partner = await memberPartner(ctx, request.user, Number(request.params.id));
      const member = (await listMembers(ctx.db, partner.id)).find((m) => m.userId === request.body.member);
      try {
        if (!member) throw new DashboardError('That person is not a member.');
        await removePartnerMember(ctx, partner, member.userRef);
      } catch (e) {
        if (!(e instanceof DashboardError)) throw e;
        return dashboardPage(ctx, request, reply, partner, 'members', { error: e.message }, 400);
      }
      // Who removed themselves has no dashboard of this partner any more.
      return seeOther(reply, member.userRef === request.user.id ? '/partners' : `/partners/${partner.id}/members?msg=removed`);
    },
  );
}

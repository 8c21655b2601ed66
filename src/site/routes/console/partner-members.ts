// An operator adds a member to a partner by userId (say, one made with the CLI), or removes one.
import { Type } from '@sinclair/typebox';
import type { AppContext } from '../../../context.js';
import { ApiError } from '../../../domain/errors.js';
import type { TypedApp } from '../../../http/typed-app.js';
import { findPartner } from '../../../repositories/partners.js';
import { addPartnerMember, ConsoleError, removePartnerMemberByOperator } from '../../../services/operator-console.js';
import { formSchema, seeOther, SITE } from '../../http.js';
import { idParams, partnerPage } from './pages.js';

export function registerPartnerMembers(app: TypedApp, ctx: AppContext): void {
  app.post(
    '/console/partners/:id/members',
    {
      config: SITE,
      schema: {
        ...formSchema({ action: Type.Union([Type.Literal('add'), Type.Literal('remove')]), user_id: Type.String({ maxLength: 30 }) }),
        params: idParams,
      },
    },
    async (request, reply) => {
      const partner = await findPartner(ctx.db, request.params.id);
      if (!partner) throw new ApiError('not_found', 'There is no such partner.');
      try {
        if (request.body.action === 'add') await addPartnerMember(ctx, request.user, partner, request.body.user_id);
        else await removePartnerMemberByOperator(ctx, request.user, partner, request.body.user_id);
      } catch (e) {
        if (!(e instanceof ConsoleError)) throw e;
        return partnerPage(ctx, request, reply, partner.id, { error: e.message }, 400);
      }
      return seeOther(reply, `/console/partners/${partner.id}?msg=saved`);
    },
  );
}

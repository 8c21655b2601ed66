// Support changes to one person: the pro flag, and an operator's verified mark on an identity.
import { Type } from '@sinclair/typebox';
import type { AppContext } from '../../../context.js';
import { ApiError } from '../../../domain/errors.js';
import type { TypedApp } from '../../../http/typed-app.js';
import { findUserByUserId } from '../../../repositories/users.js';
import { setMark, setPro } from '../../../services/operator-console.js';
import { NoCentralEntryError, ProvenByRelMeError } from '../../../services/operator-mark.js';
import { formSchema, optionalText, seeOther, SITE } from '../../http.js';
import { personPage, userIdParams } from './pages.js';

export function registerPersonChange(app: TypedApp, ctx: AppContext): void {
  app.post(
    '/console/people/:userId',
    {
      config: SITE,
      schema: {
        ...formSchema({
          action: Type.Union([Type.Literal('pro_on'), Type.Literal('pro_off'), Type.Literal('mark'), Type.Literal('unmark')]),
          svc_id: optionalText(64),
        }),
        params: userIdParams,
      },
    },
    async (request, reply) => {
      const user = await findUserByUserId(ctx.db, request.params.userId);
      if (!user) throw new ApiError('not_found', 'There is no such account.');
      const b = request.body;
      if (b.action === 'pro_on' || b.action === 'pro_off') await setPro(ctx, request.user, user, b.action === 'pro_on');
      else {
        const svc = (await ctx.catalogue.get()).byId.get(b.svc_id ?? '');
        if (!svc) return personPage(ctx, request, reply, user.user_id, { error: 'That service is not in the catalogue.' }, 400);
        try {
          await setMark(ctx, request.user, user, svc, b.action === 'mark');
        } catch (e) {
          if (!(e instanceof NoCentralEntryError) && !(e instanceof ProvenByRelMeError)) throw e;
          return personPage(ctx, request, reply, user.user_id, { error: e.message }, 400);
        }
      }
      return seeOther(reply, `/console/people/${user.user_id}?msg=saved`);
    },
  );
}

// A partner's suspension, trusted flag and budget (requests a minute for its api_key).
import { Type } from '@sinclair/typebox';
import type { AppContext } from '../../../context.js';
import { ApiError } from '../../../domain/errors.js';
import type { TypedApp } from '../../../http/typed-app.js';
import { findPartner } from '../../../repositories/partners.js';
import { changePartner } from '../../../services/operator-console.js';
import { formSchema, optionalText, seeOther, SITE } from '../../http.js';
import { idParams, partnerPage } from './pages.js';

export function registerPartnerChange(app: TypedApp, ctx: AppContext): void {
  app.post(
    '/console/partners/:id',
    {
      config: SITE,
      schema: {
        ...formSchema({
          action: Type.Union([Type.Literal('suspend'), Type.Literal('resume'), Type.Literal('trust'), Type.Literal('untrust'), Type.Literal('budget')]),
          rate_limit: optionalText(20),
        }),
        params: idParams,
      },
    },
    async (request, reply) => {
      const partner = await findPartner(ctx.db, request.params.id);
      if (!partner) throw new ApiError('not_found', 'There is no such partner.');
      const b = request.body;
      switch (b.action) {
        case 'suspend':
        case 'resume':
          await changePartner(ctx, request.user, partner, { suspended: b.action === 'suspend' });
          break;
        case 'trust':
        case 'untrust':
          await changePartner(ctx, request.user, partner, { trusted: b.action === 'trust' });
          break;
        case 'budget': {
          const text = (b.rate_limit ?? '').trim();
          if (text !== '' && !/^[1-9][0-9]{0,8}$/.test(text))
            return partnerPage(ctx, request, reply, partner.id, { error: 'The budget is a whole number of requests a minute, or empty for the default.' }, 400);
          await changePartner(ctx, request.user, partner, { rateLimitPerMinute: text === '' ? null : Number(text) });
          break;
        }
      }
      return seeOther(reply, `/console/partners/${partner.id}?msg=saved`);
    },
  );
}

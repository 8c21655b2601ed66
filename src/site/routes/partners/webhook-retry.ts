// "Retry now" on a failed delivery of this partner: it becomes due at once.
import { Type } from '@sinclair/typebox';
import type { AppContext } from '../../../context.js';
import type { TypedApp } from '../../../http/typed-app.js';
import { retryEventNow } from '../../../repositories/outbox.js';
import { memberPartner } from '../../../services/partner-dashboard.js';
import { formSchema, seeOther, SITE } from '../../http.js';
import { dashboardPage, partnerParams } from './page.js';

export function registerWebhookRetry(app: TypedApp, ctx: AppContext): void {
  app.post(
    '/partners/:id/webhook/retry',
    { config: SITE, schema: { ...formSchema({ event: Type.String({ pattern: '^[0-9]{1,15}$' }) }), params: partnerParams } },
    async (request, reply) => {
      const partner = await memberPartner(ctx, request.user, Number(request.params.id));
      if (!(await ctx.db.write((w) => retryEventNow(w, Number(request.body.event), partner.id, ctx.clock.now()))))
        return dashboardPage(ctx, request, reply, partner, 'webhook', { error: 'That delivery is not waiting for a retry.' }, 400);
      return seeOther(reply, `/partners/${partner.id}/webhook?msg=retry`);
    },
  );
}

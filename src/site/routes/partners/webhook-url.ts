// The webhook endpoint form. The address must pass the outbound address policy delivery applies; a
// first endpoint gets a secret, shown in this answer only.
import { Type } from '@sinclair/typebox';
import type { AppContext } from '../../../context.js';
import type { TypedApp } from '../../../http/typed-app.js';
import { DashboardError, memberPartner, setWebhook } from '../../../services/partner-dashboard.js';
import { formSchema, seeOther, SITE } from '../../http.js';
import { dashboardPage, partnerParams } from './page.js';

export function registerWebhookUrl(app: TypedApp, ctx: AppContext): void {
  app.post(
    '/partners/:id/webhook',
    { config: SITE, schema: { ...formSchema({ webhook_url: Type.String({ maxLength: 2000 }) }), params: partnerParams } },
    async (request, reply) => {
      const partner = await memberPartner(ctx, request.user, Number(request.params.id));
      try {
        const r = await setWebhook(ctx, partner, request.body.webhook_url);
        if (r.newSecret !== null) {
          return dashboardPage(ctx, request, reply, r.partner, 'webhook', {
            notice: 'Webhook endpoint saved.',
            revealed: { what: 'webhook secret', value: r.newSecret, note: 'Your receiver verifies each delivery with it (Standard Webhooks).' },
          });
        }
        return seeOther(reply, `/partners/${partner.id}/webhook?msg=${r.partner.webhook_url ? 'webhook' : 'webhook_removed'}`);
      } catch (e) {
        if (!(e instanceof DashboardError)) throw e;
        return dashboardPage(ctx, request, reply, partner, 'webhook', { error: e.message, webhookText: request.body.webhook_url }, 400);
      }
    },
  );
}

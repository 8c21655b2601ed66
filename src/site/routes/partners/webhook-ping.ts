// "Send a test ping": a signed `ping` event sent at once, and the receiver's answer shown.
import type { AppContext } from '../../../context.js';
import type { TypedApp } from '../../../http/typed-app.js';
import { memberPartner } from '../../../services/partner-dashboard.js';
import { pingWebhook } from '../../../services/webhook-ping.js';
import { formSchema, SITE } from '../../http.js';
import { dashboardPage, partnerParams } from './page.js';

export function registerWebhookPing(app: TypedApp, ctx: AppContext): void {
  app.post('/partners/:id/webhook/ping', { config: SITE, schema: { ...formSchema({}), params: partnerParams } }, async (request, reply) => {
    const partner = await memberPartner(ctx, request.user, Number(request.params.id));
    if (!partner.webhook_url || !partner.webhook_secret)
      return dashboardPage(ctx, request, reply, partner, 'webhook', { error: 'Set a webhook endpoint first.' }, 400);
    const ping = await pingWebhook(ctx, { ...partner, webhook_url: partner.webhook_url });
    return dashboardPage(ctx, request, reply, partner, 'webhook', { ping });
  });
}

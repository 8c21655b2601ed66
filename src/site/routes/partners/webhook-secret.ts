// "Rotate the secret": the new one is shown in this answer only; the old one keeps signing beside it
// for the grace period, as `idsvc partner rotate-webhook-secret` does.
import type { AppContext } from '../../../context.js';
import type { TypedApp } from '../../../http/typed-app.js';
import { DashboardError, memberPartner, rotateSecret } from '../../../services/partner-dashboard.js';
import { formSchema, SITE } from '../../http.js';
import { dashboardPage, partnerParams } from './page.js';

export function registerWebhookSecret(app: TypedApp, ctx: AppContext): void {
  app.post('/partners/:id/webhook/secret', { config: SITE, schema: { ...formSchema({}), params: partnerParams } }, async (request, reply) => {
    const partner = await memberPartner(ctx, request.user, Number(request.params.id));
    try {
      const { secret, graceSeconds } = await rotateSecret(ctx, partner);
      const note =
        graceSeconds > 0
          ? `Deliveries carry a signature with the previous secret too for ${Math.round(graceSeconds / 3600)} hours.`
          : 'The previous secret no longer signs.';
      return dashboardPage(ctx, request, reply, await memberPartner(ctx, request.user, partner.id), 'webhook', {
        revealed: { what: 'webhook secret', value: secret, note },
      });
    } catch (e) {
      if (!(e instanceof DashboardError)) throw e;
      return dashboardPage(ctx, request, reply, partner, 'webhook', { error: e.message }, 400);
    }
  });
}

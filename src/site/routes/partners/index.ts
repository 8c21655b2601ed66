// The partner area (docs/site.md): applying for keys, and each partner's dashboard for its members.
// One encapsulated plugin: its hook sends anyone not logged in to the log-in page, counts the
// person's budget of pages and forms, refuses a route naming a partner the person is not a member
// of (404, as for a partner that does not exist), and hands each handler the user on `request.user`.
import type { FastifyPluginAsync } from 'fastify';
import type { AppContext } from '../../../context.js';
import { ApiError } from '../../../domain/errors.js';
import { typed } from '../../../http/typed-app.js';
import { memberPartner } from '../../../services/partner-dashboard.js';
import type { User } from '../../../repositories/users.js';
import { countSiteAction } from '../../form-limit.js';
import { seeOther } from '../../http.js';
import { registerApply } from './apply.js';
import { registerPartnersHome } from './home.js';
import { registerInvitation } from './invitation.js';
import { registerMemberInvite } from './member-invite.js';
import { registerMemberRemove } from './member-remove.js';
import { registerOrigins } from './origins.js';
import { registerDashboardPages } from './page.js';
import { registerTokenIssue } from './token.js';
import { registerWebhookPing } from './webhook-ping.js';
import { registerWebhookRetry } from './webhook-retry.js';
import { registerWebhookSecret } from './webhook-secret.js';
import { registerWebhookUrl } from './webhook-url.js';

export function partnerRoutes(ctx: AppContext): FastifyPluginAsync {
  return async (app) => {
    app.decorateRequest('user', null as unknown as User);
    // Before validation, so that who may not use a route learns nothing from how its fields are checked.
    app.addHook('preValidation', async (request, reply) => {
      const user = request.site.user;
      if (!user) return seeOther(reply, '/login');
      await countSiteAction(ctx, request, reply, 'partners', user.id);
      request.user = user;
      const id = (request.params as { id?: unknown }).id;
      if (request.routeOptions.url?.startsWith('/partners/:id')) {
        if (typeof id !== 'string' || !/^[0-9]{1,9}$/.test(id)) throw new ApiError('not_found', 'There is no such partner among yours.');
        await memberPartner(ctx, user, Number(id));
      }
    });
    const routes = typed(app);
    for (const register of [
      registerPartnersHome,
      registerApply,
      registerInvitation,
      registerDashboardPages,
      registerTokenIssue,
      registerOrigins,
      registerWebhookUrl,
      registerWebhookSecret,
      registerWebhookPing,
      registerWebhookRetry,
      registerMemberInvite,
      registerMemberRemove,
    ]) {
      register(routes, ctx);
    }
  };
}

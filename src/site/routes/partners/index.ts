// The partner area (docs/site.md): applying for keys, and each partner's dashboard for its members.
// One encapsulated plugin: its preHandler sends anyone not logged in to the log-in page, counts the
// person's budget of pages and forms, and hands each handler the user on `request.user`; whether
// the person is a member of the partner a route names is checked by that route (memberPartner).
import type { FastifyPluginAsync } from 'fastify';
import type { AppContext } from '../../../context.js';
import { typed } from '../../../http/typed-app.js';
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
    app.addHook('preHandler', async (request, reply) => {
      const user = request.site.user;
      if (!user) return seeOther(reply, '/login');
      await countSiteAction(ctx, request, reply, 'partners', user.id);
      request.user = user;
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

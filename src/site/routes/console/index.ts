// The operator console (docs/operations.md): for accounts with the operator role only. One
// encapsulated plugin: its hook sends anyone not logged in to the log-in page, refuses every
// other account with 403, counts the operator's budget of pages and forms, and hands each handler
// the operator on `request.user`.
import type { FastifyPluginAsync } from 'fastify';
import type { AppContext } from '../../../context.js';
import { errors } from '../../../domain/errors.js';
import { typed } from '../../../http/typed-app.js';
import { isOperator, type User } from '../../../repositories/users.js';
import { countSiteAction } from '../../form-limit.js';
import { seeOther } from '../../http.js';
import { registerApplicationDecision } from './application-decide.js';
import { registerAuditPages } from './audit.js';
import { registerCatalogueChange } from './catalogue-change.js';
import { registerConsolePages } from './pages.js';
import { registerPartnerChange } from './partner-change.js';
import { registerPartnerMembers } from './partner-members.js';
import { registerPersonChange } from './person-change.js';
import { registerQueueRetry } from './queue-retry.js';
import { registerSettings } from './settings.js';

export function consoleRoutes(ctx: AppContext): FastifyPluginAsync {
  return async (app) => {
    app.decorateRequest('user', null as unknown as User);
    // Before validation, so that a non-operator learns nothing from how a route's fields are checked.
    app.addHook('preValidation', async (request, reply) => {
      const user = request.site.user;
      if (!user) return seeOther(reply, '/login');
      if (!isOperator(user)) throw errors.forbidden('The console is for operators of this installation.');
      await countSiteAction(ctx, request, reply, 'console', user.id);
      request.user = user;
    });
    const routes = typed(app);
    for (const register of [
      registerConsolePages,
      registerAuditPages,
      registerApplicationDecision,
      registerSettings,
      registerPartnerChange,
      registerPartnerMembers,
      registerPersonChange,
      registerCatalogueChange,
      registerQueueRetry,
    ]) {
      register(routes, ctx);
    }
  };
}

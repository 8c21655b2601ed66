// The account page and its forms (SPEC §3 rule 7, §9, §10, §12): one module per form, as src/api/
// has one per operation, all registered behind the one log-in check below.
import type { FastifyPluginAsync } from 'fastify';
import type { AppContext } from '../../../context.js';
import { typed } from '../../../http/typed-app.js';
import type { User } from '../../../repositories/users.js';
import { seeOther } from '../../http.js';
import { registerConfirmResend } from './confirm-resend.js';
import { registerConnectionRemove } from './connections.js';
import { registerDeleteAccount } from './delete.js';
import { registerDiscoverable } from './discoverable.js';
import { registerDiscoveryRoutes } from './discovery.js';
import { registerEmailChange } from './email.js';
import { registerExport } from './export.js';
import { registerIdentityAdd } from './identity-add.js';
import { registerIdentityRemove } from './identity-remove.js';
import { registerIdentityVerify } from './identity-verify.js';
import { registerLinkEnd } from './link-end.js';
import { registerOptIn } from './opt-in.js';
import { registerAccountView } from './page.js';
import { registerPasskeyRoutes } from './passkeys.js';
import { registerPasswordChange } from './password.js';
import { registerProfile } from './profile.js';
import { registerProofRoutes } from './proofs.js';
import { photoRoutes } from '../photo.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The logged-in user: set by the account routes' preHandler, and only inside those routes. */
    user: User;
  }
}

/**
 * The account routes, as one encapsulated plugin: its preHandler sends anyone not logged in to the
 * log-in page, and hands each handler the user on `request.user`.
 */
export function accountRoutes(ctx: AppContext): FastifyPluginAsync {
  return async (app) => {
    app.decorateRequest('user', null as unknown as User);
    app.addHook('preHandler', async (request, reply) => {
      const user = request.site.user;
      if (!user) return seeOther(reply, '/login');
      request.user = user;
    });
    const routes = typed(app);
    for (const register of [
      registerAccountView,
      registerPasswordChange,
      registerEmailChange,
      registerConfirmResend,
      registerOptIn,
      registerDiscoverable,
      registerProfile,
      registerIdentityAdd,
      registerIdentityRemove,
      registerIdentityVerify,
      registerLinkEnd,
      registerExport,
      registerDeleteAccount,
      registerDiscoveryRoutes,
      registerProofRoutes,
      registerPasskeyRoutes,
      registerConnectionRemove,
    ]) {
      register(routes, ctx);
    }
    // The photo page parses multipart bodies, so it is a plugin of its own inside the log-in check.
    await app.register(photoRoutes(ctx));
  };
}

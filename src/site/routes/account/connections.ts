// A sign-in provider's "Disconnect" button (connecting starts at /auth/<provider>/start).
import { Type } from '@sinclair/typebox';
import { providerForKey } from '../../../connections/providers.js';
import type { AppContext } from '../../../context.js';
import type { TypedApp } from '../../../http/typed-app.js';
import { connectionsOfUser } from '../../../repositories/provider-connections.js';
import { disconnectProvider } from '../../../services/provider-connections.js';
import { formSchema, seeOther, SITE } from '../../http.js';

/** Removals per account per minute: a person disconnects a few; the limit keeps a stuck script from mailing the owner in a loop. */
const DISCONNECTS_PER_MINUTE = 10;

export function registerConnectionRemove(app: TypedApp, ctx: AppContext): void {
  app.post(
    '/account/connections/remove',
    { config: SITE, schema: formSchema({ connection_id: Type.String({ pattern: '^[0-9]{1,9}$' }) }) },
    async (request, reply) => {
      const user = request.user;
      const limit = await ctx.limiter.consume('site-disconnect', String(user.id), DISCONNECTS_PER_MINUTE);
      if (!limit.allowed) return seeOther(reply, '/account/security?msg=provider_wait#connections');
      const id = Number(request.body.connection_id);
      const connection = (await connectionsOfUser(ctx.db, user.id)).find((c) => c.id === id);
      const p = connection && providerForKey(ctx.config.providers, connection.provider);
      const removed = await disconnectProvider(ctx, user, p, id);
      return seeOther(reply, `/account/security?msg=${removed ? 'provider_disconnected' : 'provider_gone'}#connections`);
    },
  );
}

// An identity's "Remove" button.
import type { AppContext } from '../../../context.js';
import { normaliseSvcId } from '../../../domain/svc-id.js';
import type { TypedApp } from '../../../http/typed-app.js';
import { removeCentralIdentity } from '../../../services/central.js';
import { formSchema, seeOther, SITE } from '../../http.js';
import { svcIdField } from './fields.js';

export function registerIdentityRemove(app: TypedApp, ctx: AppContext): void {
  app.post('/account/identities/remove', { config: SITE, schema: formSchema({ svc_id: svcIdField }) }, async (request, reply) => {
    const user = request.user;
    const svcId = normaliseSvcId(request.body.svc_id);
    await ctx.db.write((w) => removeCentralIdentity(w, user, svcId, { partnerId: null }, ctx.clock.now()));
    return seeOther(reply, '/account?msg=identity_removed#identities');
  });
}

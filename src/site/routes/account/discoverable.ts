// The "discoverable" checkbox: whether others may find the account by an identity or its address.
import type { AppContext } from '../../../context.js';
import type { TypedApp } from '../../../http/typed-app.js';
import { setUserFlags } from '../../../repositories/users.js';
import { checkbox, formSchema, seeOther, SITE } from '../../http.js';

export function registerDiscoverable(app: TypedApp, ctx: AppContext): void {
  app.post('/account/discoverable', { config: SITE, schema: formSchema({ discoverable: checkbox }) }, async (request, reply) => {
    const user = request.user;
    const on = request.body.discoverable === '1';
    await ctx.db.write((w) => setUserFlags(w, user.id, { discoverable: on }, ctx.clock.now()));
    return seeOther(reply, `/account/sharing?msg=${on ? 'discoverable_on' : 'discoverable_off'}#visibility`);
  });
}

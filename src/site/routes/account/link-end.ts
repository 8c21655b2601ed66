// A linked partner's "End link" button, optionally removing the identities that partner added.
import { Type } from '@sinclair/typebox';
import type { AppContext } from '../../../context.js';
import type { TypedApp } from '../../../http/typed-app.js';
import { endLinkByUser } from '../../../services/user-links.js';
import { checkbox, formSchema, seeOther, SITE } from '../../http.js';

export function registerLinkEnd(app: TypedApp, ctx: AppContext): void {
  // Nine digits: partner ids are PostgreSQL integers, and a larger number there is an error, not "no such link".
  app.post(
    '/account/links/end',
    { config: SITE, schema: formSchema({ partner_id: Type.String({ pattern: '^[0-9]{1,9}$' }), remove_added: checkbox }) },
    async (request, reply) => {
      const user = request.user;
      const b = request.body;
      await endLinkByUser(ctx, user, Number(b.partner_id), { removeAdded: b.remove_added === '1' });
      return seeOther(reply, '/account/sites?msg=link_ended#links');
    },
  );
}

// An invitation's link (GET shows "Accept", POST accepts): the token stays in the query string and
// the form body, which the logs never show (http/redact.ts).
import { Type } from '@sinclair/typebox';
import type { AppContext } from '../../../context.js';
import type { TypedApp } from '../../../http/typed-app.js';
import { acceptInvitation, DashboardError } from '../../../services/partner-dashboard.js';
import { formSchema, mailedTokenField, sendPage, seeOther, SITE } from '../../http.js';
import { csrfToken } from '../../session.js';
import { InvitationPage } from '../../views/Partners.js';

export function registerInvitation(app: TypedApp, ctx: AppContext): void {
  app.get(
    '/partners/invitation',
    { config: SITE, schema: { hide: true, querystring: Type.Object({ token: Type.Optional(mailedTokenField) }) } },
    async (request, reply) => {
      const viewer = { userId: request.user.user_id, csrf: await csrfToken(ctx, request, reply) };
      return sendPage(reply, <InvitationPage viewer={viewer} token={request.query.token ?? ''} />);
    },
  );

  app.post('/partners/invitation', { config: SITE, schema: formSchema({ token: mailedTokenField }) }, async (request, reply) => {
    try {
      const partner = await acceptInvitation(ctx, request.user, request.body.token);
      return seeOther(reply, `/partners/${partner.id}?msg=joined`);
    } catch (e) {
      if (!(e instanceof DashboardError)) throw e;
      const viewer = { userId: request.user.user_id, csrf: await csrfToken(ctx, request, reply) };
      return sendPage(reply, <InvitationPage viewer={viewer} token="" error={e.message} />, 410);
    }
  });
}

// GET /partners: the partners the person is a member of, and their applications.
import { Type } from '@sinclair/typebox';
import type { AppContext } from '../../../context.js';
import { isProvenAccount } from '../../../domain/visibility.js';
import type { TypedApp } from '../../../http/typed-app.js';
import { listApplicationsOfUser } from '../../../repositories/partner-applications.js';
import { membershipsOf } from '../../../repositories/partner-members.js';
import { optionalText, sendPage, SITE } from '../../http.js';
import { csrfToken } from '../../session.js';
import { PartnersHome } from '../../views/Partners.js';

const NOTICES: Record<string, string> = {
  applied: 'Your application is sent. An operator reviews it; you hear from us by mail.',
  approved: 'Your application is approved: open the partner below and issue its api_token.',
  joined: 'You are now a member of the partner.',
};

export function registerPartnersHome(app: TypedApp, ctx: AppContext): void {
  app.get('/partners', { config: SITE, schema: { hide: true, querystring: Type.Object({ msg: optionalText(20) }) } }, async (request, reply) => {
    const user = request.user;
    const [memberships, applications] = [await membershipsOf(ctx.db, user.id), await listApplicationsOfUser(ctx.db, user.id)];
    const viewer = { userId: user.user_id, csrf: await csrfToken(ctx, request, reply) };
    const notice = request.query.msg ? NOTICES[request.query.msg] : undefined;
    return sendPage(
      reply,
      <PartnersHome viewer={viewer} memberships={memberships} applications={applications} notice={notice} proven={isProvenAccount(user)} />,
    );
  });
}

// Approve or decline (with a reason) an application; the applicant is mailed either way.
import { Type } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../../../context.js';
import { ApiError } from '../../../domain/errors.js';
import type { TypedApp } from '../../../http/typed-app.js';
import { findApplication } from '../../../repositories/partner-applications.js';
import { findUserByRef } from '../../../repositories/users.js';
import { ApplicationError, approveApplication, declineApplication } from '../../../services/partner-applications.js';
import { formSchema, sendPage, seeOther, SITE } from '../../http.js';
import { ApplicationPage } from '../../views/Console.js';
import { idParams, viewerOfOperator } from './pages.js';

const DECIDED = 'This application was decided already.';

export function registerApplicationDecision(app: TypedApp, ctx: AppContext): void {
  const refuse = async (request: FastifyRequest, reply: FastifyReply, id: number, error: string) => {
    const a = await findApplication(ctx.db, id);
    if (!a) throw new ApiError('not_found', 'There is no such application.');
    const applicant = await findUserByRef(ctx.db, a.userRef);
    return sendPage(
      reply,
      <ApplicationPage viewer={await viewerOfOperator(ctx, request, reply)} a={a} applicant={applicant?.user_id ?? '(deleted)'} error={error} />,
      409,
    );
  };

  app.post('/console/applications/:id/approve', { config: SITE, schema: { ...formSchema({}), params: idParams } }, async (request, reply) => {
    const id = Number(request.params.id);
    try {
      if (!(await approveApplication(ctx, { auto: false, operator: request.user }, id))) return refuse(request, reply, id, DECIDED);
    } catch (e) {
      if (!(e instanceof ApplicationError)) throw e;
      return refuse(request, reply, id, e.message);
    }
    return seeOther(reply, '/console?msg=approved');
  });

  app.post(
    '/console/applications/:id/decline',
    { config: SITE, schema: { ...formSchema({ reason: Type.String({ maxLength: 500 }) }), params: idParams } },
    async (request, reply) => {
      const id = Number(request.params.id);
      const reason = request.body.reason.trim();
      if (reason === '') return refuse(request, reply, id, 'Give the applicant a reason.');
      if (!(await declineApplication(ctx, request.user, id, reason))) return refuse(request, reply, id, DECIDED);
      return seeOther(reply, '/console?msg=declined');
    },
  );
}

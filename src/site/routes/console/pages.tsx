// The console's pages (GET), and the renders its forms answer refusals with.
import { Type } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../../../context.js';
import { ApiError } from '../../../domain/errors.js';
import type { TypedApp } from '../../../http/typed-app.js';
import { listMail } from '../../../repositories/mail-queue.js';
import { failedEvents } from '../../../repositories/outbox.js';
import { findApplication, listApplications } from '../../../repositories/partner-applications.js';
import { listMembers } from '../../../repositories/partner-members.js';
import { findPartner, searchPartners } from '../../../repositories/partners.js';
import { findUserByRef, findUserByUserId, findUsersForConsole } from '../../../repositories/users.js';
import { listCatalogue } from '../../../repositories/catalogue.js';
import { autoApproveOn } from '../../../services/partner-applications.js';
import { loadAccountData } from '../../account-data.js';
import { optionalText, sendPage, SITE } from '../../http.js';
import { csrfToken } from '../../session.js';
import { ApplicationPage, ApplicationsPage, CataloguePage, PartnerPage, PartnersPage, PeoplePage, PersonPage, QueuesPage } from '../../views/Console.js';

export const idParams = Type.Object({ id: Type.String({ pattern: '^[0-9]{1,9}$' }) });
export const userIdParams = Type.Object({ userId: Type.String({ pattern: '^[a-z0-9_]{3,30}$' }) });
export const svcIdParams = Type.Object({ svcId: Type.String({ pattern: '^[a-z0-9_-]{1,64}$' }) });
const searchQuery = Type.Object({ q: optionalText(254), msg: optionalText(20) });
const msgQuery = Type.Object({ msg: optionalText(20) });

/** How many rows a console list shows: enough to work with, bounded. */
const LIST_LIMIT = 50;

const NOTICES: Record<string, string> = {
  approved: 'Approved: the partner exists and the applicant is mailed.',
  declined: 'Declined: the applicant is mailed with your reason.',
  settings: 'Setting saved.',
  saved: 'Saved.',
  retried: 'Queued again: it is sent within a few seconds.',
};

const notice = (msg: string | undefined) => (msg ? NOTICES[msg] : undefined);

export async function viewerOfOperator(ctx: AppContext, request: FastifyRequest, reply: FastifyReply) {
  return { userId: request.user.user_id, csrf: await csrfToken(ctx, request, reply) };
}

export async function partnerPage(
  ctx: AppContext,
  request: FastifyRequest,
  reply: FastifyReply,
  id: number,
  extra: { notice?: string | undefined; error?: string | undefined },
  status = 200,
) {
  const partner = await findPartner(ctx.db, String(id));
  if (!partner) throw new ApiError('not_found', 'There is no such partner.');
  const members = await listMembers(ctx.db, partner.id);
  return sendPage(reply, <PartnerPage viewer={await viewerOfOperator(ctx, request, reply)} partner={partner} members={members} {...extra} />, status);
}

export async function personPage(
  ctx: AppContext,
  request: FastifyRequest,
  reply: FastifyReply,
  userId: string,
  extra: { notice?: string | undefined; error?: string | undefined },
  status = 200,
) {
  const user = await findUserByUserId(ctx.db, userId);
  if (!user) throw new ApiError('not_found', 'There is no such account.');
  const data = await loadAccountData(ctx, user);
  return sendPage(reply, <PersonPage viewer={await viewerOfOperator(ctx, request, reply)} data={data} {...extra} />, status);
}

export async function cataloguePage(
  ctx: AppContext,
  request: FastifyRequest,
  reply: FastifyReply,
  q: string,
  extra: { notice?: string | undefined; error?: string | undefined },
  status = 200,
) {
  const needle = q.trim().toLowerCase();
  const all = needle === '' ? [] : await listCatalogue(ctx.db, true);
  const services = all.filter((s) => s.svcId.includes(needle) || s.svcName.toLowerCase().includes(needle)).slice(0, LIST_LIMIT);
  return sendPage(reply, <CataloguePage viewer={await viewerOfOperator(ctx, request, reply)} q={q} services={services} {...extra} />, status);
}

export async function queuesPage(
  ctx: AppContext,
  request: FastifyRequest,
  reply: FastifyReply,
  extra: { notice?: string | undefined; error?: string | undefined },
  status = 200,
) {
  const mail = await listMail(ctx.db, { status: 'failed', limit: LIST_LIMIT });
  const events = await failedEvents(ctx.db, LIST_LIMIT);
  return sendPage(reply, <QueuesPage viewer={await viewerOfOperator(ctx, request, reply)} mail={mail} events={events} {...extra} />, status);
}

export function registerConsolePages(app: TypedApp, ctx: AppContext): void {
  const db = ctx.db;
  app.get('/console', { config: SITE, schema: { hide: true, querystring: msgQuery } }, async (request, reply) => {
    const pending = await listApplications(db, 'pending', LIST_LIMIT);
    const decided = (await listApplications(db, 'all', LIST_LIMIT)).filter((a) => a.status !== 'pending').slice(0, 20);
    const auto = await autoApproveOn(ctx);
    return sendPage(
      reply,
      <ApplicationsPage
        viewer={await viewerOfOperator(ctx, request, reply)}
        pending={pending}
        decided={decided}
        autoApprove={auto}
        notice={notice(request.query.msg)}
      />,
    );
  });

  app.get('/console/applications/:id', { config: SITE, schema: { hide: true, params: idParams } }, async (request, reply) => {
    const a = await findApplication(db, Number(request.params.id));
    if (!a) throw new ApiError('not_found', 'There is no such application.');
    const applicant = await findUserByRef(db, a.userRef);
    return sendPage(reply, <ApplicationPage viewer={await viewerOfOperator(ctx, request, reply)} a={a} applicant={applicant?.user_id ?? '(deleted)'} />);
  });

  app.get('/console/partners', { config: SITE, schema: { hide: true, querystring: searchQuery } }, async (request, reply) => {
    const q = request.query.q ?? '';
    const partners = await searchPartners(db, q, LIST_LIMIT);
    return sendPage(reply, <PartnersPage viewer={await viewerOfOperator(ctx, request, reply)} q={q} partners={partners} />);
  });

  app.get('/console/partners/:id', { config: SITE, schema: { hide: true, params: idParams, querystring: msgQuery } }, async (request, reply) =>
    partnerPage(ctx, request, reply, Number(request.params.id), { notice: notice(request.query.msg) }),
  );

  app.get('/console/people', { config: SITE, schema: { hide: true, querystring: searchQuery } }, async (request, reply) => {
    const q = request.query.q ?? '';
    const found = await findUsersForConsole(db, q);
    return sendPage(reply, <PeoplePage viewer={await viewerOfOperator(ctx, request, reply)} q={q} found={found} />);
  });

  app.get('/console/people/:userId', { config: SITE, schema: { hide: true, params: userIdParams, querystring: msgQuery } }, async (request, reply) =>
    personPage(ctx, request, reply, request.params.userId, { notice: notice(request.query.msg) }),
  );

  app.get('/console/catalogue', { config: SITE, schema: { hide: true, querystring: searchQuery } }, async (request, reply) =>
    cataloguePage(ctx, request, reply, request.query.q ?? '', { notice: notice(request.query.msg) }),
  );

  app.get('/console/queues', { config: SITE, schema: { hide: true, querystring: msgQuery } }, async (request, reply) =>
    queuesPage(ctx, request, reply, { notice: notice(request.query.msg) }),
  );
}

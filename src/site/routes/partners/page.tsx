// The dashboard's pages (GET), and the render every dashboard form answers with: the page the form
// belongs to, with its outcome (a notice, a refusal, a secret shown once, a ping's answer).
import { Type } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../../../context.js';
import type { TypedApp } from '../../../http/typed-app.js';
import { recentEventsOfPartner } from '../../../repositories/outbox.js';
import { countLinkedPeople, listLinkEvents } from '../../../repositories/partner-link-events.js';
import { listMembers } from '../../../repositories/partner-members.js';
import type { Partner } from '../../../repositories/partners.js';
import { memberPartner } from '../../../services/partner-dashboard.js';
import { partnerUsage } from '../../../services/usage.js';
import { optionalText, sendPage, SITE } from '../../http.js';
import { csrfToken } from '../../session.js';
import { DASHBOARD_PAGES, PartnerDashboard, type DashboardPageName, type DashboardProps } from '../../views/PartnerDashboard.js';

/** A partner id as a path segment: nine digits at most, as PostgreSQL integers go. */
export const partnerParams = Type.Object({ id: Type.String({ pattern: '^[0-9]{1,9}$' }) });

/** Deliveries the webhook page lists. */
const RECENT_DELIVERIES = 50;
const THIRTY_DAYS = 30 * 24 * 3600 * 1000;

const NOTICES: Record<string, string> = {
  origins: 'Origins saved.',
  webhook: 'Webhook endpoint saved.',
  webhook_removed: 'Webhook endpoint removed: no more deliveries.',
  retry: 'The delivery is due again: it is sent within a few seconds.',
  invited: 'If that address can receive mail, an invitation is on its way.',
  removed: 'Member removed.',
  joined: 'You are now a member of this partner.',
};

type Outcome = Omit<DashboardProps, 'viewer' | 'page' | 'data'>;

export async function dashboardPage(
  ctx: AppContext,
  request: FastifyRequest,
  reply: FastifyReply,
  partner: Partner,
  page: DashboardPageName,
  outcome: Outcome = {},
  status = 200,
) {
  const db = ctx.db;
  const now = ctx.clock.now();
  const data = {
    partner,
    members: page === 'members' ? await listMembers(db, partner.id) : [],
    deliveries: page === 'webhook' ? await recentEventsOfPartner(db, partner.id, RECENT_DELIVERIES) : [],
    linkedPeople: page === 'links' ? await countLinkedPeople(db, partner.id) : 0,
    linkEvents: page === 'links' ? await listLinkEvents(db, partner.id, now - THIRTY_DAYS) : [],
    usage: page === 'usage' ? await partnerUsage(db, partner.id, now) : undefined,
    now,
  };
  const viewer = { userId: request.user.user_id, csrf: await csrfToken(ctx, request, reply) };
  return sendPage(reply, <PartnerDashboard viewer={viewer} page={page} data={data} {...outcome} />, status);
}

export function registerDashboardPages(app: TypedApp, ctx: AppContext): void {
  for (const { page, suffix } of DASHBOARD_PAGES) {
    app.get(
      `/partners/:id${suffix}`,
      { config: SITE, schema: { hide: true, params: partnerParams, querystring: Type.Object({ msg: optionalText(20) }) } },
      async (request, reply) => {
        const partner = await memberPartner(ctx, request.user, Number(request.params.id));
        const msg = request.query.msg;
        return dashboardPage(ctx, request, reply, partner, page, { notice: msg ? NOTICES[msg] : undefined });
      },
    );
  }
}

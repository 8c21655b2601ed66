// Applying for partner keys: a person with a proven address applies, the operators are mailed,
// an operator approves (the partner is made, as `idsvc partner create` makes it, with the applicant
// as its first member) or declines with a reason; the applicant is mailed either way. With the
// installation's auto-approve setting on, a proven applicant's application is approved at once.
import type { AppContext } from '../context.js';
import { isProvenAccount } from '../domain/visibility.js';
import { mailSite, queueMail } from '../mail/index.js';
import { applicationApprovedMail, applicationDeclinedMail, applicationReceivedMail } from '../mail/templates/partner-application.js';
import { writeAudit } from '../repositories/operator-audit.js';
import {
  countPendingOfUser,
  decideApplication,
  findApplication,
  insertApplication,
  type Application,
  type NewApplication,
} from '../repositories/partner-applications.js';
import { addMember } from '../repositories/partner-members.js';
import { createPartner } from '../repositories/partners.js';
import { readSetting, writeSetting } from '../repositories/settings.js';
import { findUserByRef, listOperators, type User } from '../repositories/users.js';

export const AUTO_APPROVE_SETTING = 'partner_applications_auto_approve';
/** Pending applications one person may have at once: enough for honest use, no queue flooding. */
export const MAX_PENDING_PER_PERSON = 3;

export class ApplicationError extends Error {}

export async function autoApproveOn(ctx: AppContext): Promise<boolean> {
  return (await readSetting(ctx.db, AUTO_APPROVE_SETTING)) === '1';
}

export async function setAutoApprove(ctx: AppContext, operator: User, on: boolean): Promise<void> {
  const before = await autoApproveOn(ctx);
  await ctx.db.write(async (tx) => {
    await writeSetting(tx, AUTO_APPROVE_SETTING, on ? '1' : '0');
    await writeAudit(
      tx,
      {
        actorRef: operator.id,
        actorUserId: operator.user_id,
        action: 'settings.auto_approve',
        target: 'installation',
        before: { autoApprove: before },
        after: { autoApprove: on },
      },
      ctx.clock.now(),
    );
  });
}

/** The applicant's application; approved at once when the installation says so. */
export async function apply(ctx: AppContext, user: User, input: Omit<NewApplication, 'userRef'>): Promise<Application> {
  if (!isProvenAccount(user)) throw new ApplicationError('Confirm your e-mail address first: follow the link we sent you.');
  if ((await countPendingOfUser(ctx.db, user.id)) >= MAX_PENDING_PER_PERSON)
    throw new ApplicationError(`You have ${MAX_PENDING_PER_PERSON} applications waiting for review. Wait for a decision before applying again.`);
  const auto = await autoApproveOn(ctx);
  const operators = auto ? [] : (await listOperators(ctx.db)).filter(isProvenAccount);
  const now = ctx.clock.now();
  const site = mailSite(ctx.config);
  const application = await ctx.db.write(async (tx) => {
    const a = await insertApplication(tx, { ...input, userRef: user.id }, now);
    for (const op of operators) {
      const content = applicationReceivedMail(site, {
        application: a.name,
        applicant: user.user_id,
        reviewUrl: `${site.baseUrl}/console/applications/${a.id}`,
      });
      await queueMail(tx, { to: op.email, ...content }, now);
    }
    return a;
  });
  if (!auto) return application;
  return (await approveApplication(ctx, { auto: true }, application.id)) ?? application;
}

export type Decider = { auto: true } | { auto: false; operator: User };

const deciderName = (d: Decider) => (d.auto ? 'auto' : d.operator.user_id);

/**
 * Makes the partner and its first member; undefined when the application was decided already. The
 * partner's api_token is left unissued: the applicant issues it on the dashboard, where it is shown
 * once, so it never passes through an operator's screen or a mail.
 */
export async function approveApplication(ctx: AppContext, decider: Decider, id: number): Promise<Application | undefined> {
  const now = ctx.clock.now();
  const site = mailSite(ctx.config);
  const current = await findApplication(ctx.db, id);
  if (current?.status !== 'pending') return undefined;
  const applicant = await findUserByRef(ctx.db, current.userRef);
  if (!applicant) return undefined;
  return ctx.db.write(async (tx) => {
    const created = await createPartner(tx, { name: current.name, origins: current.origins, tokenUnissued: true }, now);
    if (!(await decideApplication(tx, id, { status: 'approved', declineReason: null, partnerId: created.partner.id, decidedBy: deciderName(decider) }, now))) {
      throw new ApplicationError('This application was decided already.');
    }
    await addMember(tx, created.partner.id, applicant.id, now);
    await queueMail(
      tx,
      { to: applicant.email, ...applicationApprovedMail(site, { application: current.name, dashboardUrl: `${site.baseUrl}/partners/${created.partner.id}` }) },
      now,
    );
    if (!decider.auto) {
      await writeAudit(
        tx,
        {
          actorRef: decider.operator.id,
          actorUserId: decider.operator.user_id,
          action: 'application.approve',
          target: `application ${id}`,
          before: { status: 'pending' },
          after: { status: 'approved', partnerId: created.partner.id },
        },
        now,
      );
    }
    return { ...current, status: 'approved' as const, partnerId: created.partner.id, decidedBy: deciderName(decider), decidedAt: now };
  });
}

export async function declineApplication(ctx: AppContext, operator: User, id: number, reason: string): Promise<Application | undefined> {
  const now = ctx.clock.now();
  const site = mailSite(ctx.config);
  const current = await findApplication(ctx.db, id);
  if (current?.status !== 'pending') return undefined;
  const applicant = await findUserByRef(ctx.db, current.userRef);
  return ctx.db.write(async (tx) => {
    if (!(await decideApplication(tx, id, { status: 'declined', declineReason: reason, partnerId: null, decidedBy: operator.user_id }, now))) return undefined;
    if (applicant) {
      await queueMail(
        tx,
        { to: applicant.email, ...applicationDeclinedMail(site, { application: current.name, reason, applyUrl: `${site.baseUrl}/partners/apply` }) },
        now,
      );
    }
    await writeAudit(
      tx,
      {
        actorRef: operator.id,
        actorUserId: operator.user_id,
        action: 'application.decline',
        target: `application ${id}`,
        before: { status: 'pending' },
        after: { status: 'declined', reason },
      },
      now,
    );
    return { ...current, status: 'declined' as const, declineReason: reason, decidedBy: operator.user_id, decidedAt: now };
  });
}

// What operators do in the console, each change written to the audit log with what it was before
// and after: partners (suspend, trust, budget, members), people (pro, the verified mark), the
// catalogue (enable, edit) and the queues (retry). Nothing here reads or writes a secret.
import { parseCatalogueFile, type CatalogueEntry } from '../catalogue/catalogue-file.js';
import type { AppContext } from '../context.js';
import { findCentralIdentity } from '../repositories/central-identities.js';
import { listCatalogue, setServiceDisabled, upsertServices } from '../repositories/catalogue.js';
import { retryFailedMail } from '../repositories/mail-queue.js';
import { writeAudit } from '../repositories/operator-audit.js';
import { retryEventNow } from '../repositories/outbox.js';
import { addMember, listMembers, removeMember } from '../repositories/partner-members.js';
import { updatePartner, type Partner } from '../repositories/partners.js';
import { findUserByUserId, setUserFlags, type User } from '../repositories/users.js';
import { setOperatorMark } from './operator-mark.js';

export class ConsoleError extends Error {}

const audit = (ctx: AppContext, op: User, action: string, target: string, before: unknown, after: unknown) =>
  ctx.db.write((w) => writeAudit(w, { actorRef: op.id, actorUserId: op.user_id, action, target, before, after }, ctx.clock.now()));

const partnerFacts = (p: Partner) => ({ suspended: p.suspended, trusted: p.trusted, rateLimitPerMinute: p.rate_limit_per_minute });

export async function changePartner(
  ctx: AppContext,
  op: User,
  partner: Partner,
  change: { suspended?: boolean; trusted?: boolean; rateLimitPerMinute?: number | null },
): Promise<Partner> {
  const after = await ctx.db.write((w) => updatePartner(w, partner.id, change, ctx.clock.now()));
  const action =
    change.suspended !== undefined
      ? change.suspended
        ? 'partner.suspend'
        : 'partner.resume'
      : change.trusted !== undefined
        ? 'partner.trusted'
        : 'partner.budget';
  await audit(ctx, op, action, `partner ${partner.id}`, partnerFacts(partner), partnerFacts(after));
  return after;
}

export async function addPartnerMember(ctx: AppContext, op: User, partner: Partner, userId: string): Promise<void> {
  const u = await findUserByUserId(ctx.db, userId.trim().toLowerCase());
  if (!u) throw new ConsoleError(`There is no account ${userId.slice(0, 40)}.`);
  const before = (await listMembers(ctx.db, partner.id)).map((m) => m.userId);
  await ctx.db.write((w) => addMember(w, partner.id, u.id, ctx.clock.now()));
  await audit(ctx, op, 'partner.member_add', `partner ${partner.id}`, { members: before }, { members: [...new Set([...before, u.user_id])] });
}

export async function removePartnerMemberByOperator(ctx: AppContext, op: User, partner: Partner, userId: string): Promise<void> {
  const before = await listMembers(ctx.db, partner.id);
  const m = before.find((x) => x.userId === userId);
  if (!m) throw new ConsoleError('That person is not a member.');
  await ctx.db.write((w) => removeMember(w, partner.id, m.userRef));
  await audit(
    ctx,
    op,
    'partner.member_remove',
    `partner ${partner.id}`,
    { members: before.map((x) => x.userId) },
    { members: before.filter((x) => x.userId !== userId).map((x) => x.userId) },
  );
}

export async function setPro(ctx: AppContext, op: User, user: User, on: boolean): Promise<void> {
  await ctx.db.write((w) => setUserFlags(w, user.id, { pro: on }, ctx.clock.now()));
  await audit(ctx, op, 'user.pro', `user ${user.user_id}`, { pro: user.pro }, { pro: on });
}

export async function setMark(ctx: AppContext, op: User, user: User, svc: CatalogueEntry, on: boolean): Promise<void> {
  const before = await findCentralIdentity(ctx.db, user.id, svc.svcId);
  const { outcome, entry } = await setOperatorMark(ctx, user, svc, on);
  if (outcome === 'unchanged') return;
  const facts = (e: { verified: boolean; verified_by: string | null } | undefined) => ({ verified: e?.verified ?? false, verifiedBy: e?.verified_by ?? null });
  await audit(ctx, op, on ? 'identity.mark' : 'identity.unmark', `user ${user.user_id} / ${svc.svcId}`, facts(before), facts(entry));
}

export async function setServiceEnabled(ctx: AppContext, op: User, svcId: string, enabled: boolean): Promise<void> {
  const current = (await listCatalogue(ctx.db, true)).find((e) => e.svcId === svcId);
  if (!current) throw new ConsoleError('There is no such service.');
  await ctx.db.write((w) => setServiceDisabled(w, svcId, !enabled, ctx.clock.now()));
  await audit(ctx, op, enabled ? 'catalogue.enable' : 'catalogue.disable', `service ${svcId}`, { disabled: current.disabled }, { disabled: !enabled });
}

export interface ServiceEdit {
  svcName: string;
  svcURL: string;
  svcLeftURL: string;
  svcRightURL: string;
}

/** A service's name, main address and profile-URL template, checked as `idsvc catalogue set` checks them. */
export async function editService(ctx: AppContext, op: User, svcId: string, edit: ServiceEdit): Promise<CatalogueEntry> {
  const current = (await listCatalogue(ctx.db, true)).find((e) => e.svcId === svcId);
  if (!current) throw new ConsoleError('There is no such service.');
  let entry: CatalogueEntry;
  try {
    [entry] = parseCatalogueFile({ format: 'idsvc-catalogue/1', services: [{ ...current, ...edit }] }) as [CatalogueEntry];
  } catch (e) {
    throw new ConsoleError(e instanceof Error ? e.message : String(e));
  }
  await ctx.db.write((w) => upsertServices(w, [entry], ctx.clock.now()));
  const pick = (e: CatalogueEntry) => ({ svcName: e.svcName, svcURL: e.svcURL, svcLeftURL: e.svcLeftURL, svcRightURL: e.svcRightURL });
  await audit(ctx, op, 'catalogue.edit', `service ${svcId}`, pick(current), pick(entry));
  return entry;
}

export async function retryMail(ctx: AppContext, op: User, id: number): Promise<void> {
  if ((await ctx.db.write((w) => retryFailedMail(w, [id], ctx.clock.now()))) !== 1) throw new ConsoleError('That message is not failed.');
  await audit(ctx, op, 'queue.retry_mail', `mail ${id}`, { status: 'failed' }, { status: 'pending' });
}

export async function retryWebhook(ctx: AppContext, op: User, id: number): Promise<void> {
  if (!(await ctx.db.write((w) => retryEventNow(w, id, null, ctx.clock.now())))) throw new ConsoleError('That delivery is not waiting for a retry.');
  await audit(ctx, op, 'queue.retry_webhook', `event ${id}`, { status: 'failed' }, { status: 'pending' });
}

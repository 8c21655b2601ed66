// What a partner's members do on its dashboard: issue or rotate the api_token (shown once), set the
// widget origins and the webhook endpoint (under the outbound address policy), rotate the webhook
// secret (shown once), and invite and remove members. Membership is checked here, once per request,
// so that a person who is not a member of a partner learns nothing about it (docs/spec.md).
import { randomBytes } from 'node:crypto';
import type { AppContext } from '../context.js';
import { ApiError } from '../domain/errors.js';
import { emailHashes } from '../domain/identifiers.js';
import { sha256 } from '../domain/secrets.js';
import { isProvenAccount } from '../domain/visibility.js';
import { mailSite, queueMail } from '../mail/index.js';
import { partnerInvitationMail } from '../mail/templates/partner-application.js';
import {
  addMember,
  countRecentInvitations,
  findInvitationByToken,
  insertInvitation,
  isMember,
  listMembers,
  removeMember,
  useInvitation,
} from '../repositories/partner-members.js';
import { findPartner, rotatePartnerTokenIfCurrent, rotateWebhookSecret, tokenStamp, updatePartner, type Partner } from '../repositories/partners.js';
import type { User } from '../repositories/users.js';

export const INVITATION_DAYS = 7;
/** Invitations one partner may send a day: enough to bring in a team, not to mail strangers in bulk. */
export const INVITATIONS_PER_DAY = 20;
export const MAX_ORIGINS = 20;

export class DashboardError extends Error {}

/** The partner, when this person is one of its members; otherwise the same 404 as for a partner that does not exist. */
export async function memberPartner(ctx: AppContext, user: User, partnerId: number): Promise<Partner> {
  const partner = await findPartner(ctx.db, String(partnerId));
  if (!partner || !(await isMember(ctx.db, partner.id, user.id))) throw new ApiError('not_found', 'There is no such partner among yours.');
  return partner;
}

/**
 * A new api_token. A partner made from an application gets its first one here with no grace period
 * (no one holds the one it replaces); later rotations keep the old one working for TOKEN_GRACE_SECONDS,
 * as `idsvc partner rotate-token` does.
 */
/**
 * Issues or rotates the partner's api_token, when `replacing` still names the current one (the
 * stamp the dashboard's form was rendered with); null when it no longer does: the form was sent
 * again (a reload) after the token it replaced had already been replaced.
 */
export async function issueToken(ctx: AppContext, partner: Partner, replacing: string): Promise<{ token: string; graceSeconds: number } | null> {
  const graceSeconds = partner.token_unissued ? 0 : ctx.config.tokenGraceSeconds;
  const token = await ctx.db.write((w) => rotatePartnerTokenIfCurrent(w, partner.id, graceSeconds, ctx.clock.now(), replacing));
  return token === null ? null : { token, graceSeconds };
}

/** What the dashboard's token form sends as `replaces`. */
export const currentTokenStamp = (partner: Partner): string => tokenStamp(partner.token_hash);

/** Origins as typed one per line: each an http(s) URL, kept as its origin. */
export function parseOrigins(text: string): string[] {
  const lines = text
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter(Boolean);
  if (lines.length > MAX_ORIGINS) throw new DashboardError(`At most ${MAX_ORIGINS} origins.`);
  const out: string[] = [];
  for (const line of lines) {
    let url: URL;
    try {
      url = new URL(line);
    } catch {
      throw new DashboardError(`“${line.slice(0, 100)}” is not an address. Give each origin as https://example.com.`);
    }
    if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new DashboardError(`“${line.slice(0, 100)}” is not an http or https address.`);
    if (!out.includes(url.origin)) out.push(url.origin);
  }
  return out;
}

export async function setOrigins(ctx: AppContext, partner: Partner, origins: string[]): Promise<Partner> {
  return ctx.db.write((w) => updatePartner(w, partner.id, { origins }, ctx.clock.now()));
}

/**
 * Sets (or, with an empty URL, removes) the webhook endpoint after the outbound address policy
 * accepts it. Returns the secret when this change created it: the only time it is shown.
 */
export async function setWebhook(ctx: AppContext, partner: Partner, rawUrl: string): Promise<{ partner: Partner; newSecret: string | null }> {
  const trimmed = rawUrl.trim();
  if (trimmed === '') return { partner: await ctx.db.write((w) => updatePartner(w, partner.id, { webhookUrl: null }, ctx.clock.now())), newSecret: null };
  let url: URL;
  try {
    url = new URL(trimmed);
  } catch {
    throw new DashboardError('That is not an address. Give the endpoint as https://example.com/webhooks.');
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new DashboardError('The endpoint must be an http or https address.');
  const { checkOutboundUrl } = await import('../verification/safe-fetch.js');
  const verdict = await checkOutboundUrl(url.toString(), { allowPrivate: ctx.config.fetchAllowPrivate });
  if (!verdict.ok) {
    throw new DashboardError(
      verdict.reason === 'dns_failed' || verdict.reason === 'timeout'
        ? `We could not look that host up (${verdict.detail}). Check the host name.`
        : `We do not deliver to that address: ${verdict.detail}. Webhooks go only to public addresses on ports 80 and 443.`,
    );
  }
  const updated = await ctx.db.write((w) => updatePartner(w, partner.id, { webhookUrl: url.toString() }, ctx.clock.now()));
  return { partner: updated, newSecret: partner.webhook_secret === null && updated.webhook_secret !== null ? updated.webhook_secret : null };
}

export async function rotateSecret(ctx: AppContext, partner: Partner): Promise<{ secret: string; graceSeconds: number }> {
  if (!partner.webhook_url) throw new DashboardError('Set a webhook endpoint first.');
  const graceSeconds = ctx.config.webhookSecretGraceSeconds;
  return { secret: await ctx.db.write((w) => rotateWebhookSecret(w, partner.id, graceSeconds, ctx.clock.now())), graceSeconds };
}

/**
 * Mails an invitation to the address, whether or not it has an account (so the form tells nobody
 * who has one); only the hashes of the link's token and of the address are kept.
 */
export async function invite(ctx: AppContext, inviter: User, partner: Partner, email: string): Promise<void> {
  const now = ctx.clock.now();
  if ((await countRecentInvitations(ctx.db, partner.id, now - 24 * 3600 * 1000)) >= INVITATIONS_PER_DAY)
    throw new DashboardError(`This partner has sent ${INVITATIONS_PER_DAY} invitations today. Try again tomorrow.`);
  const token = randomBytes(32).toString('base64url');
  const site = mailSite(ctx.config);
  const h = emailHashes(email);
  await ctx.db.write(async (tx) => {
    await insertInvitation(
      tx,
      { partnerId: partner.id, tokenHash: sha256(token), emailSha256: h.sha256, invitedBy: inviter.id, expiresAt: now + INVITATION_DAYS * 24 * 3600 * 1000 },
      now,
    );
    const content = partnerInvitationMail(site, {
      partner: partner.name,
      inviter: inviter.user_id,
      link: `${site.baseUrl}/partners/invitation?token=${token}`,
      days: INVITATION_DAYS,
    });
    await queueMail(tx, { to: h.email, ...content }, now);
  });
}

/** The invitation's partner, once the logged-in person (holding the invited address, proven) accepts. */
export async function acceptInvitation(ctx: AppContext, user: User, token: string): Promise<Partner> {
  const now = ctx.clock.now();
  const inv = await findInvitationByToken(ctx.db, sha256(token));
  if (!inv || inv.usedAt !== null || inv.expiresAt <= now) throw new DashboardError('This invitation link has expired or was used already. Ask for a new one.');
  if (!isProvenAccount(user)) throw new DashboardError('Confirm your e-mail address first: follow the link we sent you, then open the invitation again.');
  if (emailHashes(user.email).sha256 !== inv.emailSha256)
    throw new DashboardError('This invitation was sent to another e-mail address. Log in with the account of that address to accept it.');
  await ctx.db.write(async (tx) => {
    if (!(await useInvitation(tx, inv.id, now))) throw new DashboardError('This invitation link has expired or was used already. Ask for a new one.');
    await addMember(tx, inv.partnerId, user.id, now);
  });
  const partner = await findPartner(ctx.db, String(inv.partnerId));
  if (!partner) throw new DashboardError('This invitation link has expired or was used already. Ask for a new one.');
  return partner;
}

/** A member removes a member (themselves too), but never the last one: a partner always has someone to run it. */
export async function removePartnerMember(ctx: AppContext, partner: Partner, userRef: number): Promise<void> {
  const members = await listMembers(ctx.db, partner.id);
  if (!members.some((m) => m.userRef === userRef)) throw new DashboardError('That person is not a member.');
  if (members.length === 1) throw new DashboardError('A partner keeps at least one member. Invite someone else first.');
  await ctx.db.write((w) => removeMember(w, partner.id, userRef));
}

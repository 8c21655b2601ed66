// Changing an account's e-mail address. The owner asks on the account page with the
// current password; a single-use link (24 hours) goes to the NEW address and a notice (with no link)
// to the old one. Nothing switches until the link is followed (POST from the page it opens). The
// answer is the same whether or not the new address has an account: what differs goes by mail, to
// that address. On the switch the account's hashes change, what partners pushed earlier under the
// new address is folded in, lookups by the old hashes name nobody, links and everything the account
// held stay, other sessions end and the old address is told.
import type { AppContext } from '../context.js';
import { emailHashes } from '../domain/identifiers.js';
import { mailSite, queueMail } from '../mail/index.js';
import { confirmNewAddressMail, emailChangedMail, emailChangeRequestedMail, newAddressTakenMail } from '../mail/templates/email-change.js';
import { createEmailToken, endUserTokens, findUsableToken, useToken } from '../repositories/email-tokens.js';
import { endOtherSessions } from '../repositories/sessions.js';
import { findUserByEmail, findUserByRef, setProvenEmail, type User } from '../repositories/users.js';
import { eraseAccount } from './accounts.js';
import { announceVisibility } from './central.js';
import { absorbOrphanSubjects } from './orphan-subjects.js';
import { CONFIRM_LINK_HOURS, mayMailAddress } from './ownership.js';
import { isProvenAccount } from '../domain/visibility.js';

const HOUR = 3600 * 1000;
/** Change requests per account an hour: each mails two addresses. */
export const EMAIL_CHANGES_PER_HOUR = 3;

export type ChangeRequestOutcome = { sent: true } | { sent: false; retryAfterSeconds: number };

/**
 * Mails the link to `newEmail` (or, when another proven account has it, a note saying so) and a
 * notice to the account's address (only if proven: an unproven address may be a stranger's). The
 * caller checked the current password. Only the per-account limit is said; a new address whose
 * hourly allowance is used up gets nothing, and the answer is the same.
 */
export async function requestEmailChange(ctx: AppContext, user: User, newEmail: string): Promise<ChangeRequestOutcome> {
  const key = `mail:email-change:${user.id}`;
  const wait = await ctx.throttle.blockedFor(key, EMAIL_CHANGES_PER_HOUR);
  if (wait > 0) return { sent: false, retryAfterSeconds: wait };
  await ctx.throttle.recordFailure(key, 3600);
  const email = emailHashes(newEmail).email;
  const send = await mayMailAddress(ctx, email);
  const site = mailSite(ctx.config);
  const now = ctx.clock.now();
  await ctx.db.write(async (w) => {
    // One pending change at a time: an earlier link stops working.
    await endUserTokens(w, user.id, 'change', now);
    const holder = await findUserByEmail(w, email);
    if (send && holder && isProvenAccount(holder)) {
      await queueMail(
        w,
        { to: email, ...newAddressTakenMail(site, { userId: user.user_id, loginUrl: `${site.baseUrl}/login`, resetUrl: `${site.baseUrl}/forgot` }) },
        now,
      );
    } else if (send) {
      // An unproven account holding the address does not block the change: whoever proves it first gets it.
      const secret = await createEmailToken(w, { purpose: 'change', userRef: user.id, email }, now, CONFIRM_LINK_HOURS * HOUR);
      const link = `${site.baseUrl}/email/confirm?token=${secret}`;
      await queueMail(w, { to: email, ...confirmNewAddressMail(site, { userId: user.user_id, link, hours: CONFIRM_LINK_HOURS }) }, now);
    }
    if (isProvenAccount(user)) {
      await queueMail(
        w,
        { to: user.email, ...emailChangeRequestedMail(site, { userId: user.user_id, hours: CONFIRM_LINK_HOURS, resetUrl: `${site.baseUrl}/forgot` }) },
        now,
      );
    }
  });
  return { sent: true };
}

/** What a change link is about, for the page it opens (a GET never uses the link up). */
export async function previewEmailChange(ctx: AppContext, secret: string): Promise<{ userId: string; newEmail: string } | undefined> {
  const row = await findUsableToken(ctx.db, secret, ['change'], ctx.clock.now());
  const user = row?.user_ref == null ? undefined : await findUserByRef(ctx.db, row.user_ref);
  return row && user && user.email !== row.email ? { userId: user.user_id, newEmail: row.email } : undefined;
}

export type ChangeOutcome = { kind: 'changed'; userRef: number } | { kind: 'invalid' } | { kind: 'address_taken' };

/** Following the link: the switch. `sessionId` is the browser's session, kept if it is the account's. */
export async function confirmEmailChange(ctx: AppContext, secret: string, sessionId: string | null): Promise<ChangeOutcome> {
  const now = ctx.clock.now();
  const row = await findUsableToken(ctx.db, secret, ['change'], now);
  if (!row || row.user_ref === null) return { kind: 'invalid' };
  const userRef = row.user_ref;
  const site = mailSite(ctx.config);
  return ctx.db.write(async (w): Promise<ChangeOutcome> => {
    const user = await findUserByRef(w, userRef);
    if (!user || user.email === row.email || !(await useToken(w, row.id, now))) return { kind: 'invalid' };
    const holder = await findUserByEmail(w, row.email);
    // Proven by another account since the link was sent: that account keeps it.
    if (holder && isProvenAccount(holder)) return { kind: 'address_taken' };
    // An unproven account that typed the address in yields, as it does to a claim (ownership.ts).
    if (holder) await eraseAccount(w, holder, now);
    const changed = await setProvenEmail(w, user.id, row.email, now);
    // What partners pushed under the new address's hashes becomes the account's.
    await absorbOrphanSubjects(w, changed, now);
    // Proof may make the user visible (an account proven only now): linked partners hear it once.
    await announceVisibility(w, changed, now);
    // Links mailed to the old address (confirm, reset) and other pending changes stop working.
    for (const purpose of ['confirm', 'reset', 'change'] as const) await endUserTokens(w, user.id, purpose, now);
    // The address is how an account is recovered: a change ends the other sessions, as a password change does.
    await endOtherSessions(w, user.id, sessionId);
    if (isProvenAccount(user)) await queueMail(w, { to: user.email, ...emailChangedMail(site, { userId: user.user_id }) }, now);
    return { kind: 'changed', userRef: user.id };
  });
}
